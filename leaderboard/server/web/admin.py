"""The admin console (admins only): access requests, users, teams, benchmarks, submissions,
audit log. Views parse the form, call `leaderboard.server.services.decisions` / `admin_ops`, commit, and
invalidate boards where a board changed. Every action is audited by the service it calls."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from flask import Response, current_app, flash, jsonify, redirect, render_template, request, url_for
from flask_login import current_user
from sqlalchemy import func, select

from leaderboard.core.errors import LeaderboardError
from leaderboard.server import csvsafe
from leaderboard.server.access import audit
from leaderboard.server.access.audit_display import agreement_versions, describe, version_label
from leaderboard.server.boards.cache import invalidate_boards
from leaderboard.server.db import get_session
from leaderboard.server.errors import ServiceError
from leaderboard.server.jobs.reruns import after_import as advance_reruns
from leaderboard.server.jobs.scoring import enqueue_scoring
from leaderboard.server.jobs.status import queue_status
from leaderboard.server.models import STATUSES, Benchmark, Submission, Team, User, utcnow
from leaderboard.server.models.access import AccessRequest, AuditEvent
from leaderboard.server.services import admin_ops, decisions, overview
from leaderboard.server.services.benchmarks import check_pack_path, get_benchmark
from leaderboard.server.services.release_import import import_release
from leaderboard.server.web.admin_base import _back, _fail, _ip, bp, progress_wants_json
from leaderboard.server.web.inputs import DB_INT_MAX, int_param

PER_PAGE = 100
#: rows per page of the admin submissions table
ADMIN_PAGE = 50
CSV_LIMIT = 100_000

def _int(name: str, value: str | None, *, default=None, low: int = 0, high: int = DB_INT_MAX):
    """A whole number from a form or query string, within the database's range (400 if not)."""
    return int_param(name, value, default=default, low=low, high=high)


def _expiry(days: str | None):
    n = _int("expires_days", days, low=1, high=36500)
    return None if n is None else utcnow() + timedelta(days=n)


@bp.get("/")
def home():
    """The overview: pending agreement requests, recent failures, the queue (depth, workers
    alive; "inline" without Redis), submissions per day, totals. ``?format=json`` for scripts."""
    s = get_session()
    data = {"pending": overview.pending_requests(s), "failures": overview.recent_failures(s),
            "in_flight": overview.in_flight(s), "per_day": overview.per_day(s),
            "totals": overview.totals(s), "queue": queue_status()}
    if progress_wants_json():
        return jsonify(data)
    return render_template("admin/home.html", **data,
                           day_max=max([d["total"] for d in data["per_day"]] + [1]))


