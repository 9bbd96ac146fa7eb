"""``leaderboard audit-log``: walk the whole log, check it, and rebuild every board from it.

1. The server's published keys and signed tree head (its signature checked).
2. Every entry from 0 to the head's size, in pages: the index has no gap, each entry is a
   receipt whose signature verifies under a key valid at its time, whose ``log_index`` is its
   place, and whose ``previous_index`` is the same submission's previous entry (a deleted,
   inserted or moved entry breaks one of these); the tree built from the entries has the head's
   root (and, with ``--from``, the saved head's root at the saved size; the server's consistency
   proof is checked too).
3. A sealed receipt followed by the reveal of the same submission (or its unhiding, when it
   was hidden before it was first scored): the records now shown must be those the sealed
   commitment fixed (no value changed while it was sealed).
4. Every board (benchmark x task x split, overall, "all submissions" mode) rebuilt from the
   latest receipts (`leaderboard.core.transparency.boards`) and compared with the live board.

Failures of 1-2 raise (exit codes of `leaderboard.core.transparency.errors`); 3-4 are findings
(exit code 10 when there are any).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from leaderboard.core.transparency import boards, merkle, receipts
from leaderboard.core.transparency.errors import (
    BadSignature,
    LogForked,
    Malformed,
    NotInLog,
    UnknownKey,
)
from leaderboard.verify.receipt import check_head
from leaderboard.verify.remote import Server

PAGE = 1000


@dataclass
class AuditReport:
    size: int = 0
    root: str = ""
    boards: int = 0
    lines: list[str] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)


def walk(entries_pages, size: int, keys, *, saved: tuple[int, bytes] | None = None,
         progress: Callable[[int], None] | None = None) -> tuple[bytes, list[dict], list[str]]:
    """Check ``size`` entries (from ``entries_pages(start)``, a page of ``{"index", "data"}``);
    (root, bodies in order, findings). Raises NotInLog / BadSignature / UnknownKey / LogForked."""
    running = merkle.RunningRoot()
    bodies: list[dict] = []
    last_of: dict[tuple[str, int], int] = {}
    sealed: dict[tuple[str, int], str] = {}
    findings: list[str] = []
    if saved is not None and saved[0] == 0 and saved[1] != merkle.EMPTY_ROOT:
        raise LogForked("the saved head of 0 entries has a root other than the empty tree's")
    while running.size < size:
        page = entries_pages(running.size)
        if not page:
            raise NotInLog(f"the log stops at entry {running.size}; its signed head has {size}")
        for e in page:
            index = running.size
            if index >= size:
                break
            if e.get("index") != index:
                raise NotInLog(f"entry {index} is missing from the log (the next one is "
                               f"{e.get('index')})")
            data = e["data"].encode("utf-8")
            try:
                doc = receipts.check_entry(data, keys)
            except Malformed as exc:
                raise NotInLog(f"entry {index} is not a receipt: {exc}") from None
            except BadSignature as exc:
                raise BadSignature(f"entry {index}: {exc}") from None
            except UnknownKey as exc:
                raise UnknownKey(f"entry {index}: {exc}") from None
            body = doc["receipt"]
            if body["log_index"] != index:
                raise NotInLog(f"entry {index} is the receipt issued as entry "
                               f"{body['log_index']}: entries were deleted, inserted or moved")
            sub = (body["benchmark"]["key"], body["submission"]["id"])
            if body["previous_index"] != last_of.get(sub):
                raise NotInLog(f"entry {index} says the previous receipt of submission {sub[1]} "
                               f"is {body['previous_index']}, the log has "
                               f"{last_of.get(sub)}: an entry was removed or inserted")
            last_of[sub] = index
            if body["sealed_parts"]:
                sealed[sub] = body["records_commitment"]
            elif sub in sealed:
                receipts.check_commitment(body)
                # the reveal, or the unhiding of a submission hidden before it was first
                # scored (issue 36): the records shown are those the sealed receipt fixed
                if body["event"] in ("revealed", "unhidden") \
                        and sealed[sub] != body["records_commitment"]:
                    findings.append(f"entry {index}: submission {sub[1]}'s records when "
                                    f"{body['event']} are not those its sealed receipt "
                                    "committed to")
                del sealed[sub]
            running.append(merkle.leaf_hash(data))
            bodies.append(body)
            if saved is not None and running.size == saved[0] and running.root() != saved[1]:
                raise LogForked(f"the first {saved[0]} entries do not have the saved head's "
                                "root: the log's history was rewritten")
        if progress is not None:
            progress(running.size)
    return running.root(), bodies, findings


def audit(server: Server, *, saved_head: dict | None = None,
          progress: Callable[[int], None] | None = None) -> AuditReport:
    keys = server.keys()
    size, root = check_head(server.head(), keys)
    saved = None
    report = AuditReport(size=size, root=root.hex())
    if saved_head is not None:
        saved = check_head(saved_head, keys, what="saved tree head")
        if saved[0] > size:
            raise LogForked(f"the log shrank: the saved head has {saved[0]} entries, the "
                            f"server's {size}")
        try:
            merkle.verify_consistency(saved[0], size, saved[1], root,
                                      server.consistency(saved[0], size))
        except (LookupError, merkle.ProofError) as exc:
            raise LogForked(f"the server's head does not extend the saved head: {exc}") from None
        report.lines.append(f"consistent with the saved head of {saved[0]} entries")
    got, bodies, findings = walk(lambda start: server.entries(start, PAGE), size, keys,
                                 saved=saved, progress=progress)
    if got != root:
        raise NotInLog(f"the {size} entries the log serves do not have its signed root "
                       f"({got.hex()[:16]}... vs {root.hex()[:16]}...)")
    report.lines.append(f"{size} entries: every signature valid, the chain of each submission "
                        f"unbroken, root {root.hex()[:16]}... matches the signed head")
    report.findings += findings
    report.findings += compare_boards(server, bodies, report)
    return report


def _live_rows(server: Server, key: str, task: str, split: str) -> tuple[dict, list[dict]]:
    first = server.get(f"/api/v1/boards/{key}/{task}/{split}", mode="all", per_page=500)
    rows = list(first.get("rows", []))
    for page in range(2, int(first.get("pages", 1)) + 1):
        rows += server.get(f"/api/v1/boards/{key}/{task}/{split}", mode="all", per_page=500,
                           page=page).get("rows", [])
    return first, rows


def compare_boards(server: Server, bodies: list[dict], report: AuditReport) -> list[str]:
    latest = list(boards.latest(bodies).values())
    out = []
    for info in server.get("/api/v1/benchmarks").get("benchmarks", []):
        key = info["key"]
        is_revealed = boards.revealed(bodies, key)
        if bool(info.get("private_revealed")) != is_revealed and any(
                b["benchmark"]["key"] == key for b in bodies):
            out.append(f"{key}: the live benchmark says private part revealed = "
                       f"{bool(info.get('private_revealed'))}, the log says {is_revealed}")
        for task in info["tasks"]:
            for split in info["splits"]:
                where = f"{key}/{task['key']}/{split}"
                live, rows = _live_rows(server, key, task["key"], split)
                part = boards.shown_part(latest, key, split, is_revealed)
                if rows and live.get("part") != part:
                    out.append(f"{where}: the live board shows the {live.get('part')} part, "
                               f"the log says {part}")
                columns = live.get("columns") or [
                    {"metric": task["headline"], "higher_is_better": True}]  # an empty board
                rebuilt = boards.rebuild(
                    latest, benchmark=key, split=split, task=task["key"], part=part,
                    columns=columns, primary=live.get("primary") or task["headline"],
                    secondary=task.get("secondary", []))
                out += boards.compare(rebuilt, rows, primary=live.get("primary") or "",
                                      where=where)
                report.boards += 1
    return out
