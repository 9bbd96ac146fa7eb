"""Methods (issue 38, item 1): find one, list a team's, edit its page, list its submissions.

The method row (`leaderboard.server.models.methods`) is made with its first submission; this
module reads it and changes its card. Its results come from the boards
(`leaderboard.server.boards.methods`). Who may see it is `access.visibility.can_see_method`,
who may edit it `access.methods.check_edit_method`; the views ask both before calling here.
Text is stored as typed (after stripping) and escaped or sanitised where shown: the description
is Markdown cleaned by nh3 like every other team or pack text, the other fields plain text,
links only http(s).
"""
from __future__ import annotations

import re

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from leaderboard.core.errors import ProblemList
from leaderboard.server.access import audit
from leaderboard.server.access.methods import check_edit_method
from leaderboard.server.errors import NotFound, ServiceError
from leaderboard.server.models import Benchmark, Submission, Team, User, utcnow
from leaderboard.server.models.containers import ContainerRun
from leaderboard.server.models.methods import CARD_LIMITS, Method

#: the same rule as a submission's links (`services.submissions`)
_URL_RE = re.compile(r"^https?://[^\s]{1,490}$")
AFFILIATION_MAX = 300
#: a method's submissions listed on its page, newest first
LISTED = 100


def _on_board_clause(team_id, name):
    return (Submission.team_id == team_id, Submission.method_name == name,
            Submission.status == "scored", Submission.is_public.is_(True),
            Submission.hidden.is_(False), Submission.is_baseline.is_(False))


def get_method(session: Session, team_id: int, slug: str) -> Method:
    """The method ``slug`` of team ``team_id``; NotFound otherwise."""
    m = session.scalar(select(Method).where(Method.team_id == team_id, Method.slug == slug))
    if m is None:
        raise NotFound(f"team {team_id} has no method {slug[:80]!r}")
    return m


def slug_of(session: Session, team_id: int | None, name: str) -> str | None:
    """The slug of the method (``team_id``, ``name``); None for a team-less submission."""
    if team_id is None:
        return None
    return session.scalar(select(Method.slug).where(Method.team_id == team_id,
                                                    Method.name == name))


def on_boards(session: Session, method: Method) -> bool:
    """Whether one of the method's submissions can be on a board (scored, public, shown)."""
    return session.scalar(select(exists().where(*_on_board_clause(method.team_id,
                                                                  method.name)))) or False


def team_methods(session: Session, team_id: int, *, everything: bool) -> list[Method]:
    """A team's methods by name; ``everything`` False: only those with a submission on a board
    (what an outsider may see; `access.visibility.can_see_method`)."""
    q = select(Method).where(Method.team_id == team_id)
    if not everything:
        q = q.where(exists().where(*_on_board_clause(Method.team_id, Method.name)))
    return list(session.scalars(q.order_by(Method.name, Method.id)))


def method_submissions(session: Session, method: Method, *, everything: bool) -> list[dict]:
    """The method's submissions, newest first (at most `LISTED`): every one for its team and
    admins (``everything``), else only those on the boards. Each: {"id", "benchmark",
    "split", "status", "created_at", "private", "hidden", "kind", "image_id" (the container's
    digest, its latest run), "receipt" (True when a receipt can exist: public and scored)}."""
    q = (select(Submission, Benchmark.key).join(Benchmark, Submission.benchmark_id == Benchmark.id)
         .where(Submission.team_id == method.team_id, Submission.method_name == method.name))
    if not everything:
        q = q.where(*_on_board_clause(method.team_id, method.name))
    rows = session.execute(q.order_by(Submission.created_at.desc(), Submission.id.desc())
                           .limit(LISTED)).all()
    ids = [s.id for s, _k in rows if s.kind == "container"]
    images: dict[int, str] = {}
    if ids:
        for sid, image in session.execute(
                select(ContainerRun.submission_id, ContainerRun.image_id)
                .where(ContainerRun.submission_id.in_(ids)).order_by(ContainerRun.id)):
            images[sid] = image  # the latest run wins
    return [{"id": s.id, "benchmark": key, "split": s.split, "status": s.status,
             "created_at": s.created_at.isoformat(), "private": not s.is_public,
             "hidden": s.hidden, "kind": s.kind, "image_id": images.get(s.id),
             "receipt": bool(s.is_public and s.status == "scored" and not s.hidden)}
            for s, key in rows]


def team_affiliation(session: Session, team_id: int) -> str:
    return session.scalar(select(Team.affiliation).where(Team.id == team_id)) or ""


def card(method: Method, team: Team) -> dict:
    """The method's identity and model card as the JSON shows it."""
    return {"id": method.id, "team": {"id": team.id, "name": team.name,
                                      "affiliation": team.affiliation or ""},
            "name": method.name, "slug": method.slug, "description": method.description,
            "paper_url": method.paper_url, "code_url": method.code_url,
            "params": method.params, "training_data": method.training_data,
            "input_resolution": method.input_resolution, "licence": method.licence,
            "created_at": method.created_at.isoformat(),
            "updated_at": method.updated_at.isoformat()}


def update_method(session: Session, user: User, method: Method, fields: dict,
                  *, ip: str = "") -> Method:
    """Change the method's card from ``fields`` (any of `CARD_LIMITS`' keys, and
    ``affiliation``, the team's); keys not given stay. Only the team's members
    (`access.methods.check_edit_method`: 403, or 404 for a method the user may not see). A
    bad field: ServiceError (400) naming each."""
    check_edit_method(user, method.team_id, on_boards=on_boards(session, method))
    clean = {k: str(v).strip() for k, v in fields.items()
             if k in CARD_LIMITS or k == "affiliation"}
    problems = ProblemList()
    for name, value in clean.items():
        limit = AFFILIATION_MAX if name == "affiliation" else CARD_LIMITS[name]
        if len(value) > limit:
            problems.add(f"at most {limit} characters, got {len(value)}", field=name)
        if name in ("paper_url", "code_url") and value and not _URL_RE.match(value):
            problems.add(f"must be an http(s) link, got {value[:80]!r}", field=name)
        if name != "description" and name != "training_data" and ("\n" in value
                                                                  or "\r" in value):
            problems.add("one line only", field=name)
    if problems:
        raise ServiceError("please correct these fields", problems)
    changed = {}
    team = session.get(Team, method.team_id)
    for name, value in clean.items():
        target = team if name == "affiliation" else method
        if getattr(target, name) != value:
            setattr(target, name, value)
            changed[name] = True
    if changed:
        method.updated_at = utcnow()
        session.flush()
        audit.record(session, user, "method.edit", f"method:{method.id}",
                     {"fields": sorted(changed)}, ip)
    return method
