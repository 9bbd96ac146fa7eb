"""Artifact mapping (`rules@3`; `rules@2`'s is frozen): pinned claims, denials, negated claims,
generic statements.

The sentences here were written for these tests, independently of the evaluation set in
`judge_eval/evalset` (which measures the judge; these pin behaviour that must not regress).
"""
from __future__ import annotations

import pytest

from leaderboard.core.taxonomy import TRIDF_ARTIFACTS, artifacts_for
from leaderboard.judges.mapping import analyze, map_response

IMAGE = list(artifacts_for("image"))
VIDEO = list(artifacts_for("video"))
AUDIO = list(artifacts_for("audio"))

CLAIMS = [
    # quality artifacts, by name and by description
    (IMAGE, "The woman's face is noticeably blurry compared with her sweater.", {"blurriness"}),
    (IMAGE, "Her eyes look soft and lack the fine detail of the rest of the photo.",
     {"blurriness"}),
    (IMAGE, "There are 8x8 compression blocks on the forehead.", {"blockiness"}),
    (IMAGE, "A sandy, speckled grain covers the cheeks.", {"noise"}),
    (IMAGE, "The sky shows clear banding instead of a smooth gradient.", {"banding"}),
    (IMAGE, "Her lips are an almost neon pink.", {"color_inconsistency"}),
    (IMAGE, "A visible seam runs along the jawline where the face was inserted.",
     {"blending_artifacts"}),
    (IMAGE, "The face is lit from the left while the rest of the scene is lit from the right.",
     {"lighting_inconsistency"}),
    (IMAGE, "The skin is waxy and has no pores at all.", {"unnatural_texture"}),
    (VIDEO, "The nose changes shape from frame to frame.", {"temporal_artifacts"}),
    (VIDEO, "The brightness of the whole frame pulses every second.", {"flicker"}),
    (AUDIO, "The loudest syllables crackle and distort.", {"clipping"}),
    (AUDIO, "A steady hiss sits under the voice.", {"hiss"}),
    (AUDIO, "There is a low electrical hum throughout.", {"buzz"}),
    (AUDIO, "I hear two sharp clicks in the middle of words.", {"pops"}),
    # semantic artifacts, described rather than named
    (IMAGE, "The mirror shows the man facing the other way.", {"reflection_inconsistency"}),
    (IMAGE, "The lamp post casts no shadow although everything else does.",
     {"shadow_inconsistency"}),
    (IMAGE, "The cup hovers a few millimetres above the saucer.", {"spatial_incoherence"}),
    (IMAGE, "Her fingers do not touch the piano keys she is supposedly playing.",
     {"spatial_incoherence"}),
    (IMAGE, "The buildings behind him have no sense of depth or perspective.",
     {"unrealistic_background"}),
    (IMAGE, "His left hand has six fingers.", {"anatomical_inconsistency"}),
    (IMAGE, "Her smile looks frozen and forced.", {"unnatural_expressions"}),
    (IMAGE, "The eyes point in different directions.", {"unnatural_gaze"}),
    (VIDEO, "He never blinks during the whole clip.", {"unnatural_gaze"}),
    (VIDEO, "Her walk is jerky and robotic.", {"unnatural_movement"}),
    (IMAGE, "The bicycle is missing its front wheel.", {"object_integrity_flaws"}),
    (IMAGE, "The shop sign is gibberish.", {"unrecognizable_text"}),
    (AUDIO, "The voice is monotone, with no variation in pitch.", {"unnatural_prosody"}),
    (VIDEO, "The lips move after the words are heard.", {"audio_visual_desync"}),
    (AUDIO, "She sounds cheerful while announcing that her father died.",
     {"emotional_contradiction"}),
    # several claims and a denial in one answer
    (IMAGE, "Likely Manipulated. No blur, but the hands are deformed and the shadows point "
     "in different directions.", {"anatomical_inconsistency", "shadow_inconsistency"}),
    (IMAGE, "1. Blockiness - visible square tiles.\n2. Noise: none.\n3. Lighting: inconsistent.",
     {"blockiness", "lighting_inconsistency"}),
]

