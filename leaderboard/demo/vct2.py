"""Demo pack for VCT²: captions x {real, six text-to-image "generators"}, with the Visual AI Index.

Small scale: COCO_AI 24 captions x 7 images and Twitter_AI 20 captions x 6 (no Midjourney), as
64 x 64 PNGs. Every image made from one caption stays in one split and one board part. The VAI
(`leaderboard.features.vai`) is fitted per subset over all splits' images while the pack is written: each
row's VAI goes into the hidden ``vai`` label and the models (z-score statistics and weights, which
name no item) into ``benchmark.yaml`` under ``vai``. Large scale: the paper's 10,017 + 15,909
captions (165,573 rows) without media, hence without VAI.

Generator traits are ordered roughly like the paper's VAI ranking (DALL·E 3 closest to the reals,
SDXL and Midjourney 6 furthest), so the demo's correlation analysis has something to show.
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from leaderboard.core.benchmarks.vct2 import GENERATORS, SUBSET_GENERATORS, SUBSETS
from leaderboard.core.generator_dates import generator_table
from leaderboard.demo import images
from leaderboard.demo.writer import (
    PackWriter,
    assign_part,
    assign_split,
    release_agreement,
    release_description,
)
from leaderboard.demo.writer import opaque_id as opaque_id_of
from leaderboard.features.vai import FEATURES, image_features, visual_ai_index

SIZE = 64
COUNTS = {"small": {"COCO_AI": 24, "Twitter_AI": 20},
          "large": {"COCO_AI": 10_017, "Twitter_AI": 15_909}}
LOOKS = {
    "SD 2.1": images.Look(blur=0.8, grid=2.5, period=8, noise=1.5),
    "SDXL": images.Look(blur=1.0, grid=1.5, period=8, saturation=1.35, contrast=1.1),
    "SD3 Medium": images.Look(blur=0.7, grid=2.0, period=16, noise=1.0),
    "SD3.5 Large": images.Look(blur=0.6, grid=1.5, period=16, noise=2.0),
    "DALL·E 3": images.Look(blur=0.4, grid=0.8, period=4, saturation=1.05, noise=3.5),
    "Midjourney 6": images.Look(blur=1.2, grid=1.0, period=8, saturation=1.5, contrast=1.25),
}
_NOUNS = ("dog", "bus", "kitchen", "skier", "pizza", "giraffe", "train", "laptop", "boat", "street")
_ADJ = ("small", "red", "crowded", "quiet", "old", "bright", "empty", "wet")
_PLACE = ("near a window", "on a table", "in a field", "by the road", "under a bridge", "at night")
_TOPICS = ("Election officials", "Scientists", "The city council", "Wildfire crews", "Investors",
           "Museum curators", "Health experts", "Farmers")
_VERBS = ("are weighing", "warned about", "celebrated", "are racing to contain", "pushed back on")
_OBJECTS = ("a new climate plan", "rising rents", "a historic vote", "the heat wave",
            "a record harvest", "an art heist", "the trade deal")

DESCRIPTION = """# VCT² (demo pack)

The Visual Counter Turing Test (VCT²) tests zero-shot AI-generated image detection on captions
from MS COCO (COCO_AI) and New York Times tweets (Twitter_AI), each paired with a real image and
with images generated from the caption by SD 2.1, SDXL, SD3 Medium, SD3.5 Large, DALL·E 3 and
Midjourney 6 (COCO_AI only). The real benchmark has ~166K images. **This demo pack is
procedural**: scenes and infographics are drawn, and each "generator" leaves its own trace.

## Task
`detection` (image): give `label` ("fake"/"real") and/or `score` (confidence of fake). You see
the image only: the subset, generator and caption are hidden (the caption would group the images
made from it, exactly one of which is real).

## Metrics (VCT² tables 2-3)
- A row is called fake by its `label` when given, else when `score > 0.5` (the authors'
  `calculate_metrics`: a score of exactly 0.5 is real).
