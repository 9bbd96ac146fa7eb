"""`leaderboard.server.web.ops`: /healthz, /readyz (503 naming the failed dependency), /metrics."""
from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.production.conftest import make_app
from tests.production.services import free_port


def samples(text: str) -> dict[tuple, float]:
    """{(sample name, sorted labels...): value} of a Prometheus text page."""
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, *sorted(s.labels.items()))] = s.value
    return out


def test_healthz_and_readyz_embedded(tmp_path):
    app = make_app(tmp_path)
    client = app.test_client()
    assert client.get("/healthz").get_json() == {"status": "ok"}
    body = client.get("/readyz").get_json()
    assert body == {"status": "ok", "failed": [],
                    "checks": {"database": "ok", "redis": "not configured"}}
    app.extensions["lb_db"].dispose()


@pytest.mark.parametrize("broken", ["redis", "database", "both"])
def test_readyz_names_what_is_unreachable(tmp_path, broken):
    dead = free_port()
    extra = {}
    if broken in ("redis", "both"):
        extra["REDIS_URL"] = f"redis://127.0.0.1:{dead}/0"
    if broken in ("database", "both"):
        extra["DATABASE_URL"] = f"postgresql+psycopg://postgres@127.0.0.1:{dead}/nope"
    app = make_app(tmp_path, **extra)
    client = app.test_client()
    resp = client.get("/readyz")
    assert resp.status_code == 503
    expected = ["database", "redis"] if broken == "both" else [broken]
    assert resp.get_json()["failed"] == expected
    assert "postgres@" not in resp.get_data(as_text=True)  # no URL (passwords) in the answer
    assert client.get("/healthz").status_code == 200  # the process itself is fine
    metrics = samples(client.get("/metrics").get_data(as_text=True))  # still answers
    for dep in expected:
        assert metrics[("lb_dependency_up", ("dependency", dep))] == 0.0
    app.extensions["lb_db"].dispose()


@pytest.mark.slow
def test_metrics_with_workers(stack, predictions):
    client = stack.app.test_client()
    ids = [stack.submit(predictions["test"], method=f"m{i}") for i in range(3)]
    page = samples(client.get("/metrics").get_data(as_text=True))
    assert page[("lb_queue_jobs", ("queue", "scoring"), ("state", "queued"))] == 3
    assert page[("lb_queue_jobs", ("queue", "gpu"), ("state", "queued"))] == 0
    assert page[("lb_submissions", ("kind", "predictions"), ("status", "queued"))] == 3

    stack.drain()
    board = f"/api/v1/boards/{stack.benchmark}/detection/test"
    for _ in range(3):
        assert client.get(board).status_code == 200
    resp = client.get("/metrics")
    assert resp.mimetype == "text/plain"
    page = samples(resp.get_data(as_text=True))
    assert page[("lb_queue_jobs", ("queue", "scoring"), ("state", "queued"))] == 0
    assert page[("lb_submissions", ("kind", "predictions"), ("status", "scored"))] == len(ids)
    assert page[("lb_scoring_duration_seconds_count", ("outcome", "scored"))] == len(ids)
    assert page[("lb_scoring_duration_seconds_bucket", ("le", "+Inf"), ("outcome", "scored"))] \
        == len(ids)
    assert page[("lb_board_cache_misses_total",)] >= 1
    assert page[("lb_board_cache_hits_total",)] >= 2  # the second and third read
    assert page[("lb_dependency_up", ("dependency", "redis"))] == 1.0
