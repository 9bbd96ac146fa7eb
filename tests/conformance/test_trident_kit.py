"""The TRIDENT challenge kit's data layout, ZIP and composite score (TCS) reproduced.

``fixtures/trident`` is a hand-made data root in the starter kit's layout (j1anglin/TRIDENT_MM26MGC
at 985d8fbc4065f22b4de5c1c0900b891ee55da818: ``starter_kit/blind_data.py``,
``evaluate_predictions._load_oeq_answers`` / ``_load_choice_answers``): made-up sample and
question ids in the kit's shapes (``s_``, ``qtf_``, ``qmc_`` + 24 hex digits), made-up questions,
labels and artifact cells (the real answers are gated), an audio answers file with five of the
six audio artifacts as columns, repeated options, private_test splits without answers.
PINNED numbers were derived by running the kit outside this repository on the same data and
records: ``evaluate_predictions.score_choice``, ``score_typeb_oeq``, ``score_oeq_artifacts``
(on mapping records holding the same artifacts as our rows), ``_attach_oeq_artifact_metrics``,
``_compact_result_for_output`` and ``compute_tcs_from_tasks``.
"""
from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from leaderboard.builders import tridf
from leaderboard.core.packs import load_pack
from leaderboard.core.scoring import score_predictions
from leaderboard.core.taxonomy import ARTIFACT_KEYS, TRIDF_ARTIFACTS

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "fixtures" / "trident"
KEY_OF = {a.name: a.key for a in TRIDF_ARTIFACTS}
NAME_OF = {a.key: a.name for a in TRIDF_ARTIFACTS}

#: modality -> (tcs, s_det, s_hal, s_perc) from compute_tcs_from_tasks
PINNED = {
    # perfect answers, TFQ as "yes"/"no": the kit reads no TFQ answer, S_Perc = 50, TCS = 85
    "yes_no": {m: (85.0, 100.0, 100.0, 50.0) for m in ("audio", "image", "video")},
    "true_false": {m: (100.0, 100.0, 100.0, 100.0) for m in ("audio", "image", "video")},
    "tricky": {"audio": (29.375, 25.0, 45.833333333333336, 18.75),
               "image": (29.432692307692307, 40.0, 23.94230769230769, 20.833333333333332),
               "video": (22.06060606060606, 33.33333333333333, 19.090909090909093, 10.0)},
}


def _lines(table: str) -> list[str]:
    return [r[0] for r in json.loads((HERE / "data" / f"{table}.json").read_text())["rows"]]


def kit_records(case: str, oeq: dict, choice: dict) -> dict[str, list[dict]]:
    """The kit's records for a case: ``yes_no`` and ``true_false`` are perfect answers (TFQ
    worded either way), ``tricky`` draws every answer from the pinned reader tables."""
    tf, mc, det = _lines("trident_tf"), _lines("trident_mc"), _lines("trident_det")
    out: dict[str, list[dict]] = {k: [] for k in ("tfq", "mcq", "typeb_oeq", "map_a", "map_b")}
    for k, (qid, a) in enumerate(sorted(choice["tfq"].items())):
        words = ("yes", "no") if case == "yes_no" else ("True", "False")
        text = tf[(k * 5) % len(tf)] if case == "tricky" else words[0 if a["ground_truth"] else 1]
        out["tfq"].append({"question_id": qid, "response": text})
    for k, (qid, a) in enumerate(sorted(choice["mcq"].items())):
        text = mc[(k * 7) % len(mc)] if case == "tricky" else ",".join(a["ground_truth"])
        out["mcq"].append({"question_id": qid, "response": text})
    for k, (sid, a) in enumerate(sorted(oeq.items())):
        fake = a["label"] == "fake"
        truth = {KEY_OF[n] for n, on in a["ground_truth_artifacts"].items() if on}
        if case == "tricky":
            verdict = det[(k * 3) % len(det)]
            mapped = {ARTIFACT_KEYS[(k * j) % len(ARTIFACT_KEYS)] for j in (1, 4)} | \
                set(sorted(truth)[: k % 2])
        else:
            verdict = "Likely Manipulated." if fake else "Likely Authentic."
            mapped = truth
        out["typeb_oeq"].append({"sample_id": sid, "response": verdict})
        mapping = "\n".join(f"{NAME_OF[x]}: {x in mapped}" for x in ARTIFACT_KEYS)
        for task in ("map_a", "map_b"):
            out[task].append({"sample_id": sid, "response": mapping, "_mapped": sorted(mapped)})
    return out


