"""The demo data of ``make run`` (``seed-demo``, ``run-demo``): five packs, imported, with
baselines scored, and only what changed redone on the next start (issue 33).

Three things are cached, each by a digest of what it is made from:

* **the generated pack** (``DATA_DIR/demo-packs/<key>``): by `generator_digest`, a SHA-256 of the
  generator's inputs (the source of ``leaderboard/demo``, ``core`` and ``builders``, the versions
  of the libraries that write media, the scale and the seed). Equal: the pack on disk is reused;
  the digest is written to ``.<key>.inputs`` beside it only once generation finished.
* **the import**: by `pack_digest`, a SHA-256 of every file of the generated pack (labels and
  media included, the compile cache left out). After the import commits it is written to
  ``.demo-digest`` in the server's copy (``DATA_DIR/packs/<key>/<version>``); any later import
  replaces that folder and so drops the stamp. The import is skipped when the stamp equals the
  pack's digest and the database holds the benchmark at that folder with labels for every split.
* **the baselines**: one per (benchmark, split, kind) that is not hidden. A re-import of a pack
  whose content changed hides the earlier demo baselines ("superseded") and scores new ones, so
  no board keeps numbers computed on other labels.

Every step prints a line as it starts and as it ends (with seconds), so a first start that
generates and scores for a minute says what it is doing.

The demo's baselines are dated as if made in the past (`DEMO_MADE_AT`, per kind): a baseline
made "now" would have seen every generator of the packs' ``generators:`` tables (real public
dates, 2022-2025), so the seen/unseen split (issue 37) would be empty. The dates are the demo's
choice, stated here and in docs/releases.md; a team's submission is always dated when made.

Two releases (issue 37): for the benchmarks of `leaderboard.demo.two_releases.LATER` (UniAIDet)
the generated pack is published as two releases, release 1 without the generator that became
public last and release 2 adding it (derived again only when the generated pack changed, stamped
like the import). Each release gets its baselines; a release 2 baseline is the same built-in
detector run on release 2's items, recorded as the re-run of the release 1 baseline of its split
and kind (``rerun_of_id``). The releases' dates (`DEMO_RELEASED_AT`) are the demo's choice like
`DEMO_MADE_AT`: release 1 after its newest generator, release 2 after the one it adds; a release 2
baseline is dated when release 2 came out.
"""
from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

import click
from flask import Flask
from sqlalchemy import select

import leaderboard
from leaderboard.core.baselines import write_baseline
from leaderboard.core.packs import load_pack
from leaderboard.demo import BENCHMARKS, generate
from leaderboard.demo.two_releases import LATER, derive
from leaderboard.server.boards.cache import invalidate_boards
from leaderboard.server.db import get_db
from leaderboard.server.jobs.scoring import enqueue_scoring
from leaderboard.server.models import Benchmark, LabelSet, Submission
from leaderboard.server.services import benchmarks, releases, submissions

#: the stamp in the server's copy of a pack: the digest of the demo pack it was imported from
IMPORT_STAMP = ".demo-digest"
#: what the demo generators read or write media with: a new version may write other bytes
_LIBRARIES = ("numpy", "opencv-python-headless", "pillow", "pyyaml", "orjson", "scikit-image")
_SOURCES = ("demo", "core", "builders")
SUPERSEDED = "superseded: the demo pack changed, a baseline of its new content replaces this one"


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "-"


def generator_digest(key: str, *, scale: str, seed: int) -> str:
    """SHA-256 of everything a demo pack is made from (module docstring)."""
    h = hashlib.sha256(f"{key}\0{scale}\0{seed}\0".encode())
    for dist in _LIBRARIES:
        h.update(f"{dist}={_version(dist)}\0".encode())
    root = Path(leaderboard.__file__).parent
    for sub in _SOURCES:
        for path in sorted((root / sub).rglob("*.py")):
            h.update(str(path.relative_to(root)).encode() + b"\0")
            h.update(path.read_bytes())
    return h.hexdigest()


