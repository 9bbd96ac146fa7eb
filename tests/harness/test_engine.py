"""Loading on the real engine: a private id labelled with the deployment, never the upload's own
tags or id, sizes checked before and after loading, and clean-up that only touches its own."""

import gzip
import hashlib
import io
import json
import shutil
import tarfile
import time

import docker.errors
import pytest

from harness import (
    EngineError,
    ImageRejected,
    Limits,
    inspect_tarball,
    load_image,
    reap,
    reap_images,
    remove_image,
)
from harness.engine import (
    check_submission_id,
    get_image,
    image_repository,
    private_config,
)
from harness.labels import LABEL_DEPLOYMENT, LABEL_SOURCE_IMAGE, LABEL_SUBMISSION, check_deployment
from harness.sandbox import LABEL_DEADLINE, LABEL_HARNESS
from harness.tarball import TarballInfo
from tests.harness.images.build import build_script_image, save_image
from tests.harness.images.savetar import bomb_layer, layer_tar, write_save_tar

pytestmark = pytest.mark.docker
LIMITS = Limits(tarball_bytes=64 << 20, image_bytes=64 << 20)
DEP = "test-a"


def _private_tarball(docker_client, tmp_path, name: str, script: str = "echo engine-test\n"):
    """A saved image that is no longer on the engine (so loading it really loads it)."""
    image_id = build_script_image(docker_client, tag=f"lb-harness-test:{name}", script=script)
    saved = save_image(docker_client, image_id, tmp_path / f"{name}.tar")
    docker_client.images.remove(image_id, force=True)
    return image_id, saved


def _rewrite(src, dest, edit_manifest=None, edit_config=None):
    """Copy a docker-save archive with its manifest and/or config edited (a hostile team)."""
    with tarfile.open(src) as tin:
        manifest = json.loads(tin.extractfile("manifest.json").read())
        config_name = manifest[0]["Config"]
        with tarfile.open(dest, "w") as tout:
            for member in tin:
                data = tin.extractfile(member) if member.isreg() else None
                payload = None
                if member.name == "manifest.json" and edit_manifest:
                    payload = json.dumps(edit_manifest(manifest)).encode()
                elif member.name == config_name and edit_config:
                    payload = json.dumps(edit_config(json.loads(data.read()))).encode()
                if payload is not None:
                    member.size, data = len(payload), io.BytesIO(payload)
                tout.addfile(member, data)
    return dest


def _ours(docker_client, deployment):
    return {i.id for i in docker_client.images.list(filters={"label": f"{LABEL_DEPLOYMENT}={deployment}"})}


def test_load_uses_a_private_labelled_id_and_tag(tmp_path, docker_client):
    source_id, saved = _private_tarball(docker_client, tmp_path, "engine")
    info = inspect_tarball(saved, LIMITS)
    loaded = load_image(docker_client, saved, "sub-42", limits=LIMITS, deployment=DEP)
    try:
        expected = private_config(info.config, deployment=DEP, submission="sub-42", source=source_id)
        assert loaded == "sha256:" + hashlib.sha256(expected).hexdigest() != source_id
        image = get_image(docker_client, loaded)
        assert image.labels[LABEL_DEPLOYMENT] == DEP and image.labels[LABEL_SUBMISSION] == "sub-42"
        assert image.labels[LABEL_SOURCE_IMAGE] == source_id
        assert f"{image_repository(DEP)}:sub-42" in image.tags
        with pytest.raises(docker.errors.ImageNotFound):
            docker_client.images.get(source_id)  # the team's own id never appears on the host
        assert remove_image(docker_client, loaded, deployment="someone-else") is False
        assert docker_client.images.get(loaded).id == loaded
    finally:
        assert remove_image(docker_client, loaded, deployment=DEP) is True
    assert remove_image(docker_client, loaded, deployment=DEP) is False
    with pytest.raises(ImageRejected, match="not loaded"):
        get_image(docker_client, loaded)


def test_gzipped_upload_loads(tmp_path, docker_client):
    _, saved = _private_tarball(docker_client, tmp_path, "gz", "echo gz\n")
    gz = tmp_path / "saved.tar.gz"
    with saved.open("rb") as src, gzip.open(gz, "wb") as dst:
        shutil.copyfileobj(src, dst)
    info = inspect_tarball(gz, LIMITS)
    loaded = load_image(docker_client, gz, "sub-gz", info=info, deployment=DEP)
    assert remove_image(docker_client, loaded, deployment=DEP)


