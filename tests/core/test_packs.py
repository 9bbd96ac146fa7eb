import json

import numpy as np
import pytest

from leaderboard.core.errors import PackError
from leaderboard.core.packs import load_pack, parse_meta
from leaderboard.core.table import Table
from tests.core.toy import write_toy_pack


def test_load_and_compile(toy_pack):
    pack = load_pack(toy_pack)
    pack.validate()
    items, labels = pack.items("dev"), pack.labels("dev")
    assert len(items) == len(labels) == 32
    assert np.array_equal(items.ids, labels.ids)
    assert labels.decoded("label")[0] == "fake"
    assert labels.decoded("truth_letters")[items.index["dev-p0"]].tolist() == [
        True, False, True, False, False]
    assert (toy_pack / ".cache" / "dev.labels.npz").exists()


def test_cache_reused_and_invalidated(toy_pack):
    pack = load_pack(toy_pack)
    pack.labels("dev")
    cache = toy_pack / ".cache" / "dev.labels.npz"
    first = cache.stat().st_mtime_ns
    assert load_pack(toy_pack).labels("dev").meta["stamp"]
    assert cache.stat().st_mtime_ns == first  # reused, not rewritten
    lab = toy_pack / "splits" / "dev" / "labels.jsonl"
    rows = [json.loads(x) for x in lab.read_text().splitlines()]
    rows[0]["label"] = "real"
    lab.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert load_pack(toy_pack).labels("dev").decoded("label")[0] == "real"


def test_table_roundtrip_every_type(toy_pack):
    pack = load_pack(toy_pack)
    t = pack.labels("test")
    back = Table.from_bytes(t.to_bytes())
    for name in t.columns:
        a, b = t.decoded(name), back.decoded(name)
        assert a.shape == b.shape
        if a.dtype == object:
            assert list(a) == list(b)
        else:
            assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


def test_table_from_bytes_refuses_pickle():
    import io
    buf = io.BytesIO()
    np.savez(buf, header=np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError):
        Table.from_bytes(buf.getvalue())


@pytest.mark.parametrize("yaml_text, field", [
    ("key: toy\n", "title"),
    ("[1, 2]", None),
    ("key: toy\ntitle: T\nmodalities: [image]\nsplits: [dev]\ntasks:\n- {key: d, kind: nope, "
     "modalities: [image], headline: accuracy}\n", "tasks[0].kind"),
    ("key: toy\ntitle: T\nmodalities: [smell]\nsplits: [dev]\ntasks: []\n", "modalities"),
    (": : :", None),
])
def test_meta_errors_name_the_field(yaml_text, field):
    with pytest.raises(PackError) as exc:
        parse_meta(yaml_text)
    fields = [p.field for p in exc.value.problems.items]
    if field:
        assert field in fields


def test_missing_yaml(tmp_path):
    with pytest.raises(PackError, match="benchmark.yaml is missing"):
        load_pack(tmp_path)


def test_unknown_benchmark_key(tmp_path):
    root = write_toy_pack(tmp_path / "p")
    text = (root / "benchmark.yaml").read_text().replace("key: toy", "key: nosuch")
    (root / "benchmark.yaml").write_text(text)
    with pytest.raises(PackError, match="unknown benchmark"):
        load_pack(root)


@pytest.mark.parametrize("extra, field, message", [
    ({"id": "x1", "task": "detect", "modality": "image", "secret": 1}, "secret", "unknown field"),
    ({"id": "x1", "task": "detect", "modality": "audio"}, "modality", "has modalities"),
    ({"id": "x1", "task": "detect", "modality": "image", "width": "wide"}, "width", "number"),
    ({"id": "x1", "task": "pick", "modality": "image", "options": ["A"]}, "options", "letters"),
    ({"id": "x1", "task": "detect", "modality": "image", "media": ["../../etc/passwd"]}, "media",
     "relative"),
    ({"id": "dev-d0", "task": "detect", "modality": "image"}, "id", "duplicate"),
    ({"id": "bad id!", "task": "detect", "modality": "image"}, "id", "id must be"),
])
def test_item_errors_name_line_and_field(tmp_path, extra, field, message):
    root = write_toy_pack(tmp_path / "p", extra_item=extra,
                          extra_label={"id": extra["id"], "label": "fake"})
    pack = load_pack(root)
    with pytest.raises(PackError) as exc:
        pack.items("dev")
    probs = exc.value.problems.items
    assert any(p.field == field and message in p.message and p.line == 33 for p in probs), probs
    assert "items.jsonl" in str(exc.value)


def test_label_errors(tmp_path):
    root = write_toy_pack(tmp_path / "p", extra_label={"id": "ghost", "label": "fake"})
    with pytest.raises(PackError, match="not in items.jsonl"):
        load_pack(root).labels("dev")
    root = write_toy_pack(tmp_path / "q", extra_item={"id": "x9", "task": "detect",
                                                      "modality": "image"})
    with pytest.raises(PackError, match="no label row"):
        load_pack(root).labels("dev")


def test_held_out_needs_part(tmp_path):
    root = write_toy_pack(tmp_path / "p", extra_item={"id": "x9", "task": "detect",
                                                      "modality": "image"},
                          extra_label={"id": "x9", "label": "fake"})
    load_pack(root).labels("dev")  # dev rows need no part
    with pytest.raises(PackError) as exc:
        load_pack(root).labels("test")
    assert any(p.field == "part" for p in exc.value.problems.items)


def test_media_must_exist(tmp_path):
    root = write_toy_pack(tmp_path / "p", extra_item={"id": "x9", "task": "detect",
                                                      "modality": "image",
                                                      "media": ["media/none.png"]},
                          extra_label={"id": "x9", "label": "fake", "part": "public"})
    with pytest.raises(PackError, match="does not exist"):
        load_pack(root).validate()
    load_pack(root).validate(check_media=False)


def test_scoring_only_pack_has_its_media_absent_by_declaration(tmp_path):
    root = write_toy_pack(tmp_path / "p", extra_item={"id": "x9", "task": "detect",
                                                      "modality": "image",
                                                      "media": ["media/none.png"]},
                          extra_label={"id": "x9", "label": "fake", "part": "public"})
    meta = root / "benchmark.yaml"
    meta.write_text(meta.read_text() + "scoring_only: true\n")
    pack = load_pack(root)
    assert pack.scoring_only
    pack.validate()
    meta.write_text(meta.read_text().replace("scoring_only: true", "scoring_only: maybe"))
    with pytest.raises(PackError, match="field 'scoring_only': must be true or false, got 'maybe'"):
        load_pack(root)
