"""``gunicorn tests.production.web_main:app``: the real app (``app.py``), with one fault.

With ``LB_TEST_KILL_AFTER_COMMIT_DIR`` set, an upload whose method name starts with ``kill-``
SIGKILLs its gunicorn worker right after the submission row is committed, before it is enqueued
and before any answer is written: the client sees the connection close, the row stays
"received". Once per submission (a marker file in that folder), so the client's retry and the
reconciler find a healthy server. gunicorn's master starts a new worker, as it does after a crash.
"""
from __future__ import annotations

import os
import signal
from pathlib import Path

from leaderboard.server.web import create_app, intake

app = create_app()

_marks = os.environ.get("LB_TEST_KILL_AFTER_COMMIT_DIR")
if _marks:
    _enqueue = intake._enqueue

    def _dying_enqueue(sub):
        if sub.method_name.startswith("kill-"):
            try:
                (Path(_marks) / str(sub.id)).open("x").close()
            except FileExistsError:
                return _enqueue(sub)  # killed once already: behave
            os.kill(os.getpid(), signal.SIGKILL)
        return _enqueue(sub)

    intake._enqueue = _dying_enqueue
