"""LOKI's closed-form tasks: judgment (multi-view and point-cloud), multiple choice, selection.

Per-row correctness follows the authors' code (opendatalab/LOKI ``lm_evaluate/tasks/loki.py`` at
251b4f6): a yes/no row is right when ``parse_true_or_false`` + ``eval_open`` say so; a choice row
when ``parse_multi_choice_response`` + ``eval_multi_choice`` say so, and where that parser answers
``random.choice`` over the letters (it read nothing) the row counts 1/#options, the expected value
of the authors' draw, so every number below is the expected value of the authors' number.

- ``accuracy`` (headline, LOKI C.2 "average accuracy"): mean correctness. Per generator in
  multiple choice it averages both question forms (pick the AI-generated one, pick the real one),
  as C.2 does; per generator in judgment it is ``fake_recall`` over that generator's fakes.
- ``balanced_accuracy``: the authors' ``aggregate_results`` (`group_balance`), per modality (one
  authors' file), grouping rows by the hidden ``authors_type`` (their key from ``question_type``;
  packs without it use ``subcategory``). ``{}`` and the paper's overall combine modalities with the
  same n_fake weights. Per subcategory it is the authors' ``per_metric_accuracy`` of the type
  whose fakes are exactly that subcategory's fakes.
- ``nbi``, ``abs_nbi``, ``real_recall``, ``fake_recall``: LOKI 4.1, judgment tasks only.
- ``unparsable``: share of free-text rows the authors' parser could not read (n = their count).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from leaderboard.core.benchmarks.base import Block, ScoringContext
from leaderboard.core.benchmarks.common import proportion as _proportion
from leaderboard.core.metrics import bootstrap, classification, group_balance
from leaderboard.core.records import MetricRecord

MODALITIES = ("video", "image", "3d", "text", "audio")
PAPER_OVERALL = ("video", "image", "3d", "text")  # the paper's Overall excludes audio (Table 2)
DIFFICULTIES = ("easy", "medium", "hard")
JUDGMENT_TASKS = ("judgment", "point_cloud_judgment")
BALANCED_TASKS = (*JUDGMENT_TASKS, "multiple_choice")
#: 2: the authors' parsers (expected value for their random draw) and aggregate (issue 11)
METRIC_VERSION = "2"
_SCOPE = {"scope": "without_audio"}


def correctness(block: Block) -> np.ndarray:
    """Per-row correctness in [0, 1] (float): 1 right, 0 wrong, 1/#options for a choice row the
    authors' parser could not read (their ``random.choice``); an unreadable yes/no is wrong."""
    truth = block.truth["answer"]
    ans = block.pred["answer"]
    if block.task.kind == "yesno":
        said = np.where(ans == 1, "yes", np.where(ans == 0, "no", ""))
        return ((said == truth) & (ans >= 0)).astype(np.float64)
    ok = (ans == truth).astype(np.float64)
    for j in np.flatnonzero(ans == "").tolist():
        ok[j] = 1.0 / max(1, len(block.item["options"][j] or ()))
    return ok


def is_fake(block: Block) -> np.ndarray:
    """The "fake" class of each row for the balanced accuracy and the NBI.

    Judgment: the sample is AI-generated. Multiple choice: the question asks for the AI-generated
    option (the phrasing plays the role of the class, as in the authors' ``fake_from_real``).
    Selection: every sample is a fake.
    """
    if block.task.key in JUDGMENT_TASKS:
        return block.truth["truth"] == "fake"
    if block.task.key == "multiple_choice":
        return block.item["phrasing"] == "ask_fake"
    return np.ones(len(block), dtype=bool)


def _type_key(block: Block) -> np.ndarray:
    """The authors' aggregation key of each row (``authors_type``; else the subcategory)."""
    for name in ("authors_type", "subcategory"):
        if block.has(name):
            col = block.col(name).astype(str)
            if (col != "").any():
                return col
    return np.full(len(block), "", dtype="<U1")


def _balanced(task: str, ok, fake, key, modality, subcategory, ctx: ScoringContext
              ) -> list[MetricRecord]:
    """The authors' aggregate per modality, overall, and per subcategory, with stratified CIs
    from one set of draws (every record of the block resamples the same rows the same way)."""
    cells = group_balance.group_cells(correct=ok, is_fake=fake, group=key, scope=modality)
    point = group_balance.group_values(cells, *group_balance.cell_means(cells))
    draws = None
    if ok.size >= bootstrap.MIN_N:
        draws = group_balance.group_values(cells, *group_balance.cell_mean_draws(
            cells, n_resamples=ctx.n_resamples, seed=ctx.seed))
    group_mod = np.array([k[0] for k in cells.keys])

    def record(slc: dict, mask, n: int) -> MetricRecord:
        value = group_balance.weighted_total(point, cells.weight, mask)
        low = high = None
        if draws is not None and not np.isnan(value):
            low, high = bootstrap.percentile_ci(group_balance.weighted_total(draws, cells.weight,
                                                                              mask))
        return MetricRecord(task, "balanced_accuracy", slc, value, low, high, n)

    present = set(modality.tolist())
    out = [record({}, None, ok.size)]
    if set(PAPER_OVERALL) <= present:
        out.append(record(_SCOPE, group_mod != "audio", int((modality != "audio").sum())))
    for m in MODALITIES:
        if m in present:
            out.append(record({"modality": m}, group_mod == m, int((modality == m).sum())))
    if subcategory is None:
        return out
    code = cells.row_group
    for m in MODALITIES:
        in_m = modality == m
        for s in sorted(set(subcategory[in_m & fake].tolist()) - {""}):
            rows = in_m & fake & (subcategory == s)
            groups = np.unique(code[rows])
            # one authors' type whose fakes are exactly this subcategory's fakes
            if groups.size == 1 and (code[in_m & fake] == groups[0]).sum() == rows.sum():
                g = int(groups[0])
                out.append(record({"modality": m, "subcategory": s},
                                  np.arange(len(cells.keys)) == g,
                                  int(cells.fake_n[g] + cells.real_n[g])))
    return out


