"""The TriDF conformance fixture and deterministic predictions in the authors' formats.

The fixture files are hand-made (made-up sample paths, generators, question wording, options,
answers and ground truth), written in the authors' formats (j1anglin/TriDF at f041a19):
``fixtures/tridf_release`` holds question files as ``3_Benchmark/benchmark_perception_tf|mc/``
holds them (same fields and nesting, ids ``<stem>-<index>``, both key orders of the location
MCQs, a repeated option, an E line worded their own way); ``fixtures/tridf`` holds ground truth in
the gated ``2_GT_Final`` format as ``cal_score.py`` reads it (a ``_com`` file that replaces a
base row, lacks base columns and adds one the base lacks, a ``question_id`` column, cells such
as "[ ]", "[  ]", "NULL", "x") and real-sample lists (paths with and without ``real_``/``real-``).
Media are 1-line stubs under ``1_DATA/`` so that OEQ ids (``s-`` + file digest) are known.
The pinned numbers in the tests come from running the authors' scorers on exactly these files
and predictions (outside this repository).
"""
from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

from leaderboard.builders.common import file_digest
from leaderboard.core.taxonomy import ARTIFACT_KEYS, TRIDF_ARTIFACTS

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures"
DATA = HERE / "data"
TF_DIR, MC_DIR = "3_Benchmark/benchmark_perception_tf", "3_Benchmark/benchmark_perception_mc"
KEY_OF = {a.name: a.key for a in TRIDF_ARTIFACTS}


def make_release(dst: Path) -> Path:
    shutil.copytree(FIXTURES / "tridf_release", dst)
    shutil.copytree(FIXTURES / "tridf", dst, dirs_exist_ok=True)
    for key in sample_paths(dst):
        path = dst / "1_DATA" / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"stub " + key.encode())
    return dst


def sample_paths(release: Path) -> list[str]:
    """Every sample the release names (a release has all media or none)."""
    keys = set()
    for folder in (TF_DIR, MC_DIR):
        for f in (release / folder).glob("*.json"):
            keys |= {r["sample_path"] for r in json.loads(f.read_text(encoding="utf-8"))}
    for f in (release / "2_GT_Final").glob("*.csv"):
        with open(f, newline="", encoding="utf-8") as fh:
            keys |= {r["sample_path"] for r in csv.DictReader(fh)}
    for f in (release / "samples").glob("*.txt"):
        keys |= {ln.strip() for ln in f.read_text().splitlines() if ln.strip()}
    return sorted(keys)


def tricky(table: str) -> list[str]:
    return [r[0] for r in json.loads((DATA / f"{table}.json").read_text())["rows"]]


def perception_records(release: Path, folder: str, stride: int = 7) -> list[dict]:
    """The authors' inference records (run_perception_tf_ver2 / run_perception_mc) for every
    question of ``folder``, each answering with a tricky response of the pinned tables."""
    inputs = tricky("tridf_tf" if folder == TF_DIR else "tridf_mc")
    out, k = [], 0
    for f in sorted((release / folder).glob("*.json")):
        for i, rec in enumerate(json.loads(f.read_text(encoding="utf-8"))):
            out.append({"model_id": "m", "sample": {"task": rec["task"],
                                                    "sample_id": f"{f.stem}-{i}"},
                        "response": inputs[(k * stride) % len(inputs)],
                        "question_file": f"/runs/questions/{f.name}", "question_index": i,
                        "raw_question": rec["question"]})
            k += 1
    return out


def oeq_samples(release: Path) -> list[dict]:
    """Each OEQ sample: path, task, fake, cells marked "True" (a ``_com`` row replacing the
    base row) and item uid."""
    by_path: dict[str, dict] = {}
    for f in sorted((release / "2_GT_Final").glob("*.csv")):  # <task>.csv before <task>_com.csv
        task = f.stem.removesuffix("_com")
        with open(f, newline="", encoding="utf-8") as fh:
            for r in csv.DictReader(fh):
                on = [KEY_OF[c] for c, v in r.items() if c in KEY_OF and (v or "").strip()
                      in ("True", "1")]
                by_path[r["sample_path"]] = {"path": r["sample_path"], "task": task,
                                             "fake": True, "on": on}
    for f in sorted((release / "samples").glob("*_real.txt")):
        task = f.stem.removesuffix("_real")
        for ln in f.read_text().splitlines():
            if ln.strip():
                by_path[ln.strip()] = {"path": ln.strip(), "task": task, "fake": False}
    for s in by_path.values():
        s["uid"] = "s-" + file_digest(release / "1_DATA" / s["path"])[:16]
        s["modality"] = {"img": "image", "vid": "video", "aud": "audio"}[s["task"][:3]]
    return list(by_path.values())


def oeq_predictions(release: Path) -> list[dict]:
    """Self-mapped OEQ rows: the k-th sample names artifacts k, 5k and 11k of the taxonomy (on
    and off its CSV's columns), most fakes also one or two of their annotated artifacts, and a
    tricky type B verdict."""
    verdicts = tricky("tridf_det")
    rows = []
    for k, s in enumerate(oeq_samples(release)):
        arts = {ARTIFACT_KEYS[(k * j) % len(ARTIFACT_KEYS)] for j in (1, 5, 11)}
        if s["fake"] and s["on"] and k % 3:
            arts |= set(s["on"][: k % 3])  # one or two right artifacts among the others
        arts = sorted(arts)
        if s["fake"]:
            rows.append({"id": f"oeq_a/{s['uid']}", "artifacts": arts})
        rows.append({"id": f"oeq_b/{s['uid']}", "artifacts": arts[1:],
                     "response": verdicts[(k * 3) % len(verdicts)]})
    return rows
