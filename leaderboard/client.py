"""Submit from a terminal: ``leaderboard submit --benchmark B --split S FILE`` (the toolkit's
console script; ``python -m leaderboard.client submit`` is the same command).

Streams the file as multipart (constant memory, a tqdm progress bar), then polls the submission's
status until it is scored or failed and prints the failure reasons line by line.
Exit codes: 0 scored, 1 failed (the file was invalid or scoring failed), 2 the request was refused
(bad token, quota, unknown benchmark ...), 3 the server could not be reached.
``--server`` defaults to ``$LB_SERVER`` (else http://127.0.0.1:5000), ``--token`` to ``$LB_TOKEN``.

Safe to retry (issue 17): every upload carries an ``Idempotency-Key`` derived from the file's
sha256 and its target (benchmark, split, kind, method name), so the server answers a repeated
upload with the first one's submission, never a second row or a second quota charge. The client
therefore retries what may be transient on its own, with exponential backoff and saying so on
stderr: a lost connection (reset, refused, timed out), 502/503/504, and 429 when the server says
when to come back (``Retry-After``). A 429 without it (the daily quota) is final. Running the
same command again after a crash is just as safe.
"""
from __future__ import annotations

import email.utils
import hashlib
import os
import random
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import click
import requests
from tqdm import tqdm

CHUNK = 256 * 1024
DONE = ("scored", "failed")


class _Body:
    """An iterable body with a known length, so requests sends Content-Length (not chunked
    transfer encoding, which WSGI servers handle unevenly)."""

    def __init__(self, length: int, chunks: Iterator[bytes]):
        self.length, self.chunks = length, chunks

    def __len__(self) -> int:
        return self.length

    def __iter__(self) -> Iterator[bytes]:
        return self.chunks


def _multipart(fields: dict[str, str], path: Path, bar: tqdm | None) -> tuple[str, _Body]:
    """(content type, body) of a multipart form with one file part, streamed from disk."""
    boundary = uuid.uuid4().hex
    head = b"".join(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
        for k, v in fields.items())
    quoted = path.name.replace('"', "_")
    head += (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
             f'filename="{quoted}"\r\nContent-Type: application/octet-stream\r\n\r\n').encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    size = path.stat().st_size

    def body():
        yield head
        with open(path, "rb") as fh:
            while chunk := fh.read(CHUNK):
                if bar is not None:
                    bar.update(len(chunk))
                yield chunk
        yield tail

    return f"multipart/form-data; boundary={boundary}", _Body(len(head) + size + len(tail), body())


def _error_text(resp: requests.Response) -> str:
    try:
        body = resp.json()
    except ValueError:
        return f"HTTP {resp.status_code}: {resp.text[:300]}"
    lines = [f"{body.get('error', 'error')}: {body.get('message', '')}"]
    for p in body.get("problems", []) or []:
        where = ", ".join(x for x in (f"line {p['line']}" if p.get("line") is not None else "",
                                      f"field '{p['field']}'" if p.get("field") else "") if x)
        lines.append(f"  {where + ': ' if where else ''}{p.get('message')}")
    quota = body.get("quota")
    if quota:
        left = ("no daily limit" if quota.get("limit") is None
                else f"{quota['left']} of {quota['limit']} left")
        lines.append(f"  quota: {left}, resets {quota['resets_at']}")
    base = resp.url.split("/api/", 1)[0] if "/api/" in resp.url else ""
    if body.get("sign_url"):  # a held-out split without the agreement (issue 21)
        lines.append(f"  sign the data-use agreement at {base}{body['sign_url']}")
    if body.get("enter_url"):  # a challenge the team has not entered (issue 33)
        lines.append(f"  enter the challenge at {base}{body['enter_url']}")
    return "\n".join(lines)


def _auth(token: str) -> dict:
    return {"Authorization": f"Bearer {token}", "Accept": "application/json"}


