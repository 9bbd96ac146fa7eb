"""Admin console: challenges with phases (issue 12). Routes join the admin blueprint (its
admins-only guard applies); creating and deleting are audited by the service."""
from __future__ import annotations

from flask import flash, render_template, request
from flask_login import current_user

from leaderboard.server.access import audit
from leaderboard.server.db import get_session
from leaderboard.server.models import Benchmark
from leaderboard.server.models.challenges import PHASE_PARTS
from leaderboard.server.services import ServiceError
from leaderboard.server.services import challenges as svc
from leaderboard.server.services.benchmarks import get_benchmark
from leaderboard.server.web.admin_base import _back, _fail, bp

#: phase rows the creation form offers (blank rows are ignored)
FORM_PHASES = 3
_PHASE_FIELDS = ("name", "split", "part", "opens_at", "closes_at", "daily_quota",
                 "max_submissions")


def _phases(form) -> list[dict]:
    out = []
    for i in range(FORM_PHASES):
        row = {f: (form.get(f"phase{i}_{f}") or "").strip() for f in _PHASE_FIELDS}
        if row["name"] or row["opens_at"] or row["closes_at"]:
            out.append(row)
    return out


@bp.get("/challenges")
def challenges():
    s = get_session()
    from sqlalchemy import select
    benches = s.scalars(select(Benchmark).order_by(Benchmark.key)).all()
    return render_template("admin/challenges.html", rows=[
        (c, svc.describe(c)) for c in svc.list_challenges(s)], benchmarks=benches,
        parts=PHASE_PARTS, n_phases=FORM_PHASES, form=request.args, problems=[])


@bp.post("/challenges")
def challenge_create():
    s = get_session()
    form = request.form
    try:
        bench = get_benchmark(s, form.get("benchmark", ""))
        ch = svc.create_challenge(s, current_user, bench, key=form.get("key", ""),
                                  title=form.get("title", ""), phases=_phases(form),
                                  description_md=form.get("description_md", ""),
                                  max_selections=form.get("max_selections") or 2,
                                  ip=audit.request_ip())
        s.commit()
    except ServiceError as exc:
        s.rollback()
        from sqlalchemy import select
        benches = s.scalars(select(Benchmark).order_by(Benchmark.key)).all()
        # re-rendered, not redirected: the admin keeps what was typed, with the fields marked
        return render_template("admin/challenges.html", rows=[
            (c, svc.describe(c)) for c in svc.list_challenges(s)], benchmarks=benches,
            parts=PHASE_PARTS, n_phases=FORM_PHASES, form=form, message=exc.message,
            problems=[p.as_dict() for p in exc.problems.items],
            bad={p.field for p in exc.problems.items}), exc.status
    flash(f"Challenge {ch.key} created on {bench.key}.")
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
