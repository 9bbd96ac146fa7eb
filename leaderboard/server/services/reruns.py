"""Re-runs of container submissions on a benchmark's new release (issue 37, item 2).

When release N >= 2 of a family is imported, `plan` makes the release's `RerunCampaign` and
re-runs, without asking the teams, the family's detectors that ran on earlier releases:

* **The unit.** Per (team, method name) (per (uploader, method) for a team-less upload): the
  latest *original* container submission (not itself a re-run) on a held-out split of an
  earlier release that was **scored**. A method re-submitted on release 2 is re-run on release
  3 from its release-2 image; a failed run is not re-run (its image did not work here).
* **What a re-run is.** An ordinary container `Submission` on the new release's split of the
  same name: same team, uploader, method name, texts and visibility (a private submission's
  re-run stays private), ``rerun_of_id`` = the original, the original's image tarball (kept
  after its clean run: ``image_path``; never pulled from anywhere), not counted toward any
  quota, never bound to a challenge phase. It gets its own record, score, receipt and failure
  reason, and the reconciler's rules for clean runs (`leaderboard.server.jobs.reconcile`).
* **Skipped, with the reason kept on the campaign** (``skips_json``, shown to admins): the team
  opted out (``allow_rerun`` off); the original was hidden or disqualified; its image was not
  kept (run before re-runs existed, or opted out then); the method already has its own
  submission on the new release; the data-use gate refuses the uploader a container run on the
  new release (agreement lapsed, revoked or never signed: `access.gate.can_access`, asked again
  at every pass and again when the job starts); over budget.
* **Budget, pause, pace.** At most ``RERUN_WINDOW`` re-runs of a campaign wait or run at once;
  the rest wait in the plan, and each pass (`plan`: at import, after each re-run ends, at every
  reconciler pass, after an admin's change) adds rows up to the window. A paused campaign adds
  none; ``max_runs`` caps the rows ever made, ``max_gpu_seconds`` stops adding once the runs'
  summed wall time (`ContainerRun.duration_s`) reaches it (the runs already in the window
  finish, so it may be passed by at most the window). Rows wait on the ``rerun`` queue, which
  every GPU worker takes last (`leaderboard.server.jobs.reruns`): new submissions go first.
* **Exactly once.** The unique index on (``rerun_of_id``, ``benchmark_id``, ``split``) makes a
  second row for the same original impossible; two planners (two imports, two workers, a
  reconciler) each insert under a savepoint and the loser's IntegrityError is swallowed. The
  campaign itself is unique per release the same way.
* **Prediction-file teams** of earlier releases get one notice (and, through the notice, mail:
  `leaderboard.server.services.mail_prefs`) when the campaign is made, inviting a file for the
  new release and linking its data page (``benchmark:<key>``), where the download is.

Service functions take the caller's session and never commit; the caller commits, then enqueues
the returned ids (`leaderboard.server.jobs.reruns`).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, aliased

from leaderboard.core.packs import HELD_OUT_SPLITS
from leaderboard.server.access.gate import can_access_many
from leaderboard.server.errors import ServiceError
from leaderboard.server.models import IN_FLIGHT, Benchmark, Submission, Team, User, utcnow
from leaderboard.server.models.containers import ContainerRun
from leaderboard.server.models.releases import RerunCampaign
from leaderboard.server.services import notices

#: skip reasons, in the words of the admin page (the first that applies is kept)
OPTED_OUT = "team opted out"
MODERATED = "hidden or disqualified by an admin"
NO_IMAGE = "image not kept (run before re-runs existed, or opted out then)"
RESUBMITTED = "the method has its own submission on this release"
OVER_BUDGET = "over budget"


@dataclass(frozen=True)
class Candidate:
    """One detector the campaign is about: the original to re-run, or why not."""

    original: Submission
    team: str
    reason: str | None  # None: eligible


def get_campaign(session: Session, release: Benchmark) -> RerunCampaign | None:
    return session.scalar(select(RerunCampaign).where(RerunCampaign.benchmark_id == release.id))


def ensure_campaign(session: Session, release: Benchmark, *,
                    created_by: int | None = None) -> tuple[RerunCampaign, bool]:
    """The release's campaign, made if missing; (campaign, made now). Two callers at once make
    one row (a unique index; the loser re-reads it)."""
    camp = get_campaign(session, release)
    if camp is not None:
        return camp, False
    try:
        with session.begin_nested():
            camp = RerunCampaign(benchmark_id=release.id, created_by=created_by,
                                 created_at=utcnow(), note="", skips_json=[])
            session.add(camp)
    except IntegrityError:
        camp = get_campaign(session, release)
        if camp is None:  # pragma: no cover - the unique row vanished between insert and read
            raise
        return camp, False
    return camp, True


def _earlier(session: Session, release: Benchmark) -> list[int]:
    return list(session.scalars(select(Benchmark.id).where(
        Benchmark.family == release.family, Benchmark.release < release.release)))


def candidates(session: Session, release: Benchmark) -> list[Candidate]:
    """The campaign's detectors (module docstring), each with its skip reason or None, ordered
    by the original's id (the oldest detector first)."""
    earlier = _earlier(session, release)
    if not earlier:
        return []
    originals = list(session.scalars(
        select(Submission).where(Submission.benchmark_id.in_(earlier),
                                 Submission.kind == "container", Submission.status == "scored",
                                 Submission.is_baseline.is_(False),
                                 Submission.rerun_of_id.is_(None),
                                 Submission.split.in_(HELD_OUT_SPLITS))
        .order_by(Submission.created_at, Submission.id)))
    latest: dict[tuple, Submission] = {}
    for sub in originals:  # oldest first: the last one kept per method is the latest
        who = ("team", sub.team_id) if sub.team_id is not None else ("user", sub.user_id)
        latest[(who, sub.method_name)] = sub
    own = {(s.team_id, s.user_id if s.team_id is None else None, s.method_name)
           for s in session.scalars(select(Submission).where(
               Submission.benchmark_id == release.id, Submission.rerun_of_id.is_(None),
               Submission.is_baseline.is_(False), Submission.status != "failed"))}
    teams = dict(session.execute(select(Team.id, Team.name)).all())
    # the uploaders and their agreement states in two queries, not two per detector (issue 37
    # perf: 1,000 detectors took 2-3 s on PostgreSQL); still asked afresh at every pass
    uploader_ids = sorted({s.user_id for s in latest.values() if s.user_id is not None})
    users = {u.id: u for u in session.scalars(select(User).where(User.id.in_(uploader_ids)))} \
        if uploader_ids else {}
    gate = can_access_many(session, list(users.values()), release, "container_run")
    out = []
    for sub in sorted(latest.values(), key=lambda s: s.id):
        out.append(Candidate(sub, teams.get(sub.team_id, ""),
                             _reason(sub, own, users, gate)))
    return out


