"""Inspection of uploaded ``docker save`` archives: accepted shapes and every rejection rule."""

import io
import json
import tarfile

import pytest

from harness import ImageRejected, Limits, inspect_tarball
from tests.harness.images.build import save_image
from tests.harness.images.savetar import layer_tar, write_save_tar

LIMITS = Limits(tarball_bytes=1 << 20, image_bytes=2 << 20)


def _member(name, kind=tarfile.REGTYPE, linkname="", size=0):
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.size = kind, linkname, size
    return info, (b"x" * size if kind == tarfile.REGTYPE else None)


@pytest.mark.parametrize("style", ["legacy", "oci"])
@pytest.mark.parametrize("gz", [False, True])
def test_well_formed_archives_pass(tmp_path, style, gz):
    path = write_save_tar(tmp_path / "img.tar", style=style, gz=gz)
    info = inspect_tarball(path, LIMITS)
    assert info.image_id.startswith("sha256:") and len(info.image_id) == 71
    assert (info.architecture, info.os, len(info.layers)) == ("amd64", "linux", 1)
    assert info.uncompressed_bytes > 0 and info.repo_tags == ("t:latest",)


def test_oci_style_resolves_layer_links_to_blobs(tmp_path):
    path = write_save_tar(tmp_path / "img.tar", style="oci",
                          manifest_edit=lambda m: [{**m[0], "Layers": [p.split("/")[-1] + "/layer.tar" for p in m[0]["Layers"]]}])
    info = inspect_tarball(path, LIMITS)
    assert info.layers[0].startswith("blobs/sha256/")