def check(server: str, token: str, *, benchmark: str, split: str, kind: str = "predictions",
          challenge: str = "", idempotency_key: str | None = None,
          session: requests.Session | None = None, retry: RetryPolicy | None = None,
          on_retry: Callable[[RetryEvent], None] | None = None,
          sleep: Callable[[float], None] = time.sleep) -> dict:
    """Ask the server whether it would take an upload to this target now (``GET
    /api/v1/submissions/check``), before any byte of a file is sent: the split, the challenge's
    open phase, the agreement and the quota (an ``idempotency_key`` the server already knows is a
    retry it will answer, whatever is left of the quota). Returns what the upload would count
    against; raises ClientError with the server's reason otherwise."""
    http = session or requests.Session()
    params = {"benchmark": benchmark, "split": split, "kind": kind}
    if challenge:
        params["challenge"] = challenge
    headers = _auth(token)
    if idempotency_key:
        headers["Idempotency-Key"] = idempotency_key
    resp = _with_retries(lambda: http.get(f"{server.rstrip('/')}/api/v1/submissions/check",
                                          params=params, headers=headers, timeout=(10, 60)),
                         retry or RetryPolicy(), on_retry, sleep)
    if resp.status_code != 200:
        raise ClientError(_error_text(resp))
    return resp.json()


def enter_challenge(server: str, token: str, challenge: str, *,
                    session: requests.Session | None = None) -> bool:
    """Enter the caller's team in ``challenge`` (idempotent); True when it entered now."""
    http = session or requests.Session()
    resp = http.post(f"{server.rstrip('/')}/api/v1/challenges/{challenge}/enter",
                     headers=_auth(token), timeout=(10, 60))
    if resp.status_code not in (200, 201):
        raise ClientError(_error_text(resp))
    return bool(resp.json().get("entered_now"))


#: errors after which the request may or may not have reached the server: retried
TRANSIENT_ERRORS = (requests.ConnectionError, requests.Timeout,
                    requests.exceptions.ChunkedEncodingError)
RETRY_STATUSES = (502, 503, 504)


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try: ``tries`` in all, waits doubling from ``base_s`` up to ``cap_s`` (a
    server's ``Retry-After`` wins when it is longer, up to ``max_retry_after_s``)."""

    tries: int = 9
    base_s: float = 1.0
    cap_s: float = 30.0
    max_retry_after_s: float = 300.0


@dataclass(frozen=True)
class RetryEvent:
    """One failed try about to be retried (what ``on_retry`` callbacks receive)."""

    attempt: int  # 1-based number of the try that failed
    tries: int  # tries in all (0: until a deadline)
    delay_s: float
    reason: str  # "HTTP 503: ..." or "connection error: ..."
    status: int | None = None  # None: no HTTP answer
    retry_after: str | None = None
    body: str = ""


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK * 4):
            digest.update(chunk)
    return digest.hexdigest()


def upload_key(path: Path, *, benchmark: str, split: str, kind: str, method_name: str,
               challenge: str = "") -> str:
    """The idempotency key of an upload: the same file to the same target is the same upload
    (also when the command is run again), a changed file or target (a challenge too) a new one."""
    target = "\n".join((file_sha256(path), benchmark, split, kind, method_name)
                       + ((f"challenge={challenge}",) if challenge else ()))
    return "cli-" + hashlib.sha256(target.encode()).hexdigest()[:48]


def _retry_after(resp: requests.Response) -> float | None:
    value = resp.headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def _transient_wait(resp: requests.Response) -> float | None:
    """None if ``resp`` is final; else how long the server asked us to wait (0: unspecified)."""
    if resp.status_code in RETRY_STATUSES:
        return _retry_after(resp) or 0.0
    if resp.status_code == 429:
        return _retry_after(resp)  # the rate limiter says when; the daily quota does not
    return None


def _backoff(policy: RetryPolicy, attempt: int, asked_s: float | None) -> float:
    wait = min(policy.cap_s, policy.base_s * 2 ** (attempt - 1)) * random.uniform(0.5, 1.0)
    if asked_s:
        wait = max(wait, min(asked_s, policy.max_retry_after_s))
    return wait


