"""Error analysis of a team's own dev-split submission (issue 38; docs/error-analysis.md).

Who may ask is decided before this is called (`leaderboard.server.access.visibility.
check_error_analysis`). This reads the split's labels the way the scorer does (decrypted into
this process's memory only, through the scorer's caches: `scoring_service.load_tables`), re-reads
the submission's stored predictions file, and hands both to the pure
`leaderboard.core.error_analysis.analyse`. It adds, per task, the headline metric's per-slice
records beside those of the board's best visible submission (the first row of the task's board on
the same split, "all submissions" mode).
"""
from __future__ import annotations

from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.core.error_analysis import MAX_ERRORS, analyse
from leaderboard.core.errors import PredictionError
from leaderboard.core.predictions import validate_predictions
from leaderboard.server.boards.service import benchmark_info, board
from leaderboard.server.errors import ServiceError
from leaderboard.server.models import LabelSet, Score, Submission
from leaderboard.server.services.scoring_service import Claim, load_tables


def _records(session: Session, submission_id: int, task: str, metric: str,
             part: str) -> dict[str, Score]:
    """slice_key -> the submission's record of ``metric`` (the judge-free one when several)."""
    rows = session.scalars(select(Score).where(
        Score.submission_id == submission_id, Score.task == task, Score.metric == metric,
        Score.part == part).order_by(Score.id)).all()
    out: dict[str, Score] = {}
    for s in rows:
        if s.slice_key not in out or (out[s.slice_key].judge is not None and s.judge is None):
            out[s.slice_key] = s
    return out


def _best(session: Session, info: dict, task: str, split: str) -> dict | None:
    """The first ranked row of the task's board on ``split`` ("all submissions" mode)."""
    try:
        page = board(session, benchmark_key=info["key"], task=task, split=split, mode="all",
                     page=1, per_page=1)
    except ServiceError:
        return None
    rows = [r for r in page["rows"] if r["rank"] is not None]
    if not rows:
        return None
    r = rows[0]
    return {"submission_id": r["submission_id"], "team": r["team"]["name"],
            "method_name": r["method_name"]}


def _cell(s: Score | None) -> dict | None:
    if s is None:
        return None
    return {"value": s.value, "ci_low": s.ci_low, "ci_high": s.ci_high, "n": s.n}


def slice_metric(session: Session, submission_id: int, info: dict, task: dict,
                 part: str) -> str:
    """The metric `slices_beside_best` shows (the headline when none has slices)."""
    sliced = set(session.scalars(select(Score.metric).where(
        Score.submission_id == submission_id, Score.task == task["key"], Score.part == part,
        Score.slice_key != "").distinct()))
    for m in (task["headline"], *task.get("secondary", []), *info["metrics"]):
        spec = info["metrics"].get(m, {})
        if m in sliced and spec.get("higher_is_better") is not None \
                and m not in ("unparsable", "unparsable_rate"):
            return m
    return task["headline"]


def slices_beside_best(session: Session, sub: Submission, info: dict, task: dict,
                       part: str = "all") -> dict:
    """The records of one metric of ``sub`` on every slice it has, beside the board's best's
    on the same slices: ``{"metric", "title", "fmt", "higher_is_better", "best" (or None),
    "is_best", "rows": [{"slice_key", "slice", "mine", "best", "difference"}]}`` (overall
    first, then slices by key). The metric is the task's headline when it is broken down by
    slice, else the first of its secondary metrics, then of the benchmark's, that is (SynCred's
    TPR@5%FPR has no slices; its TPR has)."""
    metric = slice_metric(session, sub.id, info, task, part)
    mine = _records(session, sub.id, task["key"], metric, part)
    best = _best(session, info, task["key"], sub.split)
    theirs = (_records(session, best["submission_id"], task["key"], metric, part)
              if best else {})
    rows = []
    for key in sorted(mine, key=lambda k: (k != "", k)):
        m, b = mine[key], theirs.get(key)
        diff = (m.value - b.value if b is not None and m.value is not None
                and b.value is not None else None)
        rows.append({"slice_key": key, "slice": dict(m.slice_json or {}), "mine": _cell(m),
                     "best": _cell(b), "difference": diff})
    spec = info["metrics"].get(metric, {})
    return {"metric": metric, "title": spec.get("title") or metric,
            "fmt": spec.get("fmt", "num"), "higher_is_better": spec.get("higher_is_better"),
            "best": best, "is_best": bool(best and best["submission_id"] == sub.id),
            "rows": rows}


