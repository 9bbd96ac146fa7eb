"""The append-only transparency log in the database: append, tree heads, proofs, entries.

Appends are serialised by a lock held to the end of the appending transaction
(``pg_advisory_xact_lock`` on PostgreSQL; SQLite allows one writer anyway), so the index an
`Appender` hands out is the one the entry gets, and a receipt can carry its own ``log_index``.
An append writes the entry, its leaf hash and every perfect subtree it completes (amortised two
node rows); the appender keeps the tree's *frontier* (the perfect subtrees that make up the
current tree, one per set bit of its size), so it never reads a node back within a
transaction; a new transaction's appender reads the size and the frontier in one statement
(`Appender`). Proofs and roots read at most 2 log2(n) nodes by primary key in one query
(`leaderboard.core.transparency.merkle`).
Readers only see committed entries: a head or proof never names an entry that might roll back.
"""
from __future__ import annotations

import weakref
from datetime import UTC, datetime

from sqlalchemy import (
    BigInteger,
    LargeBinary,
    bindparam,
    func,
    literal,
    select,
    text,
    true,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Session

from leaderboard.core.transparency import merkle, receipts
from leaderboard.core.transparency.signing import Signer
from leaderboard.server.errors import NotFound, ServiceError
from leaderboard.server.models.transparency import LogEntry, LogNode
from leaderboard.server.transparency import rawsql

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


#: per engine, the log's size after the last append this process made (a guess, never trusted:
#: it only says which frontier nodes to read with the size, `_head_sql`)
_SIZE_GUESS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_HEAD_SQL: dict[tuple, object] = {}
_WRITE_SQL: dict[object, object] = {}
_ENTRY_COLUMNS = ("idx", "data", "event", "benchmark_key", "submission_id", "created_at")


def _head_sql(width: int, along):
    """One statement, read under the lock: the last index, the hashes of ``width`` nodes
    (bind ``log_k0``.. ``log_k{width-1}``; null where absent) and the columns of the caller's
    ``along`` select (null when it finds no row)."""
    key = (width, along)
    found = _HEAD_SQL.get(key)
    if found is None:
        cols = [select(func.max(_ENTRIES.c.idx)).scalar_subquery().label("log_last")]
        cols += [select(_NODES.c.hash).where(_NODES.c.key == bindparam(f"log_k{i}"))
                 .scalar_subquery().label(f"log_h{i}") for i in range(width)]
        if along is None:
            found = select(*cols)
        else:
            one = select(literal(1).label("log_one")).subquery("log_one")
            sub = along.add_columns(literal(1).label("log_found")).subquery("along")
            found = select(*cols, *sub.c).select_from(one.outerjoin(sub, true()))
        _HEAD_SQL[key] = found
    return found


def _write_sql(along):
    """PostgreSQL: the caller's INSERT or UPDATE ``along`` with the entry and its nodes as
    data-modifying CTEs (binds ``log_*``; the nodes as two arrays), one round trip."""
    found = _WRITE_SQL.get(along)
    if found is None:
        entry = _ENTRIES.insert().values(
            {c: bindparam(f"log_{c}", type_=_ENTRIES.c[c].type) for c in _ENTRY_COLUMNS})
        pairs = func.unnest(bindparam("log_keys", type_=ARRAY(BigInteger)),
                            bindparam("log_hashes", type_=ARRAY(LargeBinary))
                            ).table_valued("k", "h").render_derived("log_pairs")
        nodes = _NODES.insert().from_select(["key", "hash"], select(pairs.c.k, pairs.c.h))
        found = along.add_cte(entry.cte("log_entry_new"), nodes.cte("log_node_new"))
        _WRITE_SQL[along] = found
    return found


class Appender:
    """Appends entries within the caller's transaction (which holds the log's lock once an
    Appender exists). ``next_index`` is the index the next `append` takes.

    Opening reads the log's size and frontier (the perfect subtrees of the current tree) in
    one statement under the lock, with ``along`` (a select of the caller's, at most one row,
    its binds in ``params``; its row, or None, is ``along_row``): the statement names the
    frontier nodes of the size this process last left the log at, so one round trip suffices
    unless another process appended since (or the transaction that appended rolled back), when
    the frontier of the size read is read by a second statement. Nothing cached is trusted:
    the hashes always come from the database, inside the transaction."""

    def __init__(self, session: Session, *, along=None, params: dict | None = None):
        self.session = session
        self._conn = conn = session.connection()
        self._pg = conn.dialect.name == "postgresql"
        # PostgreSQL through psycopg: the statements on the driver's connection (`rawsql`)
        self._cur = rawsql.cursor(conn) if rawsql.usable(conn) else None
        if self._pg:
            # its own statement: under READ COMMITTED the size read below must take its
            # snapshot after the lock is granted, or it could miss the entry of the
            # transaction that held the lock
            self._run(_LOCK_SQL, {"k": LOCK_KEY})
        self._engine = conn.engine
        guess = _SIZE_GUESS.get(self._engine, 0)
        nodes = merkle.perfect_nodes(0, guess)
        binds = {f"log_k{i}": merkle.node_key(lv, ix) for i, (lv, ix) in enumerate(nodes)}
        row = self._run(_head_sql(len(nodes), along), {**(params or {}), **binds}).fetchone()
        last = row[0]
        self.next_index = 0 if last is None else int(last) + 1
        self.along_row = row if along is not None and row.log_found is not None else None
        hashes = row[1:len(nodes) + 1]
        if self.next_index != guess or None in hashes:
            nodes = merkle.perfect_nodes(0, self.next_index)
            found = _getter(session)(set(nodes))
            hashes = [found.get(n) for n in nodes]
            if None in hashes:
                raise RuntimeError(
                    f"the log's tree lacks nodes of its {self.next_index} entries")
        self._frontier = {lv: bytes(h) for (lv, _i), h in zip(nodes, hashes)}

    def _run(self, stmt, params: dict):
        """``stmt`` in the caller's transaction (on the driver's cursor where there is one);
        the result's rows by ``fetchone``."""
        if self._cur is not None:
            return rawsql.execute(self._cur, self._conn, stmt, params)
        return self._conn.execute(stmt, params)

    def append(self, data: bytes, *, event: str, benchmark_key: str,
               submission_id: int | None, now: datetime | None = None,
               along=None, params: dict | None = None) -> int:
        """Append ``data`` as entry `next_index`; ``along``: an INSERT or UPDATE of the
        caller's (its binds in ``params``, none named ``log_*``) run with the entry: on
        PostgreSQL in the same statement, elsewhere after it."""
        index = self.next_index
        h = merkle.leaf_hash(data)
        keys, hashes = [merkle.node_key(0, index)], [h]
        level, i = 0, index
        while i & 1:
            h = merkle.node_hash(self._frontier.pop(level), h)
            level, i = level + 1, i >> 1
            keys.append(merkle.node_key(level, i))
            hashes.append(h)
        self._frontier[level] = h
        entry = {"idx": index, "data": data.decode("utf-8"), "event": event,
                 "benchmark_key": benchmark_key, "submission_id": submission_id,
                 "created_at": now or datetime.now(UTC)}
        conn = self._conn
        if self._pg and along is not None:
            self._run(_write_sql(along), {
                **{f"log_{k}": v for k, v in entry.items()}, "log_keys": keys,
                "log_hashes": hashes, **(params or {})})
        else:
            conn.execute(_INSERT_ENTRY, entry)
            conn.execute(_INSERT_NODES, [{"key": k, "hash": v} for k, v in zip(keys, hashes)])
            if along is not None:
                conn.execute(along, params or {})
        self.next_index = index + 1
        # only a guess for the next Appender (it may roll back, another process may append)
        _SIZE_GUESS[self._engine] = self.next_index
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
