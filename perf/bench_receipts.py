"""Receipts and the transparency log (issue 27): issue cost, proofs at 1,000,000 entries, audit.

    .venv/bin/python perf/bench_receipts.py [--entries 1000000] [--audit 100000] [--subs 200]
        [--pg]

Three measurements, one JSON line each (docs/performance.md, "Receipts and the transparency
log"):

* ``issue``: the cost a scored submission's commit pays for its receipt. An app on SQLite (and
  PostgreSQL with ``--pg``) with the SynCred demo pack imported; ``--subs`` public submissions,
  each with the 156 score rows of a real test-split scoring (public/private/all parts, every
  slice); per submission, `Issuer.issue_for` (read the rows, canonical JSON, Ed25519 signature,
  append entry + tree nodes, receipt state) plus the flush, timed alone, the submission row
  already in the session (as in the scoring job's commit). Median and p95 wall time in ms, and
  the median CPU time of this process (on SQLite that includes the database's own work; on a
  loaded machine it is the better estimate of the cost).
* ``proof``: a log of ``--entries`` entries (bulk-loaded rows and their perfect-subtree nodes,
  built by `merkle.Tree`), then 2,000 inclusion proofs of random entries at the full size
  through `log.inclusion` (the API's service call: the node lookup in one query and the fold),
  and 200 through the HTTP API in-process (Flask test client). Each proof is checked once.
  Median/p99 ms, proof length and bytes. Also consistency proofs, and the signed head.
* ``audit``: a log of ``--audit`` signed receipts served by a real HTTP server (werkzeug,
  threaded), walked by `leaderboard.verify.audit.audit` (every entry fetched in pages of 1,000,
  parsed, signature checked, chain checked, tree rebuilt, root compared; boards compared).

The machine was shared with other work while measuring (2 cores): treat the numbers as upper
bounds.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cryptography.fernet import Fernet
from sqlalchemy import create_engine, insert, select, text

from leaderboard.core.transparency import merkle, receipts
from leaderboard.server.models import Base, Score, Submission, Team
from leaderboard.server.models.transparency import LogEntry, LogNode

PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


def _app(url: str, data_dir: Path):
    from leaderboard.server.web import create_app

    return create_app({"DATABASE_URL": url, "DATA_DIR": str(data_dir), "SECRET_KEY": "bench",
                       "LABEL_KEYS": Fernet.generate_key().decode(), "REDIS_URL": "",
                       "TESTING": True, "RATELIMIT_ENABLED": "0"})


def _pg_db() -> tuple[str, callable]:
    name = f"lb_bench_receipts_{uuid.uuid4().hex[:8]}"
    admin = create_engine(PG_ADMIN, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))

    def drop():
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
    return PG_ADMIN.rsplit("/", 1)[0] + f"/{name}", drop


def _ms(xs: list[float]) -> dict:
    xs = sorted(xs)
    return {"median_ms": round(1000 * statistics.median(xs), 3),
            "p95_ms": round(1000 * xs[int(0.95 * (len(xs) - 1))], 3),
            "p99_ms": round(1000 * xs[int(0.99 * (len(xs) - 1))], 3), "n": len(xs)}


def bench_issue(url: str, work: Path, subs: int, dialect: str) -> dict:
    from leaderboard.core.baselines import write_baseline
    from leaderboard.core.packs import load_pack
    from leaderboard.core.scoring import score_predictions
    from leaderboard.demo import generate
    from leaderboard.server.services.benchmarks import import_pack
    from leaderboard.server.transparency.issue import Issuer

    engine = create_engine(url)
    Base.metadata.create_all(engine)
    engine.dispose()
    app = _app(url, work / f"data-{dialect}")
    db = app.extensions["lb_db"]
    pack_dir = generate("syncred", work / "packs", scale="small", seed=0)
    with db.scope() as s:
        bench = import_pack(s, pack_dir, data_dir=app.config["DATA_DIR"],
                            label_keys=app.config["LABEL_KEYS"])
        bench_id = bench.id
    preds = work / "preds.jsonl"
    write_baseline(load_pack(pack_dir), "test", "random", preds, seed=1)
    result = score_predictions(load_pack(pack_dir), "test", preds)
    rows = [(part, r) for part, recs in result.parts.items() for r in recs]
    signer = app.extensions["lb_keyring"].signer()
    ids = []
    # rows made without the session hook (a plain engine): the receipts are issued below, timed
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    with db.engine.begin() as c:
        team = c.execute(insert(Team).values(name="bench", invite_code="bench",
                                             created_at=t0).returning(Team.id)).scalar_one()
        for i in range(subs):
            sid = c.execute(insert(Submission).values(
                benchmark_id=bench_id, split="test", team_id=team, kind="predictions",
                method_name=f"m{i}", is_public=True, status="scored", file_sha256="ab" * 32,
                created_at=t0 + timedelta(seconds=i), description="", paper_url="",
                code_url="", file_path="", file_size=0, attempts=1, hidden=False,
                is_baseline=False, selected=False, counts_toward_quota=True)
                .returning(Submission.id)).scalar_one()
            ids.append(sid)
            c.execute(insert(Score), [
                {"submission_id": sid, "part": part, "task": r.task, "metric": r.metric,
                 "slice_key": r.slice_key, "slice_json": dict(r.slice), "value": r.value,
                 "ci_low": r.ci_low, "ci_high": r.ci_high, "n": r.n, "judge": r.judge,
                 "metric_version": r.metric_version} for part, r in rows])
    times, cpu = [], []
    for sid in ids:
        s = db.Session()
        # without the hook's pending sets: only the timed call issues; the submission row is
        # loaded first, as the scoring job's session has it (store_result) when the hook runs
        try:
            # held: the identity map is weak, and an unreferenced row would be loaded again
            sub = s.get(Submission, sid)  # noqa: F841
            start, start_cpu = time.perf_counter(), time.process_time()
            issuer = Issuer(s, signer)
            assert issuer.issue_for(sid) is not None
            s.flush()
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
            s.commit()
        finally:
            s.close()
    size = len(ids)
    with db.Session() as s:
        assert s.scalar(select(LogEntry.idx).order_by(LogEntry.idx.desc()).limit(1)) == size - 1
    db.dispose()
    return {"measure": "issue", "db": dialect, "records_per_receipt": len(rows),
            "receipt_bytes": len(s_bytes(app, ids[-1])), **_ms(times),
            "cpu_median_ms": round(1000 * statistics.median(cpu), 3), "target_ms": 2.0}


def s_bytes(app, sid) -> bytes:
    from leaderboard.server.transparency.issue import latest_receipt

    with app.extensions["lb_db"].Session() as s:
        return latest_receipt(s, sid).encode()


def _fill_log(url: str, n: int, make_data) -> merkle.Tree:
    """Bulk-load ``n`` entries (``make_data(i)`` bytes) and every perfect node over them."""
    tree = merkle.Tree()
    engine = create_engine(url)
    chunk = 20_000
    now = datetime.now(UTC)
    with engine.begin() as c:
        for lo in range(0, n, chunk):
            entries, nodes = [], []
            for i in range(lo, min(n, lo + chunk)):
                data = make_data(i)
                entries.append({"idx": i, "data": data.decode(), "event": "scored",
                                "benchmark_key": "perf", "submission_id": i, "created_at": now})
                nodes += [{"key": merkle.node_key(lv, ix), "hash": h}
                          for lv, ix, h in tree.append(merkle.leaf_hash(data))]
            c.execute(insert(LogEntry), entries)
            c.execute(insert(LogNode), nodes)
    engine.dispose()
    return tree


def bench_proof(url: str, work: Path, n: int) -> dict:
    from leaderboard.server.transparency import log

    engine = create_engine(url)
    Base.metadata.create_all(engine)
    engine.dispose()
    t = time.perf_counter()
    tree = _fill_log(url, n, lambda i: b'{"entry":%d}' % i)
    load_s = time.perf_counter() - t
    app = _app(url, work / "data-proof")
    db = app.extensions["lb_db"]
    rng = random.Random(0)
    root = tree.root()
    times, lengths = [], []
    with db.Session() as s:
        for _ in range(2000):
            i = rng.randrange(n)
            start = time.perf_counter()
            p = log.inclusion(s, i, n)
            times.append(time.perf_counter() - start)
            lengths.append(len(p["proof"]))
        merkle.verify_inclusion(i, n, bytes.fromhex(p["leaf_hash"]),
                                [bytes.fromhex(h) for h in p["proof"]], root)
        ctimes = []
        for _ in range(500):
            m = rng.randrange(1, n)
            start = time.perf_counter()
            c = log.consistency(s, m, n)
            ctimes.append(time.perf_counter() - start)
        merkle.verify_consistency(m, n, tree.root(m), root, [bytes.fromhex(h) for h in c["proof"]])
        start = time.perf_counter()
        head = log.signed_head(s, app.extensions["lb_keyring"].signer())
        head_s = time.perf_counter() - start
        assert head["head"]["root_hash"] == root.hex()
    client = app.test_client()
    http_times = []
    for _ in range(200):
        i = rng.randrange(n)
        start = time.perf_counter()
        resp = client.get(f"/api/v1/log/proof/inclusion?index={i}")
        http_times.append(time.perf_counter() - start)
        assert resp.status_code == 200
    db.dispose()
    return {"measure": "proof", "entries": n, "load_s": round(load_s, 1),
            "proof_hashes_max": max(lengths), "proof_bytes_max": 32 * max(lengths),
            "inclusion": _ms(times), "inclusion_http": _ms(http_times),
            "consistency": _ms(ctimes), "signed_head_ms": round(1000 * head_s, 3),
            "target_ms": 5.0}


def bench_audit(url: str, work: Path, n: int) -> dict:
    from werkzeug.serving import make_server

    from leaderboard.verify.audit import audit
    from leaderboard.verify.remote import Server

    engine = create_engine(url)
    Base.metadata.create_all(engine)
    engine.dispose()
    app = _app(url, work / "data-audit")
    signer = app.extensions["lb_keyring"].signer()
    when = datetime.now(UTC)
    records = [receipts.record(part="all", task="detection", metric=m, slice={}, value=v,
                               ci_low=v - 0.05, ci_high=v + 0.05, n=500)
               for m, v in (("accuracy", 0.61), ("fpr", 0.2), ("ap", 0.7))]

    def make(i: int) -> bytes:
        body = receipts.build_body(
            log_index=i, previous_index=None, event="scored", issued_at=when,
            key_id=signer.key_id, benchmark={"key": "perf", "version": "1", "revealed": False},
            pack={"digest": None, "benchmark_yaml": None, "items": None},
            submission={"id": i, "split": "dev", "kind": "predictions", "team": f"t{i}",
                        "method": "m", "submitted_at": "2026-01-01T00:00:00.000000Z",
                        "status": "scored", "hidden": False, "disqualified": None,
                        "public": True, "selected": False, "baseline": None},
            input={"predictions_sha256": None}, records=records, shown_parts={"all"},
            salt="00" * 32)
        return receipts.encode(receipts.sign(body, signer))

    t = time.perf_counter()
    _fill_log(url, n, make)
    load_s = time.perf_counter() - t
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        start = time.perf_counter()
        report = audit(Server(f"http://127.0.0.1:{server.server_port}"))
        audit_s = time.perf_counter() - start
    finally:
        server.shutdown()
        thread.join(10)
    app.extensions["lb_db"].dispose()
    assert report.size == n and not report.findings, report.findings[:3]
    return {"measure": "audit", "entries": n, "load_s": round(load_s, 1),
            "audit_s": round(audit_s, 2), "entries_per_s": round(n / audit_s),
            "target_s": 60.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=1_000_000)
    ap.add_argument("--audit", type=int, default=100_000)
    ap.add_argument("--subs", type=int, default=200)
    ap.add_argument("--pg", action="store_true", help="also measure the issue cost on PostgreSQL")
    ap.add_argument("--only", choices=["issue", "proof", "audit"])
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.only in (None, "issue"):
            print(json.dumps(bench_issue(f"sqlite:///{work / 'issue.db'}", work, args.subs,
                                         "sqlite")), flush=True)
            if args.pg:
                url, drop = _pg_db()
                try:
                    print(json.dumps(bench_issue(url, work, args.subs, "postgresql")),
                          flush=True)
                finally:
                    drop()
        if args.only in (None, "proof"):
            print(json.dumps(bench_proof(f"sqlite:///{work / 'proof.db'}", work, args.entries)),
                  flush=True)
        if args.only in (None, "audit"):
            print(json.dumps(bench_audit(f"sqlite:///{work / 'audit.db'}", work, args.audit)),
                  flush=True)


if __name__ == "__main__":
    main()