def error_analysis(session: Session, sub: Submission, *, data_dir: str, label_keys,
                   max_errors: int = MAX_ERRORS, run=None) -> dict:
    """The analysis of an allowed submission: ``{"submission", "benchmark", "split",
    "tasks"}``, each task `analyse`'s dict plus ``title`` and ``slices``
    (`slices_beside_best`). ``run(fn)`` runs the database-free part (reading the file, the
    analysis; the web passes its ``off_loop``). ServiceError (409/410) when the labels or the
    stored file are missing. Per-item rows carry labels: pass the result through
    `apply_grants` before showing it."""
    bench = sub.benchmark
    ls = session.scalar(select(LabelSet).where(LabelSet.benchmark_id == bench.id,
                                               LabelSet.split == sub.split))
    if ls is None:
        raise ServiceError(f"benchmark {bench.key} has no labels for split {sub.split!r}",
                           status=409, code="no_labels")
    path = Path(data_dir) / sub.file_path if sub.file_path else None
    if path is None or not path.is_file():
        raise ServiceError(f"the predictions file of submission {sub.id} is no longer stored, "
                           "so its items cannot be analysed", status=410, code="gone")
    claim = Claim(sub.id, bench.key, sub.split, bench.pack_path, path, ls.ciphertext, ls.id)
    split = sub.split

    def compute() -> list[dict]:
        pack, labels = load_tables(claim, label_keys=label_keys)
        try:
            preds = validate_predictions(pack, split, path, labels=labels)
        except PredictionError as exc:  # scored once; the pack changed since: say so
            raise ServiceError(f"the stored predictions of submission {claim.submission_id} "
                               f"no longer validate against the pack: {exc.message}",
                               status=409, code="stale") from None
        return analyse(pack, split, preds, labels=labels, max_errors=max_errors)

    analysed = (run or (lambda fn: fn()))(compute)
    info = benchmark_info(session, bench.key)
    tasks_info = {t["key"]: t for t in info["tasks"]}
    tasks = []
    for a in analysed:
        t = tasks_info.get(a["task"])
        if t is not None:
            a["title"] = t.get("title") or t["key"]
            a["slices"] = slices_beside_best(session, sub, info, t)
        else:
            a["title"], a["slices"] = a["task"], None
        tasks.append(a)
    return {"submission": {"id": sub.id, "method_name": sub.method_name,
                           "team": sub.team.name if sub.team else None, "status": sub.status},
            "benchmark": {"key": bench.key, "title": info.get("title") or bench.key},
            "split": sub.split, "tasks": tasks}


IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".gif")


def apply_grants(result: dict, grants: dict, *, media_url) -> dict:
    """``result`` as the caller may see it (`visibility.error_detail_grants`): without the
    ``labels`` grant the per-item errors are withheld (``errors_withheld`` says why); with the
    ``media`` grant each error's media get ``media_urls`` (``media_url(path)``: a signed
    download link, checked again when followed) and ``thumbnail`` (the first image, if any)."""
    for a in result["tasks"]:
        if grants.get("labels"):
            a["errors"], a["errors_withheld"] = [], grants["labels"]
            continue
        a["errors_withheld"] = None
        for e in a["errors"]:
            e["media_urls"], e["thumbnail"] = [], None
            if grants.get("media") or not e["media"]:
                continue
            e["media_urls"] = [media_url(p) for p in e["media"]]
            e["thumbnail"] = next((u for p, u in zip(e["media"], e["media_urls"])
                                   if p.lower().endswith(IMAGE_SUFFIXES)), None)
    result["media_withheld"] = grants.get("media")
    return result
