"""Public pages: home, benchmark, board, modality board, submission and team pages.

Views are thin: they parse the query, call `leaderboard.server.boards.service` / `leaderboard.server.boards.reports`, render.
Board fragments (the table of one page of one board) are cached with the boards and cleared by
`invalidate_boards`, so a cached board page costs one template render of the layout around it.
"""
from __future__ import annotations

import markdown
import nh3
from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    json,
    redirect,
    render_template,
    request,
    send_from_directory,
    url_for,
)
from flask_login import current_user
from markupsafe import Markup
from sqlalchemy import select

from leaderboard.judges.quality import load_summary
from leaderboard.server.access.visibility import may_analyse, sees_team_private
from leaderboard.server.boards import generators as gen_view
from leaderboard.server.boards import history as board_history
from leaderboard.server.boards import methods as method_boards
from leaderboard.server.boards import reports
from leaderboard.server.boards.generators_plot import matrix_svg
from leaderboard.server.boards.history_plot import history_svg
from leaderboard.server.boards import service as boards
from leaderboard.server.boards.analyses import vai_vs_accuracy
from leaderboard.server.boards.plots import format_value
from leaderboard.server.db import get_session
from leaderboard.server.models import Benchmark, Submission, Team, User
from leaderboard.server.services import activity
from leaderboard.server.services import methods as method_service
from leaderboard.server.web.admin_base import agreement_holders_for
from leaderboard.server.web.participate import participation
from leaderboard.server.web.requests import (
    PER_PAGE,
    board_args,
    lazy_session,
    page_args,
    page_of,
    tools_args,
    tooled_board,
)
from leaderboard.server.web.decay import benchmark_decay, submission_across
from leaderboard.server.web.robustness import submission_section

bp = Blueprint("public", __name__)

#: rows shown per board on the benchmark page, and per page on a board page
PREVIEW_ROWS = 10


@bp.app_template_filter("metric")
def _metric_filter(value, fmt: str = "num") -> str:
    return format_value(value, fmt)


@bp.app_template_filter("url_key")
def _url_key_filter(row_key: str) -> str:
    """The key a link to this benchmark release uses (``<family>-v<N>`` once the family has
    several releases: release 1's row key is the family's name, which means the latest)."""
    return boards.url_key(lazy_session, row_key)


def render_markdown(text: str) -> Markup:
    """Markdown from a pack (or a team) rendered to HTML that nh3 has cleaned."""
    html = markdown.markdown(text or "", extensions=["tables", "fenced_code", "sane_lists"])
    return Markup(nh3.clean(html))


#: metric columns a board shows unless the reader picks others (the headline first): a board
#: with every column (SynCred's seven) does not fit 1280 px without scrolling sideways
DEFAULT_COLUMNS = 3


def shown_columns(b: dict, picked: list[str] | None = None) -> list[str]:
    """The metric columns a board page shows: ``picked`` (the reader's ``col`` choices, unknown
    names ignored; "all" = every column), else the board's primary and the next columns up to
    `DEFAULT_COLUMNS`."""
    names = [c["metric"] for c in b["columns"]]
    if picked:
        if "all" in picked:
            return names
        chosen = [n for n in names if n in picked]
        if chosen:
            return chosen
    first = [b["primary"]] if b["primary"] in names else []
    return (first + [n for n in names if n not in first])[:DEFAULT_COLUMNS]


