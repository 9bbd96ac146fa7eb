"""Each transform is deterministic (same bytes twice, and across processes) and degrades."""
from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from leaderboard.builders import degrade
from leaderboard.core.robustness.suites import SUITES

if shutil.which("ffmpeg") is None:
    if os.environ.get("LB_REQUIRE_SERVICES") == "1":  # CI: start-services.sh installs it
        raise RuntimeError("ffmpeg is not installed: run scripts/start-services.sh")
    pytest.skip("ffmpeg is not installed (scripts/start-services.sh)", allow_module_level=True)

SUFFIX = {"image": ".png", "video": ".avi", "audio": ".wav"}
ALL = [(s.modality, d.name, level) for s in SUITES.values() if s.version == "1"
       for d in s.degradations for level in (1, 5)]


def _run(modality, name, level, data, seed=7):
    suite = next(s for s in SUITES.values() if s.modality == modality and s.version == "1")
    params = suite.degradation(name).level(level)
    return degrade.apply(modality, name, params, data, seed=seed, suffix=SUFFIX[modality])


@pytest.fixture(scope="module")
def outputs(sample_media):
    data = {m: p.read_bytes() for m, p in sample_media.items()}
    return {key: _run(*key, data[key[0]]) for key in ALL}


def test_same_bytes_twice_and_in_another_process(outputs, sample_media):
    data = {m: p.read_bytes() for m, p in sample_media.items()}
    for key in [(m, n, 5) for m, n, lv in ALL if lv == 5]:
        assert _run(*key, data[key[0]]) == outputs[key], key
    script = (
        "import hashlib, json, sys\n"
        "from tests.robustness.test_transforms import ALL, _run\n"
        "paths = json.loads(sys.argv[1])\n"
        "data = {m: open(p, 'rb').read() for m, p in paths.items()}\n"
        "print(json.dumps({'|'.join(map(str, k)): hashlib.sha256(_run(*k, data[k[0]]))"
        ".hexdigest() for k in ALL}))\n")
    proc = subprocess.run([sys.executable, "-c", script,
                           json.dumps({m: str(p) for m, p in sample_media.items()})],
                          capture_output=True, text=True, timeout=240, check=True)
    theirs = json.loads(proc.stdout)
    mine = {"|".join(map(str, k)): hashlib.sha256(v).hexdigest() for k, v in outputs.items()}
    assert theirs == mine


def test_the_seed_changes_noise_only_where_noise_is_drawn(sample_media):
    img = sample_media["image"].read_bytes()
    assert _run("image", "noise", 3, img, seed=1) != _run("image", "noise", 3, img, seed=2)
    assert _run("image", "jpeg", 3, img, seed=1) == _run("image", "jpeg", 3, img, seed=2)


def _pixels(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"), dtype=np.float64)


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = float(np.mean((a - b) ** 2))
    return float("inf") if mse == 0 else 10 * np.log10(255.0 ** 2 / mse)


@pytest.mark.parametrize("name", ["jpeg", "resize", "blur", "noise", "crop"])
def test_images_degrade_more_at_higher_levels(outputs, sample_media, name):
    ref = _pixels(sample_media["image"].read_bytes())
    low, high = _pixels(outputs[("image", name, 1)]), _pixels(outputs[("image", name, 5)])
    assert low.shape == high.shape == ref.shape  # sizes are kept
    assert psnr(ref, high) < psnr(ref, low)
    if name == "jpeg":
        assert psnr(ref, high) < 30 < psnr(ref, low)
        assert Image.open(io.BytesIO(outputs[("image", "jpeg", 5)])).format == "JPEG"


def _stream(data: bytes, suffix: str) -> dict:
    info = degrade.probe(data, suffix)
    return {**info["streams"][0], "format": info["format"]}


def test_audio_has_the_stated_rate_and_bitrate(outputs, sample_media):
    suite = SUITES["audio@1"]
    for level in (1, 5):
        params = suite.degradation("mp3").level(level)
        s = _stream(outputs[("audio", "mp3", level)], ".mp3")
        assert (s["codec_name"], int(s["sample_rate"]), int(s["bit_rate"])) == \
            ("mp3", params["rate"], params["kbps"] * 1000)
    s = _stream(outputs[("audio", "opus", 5)], ".ogg")
    assert s["codec_name"] == "opus"
    rate = int(_stream(sample_media["audio"].read_bytes(), ".wav")["sample_rate"])
    s = _stream(outputs[("audio", "resample", 5)], ".wav")
    assert int(s["sample_rate"]) == round(rate * suite.degradation("resample").level(5)["factor"])


def test_audio_noise_has_the_stated_snr(outputs, sample_media):
    import wave

    def samples(data):
        with wave.open(io.BytesIO(data)) as w:
            return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float64)

    clean = samples(sample_media["audio"].read_bytes())
    for level, snr in ((1, 40), (5, 5)):
        noise = samples(outputs[("audio", "noise", level)]) - clean
        measured = 10 * np.log10(np.mean(clean ** 2) / np.mean(noise ** 2))
        assert abs(measured - snr) < 1.0, (level, measured)


def test_video_is_h264_and_fps_halves(outputs, sample_media):
    src = _stream(sample_media["video"].read_bytes(), ".avi")
    h264 = _stream(outputs[("video", "h264", 5)], ".mp4")
    assert h264["codec_name"] == "h264" and (h264["width"], h264["height"]) == \
        (src["width"], src["height"])
    assert len(outputs[("video", "h264", 5)]) < len(outputs[("video", "h264", 1)])
    halved = _stream(degrade.apply("video", "fps", {"factor": 0.5},
                                   sample_media["video"].read_bytes(), seed=0, suffix=".avi"),
                     ".mp4")
    num, den = (int(x) for x in halved["r_frame_rate"].split("/"))
    snum, sden = (int(x) for x in src["r_frame_rate"].split("/"))
    assert num / den == pytest.approx(snum / sden / 2)


def test_bad_input_names_the_problem():
    with pytest.raises(degrade.DegradeError, match="not a readable image"):
        degrade.apply("image", "jpeg", {"quality": 50}, b"not an image", seed=0, suffix=".png")
    with pytest.raises(degrade.DegradeError, match="ffprobe cannot read|no video"):
        degrade.apply("video", "h264", {"crf": 30}, b"garbage", seed=0, suffix=".mp4")
    with pytest.raises(degrade.DegradeError, match="no transform"):
        degrade.apply("text", "jpeg", {}, b"", seed=0, suffix=".txt")
