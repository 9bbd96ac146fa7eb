"""Conformance adapter: LOKI (opendatalab/LOKI) against the authors' own scoring code.

``compare(authors_dir, work)`` builds a pack from the authors' ``data_json/`` in one
``build-pack`` call (every item in dev, so a split is a whole authors' file), writes perfect,
constant, random and adversarial free-text answers for every question file in the authors' own
submission format (``{"model", "source", "responses"}``), and scores them both ways:

* ours: `leaderboard.core.scoring.score_predictions` on that document (aligned by file and index);
* theirs: for each record, ``Loki.parse_response`` and ``Loki.metric`` (what
  ``Task.process_responses`` does per row), then ``Loki.aggregate_results``, all loaded from
  ``authors_dir/lm_evaluate/tasks/loki.py`` (by their source: the module's model and I/O imports
  are not needed and not executed), twice:

  - their procedure's expected value: where their parser calls ``random.choice`` the row's
    result is the mean of ``Loki.metric`` over the options it would draw from, which is what we
    report (the spec: deterministic); these rows must match;
  - their code as it runs, ``random`` seeded (``random.Random(SEED)``, fresh per file and case):
    the letter it draws is scored. Wherever it drew, ``accuracy`` and ``balanced_accuracy`` are
    also reported against this seeded draw, as rows ``<metric> [their draw, seed 0]`` marked
    with the deliberate difference ``loki-random-fallback`` (`EXPLAINED`): shown, never hidden.

Rows: per file, ``accuracy`` (mean of their per-row results), ``balanced_accuracy`` (their
``total_accuracy``), ``balanced_accuracy`` per type (their ``per_metric_accuracy``; ours on the
subcategory whose fakes are that type's) and ``unparsable`` (rows where their parser draws at
random or reads "other"). The explanation file (a GPT judge) is not compared.

``authors_dir`` is a checkout of the authors' repository, or its bare git directory (the blobs a
partial snapshot lacks are skipped, with a line on stderr).
"""
from __future__ import annotations

import ast
import json
import random
import subprocess
import sys
import typing
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # loaded by path or as a module
    sys.path.insert(0, str(ROOT))

NAME = "loki"
REPO = "opendatalab/LOKI"
SEED = 0
EXPLAINED = {
    "loki-random-fallback": (
        "where the authors' parse_multi_choice_response reads no option it returns "
        "random.choice(all_choices) (unseeded in their code); we count such a row 1/#options, the "
        "expected value of that draw, so a number never depends on luck (spec). Ours is compared "
        "with their code seeded (random.Random(0)) here, and with the expected value of their "
        "procedure in the row without [their draw], which matches"),
}
CASES = ("perfect", "constant", "random", "adversarial")
DATA = ROOT / "tests" / "conformance" / "data"
_AUTHORS_FILES = ("lm_evaluate/tasks/loki.py", "lm_evaluate/api/task.py")
_METHODS = ("parse_response", "parse_multi_choice_response", "parse_multi_choice_info",
            "parse_true_or_false", "eval_multi_choice", "eval_open", "metric",
            "aggregate_results", "doc_to_target")
_RANDOM_TF = ("Yes", "No", "yes.", "No, it is real.", "Maybe", "I think yes", "Not sure")
_RANDOM_MC = ("A", "B", "(A)", "**B**", "The first one.", "Answer: B", "I cannot tell", "B.")


class _Draw:
    """What the authors' ``random.choice(all_choices)`` was asked to pick from (not drawn)."""

    def __init__(self, choices):
        self.choices = list(choices)


class _NoRandom:
    def choice(self, seq):
        return _Draw(seq)


