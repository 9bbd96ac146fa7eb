"""The reconciler and lost judge jobs: a judging state stuck in "queued"/"running" past
JUDGE_DEADLINE_S is re-enqueued (inline here, so the judge really runs), a job lost every time is
failed after MAX_ATTEMPTS with the reason, a job still waiting in Redis is left alone, and a
submission that is no longer scored has its judging failed."""
from __future__ import annotations

import io
from datetime import timedelta

from sqlalchemy import update

from leaderboard.server.jobs import judging as judge_jobs
from leaderboard.server.models import Submission, utcnow

DEADLINE = 1800  # the config's default


def _scored(client, auth, path) -> int:
    token = auth.member()
    resp = client.post("/api/v1/submissions", data={
        "benchmark": "syncred", "split": "dev", "method_name": "m",
        "file": (io.BytesIO(path.read_bytes()), "p.jsonl")},
        headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 202, resp.json
    return resp.json["id"]


def _judging(session, sid, state="queued", **extra):
    """Pretend the judge job was enqueued (state committed) and then lost."""
    session.expire_all()
    sub = session.get(Submission, sid)
    assert sub.status == "scored"
    notes = {**(sub.notes_json or {}),
             "judging": {"state": state, "judge": "rules@3", "reason": None}}
    session.execute(update(Submission).where(Submission.id == sid).values(notes_json=notes,
                                                                          **extra))
    session.commit()


def _notes(session, sid) -> dict:
    session.expire_all()
    return session.get(Submission, sid).notes_json


def _pass(app, at):
    from leaderboard.server.jobs.reconcile import reconcile
    with app.app_context():
        return reconcile(now=at)


def test_lost_judge_job_is_requeued_and_judged(app, client, auth, imported, baseline_files,
                                               session):
    assert app.config["JUDGE_DEADLINE_S"] == DEADLINE
    sid = _scored(client, auth, baseline_files["dev"])
    _judging(session, sid, "running")
    t0 = utcnow()
    report = _pass(app, t0)  # first sight: the clock starts, nothing else
    assert report.judging_requeued == [] and "since" in _notes(session, sid)["judging"]
    assert _pass(app, t0 + timedelta(seconds=DEADLINE - 1)).judging_requeued == []
    report = _pass(app, t0 + timedelta(seconds=DEADLINE + 1))
    assert report.judging_requeued == [sid] and "judging_requeued=1" in str(report)
    notes = _notes(session, sid)  # inline: the re-enqueued judge job ran to the end
    assert notes["judging"] == {"state": "done", "judge": "rules@3", "reason": None}
    assert "judging_attempts" not in notes  # storing the judged records rewrote the notes
    assert str(_pass(app, t0 + timedelta(seconds=3 * DEADLINE))) == \
        "requeued=0 failed=0 still_waiting=0"


def test_job_lost_every_time_fails_after_max_attempts(app, client, auth, imported,
                                                      baseline_files, session, monkeypatch):
    sid = _scored(client, auth, baseline_files["dev"])
    runs = []
    monkeypatch.setattr(judge_jobs, "judge_submission", runs.append)  # every run is lost
    _judging(session, sid)
    t, step = utcnow(), timedelta(seconds=DEADLINE + 1)
    _pass(app, t)
    for attempt in range(2, app.config["MAX_ATTEMPTS"] + 1):
        t += step
        assert _pass(app, t).judging_requeued == [sid]
        assert _notes(session, sid)["judging_attempts"]["attempts"] == attempt
        assert _notes(session, sid)["judging"]["state"] == "queued"
    t += step
    report = _pass(app, t)
    assert report.judging_failed == [sid] and report.judging_requeued == []
    judging = _notes(session, sid)["judging"]
    assert judging["state"] == "failed"
    assert judging["reason"] == "judging did not complete after 3 attempts (last state: queued)"
    assert runs == [sid, sid]
    # a rescore starts a new round: its lost judge job gets its attempts again
    _judging(session, sid, finished_at=utcnow() + timedelta(seconds=5))
    _pass(app, t)
    assert _pass(app, t + step).judging_requeued == [sid]
    assert _notes(session, sid)["judging_attempts"]["attempts"] == 2


def test_not_scored_and_rescoring_submissions(app, client, auth, imported, baseline_files,
                                              session):
    a = _scored(client, auth, baseline_files["dev"])
    b = _scored(client, auth, baseline_files["dev"])
    _judging(session, a)
    _judging(session, b)
    session.execute(update(Submission).where(Submission.id == a).values(status="failed"))
    session.execute(update(Submission).where(Submission.id == b).values(status="queued"))
    session.commit()
    report = _pass(app, utcnow())
    assert report.judging_failed == [a] and report.judging_requeued == []
    assert _notes(session, a)["judging"]["reason"] == "the submission is failed, not scored"
    assert _notes(session, b)["judging"]["state"] == "queued"  # its scoring job owns it


def test_job_waiting_in_redis_is_left_alone_until_flushed(app, client, auth, imported,
                                                          baseline_files, session, redis_url):
    import redis

    from leaderboard.server.jobs import queue
    sid = _scored(client, auth, baseline_files["dev"])
    _judging(session, sid)
    app.config["REDIS_URL"] = redis_url  # from here on, jobs go to Redis (no worker runs)
    with app.app_context():
        queue.get_queue(judge_jobs.JUDGE_QUEUE).enqueue(
            judge_jobs.JOB_FUNC, sid, job_id=f"judge-{sid}-0000abcd")
    t, step = utcnow(), timedelta(seconds=DEADLINE + 1)
    _pass(app, t)
    assert _pass(app, t + step).judging_requeued == []  # a long backlog, not a lost job
    redis.Redis.from_url(redis_url).flushdb()  # the job is lost
    assert _pass(app, t + 2 * step).judging_requeued == [sid]
    with app.app_context():
        waiting = queue.get_queue(judge_jobs.JUDGE_QUEUE).get_job_ids()
    assert len(waiting) == 1 and waiting[0].startswith(f"judge-{sid}-")
    assert _notes(session, sid)["judging"]["state"] == "queued"
