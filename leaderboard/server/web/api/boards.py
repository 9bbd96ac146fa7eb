"""Read API: benchmarks, boards (JSON with pagination, CSV), modality boards, OpenAPI document.

Public and unauthenticated (the boards are public pages). Response bodies of board pages are
cached with the boards (`leaderboard.server.boards.service.get_cache`), cleared by `invalidate_boards`.
"""
from __future__ import annotations

from itertools import islice

from flask import (
    Response,
    current_app,
    json,
    jsonify,
    redirect,
    request,
    stream_with_context,
    url_for,
)

from leaderboard.server.boards import generators as gen_view
from leaderboard.server.boards import history as board_history
from leaderboard.server.boards import service as boards
from leaderboard.server.boards.intervals import TOP as INTERVAL_TOP
from leaderboard.server.csvsafe import to_csv
from leaderboard.server.errors import NotFound
from leaderboard.server.web.api.base import bp
from leaderboard.server.web.api.openapi import build_document
from leaderboard.server.boards.tools import apply_tools, keep
from leaderboard.server.web.requests import (
    board_args,
    lazy_session,
    page_args,
    tooled_board,
    tools_args,
)

_PUBLIC_INFO = ("key", "family", "release", "title", "version", "tasks", "modalities", "splits",
                "metrics", "private_revealed", "submissions_open", "generators")


def _public(info: dict) -> dict:
    return {k: info[k] for k in _PUBLIC_INFO}


def _json(body: str) -> Response:
    return Response(body, mimetype="application/json")


@bp.get("/benchmarks")
def list_benchmarks():
    """Every benchmark (its latest release, one entry per family): tasks, modalities,
    splits and metric declarations, and the URL of its list of releases."""
    infos = boards.list_benchmark_infos(lazy_session)
    return jsonify({"benchmarks": [
        {**_public(i), "releases": url_for("api.benchmark_releases", family=i["family"])}
        for i in infos]})


@bp.get("/benchmarks/<key>")
def get_benchmark(key: str):
    """One benchmark release with the URL of each of its boards: a family's name gives its
    latest release, ``<family>-v<N>`` release N (the boards' URLs name that release)."""
    row = boards.resolve_key(lazy_session, key)
    info = boards.benchmark_info(lazy_session, row)
    key = boards.url_key(lazy_session, row)
    links = [{"task": t["key"], "split": s,
              "url": url_for("api.board_json", key=key, task=t["key"], split=s),
              "csv": url_for("api.board_csv", key=key, task=t["key"], split=s)}
             for t in info["tasks"] for s in info["splits"]]
    return jsonify({**_public(info), "boards": links,
                    "releases": url_for("api.benchmark_releases", family=info["family"])})


@bp.get("/benchmarks/<family>/releases")
def benchmark_releases(family: str):
    """Every release of a benchmark family, oldest first (issue 37): ``benchmark`` (the
    release's key), ``release``, ``version``, ``released_at``, ``latest``, ``url_key`` (the
    key that names this release in URLs) and per split its item count and the pack digests a
    receipt commits to (``pack``: digest, benchmark_yaml, items). ``family`` may also be
    any release's key: the list is its family's."""
    row = boards.resolve_key(lazy_session, family)
    name = boards.release_of(lazy_session, row)["family"]
    rels = boards.family_releases(lazy_session, name, digests=True)
    return jsonify({"family": name, "latest": rels[-1]["release"], "releases": [
        {**r, "url": url_for("api.get_benchmark", key=r["url_key"])} for r in rels]})


@bp.get("/boards/<key>/<task>/<split>")
def board_json(key: str, task: str, split: str):
    """One page of a board. Query: modality, slice, mode (team|all), page, per_page, cursor
    (the ``next_cursor`` of the page before: deep pages cost what the first one costs);
    ``rank_by`` unseen|seen|gap redirects to the board's generators view ranked so. Board
    tools (issue 38), the page's names: q, baselines (0|1), code (0|1), from, to
    (YYYY-MM-DD), sort (a metric), dir (asc|desc); filtered rows keep the board's ranks
    (``filtered`` true, ``board_total`` the board's row count)."""
    args = board_args(key, task, split)
    if request.args.get("rank_by") in ("unseen", "seen", "gap"):
        # ranked by a generator score (issue 37): the generators view holds that ranking
        key = boards.url_key(lazy_session, args["benchmark_key"])
        return redirect(url_for("api.generators_json", key=key, task=task, split=split,
                                mode=args["mode"], rank_by=request.args["rank_by"]))
    page, per_page = page_args()
    tools = tools_args()
    b = tooled_board(args, tools, page, per_page, cursor=request.args.get("cursor") or None)
    page = b["page"]  # a cursor names its page: the same rows as that page by number

    def compute() -> str:
        body = {k: v for k, v in b.items() if k not in ("ranked", "baselines")}
        # the release it is (issue 37): the row key, its family and number
        return json.dumps({**body, **boards.release_of(lazy_session, args["benchmark_key"])})

    if b.get("filtered"):  # filtered from the cached every-row read; not cached itself
        return _json(compute())

    cache_key = ("board_json", task, split, args["modality"], b["slice_key"], args["mode"],
                 page, per_page)
    return _json(boards.get_cache().get_or_compute(args["benchmark_key"], cache_key, compute))