def _board_fragment(args: dict, page: int, per_page: int, *, compact: bool = False,
                    b: dict | None = None, holders: dict | None = None,
                    picked: list[str] | None = None, tools: dict | None = None) -> Markup:
    """The rendered table of one page of a board (cached with the board; not cached when
    ``holders``, the admins' agreement marker, is given, nor when ``tools``, the board tools'
    non-default query arguments, filter or re-sort it). ``picked``: the columns the reader
    chose (`shown_columns`)."""
    if b is None:
        b = boards.board(lazy_session, **args, page=page, per_page=per_page)
    shown = shown_columns(b, picked)

    link_args = {k: v for k, v in (("modality", args["modality"]), ("slice", args["slice_key"]),
                                   ("mode", args["mode"] if args["mode"] != "team" else None),
                                   ("per_page", per_page if per_page != PER_PAGE else None),
                                   ("col", picked or None))
                 if v is not None}
    link_args.update(tools or {})

    def compute():
        return render_template("public/_board.html", board=b, compact=compact,
                               link_args=link_args, shown=shown, gen=_seen_unseen(args, b, compact),
                               **page_of(b))

    if holders is not None or b.get("filtered"):
        return Markup(render_template("public/_board.html", board=b, compact=compact,
                                      link_args=link_args, holders=holders, shown=shown,
                                      gen=_seen_unseen(args, b, compact), **page_of(b)))

    key = ("board_html", b["task"]["key"], b["split"], args["modality"], b["slice_key"],
           args["mode"], page, per_page, compact, tuple(shown))
    return Markup(boards.get_cache().get_or_compute(args["benchmark_key"], key, compute))


def _seen_unseen(args: dict, b: dict, compact: bool) -> dict | None:
    """{submission id: its seen/unseen/gap} for the Seen and Unseen columns of a full board of
    a benchmark with generators, on its overall headline (issue 37); None elsewhere."""
    if compact or args["modality"] or b["slice_key"] or b["primary"] != b["task"]["headline"]:
        return None
    info = boards.benchmark_info(lazy_session, b["benchmark"])
    if not info.get("generators"):
        return None
    view = gen_view.generator_view(lazy_session, benchmark_key=b["benchmark"],
                                   task=b["task"]["key"], split=b["split"], mode=args["mode"])
    if not view["has_generators"]:
        return None
    return {r["submission_id"]: r for r in view["rows"]}


@bp.route("/")
def home():
    """The home page: its cards and lists are one fragment cached with the boards (cleared
    by `invalidate_boards`), so a request renders only the layout and the user's actions."""
    session = lazy_session
    # cached with the boards: a count over every submission per home request was the
    # page's largest cost (issue 16)
    act = boards.get_cache().get_or_compute(
        boards.CROSS, ("activity",), lambda: {"counts": activity.counts(get_session()),
                                             "recent": activity.recent(get_session())})

    def body():
        infos = boards.list_benchmark_infos(session)
        return render_template("public/_home_boards.html", benchmarks=infos,
                               modality_index=boards.modality_index(session),
                               leaders={b["key"]: _leaders(session, b) for b in infos},
                               recent=act["recent"])

    html = boards.get_cache().get_or_compute(boards.CROSS, ("home_html",), body)
    return render_template("public/home.html", body=Markup(html), counts=act["counts"])


#: rows a home card reads from a board: its leader is the first ranked row, below at most
#: the board's baselines (team mode has no other unranked rows)
LEADER_ROWS = 4


def _leaders(session, info: dict) -> list[dict]:
    """Per task, on the held-out split's board: the best ranked team (never a baseline), its
    place as the board says it (its rank interval: "tied 1st (1–2)"), CI and n, and the
    baselines as reference rows, so a fresh install is never an empty page (issues 12, 21)."""
    preferred = boards.board_split(info) or "test"
    out = []
    for t in info["tasks"]:
        # the held-out split's board, else the first split that has rows at all
        for split in [preferred, *[s for s in info["splits"] if s != preferred]]:
            b = boards.board(session, benchmark_key=info["key"], task=t["key"], split=split,
                             per_page=LEADER_ROWS)
            if b["total"]:
                break
        else:
            split = preferred
            b = boards.board(session, benchmark_key=info["key"], task=t["key"], split=split,
                             per_page=LEADER_ROWS)
        ranked = [r for r in b["rows"] if r.get("rank") is not None]
        if not ranked and b["ranked"] and len(b["baselines"]) >= LEADER_ROWS:
            b = boards.board(session, benchmark_key=info["key"], task=t["key"], split=split,
                             per_page=min(boards.MAX_PER_PAGE, len(b["baselines"]) + 1))
            ranked = [r for r in b["rows"] if r.get("rank") is not None]
        col = next((c for c in b["columns"] if c["metric"] == b["primary"]), None)

        def cell(r):
            return {"team": r["team"]["name"], "team_id": r["team"]["id"],
                    "submission_id": r["submission_id"], "method": r["method_name"],
                    "kind": r["baseline_kind"], **r["values"][b["primary"]]}

        place, title = _place(ranked[0]) if ranked else ("", "")
        out.append({"task": t, "split": split, "column": col, "part": b["part"],
                    "teams": b["ranked"], "leader": cell(ranked[0]) if ranked else None,
                    "place": place, "place_title": title,
                    "baselines": [cell(r) for r in b["baselines"]]})
    return out


