"""Pinned outputs of the rules mapping's versions on the whole evaluation set.

`rules@2` and `rules@3` share one engine (`leaderboard.judges.mapping`) whose versioned
behaviour is data (`mapping.versions`). What keeps an old version reproducible is this file's
record: every evaluation-set row mapped by each pinned version, with its modality's candidates
(as the server maps), plus a digest of the clauses `claim_clauses` keeps (the MiniLM judges
`local-minilm@2`/`@3` embed `rules@2`'s). `tests/judges/test_judges_pinned.py` asserts that the
engine still gives exactly these outputs.

The record was written from the code as it stood *before* the engine was merged (when
`rules@2` was a copy of the code in ``mapping_v2/``), so the test proves the merge changed
nothing. Rows are keyed by id and carry a digest of their text: rows added to the evaluation set
later are simply not pinned, and an edited row is reported rather than silently re-pinned.

    .venv/bin/python -m judge_eval.pinned --check      # what the test does, from the shell
    .venv/bin/python -m judge_eval.pinned --write      # only for a NEW version (adds its column)
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from leaderboard.core.taxonomy import artifacts_for

EVALSET = Path(__file__).resolve().parent / "evalset" / "evalset.jsonl"
PINNED = Path(__file__).resolve().parent / "pinned_rules.jsonl"
VERSIONS = ("2", "3")


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def outputs(row: dict, versions=VERSIONS) -> dict:
    """What each version of the engine gives for one evaluation-set row."""
    from leaderboard.judges.mapping import engine_for
    keys = list(artifacts_for(row["modality"]))
    out = {"id": row["id"], "text": digest(row["response"])}
    for v in versions:
        engine = engine_for(v)
        out[f"rules@{v}"] = sorted(engine.map_response(row["response"], keys))
        out[f"clauses@{v}"] = digest("\x1f".join(engine.claim_clauses(row["response"], keys)))
    return out


def load_rows(path: Path = EVALSET) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def load_pinned(path: Path = PINNED) -> dict[str, dict]:
    return {r["id"]: r for r in load_rows(path)}


def check(rows: list[dict], pinned: dict[str, dict], versions=VERSIONS) -> list[str]:
    """Differences between the engine's outputs and the pinned ones, one line each."""
    problems = []
    for row in rows:
        want = pinned.get(row["id"])
        if want is None:
            continue
        if want["text"] != digest(row["response"]):
            problems.append(f"{row['id']}: the row's text changed since it was pinned")
            continue
        got = outputs(row, versions)
        for field in got:
            if field in want and got[field] != want[field]:
                problems.append(f"{row['id']} {field}: pinned {want[field]}, now {got[field]}")
    return problems


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    rows = load_rows()
    if args.write:
        PINNED.write_text("".join(json.dumps(outputs(r)) + "\n" for r in rows), encoding="utf-8")
        print(f"pinned {len(rows)} rows for rules@{', rules@'.join(VERSIONS)} in {PINNED}")
        return
    pinned = load_pinned()
    problems = check(rows, pinned)
    n = sum(r["id"] in pinned for r in rows)
    print("\n".join(problems) or f"all pinned outputs reproduced ({n} of the {len(rows)} rows "
          "are pinned)")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
