"""VCT²'s Visual AI Index (VAI): twelve low-level image features and a per-subset logistic fit.

VCT² section 5.1 (Imanpour et al.): each image gets twelve features, each feature is z-scored over
the subset's images, and a logistic regression learns p(real) from them (real = 1, generated = 0),
one model per subset (COCO_AI, Twitter_AI). VAI(x) = p(real | x). It is computed from the pack's
own images when the pack is built or prepared, never from submissions.

The features, in `FEATURES` order (grayscale I = OpenCV's RGB->GRAY of the 8-bit image). Seven of
them are also defined by the authors' v1 code (`vai_scripts/feature_extraction_agid.py` in
Hasnat79/VCT_2, commit befabc3): those reproduce its ``calculate_*`` functions operation for
operation (bit-identical on the same pixels, tests/conformance/test_vct2_authors.py), quirks included:

1. texture_complexity (authors' ``calculate_texture_complexity``): entropy (log2, eps 1e-6) of the
   histogram of skimage's uniform LBP (P=8, R=1) over the authors' 26 unit bins [0, 26) (uniform
   LBP fills the first 10), divided by (sum + 1e-6) as they do.
2-4. haralick_contrast / haralick_correlation / haralick_energy (paper only): GLCM at distance 1,
   256 levels, symmetric, normalized, averaged over 0/45/90/135 degrees. Energy is the paper's
   formula sum G(i,j)^2 (skimage's "ASM"; skimage's "energy" is its square root). A constant image
   has an undefined correlation; skimage reports 1 there and so do we.
5-6. freq_mean / freq_std (paper only): mean and population std of |FFT2(I)| over all H x W
   frequencies.
7. sharpness (authors' ``calculate_image_sharpness``): max |I - GaussianBlur5x5(I)| with the blur
   run on the 8-bit image (OpenCV rounds the blurred values to integers, sigma from the kernel
   size), so the value is an integer.
8. smoothness (``calculate_image_smoothness``): 1 / (1 + var(Laplacian(I))) (3x3, CV_64F).
9. contrast (``calculate_image_contrast``): std(I).
10. color_consistency (``calculate_color_distribution_consistency``): std of the 8x8x8 HSV
   histogram (OpenCV ranges H 0-180, S/V 0-256) L2-normalized by ``cv2.normalize`` (unit Euclidean
   norm, not unit sum), computed in float32 as OpenCV's histogram is.
11. object_coherence (``calculate_object_coherence``): sum(Canny(I, 100, 200)) / pixels (edge
   pixels are 255, as OpenCV returns them).
12. contextual_relevance (``calculate_contextual_relevance``): var of the 3x3 Sobel gradient
   magnitude sqrt(Gx^2 + Gy^2).

Images are decoded with Pillow and converted to RGB (alpha dropped), which gives the same pixels as
the authors' ``cv2.imread`` for 8-bit PNG and baseline JPEG files (checked on real images). The
authors' download script re-saves every image as JPEG (``img.save(".../image_{i}.jpg")``, Pillow's
default quality) before extracting features; we compute them on the images as released.
The authors' v1 code then scores images with an "ADI" (min/mean-normalized feature sum, min-max
scaled, ``agid_score_calculation.py``); the paper's VAI is the logistic model below, which we
follow.

Fit choices where the paper is silent: population z-scores over the subset (a feature with zero
spread gets sigma 1); scikit-learn's LogisticRegression with its default L2 penalty (C = 1), lbfgs,
and no intercept, because the paper's model is p = sigmoid(w^T x) with no bias term (with a bias and
VCT²'s 1 real : 6 fakes ratio every VAI would sit near 1/7, unlike the paper's 0.43-0.63).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import cv2
import numpy as np
from PIL import Image
from skimage.feature import graycomatrix, graycoprops, local_binary_pattern

FEATURES = (
    "texture_complexity", "haralick_contrast", "haralick_correlation", "haralick_energy",
    "freq_mean", "freq_std", "sharpness", "smoothness", "contrast", "color_consistency",
    "object_coherence", "contextual_relevance",
)
_ANGLES = (0.0, np.pi / 4, np.pi / 2, 3 * np.pi / 4)
_EPS = 1e-6
_LBP_BINS = 26  # the authors' np.histogram(bins=np.arange(0, 27), range=(0, 26))


def _rgb(image) -> np.ndarray:
    arr = np.asarray(image)
    if arr.ndim == 2:
        arr = np.stack([arr] * 3, axis=-1)
    if arr.ndim != 3 or arr.shape[2] not in (3, 4) or arr.dtype != np.uint8:
        raise ValueError(f"image must be an H x W x 3 uint8 RGB array, got shape {arr.shape} "
                         f"and dtype {arr.dtype}")
    if min(arr.shape[:2]) < 3:
        raise ValueError(f"image must be at least 3 x 3 pixels, got {arr.shape[:2]}")
    return np.ascontiguousarray(arr[:, :, :3])


def image_features(image) -> np.ndarray:
    """The twelve VAI features of one RGB uint8 image, as float64 in `FEATURES` order."""
    rgb = _rgb(image)
    gray8 = cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)
    gray = gray8.astype(np.float64)

    lbp = local_binary_pattern(gray8, P=8, R=1, method="uniform")
    # np.histogram(lbp, bins=np.arange(27), range=(0, 26)) as the authors count it, by bincount:
    # the LBP codes are the integers 0..9, so the 26 unit bins hold the same counts
    counts = np.bincount(lbp.astype(np.intp).ravel(), minlength=_LBP_BINS)[:_LBP_BINS]
    hist = counts.astype(np.float64)
    hist /= hist.sum() + _EPS
    texture = float(-np.sum(hist * np.log2(hist + _EPS)))

    glcm = graycomatrix(gray8, distances=[1], angles=list(_ANGLES), levels=256, symmetric=True,
                        normed=True)
    h_contrast = float(graycoprops(glcm, "contrast").mean())
    h_corr = float(graycoprops(glcm, "correlation").mean())
    h_energy = float(graycoprops(glcm, "ASM").mean())

    mag = np.abs(np.fft.fft2(gray))
    freq_mean, freq_std = float(mag.mean()), float(mag.std())

    sharpness = float(np.max(cv2.absdiff(gray8, cv2.GaussianBlur(gray8, (5, 5), 0))))
    smoothness = float(1.0 / (1.0 + cv2.Laplacian(gray8, cv2.CV_64F).var()))
    contrast = float(np.std(gray8))

    hsv = cv2.cvtColor(rgb, cv2.COLOR_RGB2HSV)
    hh = cv2.calcHist([hsv], [0, 1, 2], None, [8, 8, 8], [0, 180, 0, 256, 0, 256])
    color = float(np.std(cv2.normalize(hh, hh).ravel()))   # L2 norm, float32, as the authors

    edges = cv2.Canny(gray8, 100, 200)
    coherence = float(np.sum(edges) / edges.size)
    gx = cv2.Sobel(gray8, cv2.CV_64F, 1, 0, ksize=3)
    gy = cv2.Sobel(gray8, cv2.CV_64F, 0, 1, ksize=3)
    relevance = float(np.var(np.sqrt(gx ** 2 + gy ** 2)))

    return np.array([texture, h_contrast, h_corr, h_energy, freq_mean, freq_std, sharpness,
                     smoothness, contrast, color, coherence, relevance], dtype=np.float64)


def features_from_files(paths: Iterable[str | Path]) -> np.ndarray:
    """Features of image files (any format Pillow reads; converted to RGB): n x 12."""
    rows = []
    for p in paths:
        with Image.open(p) as im:
            rows.append(image_features(np.asarray(im.convert("RGB"))))
    return np.array(rows, dtype=np.float64).reshape(-1, len(FEATURES))


@dataclass(frozen=True)
class VaiModel:
    """One subset's z-score statistics and logistic weights (public-safe: no item is named)."""

    mean: np.ndarray
    std: np.ndarray
    weights: np.ndarray
    n_real: int
    n_generated: int

    def predict(self, features: np.ndarray) -> np.ndarray:
        """VAI = p(real) = sigmoid(w . z) for each row of ``features`` (n x 12)."""
        z = (np.asarray(features, dtype=np.float64) - self.mean) / self.std
        return 1.0 / (1.0 + np.exp(-(z @ self.weights)))

    def as_dict(self) -> dict:
        return {"features": list(FEATURES), "mean": self.mean.tolist(), "std": self.std.tolist(),
                "weights": self.weights.tolist(), "n_real": self.n_real,
                "n_generated": self.n_generated}

    @classmethod
    def from_dict(cls, d: dict) -> "VaiModel":
        if list(d.get("features", ())) != list(FEATURES):
            raise ValueError(f"VAI model features must be {list(FEATURES)}, got {d.get('features')!r}")
        return cls(np.asarray(d["mean"], float), np.asarray(d["std"], float),
                   np.asarray(d["weights"], float), int(d["n_real"]), int(d["n_generated"]))


