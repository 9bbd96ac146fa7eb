import gzip
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leaderboard.core.errors import PredictionError
from leaderboard.core.packs import load_pack
from leaderboard.core.predictions import MAX_LINE_BYTES, validate_predictions
from tests.core.toy import ASK_INDEX, perfect_rows, write_rows


@pytest.fixture
def pack(toy_pack):
    return load_pack(toy_pack)


def problems_of(pack, path, split="dev"):
    with pytest.raises(PredictionError) as exc:
        validate_predictions(pack, split, path)
    return exc.value.problems


def test_valid_file_covers_every_block(pack, tmp_path):
    ps = validate_predictions(pack, "dev", write_rows(tmp_path / "p.jsonl", perfect_rows()))
    assert sorted(ps.covered) == [("arts", "image"), ("ask", "image"), ("detect", "image"),
                                  ("detect", "video"), ("pick", "image")]
    i = pack.items("dev").index["dev-p0"]
    assert ps.columns["selected_bits"][i] == 0b101
    assert ps.columns["decision"][pack.items("dev").index["dev-d0"]]


def test_gzip_detected_by_magic(pack, tmp_path):
    raw = "".join(json.dumps(r) + "\n" for r in perfect_rows()).encode()
    path = tmp_path / "p.data"
    path.write_bytes(gzip.compress(raw))
    assert validate_predictions(pack, "dev", path).rows == 32


