"""Conformance adapter: SynCred-Bench (thu-coai/Syncred-Bench) against the authors' own script.

``compare(authors_dir, work)`` writes the release of `tests/conformance/syncred_fixture.py`
(``SynCred_600/`` with a list-shaped ``meta.json``, ``FP450/`` with a ``{"data": [...]}`` one),
builds our pack from it in one build, and for each case of judge answers runs the authors'
``scripts/evaluate_mllm.py`` for real, network excepted: ``iter_images``, ``load_metadata``,
``evaluate_model`` (their ``call_model`` parses each answer text: ``requests.post`` is replaced by
a stub returning the case's text for that image), once on ``SynCred_600`` (``--ground-truth ai``)
and once on ``FP450`` (``--ground-truth real``), then ``read_ok_rows`` and ``summarize``. Their
per-image rows become our predictions (``label`` fake when their ``prediction`` is "ai";
``score`` = confidence if so, else 1 - confidence, as the spec says).

Rows (``source`` names where the "authors" value comes from):

* ``tpr`` overall / by form / by style = their ``summary.csv`` ``ai_rate`` on the positives run
  (overall, ``content``, ``style`` groups); ``fpr`` likewise on the FP450 run; ``accuracy`` =
  their ``accuracy`` with both runs' rows in one output folder;
* ``form`` / ``style`` of every image: their ``infer_category`` / ``infer_style`` (meta.json,
  then the file name) against the label our builder gave it;
* ``tpr_at_fpr_{1,5,10}`` and ``pr_auc``: the script has none; the reference is the paper's
  definition computed with scikit-learn (``roc_curve(drop_intermediate=False)``: the best TPR
  with FPR <= lambda; ``average_precision_score``).
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import hashlib
import io
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # loaded by path or as a module
    sys.path.insert(0, str(ROOT))

from conformance.adapters._authors_code import load_module  # noqa: E402

NAME = "syncred"
REPO = "thu-coai/Syncred-Bench"
SCRIPT = "scripts/evaluate_mllm.py"
MODEL = "conformance-judge"


class _Response:
    status_code = 200

    def __init__(self, text: str):
        self.text = text

    def json(self):
        return {"choices": [{"message": {"content": self.text}}]}


class _Requests:
    """Stands in for ``requests`` in their module: answers by the image the payload carries."""

    def __init__(self, by_url: dict[str, str]):
        self.by_url = by_url

    def post(self, url, headers=None, json=None, timeout=None):  # noqa: A002 - requests' name
        image = json["messages"][0]["content"][1]["image_url"]["url"]
        return _Response(self.by_url[image])


def run_authors(authors, release: Path, case: str, out: Path) -> dict[str, list[dict]]:
    """Their per-image rows for ``case``: {"pos": [...], "neg": [...]} (and summaries on disk)."""
    from tests.conformance.syncred_fixture import answers

    text = answers(case)
    runs = {"pos": ("SynCred_600", "ai"), "neg": ("FP450", "real")}
    rows = {}
    for key, (folder, truth) in runs.items():
        data_dir = release / folder
        images = authors.iter_images(data_dir)
        by_url = {authors.image_to_data_url(p, 0, 90): text[f"{folder}/{p.name}"]
                  for p in images}
        authors.requests = _Requests(by_url)
        args = argparse.Namespace(prompt=authors.DEFAULT_PROMPT, max_side=0, quality=90,
                                  max_tokens=300, timeout=1, retries=0, retry_sleep=0.0,
                                  overwrite=True, ground_truth=truth)
        run_dir = out / case / key
        run_dir.mkdir(parents=True)
        with contextlib.redirect_stdout(io.StringIO()):
            authors.evaluate_model(args, MODEL, images, authors.load_metadata(data_dir), run_dir,
                                   "http://stub", "key")
        rows[key] = authors.read_ok_rows(run_dir)
    both = out / case / "both"
    both.mkdir()
    for key in runs:  # one output folder holding both runs: their overall accuracy
        shutil.copy(next((out / case / key).glob("*.jsonl")), both / f"{key}.jsonl")
    return rows


def summary(authors, run_dir: Path) -> dict[tuple[str, str], dict]:
    """Their ``summarize`` of a run folder: {(group, name): row}."""
    path = authors.summarize(authors.read_ok_rows(run_dir), run_dir)
    with open(path, encoding="utf-8", newline="") as fh:
        return {(r["group"], r["name"]): r for r in csv.DictReader(fh)}


def compare(authors_dir: Path, work: Path) -> list[dict]:
    import numpy as np
    from sklearn.metrics import average_precision_score, roc_curve

    from leaderboard.builders import syncred as builder
    from leaderboard.core.packs import load_pack
    from leaderboard.core.scoring import score_predictions
    from tests.conformance.syncred_fixture import CASES, score_of, write_release

    authors = load_module(Path(authors_dir), SCRIPT, "syncred_authors_evaluate_mllm")
    form_of = {v: k for k, v in authors.CATEGORY_LABELS.items()}
    style_of = {v: k for k, v in authors.STYLE_LABELS.items()}
    release = write_release(Path(work) / "release")
    pack_dir = Path(work) / "pack"
    builder.build(release, pack_dir, dev_fraction=0.0)
    pack = load_pack(pack_dir)
    labels, ids = pack.labels("test"), pack.labels("test").ids.tolist()
    truth = {f: dict(zip(ids, labels.decoded(f).tolist())) for f in ("form", "style")}

    def item_id(path: str) -> str:
        return "sc-" + hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]

    out: list[dict] = []

    def row(case, metric, sl, ours, theirs, source):
        out.append({"benchmark": NAME, "case": case, "metric": metric, "slice": sl,
                    "ours": ours, "authors": theirs, "source": source})

    # the label each image got: their infer_category / infer_style against our builder
    for folder in ("SynCred_600", "FP450"):
        meta = authors.load_metadata(release / folder)
        for p in authors.iter_images(release / folder):
            m = meta.get(p.name, {})
            rid = item_id(p)
            theirs = {"form": form_of.get(authors.infer_category(p.name, m)),
                      "style": style_of.get(authors.infer_style(p.name, m))}
            for field in ("form", "style"):
                ours = truth[field].get(rid) or None
                row("meta.json", field, {"image": f"{folder}/{p.name}"}, ours, theirs[field],
                    f"{SCRIPT}: infer_category / infer_style with load_metadata")

    for case in CASES:
        rows = run_authors(authors, release, case, Path(work) / "runs")
        preds = Path(work) / f"{case}.jsonl"
        with open(preds, "w", encoding="utf-8") as fh:
            for r in rows["pos"] + rows["neg"]:
                fh.write(json.dumps({"id": item_id(r["image_path"]),
                                     "label": "fake" if r["prediction"] == "ai" else "real",
                                     "score": score_of(r["prediction"], r["confidence"])}) + "\n")
        recs = {(r.metric, tuple(sorted(r.slice.items()))): r.value
                for r in score_predictions(pack, "test", preds, n_resamples=20).parts["all"]}
        src = f"{SCRIPT}: summarize (summary.csv)"
        for key, metric in (("pos", "tpr"), ("neg", "fpr")):
            for (group, name), s in summary(authors, Path(work) / "runs" / case / key).items():
                if group == "overall":
                    sl = ()
                elif group == "content" and name in form_of:
                    sl = (("form", form_of[name]),)
                elif group == "style" and name in style_of:
                    sl = (("style", style_of[name]),)
                else:
                    continue  # "unknown": images whose form or style nothing names
                row(case, metric, dict(sl), recs.get((metric, sl)), float(s["ai_rate"]),
                    f"{src} ai_rate")
        both = summary(authors, Path(work) / "runs" / case / "both")
        row(case, "accuracy", {}, recs.get(("accuracy", ())),
            float(both[("overall", "ALL")]["accuracy"]), f"{src} accuracy, both runs")
        y = np.array([True] * len(rows["pos"]) + [False] * len(rows["neg"]))
        score = np.array([score_of(r["prediction"], r["confidence"])
                          for r in rows["pos"] + rows["neg"]])
        fpr, tpr, _ = roc_curve(y, score, drop_intermediate=False)
        for lam in (1, 5, 10):
            row(case, f"tpr_at_fpr_{lam}", {}, recs.get((f"tpr_at_fpr_{lam}", ())),
                float(tpr[fpr <= lam / 100].max()),
                "paper definition: sklearn roc_curve, best TPR with FPR <= lambda")
        row(case, "pr_auc", {}, recs.get(("pr_auc", ())),
            float(average_precision_score(y, score)),
            "paper definition: sklearn average_precision_score")
    return out
