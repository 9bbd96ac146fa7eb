"""Signed, expiring download links and the download itself.

A link is an itsdangerous token over (user id, benchmark key, what to download), signed with the
app's SECRET_KEY and a download-only salt, valid for ``DOWNLOAD_LINK_TTL_S`` (default 10 min).
The token names its user, so a link works from ``curl`` without a session cookie, but the grant is
checked again at download time for that user (`leaderboard.server.access.gate.can_access`): a revoked,
expired or disabled user's links stop working at once. Every download, and every refused one, is
written to the audit log.

Files are served by Flask's ``send_file(conditional=True)`` (ETag / Last-Modified / Range, so
interrupted downloads resume), or handed to a front proxy with ``DOWNLOAD_ACCEL``:
``"x-sendfile"`` (Apache, lighttpd: absolute path) or ``"x-accel:/internal-prefix/"`` (nginx:
the prefix plus the path relative to DATA_DIR, for an ``internal`` location aliased to DATA_DIR).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from itsdangerous import BadSignature, SignatureExpired, URLSafeTimedSerializer
from sqlalchemy.orm import Session

from leaderboard.server.access import audit
from leaderboard.server.access.gate import can_access
from leaderboard.server.errors import Forbidden, ServiceError
from leaderboard.server.models import Benchmark, User
from leaderboard.server.services import archives
from leaderboard.server.services.benchmarks import get_release
from leaderboard.server.services.robustness_archive import robustness_archive

SALT = "leaderboard.download.v1"
KINDS = ("items", "media", "labels", "archive", "robustness")
DEFAULT_TTL_S = 600


class LinkInvalid(ServiceError):
    status = 403
    code = "invalid_link"


class LinkExpired(ServiceError):
    status = 410
    code = "link_expired"


class DownloadRefused(Forbidden):
    code = "access_denied"


@dataclass(frozen=True)
class Target:
    """What a link downloads: ``kind`` items|labels|archive (per split) or media (one file)."""

    kind: str
    benchmark: str
    split: str | None = None
    path: str | None = None
    labels: bool = False  # archive only: include the dev labels

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.kind == "media" and not self.path:
            raise ValueError("a media link needs the file's path")
        if self.kind != "media" and not self.split:
            raise ValueError(f"a {self.kind} link needs a split")

    def required(self) -> tuple[str, ...]:
        """The gate questions that must all be allowed."""
        if self.kind == "items":
            return ("items",)
        if self.kind == "media":
            return ("media",)
        labels = ("test_labels" if archives.is_held_out(self.split) else "dev_labels",)
        if self.kind == "labels":
            return labels
        if self.kind == "robustness":  # degraded dev copies with their labels (issue 26)
            return ("items", "media") + labels
        return ("items", "media") + (labels if self.labels else ())

    def describe(self) -> str:
        if self.kind == "media":
            return f"{self.benchmark}:{self.path}"
        extra = "+labels" if self.labels else ""
        return f"{self.benchmark}:{self.split}:{self.kind}{extra}"


def _serializer(secret_key: str) -> URLSafeTimedSerializer:
    if not secret_key:
        raise ValueError("SECRET_KEY is empty: download links cannot be signed")
    return URLSafeTimedSerializer(secret_key, salt=SALT)


def make_token(user: User, target: Target, *, secret_key: str) -> str:
    """A signed token for ``user`` to download ``target`` (its age is checked when used)."""
    return _serializer(secret_key).dumps({"u": user.id, **asdict(target)})


def read_token(token: str, *, secret_key: str, max_age_s: int) -> tuple[int, Target]:
    """(user id, target) of a valid token; LinkExpired (410) or LinkInvalid (403) otherwise."""
    ser = _serializer(secret_key)
    try:
        data = ser.loads(token, max_age=max_age_s)
    except SignatureExpired:
        raise LinkExpired("this download link has expired; open the data access page again "
                          "for a fresh one") from None
    except BadSignature:
        raise LinkInvalid("this download link is not valid (it was altered or is not ours)") \
            from None
    try:
        user_id = int(data.pop("u"))
        return user_id, Target(**data)
    except (KeyError, TypeError, ValueError, AttributeError):
        raise LinkInvalid("this download link is not valid") from None


@dataclass(frozen=True)
class Grant:
    """An authorised download: the file to send and the name to send it under."""

    user: User
    benchmark: Benchmark
    target: Target
    path: Path
    download_name: str


def authorize(session: Session, token: str, *, secret_key: str, max_age_s: int, data_dir: str,
              label_keys, ip: str = "", range_header: str | None = None) -> Grant:
    """Check a download link and the grant behind it *now*; build the file if needed.

    Audits the download (or the refusal) in ``session``; the caller commits in both cases (a
    refusal raises DownloadRefused after recording it).
    """
    user_id, target = read_token(token, secret_key=secret_key, max_age_s=max_age_s)
    user = session.get(User, user_id)
    bench = get_release(session, target.benchmark)  # the row key the link was made for
    for what in target.required():
        decision = can_access(session, user, bench, what)
        if not decision.allowed:
            audit.record(session, user, "download.refused", target.describe(),
                         {"what": what, "reason": decision.reason}, ip)
            raise DownloadRefused(decision.reason)
    path, name = _resolve(session, bench, target, data_dir=data_dir, label_keys=label_keys)
    audit.record(session, user, "download", target.describe(),
                 {"file": name, "bytes": path.stat().st_size, "range": range_header}, ip)
    return Grant(user, bench, target, path, name)


def _resolve(session, bench, target: Target, *, data_dir, label_keys) -> tuple[Path, str]:
    if target.kind == "items":
        return archives.items_file(bench, target.split), f"{bench.key}-{target.split}-items.jsonl"
    if target.kind == "media":
        path = archives.media_file(bench, target.path)
        return path, path.name
    if target.kind == "labels":
        path = archives.dev_labels_file(session, bench, target.split, data_dir=data_dir,
                                        label_keys=label_keys)
        return path, f"{bench.key}-{target.split}-labels.jsonl"
    if target.kind == "robustness":
        path = robustness_archive(session, bench, target.split, data_dir=data_dir,
                                  label_keys=label_keys)
        return path, path.name
    path = archives.split_archive(session, bench, target.split, with_labels=target.labels,
                                  data_dir=data_dir, label_keys=label_keys)
    return path, archives.archive_name(bench, target.split)


def file_response(grant: Grant, *, data_dir: str, accel: str = ""):
    """The Flask response for ``grant``: the file itself (conditional + range), or an empty
    response whose header tells the front proxy which file to send."""
    from flask import Response, send_file

    if accel:
        resp = Response(status=200, mimetype="application/octet-stream")
        resp.headers["Content-Disposition"] = f'attachment; filename="{grant.download_name}"'
        if accel == "x-sendfile":
            resp.headers["X-Sendfile"] = str(grant.path)
        elif accel.startswith("x-accel:"):
            try:
                rel = grant.path.resolve().relative_to(Path(data_dir).resolve())
            except ValueError:
                rel = None
            if rel is not None:
                prefix = accel.split(":", 1)[1].rstrip("/")
                resp.headers["X-Accel-Redirect"] = f"{prefix}/{rel.as_posix()}"
            else:  # a pack outside DATA_DIR: the proxy cannot see it, so serve it ourselves
                resp = None
        else:
            raise ValueError(f"DOWNLOAD_ACCEL must be '', 'x-sendfile' or 'x-accel:/prefix/', "
                             f"got {accel!r}")
        if resp is not None:
            resp.headers["Cache-Control"] = "private, no-store"
            return resp
    resp = send_file(grant.path, as_attachment=True, download_name=grant.download_name,
                     conditional=True, etag=True, max_age=0)
    resp.headers["Cache-Control"] = "private, no-cache"
    return resp
