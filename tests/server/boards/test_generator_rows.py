"""Stored per-row numbers of the generators view (issue 37 at scale): a row computed over its own
generators and widened to the view's columns equals the row computed over those columns
(fast and weighted bootstraps), and the store computes a row once per outcome file, table and
made day."""
from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from leaderboard.core.outcomes import Outcome
from leaderboard.server.boards import generator_rows
from leaderboard.server.boards import generators as gv
from leaderboard.server.services import outcome_store

TABLE = [{"key": "a", "name": "A", "modality": "image", "date": "2020-01-01"},
         {"key": "b", "name": "B", "modality": "image", "date": "2024-01-01"},
         {"key": "c", "name": "C", "modality": "image", "date": "2022-01-01"},
         {"key": "z", "name": "Z", "modality": "image", "date": "2021-06-01"}]


def _outcome(model: str, seed: int = 1) -> Outcome:
    rng = np.random.default_rng(seed)
    n = 400
    gen = rng.integers(-1, 4, n)  # 0..2 dated (a, b, c), 3 undated ("u")
    # "cells" with strata that do not separate generators: the weighted bootstrap's path
    strata = (gen >= 0).astype(int)
    return Outcome("d", "accuracy", model, rng.integers(0, 2, n), strata, np.zeros(n),
                   ("image",), {"n_gen": 1} if model == "cells" else {}, generator=gen,
                   generators=("a", "b", "c", "u"))


@pytest.mark.parametrize("model", ["mean", "cells"])
@pytest.mark.parametrize("made", [dt.date(2021, 1, 1), dt.date(2023, 1, 1)])
def test_own_generators_widened_equal_the_whole_row(model, made):
    o = _outcome(model)
    # the view's columns: every dated generator (z has no items here) and the undated one
    cols = gv.ordered_generators({"generators": TABLE}, {"a", "b", "c", "u", "z"})
    own = [g for g in cols if g["key"] in set(o.generators)]
    whole = gv.row_numbers(o, cols, made, n_resamples=200)
    assert gv.expand(gv.row_numbers(o, own, made, n_resamples=200), cols, made) == whole
    assert [c["generator"] for c in whole["cells"]] == ["a", "z", "c", "b", "u"]


def test_a_row_is_computed_once_per_outcome_file_and_made_day(tmp_path, monkeypatch):
    o = _outcome("mean")
    outcome_store.write(tmp_path, 7, {"public": {"d": o}})
    args = {"part": "public", "task": "d", "metric": "accuracy", "table": TABLE}
    first = gv.row_entry(tmp_path, 7, made=dt.date(2021, 1, 1), **args)
    assert first["usable"] and sorted(first["generators"]) == ["a", "b", "c", "u"]
    assert generator_rows.path_of(tmp_path, 7).exists()
    own = gv.ordered_generators({"generators": TABLE}, {"a", "b", "c", "u"})
    want = gv.row_numbers(o, [g for g in own if g["key"] != "z"], dt.date(2021, 1, 1))
    assert first["numbers"] == want

    reads = []
    real_read = outcome_store.read_one
    monkeypatch.setattr(outcome_store, "read_one",
                        lambda *a, **k: reads.append(a) or real_read(*a, **k))
    generator_rows._memo.clear()  # from the file, not this process's memory
    assert gv.row_entry(tmp_path, 7, made=dt.date(2021, 1, 1), **args) == first
    assert reads == []
    # another made day is another row (seen/unseen move); so is a rescored outcome file
    other = gv.row_entry(tmp_path, 7, made=dt.date(2023, 1, 1), **args)
    assert other["numbers"]["unseen_generators"] == ["b"] and len(reads) == 1
    outcome_store.write(tmp_path, 7, {"public": {"d": _outcome("mean", seed=2)}})
    again = gv.row_entry(tmp_path, 7, made=dt.date(2021, 1, 1), **args)
    assert len(reads) == 2 and again["numbers"] != first["numbers"]
    # no outcome file, or one of another metric: no row
    assert gv.row_entry(tmp_path, 8, made=dt.date(2021, 1, 1), **args) is None
    assert gv.row_entry(tmp_path, 7, made=dt.date(2021, 1, 1),
                        **{**args, "metric": "fpr"}) is None
