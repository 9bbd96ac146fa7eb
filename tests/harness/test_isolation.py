"""The harness runs on GPU hosts with only Docker, Redis and the DB URL: no Flask, no app code."""

import subprocess
import sys


def test_harness_imports_neither_flask_nor_leaderboard():
    code = ("import sys, harness; bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('flask', 'leaderboard', 'werkzeug', 'sqlalchemy')); print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
