"""Starter detector: answer a split's image detection items with a Hugging Face image classifier.

Contract (docs: design.md "Containers" and "Predictions"): read ``$LB_INPUT/items.jsonl`` (one
JSON object per line: ``id``, ``task``, ``modality``, ``media`` paths relative to ``$LB_INPUT``,
and for question-style tasks ``question``/``options``), write ``$LB_OUTPUT/predictions.jsonl``
with one row per answered item: ``{"id", "label": "fake"|"real", "score": P(fake) in [0, 1]}``.

Which items are answered: *detection items*, i.e. rows with ``modality == "image"``, at least one
media path and no ``question`` field (SynCred-Bench, UniAIDet, VCT²), restricted to the task
keys in ``$LB_TASKS`` (comma-separated) when it is set. Question-style rows (LOKI, TriDF) are
skipped and counted in the log: a block left out entirely is simply not scored.

Scoring rule: ``score`` is the classifier's probability of the class named ``$LB_FAKE_LABEL``
(default ``fake``, case-insensitive), or ``1 - P(real)`` when the model has a ``real`` class but
no fake one; an item with several images gets the mean. ``label`` is ``fake`` when
``score > THRESHOLD`` (0.5), else ``real``.

Fallback (documented, logged as a warning per item): when none of an item's images can be read
(missing file, undecodable bytes, path outside ``$LB_INPUT``), its row is still written with
``score = FALLBACK_SCORE`` (0.5, "no information") and therefore ``label = "real"``, so the
split stays completely covered and the run still scores.

Exit codes: 0 success; 2 the input, output or model is unusable (the message says which);
anything else is an unexpected crash (Python's traceback is in the log).

Options: ``--check`` loads the model and resolves the fake class without reading any input
(run at ``docker build`` time so a broken model directory fails the build, not the submission).
Environment: ``LB_INPUT`` (default /input), ``LB_OUTPUT`` (/output), ``LB_MODEL_DIR``
(/app/model), ``LB_TASKS``, ``LB_BENCHMARK``/``LB_SPLIT`` (logged only), ``LB_BATCH_SIZE`` (32
images), ``LB_LOADER_THREADS`` (4), ``LB_FAKE_LABEL`` (fake).
"""
from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("detect")

THRESHOLD = 0.5
FALLBACK_SCORE = 0.5
PREDICTIONS_NAME = "predictions.jsonl"
PROGRESS_EVERY_S = 10.0


class InputError(Exception):
    """The run cannot proceed for a reason the team can fix; exit code 2."""


@dataclass(frozen=True)
class Item:
    id: str
    media: tuple[str, ...]


def _positive_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "")
    if not raw.strip():
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InputError(f"{name} must be a positive integer, got {raw!r}") from None
    if value < 1:
        raise InputError(f"{name} must be a positive integer, got {raw!r}")
    return value


def wanted_tasks() -> frozenset[str] | None:
    """Task keys from ``$LB_TASKS`` (comma- or space-separated); None when unset (all tasks)."""
    raw = os.environ.get("LB_TASKS", "")
    keys = frozenset(k for k in raw.replace(",", " ").split() if k)
    return keys or None


def read_items(path: Path, tasks: frozenset[str] | None, skipped: dict[str, int]) -> Iterator[Item]:
    """Stream the detection items of ``items.jsonl``; count the others in ``skipped`` by task."""
    with path.open("rb") as fh:
        for line_no, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
            except ValueError as exc:
                raise InputError(f"{path} line {line_no}: not valid JSON ({exc})") from None
            if not isinstance(row, dict) or not isinstance(row.get("id"), str):
                raise InputError(f"{path} line {line_no}: expected an object with a string 'id'")
            task = str(row.get("task", ""))
            media = row.get("media")
            media = tuple(m for m in media if isinstance(m, str)) if isinstance(media, list) else ()
            if ((tasks is not None and task not in tasks) or "question" in row
                    or row.get("modality") != "image" or not media):
                skipped[task] = skipped.get(task, 0) + 1
                continue
            yield Item(row["id"], media)


def batches(items: Iterable[Item], images_per_batch: int) -> Iterator[list[Item]]:
    """Group items so that each batch holds at least ``images_per_batch`` images (the last fewer)."""
    batch: list[Item] = []
    n_images = 0
    for item in items:
        batch.append(item)
        n_images += len(item.media)
        if n_images >= images_per_batch:
            yield batch
            batch, n_images = [], 0
    if batch:
        yield batch


def load_image(root: Path, rel: str):
    """``(RGB image, "")`` for ``root/rel``, or ``(None, reason)`` when it cannot be used."""
    from PIL import Image

    path = (root / rel).resolve()
    if not path.is_relative_to(root):
        return None, "path leaves the input directory"
    try:
        with Image.open(path) as img:
            return img.convert("RGB"), ""
    except FileNotFoundError:
        return None, "file not found"
    except Exception as exc:  # any decoder failure (truncated, not an image, too large) -> fallback
        return None, f"{type(exc).__name__}: {exc}"


def _cgroup_cpus() -> int | None:
    """CPUs granted by the cgroup v2 quota (``docker run --cpus``), which os.cpu_count ignores."""
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
    except (OSError, ValueError):
        return None
    if quota == "max":
        return None
    return max(1, math.floor(int(quota) / int(period)))


