"""Pure parts: reading /output without trusting it, and capping logs."""

import os

import pytest

from harness import NoPredictions, OutputTooLarge
from harness.logs import LogCollector
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
    def __init__(self, chunks):
        self._chunks = chunks

    def logs(self, **_):
        return iter(self._chunks)


def _collect(chunks, retained, cap=100):
    collector = LogCollector(_FakeContainer(chunks), cap_bytes=cap)
    collector.start()
    return collector.finish(retained)


def test_logs_exact_cut_when_nothing_rotated():
    whole = b"HEAD" + b"m" * 5000 + b"x" * 3000 + b"TAIL"
    text, truncated = _collect([whole[:3000], whole[3000:]], whole)
    assert truncated and text.startswith("HEAD") and text.endswith("TAIL")
    assert f"[... {len(whole) - 100} bytes of log cut by the harness ...]" in text
    assert text.replace(f"\n[... {len(whole) - 100} bytes of log cut by the harness ...]\n", "") == \
        _s(whole[:50] + whole[-50:])


def test_logs_after_rotation_keep_followed_head_and_retained_tail():
    text, truncated = _collect([b"HEAD" + b"m" * 200], b"y" * 500 + b"TAIL")
    assert truncated and text.startswith("HEAD") and text.endswith("TAIL")
    assert "middle of the log was cut" in text


def test_short_logs_untouched():
    assert _collect([b"hello ", b"world"], b"hello world") == ("hello world", False)


def test_bad_cap():
    with pytest.raises(ValueError, match="cap_bytes"):
        LogCollector(_FakeContainer([]), cap_bytes=1)


def _s(data):
    return data.decode()