def _reason(sub: Submission, own: set, users: dict, gate: dict) -> str | None:
    if not sub.allow_rerun:
        return OPTED_OUT
    if sub.hidden or sub.disqualified_reason:
        return MODERATED
    if not sub.image_path:
        return NO_IMAGE
    if (sub.team_id, sub.user_id if sub.team_id is None else None, sub.method_name) in own:
        return RESUBMITTED
    user = users.get(sub.user_id) if sub.user_id is not None else None
    if user is None:
        return "the uploader's account no longer exists"
    decision = gate[user.id]
    if not decision:
        return f"agreement: {decision.reason}"
    return None


def _runs(session: Session, release: Benchmark):
    return select(Submission).where(Submission.benchmark_id == release.id,
                                    Submission.rerun_of_id.is_not(None))


def gpu_seconds(session: Session, release: Benchmark) -> float:
    """Wall time spent by the campaign's runs so far (every attempt's recorded duration)."""
    ids = _runs(session, release).with_only_columns(Submission.id).scalar_subquery()
    return float(session.scalar(select(func.coalesce(func.sum(ContainerRun.duration_s), 0.0))
                                .where(ContainerRun.submission_id.in_(ids))) or 0.0)


def rerun_row(original: Submission, release: Benchmark, *, now: datetime) -> Submission:
    """The re-run of ``original`` on ``release`` (not added to the session)."""
    return Submission(
        benchmark_id=release.id, split=original.split, team_id=original.team_id,
        user_id=original.user_id, kind="container", method_name=original.method_name,
        description=original.description, paper_url=original.paper_url,
        code_url=original.code_url, is_public=original.is_public, status="received",
        file_path=original.image_path, file_sha256=original.file_sha256,
        file_size=original.file_size, created_at=now, counts_toward_quota=False,
        allow_rerun=original.allow_rerun, rerun_of_id=original.id)


