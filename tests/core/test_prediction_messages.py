"""The validator's messages name the real problem (issue 36): a score written as the string
"0.7" is "a number, got the string '0.7'", not "a number in [0, 1], got 0.7"; a field given as
null says it is null; every message keeps its line and field."""
from __future__ import annotations

import json

import pytest

from leaderboard.core.errors import PredictionError, describe
from leaderboard.core.packs import load_pack
from leaderboard.core.predictions import validate_predictions
from leaderboard.demo import generate
from tests.core.toy import perfect_rows, write_rows


@pytest.fixture
def pack(toy_pack):
    return load_pack(toy_pack)


def _problem(pack, tmp_path, bad: dict, field: str) -> str:
    rows = [r for r in perfect_rows() if r["id"] != bad.get("id")] + [bad]
    with pytest.raises(PredictionError) as exc:
        validate_predictions(pack, "dev", write_rows(tmp_path / "p.jsonl", rows))
    hit = [p for p in exc.value.problems.items if p.line == len(rows) and p.field == field]
    assert len(hit) == 1, exc.value.problems.items
    assert exc.value.problems.total == 1, exc.value.problems.items  # one problem, not two
    return hit[0].message


@pytest.mark.parametrize("bad, field, message", [
    ({"id": "dev-d0", "score": "0.7"}, "score",
     "must be a number, got the string '0.7' (write numbers without quotes)"),
    ({"id": "dev-d0", "score": "high"}, "score", "must be a number, got the string 'high'"),
    ({"id": "dev-d0", "score": True}, "score", "must be a number, got true"),
    ({"id": "dev-d0", "score": [0.7]}, "score", "must be a number, got a list of 1 item"),
    ({"id": "dev-d0", "score": 1.7}, "score", "must be a number in [0, 1], got 1.7"),
    ({"id": "dev-d0", "label": None, "score": None}, "label",
     'label is null and score is null: a detection row needs "label" or "score" (or both)'),
    ({"id": "dev-d0", "label": 1}, "label", 'must be "fake" or "real", got the number 1'),
    ({"id": "dev-d0", "label": "Fake!"}, "label",
     "must be \"fake\" or \"real\", got the string 'Fake!'"),
    ({"id": "dev-d0", "label": "fake", "mask": "RLE"}, "mask",
     "mask must be an object with 'size' and 'counts', got the string 'RLE'"),
    ({"id": "dev-d0", "label": "fake", "rationale": {"why": "x"}}, "rationale",
     "must be a string, got an object"),
    ({"id": "dev-a0", "response": None}, "response",
     'response is null: needs "answer" or "response"'),
    ({"id": "dev-a0", "answer": None}, "answer", 'answer is null: needs "answer" or "response"'),
    ({"id": "dev-a0", "answer": True}, "answer", 'must be "yes" or "no", got true'),
    ({"id": "dev-a0", "response": 5}, "response", "must be a string, got the number 5"),
    ({"id": "dev-p0", "answer": 3}, "answer",
     'must be a list of option letters, e.g. ["A", "C"], got the number 3'),
    ({"id": "dev-r0", "artifacts": "blur"}, "artifacts",
     "must be a list of artifact keys, got the string 'blur'"),
    ({"id": "dev-r0", "artifacts": None, "response": None}, "artifacts",
     'artifacts is null and response is null: needs "artifacts" (taxonomy keys) or '
     '"response"'),
    ({"id": "dev-r0", "response": ["blur"]}, "response", "must be a string, got a list of 1 item"),
    ({"id": None, "label": "fake"}, "id", "is null: every row needs its item's id (a string)"),
    ({"id": 7, "label": "fake"}, "id", "must be a string item id, got the number 7"),
])
def test_messages_name_the_real_problem(pack, tmp_path, bad, field, message):
    assert _problem(pack, tmp_path, bad, field) == message


def test_null_optional_fields_are_absent(pack, tmp_path):
    rows = perfect_rows()
    rows[0] = {**rows[0], "score": None, "mask": None, "rationale": None}
    assert validate_predictions(pack, "dev", write_rows(tmp_path / "p.jsonl", rows)).rows == 32


def test_a_null_explanation_and_a_choice_answer(tmp_path):
    """LOKI's explanation (the response is required) and choice (an option letter) tasks."""
    pack = load_pack(generate("loki", tmp_path / "packs"))
    items = pack.items("dev")
    tasks = {t.key: t.kind for t in pack.tasks}
    kinds = {tasks[str(t)] for t in items.decoded("task")}
    assert {"explanation", "choice"} <= kinds
    by_kind = {}
    for i, rid in enumerate(items.ids.tolist()):
        by_kind.setdefault(tasks[str(items.decoded("task")[i])], rid)
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"id": by_kind["explanation"], "response": None}) + "\n"
                    + json.dumps({"id": by_kind["choice"], "answer": 2}) + "\n")
    with pytest.raises(PredictionError) as exc:
        validate_predictions(pack, "dev", path)
    found = {(p.line, p.field): p.message for p in exc.value.problems.items}
    assert found[1, "response"] == "is null: an explanation task needs the response text"
    assert found[2, "answer"].startswith("must be one of this item's options")
    assert found[2, "answer"].endswith("got the number 2")


@pytest.mark.parametrize("value, text", [
    (None, "null"), (False, "false"), ("0.7", "the string '0.7'"), (3, "the number 3"),
    (0.25, "the number 0.25"), ([], "a list of 0 items"), ({"a": 1}, "an object"),
    ("x" * 50, "the string '" + "x" * 40 + "'..."),
])
def test_describe(value, text):
    assert describe(value) == text
