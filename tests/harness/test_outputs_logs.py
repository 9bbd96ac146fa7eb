"""Pure parts: reading /output without trusting it, and capping logs."""

import os

import pytest

from harness import NoPredictions, OutputTooLarge
from harness.logs import CUT_MARKER, LogCollector
from harness.outputs import check_output_caps, copy_predictions, dir_usage


def test_copy_regular_file(tmp_path):
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "predictions.jsonl").write_text("{}\n")
    assert copy_predictions(tmp_path / "s", tmp_path / "out.jsonl", max_bytes=10) == 3
    assert (tmp_path / "out.jsonl").read_text() == "{}\n"


def test_symlink_never_followed(tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("host secret")
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "predictions.jsonl").symlink_to(secret)
    with pytest.raises(NoPredictions, match="regular file"):
        copy_predictions(tmp_path / "s", tmp_path / "out.jsonl", max_bytes=100)
    assert not (tmp_path / "out.jsonl").exists()


def test_fifo_and_directory_refused_without_blocking(tmp_path):
    (tmp_path / "s").mkdir()
    os.mkfifo(tmp_path / "s" / "predictions.jsonl")
    with pytest.raises(NoPredictions, match="regular file"):
        copy_predictions(tmp_path / "s", tmp_path / "out.jsonl", max_bytes=100)
    (tmp_path / "t" / "predictions.jsonl").mkdir(parents=True)
    with pytest.raises(NoPredictions):
        copy_predictions(tmp_path / "t", tmp_path / "out.jsonl", max_bytes=100)


def test_missing_and_oversize(tmp_path):
    (tmp_path / "s").mkdir()
    with pytest.raises(NoPredictions, match="did not write"):
        copy_predictions(tmp_path / "s", tmp_path / "out.jsonl", max_bytes=100)
    (tmp_path / "s" / "predictions.jsonl").write_bytes(b"x" * 101)
    with pytest.raises(OutputTooLarge):
        copy_predictions(tmp_path / "s", tmp_path / "out.jsonl", max_bytes=100)


def test_usage_counts_sparse_size_and_does_not_follow_links(tmp_path):
    with open(tmp_path / "sparse", "wb") as fh:
        fh.truncate(10 << 20)
    (tmp_path / "link").symlink_to("/usr")
    usage = dir_usage(tmp_path, max_entries=100)
    assert usage.entries == 2 and (10 << 20) <= usage.bytes < (10 << 20) + 4096
    with pytest.raises(OutputTooLarge, match="bytes"):
        check_output_caps(tmp_path, max_bytes=1 << 20, max_entries=100)


def test_entry_cap(tmp_path):
    for i in range(12):
        (tmp_path / f"f{i}").touch()
    with pytest.raises(OutputTooLarge, match="more than 10 files"):
        check_output_caps(tmp_path, max_bytes=1 << 20, max_entries=10)


class _FakeContainer:
    """What the collector reads: an attach stream of ``chunks`` (then ``error``, if given)."""

    def __init__(self, chunks, error=None):
        self._chunks, self._error = chunks, error

    def attach(self, **_):
        def stream():
            yield from self._chunks
            if self._error is not None:
                raise self._error
        return stream()


def _collect(chunks, retained, cap=100, error=None):
    collector = LogCollector(_FakeContainer(chunks, error), cap_bytes=cap)
    collector.attach()
    collector.start()
    return collector.finish(retained)


def test_log_over_the_cap_keeps_head_and_retained_tail():
    whole = b"HEAD" + b"m" * 5000 + b"x" * 3000 + b"TAIL"
    text, cut = _collect([whole[:3000], whole[3000:]], whole)
    assert cut and text.startswith("HEAD") and text.endswith("TAIL")
    assert text == _s(whole[:50]) + CUT_MARKER.format(cap=100) + _s(whole[-50:])


def test_identical_lines_rotated_by_docker_are_reported_cut():
    """Issue 36: a flood of identical lines, rotated by Docker, left a retained log that starts
    like its own beginning and is shorter than the cap: it was recorded as whole."""
    line = b"y" * 9 + b"\n"
    text, cut = _collect([line * 10] * 50, line * 8, cap=100)
    assert cut and "its middle was cut by the harness" in text


def test_short_logs_untouched():
    assert _collect([b"hello ", b"world"], b"hello world") == ("hello world", False)


def test_a_log_exactly_at_the_cap_is_whole():
    data = b"z" * 100
    assert _collect([data[:60], data[60:]], data) == (_s(data), False)


def test_a_stream_that_fails_is_never_called_whole():
    text, cut = _collect([b"partial "], b"partial output", error=OSError("engine went away"))
    assert cut and text.startswith("partial ") and "may be cut by the harness" in text


def test_bad_cap():
    with pytest.raises(ValueError, match="cap_bytes"):
        LogCollector(_FakeContainer([]), cap_bytes=1)


def _s(data):
    return data.decode()