class _Seeded:
    """Python's ``random`` as their code calls it (``random.choice``), seeded, counting draws."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.draws = 0

    def choice(self, seq):
        self.draws += 1
        return self.rng.choice(seq)


class _Quiet:
    def __getattr__(self, name):
        return lambda *a, **k: None


class _NoBar:
    def __init__(self, *a, **k):
        pass

    def update(self, *a):
        pass


def _checkout(authors_dir: Path, work: Path) -> Path:
    """A folder with the authors' files: ``authors_dir`` itself, or extracted from a bare repo."""
    if (authors_dir / _AUTHORS_FILES[0]).is_file():
        return authors_dir
    if not ((authors_dir / "HEAD").is_file() and (authors_dir / "objects").is_dir()):
        raise FileNotFoundError(f"{authors_dir} is neither a checkout of {REPO} (no "
                                f"{_AUTHORS_FILES[0]}) nor its git directory")
    out = work / "authors"
    listing = subprocess.run(["git", "--git-dir", str(authors_dir), "ls-tree", "-r", "HEAD"],
                             check=True, capture_output=True, text=True).stdout
    for line in listing.splitlines():
        meta, path = line.split("\t", 1)
        if path not in _AUTHORS_FILES and not (path.startswith("data_json/")
                                               and path.endswith(".json")):
            continue
        blob = meta.split()[2]
        got = subprocess.run(["git", "--git-dir", str(authors_dir), "cat-file", "blob", blob],
                             check=False, capture_output=True)
        if got.returncode != 0:
            print(f"loki conformance: {path} is not in this snapshot; skipped", file=sys.stderr)
            continue
        (out / path).parent.mkdir(parents=True, exist_ok=True)
        (out / path).write_bytes(got.stdout)
    return out


def load_authors(checkout: Path):
    """The authors' ``Loki`` scoring methods and ``Task.process_responses``, from their source."""
    src = checkout / _AUTHORS_FILES[0]
    body = []
    for node in ast.parse(src.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef) and node.name in ("check_is_number",
                                                                "normalize_str"):
            body.append(node)
        elif isinstance(node, ast.ClassDef) and node.name == "Loki":
            methods = [n for n in node.body
                       if isinstance(n, ast.FunctionDef) and n.name in _METHODS]
            body.append(ast.ClassDef(name="Loki", bases=[], keywords=[], body=methods,
                                     decorator_list=[], type_params=[]))
    namespace = {"random": _NoRandom(), "np": np, "defaultdict": defaultdict, "ast": ast,
                 "eval_logger": _Quiet(), "tqdm": _NoBar, "print": lambda *a, **k: None,
                 "Union": typing.Union}
    module = ast.fix_missing_locations(ast.Module(body=body, type_ignores=[]))
    exec(compile(module, str(src), "exec"), namespace)  # noqa: S102 (the authors' own code)
    loki = namespace["Loki"].__new__(namespace["Loki"])
    loki.dataset = []
    return loki


def _globals(loki) -> dict:
    """The namespace their methods run in (where their code looks ``random`` up)."""
    return type(loki).metric.__globals__


def authors_scores(loki, docs: list[dict], responses: list[str], *,
                   seed: int | None = None) -> dict:
    """The authors' per-row results and aggregate: with ``seed`` None, the expected value of
    their random draw; else their code as it runs, ``random`` seeded with ``seed``."""
    rand = _NoRandom() if seed is None else _Seeded(seed)
    namespace = _globals(loki)
    namespace["random"] = rand
    try:
        results, unparsable = [], 0
        for doc, response in zip(docs, responses):
            drawn = getattr(rand, "draws", 0)
            parsed = loki.parse_response(doc, response)
            gold = loki.doc_to_target(doc)
            if isinstance(parsed, _Draw):
                unparsable += 1
                acc = sum(loki.metric(doc, c, gold) for c in parsed.choices) / len(parsed.choices)
            else:
                unparsable += (doc["metric"] == "open-ended" and parsed == "other") or \
                    getattr(rand, "draws", 0) > drawn
                acc = float(loki.metric(doc, parsed, gold))
            results.append({"doc": doc, "accuracy": acc})
    finally:
        namespace["random"] = _NoRandom()
    agg = loki.aggregate_results(results)
    return {"accuracy": sum(r["accuracy"] for r in results) / len(results),
            "balanced_accuracy": agg["total_accuracy"]["accuracy"],
            "per_type": {k: v["accuracy"] for k, v in agg["per_metric_accuracy"].items()},
            "unparsable": unparsable}


def _tricky(name: str) -> list[str]:
    rows = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))["rows"]
    return [r[0] for r in rows]


def responses_for(case: str, docs: list[dict], seed: int = 0) -> list[str]:
    """Free-text answers of one case, deterministic for (case, seed)."""
    rng = np.random.default_rng([seed, CASES.index(case)])
    tf, mc = _tricky("loki_tf"), _tricky("loki_mc")
    out = []
    for doc in docs:
        yes_no = doc["metric"] == "open-ended"
        if case == "perfect":
            out.append(doc["answer"])
        elif case == "constant":
            out.append("Yes" if yes_no else "A")
        else:
            pool = (_RANDOM_TF if yes_no else _RANDOM_MC) if case == "random" else (
                tf if yes_no else mc + list(doc.get("choices") or ()))
            out.append(pool[int(rng.integers(len(pool)))])
    return out


