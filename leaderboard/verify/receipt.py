"""``leaderboard verify RECEIPT.json``: every check a reader can make of one receipt.

In order, stopping at the first failure (each its own exit code, `leaderboard.core.
transparency.errors`): the file is a receipt (2); its signature verifies (3) under a key the
server publishes for the receipt's time (4); with a server, the log's signed tree head verifies,
the log holds this very receipt at its ``log_index`` and the inclusion proof leads to the head's
root (5); with a saved head, the current head extends it (consistency proof, 6); with the pack
and the predictions file, both are the ones the receipt names (8) and scoring them here gives
the receipt's numbers exactly (7). Last, with a server, whether the log holds a later receipt of
the same submission (`check_current`): a genuine but superseded receipt exits 11, naming the
entry that superseded it and why (hidden, rescored, disqualified, ...). Judge-made records are
compared only when the same judge is given (``--judge``); the others are recomputed with the
server's code and seed.
"""
from __future__ import annotations

from pathlib import Path

from leaderboard.core.transparency import merkle, receipts
from leaderboard.core.transparency.errors import (
    LogForked,
    Malformed,
    NotInLog,
    ScoresDiffer,
    Superseded,
    Unreachable,
    WrongFile,
)
from leaderboard.core.transparency.signing import KeySet
from leaderboard.verify.remote import Server


def check_head(doc: dict, keys: KeySet, *, what: str = "tree head") -> tuple[int, bytes]:
    """(size, root) of a signed tree head whose signature verifies."""
    doc = receipts.load(doc, what="tree head")
    receipts.check_signature(doc, keys)
    return doc["head"]["tree_size"], receipts.head_root(doc)


def check_inclusion(server: Server, keys: KeySet, doc: dict) -> tuple[int, bytes, list[str]]:
    """NotInLog unless the server's log holds ``doc`` at its index under a signed head."""
    body = doc["receipt"]
    index = body["log_index"]
    size, root = check_head(server.head(), keys)
    if not isinstance(index, int) or not 0 <= index < size:
        raise NotInLog(f"the receipt says log entry {index}, but the log's signed head covers "
                       f"{size} entries")
    data = receipts.encode(doc)
    try:
        stored = server.entry(index)
    except LookupError:
        raise NotInLog(f"the log has no entry {index} (it was removed)") from None
    if stored.encode("utf-8") != data:
        raise NotInLog(f"log entry {index} is a different document than this receipt")
    try:
        proof = server.inclusion(index, size)
        merkle.verify_inclusion(index, size, merkle.leaf_hash(data), proof, root)
    except (LookupError, merkle.ProofError) as exc:
        raise NotInLog(f"entry {index} is not proven in the tree of {size} entries: {exc}") \
            from None
    return size, root, [f"in the log: entry {index}, inclusion proof of {len(proof)} hashes "
                        f"checked against the signed head of {size} entries "
                        f"(root {root.hex()[:16]}...)"]


def check_consistency(server: Server, keys: KeySet, saved: dict, size: int,
                      root: bytes) -> list[str]:
    """LogForked unless the tree of ``size`` entries (``root``) extends the saved head."""
    old_size, old_root = check_head(saved, keys, what="saved tree head")
    if old_size > size:
        raise LogForked(f"the log shrank: the saved head has {old_size} entries, the server's "
                        f"head {size}")
    try:
        proof = server.consistency(old_size, size)
        merkle.verify_consistency(old_size, size, old_root, root, proof)
    except (LookupError, merkle.ProofError) as exc:
        raise LogForked(f"the log of {size} entries does not extend the saved head of "
                        f"{old_size} entries: {exc}") from None
    return [f"consistent with the saved head: {old_size} -> {size} entries "
            f"({len(proof)} hashes)"]


#: at most this many receipts walked back from a submission's latest to the one checked
MAX_CHAIN = 10_000


