"""Mail people want and can stop (issue 35, item 4): kinds, opt-outs, and digests.

Every kind in `KINDS` is on by default; a person turns kinds off on the account page or with
the one-click unsubscribe link in each message (RFC 8058: `unsubscribe`). Only verified
addresses receive these (an unverified address may not be its owner's: mail to it could be
used to spam someone else); verification and reset mail is not optional.

**Where the lines come from.** `collect` (a ``before_flush`` hook installed by
`leaderboard.server.jobs.mail.install`) turns each new in-site notice
(`leaderboard.server.services.notices.post`: submissions scored, failed or moderated, agreements
decided) into a `MailItem` for each reader who wants its kind, and each new agreement request
into one for each admin, in the same transaction as the event: a line exists exactly when its
event was committed, whoever wrote it. What happens on a clock (a phase opening or about to
close, a challenge's final results, an agreement about to expire) is found by `timed_lines`
at each reconciler pass, once per person and event (the line's ``key``).

**Bursts are batched.** Lines wait; `gather` turns all of one person's waiting lines into one
digest message once the oldest has waited ``MAIL_DIGEST_WINDOW_S`` (the reconciler's pass; at
once when jobs run inline, where no pass comes back later). 200 scored submissions within the
window are one message with 200 lines, not 200 messages.
"""
from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from leaderboard.server.models import Benchmark, Submission, User, utcnow
from leaderboard.server.models.access import AccessRequest
from leaderboard.server.models.challenges import Challenge, ChallengePhase
from leaderboard.server.models.mail import MailItem, MailOptOut
from leaderboard.server.models.notices import Notice
from leaderboard.server.services import outbox
from leaderboard.server.services.mail_links import url as link_url

#: kind -> the words on the settings page
KINDS = {
    "submission_scored": "A submission of your team was scored",
    "submission_failed": "A submission of your team failed (with the reason)",
    "submission_moderated": "An admin hid, disqualified or reinstated a submission of your team",
    "agreement_decision": "Your data-use agreement was approved, denied or revoked",
    "agreement_expiring": "Your access to a data set expires within a week",
    "challenge_phase": "A challenge phase you take part in opens or is about to close",
    "challenge_results": "The results of a challenge you take part in are final",
    "admin_requests": "Admins: a new data-use agreement request is waiting",
    "release_published": "A benchmark your team submitted files to has a new release",
}
#: in-site notice kind -> mail kind
NOTICE_TO_KIND = {
    "submission.scored": "submission_scored", "submission.failed": "submission_failed",
    "submission.hidden": "submission_moderated", "submission.unhidden": "submission_moderated",
    "submission.disqualified": "submission_moderated",
    "submission.reinstated": "submission_moderated",
    "agreement.approved": "agreement_decision", "agreement.denied": "agreement_decision",
    "agreement.revoked": "agreement_decision",
    "release.published": "release_published",
}
#: most lines in one digest (the rest wait for the next one)
DIGEST_MAX_LINES = 200


def enabled(session: Session, user_id: int) -> dict[str, bool]:
    """Each kind -> whether ``user_id`` gets it."""
    off = set(session.scalars(select(MailOptOut.kind).where(MailOptOut.user_id == user_id)))
    return {k: k not in off for k in KINDS}


def set_kinds(session: Session, user_id: int, on: set[str]) -> None:
    """Turn on exactly the kinds in ``on`` (unknown names ignored), the others off."""
    session.execute(delete(MailOptOut).where(MailOptOut.user_id == user_id))
    for kind in KINDS:
        if kind not in on:
            session.add(MailOptOut(user_id=user_id, kind=kind))


def unsubscribe(session: Session, user_id: int, kinds: list[str]) -> list[str]:
    """Turn ``kinds`` off for ``user_id`` (idempotent); returns the kinds now off."""
    have = set(session.scalars(select(MailOptOut.kind).where(MailOptOut.user_id == user_id)))
    for kind in kinds:
        if kind in KINDS and kind not in have:
            session.add(MailOptOut(user_id=user_id, kind=kind))
            have.add(kind)
    return sorted(have)


def _subject_link(subject: str) -> str:
    """The page a notice is about (the notice model's ``subject``), as a path."""
    what, _, ident = (subject or "").partition(":")
    if what == "submission" and ident.isascii() and ident.isdigit():
        return f"/submissions/{ident}"
    if what == "benchmark" and ident:
        return f"/data/{ident}"
    return "/team/"