# -- access requests --------------------------------------------------------------------------
@bp.get("/requests")
def requests_():
    s = get_session()
    status = request.args.get("status", "pending")
    bench_key, q = request.args.get("benchmark", ""), request.args.get("q", "").strip()
    stmt = select(AccessRequest).join(User, AccessRequest.user_id == User.id) \
        .join(Benchmark, AccessRequest.benchmark_id == Benchmark.id)
    if status:
        stmt = stmt.where(AccessRequest.status == status)
    if bench_key:
        stmt = stmt.where(Benchmark.key == bench_key)
    if q:
        like = f"%{q.lower()}%"
        stmt = stmt.where(func.lower(User.email).like(like) |
                          func.lower(AccessRequest.affiliation).like(like))
    page = _int("page", request.args.get("page"), default=1, low=1, high=10**6)
    total = s.scalar(select(func.count()).select_from(stmt.subquery()))
    rows = s.scalars(stmt.order_by(AccessRequest.id.desc()).offset((page - 1) * PER_PAGE)
                     .limit(PER_PAGE)).all()
    versions = agreement_versions(s)
    return render_template("admin/requests.html", rows=rows, status=status, bench_key=bench_key,
                           version_of=lambda r: version_label(versions, r.benchmark_id,
                                                              r.agreement_version),
                           q=q, benchmarks=s.scalars(select(Benchmark.key)).all(),
                           endpoint="admin.requests_", page=page, total=total,
                           pages=max(1, -(-total // PER_PAGE)),
                           pager_args={k: v for k, v in (("status", status),
                                                         ("benchmark", bench_key), ("q", q))
                                       if v})


@bp.post("/requests/bulk-approve")
def bulk_approve():
    s = get_session()
    try:
        ids = [_int("id", v) for v in request.form.getlist("ids")]
        done = decisions.bulk_approve(s, current_user, ids,
                                      expires_at=_expiry(request.form.get("expires_days")),
                                      ip=_ip())
        s.commit()
    except ServiceError as exc:
        return _fail(exc, "admin.requests_")
    flash(f"Approved {len(done)} request(s).")
    return _back("admin.requests_")


@bp.post("/requests/<int:request_id>/<action>")
def decide(request_id: int, action: str):
    s = get_session()
    try:
        req = decisions.get_request(s, request_id)
        if action == "approve":
            decisions.approve(s, current_user, req,
                              expires_at=_expiry(request.form.get("expires_days")), ip=_ip())
        elif action in ("deny", "revoke"):
            getattr(decisions, action)(s, current_user, req, reason=request.form.get("reason"),
                                       ip=_ip())
        else:
            raise ServiceError(f"unknown action {action!r}; use approve, deny or revoke",
                               status=404, code="not_found")
        s.commit()
    except ServiceError as exc:
        return _fail(exc, "admin.requests_")
    flash(f"Request #{request_id}: {req.status}.")
    return _back("admin.requests_")


# -- users and teams --------------------------------------------------------------------------
@bp.get("/users")
def users():
    q = request.args.get("q", "").strip().lower()
    stmt = select(User).order_by(User.id)
    if q:
        stmt = stmt.where(func.lower(User.email).contains(q, autoescape=True))
    page = _int("page", request.args.get("page"), default=1, low=1, high=10**6)
    total = get_session().scalar(select(func.count()).select_from(stmt.subquery()))
    rows = get_session().scalars(stmt.offset((page - 1) * PER_PAGE).limit(PER_PAGE)).all()
    return render_template("admin/users.html", rows=rows, q=q, endpoint="admin.users",
                           pager_args={"q": q} if q else {}, page=page,
                           pages=max(1, -(-total // PER_PAGE)), total=total)


@bp.post("/users/<int:user_id>/<field>")
def user_flag(user_id: int, field: str):
    s = get_session()
    value = request.form.get("value") == "1"
    try:
        user = admin_ops.get_user(s, user_id)
        if field == "active":
            admin_ops.set_active(s, current_user, user, value, ip=_ip())
        elif field == "admin":
            admin_ops.set_admin(s, current_user, user, value, ip=_ip())
        else:
            raise ServiceError(f"unknown field {field!r}; use active or admin", status=404)
        s.commit()
    except ServiceError as exc:
        return _fail(exc, "admin.users")
    flash(f"{user.email}: {field} = {value}.")
    return _back("admin.users")


@bp.get("/teams")
def teams():
    s = get_session()
    page = _int("page", request.args.get("page"), default=1, low=1, high=10**6)
    total = s.scalar(select(func.count(Team.id)))
    rows = s.scalars(select(Team).order_by(Team.name).offset((page - 1) * PER_PAGE)
                     .limit(PER_PAGE)).all()
    # submissions counted for this page's teams only, not grouped over every submission
    counts = dict(s.execute(select(Submission.team_id, func.count())
                            .where(Submission.team_id.in_([t.id for t in rows]))
                            .group_by(Submission.team_id)).all()) if rows else {}
    return render_template("admin/teams.html", rows=rows, counts=counts,
                           endpoint="admin.teams", pager_args={}, page=page,
                           pages=max(1, -(-total // PER_PAGE)), total=total)


# -- benchmarks -------------------------------------------------------------------------------
@bp.get("/benchmarks")
def benchmarks():
    rows = get_session().scalars(select(Benchmark).order_by(Benchmark.key)).all()
    return render_template("admin/benchmarks.html", rows=rows)


@bp.post("/benchmarks/import")
def import_():
    s = get_session()
    path = request.form.get("path", "").strip()
    cfg = current_app.config
    try:
        if not path:
            raise ServiceError("give the server-side path of the pack directory")
        folder = check_pack_path(path, cfg["PACK_ROOTS"])  # only under PACK_ROOTS
        done = import_release(s, folder, data_dir=cfg["DATA_DIR"], label_keys=cfg["LABEL_KEYS"])
        bench = done.bench
        audit.record(s, current_user, "admin.benchmark.import", f"benchmark:{bench.key}",
                     {"path": path, "version": bench.version, "family": bench.family,
                      "release": bench.release, "created": done.created,
                      "agreement_version": bench.agreement_version}, _ip())
        s.commit()
    except (ServiceError, LeaderboardError) as exc:
        return _import_refused(exc)
    except OSError as exc:
        return _import_refused(ServiceError(f"cannot read {path!r}: {exc.strerror or exc}"))
    invalidate_boards(None if done.invalidate_all else bench.key)
    queued = advance_reruns(bench.id, created_by=current_user.id)  # a new release's campaign
    flash(f"Imported: {done.message}."
          + (f" {len(queued)} re-run(s) queued." if queued else ""))
    return _back("admin.benchmarks")


def _import_refused(exc: ServiceError | LeaderboardError):
    """The benchmarks page again, answered 400 (or the error's own 4xx), with why the pack was
    refused (a release that drops or changes an item names the split, item and field)."""
    get_session().rollback()
    lines = [str(p) for p in exc.problems.items]
    flash("Import refused: " + exc.message + (": " + "; ".join(lines) if lines else ""),
          "error")
    return benchmarks(), getattr(exc, "status", 400)


@bp.post("/benchmarks/<key>")
def benchmark_update(key: str):
    s = get_session()
    form = request.form
    try:
        bench = get_benchmark(s, key)
        quota = form.get("daily_quota")
        changes = admin_ops.update_benchmark(
            s, current_user, bench, description_md=form.get("description_md"),
            submissions_open=None if "submissions_open" not in form
            else form["submissions_open"] == "1",
            daily_quota="keep" if quota is None else _int("daily_quota", quota, low=-DB_INT_MAX),
            private_revealed=None if "private_revealed" not in form
            else form["private_revealed"] == "1",
            agreement_gates_submissions=None if "agreement_gates_submissions" not in form
            else form["agreement_gates_submissions"] == "1", ip=_ip())
        s.commit()
    except ServiceError as exc:
        return _fail(exc, "admin.benchmarks")
    invalidate_boards(bench.key)
    flash(f"{bench.key}: {', '.join(changes) or 'nothing changed'}.")
    return _back("admin.benchmarks")


@bp.post("/benchmarks/<key>/rescore")
def rescore_all(key: str):
    s = get_session()
    bench = get_benchmark(s, key)
    subs = s.scalars(select(Submission).where(Submission.benchmark_id == bench.id)).all()
    ids = admin_ops.rescore(s, current_user, list(subs), ip=_ip(),
                            target=f"benchmark:{bench.key}",
                            deadline_s=current_app.config["QUEUE_DEADLINE_S"])
    s.commit()
    for sid in ids:
        enqueue_scoring(sid)
    flash(f"{len(ids)} submission(s) of {bench.key} queued for rescoring.")
    return redirect(url_for("admin.rescore_progress", key=key)), 303


@bp.get("/benchmarks/<key>/progress")
def rescore_progress(key: str):
    s = get_session()
    progress = admin_ops.rescore_progress(s, get_benchmark(s, key))
    if progress_wants_json():
        return jsonify(progress)
    return render_template("admin/progress.html", p=progress)


# -- submissions ------------------------------------------------------------------------------
@bp.get("/submissions")
def submissions():
    s = get_session()
    stmt = select(Submission).join(Benchmark, Submission.benchmark_id == Benchmark.id)
    if request.args.get("benchmark"):
        stmt = stmt.where(Benchmark.key == request.args["benchmark"])
    if request.args.get("status"):
        stmt = stmt.where(Submission.status == request.args["status"])
    if request.args.get("team"):
        stmt = stmt.where(Submission.team_id == _int("team", request.args["team"]))
    page = _int("page", request.args.get("page"), default=1, low=1, high=10**6)
    total = s.scalar(select(func.count()).select_from(stmt.subquery()))
    rows = s.scalars(stmt.order_by(Submission.id.desc()).limit(ADMIN_PAGE)
                     .offset((page - 1) * ADMIN_PAGE)).all()
    return render_template("admin/submissions.html", rows=rows, args=request.args, page=page,
                           pages=max(1, -(-total // ADMIN_PAGE)), total=total,
                           benchmarks=s.scalars(select(Benchmark.key).order_by(Benchmark.key)).all(),
                           statuses=STATUSES)


@bp.post("/submissions/<int:submission_id>/<action>")
def submission_action(submission_id: int, action: str):
    s = get_session()
    try:
        sub = admin_ops.get_submission(s, submission_id)
        key = sub.benchmark.key
        if action == "hide":
            admin_ops.set_hidden(s, current_user, sub, request.form.get("value", "1") == "1",
                                 reason=request.form.get("reason"), ip=_ip())
        elif action == "disqualify":
            admin_ops.disqualify(s, current_user, sub, request.form.get("reason"), ip=_ip())
        elif action == "rescore":
            ids = admin_ops.rescore(s, current_user, [sub], ip=_ip(),
                                    deadline_s=current_app.config["QUEUE_DEADLINE_S"])
        else:
            raise ServiceError(f"unknown action {action!r}; use hide, disqualify or rescore",
                               status=404, code="not_found")
        s.commit()
    except ServiceError as exc:
        return _fail(exc, "admin.submissions")
    if action == "rescore":
        for sid in ids:
            enqueue_scoring(sid)
    invalidate_boards(key)
    flash(f"Submission #{submission_id}: {action} done.")
    return _back("admin.submissions")


# -- audit log --------------------------------------------------------------------------------
def _when(name: str):
    raw = request.args.get(name, "").strip()
    if not raw:
        return None
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        raise ServiceError(f"{name} must be an ISO date such as 2026-11-29, got {raw!r}") \
            from None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def _audit_filters() -> dict:
    a = request.args
    return {"action": a.get("action") or None, "actor": a.get("actor") or None,
            "target": a.get("target") or None, "since": _when("since"), "until": _when("until")}


@bp.get("/audit")
def audit_log():
    page = _int("page", request.args.get("page"), default=1, low=1, high=10**6)
    events, total = audit.query(get_session(), **_audit_filters(), limit=PER_PAGE,
                                offset=(page - 1) * PER_PAGE)
    next_url = (url_for("admin.audit_log", **{**request.args.to_dict(), "page": page + 1})
                if total > page * PER_PAGE else None)
    # the filter is a prefix: offer each family of actions ("access", "admin", "auth", ...)
    actions = sorted({a.split(".")[0] for a in get_session().scalars(
        select(AuditEvent.action).distinct())})
    return render_template("admin/audit.html", events=describe(get_session(), events),
                           total=total, next_url=next_url, args=request.args, actions=actions)


@bp.get("/audit.csv")
def audit_csv():
    events, _ = audit.query(get_session(), **_audit_filters(), limit=CSV_LIMIT)
    body = csvsafe.to_csv(audit.csv_rows(events), header=audit.CSV_HEADER)
    session = get_session()
    audit.record(session, current_user, "admin.audit.export", "audit_event",
                 {"rows": len(events), "filters": {k: v for k, v in request.args.items()}}, _ip())
    session.commit()
    return Response(body, mimetype="text/csv", headers={
        "Content-Disposition": 'attachment; filename="audit.csv"',
        "Cache-Control": "private, no-store"})
