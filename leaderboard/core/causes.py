"""SynCred-Bench false-negative causes: the categories a rationale may cite as evidence of
authenticity (SynCred, seed 002, "false-negative attribution", figure 3): a regular layout or
template (66.1% of false negatives), interface / screenshot conventions (61.1%), typography
(46.9%), camera perspective and lighting (46.0%), and "no visible AI artifacts".

This is the benchmark's definition (keys and titles, in the paper's order); how a rationale is
read onto them is a judge's job (`leaderboard.judges.causes`).
"""
from __future__ import annotations

from types import MappingProxyType

#: cause key -> title, in the paper's order
CAUSE_TITLES = MappingProxyType({
    "layout_template": "Layout / template",
    "interface_conventions": "Interface / screenshot conventions",
    "typography": "Typography",
    "camera_lighting": "Camera perspective and lighting",
    "no_visible_artifacts": "No visible AI artifacts",
})
CAUSE_KEYS = tuple(CAUSE_TITLES)