def _recipients(session: Session, kind: str, *, user_ids: list[int],
                team_id: int | None) -> list[int]:
    who = select(User.id).where(User.is_active.is_(True), User.email_verified_at.is_not(None))
    if team_id is not None:
        who = who.where((User.team_id == team_id) | User.id.in_(user_ids))
    else:
        who = who.where(User.id.in_(user_ids))
    off = select(MailOptOut.user_id).where(MailOptOut.kind == kind)
    return list(session.scalars(who.where(User.id.not_in(off)).order_by(User.id)))


def collect(session: Session) -> bool:
    """Lines for the new notices and agreement requests in ``session`` (``before_flush``);
    returns whether any was added."""
    added = False
    new = list(session.new)
    with session.no_autoflush:
        for obj in new:
            added = _collect_one(session, obj) or added
    return added


def _collect_one(session: Session, obj) -> bool:
    if isinstance(obj, Notice):
        kind = NOTICE_TO_KIND.get(obj.kind)
        if kind is None:
            return False
        users = [obj.user_id] if obj.user_id is not None else []
        readers = _recipients(session, kind, user_ids=users, team_id=obj.team_id)
        for uid in readers:
            session.add(MailItem(user_id=uid, kind=kind, text=obj.message,
                                 link=_subject_link(obj.subject)))
        return bool(readers)
    if isinstance(obj, AccessRequest):
        admins = list(session.scalars(select(User.id).where(User.is_admin.is_(True))))
        bench = session.get(Benchmark, obj.benchmark_id)
        what = bench.key if bench is not None else "a benchmark"
        readers = _recipients(session, "admin_requests", user_ids=admins, team_id=None)
        for uid in readers:
            session.add(MailItem(user_id=uid, kind="admin_requests",
                                 text=f"{obj.full_name} ({obj.affiliation}) asks for access "
                                 f"to {what}", link="/admin/requests"))
        return bool(readers)
    return False


def waiting_users(session: Session, *, older_than: datetime | None) -> list[int]:
    """Users with waiting lines, the oldest of which is older than ``older_than`` (None: any)."""
    q = (select(MailItem.user_id).where(MailItem.outbox_id.is_(None))
         .group_by(MailItem.user_id))
    if older_than is not None:
        q = q.having(func.min(MailItem.created_at) <= older_than)
    return list(session.scalars(q))


def gather(session: Session, user_id: int, cfg: Mapping) -> int | None:
    """One digest message of ``user_id``'s waiting lines, in the outbox; returns its id, or
    None when nothing is waiting (another pass took them) or the person can no longer get mail
    (the lines are dropped). Lines of kinds turned off since are dropped too."""
    user = session.get(User, user_id)
    items = list(session.scalars(select(MailItem).where(MailItem.user_id == user_id,
                                                        MailItem.outbox_id.is_(None))
                                 .order_by(MailItem.id).limit(DIGEST_MAX_LINES)))
    if not items:
        return None
    on = enabled(session, user_id)
    keep = [i for i in items if on.get(i.kind)]
    if user is None or not user.is_active or user.email_verified_at is None or not keep:
        session.execute(delete(MailItem).where(MailItem.id.in_([i.id for i in items])))
        return None
    drop = [i.id for i in items if i not in keep]
    if drop:
        session.execute(delete(MailItem).where(MailItem.id.in_(drop)))
    base, secret = cfg["PUBLIC_URL"], cfg["SECRET_KEY"]
    kinds = sorted({i.kind for i in keep})
    stop = link_url(base, secret, "unsubscribe", {"u": user_id, "k": kinds})
    lines = [f"Hello {user.display_name},", "",
             "What happened on the leaderboard:" if len(keep) > 1 else "", ""]
    for item in keep:
        lines.append(f"- {item.text}")
        if item.link:
            lines.append(f"  {base}{item.link}")
    lines += ["", "You get this mail because these kinds are on in your mail settings: "
              + "; ".join(KINDS[k] for k in kinds) + ".",
              f"Change them: {base}/account/mail",
              f"Stop these kinds with one click: {stop}", ""]
    subject = (keep[0].text if len(keep) == 1
               else f"{len(keep)} updates on the leaderboard: {keep[0].text}")
    row = outbox.add(session, kind="digest", to=user.email, subject=subject[:150],
                     body="\n".join(ln for i, ln in enumerate(lines) if ln or i != 2),
                     sender=cfg["MAIL_SENDER"], user_id=user_id,
                     headers={"List-Unsubscribe": f"<{stop}>",
                              "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"})
    # guarded: a concurrent pass that took the same lines first leaves none for this message
    taken = session.execute(update(MailItem).where(MailItem.id.in_([i.id for i in keep]),
                                                   MailItem.outbox_id.is_(None))
                            .values(outbox_id=row.id)).rowcount
    if taken != len(keep):
        raise RuntimeError("the digest lines were taken by another pass")
    return row.id


