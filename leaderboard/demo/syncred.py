"""Demo pack for SynCred-Bench: procedural credible-form documents, real and "generated".

Small scale keeps every form x style combination in both languages (2 positives each: 168) plus
126 negatives spread over the same forms and styles, as 96 x 96 PNGs. Large scale has the paper's
600 positives (6 forms x 100, styles cycled, languages alternated) and the 450 FP450 negatives,
without media. Positives get the single generator's trait (`images.generator_look`) before the
circulation style is applied, as GPT Image 2 rendered both the form and the circulation cues.
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from leaderboard.core.benchmarks.syncred import FORMS, LANGUAGES, STYLES
from leaderboard.demo import images
from leaderboard.demo.writer import (
    PackWriter,
    assign_part,
    assign_split,
    release_agreement,
    release_description,
)
from leaderboard.demo.writer import opaque_id as opaque_id_of

SIZE = 96
#: the single generator's trait (smoother strokes, a faint up-sampling grid, no paper noise)
GPT_IMAGE_LOOK = images.Look(blur=0.7, grid=3.0, period=4, saturation=1.1)

DESCRIPTION = """# SynCred-Bench (demo pack)

SynCred-Bench measures whether detectors can tell AI-generated images of *credible documents and
interfaces* from real ones: news layouts, institutional notices, platform screenshots, credentials,
charts and exam sheets, passed through the ways such images circulate (scans, phone photos, fax,
screen photos, crops, recompression). Paper: *SynCred-Bench* (THU-CoAI); the real benchmark has
600 GPT-Image-2 positives (6 forms x 100, 7 circulation styles, Chinese and English) and FP450,
450 real negatives. **This demo pack is procedural**: documents are drawn with shapes and
text-like strokes, and the "generated" ones carry a synthetic trace. No image is real.

## Task
`detection` (image): for each image give `label` ("fake" = AI-generated / "real") and/or `score`
(confidence of fake in [0, 1]). Decisions come from `label` when given, else `score >= 0.5`.
You see the image only: form, style and language are hidden labels, as the paper's detectors got
only the image and a fixed instruction.

## Metrics
- **TPR(5)** (headline): the best TPR at an operating point with FPR <= 5% on the negatives.
  Operating points are "fake if score >= t" over your distinct scores, and never flag an image your
  decision calls real. Labels only: TPR if FPR <= 5%, else 0. Also TPR(1) and TPR(10).
- **TPR** = TP / (TP + FN) on positives; **FPR** = FP / (FP + TN) on negatives; **accuracy**.
- **PR-AUC**: trapezoidal area under the precision-recall curve; n/a unless every row has a score.
- TPR by form (ML media layout, IN institutional notice, PI platform interface, CR credential
  record, AD analytical display, AM assessment material), by style (NR native rendering, SC scanned,
  CC camera and FC fax copies, SP screen photograph, CV cropped view, OP online compression), by
  style group (DR = SC/CC/FC, OC = CV/OP, NR, SP) and by language (zh, en); FPR along the same
  axes (negatives carry forms and styles too).
- **TPR - mean** per style: the style's TPR minus the unweighted mean of the per-style TPRs.
- False-negative attribution from `rationale` needs a judge and is listed as pending.
- 95% bootstrap intervals (items resampled within class, fixed seed) on every number.
"""

AGREEMENT = """# SynCred-Bench data-use agreement (demo)

The images in this benchmark imitate credible documents and interfaces. They are released only to
evaluate and improve the detection of AI-generated images.

By requesting access you agree, personally, that you will:

1. use the data only for research on detecting synthetic or manipulated images;
2. not use any image, or anything derived from it, to deceive anyone, to impersonate a person,
   institution, platform or authority, for political manipulation, or for fraud;
3. not train generative models, or any model meant to produce or improve misleading content, on
   the data;
4. not redistribute the images or the prompts; share derived statistics and model predictions only;
5. keep the data secure, delete it when your project ends or when access is revoked, and report any
   misuse you become aware of to the benchmark maintainers.

