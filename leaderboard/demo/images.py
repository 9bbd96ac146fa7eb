"""Procedural images for the image demo packs (SynCred-Bench, UniAIDet, VCT²).

Nothing here is a real photograph or a real generator's output. The images only have to be
varied (gradients, shapes, 1/f textures, brush strokes, text-like strokes, document and UI
layouts) and the "generated" ones have to differ from the "real" ones in *measurable* low-level
ways, so that a detector and the Visual AI Index have something to find:

* real images carry sensor/paper noise and crisp edges;
* `generator_look` applies a generator's trait: smoothing (lost fine texture), a faint periodic
  up-sampling grid (a peak in the FFT), a saturation/contrast shift and removed noise, with a
  strength per generator, so per-generator detectability and VAI differ.

Every function takes a ``numpy.random.Generator`` and is deterministic for it. Images are
H x W x 3 uint8 RGB arrays; masks are H x W bool arrays (True = generated pixel).
"""
from __future__ import annotations

import io
from dataclasses import dataclass

import cv2
import numpy as np
from PIL import Image


def _color(rng: np.random.Generator, lo: int = 0, hi: int = 256) -> tuple[int, int, int]:
    return tuple(int(v) for v in rng.integers(lo, hi, 3))


def pink_noise(rng: np.random.Generator, h: int, w: int, *, beta: float = 1.8) -> np.ndarray:
    """Zero-mean, unit-std noise with a 1/f^beta spectrum (natural-image-like texture)."""
    white = rng.standard_normal((h, w))
    fy = np.fft.fftfreq(h)[:, None]
    fx = np.fft.fftfreq(w)[None, :]
    f = np.sqrt(fx * fx + fy * fy)
    f[0, 0] = 1.0
    spec = np.fft.fft2(white) / f ** (beta / 2.0)
    spec[0, 0] = 0.0
    out = np.real(np.fft.ifft2(spec))
    return out / (out.std() + 1e-9)


def _finish(img: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(img), 0, 255).astype(np.uint8)


def add_sensor_noise(img: np.ndarray, rng: np.random.Generator, sigma: float) -> np.ndarray:
    return _finish(img.astype(np.float64) + rng.normal(0.0, sigma, img.shape))


