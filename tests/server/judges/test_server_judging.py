"""Judge metrics on the server: the judge job after scoring, the database cache on rescoring,
the admin's official-judge change (audited, re-judged with progress), and boards that never mix
judges. Inline jobs (no Redis) on SQLite; the real demo packs."""
from __future__ import annotations

import pytest
from sqlalchemy import func, select

from leaderboard.core.baselines import baseline_rows
from leaderboard.core.packs import load_pack
from leaderboard.server.boards import service as boards
from leaderboard.server.jobs import judging as judge_jobs
from leaderboard.server.jobs import scoring as scoring_jobs
from leaderboard.server.models import Benchmark, Score, Submission
from leaderboard.server.models.access import AuditEvent
from leaderboard.server.models.judges import JudgeOutput
from leaderboard.server.services import accounts
from leaderboard.server.services.judging import record_judge_allowed
from leaderboard.server.services.scoring_service import request_rescore
from tests.server.judges.conftest import import_key, submit, write_rows

PASSWORD = "correct horse battery"


def _scores(s, sid, metric):
    return s.execute(select(Score.judge, Score.value).where(
        Score.submission_id == sid, Score.metric == metric, Score.slice_key == "",
        Score.part == "all")).all()


def _loki_submission(app, packs, tmp_path, seed=1):
    key = import_key(app, packs["loki"])
    path = tmp_path / f"loki{seed}.jsonl"
    write_rows(path, baseline_rows(load_pack(packs["loki"]), "dev", "random", seed=seed))
    return key, submit(app, key, "dev", path)


def test_scoring_then_judge_job_fills_the_cache_and_stores_judged_records(app, packs, tmp_path):
    key, sid = _loki_submission(app, packs, tmp_path)
    db = app.extensions["lb_db"]
    with db.scope() as s:
        sub = s.get(Submission, sid)
        assert sub.status == "scored"
        assert sub.notes_json["judging"] == {"state": "done", "judge": "rules@3", "reason": None}
        assert sub.notes_json["pending"] == []
        rows = _scores(s, sid, "explanation_score")
        assert rows and {j for j, _ in rows} == {"rules@3"}
        assert s.scalar(select(func.count(JudgeOutput.id))) > 0
        assert _scores(s, sid, "accuracy")  # judge-free records are there too


def test_rescore_uses_the_cache(app, packs, tmp_path, counting):
    key, sid = _loki_submission(app, packs, tmp_path)
    db = app.extensions["lb_db"]
    with db.scope() as s:
        s.scalar(select(Benchmark).where(Benchmark.key == key)).official_judge = "counting@1"
    with app.app_context():
        first = judge_jobs.judge_submission(sid)
        calls = counting.calls
        assert first["status"] == "judged" and first["judged"] == calls > 0
        again = judge_jobs.judge_submission(sid)
        assert again["judged"] == 0 and again["cached"] >= calls
        # a full admin-style rescore: scoring job, then judge job, all from the cache
        with db.scope() as s:
            request_rescore(s, s.get(Submission, sid), deadline_s=60)
        scoring_jobs.enqueue_scoring(sid)
    assert counting.calls == calls
    with db.scope() as s:
        assert {j for j, _ in _scores(s, sid, "explanation_score")} == {"counting@1"}


def _admin_client(app):
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        accounts.register(s, email="root@example.org", display_name="root", password=PASSWORD,
                          is_admin=True)
    client = app.test_client()
    assert client.post("/login", data={"email": "root@example.org",
                                       "password": PASSWORD}).status_code in (302, 303)
    return client


def test_official_judge_change_rejudges_with_progress_and_audit(app, packs, tmp_path, counting):
    key, sid1 = _loki_submission(app, packs, tmp_path, seed=1)
    _, sid2 = _loki_submission(app, packs, tmp_path, seed=2)
    client = _admin_client(app)
    page = client.get("/admin/benchmarks").get_data(as_text=True)
    assert 'value="counting@1"' in page and 'value="rules@3"' in page
    assert 'value="rules@1"' in page and 'value="rules@2"' in page  # superseded versions stay
    # selectable (registry.LEGACY)
    bad = client.post(f"/admin/benchmarks/{key}/judge", data={"judge": "nope@9"})
    assert bad.status_code == 303
    resp = client.post(f"/admin/benchmarks/{key}/judge", data={"judge": "counting@1"})
    assert resp.status_code == 303 and resp.location.endswith(f"/admin/benchmarks/{key}/judging")
    progress = client.get(f"/admin/benchmarks/{key}/judging?format=json").json
    assert progress == {"benchmark": key, "judge": "counting@1", "counts": {"done": 2},
                        "total": 2, "in_flight": 0, "done": 2}
    assert counting.calls > 0
    db = app.extensions["lb_db"]
    with db.scope() as s:
        for sid in (sid1, sid2):
            assert {j for j, _ in _scores(s, sid, "explanation_score")} == {"counting@1"}
        events = s.scalars(select(AuditEvent).where(
            AuditEvent.action == "admin.benchmark.judge")).all()
        assert len(events) == 1 and events[0].target == f"benchmark:{key}"
    with app.app_context():
        b = boards.board(db.session(), benchmark_key=key, task="explanation", split="dev")
    col = {c["metric"]: c for c in b["columns"]}["explanation_score"]
    assert col["judge"] == "counting@1"
    assert len(b["rows"]) == 2


