"""A submission's receipt: built from its rows, issued only when what it shows has changed.

`issue_for` is called by `leaderboard.server.transparency.hook` before every commit that touched
a submission (scores, status, hidden, disqualified, team, selection) or revealed a benchmark's
private part. It builds the receipt body from the rows as they will commit, compares the digest
of everything but the log fields with the submission's `ReceiptState`, and when it differs signs
the receipt, appends it to the log and records the new state, in the same transaction.

Which submissions: a public (``is_public``) submission gets its first receipt when it is first
scored; after that every change is logged, including leaving the board (``unscored`` while it is
rescored, ``withdrawn``). Private submissions are never logged: the log is public and would name
them. Which parts: a split without parts shows "all"; with parts, only "public" until the
benchmark reveals its private part, then everything (`shown_parts`), with the salt that opens the
earlier sealed commitments. None at all while the submission has never been on a board (hidden
before it was first scored, `disclosed`): its values are committed and sealed like a private
part, and shown from its first receipt on the boards (``unhidden``) on.
"""
from __future__ import annotations

import os
import secrets
from datetime import UTC, datetime
from pathlib import Path

import orjson
from sqlalchemy import Text, bindparam, cast, func, select
from sqlalchemy.exc import NoResultFound
from sqlalchemy.orm import Session

from leaderboard.core.errors import PackError
from leaderboard.core.transparency import receipts
from leaderboard.core.transparency.canonical import MAX_INT, CanonicalError, digest
from leaderboard.core.transparency.signing import Signer, format_time
from leaderboard.server.models import Benchmark, Score, Submission, Team
from leaderboard.server.models.containers import ContainerRun
from leaderboard.server.models.transparency import LogEntry, ReceiptState
from leaderboard.server.transparency import rawsql
from leaderboard.server.transparency.log import Appender

#: pack digests by (pack path, split, stat of both files): hashing items.jsonl once per process
_PACK_CACHE: dict[tuple, dict] = {}
_NO_PACK = {"digest": None, "benchmark_yaml": None, "items": None}


def _stat(path: str):
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def pack_digests(pack_path: str, split: str) -> dict:
    """`receipts.pack_digests` of the server's copy of the pack, cached by the files' stat;
    null digests when the files are missing or unreadable (a receipt is still issued, saying
    so)."""
    # plain strings for the two stat calls every receipt makes (no Path objects)
    key = (str(pack_path), split, _stat(os.path.join(pack_path, "benchmark.yaml")),
           _stat(os.path.join(pack_path, "splits", split, "items.jsonl")))
    if None in key[2:]:
        return dict(_NO_PACK)
    found = _PACK_CACHE.get(key)
    if found is None:
        if len(_PACK_CACHE) > 256:
            _PACK_CACHE.clear()
        try:
            found = receipts.pack_digests(Path(pack_path), split)
        except (OSError, PackError):  # a copy changed on disk since its import was checked
            return dict(_NO_PACK)
        _PACK_CACHE[key] = found
    return dict(found)


def shown_parts(parts: set[str], revealed: bool, *, disclosed: bool = True) -> set[str]:
    """The parts a receipt shows: none until the submission's values are ``disclosed``, then
    "public" until the reveal, then every part."""
    if not disclosed:
        return set()
    if "public" in parts and not revealed:
        return {"public"}
    return set(parts)


def disclosed(old_flags: dict | None, fields: dict) -> bool:
    """Whether a receipt may show values: once the submission has been on the boards (scored,
    public, not hidden), for good (what was shown stays shown). A submission hidden before it
    was first scored was never on a board: its receipts seal every part, as the private part
    is sealed, until it is unhidden (issue 36). Receipt states from before this rule showed
    values from the first receipt (no ``disclosed`` flag: True)."""
    if old_flags is not None and old_flags.get("disclosed", True):
        return True
    s = fields["submission"]
    return s["status"] == "scored" and s["public"] and not s["hidden"]


def _real(x) -> str | None:
    """`canonical.encode_real` for stored values; a non-finite one (never written by the
    scorer, which stores None) is shown as n/a rather than failing the commit."""
    # x - x is 0.0 exactly for a finite number, NaN for NaN and the infinities
    if x is None or x - x != 0.0:
        return None
    return repr(x + 0.0)


