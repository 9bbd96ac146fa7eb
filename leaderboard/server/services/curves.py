"""Stored ROC / PR curves of a submission (written by the scoring job, read by submission pages)."""
from __future__ import annotations

import math

from sqlalchemy import delete
from sqlalchemy.orm import Session

from leaderboard.core.records import slice_key_of
from leaderboard.server.models import Curve, Submission

CURVE_KINDS = ("roc", "pr")
MAX_CURVE_POINTS = 2000


def _check_points(values, what: str) -> list[float]:
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v) \
                or not 0.0 <= v <= 1.0:
            raise ValueError(f"curve {what}: points must be numbers in [0, 1], got {v!r}")
        out.append(float(v))
    return out


def store_curves(session: Session, submission: Submission, curves) -> list[Curve]:
    """Replace ``submission``'s stored ROC / PR curves with ``curves`` (ScoreResult.curves).

    Each curve is ``{"part", "task", "slice" (dict) or "slice_key", "kind": "roc"|"pr",
    "x": [...], "y": [...]}`` with points in [0, 1]. Idempotent (rescoring replaces). Raises
    ValueError naming the bad curve; does not commit (the scoring job does, then calls
    `invalidate_boards`).
    """
    rows, seen = [], set()
    for i, c in enumerate(curves):
        what = f"#{i} ({c.get('task')!r}, {c.get('kind')!r})"
        if c.get("kind") not in CURVE_KINDS:
            raise ValueError(f"curve {what}: kind must be one of {list(CURVE_KINDS)}")
        if c.get("part") not in ("all", "public", "private"):
            raise ValueError(f"curve {what}: part must be all/public/private, "
                             f"got {c.get('part')!r}")
        if not isinstance(c.get("task"), str) or not c["task"]:
            raise ValueError(f"curve {what}: task must be a non-empty string")
        x, y = _check_points(c.get("x", []), what), _check_points(c.get("y", []), what)
        if len(x) != len(y) or len(x) < 2 or len(x) > MAX_CURVE_POINTS:
            raise ValueError(f"curve {what}: x and y need the same length in "
                             f"[2, {MAX_CURVE_POINTS}], got {len(x)} and {len(y)}")
        skey = c["slice_key"] if "slice_key" in c else slice_key_of(
            {str(k): str(v) for k, v in (c.get("slice") or {}).items()})
        key = (c["part"], c["task"], skey, c["kind"])
        if key in seen:
            raise ValueError(f"curve {what}: a second {c['kind']} curve for part "
                             f"{c['part']!r}, slice {skey!r}; give each block its slice "
                             "(e.g. its modality)")
        seen.add(key)
        rows.append(Curve(submission_id=submission.id, part=c["part"], task=c["task"],
                          slice_key=skey, kind=c["kind"], points_json={"x": x, "y": y}))
    session.execute(delete(Curve).where(Curve.submission_id == submission.id))
    session.add_all(rows)
    session.flush()
    return rows
