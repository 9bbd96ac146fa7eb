"""What the submission page shows: every visible metric record, grouped, and the plots.

Parts (design.md, "Boards, splits and fairness"): on a split with public/private parts, only the
public part is shown until the benchmark's private part is revealed (the "all" part mixes in the
private items, so it is withheld too); admins see every part. Plots are drawn on the part the
board shows. Slices with two axes, one of them ``generator``, become heat maps (UniAIDet f.Acc and
mIoU by generator x domain; VCT² accuracy by subset x generator); one-axis slices of a task's
headline metric become bars with CI whiskers; stored curves become ROC / PR charts.
"""
from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.server.boards import plots
from leaderboard.server.boards.service import benchmark_info, parse_slice_key
from leaderboard.server.models import Curve, Score, Submission

MAX_HEATMAPS_PER_TASK = 4
MAX_BARS = 40
MAX_CURVE_SERIES = 6


def visible_parts(present: set[str], *, revealed: bool, privileged: bool) -> list[str]:
    """The parts of a submission's scores that may be shown, in display order."""
    if "public" not in present:
        return [p for p in ("all",) if p in present]
    if revealed or privileged:
        return [p for p in ("public", "private", "all") if p in present]
    return ["public"]


def shown_part(parts: list[str], *, revealed: bool) -> str | None:
    """The part plots use: what the board shows (public, or private once revealed)."""
    if "private" in parts and revealed:
        return "private"
    return parts[0] if parts else None


def _spec(info: dict, metric: str) -> dict:
    s = info["metrics"].get(metric, {})
    return {"title": s.get("title") or metric, "fmt": s.get("fmt", "num"),
            "higher_is_better": s.get("higher_is_better"), "lower": s.get("lower", 0.0),
            "upper": s.get("upper", 1.0)}


def submission_report(session: Session, submission: Submission, *,
                      privileged: bool = False) -> dict:
    """Records grouped by part, task and slice, the JSON download rows and SVG plots."""
    info = benchmark_info(session, submission.benchmark.key)
    scores = list(session.scalars(select(Score).where(Score.submission_id == submission.id)
                                  .order_by(Score.id)))
    parts = visible_parts({s.part for s in scores}, revealed=info["private_revealed"],
                          privileged=privileged)
    task_order = {t["key"]: i for i, t in enumerate(info["tasks"])}
    metric_order = {m: i for i, m in enumerate(info["metrics"])}
    records, groups = [], {}
    for s in sorted((s for s in scores if s.part in parts),
                    key=lambda s: (parts.index(s.part), task_order.get(s.task, 99), s.task,
                                   s.slice_key != "", s.slice_key,
                                   metric_order.get(s.metric, 999), s.metric)):
        rec = {"part": s.part, "task": s.task, "metric": s.metric, "slice": s.slice_json,
               "slice_key": s.slice_key, "value": s.value, "ci_low": s.ci_low,
               "ci_high": s.ci_high, "n": s.n, "judge": s.judge,
               "metric_version": s.metric_version}
        records.append(rec)
        spec = _spec(info, s.metric)
        groups.setdefault((s.part, s.task), {}).setdefault(s.slice_key, []).append(
            {**rec, "title": spec["title"], "fmt": spec["fmt"],
             "arrow": {True: "\u2191", False: "\u2193"}.get(spec["higher_is_better"], "")})
    shown = shown_part(parts, revealed=info["private_revealed"])
    grouped = [{"part": part, "task": task, "slices": [{"slice_key": k, "records": v}
                                                       for k, v in slices.items()],
                "overall": slices.get("", []), "axes": _pivot(slices)}
               for (part, task), slices in groups.items()]
    return {"benchmark": info, "parts": parts, "shown_part": shown, "groups": grouped,
            "records": records,
            "plots": _plots(session, submission, info, [r for r in records
                                                        if r["part"] == shown], shown)}


def _pivot(slices: dict[str, list[dict]]) -> list[dict]:
    """Breakdown slices as one table per axis (e.g. "modality x subcategory"): a row per slice
    value, a column per metric, so a page shows tens of rows instead of hundreds of tables."""
    axes: dict[tuple, dict] = {}
    for key, recs in slices.items():
        if not key or not recs:
            continue
        names = tuple(sorted(recs[0]["slice"]))
        axis = axes.setdefault(names, {"name": " \u00d7 ".join(names), "metrics": {},
                                       "rows": []})
        for r in recs:
            axis["metrics"].setdefault(r["metric"], {"metric": r["metric"], "title": r["title"],
                                                     "arrow": r["arrow"], "fmt": r["fmt"]})
        axis["rows"].append({"label": " \u00b7 ".join(str(recs[0]["slice"][n]) for n in names),
                             "cells": {r["metric"]: r for r in recs}})
    return [{"name": a["name"], "metrics": list(a["metrics"].values()), "rows": a["rows"]}
            for a in axes.values()]


