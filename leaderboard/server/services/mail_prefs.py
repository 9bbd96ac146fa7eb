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
event was committed, whoever wrote it.

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

from leaderboard.server.models import Benchmark, User, utcnow
from leaderboard.server.models.access import AccessRequest
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
    "admin_requests": "Admins: a new data-use agreement request is waiting",
}
#: in-site notice kind -> mail kind
NOTICE_TO_KIND = {
    "submission.scored": "submission_scored", "submission.failed": "submission_failed",
    "submission.hidden": "submission_moderated", "submission.unhidden": "submission_moderated",
    "submission.disqualified": "submission_moderated",
    "submission.reinstated": "submission_moderated",
    "agreement.approved": "agreement_decision", "agreement.denied": "agreement_decision",
    "agreement.revoked": "agreement_decision",
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
    if what == "submission" and ident.isdigit():
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
