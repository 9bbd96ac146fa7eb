"""The log's appender across transactions (issue 39): the size it remembers from its last append
is only a guess of which frontier nodes to read, so a rollback, another process's appends, or
both never give a wrong index or tree; and a receipt costs a fixed number of statements."""
from __future__ import annotations

import json
import threading

import pytest
from sqlalchemy import create_engine, event, select, update
from sqlalchemy.orm import sessionmaker

from leaderboard.core.transparency import merkle
from leaderboard.server.models import Submission
from leaderboard.server.models.transparency import LogEntry, LogNode
from leaderboard.server.transparency import log
from leaderboard.server.transparency.issue import Issuer


@pytest.fixture
def process(db_url):
    """Makes session factories, each on an engine of its own: what another process would have
    (the appender's guess is kept per engine), without the app's commit hooks."""
    engines = []

    def make():
        engines.append(create_engine(db_url))
        return sessionmaker(engines[-1], expire_on_commit=False)
    yield make
    for engine in engines:
        engine.dispose()


def _issue(factory, signer, sid: int, *, commit: bool = True) -> int:
    """Toggle ``sid``'s selection (a change its receipt shows) and issue its receipt."""
    s = factory()
    try:
        s.execute(update(Submission).where(Submission.id == sid)
                  .values(selected=~Submission.selected))
        index = Issuer(s, signer).issue_for(sid)
        assert index is not None
        if commit:
            s.commit()
        else:
            s.rollback()
        return index
    finally:
        s.close()


def _size(factory) -> int:
    with factory() as s:
        return log.tree_size(s)


def _check_log(factory) -> int:
    """Entries 0..n-1 with no gap, each receipt naming its own index, every stored node that of
    the tree rebuilt from the entries (and no other), the stored root that tree's root."""
    with factory() as s:
        rows = s.execute(select(LogEntry.idx, LogEntry.data).order_by(LogEntry.idx)).all()
        assert [i for i, _ in rows] == list(range(len(rows)))
        tree, expected = merkle.Tree(), {}
        for i, data in rows:
            assert json.loads(data)["receipt"]["log_index"] == i
            for lv, ix, h in tree.append(merkle.leaf_hash(data.encode())):
                expected[merkle.node_key(lv, ix)] = h
        stored = {int(k): bytes(h) for k, h in s.execute(select(LogNode.key, LogNode.hash))}
        assert stored == expected
        assert log.root(s, len(rows)) == tree.root()
        return len(rows)


def test_a_rolled_back_append_is_not_remembered(app, scored, process):
    """The rolled-back receipt's index is taken again, and the leaf another process logged at
    that index meanwhile (the same size the rolled-back one left behind) is folded in, not
    the rolled-back one."""
    signer = app.extensions["lb_keyring"].signer()
    _token, dev, test = scored
    one, other = process(), process()
    size = _size(one)
    assert _issue(one, signer, dev, commit=False) == size
    assert _issue(one, signer, dev) == size  # the same index again
    assert _issue(one, signer, dev, commit=False) == size + 1
    # another process fills index size + 1: the size is what `one` left behind, not its tree
    assert _issue(other, signer, test) == size + 1
    assert _issue(one, signer, dev) == size + 2
    assert _check_log(one) == size + 3


def test_two_processes_interleaving(app, scored, process):
    signer = app.extensions["lb_keyring"].signer()
    _token, dev, test = scored
    a, b = process(), process()
    size = _size(a)
    got = [_issue(a, signer, dev), _issue(b, signer, test), _issue(b, signer, test),
           _issue(a, signer, dev), _issue(b, signer, dev), _issue(a, signer, test)]
    assert got == list(range(size, size + 6))
    assert _check_log(a) == size + 6
    with a() as s:  # each submission's receipts chain in log order
        for sid in (dev, test):
            chain = [json.loads(d)["receipt"] for d in s.scalars(
                select(LogEntry.data).where(LogEntry.submission_id == sid)
                .order_by(LogEntry.idx))]
            assert [c["previous_index"] for c in chain[1:]] == \
                [c["log_index"] for c in chain[:-1]]


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)  # SQLite: one writer
def test_two_processes_issuing_at_once(app, scored, process):
    """Two engines (two processes' worth of guesses) issue receipts at the same time: the
    log's lock orders them, and the tree stays that of the entries."""
    signer = app.extensions["lb_keyring"].signer()
    _token, dev, test = scored
    factories = [process(), process()]
    size = _size(factories[0])
    errors = []

    def run(factory, sid):
        try:
            for _ in range(15):
                _issue(factory, signer, sid)
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(f, sid))
               for f, sid in zip(factories, (dev, test))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert _check_log(factories[0]) == size + 30


def test_statements_per_receipt(app, scored, process, monkeypatch):
    """A receipt in steady state (the process appended last): the context, the score rows,
    the log's head with the receipt state, and the entry, its nodes and the state row in one
    statement on PostgreSQL (plus the lock; SQLite: three writes, no lock). Counted, not timed:
    perf/bench_receipts.py times them. On PostgreSQL counted at the driver's cursor (every
    statement, SQLAlchemy's and those the issuer runs on the driver's connection, `rawsql`)."""
    signer = app.extensions["lb_keyring"].signer()
    _token, dev, _test = scored
    factory = process()
    engine = factory.kw["bind"]
    _issue(factory, signer, dev)  # the process's guess of the size is now right
    seen: list[str] = []
    s = factory()
    try:
        s.execute(update(Submission).where(Submission.id == dev)
                  .values(selected=~Submission.selected))
        s.flush()
        # loaded before counting, as the scoring job's session has it when its commit issues
        sub = s.get(Submission, dev)  # noqa: F841  (held: the identity map is weak)

        def count(_conn, _cursor, statement, *_args):
            seen.append(statement)

        if engine.dialect.name == "postgresql":
            import psycopg

            execute = psycopg.Cursor.execute

            def counted(cur, query, *args, **kwargs):
                seen.append(str(query))
                return execute(cur, query, *args, **kwargs)
            monkeypatch.setattr(psycopg.Cursor, "execute", counted)
        else:
            event.listen(engine, "before_cursor_execute", count)
        try:
            assert Issuer(s, signer).issue_for(dev) is not None
        finally:
            if engine.dialect.name == "postgresql":
                monkeypatch.undo()
            else:
                event.remove(engine, "before_cursor_execute", count)
        s.commit()
    finally:
        s.close()
    expected = 5 if engine.dialect.name == "postgresql" else 6
    assert len(seen) == expected, "\n".join(seen)
