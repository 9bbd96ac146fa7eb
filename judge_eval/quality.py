"""How well the offline judges map free text onto TriDF's artifacts, on an independent set.

Run from the repository root (CPU; the MiniLM judge loads its packaged model):

    .venv/bin/python -m judge_eval.quality --part heldout [--judges rules local-minilm]
    .venv/bin/python -m judge_eval.quality --part heldout --judges rules@1 rules \\
        local-minilm@1 local-minilm --markdown --save quality.json
    .venv/bin/python -m judge_eval.quality --part heldout --markdown   # docs/judges.md tables
    .venv/bin/python -m judge_eval.quality --part dev --errors rules    # dev only

The set is `judge_eval/evalset/evalset.jsonl` (its README says how it was written: by hand,
independently of the judges' word lists, labelled with the artifacts each response claims and the
ones it denies). Judges are developed on the ``dev`` part only; ``heldout`` is for reporting. The
script refuses to list individual errors on ``heldout`` so that nobody tunes on it by accident.

Reported per judge, per modality and overall (each response mapped with its modality's candidate
artifacts, as the server does):
- micro precision / recall / F1 over (response, artifact) pairs, with 95% bootstrap CIs
  (responses resampled, 1,000 draws, seed 0), and per artifact;
- denied-and-mapped: share of the artifacts a response explicitly denies or calls fine that the
  judge maps anyway (target <= 5%);
- empty-kept-empty: share of the responses that claim nothing that the judge maps to nothing
  (target >= 95%);
- the bias the judge induces on TriDF's hallucination metrics: taking each response's labels as
  its annotation Y (a perfect judge gives Cover 1, CHAIR 0, F0.5 1), the mean Cover, CHAIR and
  F0.5 over responses with |Y| > 0, and bias = 1 - mean F0.5 (target <= 0.10).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from leaderboard.core.metrics.hallucination import artifact_scores
from leaderboard.core.taxonomy import artifacts_for
from leaderboard.judges import get_judge

EVALSET = Path(__file__).resolve().parent / "evalset" / "evalset.jsonl"
MODALITIES = ("image", "video", "audio")
DRAWS = 1000


def load(part: str | None = None, path: Path = EVALSET) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [r for r in rows if part in (None, "all") or r["part"] == part]


def map_rows(judge, rows: list[dict]) -> list[frozenset[str]]:
    """The judge's mapping of every row, with the row's modality's candidates."""
    out: list[frozenset[str] | None] = [None] * len(rows)
    for modality in MODALITIES:
        idx = [i for i, r in enumerate(rows) if r["modality"] == modality]
        if not idx:
            continue
        mapped = judge.map_artifacts([rows[i]["response"] for i in idx],
                                     candidates=list(artifacts_for(modality)))
        for i, m in zip(idx, mapped, strict=True):
            out[i] = frozenset(m)
    return out


def _counts(rows, mapped, keys) -> np.ndarray:
    """Per row: tp, fp, fn over `keys`, denied labels, denied-and-mapped, empty, empty-kept."""
    c = np.zeros((len(rows), 7))
    for i, (r, m) in enumerate(zip(rows, mapped, strict=True)):
        y, d, m = set(r["artifacts"]) & keys, set(r["denied"]) & keys, m & keys
        c[i] = (len(m & y), len(m - y), len(y - m), len(d), len(m & d), not r["artifacts"],
                not r["artifacts"] and not m)
    return c


def _prf(c: np.ndarray) -> tuple[float, float, float]:
    tp, fp, fn = c[..., 0], c[..., 1], c[..., 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        p = tp / (tp + fp)
        r = tp / (tp + fn)
        f = 2 * tp / (2 * tp + fp + fn)
    return p, r, f


def summarize(rows, mapped, keys: set[str], *, seed: int = 0) -> dict:
    """Micro P/R/F1 with bootstrap CIs, denied-and-mapped and empty-kept-empty rates."""
    c = _counts(rows, mapped, keys)
    total = c.sum(axis=0)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(rows), size=(DRAWS, len(rows)))
    boot = c[draws].sum(axis=1)
    out = {"n": len(rows)}
    for name, point, dist in zip(("precision", "recall", "f1"), _prf(total), _prf(boot)):
        lo, hi = np.nanpercentile(dist, [2.5, 97.5]) if np.isfinite(dist).any() else (None, None)
        out[name] = {"value": None if np.isnan(point) else float(point),
                     "ci": [None if lo is None else float(lo), None if hi is None else float(hi)]}
    out["denied_mapped"] = float(total[4] / total[3]) if total[3] else None
    out["denied_n"] = int(total[3])
    out["empty_kept_empty"] = float(total[6] / total[5]) if total[5] else None
    out["empty_n"] = int(total[5])
    return out


def per_artifact(rows, mapped, keys) -> dict[str, dict]:
    out = {}
    for key in sorted(keys):
        c = _counts(rows, mapped, {key}).sum(axis=0)
        p, r, f = _prf(c)
        out[key] = {"precision": None if np.isnan(p) else float(p),
                    "recall": None if np.isnan(r) else float(r),
                    "f1": None if np.isnan(f) else float(f), "support": int(c[0] + c[2]),
                    "denied": int(c[3]), "denied_mapped": int(c[4])}
    return out