def _plots(session: Session, submission: Submission, info: dict, records: list[dict],
           part: str | None) -> list[dict]:
    out = []
    if part is None:
        return out
    out += curve_plots(session, submission, part)
    for t in info["tasks"]:
        rows = [r for r in records if r["task"] == t["key"]]
        if rows:
            out += _heatmaps(info, t, rows)
            out += _bars(info, t, rows)
    return out


def _stored_curves(session: Session, submission: Submission, part: str) -> list[tuple]:
    """(task, kind, slice_key, x, y) from Curve rows, else from the scoring notes.

    Older scoring runs kept ``ScoreResult.curves`` in ``notes_json["curves"]`` only; those are
    drawn too, skipping any curve whose points are not in the unit square.
    """
    rows = session.scalars(select(Curve).where(Curve.submission_id == submission.id,
                                               Curve.part == part)
                           .order_by(Curve.task, Curve.kind, Curve.slice_key)).all()
    if rows:
        return [(c.task, c.kind, c.slice_key, c.points_json["x"], c.points_json["y"])
                for c in rows]
    out = []
    for c in (submission.notes_json or {}).get("curves", []):
        try:
            x, y = [float(v) for v in c["x"]], [float(v) for v in c["y"]]
            ok = (c["part"] == part and c["kind"] in ("roc", "pr") and len(x) == len(y) >= 2
                  and all(0.0 <= v <= 1.0 for v in x + y))
        except (KeyError, TypeError, ValueError):
            ok = False
        if ok:
            skey = ";".join(f"{k}={v}" for k, v in sorted((c.get("slice") or {}).items()))
            out.append((str(c["task"]), c["kind"], skey, x, y))
    return sorted(out, key=lambda t: t[:3])


def curve_plots(session: Session, submission: Submission, part: str) -> list[dict]:
    """The ROC / PR charts of ``submission``'s stored curves on ``part``: ``{"kind", "task",
    "svg"}`` each (the submission page's, and the error analysis page's beside calibration)."""
    by: dict[tuple[str, str], list] = {}
    for task, kind, skey, x, y in _stored_curves(session, submission, part):
        series = by.setdefault((task, kind), [])
        if len(series) < MAX_CURVE_SERIES:
            series.append({"label": skey or "overall", "x": x, "y": y})
    out = []
    for (task, kind), series in by.items():
        draw = plots.roc_svg if kind == "roc" else plots.pr_svg
        name = "ROC curve" if kind == "roc" else "Precision-recall curve"
        out.append({"kind": kind, "task": task, "svg": draw(series, title=f"{task}: {name}")})
    return out


def _heatmaps(info: dict, task: dict, rows: list[dict]) -> list[dict]:
    grids: dict[tuple[str, tuple[str, str]], dict] = {}
    ns: dict[tuple[str, tuple[str, str]], dict] = {}
    for r in rows:
        sl = r["slice"] or parse_slice_key(r["slice_key"])
        if len(sl) != 2 or "generator" not in sl or r["metric"] in ("unparsable",
                                                                    "unparsable_rate"):
            continue
        other = next(k for k in sl if k != "generator")
        grids.setdefault((r["metric"], ("generator", other)), {})[
            (sl["generator"], sl[other])] = r["value"]
        ns.setdefault((r["metric"], ("generator", other)), {})[
            (sl["generator"], sl[other])] = r["n"]
    order = [task["headline"], *task.get("secondary", []), *info["metrics"]]
    keys = sorted(grids, key=lambda k: (order.index(k[0]) if k[0] in order else 999, k))
    out = []
    for metric, (row_axis, col_axis) in keys[:MAX_HEATMAPS_PER_TASK]:
        values = grids[(metric, (row_axis, col_axis))]
        spec = _spec(info, metric)
        svg = plots.heatmap_svg(sorted({r for r, _ in values}), sorted({c for _, c in values}),
                                values, title=f"{task['key']}: {spec['title']} by {row_axis} "
                                              f"x {col_axis}",
                                fmt=spec["fmt"], lower=spec["lower"], upper=spec["upper"],
                                row_label=row_axis, col_label=col_axis,
                                counts=ns[(metric, (row_axis, col_axis))])
        out.append({"kind": "heatmap", "task": task["key"], "svg": svg})
    return out


def _bars(info: dict, task: dict, rows: list[dict]) -> list[dict]:
    axes: dict[str, list[dict]] = {}
    for r in rows:
        sl = r["slice"] or parse_slice_key(r["slice_key"])
        if r["metric"] == task["headline"] and len(sl) == 1:
            (axis, value), = sl.items()
            axes.setdefault(axis, []).append({"label": value, "value": r["value"],
                                              "ci_low": r["ci_low"], "ci_high": r["ci_high"]})
    spec = _spec(info, task["headline"])
    out = []
    for axis, bars in sorted(axes.items()):
        if len(bars) > MAX_BARS:
            continue  # too many to read as bars; the table above lists them
        svg = plots.bars_svg(sorted(bars, key=lambda b: b["label"]),
                             title=f"{task['key']}: {spec['title']} by {axis}", fmt=spec["fmt"],
                             lower=spec["lower"], upper=spec["upper"])
        out.append({"kind": "bars", "task": task["key"], "svg": svg})
    return out
