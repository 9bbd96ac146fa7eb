"""Data access pages: read a benchmark's agreement, sign it, follow the request, download.

Download links are minted fresh on every page view (they expire within minutes) and only when the
gate allows; the download view asks the gate again (`leaderboard.server.services.downloads.authorize`).
"""
from __future__ import annotations

from flask import (
    Blueprint,
    current_app,
    flash,
    jsonify,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_login import current_user, login_required

from leaderboard.server.access import agreements, audit, verified
from leaderboard.server.access.gate import can_access, latest_request
from leaderboard.server.db import get_session
from leaderboard.server.errors import ServiceError
from leaderboard.server.services import archives, downloads
from leaderboard.server.services.benchmarks import get_benchmark, list_benchmarks
from leaderboard.server.services.downloads import DownloadRefused, Target
from leaderboard.server.web.public import render_markdown

bp = Blueprint("access", __name__, url_prefix="/data")


def _link(target: Target) -> str:
    token = downloads.make_token(current_user, target,
                                 secret_key=current_app.config["SECRET_KEY"])
    return url_for("access.download", token=token)


def _ttl() -> int:
    return int(current_app.config.get("DOWNLOAD_LINK_TTL_S", downloads.DEFAULT_TTL_S))


def _split_links(session, bench) -> list[dict]:
    """Per split: the links the gate allows right now (none for anyone without a grant)."""
    user = current_user if current_user.is_authenticated else None
    allowed = {w: can_access(session, user, bench, w).allowed
               for w in ("items", "media", "dev_labels")}
    if not (allowed["items"] and allowed["media"]):
        return []
    out = []
    for split in bench.meta_json.get("splits", []):
        held_out = archives.is_held_out(split)
        entry = {"split": split, "held_out": held_out,
                 "items": _link(Target("items", bench.key, split)),
                 "archive": _link(Target("archive", bench.key, split)),
                 "files": url_for("access.file_list", key=bench.key, split=split)}
        if not held_out and allowed["dev_labels"]:
            entry["labels"] = _link(Target("labels", bench.key, split))
            entry["archive_labels"] = _link(Target("archive", bench.key, split, labels=True))
        out.append(entry)
    return out


@bp.get("/")
def index():
    session = get_session()
    rows = []
    for bench in list_benchmarks(session):
        state = None
        if current_user.is_authenticated:
            state = can_access(session, current_user, bench, "items")
        rows.append({"bench": bench, "state": state})
    return render_template("access/index.html", rows=rows)


@bp.get("/<key>")
def page(key: str):
    session = get_session()
    bench = get_benchmark(session, key)
    req = state = None
    if current_user.is_authenticated:
        req = latest_request(session, current_user.id, bench.id)
        state = can_access(session, current_user, bench, "items")
    return render_template("access/page.html", bench=bench,
                           agreement=render_markdown(bench.agreement_md), req=req, state=state,
                           links=_split_links(session, bench), ttl_min=_ttl() // 60,
                           form={}, problems=[], message=None)


@bp.post("/<key>/sign")
@login_required
def sign(key: str):
    session = get_session()
    bench = get_benchmark(session, key)
    form = request.form
    try:
        # issue 35: an agreement is requested from a verified address only
        verified.check_verified(current_user, what="request access to a data set",
                                required=current_app.config["REQUIRE_VERIFIED_EMAIL"])
        agreements.sign(session, current_user, bench, full_name=form.get("full_name", ""),
                        affiliation=form.get("affiliation", ""), role=form.get("role", ""),
                        intended_use=form.get("intended_use", ""),
                        answers={f["key"]: form.get(f"field_{f['key']}", "")
                                 for f in agreements.request_fields(bench)},
                        accepted=form.get("accept") in ("1", "on", "yes", "true"),
                        ip=audit.request_ip(), user_agent=request.headers.get("User-Agent", ""))
        session.commit()
    except ServiceError as exc:
        session.rollback()
        if not exc.problems:  # nothing to correct in the form (already signed, disabled ...)
            flash(exc.message, "error")
            return redirect(url_for("access.page", key=key)), 303
        # re-rendered, not redirected: what was typed stays, and the bad fields are marked
        req = latest_request(session, current_user.id, bench.id)
        return render_template(
            "access/page.html", bench=bench, agreement=render_markdown(bench.agreement_md),
            req=req, state=can_access(session, current_user, bench, "items"),
            links=_split_links(session, bench), ttl_min=_ttl() // 60, form=form,
            problems=[p.as_dict() for p in exc.problems.items], message=exc.message), exc.status
    flash("Thank you. Your request is waiting for an administrator's decision.")
    return redirect(url_for("access.page", key=key)), 303


@bp.get("/<key>/<split>/files.json")
@login_required
def file_list(key: str, split: str):
    """Signed per-file links for the split's items and every media file it names (for
    ``wget -i``); refused like a download when the gate says no."""
    session = get_session()
    bench = get_benchmark(session, key)
    archives.check_split(bench, split)
    for what in ("items", "media"):
        decision = can_access(session, current_user, bench, what)
        if not decision.allowed:
            raise DownloadRefused(decision.reason)
    files = [{"path": f"splits/{split}/items.jsonl",
              "url": _link(Target("items", bench.key, split))}]
    files += [{"path": rel, "url": _link(Target("media", bench.key, path=rel))}
              for rel in archives.split_media(bench, split)]
    return jsonify({"benchmark": bench.key, "split": split, "expires_in_s": _ttl(),
                    "files": files})


@bp.get("/download/<token>")
def download(token: str):
    """Serve a signed link after checking the grant again (no login needed: the link names its
    user). Every download and every refusal is audited."""
    session = get_session()
    cfg = current_app.config
    try:
        grant = downloads.authorize(
            session, token, secret_key=cfg["SECRET_KEY"], max_age_s=_ttl(),
            data_dir=cfg["DATA_DIR"], label_keys=cfg["LABEL_KEYS"], ip=audit.request_ip(),
            range_header=request.headers.get("Range"))
    except DownloadRefused:
        session.commit()  # keep the audit record of the refusal
        raise
    session.commit()
    return downloads.file_response(grant, data_dir=cfg["DATA_DIR"],
                                   accel=cfg.get("DOWNLOAD_ACCEL", "") or "")