def check_current(server: Server, keys: KeySet, doc: dict) -> tuple[list[str], str | None]:
    """Whether ``doc`` (in the log already: `check_inclusion`) is its submission's latest
    receipt: (report lines, None) when it is, (lines, the reason) when a later receipt of the
    same submission is in the log.

    Checked against the log, not taken on the server's word: the server names the submission's
    latest receipt (``/api/v1/submissions/<id>/receipt``); it and every receipt its
    ``previous_index`` links pass through on the way back to ``doc``'s entry are signed and
    proven in the log under one signed head (inclusion proofs of their exact bytes), and the
    links must lead to ``doc``'s entry. A server that answered with an older receipt than its
    log holds is caught by ``audit-log``, which walks every entry and each submission's
    chain."""
    body = doc["receipt"]
    index, sid = body["log_index"], body["submission"]["id"]
    try:
        data, latest = _logged(server.text(f"/api/v1/submissions/{sid}/receipt"), keys,
                               f"submission {sid}'s latest receipt")
    except LookupError:
        raise NotInLog(f"the server has no receipt of submission {sid}, but its log holds "
                       f"this one at entry {index}") from None
    last = latest["log_index"]
    if latest["submission"]["id"] != sid or not isinstance(last, int) or last < index:
        raise NotInLog(f"the server's latest receipt of submission {sid} is entry {last}, "
                       f"older than this receipt (entry {index}) or another submission's")
    if last == index:
        if data != receipts.encode(doc):
            raise NotInLog(f"the server's latest receipt of submission {sid} is another "
                           f"document than this one at entry {index}")
        return [f"current: entry {index} is submission {sid}'s latest receipt"], None
    size, root = check_head(server.head(), keys)
    chain = [latest]  # newest first, back to the receipt right after ``doc``'s
    while True:
        b = chain[-1]
        _prove(server, data, b["log_index"], size, root, sid)
        prev = b["previous_index"]
        if prev == index:
            break
        if not isinstance(prev, int) or prev < index or len(chain) >= MAX_CHAIN:
            raise NotInLog(f"submission {sid}'s receipts from entry {last} back do not lead "
                           f"to entry {index} (entry {b['log_index']} says its previous "
                           f"receipt is {prev})")
        try:
            data, found = _logged(server.entry(prev), keys, f"log entry {prev}")
        except LookupError:
            raise NotInLog(f"the log has no entry {prev}, named by entry "
                           f"{b['log_index']}") from None
        if found["log_index"] != prev or found["submission"]["id"] != sid:
            raise NotInLog(f"log entry {prev} is not submission {sid}'s receipt {prev}")
        chain.append(found)
    after = chain[-1]
    later = ", ".join(f"{b['log_index']} ({b['event']})" for b in reversed(chain))
    reason = (f"superseded by entry {after['log_index']} ({after['event']}): submission "
              f"{sid}'s current receipt is entry {last} ({latest['event']})")
    return [f"later receipts of submission {sid} in the log: {later}"], reason


def _logged(text: str, keys: KeySet, what: str) -> tuple[bytes, dict]:
    """(the bytes, the body) of a receipt the server served as the log stores it: canonical,
    signed by a published key (3, 4); a document that is not a receipt is the server's fault
    (exit 9)."""
    data = text.encode("utf-8")
    try:
        return data, receipts.check_entry(data, keys)["receipt"]
    except Malformed as exc:
        raise Unreachable(f"the server's {what} is not a receipt: {exc}") from None


def _prove(server: Server, data: bytes, index, size: int, root: bytes, sid: int) -> None:
    """NotInLog unless ``data`` is log entry ``index`` of the tree of ``size`` (``root``)."""
    if not isinstance(index, int) or not 0 <= index < size:
        raise NotInLog(f"submission {sid}'s receipt {index} is outside the signed head's "
                       f"{size} entries")
    try:
        merkle.verify_inclusion(index, size, merkle.leaf_hash(data),
                                server.inclusion(index, size), root)
    except (LookupError, merkle.ProofError) as exc:
        raise NotInLog(f"submission {sid}'s receipt {index} is not proven in the log of "
                       f"{size} entries: {exc}") from None


def _key(r: dict) -> tuple:
    return (r["part"], r["task"], r["metric"], tuple(sorted(r["slice"].items())))


