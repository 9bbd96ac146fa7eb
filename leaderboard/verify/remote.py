"""The server's transparency endpoints over HTTP (``requests``), each answer shape-checked.

Network errors and unexpected answers raise `Unreachable` (exit code 9) naming the URL; so does
an answer larger or more deeply nested than `leaderboard.core.transparency.bounds` allows (read
no further than its cap, refused before it is parsed).
"""
from __future__ import annotations

import orjson
import requests

from leaderboard.core.transparency.bounds import MAX_ANSWER_BYTES, check_bounds
from leaderboard.core.transparency.errors import Malformed, Unreachable
from leaderboard.core.transparency.signing import KeySet

TIMEOUT_S = 30


class Server:
    def __init__(self, url: str, *, session: requests.Session | None = None):
        self.url = url.rstrip("/")
        self.http = session or requests.Session()

    def _fetch(self, path: str, params: dict | None = None) -> tuple[str, bytes]:
        """(url, the body of a 200 answer, at most `MAX_ANSWER_BYTES`); LookupError for 404."""
        url = f"{self.url}{path}"
        try:
            with self.http.get(url, params={k: v for k, v in (params or {}).items()
                                            if v is not None},
                               timeout=TIMEOUT_S, stream=True) as resp:
                body = _capped(resp, url)
        except requests.RequestException as exc:
            raise Unreachable(f"cannot reach {url}: {exc}") from None
        if resp.status_code == 404:
            raise LookupError(_message(body) or f"{url}: not found")
        if resp.status_code != 200:
            raise Unreachable(f"{url} answered {resp.status_code}: {_message(body)}")
        return url, body

    def get(self, path: str, **params) -> dict | list:
        url, body = self._fetch(path, params)
        try:
            check_bounds(body, what=f"answer of {url}", max_bytes=MAX_ANSWER_BYTES)
            return orjson.loads(body)
        except Malformed as exc:
            raise Unreachable(str(exc)) from None
        except orjson.JSONDecodeError:
            raise Unreachable(f"{url} did not answer JSON") from None

    def text(self, path: str) -> str:
        url, body = self._fetch(path)
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError:
            raise Unreachable(f"{url} did not answer UTF-8 text") from None

    def keys(self) -> KeySet:
        doc = self.get("/api/v1/keys")
        try:
            return KeySet.from_document(doc)
        except ValueError as exc:
            raise Unreachable(f"{self.url}/api/v1/keys is not a key set: {exc}") from None

    def head(self, size: int | None = None) -> dict:
        return self.get("/api/v1/log/head", size=size)

    def inclusion(self, index: int, size: int) -> list[bytes]:
        doc = self.get("/api/v1/log/proof/inclusion", index=index, size=size)
        return _hashes(doc, self.url)

    def consistency(self, first: int, second: int) -> list[bytes]:
        doc = self.get("/api/v1/log/proof/consistency", first=first, second=second)
        return _hashes(doc, self.url)

    def entry(self, index: int) -> str:
        return self.text(f"/api/v1/log/entries/{index}")

    def entries(self, start: int, count: int) -> list[dict]:
        doc = self.get("/api/v1/log/entries", start=start, count=count)
        if not isinstance(doc, dict) or not isinstance(doc.get("entries"), list):
            raise Unreachable(f"{self.url}/api/v1/log/entries did not answer entries")
        return doc["entries"]


def _hashes(doc, url: str) -> list[bytes]:
    try:
        out = [bytes.fromhex(h) for h in doc["proof"]]
    except (KeyError, TypeError, ValueError):
        raise Unreachable(f"{url} answered a proof that is not a list of hex hashes") from None
    return out


def _capped(resp, url: str) -> bytes:
    chunks, size = [], 0
    for chunk in resp.iter_content(1 << 20):
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise Unreachable(f"{url} answered more than {MAX_ANSWER_BYTES:,} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _message(body: bytes) -> str:
    """The ``message`` of an error answer (JSON within bounds), else its first characters."""
    try:
        doc = orjson.loads(check_bounds(body, what="error answer"))
        return str(doc.get("message") or doc)[:300] if isinstance(doc, dict) else str(doc)[:300]
    except (Malformed, orjson.JSONDecodeError):
        return body[:300].decode("utf-8", "replace")
