"""`openai:<model>@1`: a judge served by any OpenAI-compatible chat-completions endpoint.

This is the production judge, the closest to the papers: TriDF maps artifacts with an external LLM
answering true/false per artifact (section 3.4, appendix G.2); LOKI rates explanations with GPT-4o
on a rubric (appendix C.2). Each response is one ``POST {base_url}/chat/completions`` with
temperature 0 and ``response_format={"type": "json_object"}``, prompts from `prompts/` files.

Failures: HTTP 429 and 5xx, timeouts, refused connections and replies that are not the JSON we
asked for are retried with exponential backoff (``backoff_s * 2**attempt``, or the server's
Retry-After when shorter than `max_backoff_s`); other HTTP errors (401, 404, ...) fail at once.
When retries run out a `JudgeError` says what went wrong and where.
"""
from __future__ import annotations

import json
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import requests

from leaderboard.core.taxonomy import ARTIFACT_KEYS, ARTIFACTS_BY_KEY
from leaderboard.judges.base import (
    ExplanationCase,
    Judge,
    JudgeError,
    Rating,
    check_candidates,
    check_responses,
)
from leaderboard.judges.templates import load_prompt

log = logging.getLogger(__name__)

VERSION = "1"
ARTIFACT_PROMPT = "tridf_artifacts_v1"
RATING_PROMPTS = {"image": "loki_image_v1", "video": "loki_video_v1", "3d": "loki_3d_v1"}
_TRUE = {"true", "yes", "1"}
_FALSE = {"false", "no", "0"}


class _Retryable(Exception):
    """A failure worth another try (the message ends up in the JudgeError)."""

    retry_after: float | None = None


