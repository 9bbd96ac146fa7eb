"""The append-only transparency log in the database: append, tree heads, proofs, entries.

Appends are serialised by a lock held to the end of the appending transaction
(``pg_advisory_xact_lock`` on PostgreSQL; SQLite allows one writer anyway), so the index an
`Appender` hands out is the one the entry gets, and a receipt can carry its own ``log_index``.
An append writes the entry, its leaf hash and every perfect subtree it completes (amortised two
node rows); the appender keeps the tree's *frontier* (the perfect subtrees that make up the
current tree, one per set bit of its size), so it never reads a node back. Proofs and roots read
at most 2 log2(n) nodes by primary key in one query (`leaderboard.core.transparency.merkle`).
Readers only see committed entries: a head or proof never names an entry that might roll back.
"""
from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import bindparam, func, select, text
from sqlalchemy.orm import Session

from leaderboard.core.transparency import merkle, receipts
from leaderboard.core.transparency.signing import Signer
from leaderboard.server.errors import NotFound, ServiceError
from leaderboard.server.models.transparency import LogEntry, LogNode

#: pg_advisory_xact_lock key of the log (any constant the app uses nowhere else)
LOCK_KEY = 0x6C6F675F  # "log_"
#: most entries one page of the entries API returns
MAX_ENTRIES_PAGE = 1000


# The log's statements, built once and run on the session's connection (Core: no ORM
# execution path, no new IN clause per call); the session is flushed first where the caller
# may have pending rows.
_ENTRIES = LogEntry.__table__
_NODES = LogNode.__table__
_SIZE_SQL = select(func.max(_ENTRIES.c.idx))
_NODES_SQL = select(_NODES.c.key, _NODES.c.hash).where(
    _NODES.c.key.in_(bindparam("keys", expanding=True)))
_INSERT_ENTRY = _ENTRIES.insert()
_INSERT_NODES = _NODES.insert()
_LOCK_SQL = text("SELECT pg_advisory_xact_lock(:k)")


def tree_size(session: Session) -> int:
    last = session.connection().execute(_SIZE_SQL).scalar()
    return 0 if last is None else int(last) + 1


def _getter(session: Session):
    def get(keys: set[tuple[int, int]]) -> dict[tuple[int, int], bytes]:
        by_key = {merkle.node_key(lv, i): (lv, i) for lv, i in keys}
        rows = session.connection().execute(_NODES_SQL, {"keys": list(by_key)}).all()
        return {by_key[k]: bytes(h) for k, h in rows}
    return get


class Appender:
    """Appends entries within the caller's transaction (which holds the log's lock once an
    Appender exists). ``next_index`` is the index the next `append` takes."""

    def __init__(self, session: Session):
        self.session = session
        self._conn = conn = session.connection()
        if conn.dialect.name == "postgresql":
            # its own statement: under READ COMMITTED the size read below must take its
            # snapshot after the lock is granted, or it could miss the entry of the
            # transaction that held the lock
            conn.execute(_LOCK_SQL, {"k": LOCK_KEY})
        self.next_index = tree_size(session)
        nodes = merkle.perfect_nodes(0, self.next_index)
        found = _getter(session)(set(nodes))
        if len(found) != len(nodes):
            raise RuntimeError(f"the log's tree lacks nodes of its {self.next_index} entries")
        self._frontier = {lv: found[(lv, i)] for lv, i in nodes}

    def append(self, data: bytes, *, event: str, benchmark_key: str,
               submission_id: int | None, now: datetime | None = None) -> int:
        index = self.next_index
        h = merkle.leaf_hash(data)
        nodes = [{"key": merkle.node_key(0, index), "hash": h}]
        level, i = 0, index
        while i & 1:
            h = merkle.node_hash(self._frontier.pop(level), h)
            level, i = level + 1, i >> 1
            nodes.append({"key": merkle.node_key(level, i), "hash": h})
        self._frontier[level] = h
        self._conn.execute(_INSERT_ENTRY, {
            "idx": index, "data": data.decode("utf-8"), "event": event,
            "benchmark_key": benchmark_key, "submission_id": submission_id,
            "created_at": now or datetime.now(UTC)})
        self._conn.execute(_INSERT_NODES, nodes)
        self.next_index = index + 1
        return index


def root(session: Session, size: int) -> bytes:
    return merkle.root(size, _getter(session))


def _check_size(session: Session, size: int | None) -> int:
    current = tree_size(session)
    if size is None:
        return current
    if not 0 <= size <= current:
        raise NotFound(f"the log has {current} entries; there is no tree of size {size}")
    return size


def signed_head(session: Session, signer: Signer, *, size: int | None = None) -> dict:
    """The signed tree head of the current tree (or of an earlier ``size``)."""
    size = _check_size(session, size)
    body = receipts.head_body(key_id=signer.key_id, tree_size=size, root_hash=root(session, size),
                              timestamp=datetime.now(UTC))
    return receipts.sign(body, signer)


def inclusion(session: Session, index: int, size: int | None = None) -> dict:
    """``{"index", "tree_size", "leaf_hash", "proof": [hex...]}`` of entry ``index``."""
    size = _check_size(session, size)
    if not 0 <= index < size:
        raise NotFound(f"no entry {index} in a tree of {size} entries")
    proof = merkle.prove(merkle.inclusion_ranges(index, size), _getter(session))
    leaf = _getter(session)({(0, index)})[(0, index)]
    return {"index": index, "tree_size": size, "leaf_hash": leaf.hex(),
            "proof": [p.hex() for p in proof]}


def consistency(session: Session, first: int, second: int | None = None) -> dict:
    """``{"first", "second", "proof": [hex...]}``: the tree of ``second`` entries extends the
    tree of ``first``."""
    second = _check_size(session, second)
    if not 0 <= first <= second:
        raise ServiceError(f"first must be in 0..{second}, got {first}")
    proof = merkle.prove(merkle.consistency_ranges(first, second), _getter(session))
    return {"first": first, "second": second, "proof": [p.hex() for p in proof]}


def entries(session: Session, start: int, count: int) -> list[dict]:
    """Entries ``start`` .. ``start + count - 1`` that exist: ``{"index", "data"}`` (data is the
    signed receipt's canonical JSON, the leaf's bytes)."""
    if start < 0 or not 1 <= count <= MAX_ENTRIES_PAGE:
        raise ServiceError(f"start must be >= 0 and count in 1..{MAX_ENTRIES_PAGE}, got "
                           f"start={start}, count={count}")
    rows = session.execute(select(LogEntry.idx, LogEntry.data)
                           .where(LogEntry.idx >= start, LogEntry.idx < start + count)
                           .order_by(LogEntry.idx)).all()
    return [{"index": int(i), "data": d} for i, d in rows]


def entry_data(session: Session, index: int) -> str:
    data = session.scalar(select(LogEntry.data).where(LogEntry.idx == index))
    if data is None:
        raise NotFound(f"no log entry {index}")
    return data
