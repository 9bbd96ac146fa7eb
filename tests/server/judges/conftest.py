"""Fixtures for the server-side judge tests: an app on SQLite (PostgreSQL too where the cache's
SQL differs), demo packs, a counting judge registered under the name ``counting``, and helpers
that import a pack and score a predictions file through the real (inline) job path."""
from __future__ import annotations

import uuid

import orjson
import pytest

from leaderboard.judges import registry
from leaderboard.judges.rules import RulesJudge
from tests.server.conftest import LABEL_KEY, _empty_pg, make_config, pg_url, sqlite_url  # noqa: F401


class CountingJudge(RulesJudge):
    """The rules judge under another identity, counting the responses it is asked about."""

    name = "counting"
    version = "1"
    calls = 0

    def _count(self, n: int) -> None:
        type(self).calls += n

    def map_artifacts(self, responses, *, candidates=None):
        self._count(len(responses))
        return super().map_artifacts(responses, candidates=candidates)

    def rate_explanations(self, items):
        self._count(len(items))
        return super().rate_explanations(items)

    def attribute_causes(self, rationales):
        self._count(len(rationales))
        return super().attribute_causes(rationales)


@pytest.fixture
def counting(monkeypatch):
    """Register ``counting@1`` for this test; returns the class (its ``calls`` reset)."""
    monkeypatch.setitem(registry.JUDGES, "counting",
                        "tests.server.judges.conftest:CountingJudge")
    from leaderboard.server.services import judging
    monkeypatch.setattr(judging, "_built", {})
    CountingJudge.calls = 0
    return CountingJudge


@pytest.fixture(scope="session")
def packs(tmp_path_factory):
    from leaderboard.demo import generate

    out = tmp_path_factory.mktemp("jpacks")
    return {k: generate(k, out, scale="small", seed=0) for k in ("loki", "syncred", "tridf")}


@pytest.fixture
def app(sqlite_url, tmp_path):  # noqa: F811
    from leaderboard.server.services.scoring_service import clear_caches
    from leaderboard.server.web import create_app

    clear_caches()
    app = create_app(make_config(sqlite_url, tmp_path, DEFAULT_JUDGE="rules",
                                 JUDGE_BATCH_SIZE=7))
    yield app
    app.extensions["lb_db"].dispose()


def import_key(app, pack_dir) -> str:
    from leaderboard.server.services.benchmarks import import_pack

    with app.app_context(), app.extensions["lb_db"].scope() as s:
        return import_pack(s, pack_dir, data_dir=app.config["DATA_DIR"],
                           label_keys=app.config["LABEL_KEYS"]).key


def write_rows(path, rows) -> None:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))


def submit(app, key: str, split: str, path) -> int:
    """A baseline-style submission of ``path``, scored inline (scoring then judge job)."""
    from leaderboard.server.jobs import scoring as scoring_jobs
    from leaderboard.server.services.submissions import create_baseline

    with app.app_context():
        with app.extensions["lb_db"].scope() as s:
            sid = create_baseline(s, benchmark=key, split=split, kind="random", source=path,
                                  data_dir=app.config["DATA_DIR"]).id
        scoring_jobs.enqueue_scoring(sid)
    return sid


def unique(prefix: str = "t") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"
