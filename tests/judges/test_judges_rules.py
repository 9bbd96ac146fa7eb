"""The rule-based judge: pinned mappings (negation included) and the overlap rater."""
from __future__ import annotations

import pytest

from leaderboard.core.taxonomy import artifacts_for
from leaderboard.judges import ExplanationCase, JudgeError, get_judge


@pytest.fixture(scope="module")
def judge():
    return get_judge("rules")


PINNED = [
    ("The face is blurry.", {"blurriness"}),
    ("There is no visible blur in the image.", set()),
    ("The video plays without any flicker.", set()),
    ("The clip flickers constantly.", {"flicker"}),
    ("No blur, noise or banding is present, but the lighting is inconsistent.",
     {"lighting_inconsistency"}),
    ("There is no blur and the lighting doesn't match the background.",
     {"lighting_inconsistency"}),
    ("The shadows point in different directions.", {"shadow_inconsistency"}),
    ("The shadows look natural.", set()),
    ("The person casts no shadow on the floor.", {"shadow_inconsistency"}),
    ("The subject never blinks and stares into the camera.", {"unnatural_gaze"}),
    ("The speaker blinks naturally.", set()),
    ("The feet do not touch the ground; the person appears to float.", {"spatial_incoherence"}),
    ("The text on the sign is garbled gibberish.", {"unrecognizable_text"}),
    ("The text on the sign is legible.", set()),
    ("The skin looks overly smooth, like plastic.", {"unnatural_texture"}),
    ("The voice is monotonous and robotic.", {"unnatural_prosody"}),
    ("Lip movements do not match the audio.", {"audio_visual_desync"}),
    ("The lips are not out of sync.", set()),
    ("The hand has six fingers.", {"anatomical_inconsistency"}),
    ("Visible blending boundary around the jawline.", {"blending_artifacts"}),
    ("The face is seamlessly blended.", set()),
    ("Colors are oversaturated.", {"color_inconsistency"}),
    ("Likely Authentic. No artifacts detected.", set()),
    ("There is a faint hiss and a low-frequency hum in the background.", {"hiss", "buzz"}),
    ("The earrings are mismatched.", {"object_integrity_flaws"}),
    ("Frame-to-frame jitter around the mouth.", {"temporal_artifacts"}),
    ("The head movement is jerky and unnatural.", {"unnatural_movement"}),
    ("Lighting is consistent and shadows are accurate; the hands look natural.", set()),
    ("Likely Manipulated\n- Blurriness: the left cheek is soft.\n- Noise: none observed.\n"
     "- Unnatural texture: waxy skin.", {"blurriness", "unnatural_texture"}),
]


@pytest.mark.parametrize("response, expected", PINNED)
def test_pinned_mappings(judge, response, expected):
    assert judge.map_artifacts([response]) == [frozenset(expected)]


def test_candidates_restrict_the_mapping(judge):
    response = "Static hiss, grainy noise and a blurry face."
    assert judge.map_artifacts([response]) == [frozenset({"hiss", "noise", "blurriness"})]
    assert judge.map_artifacts([response], candidates=list(artifacts_for("audio"))) == [
        frozenset({"hiss"})]


@pytest.mark.parametrize("bad, message", [
    (["blur"], r"unknown artifact key\(s\) \['blur'\]"),
    ([], "at least one artifact key"),
    ("hiss", "got the string 'hiss'"),
])
def test_bad_candidates_are_named(judge, bad, message):
    with pytest.raises(ValueError, match=message):
        judge.map_artifacts(["x"], candidates=bad)


def test_a_single_string_is_not_a_batch(judge):
    with pytest.raises(ValueError, match="got a single string"):
        judge.map_artifacts("The face is blurry.")


REFERENCE = {"global": [{"desc": "The hand has six fingers and the fingers are fused."}],
             "regional": [{"region": [1, 2, 3, 4], "desc": "The text on the mug is garbled."},
                          {"region": [5, 6, 7, 8], "desc": "The shadow of the mug is missing."}]}


def case(response, **kw):
    return ExplanationCase(**{"item_id": "i1", "modality": "image", "reference": REFERENCE,
                              "response": response, **kw})


def test_rating_rewards_matching_the_annotation(judge):
    good, partial, off = judge.rate_explanations([
        case("The hand has six fused fingers. The text on the mug is garbled. The mug has no "
             "shadow, the shadow is missing."),
        case("The hand has six fingers."),
        case("The sky has an odd purple gradient and the clouds repeat."),
    ])
    assert good.total > partial.total > off.total
    assert set(good.scores) == {"overall", "completeness", "correctness", "plausibility"}
    assert good.scores["completeness"] == 5.0 and good.scores["plausibility"] == 5.0
    assert off.scores["plausibility"] == 0.0
    assert good.total == pytest.approx(100 * sum(good.scores.values()) / 20, abs=1e-3)
    assert good.rationale.startswith("token overlap")


@pytest.mark.parametrize("response", [
    "The image is authentic.", "Likely Authentic.", "I'm sorry, but I can't help with that.", "",
])
def test_refusal_or_authentic_scores_zero(judge, response):
    [rating] = judge.rate_explanations([case(response)])
    assert rating.refused and rating.total == 0.0


def test_video_and_3d_rubrics(judge):
    video = ExplanationCase("v1", "The basketball passes through the hoop and the flames look "
                                  "abnormal.", "video",
                            {"global": ["flickering fences"],
                             "segment": [{"desc": "basketball passes through the hoop"}]})
    mesh = ExplanationCase("m1", "The texture is blurry across views; the surface has abnormal "
                                 "protrusions.", "3d",
                           {"texture": ["texture blurriness"], "normal": ["abnormal protrusions"]})
    v, m = judge.rate_explanations([video, mesh])
    assert set(v.scores) == {"correctness", "explanation_quality", "plausibility"}
    assert 0 < v.scores["correctness"] <= 10
    assert set(m.scores) == {"texture_correctness", "texture_plausibility",
                             "normal_correctness", "normal_plausibility"}
    assert m.scores["normal_correctness"] == 5.0


@pytest.mark.parametrize("kw, message", [
    ({"modality": "audio"}, "modality must be one of"),
    ({"reference": {"globl": ["x"]}}, r"reference group\(s\) \['globl'\] not allowed"),
    ({"reference": {"global": [{"region": [1, 2, 3, 4]}]}}, r"needs a non-empty 'desc'"),
    ({"reference": {"global": []}}, "has no descriptions"),
    ({"item_id": ""}, "item_id must be a non-empty string"),
])
def test_explanation_case_validation(kw, message):
    with pytest.raises(ValueError, match=message):
        case("x", **kw)


def test_unknown_judge_is_named():
    with pytest.raises(JudgeError, match=r"unknown judge 'gpt'; available: \['hybrid-minilm', "
                                         r"'local-minilm', 'openai', 'rules'\] and "
                                         r"\['local-minilm@1', 'local-minilm@2', 'rules@1', "
                                         r"'rules@2'\]"):
        get_judge("gpt")