def test_upload_tags_never_touch_host_images(tmp_path, docker_client, scenario_image):
    victim_id = scenario_image("quick")
    docker_client.api.tag(victim_id, "lb-harness-victim", tag="latest")
    _, saved = _private_tarball(docker_client, tmp_path, "attacker", "exit 3\n")
    hostile = _rewrite(saved, tmp_path / "hostile.tar",
                       edit_manifest=lambda m: [{**m[0], "RepoTags": ["lb-harness-victim:latest"]}])
    try:
        loaded = load_image(docker_client, hostile, "sub-x", limits=LIMITS, deployment=DEP)
        assert docker_client.images.get("lb-harness-victim:latest").id == victim_id
        assert remove_image(docker_client, loaded, deployment=DEP)
    finally:
        docker_client.api.remove_image("lb-harness-victim:latest")


def test_a_copy_of_a_host_image_is_refused_and_the_host_image_survives(tmp_path, docker_client):
    host_id = build_script_image(docker_client, tag="lb-harness-host:base", script="echo host\n")
    try:
        saved = save_image(docker_client, host_id, tmp_path / "copy.tar")
        with pytest.raises(ImageRejected, match="already has an image with the id " + host_id):
            load_image(docker_client, saved, "7", limits=LIMITS, deployment=DEP)
        # the whole clean-up path of a finished run, too: nothing of the host's is touched
        assert remove_image(docker_client, host_id, deployment=DEP) is False
        assert reap_images(docker_client, deployment=DEP, in_flight=lambda sid: False) == []
        image = docker_client.images.get(host_id)
        assert "lb-harness-host:base" in image.tags
    finally:
        docker_client.images.remove(host_id, force=True)


def test_two_deployments_sharing_one_engine_never_reap_each_other(tmp_path, docker_client,
                                                                  scenario_image):
    _, saved = _private_tarball(docker_client, tmp_path, "shared", "sleep 1000\n")
    a = load_image(docker_client, saved, "1", limits=LIMITS, deployment="dep-a")
    b = load_image(docker_client, saved, "1", limits=LIMITS, deployment="dep-b")
    sleeper = scenario_image("sleep_forever")
    later = int(time.time()) + 3600  # not before a real-clock reaper elsewhere on this engine
    containers = [docker_client.containers.create(sleeper, network_mode="none", labels={
        LABEL_HARNESS: "1", LABEL_DEPLOYMENT: dep, LABEL_SUBMISSION: "1",
        LABEL_DEADLINE: str(later)}) for dep in ("dep-a", "dep-b")]
    try:
        assert a != b  # same upload, same submission number: two private images
        assert reap_images(docker_client, deployment="dep-a", in_flight=lambda sid: sid == "1") == []
        assert reap_images(docker_client, deployment="dep-a", in_flight=lambda sid: False) == [a]
        assert _ours(docker_client, "dep-a") == set() and _ours(docker_client, "dep-b") == {b}
        assert reap(docker_client, deployment="dep-a", now=later + 60) == [containers[0].id]
        assert containers[1].id in {c.id for c in docker_client.containers.list(all=True)}
    finally:
        for container in containers:
            try:
                container.remove(force=True)
            except docker.errors.NotFound:
                pass
        remove_image(docker_client, b, deployment="dep-b")
        remove_image(docker_client, a, deployment="dep-a")


def _images_with_layer(client, diff_id: str) -> list[str]:
    """Images in the engine that hold layer ``diff_id``: none, when a refused archive never
    reached the engine. (Not "the image list is unchanged": other tests build and remove
    images at the same time.)"""
    return [i.id for i in client.images.list(all=True)
            if diff_id in ((i.attrs.get("RootFS") or {}).get("Layers") or [])]


def test_a_bomb_layer_is_refused_before_loading_naming_the_size(tmp_path, docker_client):
    layer, diff = bomb_layer(1536 << 20)  # 1.5 GiB of zeros in about 1.5 MB
    path = write_save_tar(tmp_path / "bomb.tar", layers=[layer],
                          config_overrides={"rootfs": {"type": "layers", "diff_ids": [diff]}})
    assert path.stat().st_size < 4 << 20
    with pytest.raises(ImageRejected, match=f"decompress to more than the image cap of {64 << 20} bytes"):
        load_image(docker_client, path, "bomb", limits=LIMITS, deployment=DEP)
    assert not _images_with_layer(docker_client, diff)


def test_the_engine_reported_size_is_checked_after_loading(tmp_path, docker_client):
    tar = layer_tar({"blob": bytes(3 << 20), "bin/true": b"x"})
    path = write_save_tar(tmp_path / "big.tar", layers=[gzip.compress(tar)], config_overrides={
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + hashlib.sha256(tar).hexdigest()]}})
    info = inspect_tarball(path, LIMITS)  # what an earlier, laxer inspection accepted
    with pytest.raises(ImageRejected, match=r"takes \d+ bytes on disk, over the image cap of 1048576"):
        load_image(docker_client, path, "big", limits=Limits(image_bytes=1 << 20), info=info,
                   deployment=DEP)
    assert _ours(docker_client, DEP) == set()


