"""Judge registry: `get_judge(name, **config)` builds a judge by name (CTFd-style plugin table).

Backends are imported only when asked for, so importing the scoring core never loads torch or
requests. Config comes from the caller (server config, CLI options); nothing is read from the
environment here.

A name builds the current version (``"rules"`` -> ``rules@3``). Earlier versions whose
mapping changed stay buildable by their identity (``get_judge("rules@1")``, `LEGACY`), so
records stored under an old identity can be reproduced and a benchmark whose official judge is
an old identity keeps judging with exactly that judge until an admin picks another.
"""
from __future__ import annotations

import importlib

from leaderboard.judges.base import Judge, JudgeError

# name -> "module:factory"; the factory takes the config as keyword arguments.
JUDGES: dict[str, str] = {
    "rules": "leaderboard.judges.rules:RulesJudge",
    "local-minilm": "leaderboard.judges.minilm:MiniLMJudge",
    "hybrid-minilm": "leaderboard.judges.hybrid:HybridJudge",
    "openai": "leaderboard.judges.openai_compat:OpenAIJudge",
}
# identity -> "module:factory" of superseded versions kept for reproducibility.
LEGACY: dict[str, str] = {
    "rules@1": "leaderboard.judges.rules:RulesJudgeV1",
    "rules@2": "leaderboard.judges.rules:RulesJudgeV2",
    "local-minilm@1": "leaderboard.judges.minilm:MiniLMJudgeV1",
    "local-minilm@2": "leaderboard.judges.minilm:MiniLMJudgeV2",
}


def get_judge(name: str, **config) -> Judge:
    """Build the judge called `name` (or a `LEGACY` identity such as ``"rules@1"``) with
    `config`; JudgeError names unknown judges and options."""
    if name in LEGACY:
        target = LEGACY[name]
    elif name in JUDGES:
        target = JUDGES[name]
    else:
        raise JudgeError(f"unknown judge {name!r}; available: {sorted(JUDGES)} and "
                         f"{sorted(LEGACY)}")
    module_name, _, attr = target.partition(":")
    factory = getattr(importlib.import_module(module_name), attr)
    try:
        return factory(**config)
    except TypeError as exc:
        raise JudgeError(f"bad configuration for judge {name!r}: {exc}") from exc
