"""The standings refresh of one scored submission costs a bounded number of statements, whatever
its slice count (issue 39, the deadline rush): a submission's slices stay locked until its
commit, so two statements per slice (a read and an update per representative election, a read
per slice lookup) serialised concurrent scoring jobs at about two a second. The boards it
produces are checked against the full computation in `test_incremental`."""
from __future__ import annotations

from sqlalchemy import event

from leaderboard.server.db import get_db

SLICES = ("", "modality=image", "modality=video", "generator=g1", "generator=g2",
          "generator=g3", "generator=g4", "generator=g5")


def _statements_of_commit(app, session, make, bench, team, n_slices: int, value: float) -> int:
    sub = make.submission(bench, team, split="test", status="scored")
    for part in ("public", "private"):
        for skey in SLICES[:n_slices]:
            make.score(sub, part=part, task="detection", metric="accuracy", value=value,
                       slice_key=skey)
    session.flush()
    seen = []

    def count(*_args):
        seen.append(1)

    engine = get_db(app).engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        session.commit()
    finally:
        event.remove(engine, "before_cursor_execute", count)
    return len(seen)


def test_statements_do_not_grow_with_the_slices(boards_app, boards_session, make):
    bench = make.benchmark()
    few_team, many_team = make.team(), make.team()
    # each team already has a submission on every slice: the new one contests its group
    for team in (few_team, many_team):
        _statements_of_commit(boards_app, boards_session, make, bench, team, len(SLICES), 0.5)
    few = _statements_of_commit(boards_app, boards_session, make, bench, few_team, 2, 0.9)
    many = _statements_of_commit(boards_app, boards_session, make, bench, many_team,
                                 len(SLICES), 0.9)
    # 4 slices against 16, each with a new representative: the same statements
    assert many - few <= 2, (few, many)
