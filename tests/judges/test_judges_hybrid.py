"""`hybrid-minilm`: the combination rule, the features, the pinned parameters and the judge on the
real packaged model (a few sentences written for this test; the model loads once per session,
shared with the MiniLM judge's tests through `minilm.encoder`)."""
from __future__ import annotations

import hashlib
import shutil

import numpy as np
import pytest

from leaderboard.core.taxonomy import ARTIFACT_KEYS, artifacts_for
from leaderboard.judges import JudgeError, get_judge, hybrid
from leaderboard.judges.hybrid_fit import exemplars, fold_of, unseen_by
from leaderboard.judges.mapping import engine_for

IMAGE, AUDIO = list(artifacts_for("image")), list(artifacts_for("audio"))


@pytest.fixture(scope="module")
def judge():
    return get_judge("hybrid-minilm")


def test_identity_and_registry(judge):
    assert judge.identity == "hybrid-minilm@1"
    doc, bank = hybrid.load_params()
    assert doc["judge"] == judge.identity and doc["rules"] == "rules@3"
    assert len(bank.emb) == len(doc["exemplars"]) and bank.emb.shape[1] == 384


def test_maps_claims_and_keeps_denials_out(judge):
    got = judge.map_artifacts([
        "The skin on her forehead is blurry and smeared.",
        "No blur anywhere; every edge is crisp.",
        "",
        "Likely Authentic. Nothing to report.",
    ], candidates=IMAGE)
    assert got == [frozenset({"blurriness"}), frozenset(), frozenset(), frozenset()]
    assert judge.map_artifacts(["A few sharp ticks between the words."],
                               candidates=AUDIO) == [frozenset({"pops"})]
    assert judge.map_artifacts([], candidates=AUDIO) == []


def test_candidates_are_checked(judge):
    assert judge.map_artifacts(["The face is blurry."], candidates=["hiss"]) == [frozenset()]
    with pytest.raises(ValueError, match=r"unknown artifact key\(s\) \['blurry'\]"):
        judge.map_artifacts(["The face is blurry."], candidates=["blurry"])


@pytest.mark.parametrize("claimed, denied, prob, expected", [
    (True, False, 0.31, True), (True, False, 0.29, False),   # a rules claim the model vetoes
    (False, False, 0.5, True), (False, False, 0.49, False),  # the model adds
    (False, True, 0.99, False),                              # a rules denial is final
])
def test_rules_decide_what_they_are_sure_of(claimed, denied, prob, expected):
    doc = {"threshold_keep": 0.3, "threshold_add": 0.5}
    assert hybrid.decide(claimed, denied, prob, doc) is expected


def test_features_from_a_small_bank():
    emb = np.eye(3, 384, dtype=np.float32)
    key = np.array([hybrid.KEY_INDEX["hiss"], hybrid.KEY_INDEX["hiss"], hybrid.KEY_INDEX["buzz"]])
    bank = hybrid.Bank.of(emb, key, np.array([1, -1, 1]))
    clause = np.zeros((1, 384), np.float32)
    clause[0, 0], clause[0, 2] = 0.8, 0.6
    x = hybrid.features({"hiss"}, set(), ["hiss", "buzz"], clause, bank)
    n = len(hybrid.FEATURES)
    assert x.shape == (2, n + len(ARTIFACT_KEYS))
    assert x[0, :n].tolist() == pytest.approx([1, 0, 0.8, 0.0, 0.8, 0.2, 0, 0.8])
    assert x[1, :n].tolist() == pytest.approx([0, 0, 0.6, 0.0, 0.6, -0.2, 0, 0])
    assert x[0, n + hybrid.KEY_INDEX["hiss"]] == 1 and x[1, n + hybrid.KEY_INDEX["buzz"]] == 1
    # the fitting leaves a fold's own exemplars out
    left_out = hybrid.features({"hiss"}, set(), ["hiss"], clause, bank,
                               keep=np.array([False, True, True]))
    assert left_out[0, 2] == 0.0
    empty = hybrid.features(set(), {"hiss"}, ["hiss"], np.zeros((0, 384)), bank)
    assert empty[0, :n].tolist() == [0, 1, 0, 0, 0, 0, 1, 0]


def test_bank_and_model_are_checked_by_digest(tmp_path, monkeypatch):
    params = tmp_path / "p.json"
    shutil.copy(hybrid.PARAMS_PATH, params)
    bank = tmp_path / "p_bank.npy"
    np.save(bank, np.zeros((2, 384), np.float16))
    with pytest.raises(JudgeError, match="does not match .*bank_sha256"):
        hybrid.load_params(params, bank)
    monkeypatch.setattr(hybrid, "model_digest", lambda: "0" * 64)
    with pytest.raises(JudgeError, match="not the ones p.json was fitted with"):
        hybrid.load_params(params, hybrid.BANK_PATH)
    with pytest.raises(JudgeError, match="cannot read hybrid parameters"):
        hybrid.load_params(tmp_path / "missing.json", hybrid.BANK_PATH)


def test_fitting_uses_only_dev_answers_the_rules_never_saw():
    assert unseen_by("img-1503") == "2" and unseen_by("aud-2103") == "3"
    assert unseen_by("vid-0101") is None and unseen_by("img-2399") == "3"
    assert fold_of("img-1503") == int(hashlib.sha256(b"img-1503").hexdigest(), 16) % 5
    rows = [{"id": "aud-2103", "modality": "audio", "artifacts": ["hiss"], "denied": ["buzz"],
             "response": "A steady hiss under the voice; no hum at all."}]
    got = {(c, k, s) for c, k, s, _ in exemplars(rows, engine_for("3"))}
    assert ("A steady hiss under the voice", "hiss", 1) in got
    assert any(k == "buzz" and s == -1 for _, k, s in got)
