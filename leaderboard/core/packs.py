"""Benchmark packs: load, validate, and compile a pack directory (see design.md, "Benchmark packs").

```
<pack>/benchmark.yaml      key, title, version, modalities, tasks, splits, agreement, description
<pack>/description.md      public page text
<pack>/agreement.md        data-use agreement text
<pack>/splits/<split>/items.jsonl    public rows
<pack>/splits/<split>/labels.jsonl   hidden rows (never served)
<pack>/media/...
```

Every problem names the file, the line and the field. Items and labels are compiled into columnar
`Table` objects (labels re-ordered to the items' row order, so row i is the same item in both) and
cached under ``<pack>/.cache/`` keyed by the source file's size and modification time.
"""
from __future__ import annotations

import datetime as dt
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import orjson
import yaml

from leaderboard.core.benchmarks import get_benchmark
from leaderboard.core.benchmarks.base import KINDS, Benchmark, Field, TaskSpec
from leaderboard.core.errors import PackError, ProblemList
from leaderboard.core.request_fields import RequestField, parse_request_fields
from leaderboard.core.table import Table, build_table, check_cell

MODALITIES = ("image", "video", "audio", "text", "3d")
PARTS = ("public", "private")
HELD_OUT_SPLITS = ("test",)
_ID_RE = re.compile(r"^[A-Za-z0-9._:\-/]{1,200}$")
_KEY_RE = re.compile(r"^[a-z0-9][a-z0-9_\-]{0,63}$")

#: columns every items.jsonl row may carry, whatever the benchmark
ITEM_COMMON = {
    "task": Field("category", ("*",)),
    "modality": Field("category", ("*",), MODALITIES),
    "question": Field("text"),
    "options": Field("json"),
    "media": Field("json"),
}
#: columns every labels.jsonl row may carry; ``part`` is required on held-out splits;
#: ``source``/``source_index``: the authors' file and 0-based record index an item was built from
#: (hidden: the authors' order often groups items by truth; see `core.authors_format`)
LABEL_COMMON = {"part": Field("category", (), PARTS),
                "source": Field("category", (), None, "the authors' file of the item"),
                "source_index": Field("int", (), None, "its 0-based index in that file")}


@dataclass(frozen=True)
class Generator:
    """One generator of a pack's fakes (``generators:`` in benchmark.yaml): ``key`` is the value
    of the hidden ``generator`` attribute its items carry; ``date`` the day it became public."""

    key: str
    name: str
    modality: str
    date: dt.date

    def as_dict(self) -> dict:
        return {"key": self.key, "name": self.name, "modality": self.modality,
                "date": self.date.isoformat()}


