"""The paired-comparison page: ``/compare/<benchmark>/<split>?a=<id>&b=<id>`` (issue 14).

Thin: parses the two ids, asks `leaderboard.server.services.compare`, renders. Without both ids
it shows the form to pick them (the board links here: "vs above" on each row, and a form under
the board). Rate limited per caller and globally (`leaderboard.server.web.hardening`).

A comparison not yet cached is CPU work (up to ~0.15 s, perf/bench_compare.py). Under gevent
workers it would stop every other request of the worker for that long, ``/healthz`` included,
so `leaderboard.server.web.requests.off_loop` runs it in gevent's native thread pool: the
event loop keeps serving while numpy works (the interpreter switches threads every few
milliseconds, and numpy's sorts and matrix products release the GIL).
"""
from __future__ import annotations

from flask import Blueprint, render_template, request
from flask_login import current_user

from leaderboard.server.boards import service as boards
from leaderboard.server.db import get_session
from leaderboard.server.errors import ServiceError
from leaderboard.server.services import compare as svc
from leaderboard.server.web.requests import off_loop

bp = Blueprint("compare", __name__)


@bp.route("/compare/<key>/<split>")
def compare_page(key: str, split: str):
    key = boards.resolve_key(get_session(), key)  # a family: its latest release
    info = boards.benchmark_info(get_session(), key)
    a, b = request.args.get("a"), request.args.get("b")
    result = error = None
    status = 200
    if a and b:
        try:
            result = svc.compare(get_session(), benchmark_key=key, split=split, a=a, b=b,
                                 viewer=current_user, run=off_loop)
        except ServiceError as exc:  # shown above the form, which keeps what was typed
            error, status = exc.message, exc.status
    return render_template("compare/page.html", info=info, split=split, a=a or "", b=b or "",
                           result=result, error=error, rule=svc.RULE,
                           releases=boards.picker(get_session(), key)), status
