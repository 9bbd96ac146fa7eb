"""Taxonomy data, the LOKI rubric, text helpers, the cache and versioned files."""
from __future__ import annotations

import hashlib
import json

import pytest

from leaderboard.core import rubric, taxonomy
from leaderboard.judges import (
    ArtifactCase,
    ExplanationCase,
    MemoryJudgeCache,
    Rating,
    get_judge,
    judge_batch,
    text,
)
from leaderboard.judges.cache import JudgeCache, cache_key
from leaderboard.judges.calibrate import DATA_PATH
from leaderboard.judges.minilm import THRESHOLDS_PATH
from leaderboard.judges.templates import PROMPT_DIR, load_prompt

PACKAGE = PROMPT_DIR.parent


def test_taxonomy_has_the_27_artifacts():
    arts = taxonomy.TRIDF_ARTIFACTS
    assert len(arts) == 27 == len(set(taxonomy.ARTIFACT_KEYS))
    assert taxonomy.ARTIFACT_KEYS == tuple(a.key for a in arts)
    assert sum(a.type == "quality" for a in arts) == 14  # TriDF table 5
    assert all(a.type in taxonomy.ARTIFACT_TYPES and a.definition and a.modalities
               and set(a.modalities) <= set(taxonomy.MODALITIES) for a in arts)
    assert [a.key for a in arts if a.defined_by != "paper"] == [
        "audio_visual_desync", "emotional_contradiction"]
    assert taxonomy.ARTIFACTS_BY_KEY["hiss"].definition.startswith("High-frequency static noise")
    assert taxonomy.artifacts_for("audio") == ("clipping", "hiss", "buzz", "pops",
                                               "unnatural_prosody", "emotional_contradiction")
    with pytest.raises(ValueError, match="modality must be one of"):
        taxonomy.artifacts_for("3d")


@pytest.mark.parametrize("response, expected", [
    ("The image is authentic.", True),
    ("It appears to be a real photograph.", True),
    ("Likely Authentic\nNo artifacts.", True),
    ("I cannot determine whether this is real.", True),
    ("There are no signs of manipulation.", True),
    ("This image is not authentic: the hands are distorted.", False),
    ("The video is not real.", False),
    ("The sky looks realistic but the hands are wrong.", False),
    ("There are no signs of manipulation in the sky, but the face is warped.", False),
])
def test_refusal_or_authentic(response, expected):
    assert rubric.is_refusal_or_authentic(response) is expected


def test_rubric_totals_are_out_of_20_points():
    for modality, crit in rubric.CRITERIA.items():
        assert sum(crit.values()) == 20
        full = {k: float(v) for k, v in crit.items()}
        assert rubric.total_of(full, modality=modality) == 100.0
    assert rubric.total_of({"correctness": 5, "explanation_quality": 5, "plausibility": 0},
                           modality="video") == 50.0
    with pytest.raises(ValueError, match=r"miss criteria \['plausibility'\]"):
        rubric.total_of({"correctness": 5, "explanation_quality": 5}, modality="video")


def test_rating_round_trips_through_json():
    r = Rating.from_scores({"overall": 4, "completeness": 3, "correctness": 2,
                            "plausibility": 5}, modality="image", rationale="ok")
    assert r.total == 70.0
    assert Rating.from_dict(json.loads(json.dumps(r.as_dict()))) == r


@pytest.mark.parametrize("clause, negated", [
    ("no visible blur", True), ("without any flicker", True), ("the lighting looks natural", True),
    ("blur is not present", True), ("the eyes never blink", False),
    ("the lighting is not consistent", False), ("the mouth is not in sync", False),
    ("the face is blurry", False),
])
def test_clause_negation(clause, negated):
    assert text.clause_is_negated(clause) is negated


def test_clauses_split_at_contrast_and_new_subjects():
    assert text.clauses("No blur, noise or banding, but the lighting is off. The eyes stare; "
                        "it is odd") == ["No blur, noise or banding", "the lighting is off",
                                         "The eyes stare", "it is odd"]


class CountingRules:
    """The rules judge, counting what reaches it (to see cache hits)."""

    def __init__(self):
        self.inner = get_judge("rules")
        self.identity = self.inner.identity
        self.calls: list[int] = []

    def map_artifacts(self, responses, *, candidates=None):
        self.calls.append(len(responses))
        return self.inner.map_artifacts(responses, candidates=candidates)

    def rate_explanations(self, items):
        self.calls.append(len(items))
        return self.inner.rate_explanations(items)


def test_judge_batch_only_calls_the_judge_for_misses():
    judge, cache = CountingRules(), MemoryJudgeCache()
    assert isinstance(cache, JudgeCache)
    cases = [ArtifactCase("a", "The face is blurry."),
             ArtifactCase("b", "A loud hiss.", candidates=("hiss", "buzz")),
             ArtifactCase("c", "No flicker.")]
    first = judge_batch(judge, cases, cache)
    assert first == [frozenset({"blurriness"}), frozenset({"hiss"}), frozenset()]
    assert sorted(judge.calls) == [1, 2] and len(cache) == 3  # grouped by candidates
    assert judge_batch(judge, cases, cache) == first and sorted(judge.calls) == [1, 2]
    changed = [cases[0], ArtifactCase("b", "A loud buzz.", candidates=("hiss", "buzz"))]
    assert judge_batch(judge, changed, cache) == [frozenset({"blurriness"}), frozenset({"buzz"})]
    assert judge.calls[-1] == 1  # only the changed response was judged


