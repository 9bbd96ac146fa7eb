"""Conformance adapter: the TRIDENT challenge kit (j1anglin/TRIDENT_MM26MGC) against ours.

``compare(authors_dir, work)`` builds a pack from a TRIDENT data root in the kit's layout (the
checkout's ``tridf-blind/``, ``trident/`` or ``data_blind/`` when a maintainer has placed the
gated data there; else ``tests/conformance/fixtures/trident``: a hand-made data root in the
kit's exact layout, with made-up ids, questions and answers), writes perfect, constant, random
and adversarial free-text predictions, and scores them with the kit's own functions
(``evaluate_predictions.py``: ``score_choice``, ``score_typeb_oeq``, ``score_oeq_artifacts``, then
``compute_tcs_from_tasks`` on the compact task summaries, as ``main`` builds them) and with
ours. The kit's OEQ artifact mapping is an LLM; both sides get the same mapped artifacts instead
(the kit as mapping records its ``parse_artifact_map`` reads, ours as ``artifacts``).
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # loaded by path or as a module
from conformance.adapters._tridf_shared import (
    CASES,
    ROOT,
    Answers,
    load_module,
    row,
)

NAME = "trident"
REPO = "j1anglin/TRIDENT_MM26MGC"
FIXTURE = ROOT / "tests" / "conformance" / "fixtures" / "trident"
DATA_DIRS = ("tridf-blind", "trident", "data_blind")  # the kit's own search (_bootstrap.py)
SPLIT = "public_val"


def compare(authors_dir: Path, work: Path) -> list[dict]:
    """Rows ``{"benchmark", "case", "metric", "slice", "ours", "authors"}`` per modality and task
    for every metric both sides compute, and the TCS with its three parts."""
    from leaderboard.builders import tridf as builder
    from leaderboard.core.packs import load_pack

    authors_dir, work = Path(authors_dir), Path(work)
    ep = load_module(authors_dir / "evaluate_predictions.py", "trident_authors_evaluate",
                     search=authors_dir)
    data = next((authors_dir / d for d in DATA_DIRS if (authors_dir / d / "OEQ").is_dir()),
                None)
    if data is None:
        data = work / "data"
        if data.exists():
            shutil.rmtree(data)
        shutil.copytree(FIXTURE, data)
    builder.build(data, work / "pack", dev_fraction=0.0)
    pack = load_pack(work / "pack")
    oeq = ep._load_oeq_answers(data, SPLIT)
    choice = {t: ep._load_choice_answers(data, t, SPLIT) for t in ("tfq", "mcq")}
    out: list[dict] = []
    for case in CASES:
        answers = Answers(case)
        kit, ours = _predictions(answers, oeq, choice)
        path = work / case / "ours.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in ours), encoding="utf-8")
        recs = _our_records(pack, path)
        tasks = _kit_tasks(ep, kit, oeq, choice)
        out += _rows(case, tasks, ep.compute_tcs_from_tasks(tasks), recs)
    return out


def _predictions(answers: Answers, oeq: dict, choice: dict) -> tuple[dict, list[dict]]:
    """The kit's records per task (and mapping records) and the same answers as our rows."""
    from leaderboard.core.taxonomy import ARTIFACT_KEYS, TRIDF_ARTIFACTS

    name_of = {a.key: a.name for a in TRIDF_ARTIFACTS}
    key_of = {a.name: a.key for a in TRIDF_ARTIFACTS}
    kit: dict[str, list[dict]] = {"tfq": [], "mcq": [], "typeb_oeq": [], "map_a": [],
                                  "map_b": []}
    ours: list[dict] = []
    for qid, a in choice["tfq"].items():
        text = answers.yes_no(bool(a["ground_truth"]), words=("True", "False"))
        kit["tfq"].append({"question_id": qid, "response": text})
        ours.append({"id": qid, "response": text})
    for qid, a in choice["mcq"].items():
        text = answers.letters(sorted(a["ground_truth"]))
        kit["mcq"].append({"question_id": qid, "response": text})
        ours.append({"id": qid, "response": text})
    for sid, a in oeq.items():
        fake = a["label"] == "fake"
        truth = [key_of[n] for n, on in a["ground_truth_artifacts"].items() if on]
        columns = [key_of[n] for n in a["artifact_names"]]
        verdict = answers.verdict(fake)
        kit["typeb_oeq"].append({"sample_id": sid, "response": verdict})
        for task, mapped in (("a", answers.artifacts(truth, columns, ARTIFACT_KEYS)),
                             ("b", answers.artifacts(truth, columns, ARTIFACT_KEYS))):
            mapping = "\n".join(f"{name_of[k]}: {k in mapped}" for k in ARTIFACT_KEYS)
            kit[f"map_{task}"].append({"sample_id": sid, "response": mapping})
            rowd = {"id": f"oeq_{task}/{sid}", "artifacts": mapped}
            if task == "b":
                rowd["response"] = verdict
            ours.append(rowd)
    return kit, ours