DENIALS = [
    (IMAGE, "The lighting appears consistent across the scene.", {"lighting_inconsistency"}),
    (IMAGE, "Consistent lighting direction; shadows agree with the sun.",
     {"lighting_inconsistency", "shadow_inconsistency"}),
    (IMAGE, "I see no blurring, blocking or banding.", {"blurriness", "blockiness", "banding"}),
    (IMAGE, "The image is free of noise and the colours look natural.",
     {"noise", "color_inconsistency"}),
    (IMAGE, "There is no visible seam around the face.", {"blending_artifacts"}),
    (IMAGE, "Skin texture looks natural, with visible pores.", {"unnatural_texture"}),
    (IMAGE, "Five fingers on each hand; the anatomy is correct.", {"anatomical_inconsistency"}),
    (IMAGE, "The text on the sign is legible.", {"unrecognizable_text"}),
    (IMAGE, "The reflection in the window is geometrically correct.",
     {"reflection_inconsistency"}),
    (VIDEO, "Lip sync is tight and the voice sounds natural.",
     {"audio_visual_desync", "unnatural_prosody"}),
    (VIDEO, "No flicker and no jitter between frames.", {"flicker", "temporal_artifacts"}),
    (VIDEO, "Head movements are smooth and natural.", {"unnatural_movement"}),
    (AUDIO, "No hiss, hum, clicks or clipping.", {"hiss", "buzz", "pops", "clipping"}),
    (AUDIO, "Natural intonation, and the emotion matches the words.",
     {"unnatural_prosody", "emotional_contradiction"}),
    (IMAGE, "Blur: none\nNoise: not present\nBanding: absent", {"blurriness", "noise",
                                                                 "banding"}),
    (IMAGE, "The grain is ordinary sensor noise, not an artifact.", {"noise"}),
]

NOTHING = [
    (IMAGE, "Likely Authentic. No artifacts found."),
    (IMAGE, "Deepfakes often show blurry edges, warped text or extra fingers; I cannot confirm "
     "any of these here."),
    (VIDEO, "Detecting deepfakes usually involves checking lip sync, blinking and flicker."),
    (VIDEO, "I can't hear the audio, so I can't assess lip sync or the voice."),
    (AUDIO, "A man talks about the weather; there is some crowd noise in the background."),
    (IMAGE, "If there were banding, it would show in the sky."),
    (IMAGE, '{"verdict": "authentic", "blurriness": false, "noise": false}'),
]


@pytest.mark.parametrize("keys, text, expected", CLAIMS)
def test_claims(keys, text, expected):
    assert map_response(text, keys) == expected


@pytest.mark.parametrize("keys, text, denied", DENIALS)
def test_denials_map_nothing_and_are_seen(keys, text, denied):
    result = analyze(text, keys)
    assert result.claimed == frozenset()
    assert denied <= result.denied


@pytest.mark.parametrize("keys, text", NOTHING)
def test_nothing_to_find(keys, text):
    assert map_response(text, keys) == frozenset()


def test_negated_claims_are_claims():
    """A flaw worded with a negation is a claim (issue 18's examples)."""
    assert map_response("The person casts no shadow.", IMAGE) == {"shadow_inconsistency"}
    assert map_response("She doesn't blink once.", VIDEO) == {"unnatural_gaze"}
    assert map_response("A robotic monotone with no variation in pitch.", AUDIO) == {
        "unnatural_prosody"}
    assert map_response("Consistent shadows, and the lighting looks natural.", IMAGE) == set()


def test_candidates_restrict_to_the_modality():
    text = "Static hiss, a blurry face and lips out of sync with the speech."
    assert map_response(text, AUDIO) == {"hiss"}
    assert map_response(text, IMAGE) == {"blurriness"}
    assert map_response(text, VIDEO) == {"blurriness", "audio_visual_desync"}


def test_a_self_correction_retracts_the_claim():
    text = ("The shadow falls the wrong way. Wait - the sun is behind her, so let me correct: "
            "the shadow is consistent.")
    assert map_response(text, IMAGE) == set()


@pytest.mark.parametrize("artifact", TRIDF_ARTIFACTS, ids=lambda a: a.key)
def test_every_artifact_name_and_key_maps_to_itself(artifact):
    """A detector that answers with the taxonomy's own words is understood."""
    keys = list(artifacts_for(artifact.modalities[0]))
    assert map_response(f"{artifact.name}.", keys) == {artifact.key}
    assert map_response(f"{artifact.key.replace('_', ' ')}: yes", keys) == {artifact.key}


