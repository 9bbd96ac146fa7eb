"""What a request asks for, read the same way by the HTML pages and by ``/api/v1``: the caller
(`api_user`), a board's arguments and its paging, the lazy session a cached page never opens,
and running heavy work off the gevent loop.

Pages and the API both import this module and never each other (docs/internals.md, "Layers");
it imports neither.
"""
from __future__ import annotations

from flask import abort, current_app, g, request, url_for
from flask_login import current_user

from leaderboard.server.access import visibility
from leaderboard.server.access.methods import may_edit_method
from leaderboard.server.boards import methods as method_boards
from leaderboard.server.boards import tooled
from leaderboard.server.boards import tools as board_tools
from leaderboard.server.boards import service as _boards
from leaderboard.server.db import get_session
from leaderboard.server.errors import ServiceError
from leaderboard.server.models import Submission, Team
from leaderboard.server.services import downloads
from leaderboard.server.services import methods as method_service
from leaderboard.server.services import error_analysis as analysis_service
from leaderboard.server.services.tokens import user_for_token
from leaderboard.server.web.inputs import int_param

PER_PAGE = 50
MAX_PER_PAGE = 500


class Unauthorized(ServiceError):
    status = 401
    code = "unauthorized"


def api_user(*, required: bool = True):
    """The caller: a Bearer token's user, else (GET/HEAD only) the session's user."""
    if "api_user" in g:
        return g.api_user
    user = None
    header = request.headers.get("Authorization", "")
    if header:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized("the Authorization header must be 'Bearer <token>'")
        session = get_session()
        user = user_for_token(session, token.strip())
        if user is None:
            raise Unauthorized("this API token is unknown or revoked; create one on the team "
                               "page")
        session.commit()  # last_used_at
    elif request.method in ("GET", "HEAD") and current_user.is_authenticated:
        user = current_user._get_current_object()
    if user is None and required:
        raise Unauthorized("send 'Authorization: Bearer <token>' (create a token on the team "
                           "page)")
    g.api_user = user
    return user


def page_args(*, default_per_page: int = PER_PAGE) -> tuple[int, int]:
    """(page, per_page) from the query string; bad values are a 400 naming them."""
    page = int_param("page", request.args.get("page"), default=1, low=1, high=10**6)
    per_page = int_param("per_page", request.args.get("per_page"), default=default_per_page,
                         low=1, high=MAX_PER_PAGE)
    return page, per_page


def board_args(key: str, task: str, split: str) -> dict:
    """The board arguments a request asks for (shared by the HTML and JSON views);
    ``benchmark_key`` is the row key of the release ``key`` names (`boards.resolve_key`: a
    family's name is its latest release)."""
    return {"benchmark_key": _boards.resolve_key(lazy_session, key), "task": task,
            "split": split,
            "modality": request.args.get("modality") or None,
            "slice_key": request.args.get("slice") or None,
            "mode": request.args.get("mode") or "team"}


def tools_args() -> board_tools.Tools:
    """The board tools a request asks for (q, baselines, code, from, to, sort, dir; issue 38),
    read the same way by the board page, its JSON and its CSV; a bad value is a 400 naming
    the parameter."""
    return board_tools.parse_tools(request.args.get)


def tooled_board(args: dict, tools: board_tools.Tools, page: int, per_page: int | None,
                 cursor: str | None = None) -> dict:
    """One page of a board after its tools: the plain (cached, keyset) page when the tools
    change nothing; else the page after the tools, read without the board's every-row read
    (`boards.tooled`: filters narrowed and re-sorts done mostly by the database), or, for a
    board with no row, its every-row read (an empty page); the rows keep the board's ranks
    and rank intervals."""
    # with tools, the plain page only lends its columns and totals: its first page (often
    # cached) rather than a deep page's offset read
    first = page if cursor is not None or not tools.query() else 1
    b = _boards.board(lazy_session, **args, page=first, per_page=per_page, cursor=cursor)
    board_tools.check(tools, b)  # a 400 for a sort that is no column of this board
    if not tools.active(b):  # no filter, the board's own order: the plain page
        return b if first == page else _boards.board(lazy_session, **args, page=page,
                                                     per_page=per_page, cursor=cursor)
    out = tooled.tooled_page(lazy_session, plain=b, args=args, tools=tools, page=page,
                             per_page=per_page)
    if out is not None:
        return out
    every = _boards.board(lazy_session, **args, page=1, per_page=None)
    return board_tools.page_of_tools(tools, every, page, per_page)


