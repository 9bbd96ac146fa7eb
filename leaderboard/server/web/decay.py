"""Decay across releases (issue 37, 4b and 4c): the decay page of a board, the decay plots on
the benchmark page, and the "across releases" section of a submission's page (its history
across releases and its row of the detectors x generators matrix).

Thin views over `leaderboard.server.boards.decay` and `leaderboard.server.boards.generators`;
the JSON and CSV of the same numbers are `web/api/decay.py`. Rendered fragments are cached with
the boards (cross-benchmark scope: a family's releases are several benchmarks).
"""
from __future__ import annotations

from flask import Blueprint, render_template, url_for
from markupsafe import Markup

from leaderboard.server.boards import decay
from leaderboard.server.boards import generators as gen_view
from leaderboard.server.boards import service as boards
from leaderboard.server.boards.cache import CROSS
from leaderboard.server.boards.decay_plot import decay_svg
from leaderboard.server.boards.generators_plot import matrix_svg
from leaderboard.server.models import Submission
from leaderboard.server.services import releases
from leaderboard.server.web.requests import lazy_session

bp = Blueprint("decay", __name__)


def _title(view: dict, task: dict) -> str:
    col = view.get("column") or {}
    return (f"{view['title']} · {task.get('title') or task['key']} ({view['split']}): "
            f"{col.get('title', view['metric'])} across releases")


def _fragment(key: str, task: str, split: str) -> tuple[dict, Markup]:
    view = decay.decay_view(lazy_session, benchmark_key=key, task=task, split=split)
    info = boards.benchmark_info(lazy_session, view["releases"][-1]["key"]
                                 if view["releases"] else key)
    t = boards.task_of(info, task)

    def compute():
        svg = decay_svg(view, title=_title(view, t))
        return render_template("public/_decay.html", view=view, task=t, svg=Markup(svg),
                               fmt=(view.get("column") or {}).get("fmt", "num"))

    html = boards.get_cache().get_or_compute(
        CROSS, ("decay_html", view["family"], task, split), compute)
    return view, Markup(html)


@bp.route("/benchmarks/<key>/boards/<task>/<split>/decay")
def decay_page(key: str, task: str, split: str):
    """Each top detector's headline across the releases of ``key``'s family."""
    view, body = _fragment(key, task, split)
    info = boards.benchmark_info(lazy_session, view["releases"][-1]["key"]
                                 if view["releases"] else key)
    return render_template("public/decay.html", info=info, view=view, body=body,
                           task=boards.task_of(info, task))


def benchmark_decay(key: str, info: dict) -> list[dict]:
    """The decay plots a benchmark page shows, one per task on its held-out split, when its
    family has more than one release: [{"task", "split", "html", "url"}]; [] otherwise."""
    bench = releases.resolve(lazy_session, key)
    if bench is None or len(releases.releases_of(lazy_session, bench.family)) < 2:
        return []
    split = boards.board_split(info)
    if split is None:
        return []
    out = []
    for t in info["tasks"]:
        view, html = _fragment(key, t["key"], split)
        if view["lines"]:
            out.append({"task": t, "split": split, "html": html,
                        "url": url_for("decay.decay_page", key=key, task=t["key"],
                                       split=split)})
    return out


def submission_across(sub: Submission) -> dict | None:
    """A submission page's issue-37 section: ``history`` (per task, its original and re-runs
    on each release: `decay.submission_releases`) and ``matrix`` (per task of a benchmark with
    generators: its row of the board's detectors x generators matrix, as an SVG and cells);
    None when there is neither (not scored, hidden or private rows are on no board)."""
    if sub.status != "scored":
        return None
    session = lazy_session
    history = decay.submission_releases(session, sub)
    info = boards.benchmark_info(session, sub.benchmark.key)
    matrix = []
    if info.get("generators"):
        for t in info["tasks"]:
            view = gen_view.generator_view(session, benchmark_key=info["key"], task=t["key"],
                                           split=sub.split, mode="all")
            row = next((r for r in view["rows"] if r["submission_id"] == sub.id), None)
            if row is None or not row["cells"]:
                continue
            m = info["metrics"].get(view["metric"], {})
            fmt = m.get("fmt", "num")
            one = {**view, "rows": [row]}
            svg = matrix_svg(one, title=f"{t.get('title') or t['key']}: "
                             f"{m.get('title', view['metric'])} by generator", fmt=fmt,
                             lower=None, upper=None)
            matrix.append({"task": t, "view": one, "row": row, "fmt": fmt,
                           "svg": Markup(svg),
                           "url": url_for("public.generators_page",
                                          key=boards.url_key(session, info["key"]),
                                          task=t["key"], split=sub.split, mode="all")})
    if not history and not matrix:
        return None
    return {"history": history, "matrix": matrix,
            "api": url_for("api.submission_releases_json", submission_id=sub.id)}
