"""Run the authors' scorers and ours on the same predictions; print where they differ.

Usage (from the repo root)::

    python conformance/check.py --authors DIR [--only NAME] [--json]

``DIR`` holds one checkout per authors' repository, named ``<owner>+<repo>``::

    mkdir -p authors
    git clone https://github.com/thu-coai/Syncred-Bench authors/thu-coai+Syncred-Bench
    git clone https://github.com/Hasnat79/VCT_2 authors/Hasnat79+VCT_2
    git clone https://github.com/opendatalab/LOKI authors/opendatalab+LOKI
    git clone https://github.com/j1anglin/TriDF authors/j1anglin+TriDF
    git clone https://github.com/j1anglin/TRIDENT_MM26MGC authors/j1anglin+TRIDENT_MM26MGC

(or, from a bare mirror, ``mkdir -p authors/<owner>+<repo> && git --git-dir=MIRROR archive HEAD
| tar -x -C authors/<owner>+<repo>``; pin a commit with ``git -C authors/<owner>+<repo> checkout
<sha>`` to re-check an older version). Submodules are not needed.

Adapters are the modules of ``conformance/adapters/`` whose name does not start with "_";
each exposes ``NAME``, ``REPO`` ("owner/repo") and ``compare(authors_dir, work) -> list[dict]``
returning rows ``{"benchmark", "case", "metric", "slice", "ours", "authors"}`` (and optionally
``"source"``: the authors' function, or the reference, the "authors" value comes from). ``work``
is a fresh temporary folder per adapter.

A row matches when both values are numbers within 1e-9 (absolute), both are n/a (None or NaN), or
both are equal non-numbers (strings, lists, booleans; a boolean never equals a number). n/a on
one side only is a mismatch. The table lists
every row; the last line counts the mismatches. Exit status: 0 all match, 1 any mismatch, 2 an
adapter failed, a checkout is missing for ``--only``, or nothing ran.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import math
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

LIB = ROOT / "conformance" / "adapters"
TOLERANCE = 1e-9
ROW_KEYS = ("benchmark", "case", "metric", "slice", "ours", "authors")


def discover(lib: Path = LIB) -> list:
    """The adapter modules of ``lib`` (by file name; helpers start with "_"), sorted by NAME."""
    lib = Path(lib)
    modules = []
    for path in sorted(lib.glob("*.py")):
        if path.name.startswith("_"):
            continue
        # ours as conformance.adapters.<name> (adapters import their helpers so); any
        # other folder (a test's) by path
        module = (importlib.import_module(f"conformance.adapters.{path.stem}")
                  if lib.resolve() == LIB.resolve() else _load_path(path))
        missing = [a for a in ("NAME", "REPO", "compare") if not hasattr(module, a)]
        if missing:
            raise SystemExit(f"error: adapter {path} lacks {missing}")
        modules.append(module)
    return sorted(modules, key=lambda m: m.NAME)


def _load_path(path: Path):
    spec = importlib.util.spec_from_file_location(f"conformance_adapter_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def checkout_dir(authors: Path, repo: str) -> Path:
    """Where ``owner/repo``'s checkout lives under ``authors``: ``<owner>+<repo>``."""
    return Path(authors) / repo.replace("/", "+")


