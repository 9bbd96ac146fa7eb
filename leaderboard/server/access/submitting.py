"""The agreement gate on held-out submissions (the policy; the checks a submission passes are
composed with the challenge's rules and the quotas in `leaderboard.server.services.eligibility`).

A held-out (test) submission, predictions or container, needs the submitter's signed and
approved agreement for the benchmark's current version while the benchmark's
``agreement_gates_submissions`` is on (the default; admins switch it per benchmark). The
decision is the gate's (`gate.can_access(..., "test_submission")`); a refusal is a 403 whose
JSON carries ``sign_url`` (the data page where the agreement is signed). Dev splits are never
gated here: their labels are what the agreement protects, and scoring a dev file reveals
nothing the agreement holder could not compute offline.
"""
from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from leaderboard.core.packs import HELD_OUT_SPLITS
from leaderboard.server.access.gate import can_access
from leaderboard.server.errors import Forbidden
from leaderboard.server.models import Benchmark, Submission, User


def sign_path(bench: Benchmark) -> str:
    """Where the benchmark's agreement is read and signed (the data page)."""
    return f"/data/{bench.key}"


class AgreementRequired(Forbidden):
    code = "agreement_required"


def check_submission_access(session: Session, user: User, bench: Benchmark, split: str, *,
                            now: datetime | None = None) -> None:
    """Raise `AgreementRequired` (403, with ``sign_url``) when ``user`` may not submit to
    ``split`` of ``bench`` for want of an approved agreement; return otherwise."""
    if split not in HELD_OUT_SPLITS:
        return
    decision = can_access(session, user, bench, "test_submission", now=now)
    if not decision:
        raise AgreementRequired(
            f"submissions to the held-out {split} split of {bench.key} need your signed and "
            f"approved data-use agreement: {decision.reason} (sign it at {sign_path(bench)})",
            extra={"sign_url": sign_path(bench)})


def refusal_at_job_start(session: Session, sub: Submission, bench: Benchmark, *, what: str,
                         now: datetime | None = None) -> str | None:
    """Why a submission accepted earlier may no longer be scored or run now, or None.

    Asked by the jobs when they start (issue 36): an agreement revoked (or expired, or a new
    version not yet signed) while the submission waited in the queue stops it, as it would
    have stopped the upload. ``what`` is the gate's action: ``"test_submission"`` for a
    predictions file (only held-out splits are gated), ``"container_run"`` for an image (the
    caller decides which splits need it). Baselines, which no team submits, are never refused.
    The reason is the gate's, e.g. "agreement revoked on 2026-12-05 14:03 UTC: <why>".
    """
    if sub.is_baseline or (what == "test_submission" and sub.split not in HELD_OUT_SPLITS):
        return None
    user = session.get(User, sub.user_id) if sub.user_id is not None else None
    decision = can_access(session, user, bench, what, now=now)
    return None if decision else decision.reason