def _row(case: str, metric: str, slc: str, ours, authors, **extra) -> dict:
    return {"benchmark": NAME, "case": case, "metric": metric, "slice": slc,
            "ours": None if ours is None else float(ours),
            "authors": None if authors is None else float(authors), **extra}


def _subcategory_of_types(pack, source: str) -> dict[str, str]:
    """Authors' type -> our subcategory, from the fakes of ``source`` (one each, where unique)."""
    labels, items = pack.labels("dev"), pack.items("dev")
    rows = labels.decoded("source") == source
    fake = (labels.decoded("truth") == "fake") | (items.decoded("phrasing") == "ask_fake")
    types, subs = labels.decoded("authors_type"), labels.decoded("subcategory")
    found = defaultdict(set)
    for t, s in zip(types[rows & fake].tolist(), subs[rows & fake].tolist()):
        found[t].add(s)
    return {t: next(iter(s)) for t, s in found.items() if len(s) == 1 and "" not in s}


def compare(authors_dir: Path, work: Path) -> list[dict]:
    """Rows ``{"benchmark", "case", "metric", "slice", "ours", "authors"}`` for every metric both
    sides compute, for each prediction case and authors' question file."""
    from leaderboard.builders import loki as builder
    from leaderboard.builders.common import load_json
    from leaderboard.core.authors_format import pack_sources
    from leaderboard.core.packs import load_pack
    from leaderboard.core.scoring import score_predictions

    authors_dir, work = Path(authors_dir), Path(work)
    work.mkdir(parents=True, exist_ok=True)
    checkout = _checkout(authors_dir, work)
    loki = load_authors(checkout)
    builder.build(checkout, work / "pack", dev_fraction=1.0)
    pack = load_pack(work / "pack")
    out: list[dict] = []
    for source in sorted(pack_sources(pack)):
        docs = load_json(checkout / "data_json" / source, rel=source)
        if docs[0].get("metric") == "model-as-judge":
            continue
        sub_of = _subcategory_of_types(pack, source)
        for case in CASES:
            responses = responses_for(case, docs)
            path = work / f"{case}.json"
            path.write_text(json.dumps({"model": case, "source": source,
                                        "responses": responses}), encoding="utf-8")
            result = score_predictions(pack, "dev", path, n_resamples=10)
            (task, modality), = {(c["task"], c["modality"]) for c in result.covered}
            ours = {(r.metric, tuple(sorted(r.slice.items()))): r
                    for r in result.parts["all"] if r.task == task}
            theirs = authors_scores(loki, docs, responses)
            drawn = authors_scores(loki, docs, responses, seed=SEED)
            base = (("modality", modality),)
            for metric in ("accuracy", "balanced_accuracy"):
                rec = ours.get((metric, base))
                out.append(_row(case, metric, source, rec and rec.value, theirs[metric],
                                source="their code, random.choice replaced by its expected "
                                       "value" if theirs["unparsable"] else "their code"))
                if drawn["unparsable"] and docs[0].get("metric") != "open-ended":
                    out.append(_row(case, f"{metric} [their draw, seed {SEED}]", source,
                                    rec and rec.value, drawn[metric],
                                    source=f"their code as it runs, random.Random({SEED})",
                                    explained="loki-random-fallback"))
            rec = ours.get(("unparsable", base))
            out.append(_row(case, "unparsable", source, rec and rec.n, theirs["unparsable"]))
            for key, value in sorted(theirs["per_type"].items()):
                slc = tuple(sorted({"modality": modality,
                                    "subcategory": sub_of.get(key, key)}.items()))
                rec = ours.get(("balanced_accuracy", slc))
                out.append(_row(case, "balanced_accuracy", f"{source} type={key}",
                                rec and rec.value, value))
    return out


if __name__ == "__main__":  # a quick look without the runner: compare(<authors>, <work>)
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        rows = compare(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else Path(tmp))
    bad = [r for r in rows if r["ours"] is None or r["authors"] is None
           or abs(r["ours"] - r["authors"]) > 1e-9]
    print(f"{len(rows)} rows, {len(bad)} mismatches at 1e-9")
    for r in bad[:20]:
        print(r)
