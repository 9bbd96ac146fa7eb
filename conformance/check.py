"""Run the authors' scorers and ours on the same predictions; print where they differ.

Usage (from the repo root)::

    python conformance/check.py --authors DIR [--only NAME] [--json] [--allow-skip]
    python conformance/check.py --authors-loki PATH --authors-vct2 PATH ...   # one per repo

``DIR`` holds one checkout per authors' repository, as ``git clone`` names them (``LOKI``,
``TriDF``, ``TRIDENT_MM26MGC``, ``Syncred-Bench``, ``VCT_2``) or as ``<owner>+<repo>``::

    mkdir -p authors && cd authors
    git clone https://github.com/opendatalab/LOKI
    git clone https://github.com/j1anglin/TriDF
    git clone https://github.com/j1anglin/TRIDENT_MM26MGC
    git clone https://github.com/thu-coai/Syncred-Bench
    git clone https://github.com/Hasnat79/VCT_2

(or, from a bare mirror, ``mkdir -p authors/LOKI && git --git-dir=MIRROR archive HEAD | tar -x
-C authors/LOKI``; pin a commit with ``git -C authors/LOKI checkout <sha>`` to re-check an older
version). ``--authors-<name> PATH`` (``<name>`` an adapter's NAME) points at one checkout
anywhere and wins over ``--authors``. Submodules are not needed.

Adapters are the modules of ``conformance/adapters/`` whose name does not start with "_";
each exposes ``NAME``, ``REPO`` ("owner/repo") and ``compare(authors_dir, work) -> list[dict]``
returning rows ``{"benchmark", "case", "metric", "slice", "ours", "authors"}`` (and optionally
``"source"``: the authors' function, or the reference, the "authors" value comes from; and
``"explained"``: the key of a deliberate difference listed in the adapter's ``EXPLAINED``
{key: why}). ``work`` is a fresh temporary folder per adapter.

A row matches when both values are numbers within 1e-9 (absolute), both are n/a (None or NaN), or
both are equal non-numbers (strings, lists, booleans; a boolean never equals a number). n/a on
one side only is a mismatch. A mismatching row that names a deliberate difference is an
*explained* mismatch: shown and counted, with its explanation, never hidden; any other is
*unexplained*. The table lists every row; the summary says which adapters ran, which were
skipped and why, and lists the explained mismatches by name.

Exit status: 0 no unexplained mismatch and every adapter ran; 1 any unexplained mismatch; 2 an
adapter failed or was skipped (no checkout; ``--allow-skip`` lets skips pass), an unknown
adapter was asked for, or nothing ran.
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


def candidates(authors: Path, repo: str) -> list[Path]:
    """Where ``owner/repo``'s checkout may live under ``authors``, in the order looked at: the
    folder ``git clone`` makes (``<repo>``), then ``<owner>+<repo>``."""
    owner, name = repo.split("/", 1)
    return [Path(authors) / name, Path(authors) / f"{owner}+{name}"]


def checkout_dir(authors: Path | None, repo: str) -> Path | None:
    """The first of `candidates` that is a folder, or None."""
    if authors is None:
        return None
    return next((p for p in candidates(authors, repo) if p.is_dir()), None)


def _is_na(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check(row: dict, tolerance: float = TOLERANCE) -> dict:
    """``row`` with ``diff`` (|ours - authors| for two numbers, else None), ``match`` and
    ``status``: "ok", "explained" (a mismatch the row's ``explained`` key accounts for) or
    "MISMATCH"."""
    ours, theirs = row.get("ours"), row.get("authors")
    diff = None
    if _is_na(ours) or _is_na(theirs):
        match = _is_na(ours) and _is_na(theirs)
    elif _number(ours) and _number(theirs):
        diff = abs(float(ours) - float(theirs))
        match = diff <= tolerance
    else:  # texts, lists, booleans: equal and of one kind (True is not the score 1.0)
        match = ours == theirs and isinstance(ours, bool) == isinstance(theirs, bool)
    status = "ok" if match else ("explained" if row.get("explained") else "MISMATCH")
    return {**row, "diff": diff, "match": bool(match), "status": status}


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
             r["status"] if r["status"] != "explained" else f"explained: {r['explained']}")
            for r in rows]
    widths = [min(48 if i < 7 else 40, max([len(h)] + [len(b[i]) for b in body]))
              for i, h in enumerate(head)]
    fmt = "  ".join(f"{{:{w}.{w}}}" for w in widths)
    return "\n".join([fmt.format(*head), fmt.format(*("-" * w for w in widths))]
                     + [fmt.format(*b).rstrip() for b in body])


class Outcome:
    """What a run did: checked rows, adapters run (name -> rows) and skipped (name -> why),
    problems (adapter failures, bad rows), and the deliberate differences the adapters list."""

    def __init__(self) -> None:
        self.rows: list[dict] = []
        self.ran: dict[str, int] = {}
        self.skipped: dict[str, str] = {}
        self.problems: list[str] = []
        self.explanations: dict[str, str] = {}

    @property
    def unexplained(self) -> int:
        return sum(r["status"] == "MISMATCH" for r in self.rows)

    def explained(self) -> dict[str, int]:
        """Explained mismatches per deliberate difference (key -> rows)."""
        out: dict[str, int] = {}
        for r in self.rows:
            if r["status"] == "explained":
                out[r["explained"]] = out.get(r["explained"], 0) + 1
        return out


def run(authors: Path | None, *, only: str | None = None, lib: Path = LIB,
        paths: dict[str, Path] | None = None,
        log=lambda line: print(line, file=sys.stderr)) -> Outcome:
    """Run the adapters on the checkouts (``paths[NAME]`` first, else found under ``authors``)."""
    adapters = discover(lib)
    out = Outcome()
    paths = paths or {}
    if only is not None:
        adapters = [a for a in adapters if a.NAME == only]
        if not adapters:
            out.problems.append(f"no adapter named {only!r}; known: "
                                f"{[a.NAME for a in discover(lib)]}")
            return out
    for adapter in adapters:
        where = paths.get(adapter.NAME) or checkout_dir(authors, adapter.REPO)
        if where is None or not Path(where).is_dir():
            looked = ([str(where)] if where is not None else
                      [str(p) for p in candidates(authors, adapter.REPO)] if authors else [])
            where_text = (f"looked at {', '.join(looked)}" if looked else
                          "no --authors folder given")
            out.skipped[adapter.NAME] = (
                f"no checkout of {adapter.REPO} ({where_text}; git clone "
                f"https://github.com/{adapter.REPO}, or --authors-{adapter.NAME} PATH)")
            log(f"skipped {adapter.NAME}: {out.skipped[adapter.NAME]}")
            continue
        started = time.monotonic()
        explanations = dict(getattr(adapter, "EXPLAINED", {}) or {})
        with tempfile.TemporaryDirectory(prefix=f"conformance-{adapter.NAME}-") as work:
            try:
                got = adapter.compare(Path(where), Path(work))
            except Exception:  # noqa: BLE001 - any adapter failure is reported, not raised
                out.problems.append(f"{adapter.NAME}: the adapter failed:\n"
                                    f"{traceback.format_exc()}")
                continue
        out.ran[adapter.NAME] = len(got)
        for r in got:
            bad = [k for k in ROW_KEYS if k not in r]
            key = r.get("explained")
            if key is not None and key not in explanations:
                bad.append(f"explained={key!r} (not in the adapter's EXPLAINED)")
            if bad:
                out.problems.append(f"{adapter.NAME}: a row lacks {bad}: {r!r}"[:500])
                break
            out.rows.append(check(r))
        out.explanations.update(explanations)
        log(f"{adapter.NAME}: {len(got)} rows in {time.monotonic() - started:.1f} s")
    return out


def summary(out: Outcome) -> list[str]:
    """The lines under the table: adapters run and skipped, explained mismatches by name, and
    the count line last."""
    ran = ", ".join(f"{k} ({n} rows)" for k, n in out.ran.items())
    lines = [f"adapters run: {ran or 'none'}"]
    for name, why in out.skipped.items():
        lines.append(f"adapter skipped: {name}: {why}")
    explained = out.explained()
    if explained:
        lines.append("explained mismatches (deliberate differences, each row above marked):")
        for key, n in sorted(explained.items()):
            lines.append(f"  {key} ({n} rows): {out.explanations.get(key, '')}")
    lines.append(f"{out.unexplained} unexplained mismatches, {sum(explained.values())} explained, "
                 f"in {len(out.rows)} rows from {len(out.ran)} adapters"
                 + (f"; {len(out.skipped)} skipped" if out.skipped else "")
                 + (f"; {len(out.problems)} problems" if out.problems else ""))
    return lines


def main(argv: list[str] | None = None) -> int:
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--adapters", type=Path, default=LIB)
    lib = pre.parse_known_args(argv)[0].adapters
    names = [a.NAME for a in discover(lib)]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--authors", type=Path,
                    help="folder of the authors' checkouts, one per repository, named as git "
                         "clone names them (LOKI, TriDF, ...) or <owner>+<repo>")
    for name in names:
        ap.add_argument(f"--authors-{name}", type=Path, dest=f"path_{name}", metavar="PATH",
                        help=f"the checkout for the {name} adapter (wins over --authors)")
    ap.add_argument("--only", help=f"run one adapter (its NAME: {', '.join(names)})")
    ap.add_argument("--allow-skip", action="store_true",
                    help="exit 0/1 even when an adapter was skipped for want of its checkout")
    ap.add_argument("--json", action="store_true", help="print the rows and the summary as JSON")
    ap.add_argument("--adapters", type=Path, default=LIB, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    paths = {n: getattr(args, f"path_{n}") for n in names if getattr(args, f"path_{n}")}
    if args.authors is None and not paths:
        ap.error("give --authors DIR or at least one --authors-<name> PATH")
    if args.authors is not None and not args.authors.is_dir():
        print(f"error: --authors {args.authors} is not a folder", file=sys.stderr)
        return 2
    bad = [f"--authors-{n} {p}" for n, p in paths.items() if not p.is_dir()]
    if bad:
        print(f"error: not a folder: {', '.join(bad)}", file=sys.stderr)
        return 2
    out = run(args.authors, only=args.only, lib=args.adapters, paths=paths)
    if args.json:
        print(json.dumps({"rows": out.rows, "mismatches": out.unexplained,
                          "explained_mismatches": out.explained(),
                          "explanations": {k: out.explanations[k] for k in out.explained()},
                          "rows_compared": len(out.rows), "adapters_run": out.ran,
                          "adapters_skipped": out.skipped, "problems": out.problems},
                         ensure_ascii=False, default=str))
    else:
        if out.rows:
            print(table(out.rows))
        print("\n".join(summary(out)))
    for p in out.problems:
        print(f"error: {p}", file=sys.stderr)
    if not out.ran and not out.problems:
        print("error: no adapter ran (no checkouts under --authors?)", file=sys.stderr)
    if out.problems or not out.ran or (out.skipped and not args.allow_skip):
        if out.skipped and not args.allow_skip:
            print(f"error: {len(out.skipped)} adapter(s) skipped ({', '.join(out.skipped)}); "
                  "--allow-skip accepts that", file=sys.stderr)
        return 2
    return 1 if out.unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
