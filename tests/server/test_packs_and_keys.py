"""Importing packs (labels encrypted, never copied), re-import idempotency, key rotation."""
from __future__ import annotations

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import func, select

from leaderboard.core.errors import PackError
from leaderboard.core.table import Table
from leaderboard.server import labels_crypto
from leaderboard.server.models import Benchmark, LabelSet
from leaderboard.server.services.benchmarks import import_pack


def test_import_copies_public_files_only(app, imported, session, demo_packs):
    bench = session.scalar(select(Benchmark))
    assert bench.key == "syncred" and bench.meta_json["splits"] == ["dev", "test"]
    assert bench.meta_json["tasks"][0]["key"] == "detection"
    assert len(bench.agreement_version) == 64 and bench.description_md
    copied = {p.name for p in __import__("pathlib").Path(bench.pack_path).rglob("*")}
    assert "items.jsonl" in copied
    assert "labels.jsonl" not in copied and not any(n.endswith(".npz") for n in copied)
    ls = session.scalar(select(LabelSet).where(LabelSet.split == "test"))
    plain = labels_crypto.decrypt(ls.ciphertext, keys=app.config["LABEL_KEYS"])
    assert b"fake" not in ls.ciphertext
    assert len(Table.from_bytes(plain)) > 0


def test_reimport_same_version_is_idempotent(app, imported, session, demo_packs):
    with app.extensions["lb_db"].scope() as s:
        import_pack(s, demo_packs["syncred"], data_dir=app.config["DATA_DIR"],
                    label_keys=app.config["LABEL_KEYS"])
    assert session.scalar(select(func.count()).select_from(Benchmark)) == 1
    assert session.scalar(select(func.count()).select_from(LabelSet)) == 2


def test_bad_pack_changes_nothing(app, session, tmp_path):
    (tmp_path / "benchmark.yaml").write_text("key: [oops\n")
    with pytest.raises(PackError) as err:
        with app.extensions["lb_db"].scope() as s:
            import_pack(s, tmp_path, data_dir=app.config["DATA_DIR"],
                        label_keys=app.config["LABEL_KEYS"])
    assert "benchmark.yaml" in str(err.value)
    assert session.scalar(select(func.count()).select_from(Benchmark)) == 0


def test_rotation_reencrypts_with_newest_key(app, imported, session):
    old = app.config["LABEL_KEYS"]
    new = [Fernet.generate_key().decode(), *old]
    before = {ls.id: labels_crypto.decrypt(ls.ciphertext, keys=old)
              for ls in session.scalars(select(LabelSet))}
    assert labels_crypto.rotate(session, keys=new) == 2
    session.commit()
    for ls in session.scalars(select(LabelSet)):
        assert labels_crypto.decrypt(ls.ciphertext, keys=new[:1]) == before[ls.id]
    with pytest.raises(labels_crypto.LabelKeyError, match="no key"):
        labels_crypto.decrypt(ls.ciphertext, keys=old)
    with pytest.raises(labels_crypto.LabelKeyError, match=r"LABEL_KEYS\[0\]"):
        labels_crypto.encrypt(b"x", keys=["not-a-key"])
