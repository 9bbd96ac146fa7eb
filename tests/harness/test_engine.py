"""Loading: pinned by id, tagged with the submission, never applying the upload's own tags."""

import gzip
import io
import json
import shutil
import tarfile

import docker.errors
import pytest

from harness import ImageRejected, Limits, inspect_tarball, load_image, remove_image
from harness.engine import IMAGE_REPOSITORY, check_submission_id, get_image
from tests.harness.images.build import build_script_image, save_image

pytestmark = pytest.mark.docker
LIMITS = Limits(tarball_bytes=64 << 20, image_bytes=64 << 20)


def _retag_archive(src, dest, tags):
    """Copy a docker-save archive with manifest.json RepoTags replaced (what a hostile team could do)."""
    with tarfile.open(src) as tin, tarfile.open(dest, "w") as tout:
        for member in tin:
            data = tin.extractfile(member) if member.isreg() else None
            if member.name == "manifest.json":
                manifest = json.loads(data.read())
                manifest[0]["RepoTags"] = tags
                payload = json.dumps(manifest).encode()
                member.size = len(payload)
                data = io.BytesIO(payload)
            tout.addfile(member, data)
    return dest


def test_load_pins_by_id_and_tags_with_submission(tmp_path, docker_client):
    # A private image: this test deletes it, so it must not be one the session fixture caches.
    image_id = build_script_image(docker_client, tag="lb-harness-test:engine", script="echo engine-test\n")
    saved = save_image(docker_client, image_id, tmp_path / "saved.tar")
    docker_client.images.remove(image_id, force=True)
    try:
        loaded = load_image(docker_client, saved, "sub-42", limits=LIMITS)
        assert loaded == image_id
        assert f"{IMAGE_REPOSITORY}:sub-42" in docker_client.images.get(loaded).tags
        assert get_image(docker_client, loaded).id == image_id
    finally:
        assert remove_image(docker_client, image_id) is True
    assert remove_image(docker_client, image_id) is False
    with pytest.raises(ImageRejected, match="not loaded"):
        get_image(docker_client, image_id)


def test_gzipped_upload_loads(tmp_path, docker_client, scenario_image):
    image_id = scenario_image("quick")
    saved = save_image(docker_client, image_id, tmp_path / "saved.tar")
    gz = tmp_path / "saved.tar.gz"
    with saved.open("rb") as src, gzip.open(gz, "wb") as dst:
        shutil.copyfileobj(src, dst)
    info = inspect_tarball(gz, LIMITS)
    assert load_image(docker_client, gz, "sub-gz", info=info) == image_id
    docker_client.api.remove_image(f"{IMAGE_REPOSITORY}:sub-gz")


def test_upload_tags_never_touch_host_images(tmp_path, docker_client, scenario_image):
    victim_id = scenario_image("quick")
    docker_client.api.tag(victim_id, "lb-harness-victim", tag="latest")
    attacker_id = scenario_image("exit_3")
    saved = save_image(docker_client, attacker_id, tmp_path / "saved.tar")
    hostile = _retag_archive(saved, tmp_path / "hostile.tar", ["lb-harness-victim:latest"])
    try:
        assert load_image(docker_client, hostile, "sub-x", limits=LIMITS) == attacker_id
        assert docker_client.images.get("lb-harness-victim:latest").id == victim_id
    finally:
        docker_client.api.remove_image("lb-harness-victim:latest")
        docker_client.api.remove_image(f"{IMAGE_REPOSITORY}:sub-x")


def test_hostile_tarball_rejected_before_docker_sees_it(tmp_path, docker_client):
    bad = tmp_path / "bad.tar"
    with tarfile.open(bad, "w") as tar:
        info = tarfile.TarInfo("../../etc/evil")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(ImageRejected, match="'..'"):
        load_image(docker_client, bad, "sub-1", limits=LIMITS)


@pytest.mark.parametrize("bad", ["", "../x", "a/b", "-x", "x" * 129, "a b"])
def test_submission_id_must_be_a_safe_tag(bad):
    with pytest.raises(ValueError, match="submission id"):
        check_submission_id(bad)


def test_get_image_validates_id(docker_client):
    with pytest.raises(ValueError, match="image_id"):
        get_image(docker_client, "ubuntu:latest")
    with pytest.raises(docker.errors.ImageNotFound):
        docker_client.images.get("sha256:" + "0" * 64)