def _generator_view(row: str, task: str, split: str) -> dict:
    """``row``: a key already resolved (`boards.resolve_key`): resolving release 1's row key
    again would name the family's latest release."""
    view = gen_view.generator_view(lazy_session, benchmark_key=row, task=task, split=split,
                                   mode=request.args.get("mode") or "team",
                                   rank_by=request.args.get("rank_by") or "board")
    return {**view, **boards.release_of(lazy_session, row)}


@bp.get("/boards/<key>/<task>/<split>/generators")
def generators_json(key: str, task: str, split: str):
    """Seen and unseen generators and the detectors x generators matrix of a board (issue 37),
    one page of rows as the board's JSON: per row its ``seen``, ``unseen`` and ``gap``
    ({value, ci_low, ci_high, n}), ``unseen_rank`` (over every row) and one cell per generator
    (``generators``, by date); ``page``, ``per_page``, ``total``, ``pages``. Query: mode
    (team|all), rank_by (board|unseen|seen|gap: the row order, across every row), page,
    per_page (default 50, at most 500, as the board's). The CSV has every row."""
    mode = request.args.get("mode") or "team"
    rank_by = request.args.get("rank_by") or "board"
    page, per_page = page_args()
    row = boards.resolve_key(lazy_session, key)
    gen_view.check_args(lazy_session, benchmark_key=row, task=task, split=split, mode=mode,
                        rank_by=rank_by)

    def compute() -> str:
        return json.dumps(gen_view.view_page(_generator_view(row, task, split), page, per_page))

    return _json(boards.get_cache().get_or_compute(
        row, ("generators_json", task, split, mode, rank_by, page, per_page), compute))


@bp.get("/boards/<key>/<task>/<split>/generators.csv")
def generators_csv(key: str, task: str, split: str):
    """Every row's numbers as CSV, one line per number: ``what`` is seen, unseen, gap or cell
    (then ``generator`` names it); each line ends with the release (``benchmark``, ``family``,
    ``release``). Query: mode, rank_by (as the JSON). Streamed."""
    row = boards.resolve_key(lazy_session, key)
    view = _generator_view(row, task, split)
    rel = boards.release_of(lazy_session, row)
    tail = [rel["benchmark"], rel["family"], rel["release"]]
    dates = {g["key"]: g["date"] for g in view["generators"]}

    def lines():
        for r in view["rows"]:
            head = [r["submission_id"], r["team"]["name"], r["method_name"], r["created_at"],
                    r["unseen_rank"]]
            for what in ("seen", "unseen", "gap"):
                s = r[what]
                if s is not None:
                    yield head + [what, "", "", "", s["value"], s["ci_low"], s["ci_high"],
                                  "" if s["n"] is None else s["n"]] + tail
            for c in r["cells"]:
                yield head + ["cell", c["generator"], dates.get(c["generator"]) or "",
                              int(c["unseen"]), c["value"], c["ci_low"], c["ci_high"],
                              c["n"]] + tail

    header = ["submission_id", "team", "method", "submitted_at", "unseen_rank", "what",
              "generator", "generator_date", "unseen", "value", "ci_low", "ci_high", "n",
              "benchmark", "family", "release"]
    return _csv_response(lines(), lambda line: line, header,
                         f"{rel['benchmark']}-{task}-{split}-generators")


def _history(key: str, task: str, split: str) -> dict:
    args = board_args(key, task, split)
    args.pop("mode")  # a history replays the "all submissions" board (boards/history.py)
    h = board_history.board_history(lazy_session, **args)
    return {**{k: v for k, v in h.items() if k != "ranks"},
            **boards.release_of(lazy_session, args["benchmark_key"])}


@bp.get("/boards/<key>/<task>/<split>/history")
def history_json(key: str, task: str, split: str):
    """A board's history (issue 38): ``best``, the board's best over time, and ``teams``, each
    top team's best over time; every step is {at, submission_id, team, method_name, value} (the
    points of the page's step plot). Query: modality, slice (as the board)."""
    return jsonify(_history(key, task, split))


