"""Signing keys of receipts and tree heads: never in the database.

Where the key comes from (`Keyring`, settings read by `leaderboard.server.config`):

* ``RECEIPT_SIGNING_KEY`` (environment): the current private key, PKCS#8 PEM or the base64 of
  its 32-byte seed; or else
* ``RECEIPT_KEY_DIR/signing.pem`` (default ``DATA_DIR/keys``), generated with mode 0600 on first
  use when absent, so a fresh checkout signs out of the box (``make run`` does this).

``RECEIPT_KEY_DIR/published.json`` is the published key set (`leaderboard.core.transparency.
signing`): every key ever used, with its validity window. Rotation (``leaderboard receipt-key
rotate``, `leaderboard.core.transparency.keyfiles.rotate`) closes the current key's window (after a grace period that covers processes still
signing with it), opens the new one's, and replaces ``signing.pem``; old keys stay published, so
every receipt they signed stays valid. Processes notice a replaced ``signing.pem`` by its
``stat`` on each use, no restart needed.
"""
from __future__ import annotations

import logging
import threading
from pathlib import Path

from leaderboard.core.transparency.keyfiles import (
    EPOCH,
    PUBLISHED_FILE,
    SIGNING_FILE,
    entry,
    generate,
    publish,
    read_published,
)
from leaderboard.core.transparency.signing import KeySet, Signer, load_private

log = logging.getLogger(__name__)

class Keyring:
    """The current signer and the published key set of one deployment (thread-safe, lazy)."""

    def __init__(self, *, key_dir: str, env_key: str | None = None):
        self.key_dir = Path(key_dir)
        self.env_key = env_key or None
        self._lock = threading.Lock()
        self._signer: Signer | None = None
        self._stamp = None
        self._published: dict | None = None
        self._published_stamp = None
        if self.env_key is not None:
            load_private(self.env_key)  # fail at start-up, not at the first commit

    def _file_stamp(self, name: str):
        try:
            st = (self.key_dir / name).stat()
        except OSError:
            return None
        return st.st_ino, st.st_mtime_ns, st.st_size

    def signer(self) -> Signer:
        """The current signing key (loaded, or generated in the key folder on first use)."""
        if self.env_key is not None:
            with self._lock:
                if self._signer is None:
                    self._signer = Signer(load_private(self.env_key))
                    self._ensure_published(self._signer)
                return self._signer
        stamp = self._file_stamp(SIGNING_FILE)
        with self._lock:
            if self._signer is None or stamp != self._stamp:
                path = self.key_dir / SIGNING_FILE
                if stamp is None:
                    log.info("receipt signing key generated dir=%s", self.key_dir)
                    try:
                        self._signer = generate(self.key_dir)
                    except FileExistsError:  # another process made it first
                        self._signer = Signer(load_private(path.read_bytes()))
                else:
                    self._signer = Signer(load_private(path.read_bytes()))
                self._stamp = self._file_stamp(SIGNING_FILE)
                self._ensure_published(self._signer)
            return self._signer

    def _ensure_published(self, signer: Signer) -> None:
        try:
            publish(self.key_dir, signer)
        except OSError:
            # a read-only key folder (the key came from the environment): publish it in memory,
            # valid from the epoch, and say so
            log.warning("receipt key %s is not in %s and the folder is read-only",
                        signer.key_id, self.key_dir / PUBLISHED_FILE)
            doc = read_published(self.key_dir)
            doc["keys"].append(entry(signer, EPOCH))
            self._published, self._published_stamp = doc, self._file_stamp(PUBLISHED_FILE)

    def published(self) -> dict:
        """The published key set (every key with its window), as served at /api/v1/keys."""
        self.signer()
        stamp = self._file_stamp(PUBLISHED_FILE)
        with self._lock:
            if self._published is None or stamp != self._published_stamp:
                self._published = read_published(self.key_dir)
                self._published_stamp = stamp
            return self._published

    def keyset(self) -> KeySet:
        return KeySet.from_document(self.published())


def from_config(cfg) -> Keyring:
    return Keyring(key_dir=cfg["RECEIPT_KEY_DIR"], env_key=cfg.get("RECEIPT_SIGNING_KEY"))