def test_lying_diff_ids_are_the_teams_error_even_past_inspection(tmp_path, docker_client):
    _, saved = _private_tarball(docker_client, tmp_path, "liar", "echo liar\n")
    liar = _rewrite(saved, tmp_path / "liar-edited.tar", edit_config=lambda c: {
        **c, "rootfs": {**c["rootfs"], "diff_ids": ["sha256:" + "0" * 64] * len(c["rootfs"]["diff_ids"])}})
    with pytest.raises(ImageRejected, match="does not match its layers"):
        load_image(docker_client, liar, "liar", limits=LIMITS, deployment=DEP)
    # had inspection missed it, Docker's own refusal is still the image's fault, not the host's
    info = inspect_tarball(saved, LIMITS)
    config = json.loads(info.config)
    config["rootfs"]["diff_ids"] = ["sha256:" + "0" * 64] * len(config["rootfs"]["diff_ids"])
    raw = json.dumps(config).encode()
    fake = TarballInfo(**{**info.__dict__, "config": raw,
                          "image_id": "sha256:" + hashlib.sha256(raw).hexdigest()})
    with pytest.raises(ImageRejected, match="Docker could not load the image"):
        load_image(docker_client, saved, "liar2", limits=LIMITS, info=fake, deployment=DEP)
    assert _ours(docker_client, DEP) == set()


def test_hostile_tarball_rejected_before_docker_sees_it(tmp_path, docker_client):
    bad = tmp_path / "bad.tar"
    with tarfile.open(bad, "w") as tar:
        info = tarfile.TarInfo("../../etc/evil")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(ImageRejected, match="'..'"):
        load_image(docker_client, bad, "sub-1", limits=LIMITS)


def test_host_failures_are_engine_errors():
    from harness.engine import _load_failure
    assert isinstance(_load_failure(docker.errors.ImageLoadError(
        "write /var/lib/docker/tmp/x: no space left on device")), EngineError)
    assert isinstance(_load_failure(docker.errors.ImageLoadError(
        "invalid diffID for layer 0")), ImageRejected)


@pytest.mark.parametrize("bad", ["", "../x", "a/b", "-x", "x" * 129, "a b"])
def test_submission_id_must_be_a_safe_tag(bad):
    with pytest.raises(ValueError, match="submission id"):
        check_submission_id(bad)


@pytest.mark.parametrize("bad", ["", "UPPER", "a_b", "a..b", "-a", "a-", "x" * 41, None])
def test_deployment_id_must_be_safe(bad):
    with pytest.raises(ValueError, match="deployment id"):
        check_deployment(bad)


def test_get_image_validates_id(docker_client):
    with pytest.raises(ValueError, match="image_id"):
        get_image(docker_client, "ubuntu:latest")
    with pytest.raises(docker.errors.ImageNotFound):
        docker_client.images.get("sha256:" + "0" * 64)


def test_a_repeated_layer_is_refused_before_loading_with_a_reason(tmp_path, docker_client):
    """Issue 24: a small archive listing one layer many times would make Docker write it each
    time; the refusal comes from inspection, so the engine never sees it."""
    tar = layer_tar({"blob": bytes(8 << 20), "bin/true": b"x"})
    path = write_save_tar(tmp_path / "rep.tar", layers=[gzip.compress(tar)],
                          config_overrides={"rootfs": {"type": "layers", "diff_ids": [
                              "sha256:" + hashlib.sha256(tar).hexdigest()] * 12}},
                          manifest_edit=lambda m: [{**m[0], "Layers": m[0]["Layers"] * 12}])
    assert path.stat().st_size < 1 << 20
    with pytest.raises(ImageRejected, match="is listed 12 times and Docker writes it out each time"):
        load_image(docker_client, path, "repeat", limits=LIMITS, deployment=DEP)
    assert not _images_with_layer(docker_client, "sha256:" + hashlib.sha256(tar).hexdigest())


def test_the_disk_watchdog_stops_a_load_that_writes_past_the_cap(tmp_path, docker_client):
    """Whatever inspection missed: when the engine's disk grows past the cap during the load,
    the load is stopped, what it loaded is removed and the team reads why."""
    _, saved = _private_tarball(docker_client, tmp_path, "watched", "echo watched\n")
    readings = iter(range(0, 1 << 62, 1 << 40))  # each poll: another TiB written
    with pytest.raises(ImageRejected, match="wrote .* bytes to the runner's disk, over the image cap"):
        load_image(docker_client, saved, "watched", limits=LIMITS, deployment=DEP,
                   probe=lambda: next(readings))
    assert _ours(docker_client, DEP) == set()
