"""The degraded run of a container submission and its scoring (called by `jobs.containers`).

After the clean run succeeds, and while the image is still loaded, `run_degraded` runs the same
image over the split's current copies: once when the split has enough items for every
condition to degrade its own (the usual case: the model loads once), else once per round of
the copies' assignment (``rounds`` in the manifest). Within one invocation no base item appears
twice (`leaderboard.core.robustness.subset.assign_conditions`), so a detector cannot match an
item's degraded copies to one another and answer them all from the lightest. Same sandbox,
limits and GPU as the clean run; the wall limit is the smaller of the harness's and the
benchmark's robustness budget, for all invocations together.

Each ``/input`` is written afresh (`build_combined_input`): random ids and media names, files
copied (never linked) in a random order, one mode and one timestamp for all, rows in another
random order, so no file-system metadata says which condition an item is (docs/robustness.md
says what the bytes still say). The host keeps the map and splits ``predictions.jsonl`` back
into one file per condition with the original ids (a row for an id it never issued is dropped;
a missing row makes that condition's block incomplete, reported by the scorer like any upload).

Outcomes (`RobustnessRun.status`): ``skipped`` (no current copies), ``over_budget`` (the plan
is over the admin's budget: not run; or the run passed the budget's wall time: stopped),
``failed`` (the container failed on the copies: the harness's reason), ``ran`` then
``scored`` (`score_degraded`, after the clean scores are stored). The clean score always stays:
nothing here raises into the clean job.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import os
import random
import secrets
import shutil
from pathlib import Path

from flask import current_app
from sqlalchemy import select

from harness import Limits, run_submission
from leaderboard.core.benchmarks import get_benchmark
from leaderboard.core.packs import load_pack
from leaderboard.core.robustness.layout import condition_split, manifest_conditions, read_manifest
from leaderboard.core.robustness.scoring import score_copies
from leaderboard.core.table import Table
from leaderboard.server import labels_crypto
from leaderboard.server.boards.cache import invalidate_boards
from leaderboard.server.db import get_db
from leaderboard.server.jobs.queue import SCORING_QUEUE, enqueue_or_run_inline
from leaderboard.server.models import Benchmark, LabelSet, Submission, utcnow
from leaderboard.server.models.robustness import RobustnessRun
from leaderboard.server.services import robustness_outcomes
from leaderboard.server.services import robustness as svc

log = logging.getLogger(__name__)

#: added to the job's RQ timeout when a degraded run follows (splitting, scoring)
SCORING_MARGIN_S = 120


def extra_time_s(session, sub: Submission, limits: Limits, data_dir: str) -> float:
    """How much longer the container job may take because a degraded run follows (0: none)."""
    bench = session.get(Benchmark, sub.benchmark_id)
    bud = svc.budget(session, bench)
    if not bud.enabled or svc.current_build(session, bench, sub.split, data_dir=data_dir) is None:
        return 0.0
    return min(bud.wall_s, limits.wall_s) + SCORING_MARGIN_S


def run_degraded(**kwargs) -> None:
    """Run the image over the split's current copies (module doc); never raises (a failure is
    logged and, when a run row exists, recorded on it): the clean run's outcome stands."""
    try:
        _run_degraded(**kwargs)
    except Exception:
        log.exception("job=container submission=%s robustness=error", kwargs.get("sid"))


def _run_degraded(*, sid: int, client, image_id: str, limits: Limits, gpu: int | None,
                  env: dict, labels: dict, deployment: str, run_dir: Path,
                  clean_duration_s: float, describe) -> None:
    """``describe(result)``: the team-facing line of a failed harness run."""
    cfg = current_app.config
    db = get_db()
    with db.scope() as session:
        sub = session.get(Submission, sid)
        bench = session.get(Benchmark, sub.benchmark_id)
        bud = svc.budget(session, bench)
        config = svc.config_of(bench)
        if not bud.enabled or config is None or sub.split not in config.splits:
            return  # no track for this benchmark or split: no row, nothing to show
        build = svc.current_build(session, bench, sub.split, data_dir=cfg["DATA_DIR"])
        old = svc.run_of(session, sid)
        if old is not None:
            session.delete(old)
            session.flush()
        run = RobustnessRun(submission_id=sid, clean_duration_s=round(clean_duration_s, 3))
        session.add(run)
        if build is None:
            run.status, run.finished_at = "skipped", utcnow()
            run.reason = ("the degraded copies of this split are not built yet (an admin builds "
                          "them on the benchmark's robustness page)")
            return
        copies = Path(cfg["DATA_DIR"]) / build.path
        manifest = read_manifest(copies)
        conds = manifest["conditions"]
        per = max((c["items"] for c in conds), default=0)
        run.build_id, run.conditions, run.items = build.id, len(conds), per
        run.method_json = {**manifest["config"], "libraries": manifest["libraries"],
                           "digest": manifest["digest"], "key": manifest["key"]}
        over = svc.over_budget(bud, len(conds), per)
        if over:
            run.status, run.reason, run.finished_at = "over_budget", f"not run: {over}", utcnow()
            return
        session.flush()
        run_id, budget_s = run.id, bud.wall_s
    try:
        _run(run_id, sid=sid, client=client, image_id=image_id, limits=limits, gpu=gpu, env=env,
             labels=labels, deployment=deployment, run_dir=run_dir, copies=copies,
             manifest=manifest, budget_s=budget_s, describe=describe)
    except Exception as exc:  # never the clean run's business
        log.exception("job=container submission=%s robustness=platform_error", sid)
        _finish(run_id, "failed", f"platform error on the degraded run ({type(exc).__name__})")


