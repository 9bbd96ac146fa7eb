"""Small procedural media for the demo packs: images, audio, video, multi-view 3D renders, text.

Every writer is deterministic: the same arguments give the same bytes (seeded numpy generators,
Pillow's PNG encoder without timestamps, stdlib ``wave``, OpenCV's MJPEG writer). Files are tiny
(64x64 images, half a second of 8 kHz audio, 8-frame 48x48 clips) so all demo packs stay small.

``fake=True`` adds a visible or audible "generator artifact" (over-saturated colours, a blocky
patch, a smeared region; a metallic buzz and clicks) so a detector has something to find, but the
content of real and fake media is drawn from the same scenes and file names never say which it
is.
"""
from __future__ import annotations

import hashlib
import math
import wave
from pathlib import Path

import numpy as np
from PIL import Image

IMAGE_STYLES = ("gradient", "circles", "stripes", "checker", "blobs", "landscape", "document")
AUDIO_KINDS = ("speech", "singing", "music", "environment")
VIDEO_FPS = 8


def _rng(seed: int | str) -> np.random.Generator:
    if isinstance(seed, str):
        seed = int.from_bytes(hashlib.sha256(seed.encode("utf-8")).digest()[:8], "big")
    return np.random.default_rng(seed)


def _palette(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(30, 226, size=(n, 3)).astype(np.float64)


def render_image(*, seed: int | str, size: int = 64, style: str | None = None,
                 fake: bool = False) -> np.ndarray:
    """An ``size x size x 3`` uint8 picture of one of `IMAGE_STYLES` (chosen from the seed)."""
    rng = _rng(seed)
    style = style or IMAGE_STYLES[int(rng.integers(len(IMAGE_STYLES)))]
    if style not in IMAGE_STYLES:
        raise ValueError(f"style must be one of {IMAGE_STYLES}, got {style!r}")
    yy, xx = np.mgrid[0:size, 0:size] / max(size - 1, 1)
    c = _palette(rng, 4)
    if style == "gradient":
        a = rng.uniform(0, math.pi)
        t = (np.cos(a) * xx + np.sin(a) * yy)[..., None]
        img = c[0] * (1 - t) + c[1] * t
    elif style == "circles":
        img = np.broadcast_to(c[0], (size, size, 3)).copy()
        for k in range(int(rng.integers(2, 6))):
            cx, cy, r = rng.uniform(0.1, 0.9), rng.uniform(0.1, 0.9), rng.uniform(0.08, 0.3)
            img[(xx - cx) ** 2 + (yy - cy) ** 2 < r * r] = c[1 + k % 3]
    elif style == "stripes":
        f, a = rng.uniform(3, 9), rng.uniform(0, math.pi)
        t = (0.5 + 0.5 * np.sin(2 * math.pi * f * (np.cos(a) * xx + np.sin(a) * yy)))[..., None]
        img = c[0] * (1 - t) + c[2] * t
    elif style == "checker":
        k = int(rng.integers(3, 9))
        t = ((np.floor(xx * k) + np.floor(yy * k)) % 2)[..., None]
        img = c[0] * (1 - t) + c[1] * t
    elif style == "blobs":
        img = np.zeros((size, size, 3))
        for k in range(4):
            cx, cy, s = rng.uniform(0, 1), rng.uniform(0, 1), rng.uniform(0.1, 0.35)
            img += c[k] * np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * s * s))[..., None]
        img = img / max(img.max(), 1e-9) * 230
    elif style == "landscape":
        horizon = rng.uniform(0.35, 0.65) + 0.08 * np.sin(xx * rng.uniform(4, 12))
        sky = c[0] * (1 - yy[..., None] * 0.5)
        img = np.where((yy < horizon)[..., None], sky, c[1] * (0.6 + 0.4 * yy[..., None]))
    else:  # document: text-like lines on paper
        img = np.full((size, size, 3), 235.0)
        for row in range(4, size - 4, 6):
            length = int(rng.integers(size // 3, size - 8))
            img[row:row + 2, 4:4 + length] = 40.0
    img = img + rng.normal(0, 3.0, size=img.shape)  # sensor-like grain on every picture
    if fake:
        img = _image_artifact(img, rng)
    return np.clip(img, 0, 255).astype(np.uint8)


def _image_artifact(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    size = img.shape[0]
    kind = int(rng.integers(3))
    x, y = (int(v) for v in rng.integers(0, size // 2, size=2))
    w = size // 3
    if kind == 0:  # over-saturation
        mean = img.mean(axis=2, keepdims=True)
        return mean + (img - mean) * 1.8
    if kind == 1:  # blockiness in a patch
        patch = img[y:y + w, x:x + w]
        h, w2 = patch.shape[:2]
        block = patch[::4, ::4].repeat(4, axis=0).repeat(4, axis=1)[:h, :w2]
        img = img.copy()
        img[y:y + w, x:x + w] = block
        return img
    img = img.copy()  # smeared (unnaturally smooth) region
    img[y:y + w, x:x + w] = img[y:y + w, x:x + w].mean(axis=(0, 1))
    return img


def write_png(path: Path, pixels: np.ndarray) -> Path:
    """Save an ``h x w x 3`` (or ``h x w``) uint8 array as PNG, creating parent folders."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.ascontiguousarray(pixels)).save(path, format="PNG", optimize=False)
    return path


def image(path: Path, *, seed: int | str, size: int = 64, style: str | None = None,
          fake: bool = False) -> Path:
    """Write a procedural PNG picture (see `render_image`)."""
    return write_png(path, render_image(seed=seed, size=size, style=style, fake=fake))


def audio(path: Path, *, seed: int | str, kind: str = "speech", seconds: float = 0.5,
          rate: int = 8000, fake: bool = False) -> Path:
    """Write a mono 16-bit WAV of one of `AUDIO_KINDS`; ``fake`` adds a buzz and clicks."""
    if kind not in AUDIO_KINDS:
        raise ValueError(f"kind must be one of {AUDIO_KINDS}, got {kind!r}")
    rng = _rng(seed)
    t = np.arange(int(seconds * rate)) / rate
    f0 = rng.uniform(90, 260)
    if kind == "speech":  # voiced harmonics under a syllable-rate envelope
        env = 0.5 + 0.5 * np.sin(2 * math.pi * rng.uniform(3, 6) * t) ** 2
        sig = sum(np.sin(2 * math.pi * f0 * h * t) / h for h in range(1, 5)) * env
    elif kind == "singing":  # sustained notes with vibrato
        vib = 1 + 0.01 * np.sin(2 * math.pi * 5.5 * t)
        sig = np.sin(2 * math.pi * f0 * 2 * vib * t) + 0.4 * np.sin(4 * math.pi * f0 * 2 * t)
    elif kind == "music":  # a short arpeggio
        notes = f0 * 2 * np.array([1, 1.25, 1.5, 2.0])
        idx = np.minimum((t / seconds * 4).astype(int), 3)
        sig = np.sin(2 * math.pi * notes[idx] * t)
    else:  # environment: filtered noise with a gust
        noise = rng.normal(0, 1, t.size)
        gust = 0.4 + np.sin(math.pi * t / seconds)
        sig = np.convolve(noise, np.ones(8) / 8, mode="same") * gust
    sig = sig + rng.normal(0, 0.02, t.size)
    if fake:
        sig = sig + 0.25 * np.sign(np.sin(2 * math.pi * 50 * t))  # buzz
        clicks = rng.integers(0, t.size, size=3)
        sig[clicks] += 2.0
    sig = sig / max(np.abs(sig).max(), 1e-9) * 0.8
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes((sig * 32767).astype("<i2").tobytes())
    return path


def video(path: Path, *, seed: int | str, frames: int = 8, size: int = 48,
          fake: bool = False) -> Path:
    """Write a short MJPEG AVI (OpenCV) of a moving scene; ``fake`` adds flicker and a morph."""
    import cv2

    rng = _rng(seed)
    base = render_image(seed=int(rng.integers(2**31)), size=size * 2)
    dx, dy = rng.integers(-3, 4, size=2)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), VIDEO_FPS, (size, size))
    if not writer.isOpened():
        raise RuntimeError("OpenCV cannot write MJPEG AVI files here")
    try:
        for k in range(frames):
            ox, oy = (size // 2 + k * dx) % size, (size // 2 + k * dy) % size
            frame = base[oy:oy + size, ox:ox + size].astype(np.float64)
            if fake:
                frame *= 1.0 + (0.25 if k % 3 == 1 else 0.0)  # flicker
                r = size // 6 + k  # an object that grows out of nothing
                yy, xx = np.mgrid[0:size, 0:size]
                frame[(xx - size / 2) ** 2 + (yy - size / 2) ** 2 < r * r] = (200, 60, 60)
            writer.write(np.clip(frame, 0, 255).astype(np.uint8)[..., ::-1])
    finally:
        writer.release()
    return path


def _sphere_views(rng: np.random.Generator, size: int, views: int, fake: bool):
    """Shaded views and the normal map of a bumpy, textured sphere (a procedural '3D object')."""
    yy, xx = (np.mgrid[0:size, 0:size] / (size - 1)) * 2 - 1
    inside = xx ** 2 + yy ** 2 < 0.8
    zz = np.sqrt(np.clip(0.8 - xx ** 2 - yy ** 2, 0, None))
    bumps = rng.uniform(2, 6)
    colors = _palette(rng, 2)
    out = []
    for v in range(views):
        a = 2 * math.pi * v / views
        u = np.arctan2(xx, zz) + a  # longitude seen from this view
        tex = 0.5 + 0.5 * np.sign(np.sin(bumps * u) * np.sin(bumps * yy * 2))
        if fake:  # blurred, blended texture on one side
            tex = np.where(np.cos(u) > 0.3, 0.5, tex)
        light = np.clip(0.3 + 0.7 * (0.5 * xx + 0.5 * yy + 0.7 * zz), 0, 1)
        img = (colors[0] * tex[..., None] + colors[1] * (1 - tex[..., None])) * light[..., None]
        img[~inside] = 245
        out.append(np.clip(img, 0, 255).astype(np.uint8))
    nz = zz + (0.15 * np.sin(bumps * xx * 3) if not fake else 0.0)  # fakes: over-smooth normals
    normal = np.stack([xx, yy, nz], axis=-1)
    normal /= np.linalg.norm(normal, axis=-1, keepdims=True) + 1e-9
    nmap = ((normal * 0.5 + 0.5) * 255).astype(np.uint8)
    nmap[~inside] = (128, 128, 255)
    return out, nmap


def multiview(folder: Path, *, seed: int | str, views: int = 4, size: int = 48,
              fake: bool = False) -> list[Path]:
    """Write ``view_0.png`` .. ``view_{n-1}.png`` and ``normal.png`` of a procedural object."""
    folder = Path(folder)
    imgs, nmap = _sphere_views(_rng(seed), size, views, fake)
    paths = [write_png(folder / f"view_{i}.png", img) for i, img in enumerate(imgs)]
    paths.append(write_png(folder / "normal.png", nmap))
    return paths


def text(path: Path, body: str) -> Path:
    """Write a UTF-8 text file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")
    return path


_EN_WORDS = ("river", "archive", "theory", "market", "village", "signal", "garden", "council",
             "winter", "engine", "letter", "harbour", "method", "portrait", "journey", "evidence")
_EN_VERBS = ("describes", "changes", "follows", "reveals", "supports", "questions", "shapes",
             "records")
_EN_GLUE = ("Furthermore,", "Moreover,", "In conclusion,", "Overall,", "Additionally,")
_ZH_WORDS = ("山水", "历史", "市场", "城市", "理论", "文化", "科学", "春天", "道路", "记忆",
             "书信", "家乡", "方法", "精神")
_ZH_GLUE = ("此外，", "总之，", "同时，", "综上所述，")
TEXT_LENGTHS = {"short": (50, 100), "medium": (100, 200), "long": (200, 320)}


def passage(rng: np.random.Generator, *, language: str, length: str, domain: str,
            fake: bool) -> str:
    """A procedural passage of `TEXT_LENGTHS` characters in ``en`` or ``zh``.

    Real passages vary their sentence shapes; "generated" ones lean on stock connectives and a
    regular rhythm (a cue a text detector can learn), with the same vocabulary.
    """
    if language not in ("en", "zh") or length not in TEXT_LENGTHS:
        raise ValueError(f"language must be en/zh and length one of {list(TEXT_LENGTHS)}, "
                         f"got {language!r}, {length!r}")
    lo, hi = TEXT_LENGTHS[length]
    target = int(rng.integers(lo, hi))
    parts: list[str] = []
    while sum(map(len, parts)) < target:
        if language == "en":
            a, b = (str(w) for w in rng.choice(_EN_WORDS, 2, replace=False))
            verb = str(rng.choice(_EN_VERBS))
            if fake:
                parts.append(f"{rng.choice(_EN_GLUE)} the {a} {verb} the {b} in {domain}. ")
            elif rng.random() < 0.5:
                parts.append(f"The {a} {verb} a {b}, or so the old {domain} notes claim. ")
            else:
                parts.append(f"A {a}; then the {b}. ")
        else:
            a, b = (str(w) for w in rng.choice(_ZH_WORDS, 2, replace=False))
            parts.append(f"{rng.choice(_ZH_GLUE)}{a}与{b}密切相关。" if fake
                         else (f"{a}里有{b}的影子。" if rng.random() < 0.5 else f"{a}，{b}。"))
    return "".join(parts).strip()