def test_prefilter_literals_are_sound():
    """Every match of a rule's first pattern contains one of its literals (the mapper skips
    the rule otherwise)."""
    import re

    from leaderboard.judges.mapping.prefilter import required_literals, trie_regex

    lit = required_literals(re.compile(r"\bblur(?:ry|red)?\b|out[- ]of|(?:six|seven)\s+fingers",
                                       re.I))
    assert lit == {"blur", "blurry", "blurred", "out-of", "out of", "fingers"}
    assert required_literals(re.compile(r"\bs{3,}h*\b", re.I)) == {"sss"}
    assert required_literals(re.compile(r"\w+\s+\w+", re.I)) is None
    words = ["blur", "blurry", "block", "no", "noise"]
    scan = re.compile(trie_regex(words))
    assert all(scan.fullmatch(w) for w in words) and not scan.fullmatch("blo")


def test_section_headings_frame_their_items():
    text = ("Likely Manipulated.\n\nFindings:\n- blurry edges around the face\n\n"
            "Not observed:\n- banding\n- warped text\n\nTypical indicators to check:\n"
            "- extra fingers")
    result = analyze(text, IMAGE)
    assert result.claimed == {"blurriness"}
    assert {"banding", "unrecognizable_text"} <= result.denied


def test_structured_answers():
    assert map_response('{"artifacts": ["unnatural_texture", "lighting_inconsistency"]}',
                        IMAGE) == {"unnatural_texture", "lighting_inconsistency"}
    assert map_response('{"noise": {"present": false, "location": "face"}}', IMAGE) == set()
    table = "| Artifact | Present |\n|---|---|\n| Blurriness | Yes |\n| Noise | No |"
    assert map_response(table, IMAGE) == {"blurriness"}
    assert map_response("NOIZE ON THE FACE AND THE BACKROUND IS WARPED", IMAGE) == {
        "noise", "unrealistic_background"}


def test_legacy_identities_stay_buildable():
    from leaderboard.judges import get_judge

    old, new = get_judge("rules@1"), get_judge("rules")
    assert (old.identity, new.identity) == ("rules@1", "rules@3")
    assert get_judge("rules@2").identity == "rules@2"
    text = "Consistent lighting direction."  # rules@1 read "direction" as a flaw
    assert old.map_artifacts([text], candidates=IMAGE) == [{"lighting_inconsistency"}]
    assert new.map_artifacts([text], candidates=IMAGE) == [set()]