def _kit_tasks(ep, kit: dict, oeq: dict, choice: dict) -> list[dict]:
    """The kit's compact task summaries, built as ``evaluate_task_dir`` and ``main`` build them."""
    spec = ep.get_oeq_artifact_evaluator_spec()
    typeb = ep.score_typeb_oeq(kit["typeb_oeq"], oeq)
    typeb = ep._attach_oeq_artifact_metrics(
        typeb, ep.score_oeq_artifacts(kit["map_b"], oeq, task_type="typeb_oeq"),
        task_type="typeb_oeq", mapping_dir=None, evaluator_backend="local",
        evaluator_model=None, analysis_field="response", evaluator_spec=spec)
    summaries = {"typeb_oeq": typeb,
                 "typea_oeq": ep.score_oeq_artifacts(kit["map_a"], oeq, task_type="typea_oeq"),
                 "tfq": ep.score_choice(kit["tfq"], choice["tfq"], "tfq"),
                 "mcq": ep.score_choice(kit["mcq"], choice["mcq"], "mcq")}
    return [ep._compact_result_for_output(ep._attach_task_metadata(s, t))
            for t, s in summaries.items()]


def _our_records(pack, preds: Path) -> dict:
    from leaderboard.core.scoring import score_predictions

    result = score_predictions(pack, "test", preds, n_resamples=10)
    return {(r.task, r.metric, tuple(sorted(r.slice.items()))): r.value
            for r in result.parts["all"]}


#: kit task, kit field -> our task, our metric
PAIRS = {("tfq", "acc_tfq"): ("tfq", "trident_accuracy"),
         ("mcq", "score_mcq"): ("mcq", "trident_mcq_score"),
         ("typeb_oeq", "acc_det"): ("oeq_b", "trident_accuracy"),
         ("typea_oeq", "cover"): ("oeq_a", "cover"), ("typea_oeq", "chair"): ("oeq_a", "chair"),
         ("typea_oeq", "hal_rate"): ("oeq_a", "hal"), ("typea_oeq", "f_0_5"): ("oeq_a", "f05")}
ARTIFACT_PAIRS = {"cover": ("oeq_b", "cover"), "chair": ("oeq_b", "trident_chair"),
                  "hal_rate": ("oeq_b", "trident_hal"), "f_0_5": ("oeq_b", "trident_f05")}


def _rows(case: str, tasks: list[dict], tcs: list[dict], recs: dict) -> list[dict]:
    out = []
    for t in tasks:
        kind = t["task_type"]
        for r in t["scores_by_modality"]:
            slc = (("modality", r["modality"]),)
            for (task, field), (ours_task, metric) in PAIRS.items():
                if task == kind and field in r:
                    out.append(row(NAME, case, f"{ours_task}.{metric}",
                                   f"modality={r['modality']}",
                                   recs.get((ours_task, metric, slc)), r[field]))
        for r in t.get("artifact_scores_by_modality", []):
            slc = (("modality", r["modality"]),)
            for field, (ours_task, metric) in ARTIFACT_PAIRS.items():
                out.append(row(NAME, case, f"{ours_task}.{metric}", f"modality={r['modality']}",
                               recs.get((ours_task, metric, slc)), r[field]))
    for r in tcs:
        slc = (("modality", r["modality"]),)
        for metric in ("tcs", "s_det", "s_hal", "s_perc"):
            out.append(row(NAME, case, f"composite.{metric}", f"modality={r['modality']}",
                           recs.get(("composite", metric, slc)), r[metric]))
    return out
