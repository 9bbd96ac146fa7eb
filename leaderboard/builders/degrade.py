"""The degradation transforms: pure functions of (input bytes, parameters, seed) -> output bytes.

Images use Pillow (and numpy for noise); video and audio use Debian's ``ffmpeg`` through a
subprocess (libx264, libmp3lame, libopus), one thread and every ``bitexact`` flag so that the
same input, level and seed give byte-identical output on the same library versions
(`library_versions` is stored in each copies' manifest). What each level means is defined in
`leaderboard.core.robustness.suites`; docs/robustness.md states it for people.

Choices, and why:
* Images other than JPEG are written as PNG (lossless): only the named change applies. PNG is
  written by Pillow without timestamps or text chunks; JPEG with 4:2:0 subsampling and no
  optimisation, EXIF or ICC data. Palette, grey and alpha images are converted to RGB first.
* Resize and crop come back to the original size (bilinear), so items keep their ``width`` and
  ``height``; masks are not transformed (a mask metric under a geometric change measures that).
* Noise is drawn from ``numpy.random.default_rng(seed)``; the builder derives the seed per item
  and condition from the plan's seed, so two items never share a noise field.
* Video is re-encoded to H.264 in MP4 (``yuv420p``, even sizes); frame-rate and resize levels
  are encoded losslessly (``-qp 0``) so that the named change is the only one beyond 4:2:0
  chroma. Audio tracks of videos are dropped (no suite degrades them yet).
* Audio: MP3 is CBR at the level's bitrate and sample rate; Opus in Ogg at the level's bitrate;
  resampling keeps the lower rate (what re-distributed audio looks like); noise is white
  Gaussian at the level's SNR over the whole file's power, written as 16-bit PCM WAV.
"""
from __future__ import annotations

import functools
import io
import json
import math
import shutil
import subprocess
import tempfile
import wave
from pathlib import Path

import numpy as np
from PIL import Image, ImageFilter

FFMPEG_TIMEOUT_S = 300


class DegradeError(ValueError):
    """The input could not be decoded or transformed; the message names the step."""


# -- images ---------------------------------------------------------------------------------
def _open_image(data: bytes) -> Image.Image:
    try:
        img = Image.open(io.BytesIO(data))
        img.load()
    except Exception as exc:  # Pillow raises many types for bad bytes
        raise DegradeError(f"not a readable image ({type(exc).__name__}: {exc})") from None
    if img.mode not in ("RGB", "L"):
        img = img.convert("RGB")
    return img


def _png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False, compress_level=6)
    return buf.getvalue()


def image_jpeg(data: bytes, *, quality: int, seed: int = 0) -> bytes:
    img = _open_image(data)
    buf = io.BytesIO()
    img.convert("RGB").save(buf, format="JPEG", quality=int(quality), subsampling=2,
                            optimize=False, progressive=False)
    return buf.getvalue()


def image_resize(data: bytes, *, scale: float, seed: int = 0) -> bytes:
    img = _open_image(data)
    w, h = img.size
    small = img.resize((max(1, round(w * scale)), max(1, round(h * scale))),
                       Image.Resampling.BILINEAR)
    return _png(small.resize((w, h), Image.Resampling.BILINEAR))


def image_blur(data: bytes, *, sigma: float, seed: int = 0) -> bytes:
    return _png(_open_image(data).filter(ImageFilter.GaussianBlur(radius=float(sigma))))


def image_noise(data: bytes, *, sigma: float, seed: int = 0) -> bytes:
    img = _open_image(data)
    arr = np.asarray(img, dtype=np.float64) / 255.0
    noisy = arr + np.random.default_rng(seed).normal(0.0, float(sigma), size=arr.shape)
    out = np.clip(np.rint(noisy * 255.0), 0, 255).astype(np.uint8)
    return _png(Image.fromarray(out, mode=img.mode))


def image_crop(data: bytes, *, keep: float, seed: int = 0) -> bytes:
    img = _open_image(data)
    w, h = img.size
    cw, ch = max(1, round(w * keep)), max(1, round(h * keep))
    left, top = (w - cw) // 2, (h - ch) // 2
    return _png(img.crop((left, top, left + cw, top + ch)).resize((w, h),
                                                                   Image.Resampling.BILINEAR))


