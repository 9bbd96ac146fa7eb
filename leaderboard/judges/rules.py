"""`rules@3` (and the frozen `rules@2`, `rules@1`): a fast, deterministic, offline judge built
from keyword rules and token overlap.

It is a baseline, named for what it is, never a stand-in for the papers' LLM judges:

- `map_artifacts`: `rules@3` maps with `leaderboard.judges.mapping` (sentence and list-item
  segmentation, negation scope that tells "no blurring" from "casts no shadow", generic and
  hypothetical statements skipped, a lexicon written from TriDF appendix C with indirect
  descriptions); measured on the independent evaluation set in `judge_eval/evalset`
  (`docs/judges.md`). `rules@2` is the same engine read as version 2 (`mapping.versions`: what
  differs is data; its output on the evaluation set is pinned by a test), and `rules@1` keeps its
  original mapping (`lexicon.py` with the negation rules of `text.py`), so records stored under
  those identities can still be reproduced.
- `rate_explanations`: content-token overlap between the response and each annotated anomaly
  (LOKI C.2 criteria via `rubric.scores_from_support`). A refusal or an "it is authentic" verdict
  scores 0 (`rubric.is_refusal_or_authentic`).
"""
from __future__ import annotations

import re

from leaderboard.core import rubric
from leaderboard.core.taxonomy import ARTIFACT_KEYS
from leaderboard.judges import text
from leaderboard.judges.base import (
    ExplanationCase,
    Judge,
    Rating,
    check_candidates,
    check_responses,
)
from leaderboard.judges.lexicon import LEXICON, Rule
from leaderboard.judges.mapping import engine_for

VERSION = "3"
# An annotated anomaly counts as found when this share of its content tokens is in the response.
HIT_RECALL = 0.5
# A response sentence counts as supported when this share of its content tokens is annotated.
SENTENCE_SUPPORT = 0.25
# A qualifier before the term that relates two things ("not consistent with", "mismatch
# between") describes its subject, not the term after it.
_RELATIONAL = re.compile(r"n't|n\u2019t|\bnot\b|\bwith\b|\bbetween\b|\bto\b", re.I)


def _rule_fires(rule: Rule, sentence: str) -> bool:
    if rule.phrase is not None:
        return any(not text.is_negated(sentence, m.start(), m.end())
                   for m in rule.phrase.finditer(sentence))
    terms = list(rule.term.finditer(sentence))
    if not terms:
        return False
    for q in rule.qualifier.finditer(sentence):
        for t in terms:
            if t.start() < q.end() and q.start() < t.end():
                continue  # one word cannot be both the subject and its qualifier
            first, last = (t, q) if t.start() < q.start() else (q, t)
            if first is q and _RELATIONAL.search(sentence, q.start(), t.start()):
                continue  # "the lighting doesn't match the background": a relation's object
            if not text.same_scope(sentence, first.end(), last.start()):
                continue
            if not text.is_negated(sentence, last.start(), last.end()) and \
                    not text.is_negated(sentence, first.start(), first.end()):
                return True
    return False


def map_response_v1(response: str, keys: list[str] | tuple[str, ...] = ARTIFACT_KEYS
                    ) -> frozenset[str]:
    """`rules@1`: artifact keys (among `keys`) some rule asserts in some sentence of `response`."""
    found = set()
    sents = text.sentences(response)
    for key in keys:
        if any(_rule_fires(rule, s) for rule in LEXICON[key] for s in sents):
            found.add(key)
    return frozenset(found)


def overlap_rating(case: ExplanationCase) -> Rating:
    """Rate one LOKI explanation by token overlap with the annotation (see module docstring)."""
    if rubric.is_refusal_or_authentic(case.response):
        return Rating.refusal(case.modality)
    response_tokens = set(text.content_tokens(case.response))
    support: dict[str, list[float]] = {}
    annotated: set[str] = set()
    for group, descs in case.groups.items():
        support[group] = []
        for desc in descs:
            tokens = set(text.content_tokens(desc))
            annotated |= tokens
            support[group].append(len(tokens & response_tokens) / len(tokens) if tokens else 0.0)
    every = [s for group in support.values() for s in group]
    hits = sum(s >= HIT_RECALL for s in every) / len(every)
    claims = [set(text.content_tokens(s)) for s in text.sentences(case.response)
              if not text.clause_is_negated(s)]
    claims = [c for c in claims if c]
    supported = sum(len(c & annotated) / len(c) >= SENTENCE_SUPPORT for c in claims)
    precision = supported / len(claims) if claims else 0.0
    scores = rubric.scores_from_support(support, modality=case.modality, hits=hits,
                                        precision=precision)
    return Rating.from_scores(scores, modality=case.modality,
                              rationale=f"token overlap: hits={hits:.2f} precision={precision:.2f}")


class RulesJudge(Judge):
    name = "rules"
    version = VERSION

    def map_artifacts(self, responses, *, candidates=None):
        responses = check_responses(responses)
        keys = check_candidates(candidates) if candidates is not None else list(ARTIFACT_KEYS)
        return [self._map(r, keys) for r in responses]

    mapping_version = VERSION

    def _map(self, response: str, keys: list[str]) -> frozenset[str]:
        return engine_for(self.mapping_version).map_response(response, keys)

    def rate_explanations(self, items):
        return [overlap_rating(item) for item in items]

    def attribute_causes(self, rationales):
        """SynCred false-negative causes by keywords with negation (`judges.causes`)."""
        from leaderboard.judges.causes import attribute
        return [attribute(r) for r in check_responses(rationales)]


class RulesJudgeV2(RulesJudge):
    """`rules@2`: the issue-18 round-1 mapping (the engine read as version 2); ratings and
    causes are the same code."""

    version = mapping_version = "2"


class RulesJudgeV1(RulesJudge):
    """`rules@1`, frozen: the original lexicon mapping (ratings and causes are the same code)."""

    version = "1"

    def _map(self, response: str, keys: list[str]) -> frozenset[str]:
        return map_response_v1(response, keys)