def parse_generators(raw, modalities, problems: ProblemList) -> tuple[Generator, ...]:
    """The ``generators:`` table (absent: none). Every problem names its field, e.g.
    ``generators[2].date``; ``modalities``: the pack's, which a generator's must be one of."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        problems.add("must be a list of {key, name, modality, date}", field="generators",
                     file="benchmark.yaml")
        return ()
    out, seen = [], set()
    for i, g in enumerate(raw):
        where = f"generators[{i}]"
        if not isinstance(g, dict):
            problems.add("must be a mapping with key, name, modality, date", field=where,
                         file="benchmark.yaml")
            continue
        unknown = sorted(set(map(str, g)) - {"key", "name", "modality", "date"})
        if unknown:
            problems.add(f"unknown fields {unknown}; allowed: key, name, modality, date",
                         field=where, file="benchmark.yaml")
        ok = True
        key = g.get("key")
        if not isinstance(key, str) or not key.strip() or len(key) > 100:
            problems.add(f"required: the generator attribute's value (1-100 characters), got "
                         f"{key!r}", field=f"{where}.key", file="benchmark.yaml")
            ok = False
        elif key in seen:
            problems.add(f"duplicate generator key {key!r}", field=f"{where}.key",
                         file="benchmark.yaml")
            ok = False
        name = g.get("name", key)
        if not isinstance(name, str) or not name.strip() or len(name) > 200:
            problems.add(f"must be a non-empty text of at most 200 characters, got {name!r}",
                         field=f"{where}.name", file="benchmark.yaml")
            ok = False
        modality = g.get("modality")
        if modality not in modalities:
            problems.add(f"must be one of the pack's modalities {list(modalities)}, got "
                         f"{modality!r}", field=f"{where}.modality", file="benchmark.yaml")
            ok = False
        date = _iso_date(g.get("date"))
        if date is None:
            problems.add(f"required: the ISO date (YYYY-MM-DD) it became public, got "
                         f"{g.get('date')!r}", field=f"{where}.date", file="benchmark.yaml")
            ok = False
        if ok:
            seen.add(key)
            out.append(Generator(key=key, name=name, modality=modality, date=date))
    return tuple(out)


def _iso_date(v) -> dt.date | None:
    """A date from YAML (which reads an unquoted 2023-07-26 as a date) or an ISO string."""
    if isinstance(v, dt.datetime):
        return None  # a time of day is not what the table records
    if isinstance(v, dt.date):
        return v
    if isinstance(v, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", v):
        try:
            return dt.date.fromisoformat(v)
        except ValueError:
            return None
    return None


@dataclass(frozen=True)
class PackMeta:
    key: str
    title: str
    version: str
    modalities: tuple[str, ...]
    tasks: tuple[TaskSpec, ...]
    splits: tuple[str, ...]
    agreement: str
    description: str
    extras: dict
    #: the benchmark's own questions on the access request form (`core.request_fields`)
    request_fields: tuple[RequestField, ...] = ()
    #: the generators of its fakes with the date each became public (`parse_generators`)
    generators: tuple[Generator, ...] = ()
    #: which release of the benchmark this pack is (``release:``, default 1). Release N+1 keeps
    #: every item and label of release N and adds items (issue 37); the server checks that at
    #: import (`leaderboard.server.services.releases`)
    release: int = 1


class _MetaLoader(yaml.SafeLoader):
    """Safe YAML without implicit timestamps: ``date: 2023-02-30`` reaches the checks as text
    (and fails there naming its field) instead of raising inside the YAML parser."""


_MetaLoader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}


def _meta_error(message: str, field: str | None = None) -> PackError:
    problems = ProblemList()
    problems.add(message, file="benchmark.yaml", field=field)
    return PackError("invalid benchmark.yaml", problems)


def parse_meta(text: str) -> PackMeta:
    """Parse and check ``benchmark.yaml``; every problem names the field."""
    try:
        raw = yaml.load(text, Loader=_MetaLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise _meta_error(f"not valid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise _meta_error("must be a mapping of fields")
    problems = ProblemList()

    def need(name: str, kind: type, default=None):
        v = raw.get(name, default)
        if not isinstance(v, kind) or (isinstance(v, (str, list)) and not v):
            problems.add(f"required, must be a non-empty {kind.__name__}", field=name,
                         file="benchmark.yaml")
            return default
        return v

    key = need("key", str, "")
    if key and not _KEY_RE.match(key):
        problems.add("must be lower-case letters, digits, '-' or '_'", field="key",
                     file="benchmark.yaml")
    title = need("title", str, "")
    version = str(raw.get("version", "1"))
    modalities = need("modalities", list, [])
    for m in modalities:
        if m not in MODALITIES:
            problems.add(f"unknown modality {m!r}; allowed: {list(MODALITIES)}",
                         field="modalities", file="benchmark.yaml")
    splits = need("splits", list, [])
    for s in splits:
        if not isinstance(s, str) or not _KEY_RE.match(s):
            problems.add(f"bad split name {s!r}", field="splits", file="benchmark.yaml")
    tasks = []
    for i, t in enumerate(need("tasks", list, [])):
        where = f"tasks[{i}]"
        if not isinstance(t, dict):
            problems.add("must be a mapping", field=where, file="benchmark.yaml")
            continue
        missing = [f for f in ("key", "kind", "modalities", "headline") if not t.get(f)]
        if missing:
            problems.add(f"missing {missing}", field=where, file="benchmark.yaml")
            continue
        if t["kind"] not in KINDS:
            problems.add(f"unknown kind {t['kind']!r}; allowed: {list(KINDS)}",
                         field=f"{where}.kind", file="benchmark.yaml")
        bad = [m for m in t["modalities"] if m not in modalities]
        if bad:
            problems.add(f"modalities {bad} not listed in the pack's modalities",
                         field=f"{where}.modalities", file="benchmark.yaml")
        tasks.append(TaskSpec(
            key=str(t["key"]), kind=str(t["kind"]), modalities=tuple(t["modalities"]),
            headline=str(t["headline"]), title=str(t.get("title", t["key"])),
            secondary=tuple(t.get("secondary", ())), description=str(t.get("description", ""))))
    if len({t.key for t in tasks}) != len(tasks):
        problems.add("task keys must be unique", field="tasks", file="benchmark.yaml")
    if not isinstance(raw.get("scoring_only", False), bool):
        problems.add(f"must be true or false, got {raw.get('scoring_only')!r}",
                     field="scoring_only", file="benchmark.yaml")
    try:
        request_fields = parse_request_fields(raw.get("request_fields"))
    except PackError as exc:
        for p in exc.problems.items:
            problems.add(p.message, field=p.field, file=p.file)
        request_fields = ()
    generators = parse_generators(raw.get("generators"), modalities, problems)
    release = raw.get("release", 1)
    if isinstance(release, bool) or not isinstance(release, int) or not 1 <= release <= 999:
        problems.add(f"must be a whole number from 1 to 999, got {release!r}", field="release",
                     file="benchmark.yaml")
        release = 1
    if problems:
        raise PackError("invalid benchmark.yaml", problems)
    known = {"key", "title", "version", "modalities", "tasks", "splits", "agreement",
             "description", "request_fields", "generators", "release"}
    return PackMeta(key=key, title=title, version=version, modalities=tuple(modalities),
                    tasks=tuple(tasks), splits=tuple(splits),
                    agreement=str(raw.get("agreement", "agreement.md")),
                    description=str(raw.get("description", "description.md")),
                    extras={k: v for k, v in raw.items() if k not in known},
                    request_fields=request_fields, generators=generators, release=release)


def iter_jsonl(path: Path, problems: ProblemList, *, label: str) -> Iterator[tuple[int, dict]]:
    """Yield (line number, row) of a pack JSONL file; bad lines go to ``problems``."""
    with open(path, "rb") as fh:
        for n, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                row = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                problems.add(f"not valid JSON ({exc})", line=n, file=label)
                continue
            if not isinstance(row, dict):
                problems.add("each line must be a JSON object", line=n, file=label)
                continue
            yield n, row


class Pack:
    """A loaded (and structurally checked) pack. Tables are compiled on first use and cached."""

    def __init__(self, root: Path, meta: PackMeta, benchmark: Benchmark):
        self.root, self.meta, self.benchmark = root, meta, benchmark
        self._tables: dict[tuple[str, str], Table] = {}

    # -- metadata --
    key = property(lambda self: self.meta.key)
    title = property(lambda self: self.meta.title)
    version = property(lambda self: self.meta.version)
    tasks = property(lambda self: self.meta.tasks)
    splits = property(lambda self: self.meta.splits)
    modalities = property(lambda self: self.meta.modalities)

    @property
    def scoring_only(self) -> bool:
        """A pack built without its media (``scoring_only: true`` in benchmark.yaml): items list
        their media paths but the files are absent, so it only scores uploaded predictions (no
        downloads, no container runs)."""
        return bool(self.meta.extras.get("scoring_only", False))

    def task(self, key: str) -> TaskSpec:
        for t in self.meta.tasks:
            if t.key == key:
                return t
        raise KeyError(f"no task {key!r} in {self.key}; tasks: {[t.key for t in self.tasks]}")

    def text(self, which: str) -> str:
        name = self.meta.agreement if which == "agreement" else self.meta.description
        return (self.root / name).read_text(encoding="utf-8")

    def split_dir(self, split: str) -> Path:
        if split not in self.meta.splits:
            raise PackError(f"unknown split {split!r}; this pack has {list(self.meta.splits)}")
        return self.root / "splits" / split

    def items_path(self, split: str) -> Path:
        return self.split_dir(split) / "items.jsonl"

    def labels_path(self, split: str) -> Path:
        return self.split_dir(split) / "labels.jsonl"

    # -- compiled tables --
    def items(self, split: str) -> Table:
        key = (split, "items")
        if key not in self._tables:
            self._tables[key] = self._cached(split, "items", self.items_path(split),
                                             lambda: self.compile_items(split))
        return self._tables[key]

    def labels(self, split: str, *, source: bytes | None = None) -> Table:
        """The hidden labels of ``split``, row-aligned with `items`.

        ``source``: compiled table bytes (the server passes decrypted bytes); otherwise the
        pack's ``labels.jsonl`` is compiled (and cached on disk).
        """
        if source is not None:
            return Table.from_bytes(source)
        key = (split, "labels")
        if key not in self._tables:
            path = self.labels_path(split)
            if not path.exists():
                why = ("held-out labels never leave the server: submit your predictions to it "
                       "(leaderboard submit) to score this split, and score the dev split "
                       "offline" if split in HELD_OUT_SPLITS else
                       "download the split's archive with labels (you need an approved "
                       "data-use agreement)")
                raise PackError(f"scoring needs labels, and this copy of the pack has none for "
                                f"split {split!r} (no splits/{split}/labels.jsonl): {why}")
            self._tables[key] = self._cached(split, "labels", path,
                                             lambda: self.compile_labels(split))
        return self._tables[key]

    def _cached(self, split: str, what: str, src: Path, compile_fn) -> Table:
        stat = src.stat()
        stamp = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "pack": self.version}
        cache = self.root / ".cache" / f"{split}.{what}.npz"
        if cache.exists():
            try:
                table = Table.from_bytes(cache.read_bytes())
                if table.meta.get("stamp") == stamp:
                    return table
            except (ValueError, OSError, KeyError):
                pass  # stale or corrupt cache: rebuild below
        table = compile_fn()
        table.meta["stamp"] = stamp
        try:
            cache.parent.mkdir(exist_ok=True)
            tmp = cache.with_suffix(f".tmp{os.getpid()}")
            tmp.write_bytes(table.to_bytes())
            os.replace(tmp, cache)
        except OSError:
            pass  # a read-only pack still scores, just without the disk cache
        return table

    def compile_items(self, split: str) -> Table:
        path = self.items_path(split)
        label = f"splits/{split}/items.jsonl"
        fields = {**ITEM_COMMON, **self.benchmark.item_fields}
        fields["task"] = Field("category", ("*",), tuple(t.key for t in self.tasks))
        problems = ProblemList()
        rows: list[tuple[int, dict]] = []
        seen: set[str] = set()
        if not path.exists():
            raise PackError(f"missing {label}")
        for n, row in iter_jsonl(path, problems, label=label):
            rid = row.get("id")
            if not isinstance(rid, str) or not _ID_RE.match(rid):
                problems.add("id must be 1-200 characters of letters, digits, . _ : - /",
                             line=n, field="id", file=label)
                continue
            if rid in seen:
                problems.add(f"duplicate id {rid!r}", line=n, field="id", file=label)
                continue
            seen.add(rid)
            task = self._check_row(row, fields, n, label, problems)
            if task is not None:
                self._check_item(row, task, n, label, problems)
            rows.append((n, row))
        if problems:
            raise PackError(f"invalid {label}", problems)
        builders, finish = build_table(len(rows), fields)
        for i, (_, row) in enumerate(rows):
            for name, b in builders.items():
                b.cells[i] = row.get(name)
        return finish([r["id"] for _, r in rows], {"split": split, "what": "items"})

    def _check_row(self, row: dict, fields: dict[str, Field], n: int, label: str,
                   problems: ProblemList) -> TaskSpec | None:
        task_key = row.get("task")
        task = next((t for t in self.tasks if t.key == task_key), None)
        for name, value in row.items():
            if name == "id":
                continue
            spec = fields.get(name)
            if spec is None:
                problems.add(f"unknown field; allowed: {sorted(fields)}", line=n, field=name,
                             file=label)
            elif value is not None:
                why = check_cell(value, spec)
                if why:
                    problems.add(why, line=n, field=name, file=label)
        for name, spec in fields.items():
            if row.get(name) is None and (("*" in spec.required_for)
                                          or (task and spec.required(task.key))):
                problems.add("required field is missing", line=n, field=name, file=label)
        return task

    def _check_item(self, row: dict, task: TaskSpec, n: int, label: str,
                    problems: ProblemList) -> None:
        if row.get("modality") not in task.modalities:
            problems.add(f"task {task.key!r} has modalities {list(task.modalities)}", line=n,
                         field="modality", file=label)
        media = row.get("media")
        if media is not None:
            if not isinstance(media, list) or not all(isinstance(m, str) for m in media):
                problems.add("must be a list of relative paths", line=n, field="media",
                             file=label)
            else:
                for m in media:
                    p = Path(m)
                    if p.is_absolute() or ".." in p.parts or not m.startswith("media/"):
                        problems.add(f"media path {m!r} must be relative, under media/",
                                     line=n, field="media", file=label)
        options = row.get("options")
        if task.kind in ("choice", "multiselect"):
            if not isinstance(options, dict) or not options or not all(
                    isinstance(k, str) and re.fullmatch(r"[A-Z]", k) and isinstance(v, str)
                    for k, v in options.items()):
                problems.add('must map option letters to texts, e.g. {"A": "...", "B": "..."}',
                             line=n, field="options", file=label)

    def compile_labels(self, split: str) -> Table:
        items = self.items(split)
        path = self.labels_path(split)
        label = f"splits/{split}/labels.jsonl"
        fields = {**LABEL_COMMON, **self.benchmark.label_fields}
        held_out = split in HELD_OUT_SPLITS
        problems = ProblemList()
        task_of = items.decoded("task")
        builders, finish = build_table(len(items), fields)
        seen = [False] * len(items)
        for n, row in iter_jsonl(path, problems, label=label):
            rid = row.get("id")
            i = items.index.get(rid) if isinstance(rid, str) else None
            if i is None:
                problems.add(f"id {rid!r} is not in items.jsonl", line=n, field="id", file=label)
                continue
            if seen[i]:
                problems.add(f"duplicate id {rid!r}", line=n, field="id", file=label)
                continue
            seen[i] = True
            row_task = self.task(str(task_of[i]))
            self._check_row({**row, "task": row_task.key}, {**fields, "task": Field("text")},
                            n, label, problems)
            if held_out and row.get("part") is None:
                problems.add("held-out rows must say public or private", line=n, field="part",
                             file=label)
            for name, b in builders.items():
                b.cells[i] = row.get(name)
        missing = [items.ids[i] for i, s in enumerate(seen) if not s]
        if missing:
            problems.add(f"{len(missing)} items have no label row, e.g. {list(missing[:5])}",
                         file=label)
        if problems:
            raise PackError(f"invalid {label}", problems)
        return finish(list(items.ids), {"split": split, "what": "labels"})

    def validate(self, *, check_media: bool = True) -> None:
        """Full check of every split (tables compile, texts exist, media present).

        A scoring-only pack's media are absent by declaration and are not checked."""
        check_media = check_media and not self.scoring_only
        from leaderboard.core.robustness.config import pack_config

        pack_config(self)  # the robustness plan (issue 26): PackError naming the bad field
        for name in (self.meta.agreement, self.meta.description):
            if not (self.root / name).is_file():
                raise PackError(f"missing {name}")
        for split in self.splits:
            items = self.items(split)
            if self.labels_path(split).exists():
                self.labels(split)
            if check_media:
                problems = ProblemList()
                for i in range(len(items)):
                    for m in items.value("media", i) or ():
                        if not (self.root / m).is_file():
                            problems.add(f"media file {m!r} does not exist",
                                         field="media", file=f"splits/{split}/items.jsonl")
                if problems:
                    raise PackError(f"split {split!r} refers to missing media", problems)


