"""Receipts without a server: canonical bytes, signatures, key windows and rotation, sealing."""
from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from leaderboard.core.transparency import canonical, keyfiles, receipts
from leaderboard.core.transparency.errors import BadSignature, Malformed, UnknownKey
from leaderboard.core.transparency.signing import KeySet, Signer, load_private

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _records():
    return [receipts.record(part=p, task="detection", metric="accuracy", slice={}, value=v,
                            ci_low=v - 0.1, ci_high=v + 0.1, n=50)
            for p, v in (("all", 0.61), ("public", 0.6), ("private", 0.625))]


def _body(signer, *, shown=("public",), salt="ab" * 32, when=T0, index=3):
    return receipts.build_body(
        log_index=index, previous_index=None, event="scored", issued_at=when,
        key_id=signer.key_id, benchmark={"key": "demo", "version": "1", "revealed": False},
        pack={"digest": "sha256:00", "benchmark_yaml": "sha256:01", "items": "sha256:02"},
        submission={"id": 7, "split": "test", "kind": "predictions", "team": "Täm",
                    "method": "m", "submitted_at": "2026-12-01T11:00:00.000000Z",
                    "status": "scored", "hidden": False, "disqualified": None, "public": True,
                    "selected": False, "baseline": None},
        input={"predictions_sha256": "sha256:ff"}, records=_records(), shown_parts=shown,
        salt=salt)


@pytest.fixture(scope="module")
def key_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("keys")
    keyfiles.generate(d)
    return d


@pytest.fixture(scope="module")
def signer(key_dir):
    return Signer(load_private((key_dir / "signing.pem").read_bytes()))


@pytest.fixture(scope="module")
def keys(key_dir):
    doc = keyfiles.read_published(key_dir)
    doc["keys"][0]["not_before"] = "2026-01-01T00:00:00.000000Z"
    return KeySet.from_document(doc)


def test_canonical_encoding_is_fixed():
    assert canonical.canonical_bytes({"b": 1, "a": [None, True, "é\n"]}) == \
        '{"a":[null,true,"é\\n"],"b":1}'.encode()
    assert [canonical.encode_real(x) for x in (0.1, 1.0, 1e-07, -0.0, 2 / 3, None)] == \
        ["0.1", "1.0", "1e-07", "0.0", "0.6666666666666666", None]
    for bad in (0.5, float("nan"), 2**60, b"x", {1: 2}, (1,)):
        with pytest.raises(canonical.CanonicalError):
            canonical.canonical_bytes({"x": bad})
    with pytest.raises(canonical.CanonicalError):
        canonical.encode_real(float("inf"))
    assert canonical.decode_real("0.625") == 0.625
    with pytest.raises(ValueError, match="not a canonical real"):
        canonical.decode_real("0.6250")


def test_a_receipt_round_trips(signer, keys):
    doc = receipts.sign(_body(signer), signer)
    data = receipts.encode(doc)
    loaded = receipts.load(data)
    assert receipts.encode(loaded) == data
    assert receipts.check_signature(loaded, keys).key_id == signer.key_id
    assert loaded["receipt"]["records_commitment"].startswith("sha256:")


def _paths(obj, path=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, path + (i,))
    else:
        yield path, obj


def _changed(value):
    if isinstance(value, bool):
        return not value
    if value is None:
        return "x"
    if isinstance(value, int):
        return value + 1
    return value[:-1] + ("0" if value[-1:] != "0" else "1") if value else "x"


def test_any_changed_field_is_detected(signer, keys):
    """One changed value anywhere (body or signature) fails, with a message saying so."""
    doc = receipts.sign(_body(signer), signer)
    seen = 0
    for path, value in _paths(doc):
        tampered = json.loads(receipts.encode(doc))
        target = tampered
        for p in path[:-1]:
            target = target[p]
        target[path[-1]] = _changed(value)
        with pytest.raises((BadSignature, UnknownKey, Malformed)) as err:
            receipts.check_signature(receipts.load(receipts.encode(tampered)), keys)
        if path[-1] not in ("key_id", "issued_at", "algorithm", "format"):
            assert isinstance(err.value, BadSignature), path
            assert "does not match the signed content" in str(err.value)
        seen += 1
    assert seen >= 40


def test_any_changed_byte_is_detected(signer, keys):
    data = receipts.encode(receipts.sign(_body(signer), signer))
    for i in range(0, len(data), 7):
        flipped = data[:i] + bytes([data[i] ^ 0x01]) + data[i + 1:]
        with pytest.raises((BadSignature, UnknownKey, Malformed)):
            receipts.check_signature(receipts.load(flipped), keys)


