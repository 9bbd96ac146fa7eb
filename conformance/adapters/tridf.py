"""Conformance adapter: TriDF (j1anglin/TriDF) against the authors' own scorers.

``compare(authors_dir, work)`` builds a pack from the authors' checkout in one ``build-pack``
call (``3_Benchmark/benchmark_perception_tf/`` and ``benchmark_perception_mc/``: about 46,000
questions) plus a small hand-made ground-truth fixture in the authors' ``2_GT_Final`` format
(``tests/conformance/fixtures/tridf``: the gated CSVs are not public; made-up samples of three
of their tasks, a ``_com`` file, a ``question_id`` column), writes perfect, constant, random and
adversarial free-text predictions in the authors' inference-output format, and scores them both
ways:

* TFQ and MCQ: the authors' ``score_perception_original.score`` on the prediction folder, ours on
  the same records (aligned by ``question_file`` and ``question_index``): accuracy and MCQ score,
  and their ``invalid_predictions`` count (ours: the ``n`` of the record of that name), overall,
  per modality and per DeepFake task; and per modality x question type (their
  ``by_question_type``, from one run of their scorer per modality's question files, since their
  groups are not split by modality). The case ``unreadable`` mixes empty answers (invalid for
  them) with answers they read no letter or yes/no from (valid for them, scored 0).
* OEQ type B accuracy: the authors' ``eval_accuracy.evaluate_file`` (strict) per modality.
* OEQ Cover, CHAIR, Hal, F0.5 (types A and B): the authors' ``cal_score.CoverCalculator`` on
  eval CSVs in ``convert_mapping_result_to_eval_csv.py``'s format, holding the same mapped
  artifacts that our rows give as ``artifacts``; per modality and combined.
"""
from __future__ import annotations

import csv
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # loaded by path or as a module
from conformance.adapters._tridf_shared import (
    CASES,
    ROOT,
    UNREADABLE,
    Answers,
    load_module,
    row,
)

NAME = "tridf"
REPO = "j1anglin/TriDF"
FIXTURES = ROOT / "tests" / "conformance" / "fixtures" / "tridf"
QUESTION_DIRS = {"tf": "benchmark_perception_tf", "mc": "benchmark_perception_mc"}
MODEL = "conformance-model"
EXT = {"img": ".png", "vid": ".mp4", "aud": ".wav"}
MODALITY = {"img": "image", "vid": "video", "aud": "audio"}


def compare(authors_dir: Path, work: Path) -> list[dict]:
    """Rows ``{"benchmark", "case", "metric", "slice", "ours", "authors"}`` for every metric both
    sides compute, for each prediction case."""
    from leaderboard.builders import tridf as builder
    from leaderboard.core.packs import load_pack

    authors_dir, work = Path(authors_dir), Path(work)
    inference = authors_dir / "3_Benchmark" / "inference"
    spo = load_module(inference / "score_perception_original.py", "tridf_authors_spo")
    ea = load_module(inference / "eval_accuracy.py", "tridf_authors_eval_accuracy")
    cal = load_module(inference / "cal_score.py", "tridf_authors_cal_score")
    release = _release(authors_dir, work / "release")
    builder.build(release, work / "pack", dev_fraction=0.0)
    pack = load_pack(work / "pack")
    questions = {b: _questions(release / "3_Benchmark" / d) for b, d in QUESTION_DIRS.items()}
    oeq = _oeq_samples(release)
    per_modality = _modality_folders(release, work / "by_modality")
    out: list[dict] = []
    for case in CASES + (UNREADABLE,):
        case_dir = work / case
        answers = Answers(case)
        ours_rows = _perception_predictions(questions, answers, case_dir)
        oeq_rows = _oeq_predictions(oeq, answers)
        ours_rows += [r["ours"] for r in oeq_rows]
        preds = case_dir / "ours.jsonl"
        preds.write_text("".join(json.dumps(r) + "\n" for r in ours_rows), encoding="utf-8")
        recs, counts = _our_records(pack, preds)
        for bench, d in QUESTION_DIRS.items():
            summary = spo.score(benchmark=bench, questions_dir=release / "3_Benchmark" / d,
                                predictions_root=case_dir / bench, details_out=None,
                                include_unmatched_details=False)
            out += _perception_rows(case, bench, summary, recs, counts)
            for modality, folder in per_modality[bench].items():
                part = spo.score(benchmark=bench, questions_dir=folder,
                                 predictions_root=case_dir / bench, details_out=None,
                                 include_unmatched_details=False)
                out += _question_type_rows(case, bench, modality, part, recs, counts)
        out += _oeq_rows(case, case_dir, oeq_rows, release, recs, ea, cal)
    return out