def our_rows(kit: dict) -> list[dict]:
    rows = [{"id": r["question_id"], "response": r["response"]} for r in kit["tfq"] + kit["mcq"]]
    verdict = {r["sample_id"]: r["response"] for r in kit["typeb_oeq"]}
    for r in kit["map_a"]:
        rows.append({"id": f"oeq_a/{r['sample_id']}", "artifacts": r["_mapped"]})
        rows.append({"id": f"oeq_b/{r['sample_id']}", "artifacts": r["_mapped"],
                     "response": verdict[r["sample_id"]]})
    return rows


def kit_answers() -> tuple[dict, dict]:
    """What the kit loads from the fixture (``_load_oeq_answers``, ``_load_choice_answers``),
    read here without the kit: sample -> label and artifact cells; question -> ground truth."""
    import csv

    from leaderboard.core.tridf_readers import truth_cell

    oeq = {}
    for f in sorted((FIXTURE / "OEQ" / "public_val").glob("answers_*.csv")):
        with open(f, newline="", encoding="utf-8") as fh:
            for r in csv.DictReader(fh):
                cells = {c: truth_cell(v) for c, v in r.items() if c in KEY_OF}
                oeq[r["sample_id"]] = {"label": r["label"], "ground_truth_artifacts": cells}
    choice = {}
    for task, pkg in (("tfq", "TFQ"), ("mcq", "MCQ")):
        lines = (FIXTURE / pkg / "public_val" / "answers.jsonl").read_text().splitlines()
        choice[task] = {json.loads(x)["question_id"]: json.loads(x) for x in lines if x}
    return oeq, choice


@pytest.fixture(scope="module")
def pack(tmp_path_factory):
    out = tmp_path_factory.mktemp("trident") / "pack"
    report = tridf.build(FIXTURE, out, dev_fraction=0.0)
    # both open-ended tasks ask about every sample, real or fake (TRIDENT's sample submissions)
    assert report.tasks == {"oeq_a": 27, "oeq_b": 27, "tfq": 30, "mcq": 30}
    assert any("OEQ/private_test: no answers" in n for n in report.notes)
    assert any("TFQ/private_test: no answers" in n for n in report.notes)
    p = load_pack(out)
    p.validate()
    return p


def _tcs(result) -> dict:
    got: dict[str, list] = {}
    for r in result.parts["all"]:
        if r.task == "composite":
            got.setdefault(r.slice["modality"], {})[r.metric] = r.value
    return {m: tuple(v[k] for k in ("tcs", "s_det", "s_hal", "s_perc")) for m, v in got.items()}


@pytest.mark.parametrize("case", sorted(PINNED))
def test_tcs_is_the_kits(pack, tmp_path, case):
    oeq, choice = kit_answers()
    rows = our_rows(kit_records(case, oeq, choice))
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    got = _tcs(score_predictions(pack, "test", path, n_resamples=10))
    assert set(got) == set(PINNED[case])
    for m, want in PINNED[case].items():
        assert got[m] == pytest.approx(want, abs=1e-9), (case, m)


def test_the_challenge_zip_aligns_by_the_kits_ids(pack, tmp_path):
    # the kit's sample submission shape: four members, every sample in both OEQ files
    oeq, choice = kit_answers()
    kit = kit_records("yes_no", oeq, choice)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, key in (("tfq", "tfq"), ("mcq", "mcq"), ("typeb_oeq", "typeb_oeq")):
            zf.writestr(f"{name}.jsonl", "".join(json.dumps(r) + "\n" for r in kit[key]))
        zf.writestr("typea_oeq.jsonl", "".join(json.dumps({"sample_id": s, "response": "Blur."})
                                               + "\n" for s in oeq))
    path = tmp_path / "submission.zip"
    path.write_bytes(buf.getvalue())
    result = score_predictions(pack, "test", path, n_resamples=10)
    got = {(r.task, r.metric): r.value for r in result.parts["all"] if r.slice == {}}
    assert got["tfq", "accuracy"] == 1.0 and got["tfq", "trident_accuracy"] == 0.0
    assert got["oeq_b", "trident_accuracy"] == 1.0
    assert {p["task"] for p in result.pending} == {"oeq_a", "oeq_b"}  # mapping needs a judge
