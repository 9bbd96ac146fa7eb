import math

import numpy as np
import pytest

from leaderboard.core.metrics import choice, composite, hallucination


def row(letters, m=5):
    return [chr(65 + i) in letters for i in range(m)]


@pytest.mark.parametrize("selected, correct, expected", [
    ("A", "A", 1.0),
    ("AC", "AB", 1 / 2 - 1 / 3),          # K=2, M-K=3: one hit, one false pick
    ("CD", "A", 0 - 2 / 4),
    ("ABCDE", "A", 1 - 4 / 4),             # selecting everything: no better than chance
    ("", "AB", 0.0),                       # empty / unparsable answer: no credit, no penalty
    ("E", "E", 1.0),
    ("ABCDE", "ABCDE", 1.0),               # K = M: no wrong option, the penalty term is 0
    ("AB", "ABCDE", 2 / 5),
])
def test_mcq_formula(selected, correct, expected):
    got = choice.mcq_scores(selected=[row(selected)], correct=[row(correct)])
    assert got.tolist() == [pytest.approx(expected)]


def test_mcq_clamp_and_mean():
    sel = [row("CD"), row("A")]
    cor = [row("A"), row("A")]
    assert choice.mcq_scores(selected=sel, correct=cor, clamp=True).tolist() == [0.0, 1.0]
    assert choice.mcq_mean(selected=sel, correct=cor) == pytest.approx(0.25)
    assert math.isnan(choice.mcq_mean(selected=np.zeros((0, 5), bool), correct=np.zeros((0, 5), bool)))


def test_mcq_validation():
    with pytest.raises(ValueError, match="row 1"):
        choice.mcq_scores(selected=[row("A"), row("A")], correct=[row("A"), row("")])
    with pytest.raises(ValueError, match="same shape"):
        choice.mcq_scores(selected=[row("A", 4)], correct=[row("A")])
    with pytest.raises(ValueError, match="2-D"):
        choice.mcq_scores(selected=row("A"), correct=row("A"))


def arts(keys, n=6):
    return [i in keys for i in range(n)]


def test_artifact_scores_pinned():
    s = hallucination.artifact_scores(
        predicted=[arts({0, 1}), arts(set()), arts({0}), arts({0, 1}), arts({2}), arts({3})],
        truth=[arts({0, 2}), arts({0}), arts({0}), arts({0, 1}), arts(set()), arts({3})],
        answered=[True, True, True, False, True, True],
        called_authentic=[False, False, False, False, False, True],
    )
    # 0: hits 1, |Y| 2, |R| 2 -> Cover .5, CHAIR .5, F0.5 = 1.25*.5*.5/(.125+.5) = .5
    # 1: R empty -> Cover 0, CHAIR 1, F0.5 0
    # 2: perfect -> Cover 1, CHAIR 0, Hal 0, F0.5 1
    # 3: missing prediction -> Cover 0, CHAIR 1, Hal 1
    # 4: |Y| = 0 -> does not count
    # 5: fake called authentic (type B) -> CHAIR 1 even though R matches; F0.5 0
    np.testing.assert_allclose(s.cover, [0.5, 0, 1, 0, np.nan, 1])
    np.testing.assert_allclose(s.chair, [0.5, 1, 0, 1, np.nan, 1])
    np.testing.assert_allclose(s.hal, [1, 1, 0, 1, np.nan, 1])
    np.testing.assert_allclose(s.f05, [0.5, 0, 1, 0, np.nan, 0])
    assert s.counted.tolist() == [True, True, True, True, False, True]


def test_f05_uses_beta_half():
    # precision 1 (CHAIR 0), recall (Cover) 1/3: F0.5 = 1.25 * 1/3 / (0.25 + 1/3) = 5/7.
    s = hallucination.artifact_scores(predicted=[arts({0})], truth=[arts({0, 1, 2})], answered=[True])
    assert s.f05[0] == pytest.approx(5 / 7)
    assert s.chair[0] == 0.0 and s.hal[0] == 0.0


def test_artifact_means_skip_uncounted_and_empty():
    means = hallucination.artifact_means(predicted=[arts({0}), arts({1})], truth=[arts({0}), arts(set())],
                                         answered=[True, True])
    assert means == {"cover": 1.0, "chair": 0.0, "hal": 0.0, "f05": 1.0}
    empty = hallucination.artifact_means(predicted=np.zeros((0, 27), bool), truth=np.zeros((0, 27), bool),
                                         answered=np.zeros(0, bool))
    assert all(math.isnan(v) for v in empty.values())


def test_tcs_pinned_and_tie_break():
    got = composite.tridf_tcs(acc_typeb=0.8, f05_a=0.5, f05_b=0.3, acc_tfq=0.7, mcq_clamped=0.5)
    assert got == composite.TCS(tcs=0.4 * 80 + 0.3 * 40 + 0.3 * 60, s_det=80.0, s_hal=40.0, s_perc=60.0)
    a = composite.TCS(60.0, 70.0, 50.0, 55.0)
    b = composite.TCS(60.0, 70.0, 52.0, 50.0)
    c = composite.TCS(61.0, 10.0, 10.0, 10.0)
    missing = composite.tridf_tcs(acc_typeb=None, f05_a=0.5, f05_b=0.3, acc_tfq=0.7, mcq_clamped=0.5)
    assert math.isnan(missing.tcs)
    ranked = sorted([missing, a, b, c], key=composite.tcs_sort_key)
    assert ranked[:3] == [c, b, a] and ranked[3] is missing
    with pytest.raises(ValueError, match="mcq_clamped"):
        composite.tridf_tcs(acc_typeb=0.8, f05_a=0.5, f05_b=0.3, acc_tfq=0.7, mcq_clamped=-0.2)


def test_mcq_counts_the_options_each_question_lists():
    """M per question, as the authors' scorers count each question's lettered lines
    (TriDF ``score_perception_original.score_mc_answer`` at f041a19; TRIDENT
    ``evaluate_predictions._score_mcq_selection`` at 985d8fb); values derived by hand from them."""
    from leaderboard.core.benchmarks.tridf_kit import kit_mcq_scores

    correct = np.array([[1, 0, 0, 0, 0], [1, 1, 1, 1, 0]], dtype=bool)
    offered = np.array([[1, 1, 1, 1, 0], [1, 1, 1, 1, 0]], dtype=bool)
    picks_ab = np.array([[1, 1, 0, 0, 0], [1, 1, 1, 1, 0]], dtype=bool)
    assert choice.mcq_scores(selected=picks_ab, correct=correct, offered=offered).tolist() == \
        pytest.approx([1 - 1 / 3, 1.0])
    assert choice.mcq_scores(selected=picks_ab, correct=correct).tolist() == \
        pytest.approx([1 - 1 / 4, 1.0])                     # five options listed: 1 - 1/4
    with pytest.raises(ValueError, match="does not offer"):
        choice.mcq_scores(selected=[[1, 0, 0, 0, 1]], correct=correct[:1], offered=offered[:1])
    # the kit keeps a letter the question does not list, as a wrong pick, over max(M - K, 1)
    picks_ae = np.array([[1, 0, 0, 0, 1], [1, 1, 1, 1, 1]], dtype=bool)
    assert kit_mcq_scores(picks_ae, correct, offered).tolist() == pytest.approx([1 - 1 / 3, 0.0])
    assert kit_mcq_scores(picks_ab, correct, offered).tolist() == pytest.approx([1 - 1 / 3, 1.0])