def _with_retries(send: Callable[[], requests.Response], policy: RetryPolicy,
                  on_retry: Callable[[RetryEvent], None] | None,
                  sleep: Callable[[float], None]) -> requests.Response:
    """``send()`` until it gets a final answer (returned) or the tries run out (the last
    answer is returned; the last connection error raised)."""
    for attempt in range(1, policy.tries + 1):
        try:
            resp = send()
        except TRANSIENT_ERRORS as exc:
            if attempt == policy.tries:
                raise
            event = RetryEvent(attempt, policy.tries, _backoff(policy, attempt, None),
                               f"connection error: {type(exc).__name__}: {exc}"[:300])
        else:
            asked = _transient_wait(resp)
            if asked is None or attempt == policy.tries:
                return resp
            event = RetryEvent(attempt, policy.tries, _backoff(policy, attempt, asked),
                               _error_text(resp).splitlines()[0][:300], resp.status_code,
                               resp.headers.get("Retry-After"), resp.text[:2000])
        if on_retry is not None:
            on_retry(event)
        sleep(event.delay_s)
    raise AssertionError("unreachable")  # pragma: no cover


def submit(server: str, token: str, *, benchmark: str, split: str, path: Path,
           method_name: str, description: str = "", paper_url: str = "", code_url: str = "",
           public: bool = True, progress: bool = True, session: requests.Session | None = None,
           kind: str = "predictions", idempotency_key: str | None = None,
           retry: RetryPolicy | None = None, on_retry: Callable[[RetryEvent], None] | None = None,
           sleep: Callable[[float], None] = time.sleep, challenge: str = "",
           allow_rerun: bool = True) -> dict:
    """Upload ``path`` (a predictions file, or with ``kind="container"`` a ``docker save``
    tarball); returns the 202 status document, with ``"replayed": True`` when the server
    already had this upload (same idempotency key). Transient failures are retried per
    ``retry`` (`RetryPolicy`; ``RetryPolicy(tries=1)`` never retries), each reported to
    ``on_retry``. ``challenge`` (a key) makes it a submission to that challenge.
    ``allow_rerun`` (images only, default on): the platform may re-run the image on the
    benchmark's later releases, without counting toward the quota. The target
    also travels in the query string, so the server refuses a wrong one before reading the
    body. Raises ClientError on refusal, and the last connection error if the server never
    answered."""
    if kind not in ("predictions", "container"):
        raise ValueError(f"kind must be 'predictions' or 'container', got {kind!r}")
    http = session or requests.Session()
    key = idempotency_key or upload_key(path, benchmark=benchmark, split=split, kind=kind,
                                        method_name=method_name, challenge=challenge)
    fields = {"benchmark": benchmark, "split": split, "method_name": method_name,
              "description": description, "paper_url": paper_url, "code_url": code_url,
              "is_public": "1" if public else "0", "kind": kind}
    target = {"benchmark": benchmark, "split": split, "kind": kind}
    if challenge:
        fields["challenge"] = target["challenge"] = challenge
    if kind == "container":
        fields["allow_rerun"] = "1" if allow_rerun else "0"
    size = path.stat().st_size
    with tqdm(total=size, unit="B", unit_scale=True, desc="upload", disable=not progress,
              file=sys.stderr) as bar:
        def send() -> requests.Response:
            bar.reset()
            ctype, body = _multipart(fields, path, bar)
            return http.post(f"{server.rstrip('/')}/api/v1/submissions", data=body,
                             params=target,
                             headers={"Authorization": f"Bearer {token}", "Content-Type": ctype,
                                      "Accept": "application/json", "Idempotency-Key": key},
                             timeout=(10, 600))

        resp = _with_retries(send, retry or RetryPolicy(), on_retry, sleep)
    if resp.status_code != 202:
        raise ClientError(_error_text(resp))
    doc = resp.json()
    doc["replayed"] = resp.headers.get("Idempotent-Replayed") == "true"
    return doc