#: canonical slice objects by the stored JSON text of ``Score.slice_json`` (a benchmark has a
#: few dozen distinct slices: each is parsed once per process, not once per record)
_SLICES: dict[str | None, dict] = {}
_SCORES = Score.__table__.c
#: the score rows a receipt shows, in Core (no ORM objects or per-row JSON type processing);
#: the slice as its stored text, parsed through `_SLICES`
_RECORDS_SQL = select(
    _SCORES.part, _SCORES.task, _SCORES.metric, cast(_SCORES.slice_json, Text), _SCORES.value,
    _SCORES.ci_low, _SCORES.ci_high, _SCORES.n, _SCORES.judge, _SCORES.metric_version,
).where(_SCORES.submission_id == bindparam("sid"))
#: PostgreSQL: the same columns as one JSON array of arrays, one text value (a row of ten
#: columns costs the driver more than orjson parsing its JSON). The reals are float8 printed by
#: the server, as the row reader gets them (the text protocol): the shortest string that reads
#: back to the same double (PostgreSQL 12 on, unless extra_float_digits is set below 1); a
#: non-finite one is the string "NaN"/"Infinity", shown as n/a as in the row reader
_RECORDS_JSON_SQL = select(cast(func.json_agg(func.json_build_array(
    *_RECORDS_SQL.selected_columns)), Text)).where(_SCORES.submission_id == bindparam("sid"))
_DUMPS_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER


def _slice(text: str | None) -> dict:
    """The receipt form of a stored slice (``{str: str}``, ``{}`` for none); the returned dict
    is shared: callers never change it."""
    found = _SLICES.get(text)
    if found is None:
        value = orjson.loads(text) if text else None
        found = {str(k): str(v) for k, v in value.items()} if value else {}
        if len(_SLICES) > 4096:
            _SLICES.clear()
        _SLICES[text] = found
    return found


#: the canonical JSON of a record around its reals and count, by the stored fields: the keys
#: sorted (ci_high, ci_low, judge, metric, metric_version, n, part, slice, task, value), so a
#: record's bytes are ci_high, ci_low, `_MIDDLES`, n, `_TAILS`, value and the closing brace
#: (judge, metric, metric_version) -> ',"judge":..,"metric":..,"metric_version":..,"n":'
_MIDDLES: dict[tuple, str] = {}
#: (part, stored slice text, task) -> ',"part":..,"slice":..,"task":..,"value":'
_TAILS: dict[tuple, str] = {}


def _json(value) -> str:
    return orjson.dumps(value, option=_DUMPS_OPTIONS).decode()


def _middle(key: tuple) -> str:
    judge, metric, version = key
    found = ',"judge":%s,"metric":%s,"metric_version":%s,"n":' % (
        _json(judge), _json(metric), _json(str(version)))
    if len(_MIDDLES) > 4096:
        _MIDDLES.clear()
    _MIDDLES[key] = found
    return found


def _tail(key: tuple) -> str:
    part, slice_text, task = key
    found = ',"part":%s,"slice":%s,"task":%s,"value":' % (
        _json(part), _json(_slice(slice_text)), _json(task))
    if len(_TAILS) > 4096:
        _TAILS.clear()
    _TAILS[key] = found
    return found


