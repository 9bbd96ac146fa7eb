"""The measured quality of the offline artifact judges, as shipped (issue 18).

``data/quality_heldout.json`` is a summary of ``judge_eval/quality.py --part heldout
--save``: per judge identity and modality, micro precision / recall / F1 with 95% bootstrap CIs on
the held-out part of the independent evaluation set (``judge_eval/evalset``), the share of
denied artifacts mapped anyway, and the bias induced on TriDF's F0.5. Benchmark pages that judge
free text show it next to the boards; ``docs/judges.md`` has the per-artifact tables.
`summarize` builds the file from a saved report (the command is in the file).
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

PATH = Path(__file__).resolve().parent / "data" / "quality_heldout.json"
COMMAND = ("python -m judge_eval.quality --part heldout --judges rules@1 rules@2 rules "
           "local-minilm@1 local-minilm@2 local-minilm hybrid-minilm --save report.json; "
           "python -m leaderboard.judges.quality report.json")


def summarize(saved: dict) -> dict:
    """The page's summary of a `judge_quality --save` report (held-out part only)."""
    if saved.get("part") != "heldout":
        raise ValueError("the shipped summary reports the heldout part only")
    out = {"part": "heldout", "command": COMMAND, "judges": {}}
    for rep in saved["reports"]:
        rows = {}
        for name, s in [*rep["modalities"].items(), ("overall", rep["overall"])]:
            rows[name] = {"n": s["n"], "precision": s["precision"], "recall": s["recall"],
                          "f1": s["f1"], "denied_mapped": s["denied_mapped"],
                          "empty_kept_empty": s["empty_kept_empty"],
                          "f05_bias": round(s["hallucination"]["bias"], 4)}
        out["judges"][rep["judge"]] = rows
    return out


@lru_cache(maxsize=1)
def load_summary() -> dict | None:
    """The shipped summary, or None when the file is absent (a trimmed install)."""
    try:
        return json.loads(PATH.read_text(encoding="utf-8"))
    except OSError:
        return None


def main(argv: list[str] | None = None) -> None:
    import sys
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.exit("usage: python -m leaderboard.judges.quality REPORT.json")
    summary = summarize(json.loads(Path(args[0]).read_text(encoding="utf-8")))
    PATH.write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {PATH}")


if __name__ == "__main__":
    main()
