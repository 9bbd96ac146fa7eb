"""The issuer's fast record reader (Core statement, cached slice parsing, precomputed sort keys)
gives exactly the records of the reference definition (`receipts.record` over the ORM rows,
`receipts.sort_records`), on stored values it was not written around: slices whose values hold
the slice key's separators, non-ASCII text, a non-string slice value, -0.0, tiny and
huge reals, NULL values, bounds and judge (non-finite reals are never stored: the scorer
writes None, and the standings refuse them on PostgreSQL). Receipts already issued keep verifying only if this
holds (SQLite and PostgreSQL)."""
from __future__ import annotations

import math

from sqlalchemy import select

from leaderboard.core.transparency import receipts
from leaderboard.core.transparency.canonical import canonical_bytes
from leaderboard.server.models import Score
from leaderboard.server.transparency import issue

TRICKY = [
    ({"a;b": "x=y", "modality": "image"}, -0.0, 1e-07, None, None),
    ({"é": "ü\n\"q\"", "z": "1"}, 0.1, None, 1.0, "judge/β"),
    ({"count": 3}, None, 2.5e-300, -1e300, None),
    ({}, 123456789.125, 0.0, 5e300, ""),
    # the edges of the server's shortest float printing (PostgreSQL reads them as JSON)
    ({"k": "v"}, 5e-324, 1.7976931348623157e308, 1e15, None),
    ({"k": "w"}, 1e16, 0.30000000000000004, 1 / 3, None),
    ({"k": "x"}, 9007199254740993.0, -2.2250738585072014e-308, 123456789012345.6, None),
]


def _reference(session, sid: int) -> list[dict]:
    def real(x):
        return None if x is None or not math.isfinite(x) else receipts.encode_real(x)

    rows = session.scalars(select(Score).where(Score.submission_id == sid)).all()
    return receipts.sort_records(
        {"part": r.part, "task": r.task, "metric": r.metric,
         "slice": {str(k): str(v) for k, v in r.slice_json.items()} if r.slice_json else {},
         "value": real(r.value), "ci_low": real(r.ci_low), "ci_high": real(r.ci_high),
         "n": int(r.n or 0), "judge": r.judge, "metric_version": str(r.metric_version)}
        for r in rows)


def test_fast_records_equal_the_reference(app, scored):
    sid = scored[2]
    db = app.extensions["lb_db"]
    with db.scope() as s:
        for i, (sl, v, lo, hi, judge) in enumerate(TRICKY):
            s.add(Score(submission_id=sid, part="public", task="detection", metric=f"x{i}",
                        slice_key=";".join(f"{k}={w}" for k, w in sorted(sl.items())),
                        slice_json=sl, value=v, ci_low=lo, ci_high=hi, n=i, judge=judge,
                        metric_version="2"))
    issue._SLICES.clear()
    issue._TAILS.clear()
    issue._MIDDLES.clear()
    with db.scope() as s:
        expected = _reference(s, sid)
        for _ in range(2):  # the second pass reads the slices from the cache
            got, encoded = issue._read_records(s, sid)
            assert [canonical_bytes(r) for r in got] == [canonical_bytes(r) for r in expected]
            assert encoded == [canonical_bytes(r) for r in expected]  # the sort keys
            assert receipts.commitment_of_encoded(encoded, "ab" * 32) == \
                receipts.commitment(expected, "ab" * 32)
        keyed = issue._read_encoded(s, sid)
        assert [b for b, _ in keyed] == encoded
        assert [p for _, p in keyed] == [r["part"] for r in expected]
        assert len(got) > len(TRICKY)
        by_metric = {r["metric"]: r for r in got}
        assert by_metric["x0"]["slice"] == {"a;b": "x=y", "modality": "image"}
        assert by_metric["x0"]["value"] == "0.0"
        assert by_metric["x2"]["slice"] == {"count": "3"}
        assert by_metric["x2"]["value"] is None and by_metric["x2"]["ci_low"] == "2.5e-300"
