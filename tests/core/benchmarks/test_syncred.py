import json
from pathlib import Path

import numpy as np
import pytest

from leaderboard.core.benchmarks.base import Block, ScoringContext, TaskSpec
from leaderboard.core.benchmarks.syncred import FORMS, STYLES, SynCred
from leaderboard.core.metrics.ranking import pr_auc
from leaderboard.core.packs import load_pack
from leaderboard.demo import syncred as demo

TASK = TaskSpec("detection", "detection", ("image",), "tpr_at_fpr_5")


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".cache" not in p.parts}


@pytest.fixture(scope="module")
def pack_dir(tmp_path_factory):
    return demo.generate(tmp_path_factory.mktemp("syncred") / "pack", seed=0)


def block(decision, score=None, rationale=None):
    y = np.array(["fake"] * 4 + ["real"] * 4)
    dec = np.array(decision, dtype=bool)
    n = len(y)
    s = np.full(n, np.nan) if score is None else np.asarray(score, float)
    pred = {"label": np.where(dec, 1, 0).astype(np.int8), "score": s, "decision": dec,
            "has_score": ~np.isnan(s),
            "rationale": np.array(rationale or [None] * n, dtype=object)}
    truth = {"label": y,
             "form": np.array(["ML", "ML", "IN", "IN", "ML", "IN", "ML", "IN"]),
             "style": np.array(["NR", "SC", "NR", "SC"] * 2),
             "language": np.array(["zh", "en"] * 4)}
    return Block(TASK, np.array([f"i{i}" for i in range(n)]), {}, truth, pred)


def by(records):
    return {(r.metric, tuple(sorted(r.slice.items()))): r for r in records}


def test_pack_validates_and_covers_every_form_style_language(pack_dir):
    pack = load_pack(pack_dir)
    pack.validate()
    seen = set()
    for split in pack.splits:
        lab = pack.labels(split)
        y, f, s, lang = (lab.decoded(c) for c in ("label", "form", "style", "language"))
        seen |= {(a, b, c, d) for a, b, c, d in zip(y, f, s, lang)}
    for form in FORMS:
        for style in STYLES:
            assert {("fake", form, style, "zh"), ("fake", form, style, "en")} <= seen
            assert any(k[0] == "real" and k[1:3] == (form, style) for k in seen)
    assert len(list((pack_dir / "media").rglob("*.png"))) == 294


def test_items_reveal_no_label(pack_dir):
    for split in ("dev", "test"):
        for line in (pack_dir / "splits" / split / "items.jsonl").read_text().splitlines():
            row = json.loads(line)
            assert set(row) == {"id", "task", "modality", "media"}
            assert row["media"] == [f"media/images/{row['id']}.png"]
            assert not any(w in line for w in ("fake", "real", '"form"', '"style"'))


def test_generator_is_deterministic(pack_dir, tmp_path):
    again = demo.generate(tmp_path / "again", seed=0)
    assert snapshot(again) == snapshot(pack_dir)
    other = demo.generate(tmp_path / "other", seed=1)
    assert snapshot(other) != snapshot(pack_dir)


def test_labels_only_values_by_hand():
    ctx = ScoringContext()
    r = by(SynCred().score_block(block([1, 1, 1, 0, 1, 0, 0, 0]), ctx))
    assert r[("tpr", ())].value == 0.75 and r[("tpr", ())].n == 4
    assert r[("fpr", ())].value == 0.25
    assert r[("accuracy", ())].value == 0.75
    for lam in (1, 5, 10):  # FPR 25% is over every budget: the labels-only rule gives 0
        assert r[(f"tpr_at_fpr_{lam}", ())].value == 0.0
    assert r[("pr_auc", ())].value is None
    assert r[("tpr", (("form", "ML"),))].value == 1.0
    assert r[("tpr", (("form", "IN"),))].value == 0.5
    assert r[("tpr", (("style", "NR"),))].value == 1.0
    assert r[("tpr", (("style", "SC"),))].value == 0.5
    assert r[("tpr", (("style_group", "NR"),))].value == 1.0
    assert r[("tpr", (("style_group", "DR"),))].value == 0.5
    assert r[("tpr", (("language", "zh"),))].value == 1.0
    assert r[("tpr", (("language", "en"),))].value == 0.5
    assert r[("fpr", (("style", "NR"),))].value == 0.5
    assert r[("fpr", (("style", "SC"),))].value == 0.0
    assert r[("tpr_delta", (("style", "NR"),))].value == pytest.approx(0.25)
    assert r[("tpr_delta", (("style", "SC"),))].value == pytest.approx(-0.25)
    ci = r[("tpr", ())]
    assert ci.ci_low <= ci.value <= ci.ci_high
    assert any("PR-AUC" in n for n in ctx.notes)