- Per subset x generator, on that generator's fakes plus the subset's reals: **accuracy**,
  **precision**, **recall** (= f.Acc), **r.Acc** (the reals), **AP** (n/a unless every row has a
  score). Precision with nothing called fake is 0 (scikit-learn's `precision_score` default), so
  the means stay defined.
- **Mean accuracy** (headline) over all subset x generator cells, and per subset (the paper:
  58.0% COCO_AI, 58.34% Twitter_AI over 17 detectors); mean precision and recall likewise.
- **Visual AI Index** (section 5): twelve low-level features (LBP texture entropy, GLCM contrast,
  correlation and energy, FFT magnitude mean and std, sharpness, smoothness, contrast, HSV
  histogram spread, Canny edge density, Sobel magnitude variance), z-scored per subset, and a
  per-subset logistic regression of real (1) vs generated (0); VAI = p(real). Computed from the
  images when the pack is built, never from submissions. Shown: mean VAI per generator and for the
  reals, the learned weights, and the Pearson correlation between per-generator VAI and your
  per-generator accuracy (paper: -0.532 COCO_AI, -0.503 Twitter_AI).
- 95% bootstrap intervals: each generator's fakes and each subset's reals resampled (exact
  binomial draws), the reals drawn once per resample for all generators that share them.

## Fidelity to the authors' code
The authors' code (Hasnat79/VCT_2) scores each detector in its own script.
- Accuracy, precision, recall, f.Acc and r.Acc reproduce `calculate_metrics(y_true, y_pred, 0.5)`
  of `detection_scripts/universal_fake_detect_validate_sd35_new.py` (precision 0 with no
  predicted fake, as there); AP is `sklearn.metrics.average_precision_score`, which its
  `validate` calls. The means are unweighted means of those cells, as the paper's tables.
- Seven VAI features reproduce `vai_scripts/feature_extraction_agid.py` exactly (bit for bit on
  the same pixels): `calculate_texture_complexity`, `calculate_color_distribution_consistency`
  (histogram L2-normalised by `cv2.normalize`), `calculate_object_coherence`,
  `calculate_contextual_relevance`, `calculate_image_smoothness`, `calculate_image_sharpness`
  (blur of the 8-bit image) and `calculate_image_contrast`. The other five (GLCM contrast,
  correlation and energy; FFT mean and std) and the logistic VAI follow the paper.
- Decision: a row's `label` when given, else their rule, fake when `score > 0.5` (a score of
  exactly 0.5 is real).
