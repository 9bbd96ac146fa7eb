"""Conformance adapter: VCT² (Hasnat79/VCT_2) against the authors' own code.

``compare(authors_dir, work)`` checks two things.

1. Visual AI Index features. The seven features of ``vai_scripts/feature_extraction_agid.py``
   (``calculate_texture_complexity``, ``..._color_distribution_consistency``,
   ``..._object_coherence``, ``..._contextual_relevance``, ``..._image_smoothness``,
   ``..._image_sharpness``, ``..._image_contrast``), loaded from their source without running the
   script's folder walk, on each image as their ``process_folder_images`` reads it
   (``cv2.imread``), against ours (`leaderboard.features.vai.features_from_files`, which decodes
   with Pillow). Images: real images found in the authors' checkouts beside ``authors_dir`` (the
   repositories' figures and photographs, at most `MAX_REAL` of them, each under `MAX_BYTES`),
   (capped at `MAX_PIXELS`), and the fixture's images. Rows ``vai.<feature>``, slice
   ``{"image": ...}``.
2. Detection metrics. Our pack is built from the fixture's tables (`tests/conformance/
   vct2_fixture.py`, the Hugging Face shape their download scripts read); for each case of
   detector scores, ours come from `leaderboard.core.scoring.score_predictions`; theirs from
   ``calculate_metrics(y_true, y_pred, 0.5)`` of
   ``detection_scripts/universal_fake_detect_validate_sd35_new.py`` (r_acc, f_acc, acc,
   precision, recall) and ``sklearn.metrics.average_precision_score`` (which that script's
   ``validate`` calls for AP), per subset x generator: that generator's fakes with the subset's
   reals, as the paper's Tables 2-3. Subset and overall means are the mean of their cells.
   Their decision is ``score > 0.5``; ours is the submitted ``label``, else the same
   ``score > 0.5``. The cases with ties (``ties``: 0.25 / 0.5 / 0.75; ``all_half``: every
   score exactly 0.5) give scores only, so a tie is decided by each side's own rule.

The authors' v1 code scores images with an "ADI" (``agid_score_calculation.py``), not the paper's
logistic VAI; there is nothing of theirs to compare the VAI fit with.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # loaded by path or as a module
    sys.path.insert(0, str(ROOT))

from conformance.adapters._authors_code import load_functions  # noqa: E402

NAME = "vct2"
REPO = "Hasnat79/VCT_2"
FEATURE_SCRIPT = "vai_scripts/feature_extraction_agid.py"
METRIC_SCRIPT = "detection_scripts/universal_fake_detect_validate_sd35_new.py"
#: our feature name -> the authors' function (all take the BGR image; texture also the path)
FEATURE_FUNCS = {
    "texture_complexity": "calculate_texture_complexity",
    "color_consistency": "calculate_color_distribution_consistency",
    "object_coherence": "calculate_object_coherence",
    "contextual_relevance": "calculate_contextual_relevance",
    "smoothness": "calculate_image_smoothness",
    "sharpness": "calculate_image_sharpness",
    "contrast": "calculate_image_contrast",
}
MAX_REAL, MAX_PIXELS = 12, 4_000_000  # a poster-sized figure would take minutes, not seconds
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")


def _pixels(path: Path) -> int:
    from PIL import Image

    try:
        with Image.open(path) as im:
            return im.size[0] * im.size[1]
    except OSError:
        return 0


def real_images(authors_dir: Path) -> list[Path]:
    """Images of the authors' checkouts (this one first, then its siblings), sorted, capped."""
    found = []
    for repo in [authors_dir] + sorted(p for p in authors_dir.parent.iterdir()
                                       if p.is_dir() and p != authors_dir):
        found += sorted(p for p in repo.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES
                        and p.is_file() and ".git" not in p.parts
                        and 0 < _pixels(p) <= MAX_PIXELS)
    return found[:MAX_REAL]


def _feature_rows(authors_dir: Path, images: list[tuple[str, Path]]) -> list[dict]:
    import cv2

    from leaderboard.features.vai import FEATURES, features_from_files

    theirs = load_functions(authors_dir, FEATURE_SCRIPT, set(FEATURE_FUNCS.values()))
    out = []
    for label, path in images:
        bgr = cv2.imread(str(path))  # as their process_folder_images reads a file
        if bgr is None:
            continue  # OpenCV cannot read it: their script would fail on it too
        ours = dict(zip(FEATURES, features_from_files([path])[0]))
        for feature, func in FEATURE_FUNCS.items():
            fn = getattr(theirs, func)
            value = fn(bgr, str(path)) if feature == "texture_complexity" else fn(bgr)
            out.append({"benchmark": NAME, "case": "vai features", "metric": f"vai.{feature}",
                        "slice": {"image": label}, "ours": float(ours[feature]),
                        "authors": float(value), "source": f"{FEATURE_SCRIPT}: {func}"})
    return out