def _read_encoded(session: Session, sub_id: int) -> list[tuple[bytes, str]]:
    """The submission's score rows as receipt records (`receipts.record`'s form), each as
    (its canonical bytes, its part), in `receipts.sort_records`' order (by those bytes).

    The bytes are assembled from cached JSON of the fields a benchmark repeats (judge, metric,
    version; part, slice, task) around each record's three reals and count, not from a dict
    per record (byte for byte ``canonical_bytes(record)``: `test_issue_records.py`)."""
    conn = session.connection()
    if rawsql.usable(conn):
        text = rawsql.execute(rawsql.cursor(conn), conn, _RECORDS_JSON_SQL,
                              {"sid": sub_id}).fetchone()[0]
        rows = orjson.loads(text or "[]")
    elif conn.dialect.name == "postgresql":
        rows = orjson.loads(conn.execute(_RECORDS_JSON_SQL, {"sid": sub_id}).scalar() or "[]")
    else:
        rows = conn.execute(_RECORDS_SQL, {"sid": sub_id}).all()
    middles, tails = _MIDDLES, _TAILS
    keyed = []
    # `_real` inlined (three calls a record, a few hundred a receipt): x - x is 0.0 exactly
    # for a finite number (an int from JSON too), NaN for NaN and the infinities; a string is
    # PostgreSQL's JSON for a non-finite float8. A real's repr needs no JSON escaping
    for p, t, m, sl, v, lo, hi, n, j, mv in rows:
        key = (j, m, mv)
        middle = middles.get(key) or _middle(key)
        key = (p, sl, t)
        tail = tails.get(key) or _tail(key)
        n = int(n or 0)
        if not -MAX_INT <= n <= MAX_INT:
            raise CanonicalError(f"a record's n {n} is outside +-(2**53 - 1)")
        keyed.append((
            ('{"ci_high":' + ("null" if hi is None or hi.__class__ is str or hi - hi != 0.0
                              else f'"{hi + 0.0!r}"')
             + ',"ci_low":' + ("null" if lo is None or lo.__class__ is str or lo - lo != 0.0
                               else f'"{lo + 0.0!r}"')
             + middle + str(n) + tail
             + ("null" if v is None or v.__class__ is str or v - v != 0.0
                else f'"{v + 0.0!r}"') + "}").encode(), p))
    keyed.sort()
    return keyed


def _read_records(session: Session, sub_id: int) -> tuple[list[dict], list[bytes]]:
    """The submission's score rows as receipt records, sorted (`receipts.record`'s form, in
    `receipts.sort_records`' order: by each record's canonical bytes), and those bytes."""
    encoded = [b for b, _ in _read_encoded(session, sub_id)]
    return [orjson.loads(b) for b in encoded], encoded


def _records(session: Session, sub_id: int) -> list[dict]:
    """The records of `_read_records` alone."""
    return _read_records(session, sub_id)[0]


def _input(session: Session, sub: Submission) -> dict:
    sha = f"sha256:{sub.file_sha256}" if sub.file_sha256 else None
    if sub.kind != "container":
        return {"predictions_sha256": sha}
    image = session.scalar(select(ContainerRun.image_id)
                           .where(ContainerRun.submission_id == sub.id)
                           .order_by(ContainerRun.id.desc()).limit(1))
    return {"image_digest": image, "upload_sha256": sha}


def release_fields(key: str, family: str | None, release: int | None) -> dict:
    """The release a receipt names (issue 37): ``{"family", "release"}`` for a release other
    than a family's first (key ``<family>-v<N>``), nothing for release 1, whose key is the
    family's name. A receipt without them is release 1's: receipts (and receipt state
    digests) of benchmarks from before releases stay byte for byte what they were, so adding
    releases re-issues nothing."""
    family = family or key
    if (release or 1) == 1 and family == key:
        return {}
    return {"family": family, "release": int(release or 1)}


def _time(t: datetime | None) -> str | None:
    return None if t is None else format_time(t)


_BENCH = Benchmark.__table__.c
_TEAM = Team.__table__.c
_STATE = ReceiptState.__table__
#: what a receipt shows of the benchmark and the team, and the submission's receipt state
#: (salt null: none yet), in one round trip (no ORM objects)
_CONTEXT_SQL = select(
    _BENCH.key, _BENCH.version, _BENCH.private_revealed, _BENCH.pack_path, _TEAM.name,
    _STATE.c.salt, _STATE.c.state_digest, _STATE.c.last_index, _STATE.c.flags_json,
    _BENCH.family, _BENCH.release,
).select_from(
    Benchmark.__table__
    .outerjoin(Team.__table__, _TEAM.id == bindparam("team_id"))
    .outerjoin(_STATE, _STATE.c.submission_id == bindparam("sid"))
).where(_BENCH.id == bindparam("bench_id"))


def _context(session: Session, sub: Submission):
    conn = session.connection()
    params = {"team_id": sub.team_id, "sid": sub.id, "bench_id": sub.benchmark_id}
    if rawsql.usable(conn):
        row = rawsql.execute(rawsql.cursor(conn), conn, _CONTEXT_SQL, params).fetchone()
        if row is None:
            raise NoResultFound(f"submission {sub.id}'s benchmark {sub.benchmark_id} is missing")
        return row
    return conn.execute(_CONTEXT_SQL, params).one()