def _run(run_id: int, *, sid, client, image_id, limits: Limits, gpu, env, labels, deployment,
         run_dir: Path, copies: Path, manifest: dict, budget_s: float, describe) -> None:
    cfg = current_app.config
    wall = min(limits.wall_s, budget_s)
    spent, dropped = 0.0, 0
    rows: dict[str, list[str]] = {}
    rounds = round_entries(copies, manifest)
    for r, entries in enumerate(rounds):
        input_dir, output_dir = run_dir / f"robust-input-{r}", run_dir / f"robust-output-{r}"
        output_dir.mkdir(parents=True)
        mapping = build_combined_input(copies, entries, input_dir)
        result = run_submission(
            client=client, image_id=image_id, input_dir=input_dir, output_dir=output_dir,
            limits=dataclasses.replace(limits, wall_s=max(wall - spent, 1.0)), submission_id=sid,
            gpu=gpu, env=env, labels={**labels, "lb.robustness": "1"}, deployment=deployment)
        spent += result.duration_s
        shutil.rmtree(input_dir, ignore_errors=True)  # a run folder holds one round at a time
        if not result.ok:
            if result.reason == "timeout" and budget_s < limits.wall_s:
                status, reason = "over_budget", (
                    f"stopped after {spent:.1f} s: over the benchmark's robustness budget of "
                    f"{budget_s:g} s")
            else:
                status, reason = "failed", describe(result)
            if len(rounds) > 1:
                reason = f"{reason} (invocation {r + 1} of {len(rounds)})"
            _finish(run_id, status, reason, duration_s=spent,
                    notes=_log_note(result, env.get("LB_BENCHMARK", "")))
            return
        dropped += collect_predictions(result.predictions_path, mapping, rows)
    dest = runs_dir(cfg["DATA_DIR"], sid)
    shutil.rmtree(dest, ignore_errors=True)
    write_condition_files(rows, {c["split"] for c in manifest["conditions"]}, dest)
    notes = [f"{dropped} prediction rows named ids that were not in the input; ignored"] \
        if dropped else []
    if len(rounds) > 1:
        notes.append(f"{len(rounds)} invocations of the container (the split is too small to "
                     f"give every condition its own items in one)")
    _finish(run_id, "ran", None, duration_s=spent, notes=notes)


#: characters of a failed degraded run's log kept for the team (its end)
LOG_TAIL_CHARS = 2000


def _log_note(result, benchmark_key: str) -> list[str]:
    """The end of a failed degraded run's log, under the benchmark's log policy (``hidden``:
    nothing, as for the clean run; its ids are the opaque ones, so it reveals no mapping)."""
    try:
        policy = get_benchmark(benchmark_key).container_logs
    except KeyError:
        return []
    text = (result.logs or "").strip()
    if policy == "hidden" or not text:
        return []
    return [f"end of the degraded run's log:\n{text[-LOG_TAIL_CHARS:]}"]


def mark_interrupted(sid: int) -> None:
    """A re-queued container job (its worker died) skips the runs; a degraded run that was
    still running then is recorded as failed, not left "running" (a finished one, ``ran``, is
    still scored)."""
    try:
        with get_db().scope() as session:
            run = svc.run_of(session, sid)
            if run is not None and run.status == "running":
                run.status, run.finished_at = "failed", utcnow()
                run.reason = ("interrupted: the worker stopped during the degraded run (the "
                              "image is not kept, so it is not run again)")
    except Exception:
        log.exception("submission=%s could not record the interrupted degraded run", sid)


def runs_dir(data_dir: str, sid: int) -> Path:
    return Path(data_dir) / "robustness" / "runs" / str(int(sid))


