"""Recovery times under faults (issue 17), for the fault table in docs/operations.md. Not a test:
prints numbers.

    .venv/bin/python perf/bench_faults.py [--runs 3] [-k EXPR] [--out faults.jsonl] [--backlog]

Runs ``tests/production/test_recovery.py`` ``--runs`` times (pytest, ``-p no:cacheprovider``),
each time on its own PostgreSQL and Redis started by the tests (PostgreSQL server binaries and
``redis-server`` must be installed: ``scripts/start-services.sh``). Every test lands one fault on
the production shape (gunicorn, RQ workers, the reconciler every 10 s, the production deadlines
of docker/env.example, clients on the real CLI client) and measures, through ``LB_FAULT_REPORT``:

- recovery: from the end of the fault to the moment the last submission was scored (its
  ``finished_at``), over every acknowledged upload and every row a lost answer left behind;
- the uploads' rows, the client retries and the 503 answers the clients saw.

``--backlog`` runs the backlog case instead (``tests/production/backlog_scenario.py``, about
three minutes a run; issue 24): uploads offered at 2/s to two workers that score about 1/s, three
workers SIGKILLed mid-scoring while the queue grows; it asserts that every killed job is
re-queued within 35 s and scored within 60 s of its kill, and reports per kill the backlog, the
re-queue delay and the scoring delay (``requeue_s``, ``scored_s``).

A run whose tests fail is reported and makes the exit code 1 (the numbers of the tests that
passed are still printed). Output: one JSON line per fault per run, then a Markdown table (min,
median and max recovery over the runs) to paste into docs/operations.md.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = "tests/production/test_recovery.py"
BACKLOG = "tests/production/backlog_scenario.py"


def run_once(report: Path, keyword: str | None, tests: str = TESTS) -> tuple[int, float]:
    """One pytest run of the recovery tests; (exit code, seconds)."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", tests]
    if keyword:
        cmd += ["-k", keyword]
    env = dict(os.environ, LB_FAULT_REPORT=str(report), PYTHONPATH=str(ROOT))
    start = time.monotonic()
    done = subprocess.run(cmd, cwd=ROOT, env=env)
    return done.returncode, time.monotonic() - start


def table(rows: list[dict]) -> str:
    by_fault: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_fault[row["fault"]].append(row)
    lines = ["| fault | runs | recovery s: min / median / max | submissions | client retries "
             "| 503 answers | lost answers |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    kills = [k for row in rows for k in row.get("kills", ())]
    for fault, runs in by_fault.items():
        rec = [r["recovery_s"] for r in runs]
        lines.append(
            f"| {fault} | {len(runs)} | {min(rec):.1f} / {statistics.median(rec):.1f} / "
            f"{max(rec):.1f} | {sum(r['submissions'] for r in runs)} | "
            f"{sum(r['client_retries'] for r in runs)} | {sum(r['answers_503'] for r in runs)} "
            f"| {sum(r['lost_answers'] for r in runs)} |")
    if kills:
        lines += ["", "| killed job | backlog at the kill | re-queued after s | scored after s |",
                  "| --- | ---: | ---: | ---: |"]
        lines += [f"| {k['submission']} | {k['backlog']} | {k['requeue_s']:.1f} | "
                  f"{k['scored_s']:.1f} |" for k in kills]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("-k", dest="keyword", default=None, help="pytest -k expression")
    ap.add_argument("--out", type=Path, default=None, help="keep the JSON lines in this file")
    ap.add_argument("--backlog", action="store_true",
                    help="the backlog case (killed workers while the queue grows) instead")
    args = ap.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="lb-faults-")) / "faults.jsonl"
    out.unlink(missing_ok=True)
    failed = 0
    for n in range(1, args.runs + 1):
        code, seconds = run_once(out, args.keyword, BACKLOG if args.backlog else TESTS)
        print(json.dumps({"run": n, "exit_code": code, "seconds": round(seconds, 1)}),
              flush=True)
        failed += code != 0
    rows = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    for row in rows:
        print(json.dumps(row))
    print(table(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
