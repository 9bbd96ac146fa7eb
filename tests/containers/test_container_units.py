"""The pieces around a container run that need no Docker: the /input folder, log splitting,
failure lines, the client's --image option and the submit form's kind choice."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from harness import RunResult
from leaderboard.server.jobs.container_inputs import assert_no_labels, build_input_dir
from leaderboard.server.jobs.containers import failure_reason, split_log


def _media(items_path) -> set[str]:
    out = set()
    for line in items_path.read_text().splitlines():
        out.update(json.loads(line).get("media") or [])
    return out


def test_input_dir_holds_the_split_items_and_only_their_media(demo_packs, tmp_path):
    pack = demo_packs["syncred"]
    dest = build_input_dir(pack, "dev", tmp_path / "input")
    assert (dest / "items.jsonl").read_bytes() == (pack / "splits/dev/items.jsonl").read_bytes()
    files = {str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file()}
    assert files == {"items.jsonl"} | _media(pack / "splits/dev/items.jsonl")
    assert not files & _media(pack / "splits/test/items.jsonl")  # never another split's media
    (dest / "labels.jsonl").write_text("{}\n")
    with pytest.raises(AssertionError, match="labels must never reach a container"):
        assert_no_labels(dest)


def test_input_dir_refuses_media_outside_the_pack(tmp_path):
    split = tmp_path / "pack" / "splits" / "dev"
    split.mkdir(parents=True)
    (split / "items.jsonl").write_text('{"id": "a", "media": ["media/../../etc/passwd"]}\n')
    with pytest.raises(ValueError, match="not under media/"):
        build_input_dir(tmp_path / "pack", "dev", tmp_path / "input")


def test_log_split_and_failure_lines():
    assert split_log("all of it\n", False) == ("", "all of it\n")
    text = "head\n[... 99 bytes of log cut by the harness ...]\ntail\n"
    assert split_log(text, True) == ("head", "tail\n")
    result = RunResult(reason="exit_code", message="the container exited with code 3",
                       image_id="sha256:" + "0" * 64, limits={}, duration_s=1.0, exit_code=3)
    assert failure_reason(result) == "exit code 3: the container exited with code 3"
    result.reason, result.message = "out_of_memory", "over 1 byte"
    assert failure_reason(result) == "out of memory: over 1 byte"


def test_client_takes_a_file_or_an_image_not_both(tmp_path):
    from leaderboard.client import main

    f = tmp_path / "p.jsonl"
    f.write_text("{}\n")
    for args in ([], [str(f), "--image", str(f)]):
        res = CliRunner().invoke(main, ["submit", *args, "--benchmark", "b", "--split", "dev",
                                        "--token", "t", "--server", "http://127.0.0.1:9"])
        assert res.exit_code == 2 and "either a predictions FILE or --image" in res.output


def test_submit_form_offers_a_detector_image(app, client, auth, imported):
    auth.member()
    page = client.get("/submit").get_data(as_text=True)
    assert 'name="kind" value="container"' in page and 'name="kind" value="predictions"' in page
