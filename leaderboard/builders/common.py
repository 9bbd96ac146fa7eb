"""What every pack builder shares: reading the authors' files, errors, splitting, media.

* Text files are decoded by `detect_encoding`: a byte-order mark wins (UTF-32, UTF-8, UTF-16 LE/BE:
  LOKI ships ``image/open_ended_vqa.json`` as UTF-16 with a BOM); without one, UTF-8, then UTF-16
  recognized by its NUL bytes. Anything else stops with the file's name.
* Every problem names the release-relative file and the record (a CSV/JSONL line number, or
  "record N" = the 0-based index in a JSON array) and the field; `Problems` keeps the first 50 and
  counts the rest, and `Problems.check` raises `SourceError` once a file is read.
* `Splitter` assigns dev/test and, on test, public/private from a hash of a *unit* key and the seed
  (`leaderboard.demo.writer.assign_split`/`assign_part`): stable under re-ordering and re-running,
  and every item of one unit (a sample's questions, a caption's images) lands together.
* `MediaStore` copies (or hard-links) media into the pack under content-derived names, so a file
  name never tells a participant what the hidden labels say (authors' paths often contain
  "real"/"fake" or the generator).
* Scoring-only builds (``build-pack --scoring-only``, for releases too large to host): `MediaStore`
  copies nothing and accepts media that are not in the release; items still list their media
  paths, `BuildReport.absent` counts them, and `open_pack` marks the pack ``scoring_only: true``
  and appends `SCORING_ONLY_NOTE` to its description. Such a pack validates and scores uploaded
  predictions; the server offers no downloads or container runs for it.
"""
from __future__ import annotations

import codecs
import csv
import hashlib
import io
import json
import os
import shutil
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from leaderboard.core.errors import LeaderboardError, ProblemList
from leaderboard.demo.writer import PackWriter, assign_part, assign_split

#: progress(done, total or None, message) — the admin page shows it; the CLI prints it
Progress = Callable[[int, "int | None", str], None]

_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))
_IMAGE_MAGIC = ((b"\x89PNG\r\n\x1a\n", "png"), (b"\xff\xd8\xff", "jpg"), (b"GIF8", "gif"),
                (b"BM", "bmp"), (b"II*\x00", "tif"), (b"MM\x00*", "tif"))


class SourceError(LeaderboardError):
    """The authors' release is malformed or not in the expected shape (names file and record)."""


class Problems(ProblemList):
    """A `ProblemList` for source files; `check` raises once problems were found."""

    def __init__(self) -> None:
        super().__init__()

    def check(self, message: str = "the release is not in the expected shape") -> None:
        if self:
            raise SourceError(message, self)


def fail(message: str, *, file: str, line: int | None = None, field: str | None = None
         ) -> SourceError:
    """A one-problem `SourceError` (``raise fail(...)``)."""
    problems = Problems()
    problems.add(message, file=file, line=line, field=field)
    return SourceError("the release is not in the expected shape", problems)


def record(rel: str, index: int) -> str:
    """How a JSON-array record is named in messages: ``data_json/x.json record 17``."""
    return f"{rel} record {index}"


