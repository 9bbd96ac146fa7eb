"""Judge registry: `get_judge(name, **config)` builds a judge by name (CTFd-style plugin table).

Backends are imported only when asked for, so importing the scoring core never loads torch or
requests. Config comes from the caller (server config, CLI options); nothing is read from the
environment here.
"""
from __future__ import annotations

import importlib

from leaderboard.judges.base import Judge, JudgeError

# name -> "module:factory"; the factory takes the config as keyword arguments.
JUDGES: dict[str, str] = {
    "rules": "leaderboard.judges.rules:RulesJudge",
    "local-minilm": "leaderboard.judges.minilm:MiniLMJudge",
    "openai": "leaderboard.judges.openai_compat:OpenAIJudge",
}


def get_judge(name: str, **config) -> Judge:
    """Build the judge called `name` with `config`; JudgeError names unknown judges and options."""
    if name not in JUDGES:
        raise JudgeError(f"unknown judge {name!r}; available: {sorted(JUDGES)}")
    module_name, _, attr = JUDGES[name].partition(":")
    factory = getattr(importlib.import_module(module_name), attr)
    try:
        return factory(**config)
    except TypeError as exc:
        raise JudgeError(f"bad configuration for judge {name!r}: {exc}") from exc
