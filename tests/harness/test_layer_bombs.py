"""Layers are read as Docker reads them: decompressed (gzip, zstd, bzip2, xz or plain), counted
against the image cap and stopped there, and hashed against the config's diff ids."""

import bz2
import gzip
import hashlib
import lzma
import time

import pytest
import zstandard

from harness import ImageRejected, Limits, inspect_tarball
from tests.harness.images.savetar import bomb_layer, layer_tar, write_save_tar

CAP = 16 << 20
LIMITS = Limits(tarball_bytes=8 << 20, image_bytes=CAP)
COMPRESS = {"gzip": gzip.compress, "zstd": zstandard.ZstdCompressor().compress,
            "bzip2": bz2.compress, "xz": lzma.compress, "none": lambda data: data}


def _diff(tar: bytes) -> str:
    return "sha256:" + hashlib.sha256(tar).hexdigest()


def _save(tmp_path, layers, diff_ids, **kw):
    return write_save_tar(tmp_path / "img.tar", layers=layers,
                          config_overrides={"rootfs": {"type": "layers", "diff_ids": diff_ids}},
                          **kw)


@pytest.mark.parametrize("compression", sorted(COMPRESS))
def test_compressed_layers_pass_with_their_true_diff_ids(tmp_path, compression):
    tars = [layer_tar({"bin/true": b"\x7fELF" * 1000}), layer_tar({"etc/x": bytes(300_000)})]
    path = _save(tmp_path, [COMPRESS[compression](t) for t in tars], [_diff(t) for t in tars])
    info = inspect_tarball(path, LIMITS)
    assert info.layer_bytes == sum(len(t) for t in tars)
    assert info.config and info.config_name


@pytest.mark.parametrize("compression", ["gzip", "zstd"])
@pytest.mark.parametrize("trailing", [False, True], ids=["in-a-file", "after-the-tar"])
def test_a_bomb_layer_is_stopped_at_the_cap_naming_it(tmp_path, compression, trailing):
    layer, diff = bomb_layer(1536 << 20, compression=compression, trailing=trailing)
    path = _save(tmp_path, [layer], [diff])
    assert path.stat().st_size < 2 << 20  # 1.5 GiB inside a tarball of well under 2 MB
    started = time.monotonic()
    with pytest.raises(ImageRejected) as err:
        inspect_tarball(path, LIMITS)
    assert f"decompress to more than the image cap of {CAP} bytes" in err.value.message
    assert time.monotonic() - started < 5  # stopped at 16 MiB, not read to 1.5 GiB


@pytest.mark.parametrize("compression", ["bzip2", "xz"])
def test_bzip2_and_xz_bombs_are_counted_too(tmp_path, compression):
    tar = layer_tar({"zeros": bytes(CAP + (1 << 20))})
    path = _save(tmp_path, [COMPRESS[compression](tar)], [_diff(tar)])
    with pytest.raises(ImageRejected, match="decompress to more than the image cap"):
        inspect_tarball(path, LIMITS)


def test_the_cap_is_shared_by_all_layers(tmp_path):
    tars = [layer_tar({f"f{i}": bytes(6 << 20)}) for i in range(3)]  # 3 x 6 MiB > 16 MiB
    path = _save(tmp_path, [gzip.compress(t) for t in tars], [_diff(t) for t in tars])
    with pytest.raises(ImageRejected, match="image cap"):
        inspect_tarball(path, LIMITS)


def test_a_config_that_lies_about_its_layers_is_the_teams_error(tmp_path):
    real, other = layer_tar({"bin/true": b"x"}), layer_tar({"bin/false": b"y"})
    path = _save(tmp_path, [real], [_diff(other)])
    with pytest.raises(ImageRejected, match="config does not match its layers: layer 1"):
        inspect_tarball(path, LIMITS)


def test_diff_ids_in_the_wrong_order_are_caught(tmp_path):
    a, b = layer_tar({"a": b"a"}), layer_tar({"b": b"b"})
    path = _save(tmp_path, [a, b], [_diff(b), _diff(a)])
    with pytest.raises(ImageRejected, match="does not match its layers"):
        inspect_tarball(path, LIMITS)


def test_a_truncated_compressed_layer_is_not_a_tar(tmp_path):
    tar = layer_tar({"bin/true": bytes(100_000)})
    path = _save(tmp_path, [gzip.compress(tar)[:-200]], [_diff(tar)])
    with pytest.raises(ImageRejected, match="not a tar archive"):
        inspect_tarball(path, LIMITS)


def _repeat(times):
    return lambda m: [{**m[0], "Layers": m[0]["Layers"] * times}]


@pytest.mark.parametrize("style", ["legacy", "oci"])
def test_a_layer_listed_many_times_counts_each_time(tmp_path, style):
    """Issue 24: one 3 MiB layer listed twelve times is 36 MiB that Docker writes, not 3."""
    tar = layer_tar({"blob": bytes(3 << 20)})
    path = write_save_tar(tmp_path / "rep.tar", style=style, layers=[gzip.compress(tar)],
                          config_overrides={"rootfs": {"type": "layers", "diff_ids": [_diff(tar)] * 12}},
                          manifest_edit=_repeat(12))
    assert path.stat().st_size < 64 << 10  # the archive holds the layer once
    with pytest.raises(ImageRejected) as err:
        inspect_tarball(path, LIMITS)
    message = err.value.message
    assert f"more than the image cap of {CAP} bytes" in message
    assert "is listed 12 times and Docker writes it out each time" in message


def test_a_repeated_layer_real_images_have_still_passes_under_the_cap(tmp_path):
    """The classic builder gives identical steps identical layers; Docker >= 25 then lists one
    blob several times. That image is fine while every occurrence fits in the cap."""
    tar = layer_tar({"a": b"hi\n"})
    path = write_save_tar(tmp_path / "dup.tar", style="oci", layers=[tar],
                          config_overrides={"rootfs": {"type": "layers", "diff_ids": [_diff(tar)] * 3}},
                          manifest_edit=_repeat(3))
    info = inspect_tarball(path, LIMITS)
    assert len(info.layers) == 3 and len(set(info.layers)) == 1
    assert info.layer_bytes == 3 * len(tar)
