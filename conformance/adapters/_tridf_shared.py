"""What the TriDF and TRIDENT conformance adapters share: loading the authors' code, predictions.

The authors' modules are loaded from the authors' checkout by file path (never copied into the
project); the tricky free-text answers come from the pinned reader tables in
``tests/conformance/data``.
"""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "conformance" / "data"
CASES = ("perfect", "constant", "random", "adversarial")
#: answers the authors' scorer counts as invalid (empty) mixed with ones it reads no letter or
#: yes/no from (valid for it, scored 0): their ``invalid_predictions`` and our diagnostics differ
UNREADABLE = "unreadable"
_UNREADABLE_TF = ("", "   ", "True", "**Yes**", "> yes", "Definitely.")
_UNREADABLE_MC = ("", " \n ", "**B**, **D**", "AB", "Options A and C, maybe", "I am not sure")
LETTERS = "ABCDE"


def load_module(path: Path, name: str, *, search: Path | None = None):
    """Import the authors' file ``path`` as module ``name`` (``search`` joins sys.path first,
    for files that import their own package)."""
    if not path.is_file():
        raise FileNotFoundError(f"the authors' file {path} is missing: is this their checkout?")
    if search is not None and str(search) not in sys.path:
        sys.path.insert(0, str(search))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def tricky(table: str) -> list[str]:
    """The inputs of a pinned reader table (e.g. ``tridf_tf``)."""
    rows = json.loads((DATA / f"{table}.json").read_text(encoding="utf-8"))["rows"]
    return [r[0] for r in rows]


class Answers:
    """Free-text answers of one prediction case, drawn deterministically."""

    def __init__(self, case: str, seed: int = 0):
        known = CASES + (UNREADABLE,)
        if case not in known:
            raise ValueError(f"case must be one of {known}, got {case!r}")
        self.case = case
        self.rng = np.random.default_rng([seed, known.index(case)])
        self._tf, self._mc, self._det = tricky("tridf_tf"), tricky("tridf_mc"), tricky("tridf_det")

    def _pick(self, xs):
        return xs[int(self.rng.integers(len(xs)))]

    def yes_no(self, truth: bool, *, words=("yes", "no")) -> str:
        if self.case == "perfect":
            return words[0] if truth else words[1]
        if self.case == "constant":
            return words[0]
        if self.case == "random":
            return self._pick(list(words) + ["I cannot tell"])
        if self.case == UNREADABLE:
            return self._pick(list(_UNREADABLE_TF) + [words[0] if truth else words[1]])
        return self._pick(self._tf + list(words))

    def letters(self, truth: list[str]) -> str:
        if self.case == "perfect":
            return ", ".join(truth)
        if self.case == "constant":
            return "A"
        if self.case == "random":
            k = int(self.rng.integers(1, 4))
            picked = sorted(self.rng.choice(list(LETTERS), size=k, replace=False).tolist())
            return self._pick([", ", " and ", " "]).join(picked)
        if self.case == UNREADABLE:
            return self._pick(list(_UNREADABLE_MC) + [", ".join(truth)])
        return self._pick(self._mc)

    def verdict(self, fake: bool) -> str:
        right = "Likely Manipulated" if fake else "Likely Authentic"
        if self.case == "perfect":
            return f"{right}\n1. Blurriness: the edges are soft."
        if self.case == "constant":
            return "Likely Manipulated"
        if self.case in ("random", UNREADABLE):
            return self._pick(["Likely Manipulated", "Likely Authentic"]) + "\nSome analysis."
        return self._pick(self._det)

    def artifacts(self, truth: list[str], columns: list[str], keys: tuple[str, ...]) -> list[str]:
        """A mapped artifact set: ``keys`` is the whole taxonomy (off-column picks included)."""
        if self.case == "perfect":
            return list(truth)
        if self.case == "constant":
            return ["blurriness"]
        pool = list(keys) if self.case == "adversarial" else list(columns) or list(keys)
        k = int(self.rng.integers(0, 5))
        picked = set(self.rng.choice(pool, size=min(k, len(pool)), replace=False).tolist())
        if self.case == "adversarial" and truth and self.rng.random() < 0.5:
            picked.add(truth[0])  # a right artifact among wrong and off-column ones
        return sorted(picked)


def row(benchmark: str, case: str, metric: str, slc: str, ours, authors) -> dict:
    return {"benchmark": benchmark, "case": case, "metric": metric, "slice": slc,
            "ours": None if ours is None else float(ours),
            "authors": None if authors is None else float(authors)}