def _place(row: dict) -> tuple[str, str]:
    """The leader's place as its board shows it: "tied 1st (1–2)" when its 95% rank interval
    reaches past 1, "1st (1)" when it is certain, "1st" without an interval."""
    iv = row.get("rank_interval")
    if not iv:
        return "1st", "rank 1; no rank interval for this board"
    hi = f"{iv['hi']}+" if iv["open_end"] else str(iv["hi"])
    span = iv["lo"] if iv["lo"] == iv["hi"] and not iv["open_end"] else f"{iv['lo']}–{hi}"
    words = "tied 1st" if iv["tied_first"] else "1st"
    return f"{words} ({span})", f"95% rank interval {span}"


def _demote(html: str) -> str:
    """Headings one level down (h1 -> h2 ...): the page has its own h1."""
    import re
    return re.sub(r"<(/?)h([1-5])\b", lambda m: f"<{m[1]}h{int(m[2]) + 1}", html)


def _lead(text: str) -> str:
    """The first paragraph of a description that is not a heading (what the benchmark measures)."""
    for para in (text or "").split("\n\n"):
        para = para.strip()
        if para and not para.startswith(("#", "|", "-", "*", "```")):
            return para
    return ""


@bp.route("/benchmarks/<key>")
def benchmark(key: str):
    session = lazy_session
    key = boards.resolve_key(session, key)  # the release shown (a family: its latest)
    info = boards.benchmark_info(session, key)
    modality = request.args.get("modality") or None

    def description():
        bench = session.scalar(select(Benchmark).where(Benchmark.key == key))
        text = bench.description_md if bench else ""
        return {"lead": str(render_markdown(_lead(text))),
                "full": _demote(str(render_markdown(text)))}

    desc = boards.get_cache().get_or_compute(key, ("description_parts",), description)
    sections = []
    for t in info["tasks"]:
        if modality is not None and modality not in t["modalities"]:
            continue  # filtering by a modality hides the tasks without it
        task_modality = modality
        for split in info["splits"]:
            args = {"benchmark_key": key, "task": t["key"], "split": split,
                    "modality": task_modality, "slice_key": None, "mode": "team"}
            sections.append({"task": t, "split": split, "modality": task_modality,
                             "table": _board_fragment(args, 1, PREVIEW_ROWS, compact=True)})
    vai = []
    if "vai_mean" in info["metrics"]:  # VCT²: VAI of each generator vs detectors' accuracy
        split = "test" if "test" in info["splits"] else info["splits"][0]
        part = ("private" if info["private_revealed"] else "public") if split == "test" else "all"
        vai = [{"split": split, "part": part, **v} for v in boards.get_cache().get_or_compute(
            key, ("vai_vs_accuracy", split, part),
            lambda: vai_vs_accuracy(session, key, split, part))]
    judge_quality = None
    if any(t["kind"] == "artifacts" for t in info["tasks"]):  # free text mapped by a judge
        judge_quality = load_summary()
    return render_template("public/benchmark.html", info=info,
                           lead=Markup(desc["lead"]), description=Markup(desc["full"]),
                           sections=sections, modality=modality, vai=vai,
                           take_part=participation(get_session(), boards.url_key(session, key)),
                           judge_quality=judge_quality, decay=benchmark_decay(key, info),
                           releases=boards.picker(session, key))