class OpenAIJudge(Judge):
    """Config: `base_url` (e.g. "https://api.openai.com/v1"), `model`, `api_key` (None for local
    servers without auth), `timeout_s` per request, `max_retries` after the first try,
    `backoff_s`, `max_backoff_s`, `max_workers` concurrent requests."""

    name = "openai"
    version = VERSION

    def __init__(self, *, base_url: str, model: str, api_key: str | None = None,
                 timeout_s: float = 60.0, max_retries: int = 4, backoff_s: float = 1.0,
                 max_backoff_s: float = 30.0, max_workers: int = 4) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise JudgeError(f"base_url must be an http(s) URL, got {base_url!r}")
        if not isinstance(model, str) or not model.strip() or "@" in model:
            raise JudgeError(f"model must be a non-empty name without '@', got {model!r}")
        for key, value in (("timeout_s", timeout_s), ("backoff_s", backoff_s),
                           ("max_backoff_s", max_backoff_s)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise JudgeError(f"{key} must be a number >= 0, got {value!r}")
        if timeout_s == 0:
            raise JudgeError("timeout_s must be > 0, got 0")
        if not isinstance(max_retries, int) or max_retries < 0:
            raise JudgeError(f"max_retries must be an integer >= 0, got {max_retries!r}")
        if not isinstance(max_workers, int) or max_workers < 1:
            raise JudgeError(f"max_workers must be an integer >= 1, got {max_workers!r}")
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.timeout_s = float(timeout_s)
        self.max_retries = max_retries
        self.backoff_s = float(backoff_s)
        self.max_backoff_s = float(max_backoff_s)
        self.max_workers = max_workers
        self._local = threading.local()
        self._sessions: list[requests.Session] = []
        self._sessions_lock = threading.Lock()
        self._artifact_prompt = load_prompt(ARTIFACT_PROMPT)
        self._rating_prompts = {m: load_prompt(p) for m, p in RATING_PROMPTS.items()}

    @property
    def identity(self) -> str:
        return f"{self.name}:{self.model}@{self.version}"

    # -- public API -------------------------------------------------------------------------

    def map_artifacts(self, responses, *, candidates=None):
        responses = check_responses(responses)
        keys = check_candidates(candidates) if candidates is not None else list(ARTIFACT_KEYS)
        categories = "\n".join(f"{k}: {ARTIFACTS_BY_KEY[k].name} - {ARTIFACTS_BY_KEY[k].definition}"
                               for k in keys)

        def one(response: str) -> frozenset[str]:
            messages = self._artifact_prompt.messages(categories=categories, response=response,
                                                      keys=", ".join(keys))
            return self._ask(messages, lambda obj: _parse_artifacts(obj, keys))

        return self._map(one, responses)

    def rate_explanations(self, items):
        items = list(items)

        def one(case: ExplanationCase) -> Rating:
            prompt = self._rating_prompts[case.modality]
            messages = prompt.messages(reference=_render_reference(case), response=case.response)
            return self._ask(messages, lambda obj: _parse_rating(obj, case.modality))

        return self._map(one, items)

    # -- transport --------------------------------------------------------------------------

    def _map(self, fn, inputs: list) -> list:
        if len(inputs) <= 1 or self.max_workers == 1:
            return [fn(x) for x in inputs]
        with ThreadPoolExecutor(max_workers=self.max_workers,
                                thread_name_prefix="judge") as pool:
            return list(pool.map(fn, inputs))  # re-raises the first JudgeError in input order

    def _session(self) -> requests.Session:
        # requests.Session is not documented as thread-safe: one per worker thread.
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
            if self.api_key:
                session.headers["Authorization"] = f"Bearer {self.api_key}"
            with self._sessions_lock:
                self._sessions.append(session)
        return session

    def close(self) -> None:
        """Close the HTTP connections this judge opened (it stays usable: new ones open lazily)."""
        with self._sessions_lock:
            sessions, self._sessions = self._sessions, []
        for session in sessions:
            session.close()
        self._local = threading.local()

    def __enter__(self) -> OpenAIJudge:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _ask(self, messages: list[dict], parse):
        body = {"model": self.model, "messages": messages, "temperature": 0,
                "response_format": {"type": "json_object"}}
        last = ""
        for attempt in range(self.max_retries + 1):
            wait = min(self.backoff_s * 2 ** attempt, self.max_backoff_s)
            try:
                content = self._post(body)
                return parse(_load_json(content))
            except _Retryable as exc:
                last = str(exc)
                if exc.retry_after is not None:
                    wait = min(exc.retry_after, self.max_backoff_s)
            if attempt < self.max_retries:
                log.info("judge retry url=%s attempt=%d wait_s=%.2f error=%s", self.url,
                         attempt + 1, wait, last)
                time.sleep(wait)
        raise JudgeError(f"judge {self.identity} at {self.url} failed after "
                         f"{self.max_retries + 1} attempt(s): {last}")

    def _post(self, body: dict) -> str:
        try:
            reply = self._session().post(self.url, json=body, timeout=self.timeout_s)
        except requests.Timeout as exc:
            raise _Retryable(f"no reply within {self.timeout_s:g} s") from exc
        except requests.ConnectionError as exc:
            raise _Retryable(f"cannot connect (is the endpoint up?): {exc}") from exc
        if reply.status_code == 429 or reply.status_code >= 500:
            err = _Retryable(f"HTTP {reply.status_code}: {reply.text[:200]}")
            err.retry_after = _retry_after(reply)
            raise err
        if reply.status_code != 200:
            raise JudgeError(f"judge {self.identity} at {self.url} answered HTTP "
                             f"{reply.status_code}: {reply.text[:300]}")
        try:
            content = reply.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise _Retryable(f"reply is not a chat completion: {reply.text[:200]!r}") from exc
        if not isinstance(content, str):
            raise _Retryable(f"message content is not a string: {content!r:.200}")
        return content


def _retry_after(reply: requests.Response) -> float | None:
    try:
        return max(0.0, float(reply.headers.get("Retry-After", "")))
    except ValueError:
        return None


def _load_json(content: str) -> dict:
    text = content.strip()
    if text.startswith("```"):  # some servers wrap JSON mode output in a fence anyway
        text = text.strip("`").removeprefix("json").strip()
    try:
        obj = json.loads(text)
    except ValueError as exc:
        raise _Retryable(f"malformed JSON in reply: {content[:200]!r}") from exc
    if not isinstance(obj, dict):
        raise _Retryable(f"reply JSON is not an object: {content[:200]!r}")
    return obj


def _parse_artifacts(obj: dict, keys: list[str]) -> frozenset[str]:
    found = set()
    missing = [k for k in keys if k not in obj]
    if missing:
        raise _Retryable(f"reply misses artifact keys {missing}")
    for key in keys:
        value = obj[key]
        if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            value = value.strip().lower() in _TRUE
        if not isinstance(value, bool):
            raise _Retryable(f"artifact {key!r} must be true/false, got {value!r}")
        if value:
            found.add(key)
    return frozenset(found)


def _parse_rating(obj: dict, modality: str) -> Rating:
    refused = obj.get("refused", False)
    scores = obj.get("scores")
    if not isinstance(refused, bool) or not isinstance(scores, dict):
        raise _Retryable(f"rating reply needs 'refused' (bool) and 'scores' (object): {obj!r:.200}")
    reason = obj.get("reason")
    reason = reason if isinstance(reason, str) else None
    if refused:
        return Rating.refusal(modality, rationale=reason or "judge: refused or called authentic")
    for name, value in scores.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _Retryable(f"score {name!r} is not a number: {value!r}")
    try:
        return Rating.from_scores(scores, modality=modality, rationale=reason)
    except ValueError as exc:
        raise _Retryable(str(exc)) from exc


def _render_reference(case: ExplanationCase) -> str:
    """The annotation as numbered lines per group, regions with their [x, y, w, h] box."""
    lines = []
    regions = case.reference.get("regional") or []
    for group, descs in case.groups.items():
        for i, desc in enumerate(descs):
            box = ""
            if group == "regional" and i < len(regions) and isinstance(regions[i], dict) \
                    and regions[i].get("region") is not None:
                box = f" (region {regions[i]['region']})"
            lines.append(f"- {group}{box}: {desc}")
    return "\n".join(lines)

