"""The set-based standings rebuild (issue 25) equals the Python pass it replaced (the oracle,
`boards.rebuild_reference`) on a varied case: parts and no parts, n/a values, ties, a judge's
records the board does not show, composites, self-mapped records, duplicates of a metric,
disqualified, selected, baseline, team-less, hidden and private submissions, two splits."""
from __future__ import annotations

import random

from sqlalchemy import select

from leaderboard.server.boards import rebuild, rebuild_reference
from leaderboard.server.models.standings import Standing, StandingBoard


def _rounded(cells: dict) -> list:
    """The cells with values to 12 significant digits: SQLite's JSON functions print 15, and
    PostgreSQL's JSON prints 1.0 as 1 (equal in Python); the keys, which order the board, are
    exact on both backends and compared as they are."""
    return sorted((k, [[float(f"{x:.12g}") if isinstance(x, float) else x for x in rec]
                       for rec in recs]) for k, recs in cells.items())


def _snapshot(session):
    # table rows, not ORM objects: a rebuild reuses ids the identity map still holds
    sb, st = StandingBoard.__table__, Standing.__table__
    boards = {b.id: (b.split, b.task, b.slice_key, b.part) for b in session.execute(select(sb))}
    board_rows = sorted(
        (boards[b.id], b.rows, b.ranked, b.reps, b.ranked_reps, b.metrics_json, b.judged_json,
         b.order_json, b.judge) for b in session.execute(select(sb)))
    rows = sorted(
        (boards[r.board_id], r.submission_id, r.grp, r.sort_key, r.all_key, r.rep_key or "",
         r.pick_key, r.selected, r.disqualified, r.is_baseline, r.competes,
         _rounded(r.cells_json)) for r in session.execute(select(st)))
    return board_rows, rows


def test_set_based_rebuild_equals_the_python_oracle(boards_session, make):
    rng = random.Random(25)
    s = boards_session
    bench = make.benchmark()
    teams = [make.team() for _ in range(4)]
    for i in range(24):
        team = teams[i % 4] if i % 9 else None
        split = "test" if i % 5 else "dev"
        sub = make.submission(bench, team, split=split, minutes=i // 3,  # same-time pairs
                              is_baseline=(i == 9), baseline_kind="random" if i == 9 else None,
                              disqualified_reason="copied" if i == 7 else None,
                              selected=(i == 6), hidden=(i == 11), is_public=(i != 13))
        parts = ("public", "private", "all") if split == "test" else ("all",)
        for part in parts:
            for skey in ("", "modality=image", "modality=video", "generator=g1"):
                for metric in ("accuracy", "fpr", "ap", "f_acc"):
                    value = rng.choice([None, 0.5, 0.25, -0.0, 0.0, 1.0, rng.random()])
                    judge = rng.choice([None, None, "rules@3", "other@1", "self-mapped",
                                        "rules@3 + self-mapped", "rules@30"])
                    make.score(sub, part=part, task="detection", metric=metric, value=value,
                               slice_key=skey, judge=judge if metric in ("ap", "f_acc") else None,
                               ci_low=None if value is None else value / 2, ci_high=value)
                if rng.random() < 0.3:  # a duplicate record: the last one counts
                    make.score(sub, part=part, task="detection", metric="accuracy",
                               value=rng.random(), slice_key=skey)
                make.score(sub, part=part, task="judgment", metric="accuracy",
                           value=rng.choice([0.5, rng.random()]), slice_key=skey)
    bench.official_judge = "rules@3"
    # a second benchmark, no judge, another headline direction: rebuilt in the same pass
    other = make.benchmark("other", splits=("test",), tasks=[
        {"key": "spot", "kind": "detection", "modalities": ["image"], "headline": "fpr",
         "title": "Spot", "secondary": ["accuracy"]}])
    for i in range(6):
        make.submission(other, teams[i % 2], task="spot", minutes=100 + i % 3, scores={
            "public": {"fpr": rng.choice([0.1, 0.2, None]), "accuracy": rng.random(),
                       "ap": (0.5, 0.4, 0.6)}, "private": {"fpr": rng.random()}})
    s.commit()
    rebuild_reference.rebuild(s)
    s.flush()
    expected = _snapshot(s)
    assert expected[1], "the case has rows"
    rebuild.rebuild(s)
    s.flush()
    got = _snapshot(s)
    assert got[0] == expected[0]
    assert got[1] == expected[1], _first_diff(got[1], expected[1])


def _first_diff(a, b):
    for x, y in zip(a, b):
        if x != y:
            return [(i, p, q) for i, (p, q) in enumerate(zip(x, y)) if p != q]