def _fields(sub: Submission, context, input: dict) -> dict:
    key, version, revealed, pack_path, team = context[:5]
    return {
        "benchmark": {"key": key, "version": version, "revealed": bool(revealed),
                      **release_fields(key, context.family, context.release)},
        "pack": pack_digests(pack_path, sub.split),
        "submission": {"id": sub.id, "split": sub.split, "kind": sub.kind, "team": team,
                       "method": sub.method_name, "submitted_at": _time(sub.created_at),
                       "status": sub.status, "hidden": bool(sub.hidden),
                       "disqualified": sub.disqualified_reason, "public": bool(sub.is_public),
                       "selected": bool(sub.selected),
                       "baseline": (sub.baseline_kind or "baseline") if sub.is_baseline
                       else None},
        "input": input,
    }


def state_of(session: Session, sub: Submission, context=None) -> tuple[dict, list[dict]]:
    """(the receipt's fields other than the log's, every record) of ``sub`` as it stands in
    the database (the caller flushes first: `Issuer.issue_for` does); ``context``: its
    `_context` row when the caller read it already."""
    context = context or _context(session, sub)
    return _fields(sub, context, _input(session, sub)), _records(session, sub.id)


def _flags(fields: dict, commitment: str, shown_values: bool) -> dict:
    s = fields["submission"]
    return {"status": s["status"], "hidden": s["hidden"], "disqualified": bool(s["disqualified"]),
            "public": s["public"], "revealed": fields["benchmark"]["revealed"],
            "commitment": commitment, "disclosed": shown_values}


def event_for(old: dict | None, new: dict) -> str:
    """The event a receipt names, from the flags of the previous receipt and of this one."""
    if not old:
        return "scored"
    if old["status"] == "scored" and new["status"] != "scored":
        return "unscored"
    if old["public"] and not new["public"]:
        return "withdrawn"
    if new["revealed"] and not old["revealed"]:
        return "revealed"
    if new["disqualified"] != old["disqualified"]:
        return "disqualified" if new["disqualified"] else "reinstated"
    if new["hidden"] != old["hidden"]:
        return "hidden" if new["hidden"] else "unhidden"
    if new["commitment"] != old["commitment"] or new["status"] != old["status"]:
        return "rescored"
    return "updated"


#: a submission's receipt state (again, under the log's lock: read with the log's head by
#: `Appender`, or alone for a commit's later receipts), read and written in Core (the issuer's
#: only use of it: an ORM copy another part of the same session loaded is not refreshed by the
#: issuer's write)
_STATE_SQL = select(_STATE.c.salt, _STATE.c.state_digest, _STATE.c.last_index,
                    _STATE.c.flags_json).where(_STATE.c.submission_id == bindparam("sid"))
_STATE_VALUES = {"last_index": bindparam("st_index"), "state_digest": bindparam("st_digest"),
                 "flags_json": bindparam("st_flags", type_=_STATE.c.flags_json.type)}
_INSERT_STATE = _STATE.insert().values(submission_id=bindparam("st_sid"),
                                       salt=bindparam("st_salt"), **_STATE_VALUES)
_UPDATE_STATE = _STATE.update().where(
    _STATE.c.submission_id == bindparam("st_sid")).values(**_STATE_VALUES)


def _state(session: Session, sub_id: int):
    conn = session.connection()
    if rawsql.usable(conn):
        return rawsql.execute(rawsql.cursor(conn), conn, _STATE_SQL, {"sid": sub_id}).fetchone()
    return conn.execute(_STATE_SQL, {"sid": sub_id}).one_or_none()