def natural_image(rng: np.random.Generator, h: int = 64, w: int = 64, *,
                  n_shapes: int | None = None, noise: float = 5.0) -> np.ndarray:
    """A photo-like scene: sky/ground gradient, 1/f texture, soft-edged objects, sensor noise."""
    top, bottom = np.array(_color(rng, 40, 230), float), np.array(_color(rng, 20, 200), float)
    t = np.linspace(0.0, 1.0, h)[:, None, None]
    img = (1 - t) * top + t * bottom + np.zeros((1, w, 3))
    img += 18.0 * pink_noise(rng, h, w)[:, :, None]
    layer = img.copy()
    for _ in range(int(rng.integers(2, 6)) if n_shapes is None else n_shapes):
        color = _color(rng)
        cx, cy = int(rng.integers(0, w)), int(rng.integers(h // 4, h))
        kind = int(rng.integers(0, 3))
        if kind == 0:
            cv2.ellipse(layer, (cx, cy), (int(rng.integers(4, w // 3)), int(rng.integers(4, h // 3))),
                        float(rng.uniform(0, 180)), 0, 360, color, -1)
        elif kind == 1:
            x2, y2 = cx + int(rng.integers(5, w // 2)), cy + int(rng.integers(5, h // 2))
            cv2.rectangle(layer, (cx, cy), (x2, y2), color, -1)
        else:
            pts = rng.integers(0, [w, h], size=(int(rng.integers(3, 6)), 2)).astype(np.int32)
            cv2.fillPoly(layer, [pts], color)
        # objects keep the scene's texture: shading modulated by the same 1/f field
    layer += 10.0 * pink_noise(rng, h, w, beta=1.2)[:, :, None]
    img = cv2.GaussianBlur(layer, (3, 3), 0.6)
    return add_sensor_noise(img, rng, noise)


def artwork(rng: np.random.Generator, h: int = 64, w: int = 64, *, noise: float = 3.0) -> np.ndarray:
    """A painting/anime-like image: limited palette, brush strokes or flat fills with outlines."""
    palette = [_color(rng) for _ in range(5)]
    img = np.zeros((h, w, 3), float) + np.array(palette[0], float)
    if rng.random() < 0.5:  # painterly: many thick strokes
        for _ in range(int(rng.integers(25, 60))):
            p1 = (int(rng.integers(0, w)), int(rng.integers(0, h)))
            ang = rng.uniform(0, np.pi)
            ln = rng.uniform(4, w / 3)
            p2 = (int(p1[0] + ln * np.cos(ang)), int(p1[1] + ln * np.sin(ang)))
            cv2.line(img, p1, p2, palette[int(rng.integers(0, 5))], int(rng.integers(1, 5)))
        img += 8.0 * pink_noise(rng, h, w, beta=0.8)[:, :, None]
    else:  # anime-like: flat regions with dark outlines
        for _ in range(int(rng.integers(3, 7))):
            c = (int(rng.integers(0, w)), int(rng.integers(0, h)))
            axes = (int(rng.integers(5, w // 2)), int(rng.integers(5, h // 2)))
            ang = float(rng.uniform(0, 180))
            cv2.ellipse(img, c, axes, ang, 0, 360, palette[int(rng.integers(1, 5))], -1)
            cv2.ellipse(img, c, axes, ang, 0, 360, (20, 20, 30), 1)
    return add_sensor_noise(img, rng, noise)


@dataclass(frozen=True)
class Look:
    """A generator's low-level trait (strengths are in pixel/intensity units)."""

    blur: float = 0.0        # Gaussian sigma: lost fine texture and sensor noise
    grid: float = 0.0        # amplitude of the periodic up-sampling pattern
    period: int = 8          # its period in pixels
    saturation: float = 1.0  # HSV saturation gain
    contrast: float = 1.0    # gain around the mean intensity
    noise: float = 0.0       # residual noise the generator leaves


def generator_look(img: np.ndarray, rng: np.random.Generator, look: Look) -> np.ndarray:
    """Apply ``look`` to a clean rendering: what makes a "generated" image measurably different."""
    x = img.astype(np.float64)
    if look.blur > 0:
        x = cv2.GaussianBlur(x, (0, 0), look.blur)
    if look.saturation != 1.0:
        hsv = cv2.cvtColor(_finish(x), cv2.COLOR_RGB2HSV).astype(np.float64)
        hsv[:, :, 1] = np.clip(hsv[:, :, 1] * look.saturation, 0, 255)
        x = cv2.cvtColor(_finish(hsv), cv2.COLOR_HSV2RGB).astype(np.float64)
    if look.contrast != 1.0:
        x = (x - x.mean()) * look.contrast + x.mean()
    if look.grid > 0:
        h, w = x.shape[:2]
        yy, xx = np.mgrid[0:h, 0:w]
        phase = rng.uniform(0, 2 * np.pi)
        pattern = np.cos(2 * np.pi * xx / look.period + phase) * np.cos(2 * np.pi * yy / look.period)
        x += look.grid * pattern[:, :, None]
    if look.noise > 0:
        x += rng.normal(0.0, look.noise, x.shape)
    return _finish(x)


def blob_mask(rng: np.random.Generator, h: int, w: int, *, min_frac: float = 0.05,
              max_frac: float = 0.35) -> np.ndarray:
    """A SAM-like object region: a smooth random blob covering min_frac..max_frac of the image."""
    for _ in range(20):
        field = pink_noise(rng, h, w, beta=3.0)
        cy, cx = rng.uniform(0.2, 0.8) * h, rng.uniform(0.2, 0.8) * w
        yy, xx = np.mgrid[0:h, 0:w]
        r = np.sqrt(((yy - cy) / h) ** 2 + ((xx - cx) / w) ** 2)
        m = (field - 6.0 * r) > rng.uniform(-2.0, -0.5)
        n, labels, stats, _ = cv2.connectedComponentsWithStats(m.astype(np.uint8), connectivity=4)
        if n > 1:
            biggest = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
            m = labels == biggest
            if min_frac <= m.mean() <= max_frac:
                return m
    m = np.zeros((h, w), bool)  # fallback: a centred ellipse of ~15% of the image
    cv2.ellipse(m.view(np.uint8), (w // 2, h // 2), (w // 4, h // 5), 0, 0, 360, 1, -1)
    return m


def face_mask(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """An upright ellipse where a swapped face goes (deepfake family)."""
    m = np.zeros((h, w), np.uint8)
    cx, cy = int(rng.uniform(0.35, 0.65) * w), int(rng.uniform(0.35, 0.6) * h)
    cv2.ellipse(m, (cx, cy), (max(3, int(w * rng.uniform(0.12, 0.2))),
                              max(4, int(h * rng.uniform(0.16, 0.26)))), 0, 0, 360, 1, -1)
    return m.astype(bool)


def draw_face(img: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A crude face (skin tone, eyes, mouth) filling ``mask``."""
    out = img.copy()
    skin = np.array(_color(rng, 150, 235), float) * np.array([1.0, 0.82, 0.7])
    out[mask] = _finish(skin)
    ys, xs = np.nonzero(mask)
    cy, cx, hh, ww = ys.mean(), xs.mean(), np.ptp(ys) + 1, np.ptp(xs) + 1
    for dx in (-0.2, 0.2):
        cv2.circle(out, (int(cx + dx * ww), int(cy - 0.12 * hh)), max(1, int(ww * 0.08)),
                   (30, 30, 40), -1)
    cv2.line(out, (int(cx - 0.18 * ww), int(cy + 0.22 * hh)), (int(cx + 0.18 * ww),
                                                                 int(cy + 0.22 * hh)), (120, 40, 50), 1)
    out[~mask] = img[~mask]
    return out


def changed_regions(before: np.ndarray, after: np.ndarray, *, tau: float = 40.0,
                    gamma: int = 20) -> np.ndarray:
    """UniAIDet appendix A's editing mask: pixels whose change exceeds ``tau`` (max over
    channels), keeping only 4-connected regions larger than ``gamma`` pixels."""
    diff = np.abs(before.astype(np.int16) - after.astype(np.int16)).max(axis=2)
    m1 = (diff > tau).astype(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(m1, connectivity=4)
    keep = np.zeros(n, bool)
    keep[1:] = stats[1:, cv2.CC_STAT_AREA] > gamma
    return keep[labels]


def paste(base: np.ndarray, other: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Î = M * I' + (1 - M) * I: generated pixels inside the mask only (UniAIDet appendix A)."""
    out = base.copy()
    out[mask] = other[mask]
    return out


def jpeg_roundtrip(img: np.ndarray, quality: int) -> np.ndarray:
    """Re-encode as JPEG in memory (online compression); deterministic for a given libjpeg."""
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="JPEG", quality=int(quality))
    with Image.open(io.BytesIO(buf.getvalue())) as im:
        return np.asarray(im.convert("RGB")).copy()


def png_bytes(img: np.ndarray) -> bytes:
    """PNG bytes with no metadata (no timestamps): the same pixels give the same bytes."""
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="PNG", optimize=False, compress_level=9)
    return buf.getvalue()


# -- documents and interfaces (SynCred-Bench's credible forms and circulation styles) --------

def _text_line(img: np.ndarray, rng: np.random.Generator, x0: int, y: int, x1: int, *,
               language: str, size: int, color) -> None:
    """Text-like strokes: Latin words (runs of thin bars of varied width) or CJK glyphs (square
    cells of 2-4 short strokes)."""
    x = x0
    while x < x1 - size:
        if language == "zh":
            for _ in range(int(rng.integers(2, 5))):
                ax, ay = x + int(rng.integers(0, size)), y + int(rng.integers(0, size))
                horizontal = rng.random() < 0.5
                bx = min(x + size - 1, ax + size // 2) if horizontal else ax
                by = ay if horizontal else min(y + size - 1, ay + size // 2)
                cv2.line(img, (ax, ay), (bx, by), color, 1)
            x += size + 1
        else:
            word = int(rng.integers(2, 7)) * max(1, size // 3)
            cv2.rectangle(img, (x, y + size // 3), (min(x1, x + word), y + size - 1), color, -1)
            x += word + max(2, size // 2)


def _text_block(img, rng, x0, y0, x1, y1, *, language, size=4, gap=3, color=(40, 40, 40)):
    y = y0
    while y + size <= y1:
        end = x1 if rng.random() < 0.8 else int(x0 + (x1 - x0) * rng.uniform(0.4, 0.8))
        _text_line(img, rng, x0, y, end, language=language, size=size, color=color)
        y += size + gap


def document(rng: np.random.Generator, h: int, w: int, *, form: str, language: str) -> np.ndarray:
    """A clean rendering of one credible form (SynCred 3): ML media layout, IN institutional
    notice, PI platform interface, CR credential record, AD analytical display, AM assessment."""
    paper = (250, 250, 246) if form != "PI" else (255, 255, 255)
    img = np.zeros((h, w, 3), np.uint8) + np.array(paper, np.uint8)
    m = max(3, w // 16)
    if form == "ML":
        _text_line(img, rng, m, m, w - m, language=language, size=7, color=(10, 10, 10))
        ph, pw = h // 3, w // 2
        img[m + 10:m + 10 + ph, m:m + pw] = natural_image(rng, ph, pw, noise=2.0)
        _text_block(img, rng, m + pw + 3, m + 10, w - m, m + 10 + ph, language=language)
        _text_block(img, rng, m, m + 14 + ph, w - m, h - m, language=language)
    elif form == "IN":
        _text_line(img, rng, w // 4, m, 3 * w // 4, language=language, size=7, color=(200, 20, 20))
        cv2.line(img, (m, m + 11), (w - m, m + 11), (200, 20, 20), 1)
        _text_block(img, rng, m, m + 16, w - m, h - 3 * m, language=language)
        cv2.circle(img, (w - 3 * m, h - 2 * m), max(5, w // 9), (210, 30, 30), 1)
    elif form == "PI":
        img[:max(8, h // 10)] = _color(rng, 20, 120)
        for k in range(3):
            cy = h // 6 + k * h // 4
            cv2.circle(img, (m + 4, cy + 4), 4, _color(rng, 60, 200), -1)
            cv2.rectangle(img, (m + 11, cy), (w - m - int(rng.integers(0, w // 3)), cy + h // 6),
                          (225, 232, 245), -1)
            _text_block(img, rng, m + 13, cy + 2, w - m - 2, cy + h // 6 - 1, language=language,
                        size=3, gap=2)
        cv2.rectangle(img, (w // 3, h - m - 8), (2 * w // 3, h - m), _color(rng, 30, 160), -1)
    elif form == "CR":
        cv2.rectangle(img, (2, 2), (w - 3, h - 3), (120, 90, 40), 2)
        img[m + 2:m + 2 + h // 4, m + 2:m + 2 + w // 5] = _finish(
            natural_image(rng, h // 4, w // 5, n_shapes=1, noise=2.0))
        for k in range(5):
            y = m + 4 + k * (h - 2 * m) // 6
            _text_line(img, rng, w // 3, y, w - m, language=language, size=4, color=(30, 30, 60))
            cv2.line(img, (w // 3, y + 6), (w - m, y + 6), (160, 160, 160), 1)
        cv2.circle(img, (w - 3 * m, h - 3 * m), max(5, w // 10), (200, 40, 40), 1)
    elif form == "AD":
        cv2.line(img, (m + 6, m), (m + 6, h - m - 6), (0, 0, 0), 1)
        cv2.line(img, (m + 6, h - m - 6), (w - m, h - m - 6), (0, 0, 0), 1)
        n = int(rng.integers(4, 8))
        bw = (w - 2 * m - 10) // n
        for k in range(n):
            bh = int(rng.uniform(0.15, 0.8) * (h - 2 * m - 10))
            x = m + 8 + k * bw
            cv2.rectangle(img, (x, h - m - 7 - bh), (x + bw - 2, h - m - 7), _color(rng, 30, 220), -1)
        _text_line(img, rng, m + 8, m, w // 2, language=language, size=4, color=(60, 60, 60))
    elif form == "AM":
        for k in range(4):
            y = m + k * (h - 2 * m) // 4
            _text_line(img, rng, m, y, w - m, language=language, size=4, color=(20, 20, 20))
            for j in range(3):
                cv2.rectangle(img, (m + 4 + j * (w // 4), y + 8), (m + 8 + j * (w // 4), y + 12),
                              (40, 40, 40), 1)
    else:
        raise ValueError(f"form must be one of ML, IN, PI, CR, AD, AM, got {form!r}")
    return img


def circulate(img: np.ndarray, rng: np.random.Generator, *, style: str) -> np.ndarray:
    """Apply a circulation style (SynCred 3): NR native rendering; SC scanned, CC camera and FC fax
    copies (document reproduction); SP screen photograph; CV cropped view, OP online compression."""
    h, w = img.shape[:2]
    x = img.astype(np.float64)
    if style == "NR":
        return img.copy()
    if style == "SC":
        rot = cv2.getRotationMatrix2D((w / 2, h / 2), float(rng.uniform(-2, 2)), 1.0)
        x = cv2.warpAffine(x, rot, (w, h), borderValue=(235, 235, 230))
        shade = np.linspace(rng.uniform(0.85, 0.95), 1.0, w)[None, :, None]
        return add_sensor_noise(cv2.GaussianBlur(x, (3, 3), 0.7) * shade * 0.96, rng, 3.0)
    if style == "CC":
        d = w * 0.12
        src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
        dst = np.float32([[rng.uniform(0, d), rng.uniform(0, d)], [w - rng.uniform(0, d), rng.uniform(0, d)],
                          [w - rng.uniform(0, d), h - rng.uniform(0, d)], [rng.uniform(0, d), h - rng.uniform(0, d)]])
        x = cv2.warpPerspective(x, cv2.getPerspectiveTransform(src, dst), (w, h),
                                borderValue=_color(rng, 40, 120))
        light = np.linspace(rng.uniform(0.7, 0.9), rng.uniform(1.0, 1.1), h)[:, None, None]
        return add_sensor_noise(cv2.GaussianBlur(x, (3, 3), 0.9) * light, rng, 5.0)
    if style == "FC":
        g = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY)
        g = cv2.resize(g, (w // 2, h // 2), interpolation=cv2.INTER_AREA)
        g = np.where(g > 160, 255, 0).astype(np.uint8)
        g = cv2.resize(g, (w, h), interpolation=cv2.INTER_NEAREST)
        rows = rng.random(h) < 0.04
        g[rows] = 255 - g[rows] // 2
        return np.stack([g] * 3, axis=-1)
    if style == "SP":
        yy, xx = np.mgrid[0:h, 0:w]
        moire = np.sin(2 * np.pi * (xx * rng.uniform(0.3, 0.45) + yy * rng.uniform(0.05, 0.15)))
        x = x * 0.9 + 25 + 12 * moire[:, :, None] * np.array([1.0, 0.6, 1.2])
        return add_sensor_noise(cv2.GaussianBlur(x, (3, 3), 0.8), rng, 4.0)
    if style == "CV":
        f = rng.uniform(0.6, 0.8)
        ch, cw = int(h * f), int(w * f)
        y0, x0 = int(rng.integers(0, h - ch + 1)), int(rng.integers(0, w - cw + 1))
        return cv2.resize(img[y0:y0 + ch, x0:x0 + cw], (w, h), interpolation=cv2.INTER_LINEAR)
    if style == "OP":
        small = cv2.resize(img, (int(w * 0.7), int(h * 0.7)), interpolation=cv2.INTER_AREA)
        small = jpeg_roundtrip(small, int(rng.integers(15, 40)))
        return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    raise ValueError(f"style must be one of NR, SC, CC, FC, SP, CV, OP, got {style!r}")
