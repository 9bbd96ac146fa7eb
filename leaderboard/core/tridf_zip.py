"""The TriDF challenge's submission ZIP as contract prediction rows.

The authors' challenge takes a ZIP of four JSONL files: ``typeb_oeq.jsonl`` and
``typea_oeq.jsonl`` (rows ``{"sample_id": "s_...", "response": "..."}``), ``mcq.jsonl`` and
``tfq.jsonl`` (rows ``{"question_id": "qmc_..." | "qtf_...", "response": "..."}``). A TriDF pack
built from the challenge release keeps those ids (`leaderboard.builders.tridf`): questions by
``question_id``, open-ended items as ``oeq_a/<sample_id>`` and ``oeq_b/<sample_id>``. Each row
becomes ``{"id", "response"}``; answers are then extracted from the free text by TriDF's rules,
exactly as for a JSONL upload.

Rules: members are matched by file name (a folder inside the ZIP is fine); a missing member just
leaves its task uncovered; any other ``.jsonl`` member is an error. Rows whose id belongs to another
split of the same pack are skipped (the challenge file covers the whole challenge set, the pack
splits it into dev and test); an id in no split, a duplicate id or a bad row is an error naming the
member and the line. Problems are collected (first 50 and the count) and raised as one
`PredictionError` once every member was read.

A ZIP with none of the four names is read as the TriDF authors' inference output folder (the
``*.jsonl`` files ``run_perception_tf_ver2`` / ``run_perception_mc`` write, zipped as they are):
every record is aligned by `leaderboard.core.tridf_records` (question file and index).
"""
from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import PurePosixPath
from typing import IO, Iterator

from leaderboard.core.errors import PredictionError, ProblemList

#: member name -> (id field, pack id prefix)
MEMBERS = {"typeb_oeq.jsonl": ("sample_id", "oeq_b/"), "typea_oeq.jsonl": ("sample_id", "oeq_a/"),
           "mcq.jsonl": ("question_id", ""), "tfq.jsonl": ("question_id", "")}
MAX_MEMBER_BYTES = 1 << 30


def _error(message: str, problems: ProblemList | None = None, **where) -> PredictionError:
    if problems is None:
        problems = ProblemList()
        problems.add(message, **where)
    return PredictionError(message, problems)


def _members(zf: zipfile.ZipFile, max_member_bytes: int) -> list[tuple[str, zipfile.ZipInfo]]:
    found: dict[str, zipfile.ZipInfo] = {}
    problems = ProblemList()
    for info in zf.infolist():
        name = PurePosixPath(info.filename).name
        if info.is_dir() or name.startswith(".") or info.filename.startswith("__MACOSX/"):
            continue
        if name not in MEMBERS:
            if name.endswith(".jsonl"):
                problems.add(f"unknown member; expected {sorted(MEMBERS)}", file=info.filename)
            continue
        if name in found:
            problems.add(f"second {name} (first: {found[name].filename})", file=info.filename)
        elif info.file_size > max_member_bytes:
            problems.add(f"member is {info.file_size} bytes uncompressed; the limit is "
                         f"{max_member_bytes}", file=info.filename)
        found[name] = info
    if not found and not problems:
        problems.add(f"the ZIP has none of {sorted(MEMBERS)}")
    if problems:
        raise _error("invalid TriDF challenge ZIP", problems)
    return [(n, found[n]) for n in MEMBERS if n in found]


def _output_members(zf: zipfile.ZipFile, max_member_bytes: int) -> list[zipfile.ZipInfo]:
    """The ``.jsonl`` members of a ZIP of the authors' inference outputs (none of MEMBERS)."""
    infos = [i for i in zf.infolist() if not i.is_dir() and i.filename.endswith(".jsonl")
             and not PurePosixPath(i.filename).name.startswith(".")
             and not i.filename.startswith("__MACOSX/")]
    if any(PurePosixPath(i.filename).name in MEMBERS for i in infos):
        return []
    problems = ProblemList()
    for info in infos:
        if info.file_size > max_member_bytes:
            problems.add(f"member is {info.file_size} bytes uncompressed; the limit is "
                         f"{max_member_bytes}", file=info.filename)
    if problems:
        raise _error("invalid ZIP of inference outputs", problems)
    return infos


