"""`perf/bench_rush.py`'s core on a tiny rush (SQLite, inline jobs), so the benchmark does not
rot: a burst against the phase cap, the board read meanwhile, and the summary it prints last.
Not a timed test: the numbers are the benchmark's, not asserted here."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_rush", ROOT / "perf" / "bench_rush.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_rush", module)  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_tiny_rush_inline_keeps_the_cap_and_loses_nothing():
    bench = _bench()
    plan = bench.Plan(teams=2, uploads=5, window_s=0.5, vct2=0, cap=2, burst_teams=1,
                      burst_size=3, invalid=0.0, reader_rps=4.0, drain_s=30.0,
                      quiet_s=0.5)
    lines = []
    summary = bench.run(plan, mode="inline", echo=lambda line, **_: lines.append(line))
    assert summary["mode"] == "inline" and summary["database"] == "sqlite"
    assert summary["uploads"] == 5
    assert summary["accepted"] + summary["refused"] == 5
    # the burst team sent 3 at once against a cap of 2: exactly 2 count, 1 is refused
    assert summary["refused_quota"] == 1 and summary["max_counting_per_team"] == 2
    assert summary["lost"] == 0 and summary["duplicates"] == 0 and summary["errors_500"] == 0
    assert summary["over_cap_teams"] == 0 and summary["usage_mismatch"] == 0
    assert summary["scored"] == summary["accepted"]
    assert summary["p95_visible_s"] is not None and summary["board_p99_ms"] is not None
    assert any('"part": "integrity"' in line for line in lines)
