"""The toolkit teams pip-install: the wheel with no extras scores and submits, and stays light.

Builds the wheel, installs it into a fresh venv (dependencies from the package index), and runs
the installed ``leaderboard`` console script as a team would: ``score`` on a demo pack,
``baseline``, ``submit`` against a live server, and a server command that names the missing extra.
"""
from __future__ import annotations

import subprocess

import pytest

from tests.distribution.base_venv import (
    FORBIDDEN,
    build_wheel,
    clean_env,
    installed,
    make_base_venv,
    size_bytes,
)

pytestmark = pytest.mark.slow
MAX_VENV_BYTES = 150 * 1024 * 1024


@pytest.fixture(scope="module")
def base_bin(tmp_path_factory):
    root = tmp_path_factory.mktemp("base-install")
    return make_base_venv(build_wheel(root / "dist"), root / "venv")


def _run(bin_dir, *args, **kw):
    env = clean_env() | kw.pop("env", {})
    return subprocess.run([str(bin_dir / "leaderboard"), *args], capture_output=True, text=True,
                          env=env, cwd=kw.pop("cwd", "/"), timeout=300, **kw)


def test_base_install_is_light(base_bin):
    names = installed(base_bin)
    assert "leaderboard" in names
    assert not FORBIDDEN & set(names), f"the base install pulled in {sorted(FORBIDDEN & set(names))}"
    size = size_bytes(base_bin.parent)
    assert size < MAX_VENV_BYTES, f"base venv is {size / 2**20:.0f} MiB"


def test_score_and_baseline_from_the_base_install(base_bin, demo_packs, tmp_path):
    pack = demo_packs["syncred"]
    preds = tmp_path / "random.jsonl"
    res = _run(base_bin, "baseline", "--pack", str(pack), "--split", "dev", "--kind", "random",
               "--out", str(preds))
    assert res.returncode == 0, res.stderr
    res = _run(base_bin, "score", "--pack", str(pack), "--split", "dev", "--predictions",
               str(preds))
    assert res.returncode == 0, res.stderr
    assert "tpr_at_fpr" in res.stdout or "accuracy" in res.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "nope", "score": 2}\n')
    res = _run(base_bin, "score", "--pack", str(pack), "--split", "dev", "--predictions", str(bad))
    assert res.returncode == 2 and "line 1" in res.stderr


def test_commands_needing_an_extra_name_it(base_bin, tmp_path):
    res = _run(base_bin, "db-upgrade", env={"DATABASE_URL": f"sqlite:///{tmp_path}/x.db"})
    assert res.returncode == 2
    assert "pip install 'leaderboard[server]'" in res.stderr, res.stderr
    res = _run(base_bin, "demo-packs", "--out", str(tmp_path / "p"), "--only", "vct2")
    assert res.returncode == 2
    assert "pip install 'leaderboard[builders]'" in res.stderr, res.stderr
    res = _run(base_bin, "score", "--help")
    assert res.returncode == 0 and "--predictions" in res.stdout
    res = _run(base_bin, "--help")
    assert "LB_SERVER" in res.stdout and "LB_TOKEN" in res.stdout


@pytest.fixture
def db_url(sqlite_url):  # the API is tested on both databases elsewhere
    return sqlite_url


def test_submit_from_the_base_install(base_bin, live_server, auth, imported, baseline_files):
    token = auth.member()
    res = _run(base_bin, "submit", "--benchmark", "syncred", "--split", "dev", "--quiet",
               str(baseline_files["dev"]), env={"LB_SERVER": live_server, "LB_TOKEN": token})
    assert res.returncode == 0, res.stdout + res.stderr
    assert "scored: " in res.stdout
    # the receipt of that submission verifies from the base install (issue 27)
    import requests

    sid = requests.get(f"{live_server}/api/v1/submissions",
                       headers={"Authorization": f"Bearer {token}"},
                       timeout=10).json()["submissions"][0]["id"]
    receipt = base_bin.parent / "receipt.json"
    receipt.write_bytes(requests.get(f"{live_server}/api/v1/submissions/{sid}/receipt",
                                     timeout=10).content)
    res = _run(base_bin, "verify", str(receipt), "--server", live_server)
    assert res.returncode == 0 and "in the log: entry" in res.stdout, res.stdout + res.stderr
