"""The sandbox against hostile images: each ends with the right reason, the host unharmed, the
container gone."""

import dataclasses
import hashlib
from pathlib import Path

import pytest

from harness import FAILURE_REASONS, Limits, run_submission
from harness.sandbox import (
    LABEL_DEADLINE,
    LABEL_HARNESS,
    LABEL_SUBMISSION,
    container_config,
    default_user,
)
from tests.harness.conftest import DEPLOYMENT
from tests.harness.images.build import build_script_image

pytestmark = pytest.mark.docker


def _run(client, image_id, dirs, limits, **kwargs):
    input_dir, output_dir = dirs
    return run_submission(client=client, image_id=image_id, input_dir=input_dir, output_dir=output_dir,
                          limits=limits, submission_id="sub-1", env={"LB_BENCHMARK": "loki", "LB_SPLIT": "dev"},
                          deployment=DEPLOYMENT, **kwargs)


def _tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        h.update(str(p.relative_to(root)).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def test_container_config_locks_everything_down(tmp_path):
    limits = Limits(memory_bytes=1 << 30, cpus=2.0, pids=99, open_files=123, tmp_bytes=1 << 20, user="1000:1000")
    config = container_config(image_id="sha256:" + "a" * 64, limits=limits, submission_id="s9", input_dir=tmp_path,
                              staging_dir=tmp_path, env={"LB_SPLIT": "test"}, labels={"x": "y"}, gpu=None, now=1000.0)
    assert config["image"] == "sha256:" + "a" * 64
    assert config["network_mode"] == "none" and config["network_disabled"] is True
    assert config["read_only"] is True and config["init"] is True
    assert config["cap_drop"] == ["ALL"] and config["security_opt"] == ["no-new-privileges:true"]
    assert config["user"] == "1000:1000"
    assert config["mem_limit"] == config["memswap_limit"] == 1 << 30
    assert config["nano_cpus"] == 2_000_000_000 and config["pids_limit"] == 99
    assert config["ulimits"][0]["Name"] == "nofile" and config["ulimits"][0]["Hard"] == 123
    assert "size=1048576" in config["tmpfs"]["/tmp"]
    assert config["environment"] == {"LB_SPLIT": "test", "LB_INPUT": "/input", "LB_OUTPUT": "/output", "HOME": "/tmp"}
    mounts = {m["Target"]: m for m in config["mounts"]}
    assert mounts["/input"]["ReadOnly"] is True and mounts["/output"]["ReadOnly"] is False
    assert config["labels"][LABEL_HARNESS] == "1" and config["labels"][LABEL_SUBMISSION] == "s9"
    assert int(config["labels"][LABEL_DEADLINE]) == int(1000 + limits.wall_s + limits.reap_grace_s)
    assert "device_requests" not in config


def test_gpu_is_requested_by_device_index(tmp_path):
    config = container_config(image_id="sha256:" + "a" * 64, limits=Limits(), submission_id="s", input_dir=tmp_path,
                              staging_dir=tmp_path, env={}, labels={}, gpu=3, now=0.0)
    (request,) = config["device_requests"]
    assert request["DeviceIDs"] == ["3"] and request["Capabilities"] == [["gpu"]]


def test_good_run_writes_predictions_and_records(docker_client, scenario_image, dirs, limits, no_leftover_containers):
    image_id = scenario_image("good")
    input_before = _tree_digest(dirs[0])
    result = _run(docker_client, image_id, dirs, limits)
    assert result.ok and result.reason == "ok", result.message
    assert result.predictions_path == dirs[1] / "predictions.jsonl"
    assert result.predictions_path.read_text() == '{"id": "a1", "score": 0.5}\n{"id": "a2", "score": 0.5}\n'
    assert sorted(p.name for p in dirs[1].iterdir()) == ["predictions.jsonl"]  # staging removed
    record = result.as_record()
    assert record["image_id"] == image_id and record["exit_code"] == 0 and record["gpu"] is None
    assert record["limits"]["memory_bytes"] == limits.memory_bytes and 0 < record["duration_s"] < limits.wall_s
    # What the sandbox looks like from inside (the script prints it).
    uid, gid = default_user().split(":")
    assert uid != "0" and f"uid={uid} gid={gid}" in result.logs
    assert "CapEff:\t0000000000000000" in result.logs and "NoNewPrivs:\t1" in result.logs
    assert "env=loki/dev//input//output//tmp" in result.logs
    assert "net=lo," in result.logs and "nofile=256" in result.logs
    assert _tree_digest(dirs[0]) == input_before


@pytest.mark.parametrize("scenario, reason", [
    ("sleep_forever", "timeout"),
    ("fork_bomb", "timeout"),
    ("memory_bomb", "out_of_memory"),
    ("fill_output", "output_too_large"),
    ("exit_3", "exit_code"),
    ("fill_tmp", "exit_code"),
    ("symlink_out", "no_predictions"),
    ("fifo_out", "no_predictions"),
])
def test_hostile_images_end_with_their_reason(docker_client, scenario_image, dirs, limits, no_leftover_containers,
                                              scenario, reason):
    result = _run(docker_client, scenario_image(scenario), dirs, limits)
    assert result.reason == reason, (result.message, result.logs[-500:])
    assert reason in FAILURE_REASONS and result.error is not None and result.error.reason == reason
    assert result.predictions_path is None and list(dirs[1].iterdir()) == []
    with pytest.raises(type(result.error)):
        result.raise_for_error()
    if reason == "timeout":
        assert limits.wall_s <= result.duration_s < limits.wall_s + 1.5
    if reason == "exit_code":
        assert result.exit_code == (3 if scenario == "exit_3" else 1)
        assert result.message.startswith("the container exited with code")


def test_symlink_to_host_file_is_not_followed(docker_client, scenario_image, dirs, limits):
    result = _run(docker_client, scenario_image("symlink_out"), dirs, limits)
    assert result.reason == "no_predictions" and "regular file" in result.message
    assert not (dirs[1] / "predictions.jsonl").exists()


def test_stdout_flood_is_capped_head_and_tail(docker_client, scenario_image, dirs, limits):
    result = _run(docker_client, scenario_image("stdout_flood"), dirs, limits)
    assert result.ok, result.message
    assert result.logs_truncated and "its middle was cut by the harness" in result.logs
    assert result.logs.startswith("xxxx") and result.logs.rstrip().endswith("END-OF-FLOOD")
    assert len(result.logs.encode()) <= limits.log_bytes + 100


def test_line_flood_rotated_by_docker_is_recorded_as_cut(docker_client, scenario_image, dirs, limits):
    """Issue 36: identical lines past the production cap (1 MiB) were recorded whole ("cut":
    false) although Docker had rotated their beginning away."""
    limits = dataclasses.replace(limits, log_bytes=1 << 20, wall_s=20.0)
    result = _run(docker_client, scenario_image("line_flood"), dirs, limits)
    assert result.ok, result.message
    assert result.logs_truncated and "its middle was cut by the harness" in result.logs
    assert result.logs.startswith("FIRST-LINE\n") and result.logs.rstrip().endswith("END-OF-FLOOD")
    assert len(result.logs.encode()) <= limits.log_bytes + 100


def test_short_log_is_whole_and_not_cut(docker_client, scenario_image, dirs, limits):
    result = _run(docker_client, scenario_image("good"), dirs, limits)
    assert result.ok and not result.logs_truncated
    assert result.logs.startswith("uid=") and result.logs.rstrip().endswith("wrote 2 predictions")


def test_network_is_off(docker_client, scenario_image, dirs, limits):
    result = _run(docker_client, scenario_image("network"), dirs, limits)
    assert result.ok and "interfaces=lo," in result.logs and "tcp=failed" in result.logs


def test_read_only_paths_stay_read_only(docker_client, scenario_image, dirs, limits):
    before = _tree_digest(dirs[0])
    result = _run(docker_client, scenario_image("read_only"), dirs, limits)
    assert result.ok
    assert "wrote" not in result.logs and result.logs.count("denied") == 5
    assert _tree_digest(dirs[0]) == before


def test_labels_are_nowhere_to_be_found(docker_client, scenario_image, dirs, limits, tmp_path):
    (tmp_path / "labels.jsonl").write_text('{"id": "a1", "label": "fake"}\n')  # next to input, not in it
    result = _run(docker_client, scenario_image("look_for_labels"), dirs, limits)
    found = result.logs.split("FOUND-START\n")[1].split("FOUND-END")[0].split()
    assert result.ok and sorted(found) == ["/input", "/input/items.jsonl", "/input/media", "/output", "/tmp"]


def test_input_holding_labels_is_refused(docker_client, scenario_image, dirs, limits):
    (dirs[0] / "labels.jsonl").write_text("{}\n")
    with pytest.raises(ValueError, match="public items only"):
        _run(docker_client, scenario_image("quick"), dirs, limits)


def test_malformed_predictions_are_returned_to_the_caller(docker_client, scenario_image, dirs, limits):
    result = _run(docker_client, scenario_image("malformed"), dirs, limits)
    assert result.ok and result.predictions_path.read_text() == "this is not json\n"


def test_memory_peak_is_recorded(docker_client, scenario_image, dirs, limits):
    result = _run(docker_client, scenario_image("sleep_forever"), dirs, limits)
    assert result.peak_memory_bytes is not None and 0 < result.peak_memory_bytes <= limits.memory_bytes


def test_unknown_image_is_rejected_not_pulled(docker_client, dirs, limits):
    result = _run(docker_client, "sha256:" + "0" * 64, dirs, limits)
    assert result.reason == "image_rejected" and "not loaded" in result.message


@pytest.mark.parametrize("kwargs, message", [
    ({"env": {"PATH": "/x"}}, "LB_"), ({"env": {"LB_INPUT": "/etc"}}, "LB_"), ({"gpu": -1}, "gpu"),
    ({"submission_id": "../x"}, "submission id"),
])
def test_bad_arguments_are_named(docker_client, scenario_image, dirs, limits, kwargs, message):
    args = dict(client=docker_client, image_id=scenario_image("quick"), input_dir=dirs[0], output_dir=dirs[1],
                limits=limits, submission_id="s")
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        run_submission(**args)


def test_image_declaring_a_volume_is_rejected(docker_client, dirs, limits, no_leftover_containers):
    # Docker would back VOLUME with an unlimited anonymous volume on the host's disk.
    image_id = build_script_image(docker_client, tag="lb-harness-test:volume", script="echo hi\n",
                                  extra="VOLUME /data")
    try:
        result = _run(docker_client, image_id, dirs, limits)
        assert result.reason == "image_rejected" and "VOLUME" in result.message
    finally:
        docker_client.images.remove(image_id, force=True)