def _is_na(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check(row: dict, tolerance: float = TOLERANCE) -> dict:
    """``row`` with ``diff`` (|ours - authors| for two numbers, else None) and ``match``."""
    ours, theirs = row.get("ours"), row.get("authors")
    diff = None
    if _is_na(ours) or _is_na(theirs):
        match = _is_na(ours) and _is_na(theirs)
    elif _number(ours) and _number(theirs):
        diff = abs(float(ours) - float(theirs))
        match = diff <= tolerance
    else:  # texts, lists, booleans: equal and of one kind (True is not the score 1.0)
        match = ours == theirs and isinstance(ours, bool) == isinstance(theirs, bool)
    return {**row, "diff": diff, "match": bool(match)}


def _slice_text(sl) -> str:
    if not sl:
        return "-"
    if isinstance(sl, dict):
        return ",".join(f"{k}={v}" for k, v in sorted(sl.items()))
    return str(sl)


def _value_text(v) -> str:
    if _is_na(v):
        return "n/a"
    if _number(v):
        return f"{float(v):.12g}"
    return json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v


def table(rows: list[dict]) -> str:
    """The per-metric diff table (one line per row; mismatches marked)."""
    head = ("benchmark", "case", "metric", "slice", "ours", "authors", "diff", "")
    body = [(r.get("benchmark", ""), str(r.get("case", "")), str(r.get("metric", "")),
             _slice_text(r.get("slice")), _value_text(r.get("ours")),
             _value_text(r.get("authors")),
             "" if r["diff"] is None else f"{r['diff']:.2g}",
             "ok" if r["match"] else "MISMATCH") for r in rows]
    widths = [min(48, max([len(h)] + [len(b[i]) for b in body])) for i, h in enumerate(head)]
    fmt = "  ".join(f"{{:{w}.{w}}}" for w in widths)
    return "\n".join([fmt.format(*head), fmt.format(*("-" * w for w in widths))]
                     + [fmt.format(*b) for b in body])


def run(authors: Path, *, only: str | None = None, lib: Path = LIB,
        log=lambda line: print(line, file=sys.stderr)) -> tuple[list[dict], list[str], int]:
    """Run the adapters; returns (checked rows, problems, adapters run)."""
    adapters = discover(lib)
    if only is not None:
        adapters = [a for a in adapters if a.NAME == only]
        if not adapters:
            return [], [f"no adapter named {only!r}; known: {[a.NAME for a in discover(lib)]}"], 0
    rows, problems, ran = [], [], 0
    for adapter in adapters:
        where = checkout_dir(authors, adapter.REPO)
        if not where.exists():
            msg = (f"{adapter.NAME}: no checkout at {where} (git clone "
                   f"https://github.com/{adapter.REPO} {where})")
            if only is not None:
                problems.append(msg)
            else:
                log(f"skipped {msg}")
            continue
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix=f"conformance-{adapter.NAME}-") as work:
            try:
                got = adapter.compare(where, Path(work))
            except Exception:  # noqa: BLE001 - any adapter failure is reported, not raised
                problems.append(f"{adapter.NAME}: the adapter failed:\n{traceback.format_exc()}")
                continue
        ran += 1
        for r in got:
            bad = [k for k in ROW_KEYS if k not in r]
            if bad:
                problems.append(f"{adapter.NAME}: a row lacks {bad}: {r!r}"[:500])
                break
            rows.append(check(r))
        log(f"{adapter.NAME}: {len(got)} rows in {time.monotonic() - started:.1f} s")
    return rows, problems, ran


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--authors", required=True, type=Path,
                    help="folder of the authors' checkouts, one per repository: <owner>+<repo>")
    ap.add_argument("--only", help="run one adapter (its NAME: loki, syncred, tridf, ...)")
    ap.add_argument("--json", action="store_true", help="print the rows and the summary as JSON")
    ap.add_argument("--adapters", type=Path, default=LIB, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if not args.authors.is_dir():
        print(f"error: --authors {args.authors} is not a folder", file=sys.stderr)
        return 2
    rows, problems, ran = run(args.authors, only=args.only, lib=args.adapters)
    mismatches = sum(not r["match"] for r in rows)
    if args.json:
        print(json.dumps({"rows": rows, "mismatches": mismatches, "rows_compared": len(rows),
                          "adapters_run": ran, "problems": problems}, ensure_ascii=False,
                         default=str))
    else:
        if rows:
            print(table(rows))
        print(f"{mismatches} mismatches in {len(rows)} rows from {ran} adapters"
              + (f"; {len(problems)} problems" if problems else ""))
    for p in problems:
        print(f"error: {p}", file=sys.stderr)
    if problems or ran == 0:
        if ran == 0 and not problems:
            print("error: no adapter ran (no checkouts under --authors?)", file=sys.stderr)
        return 2
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