def wait(server: str, token: str, submission_id: int, *, interval: float = 1.0,
         timeout: float = 3600, session: requests.Session | None = None,
         on_status=None, on_retry: Callable[[RetryEvent], None] | None = None,
         sleep: Callable[[float], None] = time.sleep) -> dict:
    """Poll until the submission is scored or failed (or ``timeout`` seconds pass). A poll
    that fails transiently (see `submit`) is tried again, reported to ``on_retry``, until the
    timeout; then the last error is raised (ClientError, or the connection error)."""
    http = session or requests.Session()
    url = f"{server.rstrip('/')}/api/v1/submissions/{submission_id}"
    deadline = time.monotonic() + timeout
    policy = RetryPolicy(cap_s=10.0)
    last, failures = None, 0
    while True:
        try:
            resp = http.get(url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
        except TRANSIENT_ERRORS as exc:
            failures += 1
            if time.monotonic() > deadline:
                raise
            event = RetryEvent(failures, 0, _backoff(policy, min(failures, 10), None),
                               f"connection error: {type(exc).__name__}: {exc}"[:300])
        else:
            asked = _transient_wait(resp)
            if asked is not None and time.monotonic() <= deadline:
                failures += 1
                event = RetryEvent(failures, 0, _backoff(policy, min(failures, 10), asked),
                                   _error_text(resp).splitlines()[0][:300], resp.status_code,
                                   resp.headers.get("Retry-After"), resp.text[:2000])
            else:
                if resp.status_code != 200:
                    raise ClientError(_error_text(resp))
                failures = 0
                body = resp.json()
                if on_status is not None and body["status"] != last:
                    on_status(body)
                    last = body["status"]
                if body["status"] in DONE or time.monotonic() > deadline:
                    return body
                sleep(interval)
                continue
        if on_retry is not None:
            on_retry(event)
        sleep(event.delay_s)


class ClientError(Exception):
    """The server refused the request; the message is what it said."""


@click.group()
def main() -> None:
    """Command-line client of the leaderboard server."""


def headline_lines(status: dict) -> list[str]:
    """The headline numbers of a scored submission, one line per task (what the CLI prints)."""
    out = []
    for h in status.get("headline") or []:
        value, fmt = h.get("value"), h.get("fmt")

        def show(v):
            if v is None:
                return "n/a"
            return f"{100 * v:.1f}%" if fmt == "pct" else (f"{v:+.3f}" if fmt == "signed"
                                                            else f"{v:.3f}")
        ci = (f" [{show(h['ci_low'])}, {show(h['ci_high'])}]"
              if h.get("ci_low") is not None else "")
        part = f", {h['part']} part" if h.get("part") not in (None, "all") else ""
        out.append(f"  {h['task_title']}: {h['title']} {show(value)}{ci} (n={h['n']}{part})")
    return out


@main.command("submit", epilog="""\b
Environment variables:
  LB_SERVER   the server's base URL (default http://127.0.0.1:5000); --server overrides it
  LB_TOKEN    your API token (create one on the team page); --token overrides it
Exit codes: 0 scored, 1 failed, 2 refused (token, quota, benchmark), 3 server unreachable
(after the retries: a lost connection, 502/503/504 and 429 with Retry-After are retried).""")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                required=False)
@click.option("--image", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Submit a detector image (docker save tarball) instead of FILE.")
@click.option("--benchmark", required=True)
@click.option("--split", required=True)
@click.option("--challenge", default="",
              help="Submit to this challenge (its key): enters your team if it has not, and "
                   "the challenge's phase, split and caps apply. Without it the submission goes "
                   "to the standing boards, whatever challenge runs.")
@click.option("--method", "method_name", default=None, help="Method name (default: file name).")
@click.option("--description", default="")
@click.option("--paper-url", default="")
@click.option("--code-url", default="")
@click.option("--private", is_flag=True, help="Keep it off the public board.")
@click.option("--no-rerun", is_flag=True,
              help="With --image: do not let the platform re-run this image on the benchmark's "
                   "later releases (by default it does, at no cost to your quota).")
@click.option("--server", envvar="LB_SERVER", default="http://127.0.0.1:5000", show_default=True,
              show_envvar=True, help="Server base URL (or $LB_SERVER).")
@click.option("--token", envvar="LB_TOKEN", required=True, show_envvar=True,
              help="API token (or $LB_TOKEN).")
@click.option("--no-wait", is_flag=True, help="Return after the upload.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.option("--retries", type=click.IntRange(min=0), default=8, show_default=True,
              help="Retries of an upload that failed transiently (lost connection, "
                   "502/503/504, 429 with Retry-After).")
@click.option("--idempotency-key", default=None,
              help="Key naming this upload (default: derived from the file's sha256 and the "
                   "target, so re-running the command never submits twice).")
def submit_cmd(file: Path | None, image: Path | None, benchmark: str, split: str,
               method_name: str | None,
               description: str, paper_url: str, code_url: str, private: bool, server: str,
               token: str, no_wait: bool, quiet: bool, retries: int,
               idempotency_key: str | None, challenge: str, no_rerun: bool) -> None:
    """Upload a predictions FILE (or a detector --image) and wait for its score."""
    if (file is None) == (image is None):
        click.echo("error: give either a predictions FILE or --image TARBALL", err=True)
        sys.exit(2)
    kind, file = ("container", image) if image is not None else ("predictions", file)

    def say_retry(event: RetryEvent) -> None:
        click.echo(f"warning: try {event.attempt} of {event.tries} failed ({event.reason}); "
                   f"retrying in {event.delay_s:.0f} s (the upload is never counted twice)",
                   err=True)

    try:
        if challenge and enter_challenge(server, token, challenge):
            click.echo(f"your team entered challenge {challenge}", err=True)
        # asked first: a wrong split or a closed phase is refused before the file is sent
        method_name = method_name or file.name.split(".")[0]
        key = idempotency_key or upload_key(file, benchmark=benchmark, split=split, kind=kind,
                                            method_name=method_name, challenge=challenge)
        check(server, token, benchmark=benchmark, split=split, kind=kind, challenge=challenge,
              idempotency_key=key, retry=RetryPolicy(tries=retries + 1), on_retry=say_retry)
        doc = submit(server, token, benchmark=benchmark, split=split, path=file, kind=kind,
                     challenge=challenge, method_name=method_name, description=description,
                     paper_url=paper_url, code_url=code_url, public=not private,
                     progress=not quiet, idempotency_key=key, allow_rerun=not no_rerun,
                     retry=RetryPolicy(tries=retries + 1), on_retry=say_retry)
        if doc.get("replayed"):
            click.echo(f"the server already had this upload (same file and target): "
                       f"submission {doc['id']}", err=True)
        click.echo(f"submission {doc['id']}: {doc['status']}")
        if no_wait:
            return
        final = wait(server, token, doc["id"],
                     on_status=lambda b: click.echo(f"status: {b['status']}", err=True),
                     on_retry=lambda e: click.echo(f"warning: status poll failed ({e.reason}); "
                                                   f"retrying in {e.delay_s:.0f} s", err=True))
    except ClientError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except requests.RequestException as exc:
        click.echo(f"error: cannot reach {server}: {exc}", err=True)
        sys.exit(3)
    if final["status"] == "scored":
        click.echo(f"scored: {final.get('url') or server.rstrip('/') + '/submissions/' + str(final['id'])}")
        for line in headline_lines(final):
            click.echo(line)
        return
    if final["status"] != "failed":
        click.echo(f"still {final['status']} after waiting; check later", err=True)
        sys.exit(1)
    for line in final.get("failure_lines") or [final.get("failure_reason") or "failed"]:
        click.echo(line, err=True)
    log_text = ((final.get("container") or {}).get("log") or {}).get("text")
    if log_text:  # a container run: the end of its log, as the benchmark's policy allows
        click.echo("--- container log (end) ---", err=True)
        click.echo(log_text[-4000:], err=True)
    sys.exit(1)


if __name__ == "__main__":  # pragma: no cover
    main(prog_name=os.environ.get("LB_CLIENT_NAME", "leaderboard"))
