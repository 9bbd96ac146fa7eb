"""The paired comparison under load (issue 24): one cache entry per unordered pair, per-caller
and global rate limits answered 429 + Retry-After, and a bound on each computation's cost."""
from __future__ import annotations

import pytest

from leaderboard.server.services import compare as svc
from tests.server.conftest import make_config
from tests.server.test_rank_intervals import board_subs  # noqa: F401 - a fixture

URL = "/api/v1/compare/syncred/test"


@pytest.fixture
def app_config(db_url, tmp_path):
    return make_config(db_url, tmp_path, RATELIMIT_ENABLED=True, COMPARE_RATE_LIMIT="4 per minute",
                       COMPARE_GLOBAL_RATE_LIMIT="6 per minute", REGISTER_RATE_LIMIT="100 per minute",
                       LOGIN_RATE_LIMIT="100 per minute", SUBMIT_RATE_LIMIT="100 per minute")


def test_both_orders_share_one_entry_and_mirror_each_other(client, board_subs, monkeypatch):  # noqa: F811
    a, _, c = board_subs["sids"]
    calls = []
    real = svc._compute
    monkeypatch.setattr(svc, "_compute", lambda *args: calls.append(args[2:]) or real(*args))
    ac = client.get(f"{URL}?a={a}&b={c}").json
    ca = client.get(f"{URL}?a={c}&b={a}").json
    assert calls == [(min(a, c), max(a, c))]
    assert (ac["a"]["submission_id"], ca["a"]["submission_id"]) == (a, c)
    for t1, t2 in zip(ac["tasks"], ca["tasks"], strict=True):
        for s1, s2 in zip(t1["slices"], t2["slices"], strict=True):
            assert "refused" not in s1
            assert (s1["value_a"], s1["value_b"]) == (s2["value_b"], s2["value_a"])
            assert s1["difference"] == pytest.approx(-s2["difference"])
            assert (s1["ci_low"], s1["ci_high"]) == pytest.approx((-s2["ci_high"], -s2["ci_low"]))
            assert s1["p_value"] == s2["p_value"] and s1["resamples"] == 1000


def test_per_caller_limit_counts_page_and_api_together(client, board_subs):  # noqa: F811
    a, b, c = board_subs["sids"]
    assert client.get("/compare/syncred/test").status_code == 200  # the bare form: not counted
    codes = [client.get(f"{URL}?a={a}&b={c}").status_code,
             client.get(f"/compare/syncred/test?a={a}&b={b}").status_code,
             client.get(f"{URL}?a={b}&b={c}").status_code,
             client.get(f"{URL}?a={a}&b=999").status_code]
    assert codes == [200, 200, 200, 404]
    resp = client.get(f"{URL}?a={a}&b={c}")
    assert resp.status_code == 429 and resp.json["error"] == "too_many_requests"
    assert 0 < int(resp.headers["Retry-After"]) <= 60
    page = client.get(f"/compare/syncred/test?a={a}&b={c}")
    assert page.status_code == 429 and "Retry-After" in page.headers
    assert client.get("/compare/syncred/test").status_code == 200
    assert client.get("/healthz").status_code == 200


def test_the_global_limit_holds_whatever_the_caller_claims(client, board_subs):  # noqa: F811
    a, _, c = board_subs["sids"]
    codes = [client.get(f"{URL}?a={a}&b={c}", headers={"Authorization": f"Bearer fake-{i}"})
             .status_code for i in range(8)]
    assert codes[:6] == [401] * 6 and codes[6:] == [429, 429]  # six per minute, all callers


@pytest.mark.parametrize("sizes, expect", [
    ([1000], (1000, None)),                 # 1,000 x 1,000 fits
    ([5000, 2000], (285, None)),            # fewer resamples, every item
    ([80_000, 80_000], (200, 0.0625)),      # SynCred-sized ranking slices: items capped too
])
def test_the_plan_keeps_items_times_resamples_in_the_budget(sizes, expect):
    resamples, share = svc.plan(sizes)
    assert (resamples, share) == expect
    weighed = sum(n if share is None else n * share for n in sizes)
    assert weighed * resamples <= svc.WORK_BUDGET