def test_scores_sweep_and_pr_auc():
    score = [0.9, 0.8, 0.7, 0.2, 0.85, 0.3, 0.1, 0.4]
    b = block([s >= 0.5 for s in score], score)
    r = by(SynCred().score_block(b, ScoringContext()))
    # the only negative above 0.5 scores 0.85: FPR 0 forces tau > 0.85, leaving one positive
    assert r[("tpr_at_fpr_5", ())].value == 0.25
    assert r[("tpr_at_fpr_10", ())].value == 0.25
    y = b.truth["label"] == "fake"
    assert r[("pr_auc", ())].value == pytest.approx(pr_auc(y_true=y, y_score=np.array(score)))
    head = r[("tpr_at_fpr_5", ())]
    assert head.ci_low is not None and head.ci_low <= head.ci_high


def test_sweep_is_not_capped_by_the_decision_and_pr_auc_is_ap():
    # Issue 11: fakes scored 0.2, reals 0.1, no labels (decision: everything real).
    score = [0.2] * 4 + [0.1] * 4
    r = by(SynCred().score_block(block([0] * 8, score), ScoringContext()))
    assert r[("tpr", ())].value == 0.0
    for lam in (1, 5, 10):
        rec = r[(f"tpr_at_fpr_{lam}", ())]
        assert rec.value == 1.0 and rec.metric_version == "2"
    assert r[("pr_auc", ())].value == 1.0 and r[("pr_auc", ())].metric_version == "2"
    # a constant score ranks nothing: PR-AUC is the prevalence (the trapezoid said 0.75)
    r = by(SynCred().score_block(block([1] * 8, [0.5] * 8), ScoringContext()))
    assert r[("pr_auc", ())].value == 0.5
    assert r[("tpr", ())].metric_version == "1"


def test_false_negative_rationales_are_pending():
    why = [None, None, None, "a plain scan with a stamp", None, None, None, None]
    ctx = ScoringContext()
    SynCred().score_block(block([1, 1, 1, 0, 1, 0, 0, 0], rationale=why), ctx)
    assert ctx.pending and ctx.pending[0]["metric"] == "fn_attribution"


def test_end_to_end_perfect_and_random(pack_dir, tmp_path):
    from leaderboard.core.scoring import score_predictions

    pack = load_pack(pack_dir)
    labels, items = pack.labels("test"), pack.items("test")
    y = labels.decoded("label")
    perfect, rand = tmp_path / "perfect.jsonl", tmp_path / "random.jsonl"
    rng = np.random.default_rng(0)
    with open(perfect, "w") as p, open(rand, "w") as q:
        for rid, lab in zip(items.ids.tolist(), y.tolist()):
            p.write(json.dumps({"id": rid, "label": lab, "score": 1.0 if lab == "fake" else 0.0}) + "\n")
            q.write(json.dumps({"id": rid, "score": float(rng.random())}) + "\n")
    r = by(score_predictions(pack, "test", perfect).records)
    for m in ("tpr", "accuracy", "tpr_at_fpr_1", "tpr_at_fpr_5", "tpr_at_fpr_10", "pr_auc"):
        assert r[(m, ())].value == 1.0, m
    assert r[("fpr", ())].value == 0.0
    axes = {k for _, sl in r for k, _ in sl}
    assert axes == {"form", "style", "style_group", "language"}
    res = score_predictions(pack, "test", rand)
    r = by(res.records)
    assert 0.0 <= r[("tpr_at_fpr_5", ())].value < 0.5
    assert set(res.parts) == {"public", "private", "all"}
