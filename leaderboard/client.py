"""Submit from a terminal: ``python -m leaderboard.client submit --benchmark B --split S FILE``.

Streams the file as multipart (constant memory, a tqdm progress bar), then polls the submission's
status until it is scored or failed and prints the failure reasons line by line.
Exit codes: 0 scored, 1 failed (the file was invalid or scoring failed), 2 the request was refused
(bad token, quota, unknown benchmark ...), 3 the server could not be reached.
``--server`` defaults to ``$LB_SERVER`` (else http://127.0.0.1:5000), ``--token`` to ``$LB_TOKEN``.
"""
from __future__ import annotations

import os
import sys
import time
import uuid
from collections.abc import Iterator
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
        lines.append(f"  quota: {quota['left']} of {quota['limit']} left, resets "
                     f"{quota['resets_at']}")
    return "\n".join(lines)


def submit(server: str, token: str, *, benchmark: str, split: str, path: Path,
           method_name: str, description: str = "", paper_url: str = "", code_url: str = "",
           public: bool = True, progress: bool = True, session: requests.Session | None = None,
           kind: str = "predictions") -> dict:
    """Upload ``path`` (a predictions file, or with ``kind="container"`` a ``docker save``
    tarball); returns the 202 status document. Raises ClientError on refusal."""
    if kind not in ("predictions", "container"):
        raise ValueError(f"kind must be 'predictions' or 'container', got {kind!r}")
    http = session or requests.Session()
    fields = {"benchmark": benchmark, "split": split, "method_name": method_name,
              "description": description, "paper_url": paper_url, "code_url": code_url,
              "is_public": "1" if public else "0", "kind": kind}
    size = path.stat().st_size
    with tqdm(total=size, unit="B", unit_scale=True, desc="upload", disable=not progress,
              file=sys.stderr) as bar:
        ctype, body = _multipart(fields, path, bar)
        resp = http.post(f"{server.rstrip('/')}/api/v1/submissions", data=body,
                         headers={"Authorization": f"Bearer {token}", "Content-Type": ctype,
                                  "Accept": "application/json"},
                         timeout=(10, 600))
    if resp.status_code != 202:
        raise ClientError(_error_text(resp))
    return resp.json()


def wait(server: str, token: str, submission_id: int, *, interval: float = 1.0,
         timeout: float = 3600, session: requests.Session | None = None,
         on_status=None) -> dict:
    """Poll until the submission is scored or failed (or ``timeout`` seconds pass)."""
    http = session or requests.Session()
    url = f"{server.rstrip('/')}/api/v1/submissions/{submission_id}"
    deadline = time.monotonic() + timeout
    last = None
    while True:
        resp = http.get(url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
        if resp.status_code != 200:
            raise ClientError(_error_text(resp))
        body = resp.json()
        if on_status is not None and body["status"] != last:
            on_status(body)
            last = body["status"]
        if body["status"] in DONE or time.monotonic() > deadline:
            return body
        time.sleep(interval)


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
Exit codes: 0 scored, 1 failed, 2 refused (token, quota, benchmark), 3 server unreachable.""")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                required=False)
@click.option("--image", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Submit a detector image (docker save tarball) instead of FILE.")
@click.option("--benchmark", required=True)
@click.option("--split", required=True)
@click.option("--method", "method_name", default=None, help="Method name (default: file name).")
@click.option("--description", default="")
@click.option("--paper-url", default="")
@click.option("--code-url", default="")
@click.option("--private", is_flag=True, help="Keep it off the public board.")
@click.option("--server", envvar="LB_SERVER", default="http://127.0.0.1:5000", show_default=True,
              show_envvar=True, help="Server base URL (or $LB_SERVER).")
@click.option("--token", envvar="LB_TOKEN", required=True, show_envvar=True,
              help="API token (or $LB_TOKEN).")
@click.option("--no-wait", is_flag=True, help="Return after the upload.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def submit_cmd(file: Path | None, image: Path | None, benchmark: str, split: str,
               method_name: str | None,
               description: str, paper_url: str, code_url: str, private: bool, server: str,
               token: str, no_wait: bool, quiet: bool) -> None:
    """Upload a predictions FILE (or a detector --image) and wait for its score."""
    if (file is None) == (image is None):
        click.echo("error: give either a predictions FILE or --image TARBALL", err=True)
        sys.exit(2)
    kind, file = ("container", image) if image is not None else ("predictions", file)
    try:
        doc = submit(server, token, benchmark=benchmark, split=split, path=file, kind=kind,
                     method_name=method_name or file.name.split(".")[0], description=description,
                     paper_url=paper_url, code_url=code_url, public=not private,
                     progress=not quiet)
        click.echo(f"submission {doc['id']}: {doc['status']}")
        if no_wait:
            return
        final = wait(server, token, doc["id"],
                     on_status=lambda b: click.echo(f"status: {b['status']}", err=True))
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
    main(prog_name=os.environ.get("LB_CLIENT_NAME", "python -m leaderboard.client"))