def test_an_unknown_key_is_named(signer, keys):
    stranger = Signer(load_private(keyfiles.generate_pem()))
    body = _body(stranger)
    with pytest.raises(UnknownKey, match="not among the server's published keys"):
        receipts.check_signature(receipts.sign(body, stranger), keys)


def test_rotation_keeps_old_receipts_valid_and_closes_the_old_window(tmp_path):
    keyfiles.generate(tmp_path)
    old = Signer(load_private((tmp_path / "signing.pem").read_bytes()))
    start = keyfiles.read_published(tmp_path)["keys"][0]["not_before"]
    t_old = datetime.fromisoformat(start.replace("Z", "+00:00")) + timedelta(seconds=1)
    before = receipts.sign(_body(old, when=t_old), old)
    rotated_at = t_old + timedelta(hours=1)
    prev, new = keyfiles.rotate(tmp_path, now=rotated_at, grace=timedelta(seconds=60))
    assert prev.key_id == old.key_id and new.key_id != old.key_id
    assert Signer(load_private((tmp_path / "signing.pem").read_bytes())).key_id == new.key_id
    keys = KeySet.from_document(keyfiles.read_published(tmp_path))
    assert receipts.check_signature(before, keys).key_id == old.key_id  # still valid
    after = receipts.sign(_body(new, when=rotated_at + timedelta(minutes=5)), new)
    assert receipts.check_signature(after, keys).key_id == new.key_id
    # the retired key cannot sign anything dated after its window
    late = receipts.sign(_body(old, when=rotated_at + timedelta(minutes=5)), old)
    with pytest.raises(UnknownKey, match="was not valid at"):
        receipts.check_signature(late, keys)


def test_sealed_parts_stay_out_and_the_reveal_opens_the_commitment(signer):
    sealed = _body(signer)
    assert {r["part"] for r in sealed["records"]} == {"public"}
    assert sealed["sealed_parts"] == ["all", "private"] and "salt" not in sealed
    text = receipts.encode(receipts.sign(sealed, signer)).decode()
    assert "0.625" not in text and "0.61" not in text  # the private and "all" values
    assert receipts.check_commitment(sealed) is False
    opened = _body(signer, shown=("all", "public", "private"))
    assert receipts.check_commitment(opened) is True
    assert opened["records_commitment"] == sealed["records_commitment"]
    opened["records"][0]["value"] = "0.7"
    with pytest.raises(Malformed, match="commitment does not match"):
        receipts.check_commitment(opened)


def test_malformed_documents_are_named():
    with pytest.raises(Malformed, match="not valid JSON"):
        receipts.load(b'{"receipt": ')
    with pytest.raises(Malformed, match="and nothing else"):
        receipts.load(b'{"receipt": {}, "signature": {}, "extra": 1}')
    with pytest.raises(Malformed, match="a real number"):
        receipts.load(b'{"receipt": {"value": 0.5}, "signature": {}}')
    with pytest.raises(Malformed, match="outside"):
        receipts.load(b'{"receipt": {"n": 9007199254740993}, "signature": {}}')
    with pytest.raises(Malformed, match="format"):
        receipts.load(b'{"receipt": {"format": "x"}, "signature": {}}')


@pytest.mark.parametrize("shown", [("public",), ("all", "public", "private"), ()])
def test_records_spliced_as_bytes_give_the_same_receipt(signer, shown):
    """`build_body_encoded` + `sign_encoded(records=...)` (the issuer's hot path: records as
    their canonical bytes) give the bytes of `build_body` + `encode(sign(...))`, sealed or
    not (Ed25519 signatures are deterministic)."""
    expected = receipts.encode(receipts.sign(_body(signer, shown=shown), signer))
    ordered = receipts.sort_records(_records())
    keyed = [(canonical.canonical_bytes(r), r["part"]) for r in ordered]
    plain = _body(signer, shown=shown)
    fields = {k: plain[k] for k in ("log_index", "previous_index", "event", "key_id",
                                    "benchmark", "pack", "submission", "input")}
    body, shown_records = receipts.build_body_encoded(
        records=keyed, shown_parts=shown, salt="ab" * 32,
        records_commitment=receipts.commitment(ordered, "ab" * 32), issued_at=T0, **fields)
    assert receipts.sign_encoded(body, signer, records=shown_records) == expected
    if shown:  # a body with its records decoded is refused, not spliced twice
        with pytest.raises(ValueError, match="empty records list"):
            receipts.sign_encoded(plain, signer, records=shown_records)