def hallucination_bias(rows, mapped) -> dict:
    """Cover / CHAIR / F0.5 when each response's labels are its annotation (perfect judge: 1/0/1)."""
    keys = sorted({k for m in MODALITIES for k in artifacts_for(m)})
    col = {k: j for j, k in enumerate(keys)}
    use = [i for i, r in enumerate(rows) if r["artifacts"]]
    y = np.zeros((len(use), len(keys)), dtype=bool)
    pred = np.zeros_like(y)
    for row, i in enumerate(use):
        for k in rows[i]["artifacts"]:
            y[row, col[k]] = True
        for k in mapped[i]:
            pred[row, col[k]] = True
    s = artifact_scores(predicted=pred, truth=y, answered=np.ones(len(use), dtype=bool))
    f05 = float(np.nanmean(s.f05))
    return {"n": len(use), "cover": float(np.nanmean(s.cover)), "chair": float(np.nanmean(s.chair)),
            "f05": f05, "bias": 1.0 - f05}


def report(judge_name: str, rows: list[dict]) -> dict:
    judge = get_judge(judge_name)
    mapped = map_rows(judge, rows)
    out = {"judge": judge.identity, "modalities": {}}
    every: set[str] = set()
    for m in MODALITIES:
        idx = [i for i, r in enumerate(rows) if r["modality"] == m]
        keys = set(artifacts_for(m))
        every |= keys
        sub_rows, sub_mapped = [rows[i] for i in idx], [mapped[i] for i in idx]
        out["modalities"][m] = {**summarize(sub_rows, sub_mapped, keys),
                                "per_artifact": per_artifact(sub_rows, sub_mapped, keys),
                                "hallucination": hallucination_bias(sub_rows, sub_mapped)}
    out["overall"] = {**summarize(rows, mapped, every),
                      "hallucination": hallucination_bias(rows, mapped)}
    return out


def _fmt(v, pct=False) -> str:
    if v is None:
        return "n/a"
    return f"{100 * v:.1f}%" if pct else f"{v:.3f}"


def _ci(d: dict) -> str:
    lo, hi = d["ci"]
    return f"{_fmt(d['value'])} [{_fmt(lo)}, {_fmt(hi)}]"


def print_text(rep: dict) -> None:
    print(f"== {rep['judge']} ==")
    for name, s in [*rep["modalities"].items(), ("overall", rep["overall"])]:
        h = s["hallucination"]
        print(f"{name:<8} n={s['n']:<4} P={_ci(s['precision'])} R={_ci(s['recall'])} "
              f"F1={_ci(s['f1'])} denied-mapped={_fmt(s['denied_mapped'], True)} "
              f"(of {s['denied_n']}) empty-kept={_fmt(s['empty_kept_empty'], True)} "
              f"(of {s['empty_n']}) | Cover={h['cover']:.3f} CHAIR={h['chair']:.3f} "
              f"F0.5={h['f05']:.3f} bias={h['bias']:.3f}")


def print_markdown(reps: list[dict], part: str) -> None:
    print(f"Micro averages on the `{part}` part (95% bootstrap CIs over responses):\n")
    print("| judge | modality | n | precision | recall | F1 | denied mapped | empty kept empty "
          "| Cover | CHAIR | F0.5 | F0.5 bias |")
    print("|---|---|---:|---|---|---|---:|---:|---:|---:|---:|---:|")
    for rep in reps:
        for name, s in [*rep["modalities"].items(), ("overall", rep["overall"])]:
            h = s["hallucination"]
            print(f"| {rep['judge']} | {name} | {s['n']} | {_ci(s['precision'])} | "
                  f"{_ci(s['recall'])} | {_ci(s['f1'])} | {_fmt(s['denied_mapped'], True)} | "
                  f"{_fmt(s['empty_kept_empty'], True)} | {h['cover']:.3f} | {h['chair']:.3f} | "
                  f"{h['f05']:.3f} | {h['bias']:.3f} |")
    for m in MODALITIES:
        print(f"\n**{m}** (per artifact: support / F1 per judge; denied = labels denied, "
              "mapped anyway)\n")
        print("| artifact | support | denied | " + " | ".join(
            f"{r['judge']} P / R / F1 / denied mapped" for r in reps) + " |")
        print("|---|---:|---:|" + "---|" * len(reps))
        keys = reps[0]["modalities"][m]["per_artifact"]
        for k, v in keys.items():
            cells = []
            for r in reps:
                a = r["modalities"][m]["per_artifact"][k]
                cells.append(f"{_fmt(a['precision'])} / {_fmt(a['recall'])} / {_fmt(a['f1'])} / "
                             f"{a['denied_mapped']}")
            print(f"| {k} | {v['support']} | {v['denied']} | " + " | ".join(cells) + " |")


def print_errors(judge_name: str, rows: list[dict]) -> None:
    judge = get_judge(judge_name)
    for r, m in zip(rows, map_rows(judge, rows), strict=True):
        y = set(r["artifacts"])
        missed, extra = sorted(y - m), sorted(m - y)
        if missed or extra:
            print(f"--- {r['id']} ({r['modality']}) missed={missed} extra={extra} "
                  f"denied={r['denied']}\n{r['response']}\n")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--part", choices=("dev", "heldout", "all"), default="heldout")
    ap.add_argument("--judges", nargs="+", default=["rules", "local-minilm"])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--errors", metavar="JUDGE", help="list the judge's errors (dev part only)")
    ap.add_argument("--save", metavar="PATH", help="also write the reports as JSON to PATH")
    args = ap.parse_args(argv)
    if args.errors:
        if args.part != "dev":
            sys.exit("--errors lists individual responses: only on --part dev (never tune on "
                     "heldout)")
        print_errors(args.errors, load("dev"))
        return
    rows = load(args.part)
    reps = [report(name, rows) for name in args.judges]
    if args.save:
        Path(args.save).write_text(json.dumps({"part": args.part, "reports": reps}, indent=1),
                                   encoding="utf-8")
    if args.json:
        print(json.dumps(reps, indent=1))
    elif args.markdown:
        print_markdown(reps, args.part)
    else:
        for rep in reps:
            print_text(rep)


if __name__ == "__main__":
    main()
