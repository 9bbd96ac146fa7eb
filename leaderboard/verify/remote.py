"""The server's transparency endpoints over HTTP (``requests``), each answer shape-checked.

Network errors and unexpected answers raise `Unreachable` (exit code 9) naming the URL.
"""
from __future__ import annotations

import orjson
import requests

from leaderboard.core.transparency.errors import Unreachable
from leaderboard.core.transparency.signing import KeySet

TIMEOUT_S = 30


class Server:
    def __init__(self, url: str, *, session: requests.Session | None = None):
        self.url = url.rstrip("/")
        self.http = session or requests.Session()

    def get(self, path: str, **params) -> dict | list:
        url = f"{self.url}{path}"
        try:
            resp = self.http.get(url, params={k: v for k, v in params.items() if v is not None},
                                 timeout=TIMEOUT_S)
        except requests.RequestException as exc:
            raise Unreachable(f"cannot reach {url}: {exc}") from None
        if resp.status_code == 404:
            raise LookupError(_message(resp) or f"{url}: not found")
        if resp.status_code != 200:
            raise Unreachable(f"{url} answered {resp.status_code}: {_message(resp)}")
        try:
            return orjson.loads(resp.content)
        except orjson.JSONDecodeError:
            raise Unreachable(f"{url} did not answer JSON") from None

    def text(self, path: str) -> str:
        url = f"{self.url}{path}"
        try:
            resp = self.http.get(url, timeout=TIMEOUT_S)
        except requests.RequestException as exc:
            raise Unreachable(f"cannot reach {url}: {exc}") from None
        if resp.status_code == 404:
            raise LookupError(_message(resp) or f"{url}: not found")
        if resp.status_code != 200:
            raise Unreachable(f"{url} answered {resp.status_code}: {_message(resp)}")
        return resp.text

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


def _message(resp) -> str:
    try:
        body = resp.json()
        return str(body.get("message") or body)[:300]
    except ValueError:
        return resp.text[:300]