def round_entries(copies: Path, manifest: dict) -> list[list[tuple[str, dict]]]:
    """Per invocation of the container (the manifest's ``rounds``), the (condition split,
    ``items.jsonl`` row) of every item it holds; no base item twice in one invocation."""
    by_split: dict[str, dict[str, dict]] = {}
    for c in manifest["conditions"]:
        with open(copies / "splits" / c["split"] / "items.jsonl", encoding="utf-8") as fh:
            by_split[c["split"]] = {row["id"]: row for row in map(json.loads, fh)
                                    if isinstance(row, dict)}
    out = []
    for round_ in manifest.get("rounds") or []:
        entries = [(split, by_split[split][i]) for split, ids in sorted(round_.items())
                   for i in ids]
        seen = [row["id"] for _, row in entries]
        if len(seen) != len(set(seen)):
            raise ValueError(f"{copies}: an invocation holds an item twice (copies out of date?)")
        out.append(entries)
    return out


#: every file and folder of a combined input carries this modification and access time
#: (2000-01-01T00:00:00Z), so no timestamp orders the items
INPUT_MTIME_NS = 946_684_800 * 10**9


def build_combined_input(copies: Path, entries: list[tuple[str, dict]], dest: Path
                         ) -> dict[str, tuple[str, str]]:
    """Fill the new folder ``dest`` with ``entries``' items under random ids; return random id
    -> (condition split, original id).

    Nothing but the bytes of a medium says which condition it is: every file is written afresh
    (read and written: no hard link, no reflink, so no inode or extent is shared with the
    copies), in a random order (inode numbers, creation and change times and a file system's
    directory order follow it), under a random name in one flat ``media/`` folder, mode 0644
    (folders 0755), and every file and folder gets the same modification and access time
    (`INPUT_MTIME_NS`); ``items.jsonl`` lists the rows in another random order.
    """
    rng = random.SystemRandom()
    rows, files, mapping, names = [], [], {}, set()

    def fresh(suffix: str) -> str:
        while True:
            name = f"media/{secrets.token_hex(8)}{suffix.lower()}"
            if name not in names:
                names.add(name)
                return name

    for split, original in entries:
        row = dict(original)
        opaque = f"r{secrets.token_hex(8)}"
        while opaque in mapping:
            opaque = f"r{secrets.token_hex(8)}"
        mapping[opaque] = (split, row["id"])
        media = row.get("media")
        new = []
        for rel in [media] if isinstance(media, str) else list(media or []):
            name = fresh(Path(rel).suffix)
            files.append((copies / rel, name))
            new.append(name)
        row["id"] = opaque
        row["media"] = new[0] if isinstance(media, str) else new
        rows.append(row)
    (dest / "media").mkdir(parents=True)
    rng.shuffle(files)
    for src, name in files:
        with open(src, "rb") as fin, open(dest / name, "xb") as fout:
            shutil.copyfileobj(fin, fout)  # plain reads and writes: a new inode and new blocks
        os.chmod(dest / name, 0o644)
    rng.shuffle(rows)
    with open(dest / "items.jsonl", "x", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")
    os.chmod(dest / "items.jsonl", 0o644)
    for folder in (dest / "media", dest):
        folder.chmod(0o755)
    stamped = [dest / name for _, name in files] + [dest / "items.jsonl"]
    rng.shuffle(stamped)
    for path in stamped + [dest / "media", dest]:
        os.utime(path, ns=(INPUT_MTIME_NS, INPUT_MTIME_NS))
    return mapping


def collect_predictions(path: Path, mapping: dict[str, tuple[str, str]],
                        out: dict[str, list[str]]) -> int:
    """Add each row of ``path`` to ``out[condition split]`` under its original id; returns the
    rows with unknown ids (dropped). Unparsable lines are dropped too."""
    dropped = 0
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                opaque = row.get("id") if isinstance(row, dict) else None
            except ValueError:
                opaque = None
            if not isinstance(opaque, str) or opaque not in mapping:
                dropped += 1
                continue
            split, original = mapping[opaque]
            row["id"] = original
            out.setdefault(split, []).append(json.dumps(row, ensure_ascii=False))
    return dropped


def write_condition_files(rows: dict[str, list[str]], splits, dest: Path) -> None:
    """``dest/<condition split>.jsonl`` for every split (empty when no row came back: the
    scorer then names the missing ids)."""
    dest.mkdir(parents=True, exist_ok=True)
    for split in splits:
        (dest / f"{split}.jsonl").write_text("\n".join(rows.get(split, [])) + "\n",
                                             encoding="utf-8")


def split_predictions(path: Path, mapping: dict[str, tuple[str, str]], dest: Path) -> int:
    """One invocation's predictions as ``dest/<condition split>.jsonl`` (original ids); returns
    the rows with unknown ids."""
    rows: dict[str, list[str]] = {}
    dropped = collect_predictions(path, mapping, rows)
    write_condition_files(rows, {s for s, _ in mapping.values()}, dest)
    return dropped


def _finish(run_id: int, status: str, reason: str | None, *, duration_s: float | None = None,
            notes: list[str] | None = None) -> None:
    with get_db().scope() as session:
        run = session.get(RobustnessRun, run_id)
        run.status, run.reason, run.finished_at = status, reason, utcnow()
        if duration_s is not None:
            run.duration_s = round(duration_s, 3)
        if notes:
            run.notes_json = list(run.notes_json or []) + notes
    log.info("job=container robustness_run=%s outcome=%s", run_id, status)


def score_degraded(sid: int) -> None:
    """Score a ``ran`` degraded run (after the clean scores are stored): the clean subset from
    the clean predictions, every condition from its file; records replace earlier ones. Never
    raises (the clean scores are stored already)."""
    try:
        _score_degraded(sid)
    except Exception:
        log.exception("job=container submission=%s robustness=scoring_error", sid)


def _score_degraded(sid: int) -> None:
    cfg = current_app.config
    db = get_db()
    with db.scope() as session:
        run = svc.run_of(session, sid)
        if run is None or run.status != "ran" or run.build is None:
            return
        sub = session.get(Submission, sid)
        ls = session.scalar(select(LabelSet).where(LabelSet.benchmark_id == sub.benchmark_id,
                                                   LabelSet.split == sub.split))
        run_id, ciphertext = run.id, ls.ciphertext
        copies = Path(cfg["DATA_DIR"]) / run.build.path
        clean_file, split = Path(cfg["DATA_DIR"]) / sub.file_path, sub.split
        bench_key = session.get(Benchmark, sub.benchmark_id).key
    try:
        labels = Table.from_bytes(labels_crypto.decrypt(ciphertext, keys=cfg["LABEL_KEYS"]))
        pack = load_pack(copies)
        manifest = read_manifest(copies)
        folder = runs_dir(cfg["DATA_DIR"], sid)
        clean_name = condition_split(split, None)
        wanted = set(pack.items(clean_name).ids.tolist())
        _filter_rows(clean_file, wanted, folder / f"{clean_name}.jsonl")
        files = {clean_name: folder / f"{clean_name}.jsonl"}
        for c in manifest_conditions(manifest):
            name = condition_split(split, c)
            if (folder / f"{name}.jsonl").is_file():
                files[name] = folder / f"{name}.jsonl"
        result = score_copies(pack, files, labels=labels)
    except Exception as exc:
        log.exception("job=container submission=%s robustness=scoring_error", sid)
        _finish(run_id, "failed", f"scoring the degraded run failed ({type(exc).__name__}: {exc})")
        return
    with db.scope() as session:
        n = svc.store_records(session, sid, result.records)
        run = session.get(RobustnessRun, run_id)
        run.status = "scored"
        run.notes_json = list(run.notes_json or []) + result.notes
    robustness_outcomes.write(cfg["DATA_DIR"], sid, result.outcomes,  # before invalidating
                              result.positions)
    invalidate_boards(bench_key)  # the robustness board is cached under the benchmark
    log.info("job=container submission=%s robustness=scored records=%s", sid, n)


SCORE_FUNC = "leaderboard.server.jobs.robustness_run.score_degraded"


def enqueue_scoring(sid: int) -> None:
    """Score an uploaded degraded run (`services.robustness_upload`) on the scoring queue, or
    inline without Redis; a lost enqueue leaves the run ``ran`` (uploading again re-queues)."""
    cfg = current_app.config
    enqueue_or_run_inline(SCORING_QUEUE, SCORE_FUNC, sid,
                          job_id=f"robustness-{sid}-{secrets.token_hex(4)}",
                          inline=score_degraded, kind="robustness ",
                          job_timeout=int(cfg["SCORING_TIMEOUT_S"]), retry=None,
                          description=f"score robustness predictions of submission {sid}",
                          recovery="upload the robustness predictions again")


def _filter_rows(src: Path, ids: set, dest: Path) -> None:
    import gzip

    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(src, "rb") as probe:
        zipped = probe.read(2) == b"\x1f\x8b"
    opener = gzip.open if zipped else open
    with opener(src, "rt", encoding="utf-8") as fh, open(dest, "w", encoding="utf-8") as out:
        for line in fh:
            try:
                if json.loads(line).get("id") in ids:
                    out.write(line if line.endswith("\n") else line + "\n")
            except (ValueError, AttributeError):
                continue