@bp.get("/boards/<key>/<task>/<split>/history.csv")
def history_csv(key: str, task: str, split: str):
    """The same steps as CSV, one line per step (``series`` best or team)."""
    h = _history(key, task, split)
    rows = list(board_history.history_csv_rows(h))
    tail = [h["benchmark"], h["family"], h["release"]]
    return Response(to_csv([r + tail for r in rows[1:]],
                           header=rows[0] + ["benchmark", "family", "release"]),
                    mimetype="text/csv", headers={"Content-Disposition":
                    f'attachment; filename="{h["benchmark"]}-{task}-{split}-history.csv"'})


#: rows a CSV export reads per query (and writes per piece of the stream)
CSV_CHUNK = 1000


@bp.get("/boards/<key>/<task>/<split>.csv")
def board_csv(key: str, task: str, split: str):
    """The whole board as CSV (formula-safe cells). Query: modality, slice, mode, and the
    board tools as for the JSON (q, baselines, code, from, to, sort, dir; ranks stay the
    board's).

    Streamed in keyset chunks from the standings: a large board is never held in memory
    (unless re-sorted by another column: then its rows are sorted in memory)."""
    args = board_args(key, task, split)
    tools = tools_args()
    # validates the arguments; its columns head the CSV, and the rank intervals, which only the
    # top rows have, all come with the board's first page
    top = boards.board(lazy_session, **args, page=1,
                       per_page=min(boards.MAX_PER_PAGE, 2 * INTERVAL_TOP))
    cols = top["columns"]
    tools.sort_key(top)  # 400 for a sort that is no column of this board
    header = ["rank", "team", "method", "submission_id", "baseline", "disqualified",
              "submitted_at"]
    for c in cols:
        header += [c["metric"], f"{c['metric']}_ci_low", f"{c['metric']}_ci_high",
                   f"{c['metric']}_n"]
    header += ["rank_lo", "rank_hi", "tied_first"]  # the 95% rank interval (issue 14)
    header += ["benchmark", "family", "release"]  # the release (issue 37)
    rel = boards.release_of(lazy_session, args["benchmark_key"])
    tail = [rel["benchmark"], rel["family"], rel["release"]]
    intervals = {r["submission_id"]: r["rank_interval"] for r in top["rows"]
                 if r.get("rank_interval")}

    def line(r) -> list:
        row = [r["rank"], r["team"]["name"], r["method_name"], r["submission_id"],
               r["baseline_kind"] if r["is_baseline"] else "",
               r["disqualified_reason"] or "", r["created_at"]]
        for c in cols:
            v = r["values"][c["metric"]]
            row += [v["value"], v["ci_low"], v["ci_high"], v["n"]]
        iv = intervals.get(r["submission_id"])
        return row + ([iv["lo"], f"{iv['hi']}+" if iv["open_end"] else iv["hi"],
                       int(iv["tied_first"])] if iv else ["", "", ""]) + tail

    rows = boards.board_rows(lazy_session, **args, chunk=CSV_CHUNK)
    if tools.resorts(top):
        rows = iter(apply_tools(tools, top, rows))
    elif tools.filters:
        rows = (r for r in rows if keep(tools, r))  # filters only: still streamed
    name = "-".join(filter(None, [args["benchmark_key"], task, split, args["modality"],
                                  args["mode"]]))
    return _csv_response(rows, line, header, name)


def _index_entry(m: dict) -> dict:
    return {"modality": m["modality"], "url": url_for("api.modality_kinds", modality=m["modality"]),
            "boards": [{**k, "url": url_for("api.modality_json", modality=m["modality"],
                                            kind=k["kind"]),
                        "csv": url_for("api.modality_csv", modality=m["modality"],
                                       kind=k["kind"])}
                       for k in m["boards"]]}


@bp.get("/modalities")
def list_modalities():
    """Every modality with its boards (one per task kind), each split's task count, teams,
    ranked teams and leader, and the boards' URLs (the web page /modalities shows the same)."""
    return jsonify({"modalities": [_index_entry(m)
                                   for m in boards.modality_index(lazy_session)]})


@bp.get("/modalities/<modality>")
def modality_kinds(modality: str):
    """One modality's boards (as in /modalities)."""
    for m in boards.modality_index(lazy_session):
        if m["modality"] == modality:
            return jsonify(_index_entry(m))
    raise NotFound(f"no modality {modality!r}; modalities: "
                   f"{[m['modality'] for m in boards.modality_index(lazy_session)]}")