def check_options(*, dev_fraction: float, private_fraction: float, seed: int) -> None:
    """Validate the split options at the boundary; ValueError names the bad value."""
    for name, v in (("dev_fraction", dev_fraction), ("private_fraction", private_fraction)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:
            raise ValueError(f"{name} must be a number in [0, 1], got {v!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an integer, got {seed!r}")


@dataclass(frozen=True)
class Splitter:
    dev_fraction: float = 0.3
    private_fraction: float = 0.5
    seed: int = 0

    def __post_init__(self) -> None:
        check_options(dev_fraction=self.dev_fraction, private_fraction=self.private_fraction,
                      seed=self.seed)

    def assign(self, unit: str) -> tuple[str, str | None]:
        """(split, part): part is "public"/"private" on test, None on dev."""
        split = assign_split(unit, seed=self.seed, dev_fraction=self.dev_fraction)
        if split == "dev":
            return split, None
        return split, assign_part(unit, seed=self.seed, private_fraction=self.private_fraction)


@dataclass
class BuildReport:
    """What a build wrote: per split and per task counts, and notes for the admin."""

    benchmark: str
    out: Path
    counts: dict[str, int] = field(default_factory=dict)
    tasks: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    modalities: dict[str, set] = field(default_factory=dict)
    #: scoring-only builds: media listed in items but not in the pack (folder -> count), and how
    #: many of them were not in the release either
    absent: dict[str, int] = field(default_factory=dict)
    not_in_release: int = 0

    def count(self, split: str, task: str, modality: str) -> None:
        self.counts[split] = self.counts.get(split, 0) + 1
        self.tasks[task] = self.tasks.get(task, 0) + 1
        self.modalities.setdefault(task, set()).add(modality)

    def fit_meta(self, meta: dict) -> dict:
        """``meta`` with only the tasks that got items, each with the modalities it has."""
        if not self.tasks:
            raise SourceError(f"no {self.benchmark} items were found in the release")
        tasks = []
        for t in meta["tasks"]:
            seen = self.modalities.get(t["key"])
            if seen:
                tasks.append({**t, "modalities": [m for m in t["modalities"] if m in seen]})
        used = {m for t in tasks for m in t["modalities"]}
        return {**meta, "tasks": tasks, "modalities": [m for m in meta["modalities"] if m in used]}

    def absent_summary(self) -> str | None:
        """One line on the media a scoring-only build left out (None for a full build)."""
        if not self.absent:
            return None
        total = sum(self.absent.values())
        folders = ", ".join(f"{n} {k}" for k, n in sorted(self.absent.items()))
        return (f"scoring-only pack: {total} media files listed as absent ({folders}); "
                f"{self.not_in_release} of them were not in the release either")

    def summary(self) -> str:
        lines = [f"{self.benchmark}: wrote {self.out} {self.counts} tasks {self.tasks}"]
        absent = self.absent_summary()
        lines += [absent] if absent else []
        return "\n".join(lines + [f"note: {n}" for n in self.notes])


SCORING_ONLY_NOTE = """
## Scoring-only benchmark
This pack was built without its media: the data are too large to host here. Downloads and
container runs are not offered; get the data from the authors' release and upload predictions.
{id_rule}
"""


@contextmanager
def open_pack(out: Path, meta: dict, *, description: str, agreement: str,
              scoring_only: bool = False, id_rule: str = ""):
    """A `PackWriter` at ``out`` (replaced); a build that fails leaves no pack behind.

    ``scoring_only`` marks the pack (``scoring_only: true``) and appends `SCORING_ONLY_NOTE` with
    ``id_rule`` (how a team forms item ids from the authors' files) to the description.
    """
    if scoring_only:
        meta = {**meta, "scoring_only": True}
        description = description.rstrip("\n") + "\n" + SCORING_ONLY_NOTE.format(id_rule=id_rule)
    writer = PackWriter(Path(out), meta, description=description, agreement=agreement)
    try:
        yield writer
    except BaseException:
        writer.close()
        shutil.rmtree(out, ignore_errors=True)
        raise
    writer.close()


# -- reading files --

def detect_encoding(head: bytes, *, rel: str) -> str:
    """The codec of a text file from its first bytes (at least 4 when the file has them)."""
    for bom, codec in _BOMS:
        if head.startswith(bom):
            return codec
    if len(head) >= 2 and b"\x00" in head[:4]:
        # no BOM but NULs between ASCII bytes: UTF-16 without a mark
        if head[0] == 0 and head[1] != 0:
            return "utf-16-be"
        if head[1] == 0 and head[0] != 0:
            return "utf-16-le"
        raise fail("binary data where text was expected (unknown encoding)", file=rel)
    return "utf-8"


def read_text(path: Path, *, rel: str) -> str:
    data = path.read_bytes()
    codec = detect_encoding(data[:4], rel=rel)
    try:
        return data.decode(codec)
    except UnicodeDecodeError as exc:
        raise fail(f"cannot be decoded as {codec} (byte {exc.start}); save it as UTF-8 or "
                   "UTF-16 with a byte-order mark", file=rel) from None


def load_json(path: Path, *, rel: str):
    """Parse a JSON file of any supported encoding; errors give the line and column."""
    text = read_text(path, rel=rel)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise fail(f"not valid JSON: {exc.msg} (column {exc.colno})", file=rel,
                   line=exc.lineno) from None


def open_text(path: Path, *, rel: str) -> io.TextIOBase:
    """A streaming text reader with the detected encoding (CSV and JSONL are read by row)."""
    with open(path, "rb") as fh:
        head = fh.read(4)
    return open(path, encoding=detect_encoding(head, rel=rel), newline="")


def iter_csv(path: Path, *, rel: str) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, row) of a CSV file with a header row, streamed."""
    with open_text(path, rel=rel) as fh:
        reader = csv.DictReader(fh)
        if not reader.fieldnames:
            raise fail("empty CSV: a header row is required", file=rel, line=1)
        try:
            for row in reader:
                if None in row:
                    raise fail(f"{len(row[None])} more cells than the header has columns",
                               file=rel, line=reader.line_num)
                if not any((v or "").strip() for v in row.values()):
                    continue
                yield reader.line_num, row
        except (csv.Error, UnicodeDecodeError) as exc:
            raise fail(f"unreadable CSV: {exc}", file=rel, line=reader.line_num) from None


def iter_jsonl(path: Path, *, rel: str) -> Iterator[tuple[int, dict]]:
    """(line number, object) of a JSONL file, streamed."""
    with open_text(path, rel=rel) as fh:
        try:
            for n, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise fail(f"not valid JSON: {exc.msg}", file=rel, line=n) from None
                if not isinstance(row, dict):
                    raise fail("each line must be a JSON object", file=rel, line=n)
                yield n, row
        except UnicodeDecodeError as exc:
            raise fail(f"cannot be decoded: {exc.reason}", file=rel) from None


# -- media --

def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def image_ext(data: bytes) -> str | None:
    """File extension of encoded image bytes from their magic number (None if unknown)."""
    for magic, ext in _IMAGE_MAGIC:
        if data.startswith(magic):
            return ext
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return None


class MediaStore:
    """Places media files in the pack under ``media/<folder>/<digest><suffix>``.

    The name is the file's SHA-256 (first 20 hex digits): identical files are stored once, and
    nothing of the authors' path (which may say "fake" or name a generator) reaches participants.
    ``link=True`` hard-links instead of copying when source and pack share a file system.

    ``scoring_only=True`` (with ``report``): nothing is written; the media path is still returned
    and counted as absent in the report. A file that is in the release is hashed as usual (so its
    id is the one a full build gives); one that is not gets the digest of ``key`` (`absent_digest`),
    the release-relative name the builder passes.
    """

    def __init__(self, writer, *, link: bool = False, scoring_only: bool = False,
                 report: "BuildReport | None" = None):
        if scoring_only and report is None:
            raise ValueError("a scoring-only MediaStore needs the build report")
        self.writer, self.link = writer, link
        self.scoring_only, self.report = scoring_only, report
        self._done: dict[Path, tuple[str, str]] = {}

    def add_file(self, src: Path, folder: str, *, key: str | None = None) -> tuple[str, str]:
        """(pack-relative media path, digest) of ``src`` stored under ``folder``."""
        src = Path(src)
        key_path = src.resolve()
        if key_path in self._done:
            return self._done[key_path]
        if self.scoring_only:
            present = src.is_file()
            if not present and key is None:
                raise ValueError(f"{src} is not in the release and no key names it")
            digest = file_digest(src) if present else absent_digest(key)
            rel = f"media/{folder}/{digest[:20]}{src.suffix.lower()}"
            self._absent(folder, present)
        else:
            digest = file_digest(src)
            rel, dst = self.writer.media(f"{folder}/{digest[:20]}{src.suffix.lower()}")
            if not dst.exists():
                self._place(src, dst)
        self._done[key_path] = (rel, digest)
        return rel, digest

    def add_bytes(self, data: bytes, folder: str, name: str) -> str:
        if self.scoring_only:
            self._absent(folder, True)
            return f"media/{folder}/{name}"
        rel, dst = self.writer.media(f"{folder}/{name}")
        if not dst.exists():
            tmp = dst.with_name(dst.name + ".part")
            tmp.write_bytes(data)
            os.replace(tmp, dst)
        return rel

    def _absent(self, folder: str, present: bool) -> None:
        self.report.absent[folder] = self.report.absent.get(folder, 0) + 1
        self.report.not_in_release += 0 if present else 1

    def _place(self, src: Path, dst: Path) -> None:
        if self.link:
            try:
                os.link(src, dst)
                return
            except OSError:
                pass  # another file system or no permission: fall back to a copy
        tmp = dst.with_name(dst.name + ".part")
        shutil.copyfile(src, tmp)
        os.replace(tmp, dst)


def absent_digest(key: str) -> str:
    """SHA-256 (hex) standing in for the content digest of a medium the release lacks: of
    ``"absent:" + key`` in UTF-8, ``key`` being the release-relative name the builder documents."""
    return hashlib.sha256(("absent:" + str(key)).encode("utf-8")).hexdigest()


def resolve_media(root: Path, value: str, *, bases: tuple[str, ...] = ("",)) -> Path | None:
    """The file (or folder) an authors' media path names, tried under each base of ``root``.

    Absolute paths and ``..`` are refused (None): a release must not reach outside itself.
    """
    text = str(value).strip()
    while text.startswith("./"):
        text = text[2:]
    p = Path(text)
    if not text or p.is_absolute() or ".." in p.parts:
        return None
    for base in bases:
        cand = root / base / p
        if cand.exists():
            return cand
    return None


def normalize_key(text: str) -> str:
    """Lower-case, every run of non-alphanumerics as one "_" (matching column and enum names)."""
    out, gap = [], False
    for ch in str(text).strip().lower():
        if ch.isalnum():
            if gap and out:
                out.append("_")
            out.append(ch)
            gap = False
        else:
            gap = True
    return "".join(out)