def _output_rows(zf, infos, pack, split: str, problems: ProblemList) -> Iterator[dict]:
    from leaderboard.core.tridf_records import AuthorsRecords

    authors = AuthorsRecords(pack, split)
    seen: dict[str, str] = {}
    for info in infos:
        try:
            with zf.open(info) as raw:
                for n, line in enumerate(io.TextIOWrapper(raw, encoding="utf-8-sig"), start=1):
                    if not line.strip():
                        continue
                    try:
                        obj = json.loads(line)
                    except json.JSONDecodeError as exc:
                        problems.add(f"not valid JSON ({exc.msg})", file=info.filename, line=n)
                        continue
                    if not isinstance(obj, dict) or "response" not in obj:
                        problems.add("not an inference record (a JSON object with response)",
                                     file=info.filename, line=n)
                        continue
                    row, why = authors.convert(obj)
                    if why:
                        problems.add(why, file=info.filename, line=n, field="question_file")
                    if row is None:
                        continue
                    where = f"{info.filename} line {n}"
                    if row["id"] in seen:
                        problems.add(f"question {row['id']!r} is answered twice (first: "
                                     f"{seen[row['id']]})", file=info.filename, line=n)
                        continue
                    seen[row["id"]] = where
                    yield row
        except (UnicodeDecodeError, zipfile.BadZipFile, EOFError, OSError) as exc:
            problems.add(f"member cannot be read ({type(exc).__name__})", file=info.filename)


def zip_to_rows(source: str | os.PathLike | IO[bytes], pack, split: str, *,
                max_member_bytes: int = MAX_MEMBER_BYTES) -> Iterator[dict]:
    """Yield ``{"id", "response"}`` rows of ``split`` from a TriDF challenge ZIP.

    ``source``: a path or a binary file object. Raises `PredictionError` (every problem names
    the member and line) for a bad ZIP; rows already yielded must then be discarded.
    """
    if pack.key != "tridf":
        raise ValueError(f"the challenge ZIP is for TriDF packs, got a {pack.key!r} pack")
    here = pack.items(split).index
    elsewhere = set()
    for other in pack.splits:
        if other != split:
            elsewhere.update(pack.items(other).ids.tolist())
    try:
        zf = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise _error(f"not a readable ZIP file ({type(exc).__name__}: {exc})") from None
    problems = ProblemList()
    with zf:
        outputs = _output_members(zf, max_member_bytes)
        if outputs:
            yield from _output_rows(zf, outputs, pack, split, problems)
            if problems:
                raise _error("invalid ZIP of inference outputs", problems)
            return
        for name, info in _members(zf, max_member_bytes):
            key, prefix = MEMBERS[name]
            seen: set[str] = set()
            try:
                with zf.open(info) as raw:
                    text = io.TextIOWrapper(raw, encoding="utf-8-sig")
                    for n, line in enumerate(text, start=1):
                        row = _row(line, n, info.filename, key, prefix, here, elsewhere, seen,
                                   problems)
                        if row is not None:
                            yield row
            except (UnicodeDecodeError, zipfile.BadZipFile, EOFError, OSError) as exc:
                problems.add(f"member cannot be read ({type(exc).__name__})", file=info.filename)
    if problems:
        raise _error("invalid TriDF challenge ZIP", problems)


def _row(line: str, n: int, member: str, key: str, prefix: str, here, elsewhere: set,
         seen: set, problems: ProblemList) -> dict | None:
    if not line.strip():
        return None
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        problems.add(f"not valid JSON ({exc.msg})", file=member, line=n)
        return None
    if not isinstance(obj, dict):
        problems.add("each line must be a JSON object", file=member, line=n)
        return None
    ident = obj.get(key)
    if not isinstance(ident, str) or not ident.strip():
        problems.add("required, a non-empty string", file=member, line=n, field=key)
        return None
    response = obj.get("response")
    if not isinstance(response, str):
        problems.add(f"must be a string, got {type(response).__name__}", file=member, line=n,
                     field="response")
        return None
    rid = prefix + ident.strip()
    if rid in seen:
        problems.add(f"duplicate {key} {ident[:60]!r}", file=member, line=n, field=key)
        return None
    seen.add(rid)
    if rid not in here:
        if rid not in elsewhere:
            problems.add(f"{key} {ident[:60]!r} is not in this TriDF pack", file=member, line=n,
                         field=key)
        return None
    return {"id": rid, "response": response}