@bp.get("/modalities/<modality>/<kind>")
def modality_json(modality: str, kind: str):
    """One page of a modality board (one modality x task kind x split): per team its
    normalised mean with a 95% bootstrap interval and n, coverage, rank and rank interval, and
    per task its headline (value, CI, n, normalised); baselines are marked reference rows; each
    column states its chance level; the rule is in the body. Query: split (default: test),
    page, per_page (team rows per page)."""
    page, per_page = page_args()
    split = request.args.get("split") or boards.default_split(lazy_session, modality, kind)
    mb = boards.modality_board(lazy_session, modality, kind, split=split, page=page,
                               per_page=per_page)
    return _json(boards.get_cache().get_or_compute(
        boards.CROSS, ("modality_json", modality, kind, split, page, per_page),
        lambda: json.dumps(mb)))


@bp.get("/modalities/<modality>/<kind>.csv")
def modality_csv(modality: str, kind: str):
    """The whole modality board as CSV, the same rows as the page: rank (empty: not ranked),
    the rank interval, team, baseline (its kind, or empty for a team), tasks covered, tasks,
    mean normalised score, its 95% interval and n, then per column its value, 95% CI, n,
    normalised value and submission id. Query: split (default: test)."""
    split = request.args.get("split") or boards.default_split(lazy_session, modality, kind)
    mb = boards.modality_board(lazy_session, modality, kind, split=split, page=1,
                               per_page=1)  # checks, columns
    header = ["rank", "rank_low", "rank_high", "team", "baseline", "tasks_covered", "tasks",
              "mean_score", "mean_ci_low", "mean_ci_high", "n"]
    for c in mb["columns"]:
        k = c["key"]
        header += [k, f"{k}_ci_low", f"{k}_ci_high", f"{k}_n", f"{k}_normalised",
                   f"{k}_submission_id"]

    def line(r) -> list:
        iv, ci = r["rank_interval"] or {}, r["mean_ci"] or ["", ""]
        hi = iv.get("hi", "")
        row = [r["rank"], iv.get("lo", ""), f"{hi}+" if iv.get("open_end") else hi,
               r["team"]["name"], r["baseline_kind"] or "", r["covered"], r["of"],
               r["mean_score"], ci[0], ci[1], r["n"]]
        for c in mb["columns"]:
            v = r["cells"].get(c["key"])
            row += ([v["value"], v["ci_low"], v["ci_high"], v["n"], v["normalised"],
                     v["submission_id"]] if v else ["", "", "", "", "", ""])
        return row

    rows = boards.modality_rows(lazy_session, modality, kind, split, chunk=CSV_CHUNK)
    return _csv_response(rows, line, header, f"modality-{modality}-{kind}-{split}")


def _csv_response(rows, line, header: list, name: str) -> Response:
    """Stream ``line(r)`` for every row as CSV in chunks of CSV_CHUNK. The first chunk is read
    before the answer starts: a database fault then is a clean 503 (operations.md); a fault
    later, on a board longer than one chunk, can only cut it short."""
    first = [line(r) for r in islice(rows, CSV_CHUNK)]

    def generate():
        yield to_csv(first, header=header)
        chunk = []
        for r in rows:
            chunk.append(line(r))
            if len(chunk) >= CSV_CHUNK:
                yield to_csv(chunk)
                chunk = []
        if chunk:
            yield to_csv(chunk)

    return Response(stream_with_context(generate()), mimetype="text/csv", headers={
        "Content-Disposition": f'attachment; filename="{name}.csv"'})


@bp.get("/")
def index():
    """The resources of this API, with their URLs (start here)."""
    base = request.url_root.rstrip("/")
    return jsonify({
        "name": "Synthetic-media detection leaderboard API", "version": "1",
        "documentation": base + url_for("api_docs.page"),
        "openapi": base + url_for("api.openapi"),
        "authentication": "reads are public; uploads and your team's list need "
                          "'Authorization: Bearer <token>' (create one on the team page)",
        "resources": {
            "benchmarks": url_for("api.list_benchmarks"),
            "benchmark": "/api/v1/benchmarks/{key}",
            "releases": "/api/v1/benchmarks/{family}/releases",
            "board": "/api/v1/boards/{key}/{task}/{split}",
            "board_csv": "/api/v1/boards/{key}/{task}/{split}.csv",
            "modalities": url_for("api.list_modalities"),
            "modality": "/api/v1/modalities/{modality}",
            "modality_board": "/api/v1/modalities/{modality}/{kind}?split={split}",
            "modality_board_csv": "/api/v1/modalities/{modality}/{kind}.csv?split={split}",
            "challenges": url_for("api.api_challenges"),
            "challenge": "/api/v1/challenges/{key}",
            "submissions": url_for("api.list_submissions"),
            "submission": "/api/v1/submissions/{id}"}})


@bp.get("/openapi.json")
def openapi():
    """This API's OpenAPI 3.1 document."""
    doc = current_app.extensions.get("lb_openapi")
    if doc is None:
        doc = current_app.extensions["lb_openapi"] = build_document(current_app)
    return jsonify(doc)