class Classifier:
    """The model and its processor from ``model_dir``; ``fake_probability`` scores PIL images."""

    def __init__(self, model_dir: Path, *, fake_label: str) -> None:
        if not (model_dir / "config.json").is_file():
            raise InputError(f"no model at {model_dir} (config.json missing); set LB_MODEL_DIR "
                             f"or copy your model directory into the image")
        import torch
        from transformers import AutoImageProcessor, AutoModelForImageClassification
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # \r-redrawn bars only fill the capped run log
        threads = _cgroup_cpus()
        if threads:
            torch.set_num_threads(threads)  # avoid one thread per host core under a CPU quota
        self.torch = torch
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.processor = AutoImageProcessor.from_pretrained(model_dir)
        self.model = AutoModelForImageClassification.from_pretrained(model_dir)
        self.model.to(self.device).eval()
        labels = {int(k): str(v).lower() for k, v in self.model.config.id2label.items()}
        by_name = {v: k for k, v in labels.items()}
        if fake_label.lower() in by_name:
            self.index, self.complement = by_name[fake_label.lower()], False
        elif "real" in by_name and len(labels) >= 2:
            self.index, self.complement = by_name["real"], True
        else:
            raise InputError(f"the model's labels {sorted(labels.values())} have neither "
                             f"{fake_label!r} nor 'real'; set LB_FAKE_LABEL to the fake class name")
        self.labels = labels

    def fake_probability(self, images: list) -> list[float]:
        if not images:
            return []
        inputs = self.processor(images=images, return_tensors="pt").to(self.device)
        with self.torch.inference_mode():
            logits = self.model(**inputs).logits.float()
        probs = logits.softmax(dim=-1)[:, self.index].cpu().tolist()
        return [1.0 - p if self.complement else p for p in probs]


def predict_batch(batch: list[Item], clf: Classifier, root: Path, pool: ThreadPoolExecutor
                  ) -> list[dict]:
    """Rows for one batch: mean P(fake) over each item's readable images, else the fallback."""
    refs = [(i, rel) for i, item in enumerate(batch) for rel in item.media]
    loaded = list(pool.map(lambda ref: load_image(root, ref[1]), refs))
    owners, images = [], []
    for (i, rel), (img, reason) in zip(refs, loaded):
        if img is None:
            log.warning("unreadable image id=%s media=%s reason=%s", batch[i].id, rel, reason)
        else:
            owners.append(i)
            images.append(img)
    per_item: list[list[float]] = [[] for _ in batch]
    for i, p in zip(owners, clf.fake_probability(images)):
        if math.isfinite(p):
            per_item[i].append(min(1.0, max(0.0, p)))
    rows = []
    for item, probs in zip(batch, per_item):
        if probs:
            score = sum(probs) / len(probs)
        else:
            log.warning("fallback id=%s score=%s (no readable image)", item.id, FALLBACK_SCORE)
            score = FALLBACK_SCORE
        rows.append({"id": item.id, "label": "fake" if score > THRESHOLD else "real",
                     "score": round(score, 6)})
    return rows


def run(input_dir: Path, output_dir: Path, model_dir: Path) -> int:
    """Write ``output_dir/predictions.jsonl`` atomically; return the number of rows."""
    items_path = input_dir / "items.jsonl"
    if not items_path.is_file():
        raise InputError(f"{items_path} not found: mount the split's public folder at "
                         f"{input_dir} (items.jsonl and media/)")
    if not output_dir.is_dir() or not os.access(output_dir, os.W_OK):
        raise InputError(f"output directory {output_dir} does not exist or is not writable")
    batch_size = _positive_int("LB_BATCH_SIZE", 32)
    threads = _positive_int("LB_LOADER_THREADS", 4)
    clf = Classifier(model_dir, fake_label=os.environ.get("LB_FAKE_LABEL", "fake"))
    log.info("model dir=%s device=%s labels=%s", model_dir, clf.device, clf.labels)
    root = input_dir.resolve()
    skipped: dict[str, int] = {}
    written, started, last = 0, time.monotonic(), time.monotonic()
    fd, tmp_name = tempfile.mkstemp(prefix=".predictions-", suffix=".tmp", dir=output_dir)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out, ThreadPoolExecutor(threads) as pool:
            for batch in batches(read_items(items_path, wanted_tasks(), skipped), batch_size):
                for row in predict_batch(batch, clf, root, pool):
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
                written += len(batch)
                if time.monotonic() - last >= PROGRESS_EVERY_S:
                    last = time.monotonic()
                    log.info("progress items=%d rate=%.1f/s", written, written / (last - started))
            out.flush()
            os.fchmod(out.fileno(), 0o644)  # mkstemp makes 0600; the harness may read as another uid
            os.fsync(out.fileno())
        if skipped:
            log.info("skipped items by task (not image detection): %s", skipped)
        if written == 0:
            raise InputError("no image detection items to answer in items.jsonl (this starter "
                             "answers only image detection tasks; see LB_TASKS)")
        os.replace(tmp_name, output_dir / PREDICTIONS_NAME)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    log.info("done items=%d seconds=%.1f out=%s", written, time.monotonic() - started,
             output_dir / PREDICTIONS_NAME)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Starter image detector for the leaderboard.")
    parser.add_argument("--check", action="store_true",
                        help="load the model, print its labels and exit (no input needed)")
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s %(message)s")
    model_dir = Path(os.environ.get("LB_MODEL_DIR", "/app/model"))
    try:
        if args.check:
            clf = Classifier(model_dir, fake_label=os.environ.get("LB_FAKE_LABEL", "fake"))
            side = "1 - P(real)" if clf.complement else f"P({clf.labels[clf.index]})"
            log.info("model ok dir=%s labels=%s score=%s", model_dir, clf.labels, side)
            return 0
        log.info("start benchmark=%s split=%s tasks=%s", os.environ.get("LB_BENCHMARK", "?"),
                 os.environ.get("LB_SPLIT", "?"), os.environ.get("LB_TASKS", "") or "all")
        run(Path(os.environ.get("LB_INPUT", "/input")), Path(os.environ.get("LB_OUTPUT", "/output")),
            model_dir)
    except InputError as exc:
        log.error("%s", exc)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