- Deliberate differences: their v1 code ranks images by an "ADI" (`agid_score_calculation.py`),
  not the paper's VAI; we follow the paper. Their download script re-saves every image as JPEG
  before extracting features; we compute them on the images as released (decoded with Pillow,
  which gives `cv2.imread`'s pixels for 8-bit PNG and JPEG files).
"""

AGREEMENT = """# VCT² data-use agreement (demo)

The benchmark pairs real news and everyday photographs with AI-generated images made from their
captions. Access is granted only to evaluate and improve the detection of AI-generated images.

You agree that you and your team will:

1. use the data only for research on AI-generated image detection and image realism;
2. not use the images or captions to deceive anyone, to impersonate news organisations or people,
   for political manipulation, or for fraud;
3. not train generative models on the data or use it to make generated images harder to detect;
4. respect the terms of the sources of the real images (MS COCO, The New York Times) and not
   redistribute them;
5. delete the data when your project ends or access is revoked, and report misuse.

Access is personal, may expire, and may be revoked if these terms are broken.
"""


def meta() -> dict:
    """The pack's meta.json (a fresh dict): shared with the pack builder, which fills in counts."""
    return {
        "key": "vct2", "title": "VCT²", "version": "1", "modalities": ["image"],
        "tasks": [{"key": "detection", "kind": "detection",
                   "title": "Zero-shot AI-generated image detection", "modalities": ["image"],
                   "headline": "mean_accuracy", "secondary": ["mean_recall", "mean_precision"],
                   "description": "Is this image real or generated from its caption?"}],
        "splits": ["dev", "test"],
        # the generators the items name, with the day each became public (issue 37)
        "generators": generator_table(GENERATORS, modality="image"),
    }


def description(*, source: str | None = None) -> str:
    """The public page; ``source`` (a sentence naming the authors' data) turns it into the page
    of a pack built from that data, without the demo caveat."""
    return DESCRIPTION if source is None else release_description(DESCRIPTION, source=source)


def agreement(*, demo: bool = True) -> str:
    """The data-use agreement; ``demo=False`` for a pack built from the authors' data."""
    return AGREEMENT if demo else release_agreement(AGREEMENT)


opaque_id = functools.partial(opaque_id_of, "vc")  # opaque_id(*parts, seed=...)


def caption(subset: str, pair: int, seed: int) -> str:
    rng = np.random.default_rng([seed, 7, SUBSETS.index(subset), pair])
    pick = lambda words: words[int(rng.integers(0, len(words)))]  # noqa: E731
    if subset == "COCO_AI":
        return f"A {pick(_ADJ)} {pick(_NOUNS)} {pick(_PLACE)}."
    return f"{pick(_TOPICS)} {pick(_VERBS)} {pick(_OBJECTS)}."


def render(subset: str, pair: int, generator: str | None, seed: int) -> np.ndarray:
    """The real image of a caption (generator None) or one generator's image of it."""
    s = SUBSETS.index(subset)
    if generator is None:
        rng = np.random.default_rng([seed, 1, s, pair])
        if subset == "Twitter_AI" and rng.random() < 0.35:  # infographics and UI screenshots
            form = ("AD", "PI", "ML")[int(rng.integers(0, 3))]
            doc = images.document(rng, SIZE, SIZE, form=form, language="en")
            return images.add_sensor_noise(doc, rng, 2.0)
        return images.natural_image(rng, SIZE, SIZE)
    # generators share the caption's content seed, so their images depict the "same" prompt
    scene = images.natural_image(np.random.default_rng([seed, 2, s, pair]), SIZE, SIZE, noise=0.0)
    rng = np.random.default_rng([seed, 3, s, pair, list(LOOKS).index(generator)])
    return images.generator_look(scene, rng, LOOKS[generator])


def generate(out: Path, *, scale: str = "small", seed: int = 0) -> Path:
    """Write the VCT² demo pack to ``out`` (replaced); deterministic for ``seed``."""
    if scale not in COUNTS:
        raise ValueError(f"scale must be 'small' or 'large', got {scale!r}")
    rows = []  # (id, subset, pair, generator or None)
    for subset in SUBSETS:
        for pair in range(COUNTS[scale][subset]):
            for gen in (None, *SUBSET_GENERATORS[subset]):
                rows.append((opaque_id(subset, pair, gen, seed=seed), subset, pair, gen))
    rows.sort()
    pixels, vai, meta_vai = {}, {}, None
    if scale == "small":
        pixels = {r[0]: render(r[1], r[2], r[3], seed) for r in rows}
        feats = np.array([image_features(pixels[r[0]]) for r in rows])
        values, models = visual_ai_index(features=feats, is_real=[r[3] is None for r in rows],
                                         subset=[r[1] for r in rows])
        vai = {r[0]: float(v) for r, v in zip(rows, values)}
        meta_vai = {"features": list(FEATURES),
                    "subsets": {k: m.as_dict() for k, m in models.items()}}
    pack_meta = meta()
    if meta_vai:
        pack_meta["vai"] = meta_vai
    captions: dict[tuple[str, int], str] = {}
    with PackWriter(Path(out), pack_meta, description=DESCRIPTION, agreement=AGREEMENT) as w:
        for item_id, subset, pair, gen in rows:
            item = {"id": item_id, "task": "detection", "modality": "image"}
            if pixels:
                rel, path = w.media(f"images/{item_id}.png")
                path.write_bytes(images.png_bytes(pixels[item_id]))
                item["media"] = [rel]
            if (subset, pair) not in captions:
                captions[(subset, pair)] = caption(subset, pair, seed)
            truth = {"id": item_id, "label": "real" if gen is None else "fake", "subset": subset,
                     "pair": pair, "caption": captions[(subset, pair)]}
            if gen is not None:
                truth["generator"] = gen
            if item_id in vai:
                truth["vai"] = vai[item_id]
            key = f"{subset}:{pair}"  # a caption's images share split and part
            split = assign_split(key, seed=seed)
            if split == "test":
                truth["part"] = assign_part(key, seed=seed)
            w.add(split, item, truth)
    return Path(out)