def page_of(b: dict) -> dict:
    """The paging fields of a board page (`leaderboard.server.boards.service.board`)."""
    return {"rows": b["rows"], "page": b["page"], "per_page": b["per_page"],
            "total": b["total"], "pages": b["pages"]}


def paginate(rows: list, page: int, per_page: int) -> dict:
    total = len(rows)
    pages = max(1, -(-total // per_page))
    start = (page - 1) * per_page
    return {"rows": rows[start:start + per_page], "page": page, "per_page": per_page,
            "total": total, "pages": pages}


class _LazySession:
    """Stands in for the request session and opens it only when a cache miss needs the DB.

    A cached board page then costs no session at all (measured: ~10% of a cached request).
    """

    def __getattr__(self, name):
        return getattr(get_session(), name)


lazy_session = _LazySession()


def off_loop(fn):
    """``fn()``, in gevent's thread pool when this process runs gevent, else right here."""
    try:  # gevent is optional at import: the embedded server and the tests run without it
        from gevent import get_hub
        from gevent.monkey import is_module_patched
    except ImportError:  # pragma: no cover - gevent comes with the server's requirements
        return fn()
    if not is_module_patched("threading"):
        return fn()
    return get_hub().threadpool.apply(fn)


def error_analysis_for(user, submission_id: int, *, external: bool = False):
    """The submission and its error analysis as ``user`` may see them (issue 38), for the page
    and the API alike: 404 when there is no such submission, the refusals of
    `access.visibility.check_error_analysis`, per-item rows and signed media links only where
    the data-access gate grants them (``external``: absolute links, for the API)."""
    session = get_session()
    sub = session.get(Submission, submission_id)
    if sub is None:
        abort(404, description=f"no submission {submission_id}")
    visibility.check_error_analysis(user, sub)
    cfg = current_app.config
    result = analysis_service.error_analysis(session, sub, data_dir=cfg["DATA_DIR"],
                                             label_keys=cfg["LABEL_KEYS"], run=off_loop)
    grants = visibility.error_detail_grants(session, user, sub)
    key = sub.benchmark.key

    def media_url(path: str) -> str:
        token = downloads.make_token(user, downloads.Target("media", key, path=path),
                                     secret_key=cfg["SECRET_KEY"])
        return url_for("access.download", token=token, _external=external)

    return sub, analysis_service.apply_grants(result, grants, media_url=media_url)


def method_view_for(user, team_id: int, slug: str, *, external: bool = False) -> dict:
    """A method's page as ``user`` may see it (issue 38), for the page and the API alike, so
    their numbers are one: {"method" (the card, `services.methods.card`), "results" (the
    boards' rows, `boards.methods.method_results`, each with ``board_url`` and
    ``history_url``), "submissions" (`services.methods.method_submissions`), "editable"}.
    404 when there is no such method or ``user`` may not see it
    (`access.visibility.can_see_method`)."""
    session = get_session()
    team = session.get(Team, team_id)
    if team is None:
        abort(404, description=f"no team {team_id}")
    method = method_service.get_method(session, team_id, slug)
    if not visibility.can_see_method(user, team_id,
                                     on_boards=method_service.on_boards(session, method)):
        abort(404, description=f"team {team_id} has no method {slug[:80]!r}")
    # copies: the cached results are shared with other requests
    results = [dict(r) for r in method_boards.method_results(
        session, team_id=team_id, name=method.name, per_page=PER_PAGE)]
    for r in results:
        args = {"key": r["benchmark"], "task": r["task"]["key"], "split": r["split"]}
        r["board_url"] = url_for("public.board_page", **args,
                                 mode=None if r["mode"] == "team" else r["mode"],
                                 page=r["page"] if r["page"] > 1 else None, _external=external)
        r["history_url"] = url_for("public.history_page", **args, _external=external)
        r["submission_url"] = url_for("public.submission", submission_id=r["submission_id"],
                                      _external=external)
    everything = visibility.sees_team_private(user, team_id)
    subs = method_service.method_submissions(session, method, everything=everything)
    for s in subs:
        s["url"] = url_for("public.submission", submission_id=s["id"], _external=external)
        s["receipt_url"] = (url_for("api.submission_receipt", submission_id=s["id"],
                                    _external=external) if s["receipt"] else None)
    return {"method": method_service.card(method, team), "results": results,
            "submissions": subs,
            "editable": may_edit_method(user, team_id)}