@bp.route("/benchmarks/<key>/boards/<task>/<split>")
def board_page(key: str, task: str, split: str):
    args = board_args(key, task, split)
    key = boards.url_key(lazy_session, args["benchmark_key"])  # links keep this release
    if request.args.get("rank_by") in ("unseen", "seen", "gap"):
        # ranked by a generator score: that ranking is the generators page's (issue 37)
        return redirect(url_for("public.generators_page", key=key, task=task, split=split,
                                mode=args["mode"], rank_by=request.args["rank_by"]))
    page, per_page = page_args()
    tools = tools_args()
    b = tooled_board(args, tools, page, per_page, cursor=request.args.get("cursor") or None)
    page = b["page"]  # a cursor names its page: the same rows as that page by number
    holders = agreement_holders_for(b)  # admins only: which teams hold the agreement
    picked = [c for c in request.args.getlist("col") if c][:50] or None
    shown = shown_columns(b, picked)
    sort, direction = tools.sort_key(b)

    releases = boards.picker(lazy_session, args["benchmark_key"])

    def compute():
        return render_template("public/_board_page.html", board=b, args=args,
                               switch=_switchers(b), shown=shown, tools=tools,
                               releases=releases,
                               sort=sort, direction=direction,
                               table=_board_fragment(args, page, per_page, b=b, holders=holders,
                                                     picked=picked,
                                                     tools=tools.query() if b.get("filtered") else None))

    if holders is not None or b.get("filtered"):
        return render_template("public/board.html", board=b, body=Markup(compute()))

    key = ("board_page", task, split, args["modality"], args["slice_key"], args["mode"], page,
           per_page, tuple(shown))
    body = Markup(boards.get_cache().get_or_compute(args["benchmark_key"], key, compute))
    return render_template("public/board.html", board=b, body=body)


@bp.route("/benchmarks/<key>/boards/<task>/<split>/generators")
def generators_page(key: str, task: str, split: str):
    """Seen and unseen generators of a board and its detectors x generators matrix (issue 37),
    one page of rows at a time (in the chosen order across every row). Query: mode
    (team|all), rank_by (board|unseen|seen|gap), page, per_page (default
    `generators.PER_PAGE`). A cached page reads no view: only its arguments are checked."""
    mode = request.args.get("mode") or "team"
    rank_by = request.args.get("rank_by") or "board"
    page, per_page = page_args(default_per_page=gen_view.PER_PAGE)
    key = boards.resolve_key(lazy_session, key)
    info, t = gen_view.check_args(lazy_session, benchmark_key=key, task=task, split=split,
                                  mode=mode, rank_by=rank_by)

    def compute():
        full = gen_view.generator_view(lazy_session, benchmark_key=key, task=task, split=split,
                                       mode=mode, rank_by=rank_by)
        view = gen_view.view_page(full, page, per_page)
        m = info["metrics"].get(view["metric"], {})
        fmt = m.get("fmt", "num")
        lower, upper = gen_view.value_range(full)
        svg = (matrix_svg(view, title=f"{t.get('title') or task}: {m.get('title', view['metric'])}"
                          " by generator", fmt=fmt, lower=lower, upper=upper)
               if view["has_generators"] else "")
        link_args = {"mode": mode, "rank_by": rank_by if rank_by != "board" else None,
                     "per_page": per_page if per_page != gen_view.PER_PAGE else None}
        return render_template("public/_generators.html", view=view, info=info, task=t,
                               metric=m, fmt=fmt, mode=mode, svg=Markup(svg),
                               releases=boards.picker(lazy_session, key),
                               link_args={k: v for k, v in link_args.items() if v is not None})

    body = Markup(boards.get_cache().get_or_compute(
        key, ("generators_page", task, split, mode, rank_by, page, per_page), compute))
    return render_template("public/generators.html", info=info, task=t, split=split, body=body)


