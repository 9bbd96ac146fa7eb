"""The one-split ``benchmark.yaml`` (issue 33): what a download holds and what receipts digest.
Narrowing is idempotent, so the server's full pack and a team's download give one digest;
``verify --pack`` still accepts the whole file a receipt from before issue 33 digested, and
refuses a definition that differs."""
from __future__ import annotations

import hashlib
import shutil

import pytest

from leaderboard.core.baselines import write_baseline
from leaderboard.core.errors import PackError
from leaderboard.core.pack_copy import split_meta
from leaderboard.core.packs import load_pack, parse_meta
from leaderboard.core.transparency import receipts
from leaderboard.core.transparency.errors import WrongFile
from leaderboard.demo import BENCHMARKS, generate
from leaderboard.verify.receipt import check_scores


@pytest.fixture(scope="module")
def packs(tmp_path_factory):
    out = tmp_path_factory.mktemp("packs")
    return {k: generate(k, out, scale="small", seed=0) for k in BENCHMARKS}


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def test_narrowing_keeps_the_definition_and_is_idempotent(packs, tmp_path):
    for key, root in packs.items():
        full = (root / "benchmark.yaml").read_bytes()
        for split in load_pack(root).splits:
            once = split_meta(full, split)
            assert split_meta(once, split) == once, (key, split)
            a, b = parse_meta(full.decode()), parse_meta(once.decode())
            assert b.splits == (split,)
            assert (a.key, a.version, a.tasks, a.modalities, a.extras) == \
                   (b.key, b.version, b.tasks, b.modalities, b.extras), key
        # a download's folder (one split, narrowed file) digests as the full pack does
        copy = tmp_path / key
        shutil.copytree(root, copy)
        (copy / "benchmark.yaml").write_bytes(split_meta(full, "dev"))
        shutil.rmtree(copy / "splits" / "test")
        assert receipts.pack_digests(copy, "dev") == receipts.pack_digests(root, "dev")


def test_a_split_the_file_does_not_list_is_refused():
    with pytest.raises(PackError, match="split 'test'"):
        split_meta(b"key: x\nsplits: [dev]\n", "test")
    with pytest.raises(PackError, match="mapping"):
        split_meta(b"- a list\n", "dev")


def _body(root, preds, yaml_digest):
    return {"submission": {"split": "dev"}, "records": [],
            "input": {"predictions_sha256": receipts.sha256_file(preds)},
            "pack": {"benchmark_yaml": yaml_digest,
                     "items": receipts.pack_digests(root, "dev")["items"]}}


def test_verify_accepts_the_whole_file_and_refuses_another_definition(packs, tmp_path):
    root = packs["syncred"]
    preds = tmp_path / "p.jsonl"
    write_baseline(load_pack(root), "dev", "random", preds, seed=3)
    whole = _sha((root / "benchmark.yaml").read_bytes())  # a receipt from before issue 33
    assert check_scores(_body(root, preds, whole), root, preds)
    narrowed = receipts.pack_digests(root, "dev")["benchmark_yaml"]
    assert check_scores(_body(root, preds, narrowed), root, preds)
    other = tmp_path / "other"
    shutil.copytree(root, other)
    text = (other / "benchmark.yaml").read_text()
    (other / "benchmark.yaml").write_text(text.replace("title:", "title: Changed", 1))
    with pytest.raises(WrongFile, match="benchmark.yaml differs"):
        check_scores(_body(root, preds, narrowed), other, preds)