def pack_digest(pack_dir: Path) -> str:
    """SHA-256 over every file of a pack folder (relative path and bytes), hidden files and the
    compile cache left out."""
    h = hashlib.sha256()
    for path in sorted(pack_dir.rglob("*")):
        rel = path.relative_to(pack_dir)
        if not path.is_file() or any(part.startswith(".") for part in rel.parts):
            continue
        h.update(str(rel).encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def _cached_pack(out: Path, key: str, *, scale: str, seed: int, echo) -> Path:
    """The demo pack of ``key``, generated only when `generator_digest` changed."""
    stamp = out / f".{key}.inputs"
    want = generator_digest(key, scale=scale, seed=seed)
    if (out / key / "benchmark.yaml").is_file() and stamp.is_file() \
            and stamp.read_text().strip() == want:
        echo(f" pack cached ({want[:12]});", nl=False)
        return out / key
    started = time.monotonic()
    echo(" generating the pack ...", nl=False)
    stamp.unlink(missing_ok=True)  # a generation cut short leaves no stamp: done again next time
    path = generate(key, out, scale=scale, seed=seed)
    stamp.write_text(want + "\n")
    echo(f" {time.monotonic() - started:.1f} s;", nl=False)
    return path


#: the made-at date of each demo baseline kind (module docstring): a "random" detector of
#: September 2023 has not seen SD3, FLUX.1 or Midjourney 6; an "all-fake" one of September 2024
#: has seen all but SD3.5 and Qwen-Image
DEMO_MADE_AT = {"random": datetime(2023, 9, 1, tzinfo=timezone.utc),
                "all-fake": datetime(2024, 9, 1, tzinfo=timezone.utc)}
#: the publication date of each demo release (module docstring): release 1 after SD-3.5-Medium
#: (2024-10-29), its newest generator; release 2 after Qwen-Image (2025-08-04), the one it adds
DEMO_RELEASED_AT = {1: datetime(2024, 11, 15, tzinfo=timezone.utc),
                    2: datetime(2025, 9, 15, tzinfo=timezone.utc)}
#: the stamp beside the derived releases: the digest of the generated pack they came from
RELEASES_STAMP = ".from"


def _imported(session, key: str, digest: str) -> bool:
    bench = session.scalar(select(Benchmark).where(Benchmark.key == key))
    if bench is None or not bench.pack_path:
        return False
    stamp = Path(bench.pack_path) / IMPORT_STAMP
    if not stamp.is_file() or stamp.read_text().strip() != digest:
        return False
    have = set(session.scalars(select(LabelSet.split).where(LabelSet.benchmark_id == bench.id)))
    return set((bench.meta_json or {}).get("splits", [])) <= have


def _current_baseline(session, key: str, split: str, kind: str) -> int | None:
    """The id of the current (not failed, not hidden) baseline of that kind, else None."""
    return session.scalar(
        select(Submission.id).join(Benchmark, Submission.benchmark_id == Benchmark.id)
        .where(Benchmark.key == key, Submission.split == split, Submission.is_baseline,
               Submission.baseline_kind == kind, Submission.status != "failed",
               Submission.hidden.is_(False)).order_by(Submission.id.desc()).limit(1))


def _supersede_baselines(session, key: str) -> int:
    subs = session.scalars(
        select(Submission).join(Benchmark, Submission.benchmark_id == Benchmark.id)
        .where(Benchmark.key == key, Submission.is_baseline, Submission.hidden.is_(False))).all()
    for sub in subs:
        sub.hidden, sub.hidden_reason = True, SUPERSEDED
    return len(subs)


def seed(app: Flask, *, seed: int = 0, only: tuple[str, ...] = (), kinds: str = "random,all-fake",
         echo: Callable[..., None] = click.echo) -> None:
    """Make the demo data current (module docstring); prints progress with ``echo``.

    ValueError / LeaderboardError from a pack that fails its checks (nothing of it committed)."""
    data_dir = Path(app.config["DATA_DIR"])
    out = data_dir / "demo-packs"
    out.mkdir(parents=True, exist_ok=True)
    keys = list(only or BENCHMARKS)
    kind_list = [k.strip() for k in kinds.split(",") if k.strip()]
    inline = not app.config.get("REDIS_URL")
    for n, key in enumerate(keys, 1):
        t0 = time.monotonic()
        echo(f"[{n}/{len(keys)}] {key}:", nl=False)
        path = _cached_pack(out, key, scale="small", seed=seed, echo=echo)
        if key in LATER:
            paths = _release_packs(out, key, path, seed=seed, echo=echo)
        else:
            paths = [path]
        for number, release_path in enumerate(paths, 1):
            if len(paths) > 1:
                echo(f" v{number}:", nl=False)
            _seed_release(app, key, release_path, number if len(paths) > 1 else None,
                          data_dir=data_dir, seed=seed, kinds=kind_list, inline=inline,
                          echo=echo)
        echo(f" [{time.monotonic() - t0:.1f} s]")


def _release_packs(out: Path, key: str, full: Path, *, seed: int, echo) -> list[Path]:
    """The two release folders of ``key`` (`leaderboard.demo.two_releases`), derived from the
    generated pack ``full`` only when it changed since they were (``RELEASES_STAMP``)."""
    dest = out / "releases" / key
    want = pack_digest(full)
    stamp = dest / RELEASES_STAMP
    if stamp.is_file() and stamp.read_text().strip() == want and \
            all((dest / v / "benchmark.yaml").is_file() for v in ("v1", "v2")):
        return [dest / "v1", dest / "v2"]
    stamp.unlink(missing_ok=True)
    paths = list(derive(full, dest, generator=LATER[key], seed=seed))
    stamp.write_text(want + "\n")
    echo(" releases derived;", nl=False)
    return paths


def _seed_release(app: Flask, family: str, path: Path, number: int | None, *, data_dir: Path,
                  seed: int, kinds: list[str], inline: bool, echo) -> None:
    """Import one pack (``number``: its release, None for a single-release benchmark) unless
    current, and score its missing baselines; a release 2 baseline re-runs release 1's."""
    key = family if number is None else releases.release_key(family, number)
    # a name that means this release whatever the family's latest is (create_baseline resolves)
    name = family if number is None else f"{family}-v{number}"
    digest = pack_digest(path)
    superseded = 0
    with get_db(app).scope() as session:
        skip = _imported(session, key, digest)
    if skip:
        echo(" import current;", nl=False)
    else:
        t1 = time.monotonic()
        echo(" importing ...", nl=False)
        with get_db(app).scope() as session:
            bench = benchmarks.import_pack(session, path, data_dir=data_dir,
                                           label_keys=app.config["LABEL_KEYS"])
            if number is not None:
                bench.released_at = DEMO_RELEASED_AT[number]
            superseded = _supersede_baselines(session, key)
            dest = Path(bench.pack_path)
        (dest / IMPORT_STAMP).write_text(digest + "\n")  # after the commit: see docstring
        invalidate_boards(key)
        echo(f" {time.monotonic() - t1:.1f} s;", nl=False)
    pack, ids = load_pack(path), []
    for split in pack.splits:
        for kind in kinds:
            with get_db(app).scope() as session:
                if _current_baseline(session, key, split, kind):
                    continue
            pred = data_dir / "demo-baselines" / key / f"{split}.{kind}.jsonl"
            write_baseline(pack, split, kind, pred, seed=seed)
            with get_db(app).scope() as session:
                sub = submissions.create_baseline(session, benchmark=name, split=split,
                                                  kind=kind, source=pred, data_dir=data_dir)
                if number is not None and number > 1:
                    # the same detector run on the later release: a re-run of the earlier one
                    sub.rerun_of_id = _current_baseline(
                        session, releases.release_key(family, number - 1), split, kind)
                    sub.created_at = DEMO_RELEASED_AT[number]
                elif kind in DEMO_MADE_AT:
                    sub.created_at = DEMO_MADE_AT[kind]
                ids.append(sub.id)
    if not ids:
        echo(" baselines current", nl=False)
    else:
        t2 = time.monotonic()
        echo(f" {'scoring' if inline else 'queueing'} {len(ids)} baselines ...", nl=False)
        for sid in ids:
            enqueue_scoring(sid)
        echo(f" {time.monotonic() - t2:.1f} s", nl=False)
    if superseded:
        echo(f" ({superseded} earlier baselines hidden: superseded)", nl=False)