def plan(session: Session, release: Benchmark, *, data_dir: str, window: int,
         created_by: int | None = None, now: datetime | None = None) -> list[int]:
    """One planning pass over ``release``'s campaign (module docstring); returns the ids of the
    re-runs it added ("received": the caller commits, then enqueues them). Safe to call any
    number of times, from any number of processes. Release 1 has no campaign: []."""
    if release.release < 2:
        return []
    now = now or utcnow()
    camp, made = ensure_campaign(session, release, created_by=created_by)
    if made:
        invite_file_teams(session, release)
    have = {sid: status for sid, status in session.execute(
        _runs(session, release).with_only_columns(Submission.rerun_of_id, Submission.status))}
    made_runs = len(have)
    in_flight = sum(1 for s in have.values() if s in IN_FLIGHT)
    spent = gpu_seconds(session, release)
    skips, added, waiting = [], [], 0
    budget_note = ""
    for cand in candidates(session, release):
        sub = cand.original
        if sub.id in have:
            continue
        reason = cand.reason
        if reason is None and not Path(data_dir, sub.image_path).is_file():
            reason = NO_IMAGE
        if reason is None and camp.max_runs is not None and made_runs >= camp.max_runs:
            reason, budget_note = OVER_BUDGET, f"runs budget reached ({camp.max_runs} runs)"
        if reason is None and camp.max_gpu_seconds is not None and \
                spent >= camp.max_gpu_seconds:
            reason = OVER_BUDGET
            budget_note = f"GPU budget reached ({spent:.0f} of {camp.max_gpu_seconds} s)"
        if reason is not None:
            skips.append({"submission_id": sub.id, "team": cand.team,
                          "method_name": sub.method_name,
                          "reason": f"{OVER_BUDGET}: {budget_note}" if reason == OVER_BUDGET
                          else reason})
            continue
        if camp.paused or in_flight >= window:
            waiting += 1
            continue
        try:
            with session.begin_nested():
                row = rerun_row(sub, release, now=now)
                session.add(row)
        except IntegrityError:  # another planner made it first: theirs is the one
            continue
        added.append(row.id)
        made_runs += 1
        in_flight += 1
    camp.skips_json = skips
    _finish_or_reopen(camp, waiting=waiting, in_flight=in_flight, budget_note=budget_note,
                      now=now)
    return added


def _finish_or_reopen(camp: RerunCampaign, *, waiting: int, in_flight: int, budget_note: str,
                      now: datetime) -> None:
    if camp.paused:
        camp.note = f"paused: {waiting} waiting, {in_flight} queued or running"
        return
    if waiting or in_flight:
        camp.finished_at = None
        camp.note = f"running: {in_flight} queued or running, {waiting} waiting"
        return
    if camp.finished_at is None:
        camp.finished_at = now
    camp.note = f"stopped: {budget_note}" if budget_note else "finished: every eligible " \
        "detector has its run"


def invite_file_teams(session: Session, release: Benchmark) -> int:
    """One notice per team (or team-less uploader) with a scored predictions file on an earlier
    release of the family, inviting a file for ``release``; mail follows the notice
    (`mail_prefs.collect`). Returns how many were posted."""
    earlier = _earlier(session, release)
    if not earlier:
        return 0
    rows = session.execute(
        select(Submission.team_id, Submission.user_id).where(
            Submission.benchmark_id.in_(earlier), Submission.kind == "predictions",
            Submission.status == "scored", Submission.is_baseline.is_(False),
            Submission.rerun_of_id.is_(None)).distinct()).all()
    readers = {("team", t) if t is not None else ("user", u) for t, u in rows}
    message = (f"{release.title or release.family}: release {release.release} is out "
               f"({release.key}). Detectors submitted as predictions files are not re-run by "
               "the platform: download the new release's data from its data page and submit a "
               "file for it to appear on its board.")
    for what, ident in sorted(readers, key=lambda r: (r[0], r[1] or 0)):
        notices.post(session, "release.published", message,
                     team_id=ident if what == "team" else None,
                     user_id=ident if what == "user" else None,
                     subject=f"benchmark:{release.key}")
    return len(readers)