# -- the release: the authors' question folders, the fixture, stub media for the OEQ samples --

def _release(authors_dir: Path, dst: Path) -> Path:
    if dst.exists():
        shutil.rmtree(dst)
    for d in QUESTION_DIRS.values():
        src = authors_dir / "3_Benchmark" / d
        (dst / "3_Benchmark" / d).mkdir(parents=True)
        for f in sorted(src.glob("*.json")):
            shutil.copyfile(f, dst / "3_Benchmark" / d / f.name)
    shutil.copytree(FIXTURES, dst, dirs_exist_ok=True)
    # media stubs for every sample (a release has all media or none): their digests give the
    # OEQ item ids
    keys = set(_oeq_keys(dst))
    for d in QUESTION_DIRS.values():
        keys |= {q["sample_path"] for _, _, q in _questions(dst / "3_Benchmark" / d)}
    for key in sorted(keys):
        path = dst / "1_DATA" / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"conformance stub " + key.encode())
    return dst


def _oeq_keys(release: Path) -> list[str]:
    keys = []
    for f in sorted((release / "2_GT_Final").glob("*.csv")):
        with open(f, newline="", encoding="utf-8") as fh:
            keys += [r["sample_path"] for r in csv.DictReader(fh)]
    for f in sorted((release / "samples").glob("*.txt")):
        keys += [ln.strip() for ln in f.read_text().splitlines() if ln.strip()]
    return sorted(set(keys))


def _questions(folder: Path) -> list[tuple[Path, int, dict]]:
    out = []
    for f in sorted(folder.glob("*.json")):
        out += [(f, i, rec) for i, rec in enumerate(json.loads(f.read_text(encoding="utf-8")))]
    return out


def _perception_predictions(questions: dict, answers: Answers, case_dir: Path) -> list[dict]:
    """The authors' inference JSONL (one file per question file) and the same records as ours."""
    ours = []
    for bench, items in questions.items():
        by_file: dict[Path, list[str]] = {}
        for f, i, rec in items:
            gt = rec["ground_truth"]
            text = answers.yes_no(gt) if bench == "tf" else answers.letters(gt)
            record = {"model_id": MODEL, "sample": {"task": rec.get("task"),
                                                    "sample_id": f"{f.stem}-{i}"},
                      "response": text, "question_file": str(f), "question_index": i}
            by_file.setdefault(f, []).append(json.dumps(record))
            ours.append(record)
        for f, lines in by_file.items():
            out = case_dir / bench / MODEL / f"{f.stem}.jsonl"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ours


def _modality_folders(release: Path, dst: Path) -> dict[str, dict[str, Path]]:
    """Per benchmark, per modality: a folder holding that modality's question files (copies),
    for one run of the authors' scorer each (their groups are not split by modality)."""
    out: dict[str, dict[str, Path]] = {}
    for bench, d in QUESTION_DIRS.items():
        out[bench] = {}
        for f in sorted((release / "3_Benchmark" / d).glob("*.json")):
            prefix = f.name[:3]
            if prefix not in MODALITY:
                continue  # all_questions_combined.json: the per-task files repeat it
            folder = dst / bench / MODALITY[prefix]
            folder.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, folder / f.name)
            out[bench][MODALITY[prefix]] = folder
    return out