@bp.route("/benchmarks/<key>/boards/<task>/<split>/history")
def history_page(key: str, task: str, split: str):
    """A board's best over time and each top team's best over time, as a step plot and a table
    (issue 38; `leaderboard.server.boards.history`). Query: modality, slice (as the board)."""
    args = board_args(key, task, split)
    args.pop("mode")  # a history replays the "all submissions" board
    key = args["benchmark_key"]
    h = board_history.board_history(lazy_session, **args)
    info = boards.benchmark_info(lazy_session, key)
    t = boards.task_of(info, task)

    def compute():
        col = h.get("column") or {}
        svg = history_svg(h, title=f"{t.get('title') or task} ({split}): "
                                   f"{col.get('title', h['primary'])} over time")
        return render_template("public/_history.html", h=h, info=info, task=t, args=args,
                               fmt=col.get("fmt", "num"), svg=Markup(svg),
                               releases=boards.picker(lazy_session, key))

    body = Markup(boards.get_cache().get_or_compute(
        key, ("history_page", task, split, args["modality"], h["slice_key"]), compute))
    return render_template("public/history.html", info=info, task=t, split=split, body=body)


def _switchers(b: dict) -> dict:
    """The task and split switchers of a board page, and its slices grouped by axis."""
    info = boards.benchmark_info(lazy_session, b["benchmark"])
    groups: dict[str, list[str]] = {}
    for sk in b["slice_choices"]:
        axes = "+".join(sorted(boards.parse_slice_key(sk)))
        groups.setdefault(axes, []).append(sk)
    return {"tasks": info["tasks"], "splits": info["splits"],
            "slice_groups": sorted(groups.items()),
            "generators": bool(info.get("generators"))}


@bp.route("/favicon.ico")
def favicon():
    """The site icon where browsers look for it first (a 404 there otherwise)."""
    return send_from_directory(current_app.static_folder, "favicon.ico",
                               mimetype="image/vnd.microsoft.icon", max_age=86400)


@bp.route("/modalities")
def modalities_index():
    """Every modality and task kind with its board's leader (the numbers of the boards)."""
    index = boards.modality_index(lazy_session)
    return render_template("public/modalities.html", index=index, only=None)


@bp.route("/modalities/<modality>")
def modality_kinds(modality: str):
    """One modality's boards, one per task kind (the index, for that modality)."""
    index = [m for m in boards.modality_index(lazy_session) if m["modality"] == modality]
    if not index:
        abort(404, description=f"no modality {modality!r}; modalities: "
                               f"{boards.modalities(lazy_session)}")
    return render_template("public/modalities.html", index=index, only=modality)


@bp.route("/modalities/<modality>/<kind>")
def modality_page(modality: str, kind: str):
    """One modality board: a modality x a task kind x the split the reader picks."""
    page, per_page = page_args()
    split = request.args.get("split") or boards.default_split(lazy_session, modality, kind)
    mb = boards.modality_board(lazy_session, modality, kind, split=split, page=page,
                               per_page=per_page)
    body = boards.get_cache().get_or_compute(
        boards.CROSS, ("modality_html", modality, kind, split, page, per_page),
        lambda: render_template("public/_modality.html", mb=mb))
    return render_template("public/modality.html", mb=mb, body=Markup(body),
                           index=boards.modality_index(lazy_session))


def _can_see(sub: Submission) -> tuple[bool, bool]:
    """(may view the page, privileged: team member or admin)."""
    user = current_user
    admin = bool(getattr(user, "is_authenticated", False) and user.is_admin)
    member = bool(getattr(user, "is_authenticated", False) and sub.team_id is not None
                  and user.team_id == sub.team_id)
    public = sub.is_public and not sub.hidden
    return (public or admin or member), admin


def _submission_or_404(submission_id: int) -> tuple[Submission, bool]:
    sub = get_session().get(Submission, submission_id)
    if sub is None:
        abort(404, description=f"no submission {submission_id}")
    allowed, admin = _can_see(sub)
    if not allowed:  # a private submission is not acknowledged to exist
        abort(404, description=f"no submission {submission_id}")
    return sub, admin