def fit_vai(*, features, is_real) -> VaiModel:
    """Fit one subset's VAI model (VCT² 5.1): z-score each feature, then logistic regression.

    Needs at least one real and one generated image; raises ValueError naming what is missing.
    """
    from sklearn.linear_model import LogisticRegression

    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(is_real, dtype=bool)
    if x.ndim != 2 or x.shape[1] != len(FEATURES):
        raise ValueError(f"features must be n x {len(FEATURES)}, got shape {x.shape}")
    if len(y) != len(x):
        raise ValueError(f"is_real has {len(y)} rows, features has {len(x)}")
    if not np.isfinite(x).all():
        raise ValueError("features must be finite")
    n_real = int(y.sum())
    if n_real == 0 or n_real == len(y):
        raise ValueError(f"fitting the VAI needs real and generated images, got {n_real} real "
                         f"of {len(y)}")
    mean = x.mean(axis=0)
    std = x.std(axis=0)
    std = np.where(std > 0, std, 1.0)
    model = LogisticRegression(fit_intercept=False, max_iter=1000)
    model.fit((x - mean) / std, y.astype(int))
    return VaiModel(mean=mean, std=std, weights=model.coef_[0].astype(np.float64),
                    n_real=n_real, n_generated=len(y) - n_real)


def visual_ai_index(*, features, is_real, subset) -> tuple[np.ndarray, dict[str, VaiModel]]:
    """Per-image VAI with one model per subset (VCT² trains COCO_AI and Twitter_AI separately).

    Returns (vai for each row, {subset: model}).
    """
    x = np.asarray(features, dtype=np.float64)
    y = np.asarray(is_real, dtype=bool)
    s = np.asarray(subset).astype(str)
    if not (len(x) == len(y) == len(s)):
        raise ValueError(f"features ({len(x)}), is_real ({len(y)}) and subset ({len(s)}) "
                         f"must have the same number of rows")
    vai = np.full(len(x), np.nan)
    models: dict[str, VaiModel] = {}
    for name in sorted(set(s.tolist())):
        rows = s == name
        models[name] = fit_vai(features=x[rows], is_real=y[rows])
        vai[rows] = models[name].predict(x[rows])
    return vai, models


def prepare_vai(pack, out_dir) -> dict | None:
    """Recompute the Visual AI Index from the pack's images (VCT² section 5).

    Fits one model per subset over every split's images and writes ``vai.json`` into
    ``out_dir``: ``{"features", "subsets": {subset: model}, "items": {id: vai}}``. Returns that
    mapping, or None (writing nothing) when the pack has no media, as at large scale.
    """
    ids, paths, real, subset = [], [], [], []
    for split in pack.splits:
        items, labels = pack.items(split), pack.labels(split)
        lab, sub = labels.decoded("label"), labels.decoded("subset")
        for i in range(len(items)):
            media = items.value("media", i)
            if media:
                ids.append(str(items.ids[i]))
                paths.append(Path(pack.root) / media[0])
                real.append(lab[i] == "real")
                subset.append(str(sub[i]))
    if not ids:
        return None
    vai, models = visual_ai_index(features=features_from_files(paths), is_real=real,
                                  subset=subset)
    result = {"features": list(FEATURES),
              "subsets": {k: m.as_dict() for k, m in models.items()},
              "items": {i: float(v) for i, v in zip(ids, vai)}}
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "vai.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    return result
