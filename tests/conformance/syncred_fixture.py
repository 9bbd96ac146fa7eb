"""A small SynCred-Bench release and judge answers in the authors' formats (thu-coai/Syncred-Bench).

Shared by the conformance adapter (`conformance/adapters/syncred.py`, which runs the authors'
``scripts/evaluate_mllm.py`` on it) and the pinned tests (``test_syncred_*.py``), so both see the
same bytes. Layout, as the authors' README and ``evaluate_mllm.py`` read it::

    SynCred_600/CONTENT_STYLE_INDEX.png     84 positives (6 forms x 7 styles x 2)
    SynCred_600/meta.json                   a list of rows (``load_metadata``'s list shape)
    FP450/...                               30 negatives, 14 named CONTENT_STYLE_INDEX
    FP450/meta.json                         ``{"data": [...]}`` (its dict shape)

Answers are the raw texts an MLLM judge returns to the authors' prompt (minified JSON, fenced JSON,
JSON after prose, ``"ai_generated"`` as a string), one per image and case.
"""
from __future__ import annotations

import io
import json
import random
from pathlib import Path

import numpy as np
from PIL import Image

FORMS = ("ML", "IN", "PI", "CR", "AD", "AM")
STYLES = ("NR", "SC", "CC", "FC", "SP", "CV", "OP")
CASES = ("perfect", "constant", "random", "adversarial", "ties")
POSITIVES = [f"{f}_{s}_{i}.png" for f in FORMS for s in STYLES for i in range(2)]
NEGATIVES = ([f"{FORMS[k % 6]}_{STYLES[k % 7]}_{50 + k}.png" for k in range(14)]
             + [f"real_{k:03d}.jpg" for k in range(16)])
#: SynCred_600/meta.json: the authors' row shape, names (not codes), extra keys they ignore
META_600 = [
    {"image": "ML_NR_0.png", "labels": {"artifact_type": "Institutional Notice",
                                        "style": "Fax Copy"}, "claim": "a notice", "lang": "zh"},
    {"image": "AD_CC_1.png", "category": "Credential Record", "style": "Cropped View"},
    {"file": "SynCred_600/PI_SP_0.png", "labels": {"style": "Scanned Copy"}},
    {"filename": "AM_OP_1.png", "category": "Assessment Material"},
    {"caption": "a row without an image name: skipped"},
]
#: FP450/meta.json: the {"data": [...]} shape; names the negatives' forms
META_FP450 = {"data": [
    {"image": "real_000.jpg", "category": "Media Layout", "style": "Screen Photograph"},
    {"image": "real_001.jpg", "labels": {"artifact_type": "Analytical Display"}},
    {"image": "IN_SC_51.png", "style": "Online Compression"},
]}


def _image_bytes(seed: int, fmt: str) -> bytes:
    rng = np.random.default_rng(seed)
    arr = rng.integers(0, 256, size=(12, 16, 3), dtype=np.uint8)
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format=fmt)
    return buf.getvalue()


def write_release(root: Path) -> Path:
    """Write the release under ``root`` (created); returns ``root``."""
    root = Path(root)
    for k, name in enumerate(POSITIVES):
        _write(root / "SynCred_600" / name, _image_bytes(k, "PNG"))
    for k, name in enumerate(NEGATIVES):
        _write(root / "FP450" / name, _image_bytes(1000 + k, "JPEG" if name.endswith(".jpg")
                                                   else "PNG"))
    _write(root / "SynCred_600" / "meta.json", json.dumps(META_600, ensure_ascii=False).encode())
    _write(root / "FP450" / "meta.json", json.dumps(META_FP450).encode())
    return root


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def answers(case: str) -> dict[str, str]:
    """The judge's raw answer text for every image (key: ``SynCred_600/<name>`` or
    ``FP450/<name>``) in ``case``."""
    if case not in CASES:
        raise ValueError(f"case must be one of {CASES}, got {case!r}")
    rng = random.Random(f"syncred-{case}")
    out = {}
    for folder, names, truth in (("SynCred_600", POSITIVES, True), ("FP450", NEGATIVES, False)):
        for k, name in enumerate(names):
            if case == "perfect":
                ai, conf = truth, 0.9
            elif case == "constant":
                ai, conf = True, 0.5
            elif case == "random":
                ai, conf = rng.random() < 0.5, round(rng.random(), 3)
            elif case == "adversarial":  # calls everything real, yet ranks every fake first:
                ai, conf = False, (0.8 if truth else 0.9)   # fakes score 0.2, reals 0.1
            else:  # ties: three confidences shared across both classes
                ai = (k % 3 == 0) if truth else (k % 5 == 0)
                conf = (0.6, 0.7, 0.8)[k % 3]
            out[f"{folder}/{name}"] = _text(ai, conf, k)
    return out


def _text(ai: bool, conf: float, k: int) -> str:
    body = {"ai_generated": ai, "confidence": conf, "reason": "layout looks rendered"}
    style = k % 4
    if style == 1:
        return "```json\n" + json.dumps(body) + "\n```"
    if style == 2:
        return "Here is my answer: " + json.dumps(body) + " Thanks."
    if style == 3:
        return json.dumps({**body, "ai_generated": "true" if ai else "false"})
    return json.dumps(body, separators=(",", ":"))


def score_of(prediction: str, confidence: float) -> float:
    """The spec's score from a judge's answer: confidence if it says AI-generated, else 1 - it."""
    return float(confidence) if prediction == "ai" else 1.0 - float(confidence)