# -- ffmpeg ---------------------------------------------------------------------------------
def ffmpeg_path() -> str:
    path = shutil.which("ffmpeg")
    if path is None:
        raise DegradeError("ffmpeg is not installed (apt-get install ffmpeg); video and audio "
                           "suites need it")
    return path


def _ffmpeg(args: list[str], data: bytes, in_suffix: str, out_suffix: str) -> bytes:
    with tempfile.TemporaryDirectory(prefix="lb-degrade-") as tmp:
        src, dst = Path(tmp) / f"in{in_suffix}", Path(tmp) / f"out{out_suffix}"
        src.write_bytes(data)
        cmd = [ffmpeg_path(), "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
               "-threads", "1", "-i", str(src), *args, "-map_metadata", "-1",
               "-map_chapters", "-1", "-fflags", "+bitexact", str(dst)]
        try:
            proc = subprocess.run(cmd, capture_output=True, timeout=FFMPEG_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise DegradeError(f"ffmpeg took longer than {FFMPEG_TIMEOUT_S} s") from None
        if proc.returncode != 0 or not dst.is_file():
            err = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
            raise DegradeError(f"ffmpeg failed ({proc.returncode}): {' | '.join(err)}")
        return dst.read_bytes()


def probe(data: bytes, suffix: str) -> dict:
    """ffprobe's first stream and format of ``data`` (sizes, rates, codec, bit rate)."""
    exe = shutil.which("ffprobe")
    if exe is None:
        raise DegradeError("ffprobe is not installed (apt-get install ffmpeg)")
    with tempfile.TemporaryDirectory(prefix="lb-probe-") as tmp:
        src = Path(tmp) / f"in{suffix}"
        src.write_bytes(data)
        proc = subprocess.run([exe, "-v", "error", "-show_streams", "-show_format", "-of", "json",
                               str(src)], capture_output=True, timeout=60)
    if proc.returncode != 0:
        raise DegradeError(f"ffprobe cannot read the input: {proc.stderr.decode()[-200:]}")
    info = json.loads(proc.stdout)
    return {"streams": info.get("streams", []), "format": info.get("format", {})}


def _video_stream(data: bytes, suffix: str) -> dict:
    for s in probe(data, suffix)["streams"]:
        if s.get("codec_type") == "video":
            return s
    raise DegradeError("no video stream in the input")


def _even(x: float) -> int:
    return max(2, int(x) // 2 * 2)


_X264 = ["-map", "0:v:0", "-an", "-sn", "-dn", "-c:v", "libx264", "-preset", "medium",
         "-pix_fmt", "yuv420p", "-x264-params", "threads=1:sliced-threads=0",
         "-flags:v", "+bitexact", "-f", "mp4"]


def video_h264(data: bytes, *, crf: int, seed: int = 0, suffix: str = ".mp4") -> bytes:
    s = _video_stream(data, suffix)
    w, h = _even(s["width"]), _even(s["height"])
    return _ffmpeg(["-vf", f"scale={w}:{h}:flags=bilinear", *_X264, "-crf", str(int(crf))],
                   data, suffix, ".mp4")


def video_fps(data: bytes, *, factor: float, seed: int = 0, suffix: str = ".mp4") -> bytes:
    s = _video_stream(data, suffix)
    num, _, den = str(s.get("r_frame_rate") or s.get("avg_frame_rate") or "25/1").partition("/")
    rate = float(num) / float(den or 1) if float(den or 1) else 25.0
    w, h = _even(s["width"]), _even(s["height"])
    return _ffmpeg(["-vf", f"fps=fps={rate * factor:.6f},scale={w}:{h}:flags=bilinear",
                    *_X264, "-qp", "0"], data, suffix, ".mp4")


def video_resize(data: bytes, *, scale: float, seed: int = 0, suffix: str = ".mp4") -> bytes:
    s = _video_stream(data, suffix)
    w, h = _even(s["width"]), _even(s["height"])
    sw, sh = _even(w * scale), _even(h * scale)
    return _ffmpeg(["-vf", f"scale={sw}:{sh}:flags=bilinear,scale={w}:{h}:flags=bilinear",
                    *_X264, "-qp", "0"], data, suffix, ".mp4")


_AUDIO_IN = ["-map", "0:a:0", "-vn", "-sn", "-dn"]


def audio_mp3(data: bytes, *, kbps: int, rate: int, seed: int = 0, suffix: str = ".wav") -> bytes:
    return _ffmpeg([*_AUDIO_IN, "-c:a", "libmp3lame", "-b:a", f"{int(kbps)}k", "-ar", str(rate),
                    "-write_xing", "0", "-id3v2_version", "0", "-write_id3v1", "0",
                    "-flags:a", "+bitexact", "-f", "mp3"], data, suffix, ".mp3")


def audio_opus(data: bytes, *, kbps: int, seed: int = 0, suffix: str = ".wav") -> bytes:
    return _ffmpeg([*_AUDIO_IN, "-c:a", "libopus", "-b:a", f"{int(kbps)}k", "-vbr", "off",
                    "-flags:a", "+bitexact", "-f", "ogg"], data, suffix, ".ogg")


def _audio_stream(data: bytes, suffix: str) -> dict:
    for s in probe(data, suffix)["streams"]:
        if s.get("codec_type") == "audio":
            return s
    raise DegradeError("no audio stream in the input")


def audio_resample(data: bytes, *, factor: float, seed: int = 0, suffix: str = ".wav") -> bytes:
    rate = int(_audio_stream(data, suffix)["sample_rate"])
    return _ffmpeg([*_AUDIO_IN, "-ar", str(max(1000, round(rate * factor))), "-c:a", "pcm_s16le",
                    "-flags:a", "+bitexact", "-f", "wav"], data, suffix, ".wav")


def audio_noise(data: bytes, *, snr_db: float, seed: int = 0, suffix: str = ".wav") -> bytes:
    s = _audio_stream(data, suffix)
    rate, channels = int(s["sample_rate"]), int(s.get("channels") or 1)
    pcm = _ffmpeg([*_AUDIO_IN, "-c:a", "pcm_f32le", "-f", "f32le"], data, suffix, ".f32")
    x = np.frombuffer(pcm, dtype="<f4").astype(np.float64)
    power = float(np.mean(x * x)) if len(x) else 0.0
    sigma = math.sqrt(power / (10.0 ** (float(snr_db) / 10.0)))
    y = x + np.random.default_rng(seed).normal(0.0, sigma, size=x.shape)
    pcm16 = np.clip(np.rint(y * 32767.0), -32768, 32767).astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm16.tobytes())
    return buf.getvalue()


#: (modality, degradation) -> transform; a transform whose output changes needs a new suite
#: version (`leaderboard.core.robustness.suites`), never an edit under the old one
TRANSFORMS = {
    ("image", "jpeg"): image_jpeg, ("image", "resize"): image_resize,
    ("image", "blur"): image_blur, ("image", "noise"): image_noise, ("image", "crop"): image_crop,
    ("video", "h264"): video_h264, ("video", "fps"): video_fps, ("video", "resize"): video_resize,
    ("audio", "mp3"): audio_mp3, ("audio", "opus"): audio_opus,
    ("audio", "resample"): audio_resample, ("audio", "noise"): audio_noise,
}


def apply(modality: str, degradation: str, params: dict, data: bytes, *, seed: int,
          suffix: str) -> bytes:
    """Degrade ``data`` (a file whose name ends with ``suffix``) with one level's ``params``."""
    try:
        fn = TRANSFORMS[(modality, degradation)]
    except KeyError:
        raise DegradeError(f"no transform for {modality}/{degradation}") from None
    kwargs = dict(params, seed=int(seed))
    if modality != "image":
        kwargs["suffix"] = suffix
    return fn(data, **kwargs)


@functools.lru_cache(maxsize=1)
def library_versions() -> dict:
    """The versions that decide the bytes (stored in every manifest)."""
    import PIL
    from PIL import features

    out = {"pillow": PIL.__version__, "libjpeg": features.version("jpg"),
           "zlib": features.version("zlib"), "numpy": np.__version__}
    exe = shutil.which("ffmpeg")
    if exe:
        first = subprocess.run([exe, "-hide_banner", "-version"], capture_output=True,
                               text=True, timeout=30).stdout.splitlines()
        words = first[0].split() if first else []
        # "ffmpeg version 5.1.9-0+deb12u1 Copyright ..." -> "5.1.9-0+deb12u1"
        out["ffmpeg"] = words[2] if len(words) > 2 and words[1] == "version" else "unknown"
    return out
