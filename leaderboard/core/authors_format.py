"""The authors' own submission format, aligned by the authors' file and index (never pack order).

LOKI's evaluation tool (opendatalab/LOKI ``run.py --predict_only``, ``Task.evaluate`` in
``lm_evaluate/api/task.py``) writes, per question file, ``{"model": name, "responses": [...]}``
where ``responses[i]`` answers record ``i`` of that file (e.g. ``data_json/image/true_or_false.json``)
and saves it as ``<model>_<task_name>_result.json``. The document does not say which file it
answers, so the submitter says it:

* ``"source"``: the file's path under ``data_json``, e.g. ``"image/true_or_false.json"``; the
  ``dataset_path`` of the authors' task configs (``data_json/image/true_or_false.json``, with or
  without ``./``) is accepted as well.
* Without ``"source"`` the document answers the one authors' file of the pack with exactly that
  many records; none or several such files is an error that lists them.

Several documents may be uploaded at once, one JSON object per line. A document must answer every
record of its file (``len(responses)`` = the file's record count, whatever the split); the
responses to records in other splits are not read. Anything that cannot be aligned without a guess
is an error naming why: wrong length, unknown file, several possible files, the same file twice,
a response that is not a string.

A pack supports this format when its ``benchmark.yaml`` lists ``sources`` (authors' file -> record
count) and its hidden labels carry ``source`` and ``source_index`` (hidden: the authors' order
groups items by truth, so a position would leak the answer).
"""
from __future__ import annotations

from leaderboard.core.errors import ProblemList

KEYS = ("model", "responses", "source")
_PREFIXES = ("./", "data_json/")


def normalize_source(value: str) -> str:
    """``./data_json/image/x.json`` -> ``image/x.json`` (the key ``sources`` uses)."""
    text = value.strip().replace("\\", "/")
    changed = True
    while changed:
        changed = False
        for prefix in _PREFIXES:
            if text.startswith(prefix):
                text, changed = text[len(prefix):], True
    return text


def pack_sources(pack) -> dict[str, int]:
    """The authors' files a pack was built from, with their record counts ({} if not recorded)."""
    sources = pack.meta.extras.get("sources")
    if not isinstance(sources, dict):
        return {}
    return {str(k): int(v) for k, v in sources.items() if isinstance(v, int)}


def _source_of(doc: dict, sources: dict[str, int], line, problems: ProblemList) -> str | None:
    n = len(doc["responses"])
    given = doc.get("source")
    if given is not None:
        if not isinstance(given, str) or normalize_source(given) not in sources:
            problems.add(f"unknown authors' file {str(given)[:80]!r}; this pack's files: "
                         f"{sorted(sources)}", line=line, field="source")
            return None
        src = normalize_source(given)
        if sources[src] != n:
            problems.add(f"{src} has {sources[src]} records; this document has {n} responses "
                         "(one per record of the file, in its order)", line=line,
                         field="responses")
            return None
        return src
    fits = sorted(s for s, count in sources.items() if count == n)
    if len(fits) == 1:
        return fits[0]
    if fits:
        problems.add(f"{n} responses fit several authors' files {fits}: add \"source\"",
                     line=line, field="source")
    else:
        problems.add(f"no authors' file of this pack has {n} records (files and counts: "
                     f"{sources}); add \"source\" naming the file these responses answer",
                     line=line, field="responses")
    return None


def _checked(doc, line, problems: ProblemList) -> bool:
    if not isinstance(doc, dict):
        problems.add("each document must be a JSON object", line=line)
        return False
    unknown = [k for k in doc if k not in KEYS]
    if unknown:
        hint = ' (name the authors\' file with "source")' if "task" in unknown else ""
        problems.add(f"unknown key(s) {[str(k)[:40] for k in unknown[:5]]}; the authors' format "
                     f"has {list(KEYS)}{hint}", line=line, field=str(unknown[0])[:80])
        return False
    responses = doc.get("responses")
    if not isinstance(responses, list):
        problems.add('needs a "responses" list', line=line, field="responses")
        return False
    bad = [i for i, r in enumerate(responses) if not isinstance(r, str)]
    if bad:
        problems.add(f"responses must be strings; not at indices {bad[:5]}"
                     f"{' ...' if len(bad) > 5 else ''} ({len(bad)} in all)", line=line,
                     field="responses")
        return False
    return True


def authors_rows(pack, split: str, docs: list[tuple[int | None, object]], labels,
                 problems: ProblemList) -> tuple[list[dict], list[str]]:
    """Prediction rows ``{"id", "response"}`` for ``split`` from the authors' documents.

    ``docs``: (line number or None, parsed document). ``labels``: the split's compiled hidden
    labels (the table that knows each item's file and index). Returns (rows, notes).
    """
    sources = pack_sources(pack)
    has_columns = labels is not None and {"source", "source_index"} <= set(labels.columns)
    if not sources or not has_columns:
        problems.add("this pack does not record the authors' files and indices, so responses in "
                     "the authors' order cannot be aligned; submit JSONL rows with ids",
                     field="responses")
        return [], []
    src_col, idx_col = labels.decoded("source"), labels.decoded("source_index")
    rows, notes, seen = [], [], {}
    for line, doc in docs:
        if not _checked(doc, line, problems):
            continue
        src = _source_of(doc, sources, line, problems)
        if src is None:
            continue
        if src in seen:
            problems.add(f"a second document for {src} (the first is on line {seen[src]})",
                         line=line, field="source")
            continue
        seen[src] = line or 1
        if doc.get("source") is None:
            notes.append(f"{len(doc['responses'])} responses aligned to {src}, the only authors' "
                         "file of that length (name it with \"source\" to be explicit)")
        responses = doc["responses"]
        for r in (src_col == src).nonzero()[0].tolist():
            j = int(idx_col[r])
            if not 0 <= j < len(responses):  # a pack whose labels disagree with its sources
                problems.add(f"the pack places item {labels.ids[r]!s:.80} at {src} index {j}, "
                             f"outside the file's {len(responses)} records", field="source")
                break
            rows.append({"id": str(labels.ids[r]), "response": responses[j]})
    return rows, notes