Access is personal: each member of a team who uses the data signs this agreement. Access may
expire, and may be revoked if these terms are broken.
"""


def meta() -> dict:
    """The pack's meta.json (a fresh dict): shared with the pack builder, which fills in counts."""
    return {
        "key": "syncred", "title": "SynCred-Bench", "version": "1", "modalities": ["image"],
        "tasks": [{"key": "detection", "kind": "detection", "title": "AI-generated image detection",
                   "modalities": ["image"], "headline": "tpr_at_fpr_5",
                   "secondary": ["tpr", "pr_auc"],
                   "description": "Is this image of a document or interface AI-generated?"}],
        "splits": ["dev", "test"],
    }


def description(*, source: str | None = None) -> str:
    """The public page; ``source`` (a sentence naming the authors' data) turns it into the page
    of a pack built from that data, without the demo caveat."""
    return DESCRIPTION if source is None else release_description(DESCRIPTION, source=source)


def agreement(*, demo: bool = True) -> str:
    """The data-use agreement; ``demo=False`` for a pack built from the authors' data."""
    return AGREEMENT if demo else release_agreement(AGREEMENT)


opaque_id = functools.partial(opaque_id_of, "sc")  # opaque_id(*parts, seed=...)


def _plan(scale: str) -> list[tuple[str, str, str, str]]:
    """(label, form, style, language) of every item."""
    rows = []
    if scale == "small":
        for form in FORMS:
            for k, style in enumerate(STYLES):
                for lang in LANGUAGES:
                    rows += [("fake", form, style, lang)] * 2
                rows += [("real", form, style, LANGUAGES[(k + j) % 2]) for j in range(3)]
    else:
        for form in FORMS:
            rows += [("fake", form, STYLES[k % 7], LANGUAGES[(k // 7) % 2]) for k in range(100)]
        rows += [("real", FORMS[k % 6], STYLES[(k // 6) % 7], LANGUAGES[(k // 42) % 2])
                 for k in range(450)]
    return rows


def render(label: str, form: str, style: str, language: str, rng: np.random.Generator) -> np.ndarray:
    """One image: a document of ``form``; positives get the generator trait, negatives paper noise;
    then the circulation ``style``."""
    doc = images.document(rng, SIZE, SIZE, form=form, language=language)
    if label == "fake":
        doc = images.generator_look(doc, rng, GPT_IMAGE_LOOK)
    else:
        doc = images.add_sensor_noise(doc, rng, 3.0)
    return images.circulate(doc, rng, style=style)


def generate(out: Path, *, scale: str = "small", seed: int = 0) -> Path:
    """Write the SynCred-Bench demo pack to ``out`` (replaced); deterministic for ``seed``."""
    if scale not in ("small", "large"):
        raise ValueError(f"scale must be 'small' or 'large', got {scale!r}")
    pack_meta = meta()
    rows = []
    for n, (label, form, style, lang) in enumerate(_plan(scale)):
        key = f"{label}:{form}:{style}:{lang}:{n}"
        rows.append((opaque_id(key, seed=seed), key, label, form, style, lang, n))
    rows.sort()  # id order: the file order says nothing about the class
    with PackWriter(Path(out), pack_meta, description=DESCRIPTION, agreement=AGREEMENT) as w:
        for item_id, key, label, form, style, lang, n in rows:
            item = {"id": item_id, "task": "detection", "modality": "image"}
            if scale == "small":
                rel, path = w.media(f"images/{item_id}.png")
                rng = np.random.default_rng([seed, n])
                path.write_bytes(images.png_bytes(render(label, form, style, lang, rng)))
                item["media"] = [rel]
            truth = {"id": item_id, "label": label, "form": form, "style": style, "language": lang}
            split = assign_split(key, seed=seed)
            if split == "test":
                truth["part"] = assign_part(key, seed=seed)
            w.add(split, item, truth)
    return Path(out)