def test_truncated_gzip_is_a_clear_error(pack, tmp_path):
    raw = gzip.compress("".join(json.dumps(r) + "\n" for r in perfect_rows()).encode())
    path = tmp_path / "p.jsonl.gz"
    path.write_bytes(raw[: len(raw) // 2])
    assert "could not be read to the end" in str(problems_of(pack, path).items[0])


def test_partial_block_names_missing_ids(pack, tmp_path):
    rows = [r for r in perfect_rows() if r["id"] != "dev-d4"]
    probs = problems_of(pack, write_rows(tmp_path / "p.jsonl", rows))
    assert probs.total == 1
    assert "(detect, image)" in probs.items[0].message and "dev-d4" in probs.items[0].message


def test_only_some_blocks_is_fine(pack, tmp_path):
    rows = [r for r in perfect_rows() if r["id"].startswith("dev-a")]
    assert validate_predictions(pack, "dev", write_rows(tmp_path / "p.jsonl", rows)).covered == [
        ("ask", "image")]


@pytest.mark.parametrize("bad, field, text", [
    ({"id": "dev-d0", "label": "maybe"}, "label", 'must be "fake" or "real"'),
    ({"id": "dev-d0", "score": 1.7}, "score", "[0, 1]"),
    ({"id": "dev-d0", "score": True}, "score", "must be a number, got true"),
    ({"id": "dev-d0", "score": "0.5"}, "score", "must be a number, got the string '0.5'"),
    ({"id": "dev-d0"}, "label", "needs"),
    ({"id": "dev-d0", "label": "fake", "answer": "yes"}, "answer", "not a field"),
    ({"id": "dev-d0", "label": "fake", "mask": {"size": [5, 5], "counts": "0"}}, "mask", ""),
    ({"id": "dev-a0", "answer": "perhaps"}, "answer", '"yes" or "no"'),
    ({"id": "dev-p0", "answer": ["A", "Z"]}, "answer", "not an option"),
    ({"id": "dev-p0", "answer": 3}, "answer", "list of option letters"),
    ({"id": "dev-r0", "artifacts": ["blur", "glow"]}, "artifacts", "unknown artifact"),
    ({"id": "dev-r0", "response": 5}, "response", "must be a string"),
    ({"id": 7, "label": "fake"}, "id", "string item id"),
    ({"id": "nope", "label": "fake"}, "id", "unknown id"),
])
def test_row_errors_name_line_and_field(pack, tmp_path, bad, field, text):
    rows = [r for r in perfect_rows() if r["id"] != bad["id"]] + [bad]
    probs = problems_of(pack, write_rows(tmp_path / "p.jsonl", rows))
    hit = [p for p in probs.items if p.field == field and p.line == len(rows)]
    assert hit and text in hit[0].message, probs.items


def test_duplicates_nan_utf8_long_lines_nesting(pack, tmp_path):
    rows = [json.dumps(r) for r in perfect_rows()]
    rows.append(json.dumps({"id": "dev-d0", "label": "fake"}))       # 33 duplicate
    rows.append('{"id": "dev-d1", "score": NaN}')                      # 34 NaN literal
    rows.append('{"id": "dev-d1", "score": Infinity}')                 # 35
    path = tmp_path / "p.jsonl"
    path.write_bytes(("\n".join(rows) + "\n").encode() + b'{"id": "\xff\xfe"}\n'  # 36 bad utf-8
                     + b'{"id": "' + b"x" * (MAX_LINE_BYTES + 10) + b'"}\n'        # 37 too long
                     + b"[" * 5000 + b"]" * 5000 + b"\n"                            # 38 deep
                     + b"[1, 2]\n")                                                 # 39 not object
    probs = problems_of(pack, path)
    by_line = {p.line: p.message for p in probs.items}
    assert "duplicate" in by_line[33] and "line 1" in by_line[33]
    assert "not valid JSON" in by_line[34] and "not valid JSON" in by_line[35]
    assert by_line[36] == "invalid UTF-8"
    assert "longer than" in by_line[37]
    assert "not valid JSON" in by_line[38]
    assert "JSON object" in by_line[39]


def test_one_bad_row_is_one_problem(pack, tmp_path):
    rows = [r for r in perfect_rows() if r["id"] != "dev-d0"] + [{"id": "dev-d0", "score": 1.7}]
    probs = problems_of(pack, write_rows(tmp_path / "p.jsonl", rows))
    assert probs.total == 1 and probs.items[0].field == "score"


def test_at_most_50_listed_all_counted(pack, tmp_path):
    rows = [{"id": f"nope{i}", "label": "fake"} for i in range(120)]
    probs = problems_of(pack, write_rows(tmp_path / "p.jsonl", rows))
    assert len(probs.items) == 50 and probs.total >= 120
    assert "more problems" in probs.summary()


def test_empty_file(pack, tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"\n\n")
    assert "no predictions" in problems_of(pack, path).items[0].message


def test_response_extraction_and_unparsable(pack, tmp_path):
    rows = [r for r in perfect_rows() if not r["id"].startswith("dev-a")]
    rows += [{"id": "dev-a0", "response": "No"}, {"id": "dev-a1", "response": "Yes"},
             {"id": "dev-a2", "response": "hmm"}, {"id": "dev-a3", "answer": "NO"}]
    ps = validate_predictions(pack, "dev", write_rows(tmp_path / "p.jsonl", rows))
    idx = pack.items("dev").index
    ans = ps.columns["answer_yesno"]
    assert [ans[idx[f"dev-a{i}"]] for i in range(4)] == [0, 1, -1, 0]
    assert ps.unparsable == 1


def test_multiselect_string_forms(pack, tmp_path):
    rows = [r for r in perfect_rows() if not r["id"].startswith("dev-p")]
    rows += [{"id": "dev-p0", "answer": "A, C"}, {"id": "dev-p1", "answer": "ac"},
             {"id": "dev-p2", "answer": ["e"]}, {"id": "dev-p3", "answer": []}]
    ps = validate_predictions(pack, "dev", write_rows(tmp_path / "p.jsonl", rows))
    idx = pack.items("dev").index
    bits = [int(ps.columns["selected_bits"][idx[f"dev-p{i}"]]) for i in range(4)]
    assert bits == [0b101, 0b101, 0b10000, 0]


def _doc(tmp_path, doc, *, pretty=True):
    path = tmp_path / "loki.json"
    path.write_text(json.dumps(doc, indent=2) if pretty else json.dumps(doc))
    return path


def test_authors_format_is_aligned_by_file_and_index(pack, tmp_path):
    # responses[k] answers record k of ask.json, whatever the pack's order or split
    answers = {"dev": ["no", "yes", "no", "yes"], "test": ["yes", "no", "yes", "no"]}
    responses = [""] * 8
    for split, idx in ASK_INDEX.items():
        for i, k in enumerate(idx):
            responses[k] = answers[split][i]
    for split in ("dev", "test"):
        items = pack.items(split)
        ps = validate_predictions(pack, split, _doc(tmp_path, {
            "model": "m", "source": "data_json/ask.json", "responses": responses}))
        assert ps.covered == [("ask", "image")]
        got = [ps.columns["answer_yesno"][items.index[f"{split}-a{i}"]] for i in range(4)]
        assert got == [1 if a == "yes" else 0 for a in answers[split]]
    # no "source": the only file with 8 records, said in a note; one line per document works too
    ps = validate_predictions(pack, "dev", _doc(tmp_path, {"model": "m", "responses": responses},
                                                pretty=False))
    assert ps.covered == [("ask", "image")] and "ask.json" in ps.notes[0]


@pytest.mark.parametrize("doc, message", [
    ({"model": "m", "responses": ["yes"] * 3}, "no authors' file of this pack has 3 records"),
    ({"model": "m", "source": "ask.json", "responses": ["yes"] * 7},
     "ask.json has 8 records; this document has 7 responses"),
    ({"model": "m", "source": "image/ask.json", "responses": ["yes"] * 8},
     "unknown authors' file 'image/ask.json'"),
    ({"model": "m", "task": "ask", "responses": ["yes"] * 8}, 'name the authors\' file with "source"'),
    ({"model": "m", "responses": ["yes"] * 7 + [None]}, "responses must be strings; not at indices [7]"),
])
def test_authors_format_that_cannot_be_aligned_is_refused(pack, tmp_path, doc, message):
    assert message in problems_of(pack, _doc(tmp_path, doc)).items[0].message


def test_authors_format_twice_for_one_file_is_refused(pack, tmp_path):
    doc = json.dumps({"model": "m", "source": "ask.json", "responses": ["yes"] * 8})
    path = tmp_path / "two.jsonl"
    path.write_text(doc + "\n" + doc + "\n")
    assert "a second document for ask.json" in problems_of(pack, path).items[0].message


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(data=st.one_of(
    st.binary(max_size=400),
    st.lists(st.dictionaries(st.sampled_from(["id", "label", "score", "answer", "mask", "response",
                                              "artifacts", "x"]),
                             st.recursive(st.none() | st.booleans() | st.floats() | st.integers()
                                          | st.text(max_size=8),
                                          lambda c: st.lists(c, max_size=3)
                                          | st.dictionaries(st.text(max_size=5), c, max_size=3),
                                          max_leaves=8), max_size=4),
             max_size=6).map(lambda rows: "\n".join(json.dumps(r) for r in rows).encode()),
))
def test_fuzz_never_raises_anything_else(pack, tmp_path, data):
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(data)
    try:
        validate_predictions(pack, "dev", path)
    except PredictionError as exc:
        assert exc.problems.total >= 1
        str(exc)


def test_reading_stops_after_too_many_problems(pack, tmp_path, monkeypatch):
    import leaderboard.core.predictions as mod
    monkeypatch.setattr(mod, "STOP_AFTER_PROBLEMS", 100)
    path = tmp_path / "bomb.jsonl.gz"
    path.write_bytes(gzip.compress(b"garbage\n" * 100_000))
    with pytest.raises(PredictionError) as exc:
        validate_predictions(pack, "dev", path)
    assert exc.value.problems.total == 100 and "stopped reading at line 101" in str(exc.value)
