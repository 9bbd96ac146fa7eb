"""The database-backed judge cache (`JudgeOutput` rows): the server's `JudgeCache`.

`DbJudgeCache(session)` implements the `leaderboard.judges.JudgeCache` protocol (get/put) and the
bulk form `CachingJudge` uses (get_many/put_many: one query per chunk of keys). It never
commits: the caller owns the session. `ShortSessionCache(database)` opens one short transaction
per bulk call, so a job holds no connection while the judge works (`leaderboard.server.jobs.scoring` rule).

Writes are insert-or-ignore: two jobs judging the same response race harmlessly, and the first
answer stays (a judge identity answers deterministically, so both answers are the same).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import insert, select, tuple_
from sqlalchemy.orm import Session

from leaderboard.judges.cache import CacheKey
from leaderboard.server.models import utcnow
from leaderboard.server.models.judges import JudgeOutput

#: keys per SELECT (bounded IN lists: SQLite's variable limit, plan size)
CHUNK = 400


class DbJudgeCache:
    def __init__(self, session: Session):
        self.session = session

    def get(self, key: CacheKey) -> dict | list | None:
        return self.get_many([key]).get(key)

    def put(self, key: CacheKey, value: dict | list) -> None:
        self.put_many({key: value})

    def get_many(self, keys: Sequence[CacheKey]) -> dict[CacheKey, dict | list]:
        """The cached values of ``keys`` (misses are absent)."""
        groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for key in dict.fromkeys(keys):
            key = CacheKey(*key)
            groups.setdefault((key.judge, key.kind), []).append((key.item_id,
                                                                 key.response_sha256))
        out: dict[CacheKey, dict | list] = {}
        for (judge, kind), pairs in groups.items():
            for start in range(0, len(pairs), CHUNK):
                chunk = pairs[start:start + CHUNK]
                rows = self.session.execute(
                    select(JudgeOutput.item_id, JudgeOutput.response_sha256, JudgeOutput.value)
                    .where(JudgeOutput.judge == judge, JudgeOutput.kind == kind,
                           tuple_(JudgeOutput.item_id, JudgeOutput.response_sha256).in_(chunk)))
                for item_id, sha, value in rows:
                    out[CacheKey(item_id, sha, judge, kind)] = value
        return out

    def put_many(self, entries: Mapping[CacheKey, dict | list]) -> None:
        """Store ``entries``; keys already present keep their value."""
        if not entries:
            return
        rows = [{"item_id": k.item_id, "response_sha256": k.response_sha256, "judge": k.judge,
                 "kind": k.kind, "value": v} for k, v in entries.items()]
        for row in rows:
            _check(row)
        dialect = self.session.get_bind().dialect.name
        if dialect in ("sqlite", "postgresql"):
            if dialect == "sqlite":
                from sqlalchemy.dialects.sqlite import insert as dialect_insert
            else:
                from sqlalchemy.dialects.postgresql import insert as dialect_insert
            now = utcnow()
            for start in range(0, len(rows), CHUNK):
                stmt = dialect_insert(JudgeOutput).values(
                    [{**r, "created_at": now} for r in rows[start:start + CHUNK]])
                self.session.execute(stmt.on_conflict_do_nothing())
            return
        # other backends: skip what is there, then insert the rest (a race raises; rare)
        have = self.get_many(list(entries))
        new = [r for r, k in zip(rows, entries) if k not in have]
        if new:
            self.session.execute(insert(JudgeOutput), new)

    def __len__(self) -> int:
        from sqlalchemy import func
        return self.session.scalar(select(func.count(JudgeOutput.id)))


def _check(row: dict) -> None:
    for name, limit in (("item_id", 200), ("response_sha256", 64), ("judge", 80), ("kind", 16)):
        value = row[name]
        if not isinstance(value, str) or not value or len(value) > limit:
            raise ValueError(f"cache key field {name} must be a non-empty string of at most "
                             f"{limit} characters, got {value!r}")
    if not isinstance(row["value"], (dict, list)):
        raise ValueError(f"cache value must be a dict or list, got {type(row['value']).__name__}")


class ShortSessionCache:
    """Bulk cache calls, each in its own short committed transaction on ``database``."""

    def __init__(self, database):
        self.database = database

    def get_many(self, keys: Sequence[CacheKey]) -> dict[CacheKey, dict | list]:
        with self.database.scope() as session:
            return DbJudgeCache(session).get_many(keys)

    def put_many(self, entries: Mapping[CacheKey, dict | list]) -> None:
        with self.database.scope() as session:
            DbJudgeCache(session).put_many(entries)