class Issuer:
    """Issues the receipts of one commit (one `Appender`, taken on the first receipt)."""

    def __init__(self, session: Session, signer: Signer):
        self.session = session
        self.signer = signer
        self.appender: Appender | None = None
        self.issued: list[int] = []

    def issue_for(self, sub_id: int, *, now: datetime | None = None) -> int | None:
        """Issue ``sub_id``'s receipt if what it shows changed; returns its log index.

        The receipt state is read again once the log's lock is held: two transactions that
        change the same submission at once then chain their receipts (``previous_index``) in
        commit order, and never both create its state."""
        session = self.session
        session.flush()  # the statements below read the database, not the session
        sub = session.get(Submission, sub_id)
        if sub is None:
            return None
        context = _context(session, sub)
        state = context if context.salt is not None else None
        if state is None and not (sub.status == "scored" and sub.is_public):
            return None
        fields = _fields(sub, context, _input(session, sub))
        keyed = _read_encoded(session, sub.id)
        encoded = [b for b, _ in keyed]
        parts = {p for _, p in keyed}

        def shown_after(old_flags: dict | None) -> set[str]:
            return shown_parts(parts, fields["benchmark"]["revealed"],
                               disclosed=disclosed(old_flags, fields))

        shown = shown_after(state.flags_json if state is not None else None)

        def digest_with(salt: str) -> tuple[str, str]:
            commitment = receipts.commitment_of_encoded(encoded, salt)
            # a split without parts shows the same whether or not the private part is
            # revealed: the reveal is no change of its receipt
            seen = fields if "public" in parts else {
                **fields, "benchmark": {**fields["benchmark"], "revealed": None}}
            return commitment, digest({**seen, "shown": sorted(shown), "commitment": commitment})

        if state is not None and digest_with(state.salt)[1] == state.state_digest:
            return None
        if self.appender is None:
            # the log's lock, to the end of the transaction; the state read with the head
            self.appender = Appender(session, along=_STATE_SQL, params={"sid": sub_id})
            state = self.appender.along_row
        else:
            state = _state(session, sub_id)
        shown = shown_after(state.flags_json if state is not None else None)
        salt = state.salt if state is not None else secrets.token_hex(32)
        commitment, state_digest = digest_with(salt)
        if state is not None and state.state_digest == state_digest:
            return None  # another transaction logged this very state meanwhile
        flags = _flags(fields, commitment, disclosed(
            state.flags_json if state is not None else None, fields))
        event = event_for(state.flags_json if state is not None else None, flags)
        now = now or datetime.now(UTC)
        index = self.appender.next_index
        body, shown_records = receipts.build_body_encoded(
            log_index=index,
            previous_index=state.last_index if state is not None else None, event=event,
            issued_at=now, key_id=self.signer.key_id, records=keyed, shown_parts=shown,
            salt=salt, records_commitment=commitment, **fields)
        # the state row written with the entry (one statement on PostgreSQL)
        write = {"st_sid": sub.id, "st_index": index, "st_digest": state_digest,
                 "st_flags": flags}
        if state is None:
            along, write["st_salt"] = _INSERT_STATE, salt
        else:
            along = _UPDATE_STATE
        self.appender.append(receipts.sign_encoded(body, self.signer, records=shown_records),
                             event=event,
                             benchmark_key=fields["benchmark"]["key"], submission_id=sub.id,
                             now=now, along=along, params=write)
        self.issued.append(index)
        return index


def candidates_of_benchmark(session: Session, benchmark_id: int) -> list[int]:
    """Submissions of a benchmark a reveal may change the receipt of: logged ones, and scored
    public ones (a first receipt, should one be missing)."""
    logged = session.scalars(select(ReceiptState.submission_id).join(
        Submission, Submission.id == ReceiptState.submission_id)
        .where(Submission.benchmark_id == benchmark_id)).all()
    scored = session.scalars(select(Submission.id).where(
        Submission.benchmark_id == benchmark_id, Submission.status == "scored",
        Submission.is_public.is_(True))).all()
    return sorted(set(logged) | set(scored))


def latest_receipt(session: Session, sub_id: int) -> str | None:
    """The submission's last receipt (canonical JSON), or None when it has none."""
    return session.scalar(select(LogEntry.data).where(LogEntry.submission_id == sub_id)
                          .order_by(LogEntry.idx.desc()).limit(1))


def receipt_indexes(session: Session, sub_id: int) -> list[int]:
    return [int(i) for i in session.scalars(select(LogEntry.idx).where(
        LogEntry.submission_id == sub_id).order_by(LogEntry.idx))]


