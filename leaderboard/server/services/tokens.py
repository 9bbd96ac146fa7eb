"""Per-user API tokens: shown once at creation, stored as sha256, revocable."""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.core.errors import ProblemList
from leaderboard.server import security
from leaderboard.server.errors import NotFound, ServiceError
from leaderboard.server.models import ApiToken, User, utcnow

MAX_TOKENS = 20


def create_token(session: Session, user: User, *, name: str) -> tuple[ApiToken, str]:
    """A new token for ``user``; returns (row, plaintext). The plaintext is never stored."""
    name = (name or "").strip()
    if not 1 <= len(name) <= 80:
        problems = ProblemList()
        problems.add("required, at most 80 characters", field="name")
        raise ServiceError("invalid token name", problems)
    active = session.scalars(select(ApiToken).where(ApiToken.user_id == user.id,
                                                    ApiToken.revoked_at.is_(None))).all()
    if len(active) >= MAX_TOKENS:
        raise ServiceError(f"you already have {MAX_TOKENS} active tokens; revoke one first")
    plain = security.new_token()
    token = ApiToken(user_id=user.id, name=name, token_hash=security.hash_token(plain),
                     prefix=security.token_prefix(plain))
    session.add(token)
    session.flush()
    return token, plain


def list_tokens(session: Session, user: User) -> list[ApiToken]:
    return list(session.scalars(select(ApiToken).where(ApiToken.user_id == user.id)
                                .order_by(ApiToken.created_at.desc(), ApiToken.id.desc())))


def revoke_token(session: Session, user: User, token_id: int) -> ApiToken:
    token = session.get(ApiToken, token_id)
    if token is None or token.user_id != user.id:
        raise NotFound(f"no token {token_id} of yours")
    if token.revoked_at is None:
        token.revoked_at = utcnow()
    return token


def user_for_token(session: Session, plain: str) -> User | None:
    """The active user owning a non-revoked token, or None. Records last use."""
    if not plain or not plain.startswith(security.TOKEN_PREFIX) or len(plain) > 200:
        return None
    token = session.scalar(select(ApiToken).where(
        ApiToken.token_hash == security.hash_token(plain)))
    if token is None or token.revoked_at is not None or not token.user.is_active:
        return None
    token.last_used_at = utcnow()
    return token.user