def test_progress_counts_queued_judging(app, packs, tmp_path, counting, monkeypatch):
    key, _ = _loki_submission(app, packs, tmp_path)
    monkeypatch.setattr(judge_jobs, "enqueue_judging", lambda sid, mark=True: "held")
    client = _admin_client(app)
    client.post(f"/admin/benchmarks/{key}/judge", data={"judge": "counting@1"})
    p = client.get(f"/admin/benchmarks/{key}/judging?format=json").json
    assert p["in_flight"] == 1 and p["counts"] == {"queued": 1}
    assert "1 still queued" in client.get(f"/admin/benchmarks/{key}/judging").get_data(
        as_text=True)


@pytest.mark.parametrize("record, board_judge, ok", [
    (None, "rules@1", True), ("self-mapped", "rules@1", True), ("rules@1", "rules@1", True),
    ("counting@1", "rules@1", False), ("rules@1 + self-mapped", "rules@1", True),
    ("counting@1 + self-mapped", "rules@1", False), ("rules@1", None, False),
    ("self-mapped", None, True)])
def test_record_judge_allowed(record, board_judge, ok):
    assert record_judge_allowed(record, board_judge) is ok


def test_boards_never_mix_judges_and_mark_self_mapped(app, packs, tmp_path):
    key = import_key(app, packs["tridf"])
    pack = load_pack(packs["tridf"])
    kinds = {t.key: t.kind for t in pack.tasks}
    items = pack.items("dev")
    task_of = dict(zip(items.ids.tolist(), items.decoded("task").tolist()))
    self_rows = list(baseline_rows(pack, "dev", "random", seed=1))
    text_rows = []
    for row in baseline_rows(pack, "dev", "random", seed=2):
        if kinds[task_of[row["id"]]] == "artifacts":
            row.pop("artifacts")
            row["response"] = "The edges look blurred and there is no visible noise."
        text_rows.append(row)
    write_rows(tmp_path / "self.jsonl", self_rows)
    write_rows(tmp_path / "text.jsonl", text_rows)
    sid_self = submit(app, key, "dev", tmp_path / "self.jsonl")
    sid_text = submit(app, key, "dev", tmp_path / "text.jsonl")
    db = app.extensions["lb_db"]
    with db.scope() as s:
        assert {j for j, _ in _scores(s, sid_self, "f05")} == {"self-mapped"}
        assert {j for j, _ in _scores(s, sid_text, "f05")} == {"rules@3"}
        # a record left by another judge (e.g. before a change) must not join the column
        stray = s.scalar(select(Score).where(Score.submission_id == sid_text,
                                             Score.metric == "cover", Score.slice_key == "",
                                             Score.part == "all", Score.task == "oeq_a"))
        stray.judge = "counting@1"
    with app.app_context():
        boards.invalidate_boards(key)
        b = boards.board(db.session(), benchmark_key=key, task="oeq_a", split="dev")
    cols = {c["metric"]: c for c in b["columns"]}
    assert cols["f05"]["judge"] == "rules@3"
    rows = {r["submission_id"]: r for r in b["rows"]}
    assert rows[sid_self]["judges"]["f05"] == "self-mapped"
    assert rows[sid_text]["judges"]["f05"] == "rules@3"
    assert rows[sid_text]["values"]["cover"]["value"] is None  # the stray judge is left out
    assert rows[sid_self]["values"]["cover"]["value"] is not None
    html = app.test_client().get(f"/benchmarks/{key}/boards/oeq_a/dev").get_data(as_text=True)
    assert '<small class="judge">judge: rules@3 <span title="mapped by an offline judge' in html
    assert "(offline)</span></small>" in html
    assert '<small class="self-mapped"' in html and "counting@1" not in html