@bp.route("/submissions/<int:submission_id>")
def submission(submission_id: int):
    sub, admin = _submission_or_404(submission_id)
    report = reports.submission_report(get_session(), sub, privileged=admin)
    return render_template("public/submission.html", sub=sub, report=report,
                           plots=[Markup(p["svg"]) for p in report["plots"]],
                           placement=_placement(sub), history=_history_ranks(sub),
                           robustness=submission_section(get_session(), sub),
                           across=submission_across(sub),
                           method_slug=method_service.slug_of(get_session(), sub.team_id,
                                                              sub.method_name),
                           analysis_url=(url_for("analysis.submission_errors",
                                                 submission_id=sub.id)
                                         if may_analyse(current_user, sub) else None))


def _placement(sub: Submission) -> list[dict]:
    """Per task: the submission's rank on its board and a link back to that board (issue 12);
    "all submissions" mode when it does not represent its team."""
    if sub.status != "scored" or sub.hidden or not sub.is_public:
        return []
    info = boards.benchmark_info(lazy_session, sub.benchmark.key)
    out = []
    for t in info["tasks"]:
        for mode in ("team", "all"):
            place = boards.get_cache().get_or_compute(
                info["key"], ("placement", t["key"], sub.split, sub.id, mode),
                lambda: boards.placement(lazy_session, info, t, sub.split, sub.id, mode))
            if place is not None:
                out.append({"task": t, "rank": place["rank"], "of": place["of"], "mode": mode,
                            "url": url_for("public.board_page",
                                           key=boards.url_key(lazy_session, info["key"]),
                                           task=t["key"],
                                           split=sub.split, mode=None if mode == "team"
                                           else mode)})
                break
    return out


def _history_ranks(sub: Submission) -> list[dict]:
    """Per task: the submission's rank when it was made and now, among the competing
    submissions of its board in "all submissions" mode (`leaderboard.server.boards.history`)."""
    if sub.status != "scored" or sub.hidden or not sub.is_public:
        return []
    info = boards.benchmark_info(lazy_session, sub.benchmark.key)
    out = []
    for t in info["tasks"]:
        r = board_history.submission_ranks(lazy_session, benchmark_key=info["key"],
                                           task=t["key"], split=sub.split,
                                           submission_id=sub.id)
        if r is not None:
            out.append({"task": t, **r,
                        "url": url_for("public.history_page",
                                       key=boards.url_key(lazy_session, info["key"]),
                                       task=t["key"], split=sub.split)})
    return out


@bp.route("/submissions/<int:submission_id>/records.json")
def submission_records(submission_id: int):
    sub, admin = _submission_or_404(submission_id)
    report = reports.submission_report(get_session(), sub, privileged=admin)
    body = {"submission": {"id": sub.id, "benchmark": sub.benchmark.key,
                           "family": sub.benchmark.family or sub.benchmark.key,
                           "release": sub.benchmark.release, "split": sub.split,
                           "method_name": sub.method_name, "status": sub.status,
                           "team": sub.team.name if sub.team else None},
            "parts": report["parts"], "records": report["records"]}
    return Response(json.dumps(body, indent=1), mimetype="application/json", headers={
        "Content-Disposition": f'attachment; filename="submission-{sub.id}-records.json"'})


@bp.route("/teams/<int:team_id>")
def team_page(team_id: int):
    """A team: its members, its affiliation and its methods, each with its best results on
    the boards (issue 38: methods, not raw submissions); private methods (no submission on a
    board) only for the team's members and admins."""
    session = get_session()
    team = session.get(Team, team_id)
    if team is None:
        abort(404, description=f"no team {team_id}")
    members = session.scalars(select(User.display_name).where(User.team_id == team_id)
                              .order_by(User.display_name)).all()
    page, per_page = page_args()
    listed = method_service.team_methods(
        session, team_id, everything=sees_team_private(current_user, team_id))
    total = len(listed)
    rows = [{"method": m, "best": method_boards.best_results(method_boards.method_results(
                session, team_id=team_id, name=m.name, per_page=PER_PAGE))}
            for m in listed[(page - 1) * per_page:page * per_page]]
    return render_template("public/team.html", team=team, members=members, methods=rows,
                           endpoint="public.team_page",
                           pager_args={"team_id": team_id, "per_page": per_page}, page=page,
                           pages=max(1, -(-total // per_page)), total=total)