def _bias(task: str, slc: dict, ok, fake, ctx: ScoringContext) -> list[MetricRecord]:
    """NBI and its two recalls (LOKI C.2), CIs from the class-stratified count bootstrap."""
    right = ok >= 1.0
    said_fake = np.where(right, fake, ~fake)
    c = classification.binary_counts(y_true=fake, y_pred=said_fake)
    names = {"nbi": "normalized_bias_index", "real_recall": "real_accuracy",
             "fake_recall": "recall"}
    cis = bootstrap.count_metric_cis(tp=c.tp, fp=c.fp, tn=c.tn, fn=c.fn,
                                     metrics=tuple(names.values()),
                                     n_resamples=ctx.n_resamples, seed=ctx.seed)
    out = []
    for metric, name in names.items():
        value = classification.FROM_COUNTS[name](c.tp, c.fp, c.tn, c.fn)
        out.append(MetricRecord(task, metric, slc, value, *cis[name], n=int(ok.size)))
    nbi = out[0].value
    out.append(MetricRecord(task, "abs_nbi", slc, None if nbi is None else abs(nbi),
                            n=int(ok.size)))
    return out


def _summary(task: str, slc: dict, mask, ok, fake, ctx, *, bias: bool) -> list[MetricRecord]:
    """Accuracy (+ the NBI of a judgment task when ``bias``) on ``mask``."""
    if not mask.any():
        return []
    out = [_proportion(task, "accuracy", slc, ok[mask], ctx)]
    if bias and task in JUDGMENT_TASKS:
        out.extend(_bias(task, slc, ok[mask], fake[mask], ctx))
    return out


def score_closed(block: Block, ctx: ScoringContext) -> list[MetricRecord]:
    task = block.task.key
    ok, fake = correctness(block), is_fake(block)
    modality = block.item["modality"].astype(str)
    subcategory = block.col("subcategory").astype(str) if block.has("subcategory") else None
    every = np.ones(len(block), dtype=bool)
    present = set(modality.tolist())
    without_audio = modality != "audio"
    out = _summary(task, {}, every, ok, fake, ctx, bias=True)
    if set(PAPER_OVERALL) <= present:
        out += _summary(task, _SCOPE, without_audio, ok, fake, ctx, bias=True)
    for m in MODALITIES:
        in_m = modality == m
        if not in_m.any():
            continue
        base = {"modality": m}
        out += _summary(task, base, in_m, ok, fake, ctx, bias=True)
        axes = ["subcategory", "difficulty", "language", "length"]
        if task in BALANCED_TASKS:
            axes.append("phrasing")
        for axis in axes:
            if not block.has(axis):
                continue
            col = block.col(axis).astype(str)
            for v in sorted(set(col[in_m].tolist()) - {""}):
                out += _summary(task, {**base, axis: v}, in_m & (col == v), ok, fake, ctx,
                                bias=axis == "subcategory")
        if block.has("generator"):
            out += _per_generator(task, block.col("generator").astype(str), in_m, base, ok, fake,
                                  ctx)
    if task in BALANCED_TASKS:
        out += _balanced(task, ok, fake, _type_key(block), modality, subcategory, ctx)
    if block.has("difficulty") and set(PAPER_OVERALL) <= present:
        diff = block.col("difficulty").astype(str)
        for d in DIFFICULTIES:
            sel = without_audio & (diff == d)
            if sel.any():
                out.append(_proportion(task, "accuracy", {"difficulty": d}, ok[sel], ctx))
    out += _unparsable(block, modality)
    return [replace(r, metric_version=METRIC_VERSION) for r in out]


def _per_generator(task, gen, in_m, base, ok, fake, ctx) -> list[MetricRecord]:
    """Judgment: ``fake_recall`` over the generator's fakes. Multiple choice: ``accuracy`` over
    both question forms of the generator's pairs (LOKI C.2 averages the forms; a pair's two forms
    share their media, hence their split and part, so the pooled mean is their average)."""
    out = []
    for g in sorted(set(gen[in_m & fake].tolist()) - {""}):
        if task in JUDGMENT_TASKS:
            sel, metric = in_m & fake & (gen == g), "fake_recall"
        else:
            sel, metric = in_m & (gen == g), "accuracy"
        out.append(_proportion(task, metric, {**base, "generator": g}, ok[sel], ctx))
    return out


def _unparsable(block: Block, modality: np.ndarray) -> list[MetricRecord]:
    ans = block.pred["answer"]
    bad = (ans < 0) if block.task.kind == "yesno" else (ans == "")
    out = [MetricRecord(block.task.key, "unparsable", {}, bad.mean(), n=int(bad.sum()))]
    for m in sorted(set(modality.tolist())):
        sel = modality == m
        out.append(MetricRecord(block.task.key, "unparsable", {"modality": m},
                                bad[sel].mean(), n=int(bad[sel].sum())))
    return out