def compare(authors_dir: Path, work: Path) -> list[dict]:
    import json

    import numpy as np
    from sklearn.metrics import average_precision_score

    from leaderboard.builders import vct2 as builder
    from leaderboard.core.packs import load_pack
    from leaderboard.core.scoring import score_predictions
    from tests.conformance.vct2_fixture import CASES, cells, item_id, scores, write_release

    authors_dir, work = Path(authors_dir), Path(work)
    fixture = cells()
    shown = []
    for k, (subset, r, col, _, data) in enumerate(fixture[:: 9]):
        path = work / "images" / f"{subset}_{r}_{col}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        shown.append((f"fixture:{path.name}", path))
    real = [(p.relative_to(authors_dir.parent).as_posix(), p) for p in real_images(authors_dir)]
    out = _feature_rows(authors_dir, real + shown)

    theirs = load_functions(authors_dir, METRIC_SCRIPT, {"calculate_metrics"})
    release = write_release(work / "release")
    builder.build(release, work / "pack", dev_fraction=0.0)
    pack = load_pack(work / "pack")
    generator = builder.GENERATOR_COLUMN
    for case in CASES:
        preds = work / f"{case}.jsonl"
        case_scores = scores(case)
        with open(preds, "w", encoding="utf-8") as fh:
            for (_, _, _, _, data), (s, label) in zip(fixture, case_scores):
                fh.write(json.dumps({"id": item_id(data), "score": s,
                                     **({"label": label} if label else {})}) + "\n")
        recs = {(r.metric, tuple(sorted(r.slice.items()))): r.value
                for r in score_predictions(pack, "test", preds, n_resamples=20).parts["all"]}
        cell_values: dict[str, list[dict]] = {}
        for subset in ("COCO_AI", "Twitter_AI"):
            reals = [s for (sub, _, _, fake, _), (s, _) in zip(fixture, case_scores)
                     if sub == subset and not fake]
            columns = sorted({c for sub, _, c, fake, _ in fixture if sub == subset and fake})
            for col in columns:
                fakes = [s for (sub, _, c, _, _), (s, _) in zip(fixture, case_scores)
                         if sub == subset and c == col]
                y_true = np.array([1] * len(fakes) + [0] * len(reals))
                y_pred = np.array(fakes + reals, dtype=np.float64)
                r_acc, f_acc, acc, precision, recall, _ = theirs.calculate_metrics(
                    y_true, y_pred, 0.5)
                values = {"accuracy": acc, "precision": precision, "recall": recall,
                          "f_acc": f_acc, "r_acc": r_acc,
                          "average_precision": average_precision_score(y_true, y_pred)}
                cell_values.setdefault(subset, []).append(values)
                sl = (("generator", generator[col]), ("subset", subset))
                for metric, value in values.items():
                    src = ("sklearn average_precision_score, as validate() calls it"
                           if metric == "average_precision" else f"{METRIC_SCRIPT}: "
                           "calculate_metrics(y_true, y_pred, 0.5)")
                    out.append({"benchmark": NAME, "case": case, "metric": metric,
                                "slice": dict(sl), "ours": recs.get((metric, sl)),
                                "authors": float(value), "source": src})
        for metric in ("accuracy", "precision", "recall"):
            for subset, cells_ in cell_values.items():
                out.append({"benchmark": NAME, "case": case, "metric": f"mean_{metric}",
                            "slice": {"subset": subset},
                            "ours": recs.get((f"mean_{metric}", (("subset", subset),))),
                            "authors": float(np.mean([c[metric] for c in cells_])),
                            "source": "mean of calculate_metrics over the subset's generators"})
            every = [c[metric] for cs in cell_values.values() for c in cs]
            out.append({"benchmark": NAME, "case": case, "metric": f"mean_{metric}", "slice": {},
                        "ours": recs.get((f"mean_{metric}", ())),
                        "authors": float(np.mean(every)),
                        "source": "mean of calculate_metrics over every subset x generator"})
    return out
