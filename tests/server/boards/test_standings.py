"""Ranking rules: n/a last, deterministic tie-breaks, one row per team, modality aggregate."""
from datetime import datetime, timedelta, timezone

import pytest

from leaderboard.server.boards.standings import (
    Cell,
    Column,
    Entry,
    build_rows,
    competition_ranks,
    tie_break_rule,
)

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
ACC = Column("accuracy", "Accuracy", True, "pct")
FPR = Column("fpr", "FPR", False, "pct")
AP = Column("ap", "AP", True, "pct")


def entry(sid, acc, *, fpr=None, ap=None, minutes=0, team=None, **kw):
    cells = {"accuracy": Cell(acc), "fpr": Cell(fpr), "ap": Cell(ap)}
    return Entry(submission_id=sid, created_at=T0 + timedelta(minutes=minutes), cells=cells,
                 team_id=team, **kw)


def ids(rows):
    return [r.entry.submission_id for r in rows]


def test_na_sorts_last_in_both_directions():
    es = [entry(1, None), entry(2, 0.1), entry(3, 0.9)]
    assert ids(build_rows(es, [ACC], primary="accuracy", mode="all")) == [3, 2, 1]
    es = [entry(1, 0, fpr=None), entry(2, 0, fpr=0.5), entry(3, 0, fpr=0.01)]
    assert ids(build_rows(es, [FPR], primary="fpr", mode="all")) == [3, 2, 1]


def test_ties_break_on_secondary_then_earliest_then_id():
    es = [entry(1, 0.8, fpr=0.2, minutes=5), entry(2, 0.8, fpr=0.1, minutes=9),
          entry(3, 0.8, fpr=0.2, minutes=1), entry(4, 0.8, fpr=0.2, minutes=1)]
    rows = build_rows(es, [ACC, FPR], primary="accuracy", secondary=["fpr"], mode="all")
    assert ids(rows) == [2, 3, 4, 1]
    assert [r.rank for r in rows] == [1, 2, 3, 4]
    # the order does not depend on the input order
    assert ids(build_rows(list(reversed(es)), [ACC, FPR], primary="accuracy",
                          secondary=["fpr"], mode="all")) == [2, 3, 4, 1]


def test_secondary_na_ranks_below_secondary_number():
    es = [entry(1, 0.5, ap=None), entry(2, 0.5, ap=0.1, minutes=3)]
    assert ids(build_rows(es, [ACC, AP], primary="accuracy", secondary=["ap"])) == [2, 1]


def test_one_row_per_team_selected_wins_over_best():
    es = [entry(1, 0.9, team=7), entry(2, 0.5, team=7, selected=True), entry(3, 0.7, team=8),
          entry(4, 0.8, team=8)]
    rows = build_rows(es, [ACC], primary="accuracy")
    assert ids(rows) == [4, 2]


def test_team_best_is_chosen_on_pick_values_but_shown_values_rank():
    # public part (pick) prefers 1; private part (shown after reveal) would prefer 2
    a = entry(1, 0.6, team=7, pick={"accuracy": Cell(0.9)})
    b = entry(2, 0.95, team=7, pick={"accuracy": Cell(0.8)})
    assert ids(build_rows([a, b], [ACC], primary="accuracy")) == [1]


def test_baselines_and_disqualified_are_not_ranked():
    es = [entry(1, 0.5, is_baseline=True, baseline_kind="random"), entry(2, 0.6, team=1),
          entry(3, 0.99, team=2, disqualified_reason="leaked labels"), entry(4, 0.4, team=3)]
    team_rows = build_rows(es, [ACC], primary="accuracy")
    assert ids(team_rows) == [2, 1, 4]
    assert [r.rank for r in team_rows] == [1, None, 2]
    all_rows = build_rows(es, [ACC], primary="accuracy", mode="all")
    assert ids(all_rows) == [2, 1, 4, 3] and all_rows[-1].rank is None


def test_rule_text_names_the_order():
    text = tie_break_rule([ACC, FPR], primary="accuracy", secondary=["fpr", "missing"])
    assert text.startswith("Ranked by Accuracy (higher is better), then FPR (lower is better)")
    assert "earliest submission" in text and "n/a always ranks last" in text


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="'nope'"):
        build_rows([], [ACC], primary="nope")
    with pytest.raises(ValueError, match="'every'"):
        build_rows([], [ACC], primary="accuracy", mode="every")


def test_competition_ranks_share_ties():
    assert competition_ranks({"a": 0.9, "b": 0.9, "c": 0.5, "d": None},
                             higher_is_better=True) == {"a": 1, "b": 1, "c": 3}