def _our_records(pack, preds: Path) -> tuple[dict, dict]:
    """(value, n) of every record of ours, keyed by (task, metric, sorted slice items)."""
    from leaderboard.core.scoring import score_predictions

    result = score_predictions(pack, "test", preds, n_resamples=10)
    key = lambda r: (r.task, r.metric, tuple(sorted(r.slice.items())))  # noqa: E731
    return ({key(r): r.value for r in result.parts["all"]},
            {key(r): r.n for r in result.parts["all"]})


def _task_metric(bench: str) -> tuple[str, str]:
    return ("tfq", "accuracy") if bench == "tf" else ("mcq", "mcq_score")


def _perception_rows(case: str, bench: str, summary: dict, recs: dict,
                     counts: dict) -> list[dict]:
    from leaderboard.builders.common import normalize_key

    task, metric = _task_metric(bench)
    name, invalid = f"{task}.{metric}", f"{task}.invalid_predictions"
    out = [row(NAME, case, name, "all", recs.get((task, metric, ())), summary["accuracy"]),
           row(NAME, case, invalid, "all", counts.get((task, "invalid_predictions", ())),
               summary["invalid_predictions"])]
    groups = summary["groups"]
    for g in groups["by_modality"]:
        slc = (("modality", g["name"]),)
        out.append(row(NAME, case, name, f"modality={g['name']}", recs.get((task, metric, slc)),
                       g["accuracy"]))
        out.append(row(NAME, case, invalid, f"modality={g['name']}",
                       counts.get((task, "invalid_predictions", slc)), g["invalid_predictions"]))
    for g in groups["by_task"]:
        m = MODALITY[g["name"][:3]]
        slc = (("deepfake_task", normalize_key(g["name"])), ("modality", m))
        out.append(row(NAME, case, name, f"deepfake_task={g['name']}",
                       recs.get((task, metric, slc)), g["accuracy"]))
        out.append(row(NAME, case, invalid, f"deepfake_task={g['name']}",
                       counts.get((task, "invalid_predictions", slc)), g["invalid_predictions"]))
    return out


def _question_type_rows(case: str, bench: str, modality: str, summary: dict, recs: dict,
                        counts: dict) -> list[dict]:
    """Their ``by_question_type`` of one modality's run against ours per modality x type."""
    task, metric = _task_metric(bench)
    out = []
    for g in summary["groups"]["by_question_type"]:
        slc = (("modality", modality), ("question_type", g["name"]))
        label = f"modality={modality},question_type={g['name']}"
        out.append(row(NAME, case, f"{task}.{metric}", label, recs.get((task, metric, slc)),
                       g["accuracy"]))
        out.append(row(NAME, case, f"{task}.invalid_predictions", label,
                       counts.get((task, "invalid_predictions", slc)),
                       g["invalid_predictions"]))
    return out


# -- open-ended: ground-truth fixture, self-mapped artifacts, the authors' cal_score --

def _oeq_samples(release: Path) -> list[dict]:
    """Every OEQ sample of the fixture: path, class, modality, task, item uid, truth, columns."""
    from leaderboard.builders.common import Problems, file_digest
    from leaderboard.builders.tridf_gt import read_ground_truth

    notes: list[str] = []
    gts = sorted((release / "2_GT_Final").glob("*.csv"))
    truth = read_ground_truth([(p, p.name) for p in gts], Problems(), notes)
    out = []
    for task, tt in truth.items():
        for key, r in tt.rows.items():
            out.append({"path": key, "fake": True, "task": task, "truth": tt.artifacts(r),
                        "columns": tt.columns})
    for f in sorted((release / "samples").glob("*_real.txt")):
        task = f.stem[: -len("_real")]
        out += [{"path": ln.strip(), "fake": False, "task": task, "truth": [],
                 "columns": truth[task].columns} for ln in f.read_text().splitlines() if ln.strip()]
    for s in out:
        s["uid"] = "s-" + file_digest(release / "1_DATA" / s["path"])[:16]
        s["modality"] = {"img": "image", "vid": "video", "aud": "audio"}[s["task"][:3]]
    return out


