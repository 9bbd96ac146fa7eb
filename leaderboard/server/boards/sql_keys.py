"""The standings' key codes as SQL (issue 25), shared by the set-based rebuilds of the task
boards (`leaderboard.server.boards.rebuild`) and the modality boards
(`leaderboard.server.boards.modality_ledger`): `ledger._float_code` computed by the database.
"""
from __future__ import annotations

#: what no judge's identity contains: stands for the board's judge when there is none
NO_JUDGE = "\x01none"


def fcode(pg: bool, x: str) -> str:
    """SQL for `ledger._float_code` of the float expression ``x`` (not NULL)."""
    if not pg:
        return f"lb_fcode({x})"
    bits = f"(('x' || encode(float8send(({x}) + 0.0), 'hex'))::bit(64)::bigint)"
    return (f"lpad(to_hex(CASE WHEN {bits} < 0 THEN ~{bits}"
            f" ELSE {bits} # (-9223372036854775807 - 1) END), 16, '0')")
