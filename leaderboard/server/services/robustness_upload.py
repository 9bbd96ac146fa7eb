"""Prediction-file teams opt in to the robustness track: predictions for the dev copies.

A team that submitted a predictions file on the ``dev`` split downloads the dev copies (the
benchmark's robustness page), runs its detector on each condition, and uploads one JSONL
(optionally gzip) where every row is an ordinary prediction plus ``condition``: the condition's
split in the copies (``dev-image-jpeg-3``; ``robustness-inputs`` names its folders so). The
file is checked line by line (every problem names the line and field, the first 50 are listed
with the total), split per condition under ``DATA_DIR/robustness/runs/<id>/`` and scored like a
container's degraded run (`jobs.robustness_run.score_degraded`): level 0 from the submission's
own clean predictions. Only dev: held-out copies are never downloadable, so no one can predict
them offline.
"""
from __future__ import annotations

import gzip
import io
import json
import shutil
from pathlib import Path

from sqlalchemy.orm import Session

from leaderboard.core.errors import PredictionError, ProblemList
from leaderboard.core.packs import HELD_OUT_SPLITS
from leaderboard.core.robustness.layout import read_manifest
from leaderboard.server.errors import Forbidden, ServiceError
from leaderboard.server.models import Benchmark, Submission, User, utcnow
from leaderboard.server.models.robustness import RobustnessRun
from leaderboard.server.services import robustness as svc

NAME = "robustness predictions"


def accept_predictions(session: Session, sub: Submission, user: User, data: bytes, *,
                       data_dir: str, max_bytes: int) -> RobustnessRun:
    """Check ``data`` and store it per condition; the returned run is ``ran`` (the caller
    commits, then enqueues the scoring). PredictionError for a bad file, ServiceError when the
    submission cannot take one."""
    if user is None or not (user.is_admin or (sub.team_id is not None
                                              and user.team_id == sub.team_id)):
        raise Forbidden("only the submitting team can add robustness predictions")
    if sub.kind != "predictions":
        raise ServiceError("container submissions get their degraded run from the harness")
    if sub.split in HELD_OUT_SPLITS:
        raise ServiceError(f"robustness predictions are taken for the dev split only (copies of "
                           f"the held-out split {sub.split!r} are never downloadable)")
    if sub.status != "scored":
        raise ServiceError(f"the submission is {sub.status}; robustness predictions need its "
                           "clean predictions scored first")
    bench = session.get(Benchmark, sub.benchmark_id)
    build = svc.current_build(session, bench, sub.split, data_dir=data_dir)
    if build is None:
        raise ServiceError(f"the degraded copies of {bench.key}/{sub.split} are not built yet")
    if len(data) > max_bytes:
        raise ServiceError(f"the file is larger than {max_bytes // (1 << 20)} MB")
    manifest = read_manifest(Path(data_dir) / build.path)
    allowed = [c["split"] for c in manifest["conditions"]]
    per = _split(data, allowed)
    dest = Path(data_dir) / "robustness" / "runs" / str(sub.id)
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    for name, rows in per.items():
        (dest / f"{name}.jsonl").write_text("".join(r + "\n" for r in rows), encoding="utf-8")
    old = svc.run_of(session, sub.id)
    if old is not None:
        session.delete(old)
        session.flush()
    run = RobustnessRun(submission_id=sub.id, build_id=build.id, status="ran",
                        conditions=len(per), items=max(c["items"] for c in manifest["conditions"]),
                        method_json={**manifest["config"], "libraries": manifest["libraries"],
                                     "digest": manifest["digest"], "key": manifest["key"]},
                        notes_json=["predictions uploaded for the dev copies (not a run)"],
                        finished_at=utcnow())
    missing = [c for c in allowed if c not in per]
    if missing:
        run.notes_json.append(f"no predictions for {len(missing)} conditions, e.g. "
                              f"{missing[:3]}")
    session.add(run)
    session.flush()
    return run


def _split(data: bytes, allowed: list[str]) -> dict[str, list[str]]:
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise PredictionError(f"{NAME}: not a readable gzip file ({exc})") from None
    problems = ProblemList()
    out: dict[str, list[str]] = {}
    for n, raw in enumerate(io.BytesIO(data), 1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except ValueError:
            problems.add("not valid JSON", line=n, file=NAME)
            continue
        if not isinstance(row, dict):
            problems.add("must be a JSON object", line=n, file=NAME)
            continue
        cond = row.pop("condition", None)
        if cond not in allowed:
            shown = allowed[:5] + (["..."] if len(allowed) > 5 else [])
            problems.add(f"must name one of the copies' conditions {shown}, got {cond!r}",
                         line=n, field="condition", file=NAME)
            continue
        out.setdefault(cond, []).append(json.dumps(row, ensure_ascii=False))
    if problems:
        raise PredictionError(f"invalid {NAME} file", problems)
    if not out:
        raise PredictionError(f"{NAME}: the file holds no prediction rows")
    return out
