"""Artifact mapping for the rules judges (`rules@2`, `rules@3`): segmentation, polarity and a
lexicon written from TriDF's artifact definitions (appendix C) and the way detectors describe
artifacts. One engine serves every version; what differs between versions is data
(`versions.py`). See `engine`."""
from leaderboard.judges.mapping.engine import (
    LEXICON,
    Analysis,
    Engine,
    analyze,
    claim_clauses,
    engine_for,
    map_response,
)

__all__ = ["LEXICON", "Analysis", "Engine", "analyze", "claim_clauses", "engine_for",
           "map_response"]
