"""Admin console: challenges with phases (issues 12 and 21). Routes join the admin blueprint (its
admins-only guard applies); creating, editing, deleting and finishing are audited by the
service (`leaderboard.server.services.challenges`)."""
from __future__ import annotations

from flask import flash, redirect, render_template, request, url_for
from flask_login import current_user
from sqlalchemy import select

from leaderboard.server.access import audit
from leaderboard.server.boards.cache import invalidate_boards
from leaderboard.server.db import get_session
from leaderboard.server.errors import ServiceError
from leaderboard.server.models import Benchmark, utcnow
from leaderboard.server.models.challenges import PHASE_PARTS
from leaderboard.server.services import challenges as svc
from leaderboard.server.services.benchmarks import get_benchmark
from leaderboard.server.services.challenges.editing import PHASE_FIELDS
from leaderboard.server.web.admin_base import _back, _fail, bp

#: phase rows the creation form offers (blank rows are ignored)
FORM_PHASES = 3


def _phases(form, n: int) -> list[dict]:
    """Phase rows of a form: ``phase{i}_{field}``; a new row left blank is ignored. An
    existing phase's row carries its ``position`` (and ``remove`` to drop it)."""
    out = []
    for i in range(n):
        row = {f: form.get(f"phase{i}_{f}") for f in PHASE_FIELDS}
        row = {f: (v.strip() if isinstance(v, str) else v) for f, v in row.items()}
        pos = (form.get(f"phase{i}_position") or "").strip()
        if pos:
            row = {f: v for f, v in row.items() if v is not None}
            row["position"] = pos
            row["remove"] = form.get(f"phase{i}_remove") == "1"
        elif not (row["name"] or row["opens_at"] or row["closes_at"]):
            continue
        out.append(row)
    return out


def _list_page(form, status: int = 200, **extra):
    s = get_session()
    benches = s.scalars(select(Benchmark).order_by(Benchmark.key)).all()
    return render_template("admin/challenges.html", rows=[
        (c, svc.describe(c)) for c in svc.list_challenges(s)], benchmarks=benches,
        parts=PHASE_PARTS, n_phases=FORM_PHASES, form=form,
        **{"problems": [], "bad": set(), **extra}), status


@bp.get("/challenges")
def challenges():
    return _list_page(request.args)


@bp.post("/challenges")
def challenge_create():
    s = get_session()
    form = request.form
    try:
        bench = get_benchmark(s, form.get("benchmark", ""))
        ch = svc.create_challenge(s, current_user, bench, key=form.get("key", ""),
                                  title=form.get("title", ""),
                                  phases=_phases(form, FORM_PHASES),
                                  description_md=form.get("description_md", ""),
                                  max_selections=form.get("max_selections") or 2,
                                  ip=audit.request_ip())
        s.commit()
    except ServiceError as exc:
        s.rollback()
        # re-rendered, not redirected: the admin keeps what was typed, with the fields marked
        return _list_page(form, exc.status, message=exc.message,
                          problems=[p.as_dict() for p in exc.problems.items],
                          bad={p.field for p in exc.problems.items})
    flash(f"Challenge {ch.key} created on {bench.key}.")
    return _back("admin.challenges")


def _edit_page(ch, form=None, status: int = 200, **extra):
    return render_template("admin/challenge_edit.html", challenge=ch, ch=svc.describe(ch),
                           parts=PHASE_PARTS, form=form, now=utcnow(),
                           splits=(ch.benchmark.meta_json or {}).get("splits", []),
                           **{"problems": [], "bad": set(), **extra}), status


@bp.get("/challenges/<key>/edit")
def challenge_edit(key: str):
    return _edit_page(svc.get_challenge(get_session(), key))


@bp.post("/challenges/<key>/edit")
def challenge_update(key: str):
    s = get_session()
    ch = svc.get_challenge(s, key)
    form = request.form
    n = len(ch.phases) + 1  # the existing phases and one new row
    try:
        changes = svc.update_challenge(
            s, current_user, ch, title=form.get("title"),
            description_md=form.get("description_md"),
            max_selections=form.get("max_selections"), phases=_phases(form, n),
            ip=audit.request_ip())
        s.commit()
    except ServiceError as exc:
        s.rollback()
        return _edit_page(svc.get_challenge(s, key), form, exc.status, message=exc.message,
                          problems=[p.as_dict() for p in exc.problems.items],
                          bad={p.field for p in exc.problems.items})
    invalidate_boards(ch.benchmark.key)
    flash(f"Challenge {key}: " + ("; ".join(changes) if changes else "nothing changed") + ".")
    return redirect(url_for("admin.challenge_edit", key=key)), 303


@bp.post("/challenges/<key>/finish")
def challenge_finish(key: str):
    s = get_session()
    try:
        ch = svc.get_challenge(s, key)
        bench_key = ch.benchmark.key
        revealed = svc.finish_challenge(s, ch, actor=current_user, ip=audit.request_ip())
        s.commit()
    except ServiceError as exc:
        return _fail(exc, "admin.challenges")
    invalidate_boards(bench_key)
    flash(f"Challenge {key} finished: results frozen"
          + (f", the private part of {bench_key} revealed." if revealed else "."))
    return _back("admin.challenges")


@bp.post("/challenges/<key>/delete")
def challenge_delete(key: str):
    s = get_session()
    try:
        svc.delete_challenge(s, current_user, svc.get_challenge(s, key), ip=audit.request_ip())
        s.commit()
    except ServiceError as exc:
        return _fail(exc, "admin.challenges")
    flash(f"Challenge {key} deleted.")
    return _back("admin.challenges")