def due_users(session: Session, *, window_s: int, now: datetime | None = None) -> list[int]:
    """Users whose oldest waiting line has waited ``window_s``."""
    now = now or utcnow()
    return waiting_users(session, older_than=now - timedelta(seconds=window_s))


#: timed events are mailed when they happened within this long (a pass that was down longer
#: does not mail stale news), or, for what is about to happen, this long before
RECENT = timedelta(days=1)
EXPIRY_NOTICE = timedelta(days=7)


def _participants(session: Session, benchmark_id: int) -> list[int]:
    """Who a challenge's news is for: users who asked for its data, and members of teams that
    submitted to it."""
    asked = select(AccessRequest.user_id).where(AccessRequest.benchmark_id == benchmark_id)
    teams = select(Submission.team_id).where(Submission.benchmark_id == benchmark_id,
                                             Submission.team_id.is_not(None))
    return list(session.scalars(select(User.id).where(User.id.in_(asked)
                                                      | User.team_id.in_(teams))))


def _add_once(session: Session, kind: str, key: str, text: str, link: str,
              user_ids: list[int]) -> int:
    readers = _recipients(session, kind, user_ids=user_ids, team_id=None)
    had = set(session.scalars(select(MailItem.user_id).where(MailItem.key == key)))
    added = 0
    for uid in readers:
        if uid not in had:
            session.add(MailItem(user_id=uid, kind=kind, text=text, link=link, key=key))
            added += 1
    return added


def timed_lines(session: Session, *, now: datetime | None = None) -> int:
    """Lines for what happens on a clock rather than in a request: a challenge phase that
    opened or closes within a day, a challenge's results, an agreement that expires within a
    week. Each (person, event) gets one line ever (``key``). Returns how many were added."""
    now = now or utcnow()
    added = 0
    for phase in session.scalars(select(ChallengePhase).where(
            ((ChallengePhase.opens_at > now - RECENT) & (ChallengePhase.opens_at <= now))
            | ((ChallengePhase.closes_at > now) & (ChallengePhase.closes_at <= now + RECENT)))):
        ch = phase.challenge
        people = _participants(session, ch.benchmark_id)
        if phase.opens_at <= now and phase.closes_at > now:
            added += _add_once(session, "challenge_phase", f"phase-open:{phase.id}",
                               f"Phase {phase.name} of {ch.title} is open (split "
                               f"{phase.split}) until {phase.closes_at:%Y-%m-%d %H:%M} UTC",
                               f"/challenges/{ch.key}", people)
        if now < phase.closes_at <= now + RECENT:
            added += _add_once(session, "challenge_phase", f"phase-closing:{phase.id}",
                               f"Phase {phase.name} of {ch.title} closes at "
                               f"{phase.closes_at:%Y-%m-%d %H:%M} UTC", f"/challenges/{ch.key}",
                               people)
    for ch in session.scalars(select(Challenge).where(Challenge.finalized_at > now - RECENT,
                                                      Challenge.finalized_at <= now)):
        added += _add_once(session, "challenge_results", f"results:{ch.id}",
                           f"The results of {ch.title} are final", f"/challenges/{ch.key}",
                           _participants(session, ch.benchmark_id))
    for req in session.scalars(select(AccessRequest).where(
            AccessRequest.status == "approved", AccessRequest.expires_at > now,
            AccessRequest.expires_at <= now + EXPIRY_NOTICE)):
        bench = session.get(Benchmark, req.benchmark_id)
        key = bench.key if bench is not None else str(req.benchmark_id)
        added += _add_once(session, "agreement_expiring",
                           f"expiring:{req.id}:{req.expires_at:%Y%m%d%H%M}",
                           f"Your access to {key} expires on {req.expires_at:%Y-%m-%d %H:%M} "
                           "UTC: sign the agreement again to keep it", f"/data/{key}",
                           [req.user_id])
    return added