# rules@3 (issue 18, round 2). Sentences written for these tests, not taken from the set.
ROUND2_CLAIMS = [
    (AUDIO, "The caller says his house just burned down, yet he sounds giddy.",
     {"emotional_contradiction"}),
    (AUDIO, "She apologises for the delay but doesn't sound sorry in the least.",
     {"emotional_contradiction"}),
    (AUDIO, "Each word is equally spaced, like a metronome.", {"unnatural_prosody"}),
    (AUDIO, "Not one breath in forty seconds of talking.", {"unnatural_prosody"}),
    (IMAGE, "The poster's slogan is made of shapes that aren't letters.",
     {"unrecognizable_text"}),
    (IMAGE, "The menu is written in an invented alphabet.", {"unrecognizable_text"}),
    (IMAGE, "The shop window mirrors the parked cars but not the man standing in front of it.",
     {"reflection_inconsistency"}),
    (IMAGE, "The teapot has no spout, and the other teapot has two spouts.",
     {"object_integrity_flaws"}),
    (IMAGE, "When she grins there is a double row of teeth on top.",
     {"anatomical_inconsistency"}),
    (IMAGE, "Every child in the class photo wears the same smile.", {"unnatural_expressions"}),
    (IMAGE, "The lamp casts its light, the vase casts none.", {"shadow_inconsistency"}),
    (IMAGE, "The fork continues straight into her hand.", {"spatial_incoherence"}),
    (IMAGE, "There is a faint line where the face meets the neck.", {"blending_artifacts"}),
    (IMAGE, "If this were a clip I would check for flicker, but here the colours are "
     "oversaturated.", {"color_inconsistency"}),
    (VIDEO, "The vase is blue one moment and green the next.", {"temporal_artifacts"}),
    (VIDEO, "The bus moves along the street while its wheels don't turn.",
     {"unnatural_movement"}),
    (VIDEO, "Her mouth doesn't move during the first three words.", {"audio_visual_desync"}),
    (VIDEO, "A car crashes behind him and his face stays perfectly calm.",
     {"unnatural_expressions"}),
    (VIDEO, "His face is lit from the right, while the only lamp in the room is on his left.",
     {"lighting_inconsistency"}),
    (IMAGE, "The coffee cup sits half inside the table top.", {"spatial_incoherence"}),
    (IMAGE, "Her face is much warmer in tone than her hands.", {"color_inconsistency"}),
    (VIDEO, "He walks without his arms moving at all.", {"unnatural_movement"}),
    (VIDEO, "The voice starts a moment before the mouth opens.", {"audio_visual_desync"}),
    (VIDEO, "Her reflection in the window is a frame behind her.", {"reflection_inconsistency"}),
    (VIDEO, "The background behind him is a frozen still while the camera moves.",
     {"unrealistic_background"}),
    (AUDIO, "A soft white-noise wash is audible in the gaps.", {"hiss"}),
    (AUDIO, "There are little tick sounds between words.", {"pops"}),
    (AUDIO, "He laughs while saying his dog just died.", {"emotional_contradiction"}),
]
ROUND2_NOTHING = [
    # a verdict names no artifact (labelling rule 4)
    (AUDIO, "Fake. It just sounds synthetic to me."),
    # a label that frames its item as fine or absent
    (AUDIO, "**Title:** Buzz (no issue)\n**Reason:** Nothing audible."),
    (AUDIO, "Not present: hiss, hum, clicks."),
    (AUDIO, "The hiss is negligible."),
    (AUDIO, "There is a faint hum, not a buzz artifact but the fridge."),
    # an authentic conclusion: checklist items are findings of fine
    (IMAGE, "Likely Authentic.\n\n**Eyes.** Both look at the lens, each with the same "
     "catchlight.\n\n**Hands.** Five fingers each.\n\nNothing here suggests manipulation."),
    (VIDEO, "Audience noise and a cough are audible; the dancers move naturally."),
    (VIDEO, "Objects keep their shape from frame to frame."),
    (IMAGE, "As if the background were pasted from a compressed JPEG, there are 8x8 blocks."),
    # generic statements about fakes of this kind, and checklists
    (VIDEO, "Things I would normally check: lip sync, blinking, flicker. None of them can be "
     "evaluated from this thumbnail."),
    (IMAGE, "A deepfake of this kind would usually betray itself through warped hands or garbled "
     "text; here I see neither."),
    (AUDIO, "To decide, I'd listen for hiss, hum and clicks; the clip is too short for that."),
]


@pytest.mark.parametrize("keys, text, expected", ROUND2_CLAIMS)
def test_round2_claims(keys, text, expected):
    assert map_response(text, keys) == expected


@pytest.mark.parametrize("keys, text", ROUND2_NOTHING)
def test_round2_nothing_semantic(keys, text):
    assert map_response(text, keys) <= {"blockiness"}


def test_an_authentic_conclusion_keeps_a_benign_signal_claim():
    text = ("Likely Authentic. The only flaw is heavy grain from a cheap sensor in low light. "
            "The shadows and reflections agree. Nothing suggests manipulation.")
    assert map_response(text, IMAGE) == {"noise"}
    fake = text.replace("Likely Authentic.", "Likely Manipulated.").replace(
        "The shadows and reflections agree.", "The shadows point in two directions.")
    assert "shadow_inconsistency" in map_response(fake, IMAGE)


def test_rules_at_2_is_frozen():
    """rules@2 keeps its round-1 mapping (records stored under it stay reproducible)."""
    from leaderboard.judges import get_judge

    v2, v3 = get_judge("rules@2"), get_judge("rules")
    text = "Each word is equally spaced, like a metronome."
    assert v2.map_artifacts([text], candidates=AUDIO) == [set()]
    assert v3.map_artifacts([text], candidates=AUDIO) == [{"unnatural_prosody"}]
