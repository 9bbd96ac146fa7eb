"""Analyses across all submissions of a benchmark (not one submission's records).

VCT² (paper, section 5): the Pearson correlation, per subset, between each generator's mean Visual
AI Index and detectors' accuracy on that generator — the paper reports -0.532 (COCO_AI) and -0.503
(Twitter_AI) over its 17 detectors. Each scored submission already carries ``vai_mean`` and
``accuracy`` per (subset, generator); here the accuracy is averaged over every ranked submission
(public, scored, not hidden, not disqualified, not a baseline) of the board part shown, and
correlated with the generators' VAI. Read-only; cached with the benchmark's boards.
"""
from __future__ import annotations

import math
from collections import defaultdict

from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.server.models import Benchmark, Score, Submission


def _pearson(xs: list[float], ys: list[float]) -> float | None:
    n = len(xs)
    if n < 3:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def vai_vs_accuracy(session: Session, benchmark_key: str, split: str, part: str) -> list[dict]:
    """Per subset: generators with their VAI and mean accuracy over submissions, and Pearson r.

    Empty when the pack has no VAI (e.g. a large pack built without media) or nothing is scored.
    """
    rows = session.execute(
        select(Score.submission_id, Score.metric, Score.slice_json, Score.value)
        .join(Submission, Score.submission_id == Submission.id)
        .join(Benchmark, Submission.benchmark_id == Benchmark.id)
        .where(Benchmark.key == benchmark_key, Submission.split == split,
               Submission.status == "scored", Submission.is_public.is_(True),
               Submission.hidden.is_(False), Submission.disqualified_reason.is_(None),
               Submission.is_baseline.is_(False), Score.part == part,
               Score.metric.in_(("accuracy", "vai_mean")))).all()
    vai: dict[tuple[str, str], float] = {}
    acc: dict[tuple[str, str], list[float]] = defaultdict(list)
    subs: dict[str, set[int]] = defaultdict(set)
    for sid, metric, sl, value in rows:
        sl = sl or {}
        if set(sl) != {"subset", "generator"} or value is None or sl["generator"] == "real":
            continue
        key = (sl["subset"], sl["generator"])
        if metric == "vai_mean":
            vai[key] = value  # computed from the images: the same in every submission
        else:
            acc[key].append(value)
            subs[sl["subset"]].add(sid)
    out = []
    for subset in sorted({s for s, _ in vai}):
        gens = sorted(g for s, g in vai if s == subset and acc.get((s, g)))
        table = [{"generator": g, "vai": vai[(subset, g)],
                  "mean_accuracy": sum(acc[(subset, g)]) / len(acc[(subset, g)])}
                 for g in gens]
        if not table:
            continue
        out.append({"subset": subset, "submissions": len(subs[subset]), "generators": table,
                    "pearson": _pearson([r["vai"] for r in table],
                                        [r["mean_accuracy"] for r in table])})
    return out