HOSTILE = {
    "absolute path": ([_member("/etc/cron.d/x", size=3)], "absolute"),
    "dot-dot": ([_member("../../evil", size=3)], "'..'"),
    "dot-dot inside": ([_member("a/../../evil", size=3)], "'..'"),
    "symlink outside": ([_member("leak", tarfile.SYMTYPE, "../../etc/passwd")], "outside"),
    "absolute symlink": ([_member("leak", tarfile.SYMTYPE, "/etc/passwd")], "absolute"),
    "dangling symlink": ([_member("leak", tarfile.SYMTYPE, "nothing-here")], "does not resolve"),
    "hardlink outside": ([_member("leak", tarfile.LNKTYPE, "../etc/passwd")], "outside"),
    "char device": ([_member("dev/null", tarfile.CHRTYPE)], "device"),
    "block device": ([_member("dev/sda", tarfile.BLKTYPE)], "device"),
    "fifo": ([_member("pipe", tarfile.FIFOTYPE)], "FIFO"),
    "write through link": ([_member("d", tarfile.SYMTYPE, "blobs"), _member("d/x", size=1)], "below the link"),
    "duplicate": ([_member("manifest.json", size=2)], "twice"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_members_rejected(tmp_path, case):
    members, message = HOSTILE[case]
    path = write_save_tar(tmp_path / "img.tar", extra_members=members)
    with pytest.raises(ImageRejected, match=message):
        inspect_tarball(path, LIMITS)


def test_two_images_rejected(tmp_path):
    path = write_save_tar(tmp_path / "img.tar", manifest_edit=lambda m: m + m)
    with pytest.raises(ImageRejected, match="2 images"):
        inspect_tarball(path, LIMITS)


def test_index_with_two_images_rejected(tmp_path):
    index = json.dumps({"manifests": [{"digest": "sha256:" + "a" * 64}, {"digest": "sha256:" + "b" * 64}]}).encode()
    info = tarfile.TarInfo("index.json")
    info.size = len(index)
    path = write_save_tar(tmp_path / "img.tar", extra_members=[(info, index)])
    with pytest.raises(ImageRejected, match="2 images"):
        inspect_tarball(path, LIMITS)


@pytest.mark.parametrize("edit, message", [
    (lambda m: {"not": "a list"}, "non-empty list"),
    (lambda m: [{**m[0], "Config": 3}], "Config"),
    (lambda m: [{**m[0], "Layers": []}], "Layers"),
    (lambda m: [{**m[0], "Layers": ["missing/layer.tar"]}], "does not resolve"),
    (lambda m: [{**m[0], "Config": "../x.json"}], "'..'"),
    (lambda m: [{**m[0], "RepoTags": "t:latest"}], "RepoTags"),
])
def test_insane_manifest_rejected(tmp_path, edit, message):
    path = write_save_tar(tmp_path / "img.tar", manifest_edit=edit)
    with pytest.raises(ImageRejected, match=message):
        inspect_tarball(path, LIMITS)


@pytest.mark.parametrize("overrides, message", [
    ({"architecture": "arm64"}, "linux/arm64"),
    ({"os": "windows"}, "windows/amd64"),
    ({"rootfs": {"diff_ids": []}}, "diff ids"),
    ({"config": {"Volumes": {"/data": {}}}}, "VOLUME"),
])
def test_bad_config_rejected(tmp_path, overrides, message):
    path = write_save_tar(tmp_path / "img.tar", config_overrides=overrides)
    with pytest.raises(ImageRejected, match=message):
        inspect_tarball(path, LIMITS)


def test_device_node_inside_layer_rejected(tmp_path):
    dev = tarfile.TarInfo("dev/kmsg")
    dev.type = tarfile.CHRTYPE
    path = write_save_tar(tmp_path / "img.tar", layers=[layer_tar({"bin/x": b"x"}, extra=[dev])])
    with pytest.raises(ImageRejected, match="device node"):
        inspect_tarball(path, LIMITS)


def test_layer_that_is_not_a_tar_rejected(tmp_path):
    path = write_save_tar(tmp_path / "img.tar", layers=[b"just bytes, not a tar" * 10])
    with pytest.raises(ImageRejected, match="not a tar archive"):
        inspect_tarball(path, LIMITS)


def test_compressed_cap(tmp_path):
    path = write_save_tar(tmp_path / "img.tar")
    with pytest.raises(ImageRejected, match="upload cap"):
        inspect_tarball(path, Limits(tarball_bytes=1000))


def test_uncompressed_cap_stops_a_gzip_bomb(tmp_path):
    big = layer_tar({"zeros": bytes(4 << 20)})
    path = write_save_tar(tmp_path / "img.tar.gz", layers=[big], gz=True)
    assert path.stat().st_size < 64 << 10
    with pytest.raises(ImageRejected, match="image cap"):
        inspect_tarball(path, Limits(tarball_bytes=1 << 20, image_bytes=1 << 20))


@pytest.mark.parametrize("data, message", [(b"", "manifest.json is missing|not a readable"),
                                           (b"\x1f\x8b garbage", "not a readable")])
def test_not_an_archive(tmp_path, data, message):
    path = tmp_path / "img.tar"
    path.write_bytes(data)
    with pytest.raises(ImageRejected, match=message):
        inspect_tarball(path, LIMITS)


def test_missing_manifest(tmp_path):
    path = tmp_path / "img.tar"
    with tarfile.open(path, "w") as tar:
        info = tarfile.TarInfo("hello")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    with pytest.raises(ImageRejected, match="manifest.json is missing"):
        inspect_tarball(path, LIMITS)


def test_missing_file(tmp_path):
    with pytest.raises(ImageRejected, match="cannot read"):
        inspect_tarball(tmp_path / "nope.tar", LIMITS)


@pytest.mark.docker
def test_real_docker_save_accepted(tmp_path, docker_client, scenario_image):
    image_id = scenario_image("quick")
    path = save_image(docker_client, image_id, tmp_path / "saved.tar")
    info = inspect_tarball(path, Limits(tarball_bytes=64 << 20, image_bytes=64 << 20))
    assert info.image_id == image_id
