"""The local MiniLM judge on the real packaged model (a handful of sentences, loaded once)."""
from __future__ import annotations

import numpy as np
import pytest

from leaderboard.core.taxonomy import ARTIFACT_KEYS, artifacts_for
from leaderboard.judges import ExplanationCase, JudgeError, get_judge
from leaderboard.judges.calibrate import best_threshold, calibrate


@pytest.fixture(scope="module")
def judge():
    return get_judge("local-minilm")


def test_identity_is_honest(judge):
    assert judge.identity == "local-minilm@3"
    custom = get_judge("local-minilm", thresholds={k: 0.5 for k in ARTIFACT_KEYS})
    assert custom.identity == "local-minilm@3+custom"
    v2 = get_judge("local-minilm@2")
    assert v2.identity == "local-minilm@2" and v2.thresholds != judge.thresholds
    old = get_judge("local-minilm@1")
    assert old.identity == "local-minilm@1" and old.thresholds != judge.thresholds
    assert get_judge("local-minilm@1", thresholds={k: 0.5 for k in ARTIFACT_KEYS}).identity == \
        "local-minilm@1+custom"
    with pytest.raises(JudgeError, match=r"thresholds lack artifacts \['anatomical_inc"):
        get_judge("local-minilm", thresholds={"hiss": 0.5})


def test_maps_paraphrases_and_respects_negation(judge):
    got = judge.map_artifacts([
        "Fine details are blurred.",
        "There is no visible blur in the image.",
        "The speaker's voice is robotic and monotone.",
        "",
    ])
    assert "blurriness" in got[0]
    assert got[1] == frozenset() and got[3] == frozenset()
    assert "unnatural_prosody" in got[2]


def test_candidates_restrict_the_mapping(judge):
    [got] = judge.map_artifacts(["The speaker's voice is robotic and monotone."],
                                candidates=list(artifacts_for("audio")))
    assert got <= set(artifacts_for("audio")) and "unnatural_prosody" in got


def test_scores_are_cosines_in_taxonomy_order(judge):
    scores = judge.artifact_scores(["A low electrical hum.", "No flicker at all."])
    assert scores.shape == (2, 27) and scores.dtype == np.float32
    assert scores[0].argmax() == ARTIFACT_KEYS.index("buzz")
    assert not scores[1].any()  # the only clause is negated


def test_rating_prefers_responses_that_match_the_annotation(judge):
    reference = {"global": ["the hand has six fingers"],
                 "regional": [{"region": [0, 0, 10, 10], "desc": "the text on the mug is garbled"}]}
    good, off, authentic = judge.rate_explanations([
        ExplanationCase("1", "The hand shows six fingers. The writing on the mug is gibberish.",
                        "image", reference),
        ExplanationCase("2", "The clouds in the sky repeat in a tiled pattern.", "image",
                        reference),
        ExplanationCase("3", "This image is authentic.", "image", reference),
    ])
    assert good.total > off.total >= authentic.total == 0.0
    assert good.scores["completeness"] == 5.0 and authentic.refused and not off.refused


def test_calibrate_picks_separating_thresholds(judge):
    examples = [("A steady hiss runs under the speech.", {"hiss"}),
                ("Constant high-pitched static.", {"hiss"}),
                ("The colors are far too vivid.", {"color_inconsistency"}),
                ("The person walks in a park.", set())]
    result = calibrate(examples, judge=judge)
    assert result.n_examples == 4 and result.positives["hiss"] == 2
    assert result.f1["hiss"] == 1.0
    scores = judge.artifact_scores([t for t, _ in examples])[:, ARTIFACT_KEYS.index("hiss")]
    assert scores[:2].min() >= result.thresholds["hiss"] > scores[2:].max()


def test_best_threshold_pinned():
    t, f1 = best_threshold(np.array([0.9, 0.8, 0.6, 0.4]), np.array([True, True, False, False]))
    assert t == pytest.approx(0.7) and f1 == 1.0
    # Equal F1: the higher threshold wins (precision first, as F0.5 does).
    t, f1 = best_threshold(np.array([0.9, 0.8, 0.7, 0.6]), np.array([True, False, False, True]),
                           floor=0.0)
    assert (t, f1) == (pytest.approx(0.85), pytest.approx(2 / 3))
    # No positives: just above everything seen.
    t, f1 = best_threshold(np.array([0.2, 0.6]), np.array([False, False]))
    assert t == pytest.approx(0.601) and f1 == 0.0
    with pytest.raises(ValueError, match="equal-length vectors"):
        best_threshold(np.array([0.1]), np.array([True, False]))