def _oeq_predictions(samples: list[dict], answers: Answers) -> list[dict]:
    from leaderboard.core.taxonomy import ARTIFACT_KEYS

    out = []
    for s in samples:
        for task in ("oeq_a", "oeq_b") if s["fake"] else ("oeq_b",):
            arts = answers.artifacts(s["truth"], s["columns"], ARTIFACT_KEYS)
            ours = {"id": f"{task}/{s['uid']}", "artifacts": arts}
            if task == "oeq_b":
                ours["response"] = answers.verdict(s["fake"])
            out.append({"sample": s, "task": task, "ours": ours})
    return out


def _oeq_rows(case: str, case_dir: Path, preds: list[dict], release: Path, recs: dict, ea,
              cal) -> list[dict]:
    from leaderboard.core.taxonomy import TRIDF_ARTIFACTS

    eval_root = case_dir / "eval_hallucination"
    per_csv: dict[tuple[str, str, str], list[dict]] = {}
    det_records: dict[str, list[dict]] = {}
    for p in preds:
        s, ours = p["sample"], p["ours"]
        benchmark = "typea_oeq" if p["task"] == "oeq_a" else "typeb_oeq"
        detection = ea.get_prediction({"response": ours.get("response")}) or ""
        cells = {a.name: str(a.key in ours["artifacts"]) for a in TRIDF_ARTIFACTS}
        per_csv.setdefault((s["modality"], benchmark, s["task"]), []).append(
            {"question_id": s["uid"], "sample_path": s["path"], "detection_prediction": detection,
             "source_label": "fake" if s["fake"] else "real", **cells})
        if benchmark == "typeb_oeq":
            det_records.setdefault(s["modality"], []).append(
                {"response": ours["response"], "sample": {"label": "fake" if s["fake"]
                                                          else "real"}})
    for (modality, benchmark, task), rows in per_csv.items():
        path = eval_root / modality / benchmark / "models" / MODEL / f"{task}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        header = ["question_id", "sample_path", "detection_prediction", "source_label",
                  *(a.name for a in TRIDF_ARTIFACTS)]
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=header)
            w.writeheader()
            w.writerows(rows)
    calc = cal.CoverCalculator(eval_root=eval_root, gt_root=release / "2_GT_Final")
    summary = calc.run() + calc.build_combined_summary()
    out = []
    names = {"macro_cover": "cover", "macro_chair": "chair", "hal_rate": "hal",
             "macro_f_beta": "f05"}
    for r in summary:
        task = "oeq_a" if r["benchmark_task"] == "typea_oeq" else "oeq_b"
        slc = () if r["modality"] == "all" else (("modality", r["modality"]),)
        label = "all" if r["modality"] == "all" else f"modality={r['modality']}"
        for theirs, ours in names.items():
            out.append(row(NAME, case, f"{task}.{ours}", label, recs.get((task, ours, slc)),
                           r[theirs]))
    total_correct = total = 0
    for modality, records in sorted(det_records.items()):
        path = case_dir / "typeb_detection" / f"{modality}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(records), encoding="utf-8")
        res = ea.evaluate_file(path, strict=True)
        total_correct, total = total_correct + res["n_correct"], total + res["n_evaluated"]
        out.append(row(NAME, case, "oeq_b.accuracy", f"modality={modality}",
                       recs.get(("oeq_b", "accuracy", (("modality", modality),))),
                       res["accuracy"]))
    out.append(row(NAME, case, "oeq_b.accuracy", "all", recs.get(("oeq_b", "accuracy", ())),
                   total_correct / total))
    return out