def check_scores(body: dict, pack_dir: Path, predictions: Path, *, judge=None) -> list[str]:
    """WrongFile / ScoresDiffer unless these files are the receipt's and score the same."""
    from leaderboard.core.errors import LeaderboardError
    from leaderboard.core.packs import load_pack
    from leaderboard.core.scoring import score_predictions

    split = body["submission"]["split"]
    want = body["input"].get("predictions_sha256")
    got = receipts.sha256_file(predictions)
    if want is None:
        raise WrongFile("the receipt names no predictions file (a container submission's "
                        "predictions are not published)")
    if got != want:
        raise WrongFile(f"{predictions} is not the file this receipt scored: its SHA-256 is "
                        f"{got}, the receipt's {want}")
    try:
        mine = receipts.pack_digests(pack_dir, split)
    except (OSError, LeaderboardError) as exc:
        raise WrongFile(f"{pack_dir} is not a pack with split {split!r}: {exc}") from None
    # receipts issued before issue 33 digest the server's benchmark.yaml as it is, unnarrowed:
    # the same file, byte for byte, is as binding
    whole = receipts.sha256_file(Path(pack_dir) / "benchmark.yaml")
    accepted = {"benchmark_yaml": (mine["benchmark_yaml"], whole), "items": (mine["items"],)}
    for field, ok in accepted.items():
        if body["pack"].get(field) not in (None, *ok):
            name = "benchmark.yaml" if field == "benchmark_yaml" else f"splits/{split}/items.jsonl"
            raise WrongFile(f"{pack_dir}/{name} differs from the server's pack ({mine[field]}, "
                            f"the receipt's {body['pack'][field]})")
    try:
        pack = load_pack(pack_dir)
        if not pack.labels_path(split).exists():
            raise WrongFile(f"{pack_dir} has no labels for split {split!r}: scores can be "
                            "recomputed only on a split whose labels you hold (dev)")
        result = score_predictions(pack, split, predictions, judge=judge)
    except (LeaderboardError, FileNotFoundError, ValueError) as exc:
        raise WrongFile(f"scoring {predictions} on {pack_dir} failed: {exc}") from None
    local = {}
    for part, recs in result.parts.items():
        for r in recs:
            rec = receipts.record(part=part, task=r.task, metric=r.metric, slice=r.slice,
                                  value=r.value, ci_low=r.ci_low, ci_high=r.ci_high, n=r.n,
                                  judge=r.judge, metric_version=r.metric_version)
            local[_key(rec)] = rec
    diffs, checked, judged = [], 0, set()
    for r in body["records"]:
        if r["judge"] is not None and (judge is None or r["judge"] != local.get(
                _key(r), {}).get("judge")):
            judged.add(r["judge"])
            continue
        mine_r = local.get(_key(r))
        checked += 1
        if mine_r is None:
            diffs.append(f"{r['task']}/{r['metric']} {r['slice'] or 'overall'} ({r['part']}): "
                         "not produced here")
            continue
        for field in ("value", "ci_low", "ci_high", "n", "metric_version"):
            if mine_r[field] != r[field]:
                diffs.append(f"{r['task']}/{r['metric']} {r['slice'] or 'overall'} "
                             f"({r['part']}): {field} is {mine_r[field]} here, "
                             f"{r[field]} in the receipt")
    if diffs:
        raise ScoresDiffer(f"{len(diffs)} of {checked} records differ:\n  "
                           + "\n  ".join(diffs[:20]))
    lines = [f"scores recomputed: {checked} records equal the receipt's exactly",
             f"predictions file: {got}"]
    if judged:
        lines.append(f"not recomputed: records of judge(s) {', '.join(sorted(judged))} "
                     "(pass --judge with the same judge)")
    return lines


def verify(data: bytes, *, keys: KeySet, server: Server | None = None,
           saved_head: dict | None = None, pack_dir: Path | None = None,
           predictions: Path | None = None, judge=None) -> tuple[list[str], dict | None]:
    """Run every check the arguments allow; (report lines, the server's head or None)."""
    doc = receipts.load(data)
    body = doc["receipt"]
    key = receipts.check_signature(doc, keys)
    lines = [f"signature: valid, key {key.key_id} (valid at {body['issued_at']})"]
    if receipts.check_commitment(body):
        lines.append("records commitment: matches the full record set (nothing sealed)")
    else:
        lines.append(f"sealed parts: {', '.join(body['sealed_parts'])} (committed to, not shown)")
    head, superseded = None, None
    if server is not None:
        size, root, more = check_inclusion(server, keys, doc)
        lines += more
        head = server.head(size)
        if saved_head is not None:
            lines += check_consistency(server, keys, saved_head, size, root)
        more, superseded = check_current(server, keys, doc)
        lines += more
    elif saved_head is not None:
        raise Malformed("--head needs --server (the consistency proof comes from the log)")
    if (pack_dir is None) != (predictions is None):
        raise Malformed("--pack and --predictions go together")
    if pack_dir is not None:
        lines += check_scores(body, pack_dir, predictions, judge=judge)
    s = body["submission"]
    values = [f"{r['task']}/{r['metric']}={r['value']}" for r in body["records"]
              if not r["slice"] and r["part"] in ("all", "public")][:6]
    lines.insert(0, f"receipt {body['log_index']} ({body['event']}): {body['benchmark']['key']} "
                    f"{body['benchmark']['version']} {s['split']}, submission {s['id']} "
                    f"{s['method']!r} by {s['team'] or 'no team'}: {', '.join(values)}")
    if server is None:
        lines.append("not checked: whether a later receipt supersedes this one (needs --server)")
    if superseded is not None:
        raise Superseded(superseded, lines)
    return lines, head
