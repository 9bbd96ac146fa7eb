"""Artifact mapping v2 (`rules@2`), frozen: segmentation, polarity and a lexicon written from
TriDF's artifact definitions (appendix C) and the way detectors describe artifacts. See `engine`.

A verbatim copy of ``leaderboard/judges/mapping`` as `rules@2` shipped it, kept so that records
stored under `rules@2` (and `local-minilm@2`/`@3`, whose clause filter is `claim_clauses`) can be
reproduced. Never edit it: the living mapping is ``leaderboard.judges.mapping`` (`rules@3`).
`tests/judges/test_judges_rules.py` pins its output on the evaluation set's dev part."""
from leaderboard.judges.mapping_v2.engine import (
    LEXICON,
    Analysis,
    analyze,
    claim_clauses,
    map_response,
)

__all__ = ["LEXICON", "Analysis", "analyze", "claim_clauses", "map_response"]
