"""Artifact mapping v3 (`rules@3`; `rules@2`'s is frozen in ``mapping_v2``): segmentation,
polarity and a lexicon written from TriDF's artifact definitions (appendix C) and the way
detectors describe artifacts. See `engine`."""
from leaderboard.judges.mapping.engine import (
    LEXICON,
    Analysis,
    analyze,
    claim_clauses,
    map_response,
)

__all__ = ["LEXICON", "Analysis", "analyze", "claim_clauses", "map_response"]