def test_judge_batch_caches_ratings_per_judge_identity():
    judge, cache = CountingRules(), MemoryJudgeCache()
    case = ExplanationCase("e1", "The hand has six fingers.", "image",
                           {"global": ["the hand has six fingers"]})
    [r1] = judge_batch(judge, [case], cache)
    [r2] = judge_batch(judge, [case], cache)
    assert r1 == r2 and judge.calls == [1]
    key = cache_key(case, judge)
    assert key.judge == "rules@3" and key.kind == "rating"
    assert key.response_sha256 == hashlib.sha256(b"The hand has six fingers.").hexdigest()
    judge.identity = "rules@4"
    judge_batch(judge, [case], cache)
    assert judge.calls == [1, 1]
    with pytest.raises(ValueError, match="a batch must be all ExplanationCase"):
        judge_batch(judge, [case, ArtifactCase("x", "y")], cache)


# Versioned files are never edited in place: a change is a new file and a new judge version.
PINNED_SHA256 = {
    "prompts/loki_3d_v1.txt":
        "5ca627770297804fc849ed0b89d620bb1e419fbab088e22599b821cffa5cfc3e",
    "prompts/loki_image_v1.txt":
        "ffc37185aeb6a565611d19db179d6f37541eb726ceba4a89ccb6285ad28f3e8a",
    "prompts/loki_video_v1.txt":
        "cf58485fcc8006e545617467e15a10bdd5a19a5cb3cf2a5e048eaae1efbafb9e",
    "prompts/tridf_artifacts_v1.txt":
        "97395ce63854532f360ece26e3848428f4dacb812631693ae5a1f5636a2b8c26",
    "thresholds/local-minilm_v1.json":
        "4e34dbec9e831fd72a85ea4fa97c1e3b4c9216936528cf409d378d3d18dc0d62",
    "thresholds/local-minilm_v2.json":
        "76f2a949ea4ae711e00b7a417752d72c7cd5e3d7219eec4d177c765c7f9cc304",
    # hybrid-minilm@1's fitted weights and exemplar bank (leaderboard.judges.hybrid_fit)
    "thresholds/hybrid-minilm_v1.json":
        "c36f083af66feb8aaec72488109e5c468a85ba76cc180fc293bd6370b3f63264",
    "thresholds/hybrid-minilm_v1_bank.npy":
        "9811576b55355c2d1e68b2245aca462d3dc8935c9d536cb5db6a3edfe054d964",
    "thresholds/local-minilm_v3.json":
        "702c0f4c9fb06429d80a67c5193bb1edff47edbe7d8a4bfaa4308289f2009f1e",
}


def test_versioned_files_are_unchanged():
    for name in sorted(p.name for p in PROMPT_DIR.glob("*.txt")):
        prompt = load_prompt(name.removesuffix(".txt"))
        assert prompt.system and "$response" in prompt.user.template
    for name, digest in PINNED_SHA256.items():
        actual = hashlib.sha256((PACKAGE / name).read_bytes()).hexdigest()
        assert actual == digest, f"{name} changed: add a new _vN file and bump the judge version"


def test_shipped_thresholds_come_from_the_shipped_calibration_sets():
    """@1 from the hand-written calibration file; @2 from the first batch's dev part, the current
    version from today's dev part of the evaluation set (its digest is recorded, so a changed set
    is noticed: refit into a new _vN file and bump the version)."""
    old = json.loads((PACKAGE / "thresholds/local-minilm_v1.json").read_text())
    assert old["source_sha256"] == hashlib.sha256(DATA_PATH.read_bytes()).hexdigest()
    assert old["judge"] == "local-minilm@1"
    evalset = PACKAGE.parents[1] / "judge_eval" / "evalset" / "evalset.jsonl"
    # the set as it was when local-minilm@3 was fitted: the batches written since (issue 28's
    # dev-only batch img_23 / vid_24 / aud_21) are left out; every older row must be unchanged
    last_batch = {"img": 22, "vid": 23, "aud": 20}
    lines = evalset.read_text(encoding="utf-8").splitlines(keepends=True)
    ids = [json.loads(line)["id"] for line in lines]
    fitted_on = "".join(line for line, i in zip(lines, ids, strict=True)
                        if int(i[4:6]) <= last_batch[i[:3]])
    digest = hashlib.sha256(fitted_on.encode("utf-8")).hexdigest()
    v2 = json.loads((PACKAGE / "thresholds/local-minilm_v2.json").read_text())
    assert v2["judge"] == "local-minilm@2" and v2["n_examples"] == 453
    doc = json.loads(THRESHOLDS_PATH.read_text())
    assert doc["judge"] == "local-minilm@3" and doc["source"] == "evalset.jsonl (part=dev)"
    assert doc["source_sha256"] == digest and doc["n_examples"] == 710
    assert set(doc["thresholds"]) == set(taxonomy.ARTIFACT_KEYS)
