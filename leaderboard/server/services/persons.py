"""Accounts an administrator marks as one person (issue 35), and who counts as that person.

Linking puts every given account under one `Person` (merging persons the accounts already
had); unlinking takes one account out. Both are audited in the caller's transaction. Quotas on
held-out splits then count the submissions of all the person's accounts together
(`leaderboard.server.services.quotas`), whatever teams they are in.
"""
from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from leaderboard.server.access import audit
from leaderboard.server.models import User
from leaderboard.server.models.identity import Person
from leaderboard.server.errors import Forbidden, ServiceError

MAX_NOTE = 2000


def _admin(user: User) -> None:
    if not (user and user.is_admin and user.is_active):
        raise Forbidden("only administrators mark accounts as one person")


def person_account_ids(session: Session, user: User) -> list[int] | None:
    """Ids of every account of ``user``'s person (``user`` included); None when the account
    is not linked to others."""
    if user.person_id is None:
        return None
    ids = list(session.scalars(select(User.id).where(User.person_id == user.person_id)))
    return ids if len(ids) > 1 else None


def link(session: Session, admin: User, users: Iterable[User], *, note: str = "",
         ip: str = "") -> Person:
    """Mark ``users`` (two or more accounts) as one person; returns the person."""
    _admin(admin)
    users = list({u.id: u for u in users}.values())
    if len(users) < 2:
        raise ServiceError("choose at least two different accounts to mark as one person")
    note = (note or "").strip()
    if len(note) > MAX_NOTE:
        raise ServiceError(f"the note is at most {MAX_NOTE} characters, got {len(note)}")
    existing = sorted({u.person_id for u in users if u.person_id is not None})
    if existing:
        person = session.get(Person, existing[0])
        if note:
            person.note = (person.note + "\n" + note).strip()
    else:
        person = Person(created_by=admin.id, note=note)
        session.add(person)
        session.flush()
    if existing[1:]:  # merge: every account of the other persons joins this one
        session.execute(update(User).where(User.person_id.in_(existing[1:]))
                        .values(person_id=person.id))
    for u in users:
        u.person_id = person.id
    session.flush()
    audit.record(session, admin, "identity.link", f"person:{person.id}",
                 {"users": sorted(u.id for u in users), "emails": sorted(u.email for u in users),
                  "merged_persons": existing[1:], "note": note}, ip)
    return person


def unlink(session: Session, admin: User, user: User, *, ip: str = "") -> None:
    """Take ``user`` out of its person (a person left with one account stays, harmless)."""
    _admin(admin)
    if user.person_id is None:
        raise ServiceError(f"{user.email} is not marked as the same person as any account",
                           status=409, code="conflict")
    person_id, user.person_id = user.person_id, None
    session.flush()
    audit.record(session, admin, "identity.unlink", f"person:{person_id}",
                 {"user": user.id, "email": user.email}, ip)
