"""SynCred false-negative attribution from rationales (seed 002, "false-negative attribution")."""
from __future__ import annotations

import pytest

from leaderboard.core.baselines import baseline_rows
from leaderboard.core.packs import load_pack
from leaderboard.core.scoring import score_predictions
from leaderboard.judges import get_judge
from leaderboard.judges.base import Judge
from leaderboard.judges.causes import CAUSE_KEYS, attribute
from tests.server.judges.conftest import write_rows

RATIONALES = (
    "The layout follows an official notice template and the fonts are consistent.",
    "This is a screenshot of an app interface with a normal status bar.",
    "The lighting and camera perspective look like a real phone photo. No visible AI artifacts.",
    "It is not a screenshot and there is no camera glare.",
    "版式规范，字体清晰，没有明显伪影。",
)


@pytest.mark.parametrize("text, expected", [
    (RATIONALES[0], {"layout_template", "typography"}),
    (RATIONALES[1], {"interface_conventions"}),
    (RATIONALES[2], {"camera_lighting", "no_visible_artifacts"}),
    (RATIONALES[3], set()),  # denied keywords name no cause
    (RATIONALES[4], {"layout_template", "typography", "no_visible_artifacts"}),
    ("No inconsistencies in the layout.", {"layout_template", "no_visible_artifacts"}),
    ("The image shows signs of AI generation.", set()),  # a flaw asserted is no cause
])
def test_attribute(text, expected):
    assert attribute(text) == frozenset(expected)
    assert set(attribute(text)) <= set(CAUSE_KEYS)


class NoCauses(Judge):
    name, version = "nocauses", "1"


def _predictions(pack, tmp_path):
    rows = list(baseline_rows(pack, "dev", "random", seed=3))
    for i, row in enumerate(rows):
        row["rationale"] = RATIONALES[i % len(RATIONALES)]
    path = tmp_path / "p.jsonl"
    write_rows(path, rows)
    return rows, path


def test_syncred_emits_fn_cause_records_with_the_judge(packs, tmp_path):
    pack = load_pack(packs["syncred"])
    rows, path = _predictions(pack, tmp_path)
    result = score_predictions(pack, "dev", path, judge=get_judge("rules"), n_resamples=50)
    recs = {r.metric: r for r in result.records if r.metric.startswith("fn_cause_")}
    assert set(recs) == {f"fn_cause_{k}" for k in CAUSE_KEYS}
    assert all(r.judge == "rules@3" for r in recs.values())
    assert not [p for p in result.pending if p["metric"] == "fn_attribution"]
    # check the shares against the rationales of the false negatives, computed here
    labels = pack.labels("dev")
    fake = {str(i): labels.value("label", j) == "fake" for j, i in enumerate(labels.ids.tolist())}
    fns = [r["rationale"] for r in rows if fake[r["id"]] and r["label"] == "real"]
    assert fns and recs["fn_cause_typography"].n == len(fns)
    for key in CAUSE_KEYS:
        want = sum(key in attribute(t) for t in fns) / len(fns)
        assert recs[f"fn_cause_{key}"].value == pytest.approx(want)


@pytest.mark.parametrize("judge", [None, NoCauses()])
def test_syncred_attribution_pending_without_a_capable_judge(packs, tmp_path, judge):
    pack = load_pack(packs["syncred"])
    _, path = _predictions(pack, tmp_path)
    result = score_predictions(pack, "dev", path, judge=judge, n_resamples=50)
    assert not [r for r in result.records if r.metric.startswith("fn_cause_")]
    assert [p for p in result.pending if p["metric"] == "fn_attribution"]
