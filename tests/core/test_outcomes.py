"""Per-item outcomes give back each benchmark's stored headline exactly (issue 14)."""
from __future__ import annotations

import numpy as np
import pytest

from leaderboard.core.baselines import write_baseline
from leaderboard.core.outcomes import Outcome, point_value
from leaderboard.core.packs import load_pack
from leaderboard.core.scoring import score_predictions
from leaderboard.demo import generate_all

HEADLINES = {"loki": {"judgment", "multiple_choice", "abnormal_selection"},
             "syncred": {"detection"}, "uniaidet": {"detection"}, "vct2": {"detection"},
             "tridf": {"tfq", "mcq", "oeq_a", "oeq_b"}}


@pytest.fixture(scope="module")
def packs(tmp_path_factory):
    out = tmp_path_factory.mktemp("packs")
    return {p.name: load_pack(p) for p in generate_all(out, scale="small", seed=0)}


@pytest.mark.parametrize("key", sorted(HEADLINES))
@pytest.mark.parametrize("kind", ["random", "all-fake"])
def test_outcomes_reproduce_the_headline(packs, key, kind, tmp_path):
    pack = packs[key]
    f = tmp_path / "p.jsonl"
    write_baseline(pack, "test", kind, f, seed=3)
    result = score_predictions(pack, "test", f)
    assert set(result.outcomes) == {"public", "private", "all"}
    assert set(result.outcomes["all"]) == HEADLINES[key]
    for part, per_task in result.outcomes.items():
        for task, o in per_task.items():
            headline = next(t.headline for t in pack.tasks if t.key == task)
            assert o.metric == headline
            for slc, mod in [({}, None)] + [({"modality": m}, m) for m in o.modalities]:
                rec = [r for r in result.parts[part]
                       if r.task == task and r.metric == o.metric and r.slice == slc]
                if not rec or rec[0].value is None:
                    continue
                got = point_value(o.subset(o.rows(mod)))
                assert got == pytest.approx(rec[0].value, abs=1e-6), (part, task, slc)
            back = Outcome.from_arrays(o.to_arrays("x/"), "x/")
            assert np.array_equal(back.x, o.x) and back.fingerprint() == o.fingerprint()


def test_outcomes_are_not_in_the_printed_result(packs, tmp_path):
    f = tmp_path / "p.jsonl"
    write_baseline(packs["vct2"], "test", "random", f, seed=3)
    assert "outcomes" not in score_predictions(packs["vct2"], "test", f).as_dict()


def test_a_judged_explanation_score_has_outcomes_that_give_it_back(packs, tmp_path):
    """LOKI's explanation score (a judge's mean rating) gets per-item outcomes when a judge is
    given, from the ratings the scorer made (the judge is asked once per row)."""
    from leaderboard.judges.registry import get_judge

    pack = packs["loki"]
    f = tmp_path / "p.jsonl"
    write_baseline(pack, "test", "random", f, seed=3)
    judge = get_judge("rules")
    calls = []
    rate = judge.rate_explanations
    judge.rate_explanations = lambda cases: calls.append(len(cases)) or rate(cases)
    result = score_predictions(pack, "test", f, judge=judge)
    o = result.outcomes["all"]["explanation"]
    assert o.metric == "explanation_score" and len(calls) == len(result.outcomes)  # once a part
    for slc, mod in [({}, None)] + [({"modality": m}, m) for m in o.modalities]:
        (rec,) = [r for r in result.parts["all"]
                  if r.task == "explanation" and r.metric == o.metric and r.slice == slc]
        assert point_value(o.subset(o.rows(mod))) == pytest.approx(rec.value, abs=1e-4)
    assert "explanation" not in score_predictions(pack, "test", f).outcomes["all"]
