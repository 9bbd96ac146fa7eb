"""Read API: benchmarks, boards (JSON with pagination, CSV), modality boards, OpenAPI document.

Public and unauthenticated (the boards are public pages). Response bodies of board pages are
cached with the boards (`leaderboard.server.boards.service.get_cache`), cleared by `invalidate_boards`.
"""
from __future__ import annotations

from itertools import islice

from flask import Response, current_app, json, jsonify, request, stream_with_context, url_for

from leaderboard.server.boards import service as boards
from leaderboard.server.boards.intervals import TOP as INTERVAL_TOP
from leaderboard.server.csvsafe import to_csv
from leaderboard.server.web.api.base import bp
from leaderboard.server.web.api.openapi import build_document
from leaderboard.server.web.requests import board_args, lazy_session, page_args

_PUBLIC_INFO = ("key", "title", "version", "tasks", "modalities", "splits", "metrics",
                "private_revealed", "submissions_open")


def _public(info: dict) -> dict:
    return {k: info[k] for k in _PUBLIC_INFO}


def _json(body: str) -> Response:
    return Response(body, mimetype="application/json")


@bp.get("/benchmarks")
def list_benchmarks():
    """Every benchmark: tasks, modalities, splits and metric declarations."""
    infos = boards.list_benchmark_infos(lazy_session)
    return jsonify({"benchmarks": [_public(i) for i in infos]})


@bp.get("/benchmarks/<key>")
def get_benchmark(key: str):
    """One benchmark with the URL of each of its boards."""
    info = boards.benchmark_info(lazy_session, key)
    links = [{"task": t["key"], "split": s,
              "url": url_for("api.board_json", key=key, task=t["key"], split=s),
              "csv": url_for("api.board_csv", key=key, task=t["key"], split=s)}
             for t in info["tasks"] for s in info["splits"]]
    return jsonify({**_public(info), "boards": links})


@bp.get("/boards/<key>/<task>/<split>")
def board_json(key: str, task: str, split: str):
    """One page of a board. Query: modality, slice, mode (team|all), page, per_page, cursor
    (the ``next_cursor`` of the page before: deep pages cost what the first one costs)."""
    args = board_args(key, task, split)
    page, per_page = page_args()
    b = boards.board(lazy_session, **args, page=page, per_page=per_page,
                     cursor=request.args.get("cursor") or None)
    page = b["page"]  # a cursor names its page: the same rows as that page by number

    def compute() -> str:
        body = {k: v for k, v in b.items() if k not in ("ranked", "baselines")}
        return json.dumps(body)

    cache_key = ("board_json", task, split, args["modality"], b["slice_key"], args["mode"],
                 page, per_page)
    return _json(boards.get_cache().get_or_compute(key, cache_key, compute))


#: rows a CSV export reads per query (and writes per piece of the stream)
CSV_CHUNK = 1000


@bp.get("/boards/<key>/<task>/<split>.csv")
def board_csv(key: str, task: str, split: str):
    """The whole board as CSV (formula-safe cells). Query: modality, slice, mode.

    Streamed in keyset chunks from the standings: a large board is never held in memory."""
    args = board_args(key, task, split)
    # validates the arguments; its columns head the CSV, and the rank intervals, which only the
    # top rows have, all come with the board's first page
    top = boards.board(lazy_session, **args, page=1,
                       per_page=min(boards.MAX_PER_PAGE, 2 * INTERVAL_TOP))
    cols = top["columns"]
    header = ["rank", "team", "method", "submission_id", "baseline", "disqualified",
              "submitted_at"]
    for c in cols:
        header += [c["metric"], f"{c['metric']}_ci_low", f"{c['metric']}_ci_high",
                   f"{c['metric']}_n"]
    header += ["rank_lo", "rank_hi", "tied_first"]  # the 95% rank interval (issue 14)
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
                       int(iv["tied_first"])] if iv else ["", "", ""])

    rows = boards.board_rows(lazy_session, **args, chunk=CSV_CHUNK)
    name = "-".join(filter(None, [key, task, split, args["modality"], args["mode"]]))
    return _csv_response(rows, line, header, name)


@bp.get("/modalities")
def list_modalities():
    """The modalities that have a board, with their URLs."""
    ms = boards.modalities(lazy_session)
    return jsonify({"modalities": [{"modality": m,
                                    "url": url_for("api.modality_json", modality=m)}
                                   for m in ms]})


@bp.get("/modalities/<modality>")
def modality_json(modality: str):
    """One page of the per-modality board: each team's headline (value, CI, n) per task, its
    coverage and mean normalised score (ranked only with a result on every task; the rule is
    in the body). Query: page, per_page."""
    page, per_page = page_args()
    mb = boards.modality_board(lazy_session, modality, page=page, per_page=per_page)
    return _json(boards.get_cache().get_or_compute(
        boards.CROSS, ("modality_json", modality, page, per_page), lambda: json.dumps(mb)))


@bp.get("/modalities/<modality>.csv")
def modality_csv(modality: str):
    """The whole modality board as CSV: rank (empty: not ranked), team, tasks covered, mean
    normalised score, then per column its value, 95% CI, n and submission id."""
    mb = boards.modality_board(lazy_session, modality, page=1, per_page=1)  # checks, columns
    header = ["rank", "team", "tasks_covered", "tasks", "mean_score"]
    for c in mb["columns"]:
        k = c["key"]
        header += [k, f"{k}_ci_low", f"{k}_ci_high", f"{k}_n", f"{k}_submission_id"]

    def line(r) -> list:
        row = [r["rank"], r["team"]["name"], r["covered"], r["of"], r["mean_score"]]
        for c in mb["columns"]:
            v = r["cells"].get(c["key"])
            row += ([v["value"], v["ci_low"], v["ci_high"], v["n"], v["submission_id"]] if v
                    else ["", "", "", "", ""])
        return row

    rows = boards.modality_rows(lazy_session, modality, chunk=CSV_CHUNK)
    return _csv_response(rows, line, header, f"modality-{modality}")


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
            "board": "/api/v1/boards/{key}/{task}/{split}",
            "board_csv": "/api/v1/boards/{key}/{task}/{split}.csv",
            "modalities": url_for("api.list_modalities"),
            "modality_board": "/api/v1/modalities/{modality}",
            "modality_board_csv": "/api/v1/modalities/{modality}.csv",
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