def open_campaigns(session: Session) -> list[Benchmark]:
    """Releases whose campaign is not finished (what the reconciler's pass advances)."""
    return list(session.scalars(select(Benchmark).join(
        RerunCampaign, RerunCampaign.benchmark_id == Benchmark.id)
        .where(RerunCampaign.finished_at.is_(None)).order_by(Benchmark.id)))


def set_budget(session: Session, release: Benchmark, *, max_runs: int | None,
               max_gpu_seconds: int | None) -> RerunCampaign:
    """Set the campaign's budget (None: no limit); a larger one lets `plan` go on."""
    for name, value in (("max_runs", max_runs), ("max_gpu_seconds", max_gpu_seconds)):
        if value is not None and value < 0:
            raise ServiceError(f"{name} must be >= 0 or empty (no limit), got {value}")
    camp, _ = ensure_campaign(session, release)
    camp.max_runs, camp.max_gpu_seconds = max_runs, max_gpu_seconds
    camp.finished_at = None  # the next pass decides again
    return camp


def set_paused(session: Session, release: Benchmark, paused: bool) -> RerunCampaign:
    camp, _ = ensure_campaign(session, release)
    camp.paused = bool(paused)
    camp.finished_at = None
    return camp


def progress(session: Session, release: Benchmark) -> dict:
    """The admin page's numbers: counts of the campaign's runs by state, waiting and skipped
    (with each skip's reason), the budget and what was spent. A release without a campaign
    answers ``{"campaign": None}``."""
    camp = get_campaign(session, release)
    if camp is None:
        return {"benchmark": release.key, "release": release.release, "campaign": None}
    orig = aliased(Submission)
    rows = session.execute(
        _runs(session, release).with_only_columns(
            Submission.id, Submission.status, Submission.failure_reason, Submission.rerun_of_id,
            Submission.method_name, orig.benchmark_id, Team.name)
        .join(orig, Submission.rerun_of_id == orig.id)
        .outerjoin(Team, Submission.team_id == Team.id)
        .order_by(Submission.id)).all()
    counts = {"queued": 0, "running": 0, "scored": 0, "failed": 0}
    for r in rows:
        counts[{"received": "queued", "queued": "queued", "scoring": "running"}.get(
            r.status, r.status)] += 1
    skips = list(camp.skips_json or [])
    keys = dict(session.execute(select(Benchmark.id, Benchmark.key)).all())
    done = {r.rerun_of_id for r in rows} | {s["submission_id"] for s in skips}
    waiting = sum(1 for c in candidates(session, release)
                  if c.reason is None and c.original.id not in done)
    return {
        "benchmark": release.key, "release": release.release,
        "campaign": {"paused": camp.paused, "max_runs": camp.max_runs,
                     "max_gpu_seconds": camp.max_gpu_seconds,
                     "gpu_seconds_spent": round(gpu_seconds(session, release), 3),
                     "created_at": camp.created_at.isoformat(),
                     "finished_at": camp.finished_at.isoformat() if camp.finished_at else None,
                     "note": camp.note},
        "counts": {**counts, "waiting": waiting, "skipped": len(skips)},
        "runs": [{"submission_id": r.id, "rerun_of": r.rerun_of_id,
                  "from": keys.get(r.benchmark_id), "team": r.name or "",
                  "method_name": r.method_name, "status": r.status,
                  "failure_reason": r.failure_reason} for r in rows],
        "skipped": skips,
    }


def made_at(session: Session, submission_ids: list[int]) -> dict[int, datetime]:
    """For re-runs among ``submission_ids``: when their detector was made, i.e. the original's
    ``created_at`` (the seen/unseen rule dates a re-run by its original)."""
    if not submission_ids:
        return {}
    orig = aliased(Submission)
    return dict(session.execute(
        select(Submission.id, orig.created_at).join(orig, Submission.rerun_of_id == orig.id)
        .where(Submission.id.in_(submission_ids))).all())
