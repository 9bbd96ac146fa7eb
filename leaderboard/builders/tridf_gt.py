"""TriDF's ground-truth artifact CSVs (``2_GT_Final/<task>.csv``), read as ``cal_score.py`` does.

The authors' ``GroundTruthStore`` (j1anglin/TriDF at f041a19, ``3_Benchmark/inference/
cal_score.py``) defines what a row means, and these rules follow it:

* ``<task>.csv`` and ``<task>_com.csv`` (the commercial generators' samples) are one task: rows
  of the ``_com`` file replace rows of the same ``sample_path``; the task's artifact columns are
  those of ``<task>.csv`` (of the ``_com`` file when it stands alone), and a column a row's file
  lacks reads false.
* Columns other than ``question_id``, ``sample_path``, ``detection_prediction`` and
  ``source_label`` are the task's artifact columns, but the scorer only counts those spelled
  exactly as its artifact list (the taxonomy's names, e.g. "Spatial & Contact Incoherence").
  Here a column that is one of those names is an artifact column; a column that would match one
  only after normalizing (case, spacing, punctuation, a taxonomy key) is an error, since the
  authors' scorer would silently ignore it; ``sample_id``, ``generator``, ``modality`` and
  ``task`` are read as sample facts; any other column is ignored, as the scorer ignores it, and
  named in a build note.
* A cell is true by ``parse_bool_truth`` (`leaderboard.core.tridf_readers.truth_cell`): anything
  but empty, false, 0, none, null, "[]" and "[ ]".
* A sample is found by ``sample_path`` (a ``question_id`` column is accepted and not needed).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from leaderboard.builders.common import Problems, iter_csv, normalize_key
from leaderboard.core.taxonomy import TRIDF_ARTIFACTS
from leaderboard.core.tridf_readers import truth_cell

#: the authors' BASE_COLUMNS: never artifacts
BASE_COLUMNS = ("question_id", "sample_path", "detection_prediction", "source_label")
#: sample facts this builder reads (not in the authors' files, accepted for other releases)
FACT_COLUMNS = ("sample_id", "generator", "modality", "task")
COM_SUFFIX = "_com"
KEY_BY_NAME = {a.name: a.key for a in TRIDF_ARTIFACTS}
_NEAR = {normalize_key(n): n for a in TRIDF_ARTIFACTS for n in (a.name, a.key)}


@dataclass
class Row:
    """One sample's ground truth: its artifact cells and where they came from."""

    sample_path: str
    where: str
    cells: dict[str, str | None]
    facts: dict[str, str]


@dataclass
class TaskTruth:
    """A DeepFake task's merged ground truth: counted columns (taxonomy keys) and rows."""

    task: str
    columns: list[str]
    rows: dict[str, Row] = field(default_factory=dict)

    def artifacts(self, row: Row) -> list[str]:
        """The taxonomy keys annotated true in ``row`` among this task's columns."""
        by_key = {KEY_BY_NAME.get(c, c): v for c, v in row.cells.items()}
        return sorted(k for k in self.columns if truth_cell(by_key.get(k)))


def task_of(path: Path) -> tuple[str, bool]:
    """(task, is the _com file) of a ground-truth CSV."""
    stem = path.stem
    if stem.endswith(COM_SUFFIX) and len(stem) > len(COM_SUFFIX):
        return stem[: -len(COM_SUFFIX)], True
    return stem, False


def _columns(header: list[str], rel: str, problems: Problems, notes: list[str]) -> list[str]:
    """The header's artifact columns (authors' names); problems for near misses."""
    arts, ignored = [], []
    for col in header:
        if col in BASE_COLUMNS or col in FACT_COLUMNS:
            continue
        if col in KEY_BY_NAME:
            arts.append(col)
        elif normalize_key(col) in _NEAR:
            want = next(a.name for a in TRIDF_ARTIFACTS
                        if normalize_key(col) in (normalize_key(a.name), normalize_key(a.key)))
            problems.add(f"column {col!r} is not spelled as the authors' scorer counts it "
                         f"(cal_score.py would ignore it); write {want!r}", file=rel, line=1)
        else:
            ignored.append(col)
    if ignored:
        notes.append(f"{rel}: columns {ignored} are not artifacts and are ignored, as "
                     "cal_score.py ignores them")
    return arts


def _read_file(path: Path, rel: str, problems: Problems, notes: list[str]
               ) -> tuple[list[str], dict[str, Row]]:
    columns: list[str] | None = None
    rows: dict[str, Row] = {}
    for n, raw in iter_csv(path, rel=rel):
        if columns is None:
            header = list(raw)
            if "sample_path" not in header:
                problems.add("a ground-truth CSV needs a sample_path column", file=rel, line=1)
                return [], {}
            columns = _columns(header, rel, problems, notes)
        where = f"{rel} line {n}"
        sample = str(raw.get("sample_path") or "").strip()
        if not sample:
            problems.add("sample_path is empty", file=rel, line=n, field="sample_path")
            continue
        if sample in rows:
            problems.add(f"sample {sample!r} has a second row (first: {rows[sample].where})",
                         file=rel, line=n, field="sample_path")
            continue
        facts = {k: str(raw[k]).strip() for k in FACT_COLUMNS if (raw.get(k) or "").strip()}
        rows[sample] = Row(sample, where, {c: raw.get(c) for c in columns}, facts)
    return columns or [], rows


def read_ground_truth(files: list[tuple[Path, str]], problems: Problems, notes: list[str]
                      ) -> dict[str, TaskTruth]:
    """Merge ``<task>.csv`` and ``<task>_com.csv`` files (path, release-relative name) per task.

    Problems: a near-miss column, a missing sample_path, a sample twice in one file, the same
    task's CSV twice, a sample in two tasks.
    """
    by_task: dict[str, dict[bool, tuple[str, list[str], dict[str, Row]]]] = {}
    for path, rel in files:
        task, com = task_of(path)
        if com in by_task.get(task, {}):
            problems.add(f"a second ground-truth file for task {task!r} (first: "
                         f"{by_task[task][com][0]})", file=rel)
            continue
        columns, rows = _read_file(path, rel, problems, notes)
        by_task.setdefault(task, {})[com] = (rel, columns, rows)
    out: dict[str, TaskTruth] = {}
    owner: dict[str, str] = {}
    for task, parts in sorted(by_task.items()):
        base, com = parts.get(False), parts.get(True)
        columns = (base or com)[1]
        truth = TaskTruth(task, [KEY_BY_NAME[c] for c in columns])
        for part in (base, com):  # the _com rows replace the base rows (cal_score's dict merge)
            if part is not None:
                truth.rows.update(part[2])
        for sample, row in truth.rows.items():
            if sample in owner and owner[sample] != task:
                problems.add(f"sample {sample!r} is also annotated for task {owner[sample]!r}",
                             file=row.where)
            owner[sample] = task
        out[task] = truth
    return out
