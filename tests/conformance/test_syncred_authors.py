"""SynCred-Bench against the authors' code, pinned: the values of ``data/syncred_authors.json``
come from running thu-coai/Syncred-Bench's ``scripts/evaluate_mllm.py`` (commit 4a0f638) outside
this repository, through ``conformance/check.py --only syncred --json``:

* ``tpr`` / ``fpr`` overall, by form and by style: ``summarize``'s ``ai_rate`` (summary.csv) of
  ``evaluate_model`` runs on ``SynCred_600`` (``--ground-truth ai``) and ``FP450`` (``real``);
  ``accuracy``: ``summarize``'s ``accuracy`` over both runs' rows;
* each image's form and style: ``infer_category`` / ``infer_style`` with ``load_metadata``;
* ``tpr_at_fpr_*`` and ``pr_auc`` (the script has none): the paper's definition by scikit-learn's
  ``roc_curve`` / ``average_precision_score``.

The release and the judge's answer texts are `tests/conformance/syncred_fixture.py`; here the
answers become predictions as a team would submit them (label from ``ai_generated``, score =
confidence if AI-generated, else 1 - confidence).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from leaderboard.builders import syncred as builder
from leaderboard.core.packs import load_pack
from leaderboard.core.scoring import score_predictions
from tests.conformance.syncred_fixture import CASES, answers, score_of, write_release

PINNED = json.loads((Path(__file__).parent / "data" / "syncred_authors.json").read_text("utf-8"))


def _rows(case: str) -> list[dict]:
    return [r for r in PINNED["rows"] if r["case"] == case]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("syncred-conformance")
    release = write_release(root / "release")
    builder.build(release, root / "pack", dev_fraction=0.0)
    return release, load_pack(root / "pack"), root


def _id(path: Path) -> str:
    return "sc-" + hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def _answer(text: str) -> tuple[str, float]:
    """(prediction, confidence) of an answer text: the JSON object in it (fenced or after prose,
    ``ai_generated`` a boolean or "true"/"false"), as the authors' extract_json reads these."""
    obj = json.loads(text[text.index("{"):text.rindex("}") + 1])
    ai = obj["ai_generated"]
    ai = ai.lower() == "true" if isinstance(ai, str) else ai
    return ("ai" if ai else "real"), obj["confidence"]


def test_meta_json_labels_match_infer_category_and_infer_style(built):
    release, pack, _ = built
    labels = pack.labels("test")
    got = {f: dict(zip(labels.ids.tolist(), labels.decoded(f).tolist())) for f in ("form", "style")}
    rows = _rows("meta.json")
    assert len(rows) == 2 * 114
    for r in rows:
        ours = got[r["metric"]].get(_id(release / r["slice"]["image"])) or None
        assert ours == r["authors"], r


@pytest.mark.parametrize("case", CASES)
def test_metrics_match_the_authors_summary(built, case):
    release, pack, root = built
    preds = root / f"{case}.jsonl"
    with open(preds, "w", encoding="utf-8") as fh:
        for key, text in answers(case).items():
            prediction, confidence = _answer(text)
            fh.write(json.dumps({"id": _id(release / key),
                                 "label": "fake" if prediction == "ai" else "real",
                                 "score": score_of(prediction, confidence)}) + "\n")
    recs = {(r.metric, tuple(sorted(r.slice.items()))): r.value
            for r in score_predictions(pack, "test", preds, n_resamples=20).parts["all"]}
    rows = _rows(case)
    assert {r["metric"] for r in rows} == {"tpr", "fpr", "accuracy", "tpr_at_fpr_1",
                                           "tpr_at_fpr_5", "tpr_at_fpr_10", "pr_auc"}
    for r in rows:
        ours = recs[(r["metric"], tuple(sorted(r["slice"].items())))]
        assert ours == pytest.approx(r["authors"], abs=1e-9), r
    if case == "adversarial":  # the case: fakes 0.2, reals 0.1, everything called real
        assert recs[("tpr", ())] == 0.0 and recs[("tpr_at_fpr_5", ())] == 1.0