def load_pack(root: str | os.PathLike) -> Pack:
    """Open a pack directory: parse ``benchmark.yaml`` and check the pack's shape.

    Tables compile lazily (`Pack.items`, `Pack.labels`); call `Pack.validate` for a full check.
    """
    root = Path(root)
    meta_path = root / "benchmark.yaml"
    if not meta_path.is_file():
        raise PackError(f"{root} is not a pack: benchmark.yaml is missing")
    meta = parse_meta(meta_path.read_text(encoding="utf-8"))
    try:
        benchmark = get_benchmark(meta.key)
    except KeyError as exc:
        raise _meta_error(str(exc.args[0]), field="key") from None
    problems = ProblemList()
    for t in meta.tasks:
        kind = benchmark.kinds.get(t.key)
        if kind is None:
            problems.add(f"benchmark {meta.key!r} has no task {t.key!r}; known: "
                         f"{sorted(benchmark.kinds)}", field="tasks", file="benchmark.yaml")
        elif kind != t.kind:
            problems.add(f"task {t.key!r} must be of kind {kind!r}", field="tasks",
                         file="benchmark.yaml")
        if t.headline not in benchmark.metrics:
            problems.add(f"headline metric {t.headline!r} of task {t.key!r} is not a metric of "
                         f"{meta.key!r}", field="tasks", file="benchmark.yaml")
    for split in meta.splits:
        if not (root / "splits" / split / "items.jsonl").is_file():
            problems.add(f"missing splits/{split}/items.jsonl")
    if problems:
        raise PackError(f"invalid pack {root}", problems)
    return Pack(root, meta, benchmark)
