"""What the home page says about the site's life: counts and the latest scored submissions."""
from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from leaderboard.server.models import Benchmark, Submission, Team, utcnow


def counts(session: Session, *, now: datetime | None = None) -> dict:
    """Teams, scored team submissions (baselines excluded), and those of the last 7 days."""
    now = now or utcnow()
    scored = (Submission.status == "scored", Submission.is_baseline.is_(False))
    return {"teams": session.scalar(select(func.count(Team.id))) or 0,
            "submissions": session.scalar(select(func.count(Submission.id)).where(*scored)) or 0,
            "last_7_days": session.scalar(select(func.count(Submission.id)).where(
                *scored, Submission.created_at >= now - timedelta(days=7))) or 0,
            "benchmarks": session.scalar(select(func.count(Benchmark.id))) or 0}


def recent(session: Session, *, limit: int = 8) -> list[dict]:
    """The latest public, visible, scored team submissions, newest first."""
    q = (select(Submission.id, Submission.method_name, Submission.split,
                Submission.finished_at, Submission.created_at, Team.id, Team.name,
                Benchmark.key, Benchmark.title)
         .join(Team, Submission.team_id == Team.id)
         .join(Benchmark, Submission.benchmark_id == Benchmark.id)
         .where(Submission.status == "scored", Submission.is_public.is_(True),
                Submission.hidden.is_(False), Submission.is_baseline.is_(False))
         .order_by(Submission.id.desc()).limit(limit))
    return [{"id": sid, "method_name": m, "split": split,
             "at": (fin or created).isoformat(), "team_id": tid, "team": tname,
             "benchmark": key, "benchmark_title": title}
            for sid, m, split, fin, created, tid, tname, key, title in session.execute(q)]
