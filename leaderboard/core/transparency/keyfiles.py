"""Key files of a deployment: the private signing key and the published key set.

``<key dir>/signing.pem`` (PKCS#8 PEM, mode 0600) is the current private key;
``<key dir>/published.json`` the published key set (`leaderboard.core.transparency.signing`).
Used by the server (`leaderboard.server.transparency.keys`) and by ``leaderboard receipt-key``
(generate, rotate), which need nothing but these files.
"""
from __future__ import annotations

import fcntl
import json
import os
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography.hazmat.primitives import serialization

from leaderboard.core.transparency.signing import (
    ALGORITHM,
    KeySet,
    Signer,
    format_time,
    generate_pem,
    load_private,
)

SIGNING_FILE = "signing.pem"
PUBLISHED_FILE = "published.json"
#: the old key stays valid this long after a rotation (covers processes mid-commit)
ROTATION_GRACE = timedelta(seconds=60)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _write_private(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def _write_json(path: Path, doc: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


def read_published(key_dir: str | os.PathLike) -> dict:
    path = Path(key_dir) / PUBLISHED_FILE
    if not path.is_file():
        return {"keys": []}
    try:
        doc = json.loads(path.read_text())
        KeySet.from_document(doc)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a published key set: {exc}") from None
    return doc


def entry(signer: Signer, not_before: datetime) -> dict:
    return {"key_id": signer.key_id, "algorithm": ALGORITHM,
            "public_key": signer.public_key_b64, "not_before": format_time(not_before),
            "not_after": None}


@contextmanager
def _locked(key_dir: str | os.PathLike):
    """An exclusive lock on the key folder (published.json's read-modify-write)."""
    Path(key_dir).mkdir(parents=True, exist_ok=True)
    fd = os.open(Path(key_dir) / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def publish(key_dir: str | os.PathLike, signer: Signer, *, now: datetime | None = None) -> dict:
    """Add ``signer``'s public key to the published set (open-ended from ``now``) unless it is
    there; returns the set."""
    with _locked(key_dir):
        doc = read_published(key_dir)
        if not any(k["key_id"] == signer.key_id for k in doc["keys"]):
            doc["keys"].append(entry(signer, now or datetime.now(UTC)))
            _write_json(Path(key_dir) / PUBLISHED_FILE, doc)
    return doc


def generate(key_dir: str | os.PathLike) -> Signer:
    """Create ``signing.pem`` in ``key_dir`` and publish it; FileExistsError if one is there
    (also when another process made it first: the file is linked into place, never
    replaced, and its key published from before it could sign anything)."""
    path = Path(key_dir) / SIGNING_FILE
    if path.exists():
        raise FileExistsError(f"{path} exists; use `leaderboard receipt-key rotate` to replace "
                              "it")
    since = datetime.now(UTC)
    data = generate_pem()
    signer = Signer(load_private(data))
    tmp = path.with_name(f".{path.name}.new-{os.getpid()}")
    _write_private(tmp, data)
    try:
        os.link(tmp, path)
    finally:
        tmp.unlink()
    publish(key_dir, signer, now=since)
    return signer


def rotate(key_dir: str | os.PathLike, *, now: datetime | None = None,
           grace: timedelta = ROTATION_GRACE) -> tuple[Signer | None, Signer]:
    """Replace the current key with a new one: (old, new). The old key's window closes at
    ``now + grace``; the new one's opens at ``now``; the old private key file is removed (its
    public key stays published)."""
    now = now or datetime.now(UTC)
    path = Path(key_dir) / SIGNING_FILE
    old = Signer(load_private(path.read_bytes())) if path.exists() else None
    new = Signer(load_private(generate_pem()))
    with _locked(key_dir):
        doc = read_published(key_dir)
        for k in doc["keys"]:
            if k["not_after"] is None:
                k["not_after"] = format_time(now + grace)
        doc["keys"].append(entry(new, now))
        _write_json(Path(key_dir) / PUBLISHED_FILE, doc)  # published before it signs anything
        _write_private(path, pem(new))
    return old, new


def pem(signer: Signer) -> bytes:
    return signer.private.private_bytes(serialization.Encoding.PEM,
                                        serialization.PrivateFormat.PKCS8,
                                        serialization.NoEncryption())
