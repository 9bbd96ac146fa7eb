"""Versioned prompt templates (files under `prompts/`, one per task and version).

A file holds a ``### system`` and a ``### user`` section; placeholders are `string.Template`
``$names``, so JSON braces in the text need no escaping and a response containing ``$`` is
inserted verbatim. A template file is never edited in place: a change is a new ``_vN`` file and a
new judge version (a test pins each file's sha256).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from string import Template

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"


@dataclass(frozen=True)
class Prompt:
    name: str
    system: str
    user: Template
    sha256: str

    def messages(self, **values: str) -> list[dict[str, str]]:
        """Chat messages with the placeholders filled; KeyError names a missing placeholder."""
        return [{"role": "system", "content": self.system},
                {"role": "user", "content": self.user.substitute(**values)}]


def load_prompt(name: str) -> Prompt:
    """Load ``prompts/<name>.txt`` (e.g. "tridf_artifacts_v1"); ValueError if missing/malformed."""
    path = PROMPT_DIR / f"{name}.txt"
    if not path.is_file():
        available = sorted(p.stem for p in PROMPT_DIR.glob("*.txt"))
        raise ValueError(f"no prompt template {name!r}; available: {available}")
    raw = path.read_text(encoding="utf-8")
    head, sep, rest = raw.partition("### system\n")
    system, sep2, user = rest.partition("### user\n")
    if head.strip() or not sep or not sep2:
        raise ValueError(f"prompt {path} must hold a '### system' then a '### user' section")
    return Prompt(name, system.strip(), Template(user.strip()),
                  hashlib.sha256(raw.encode("utf-8")).hexdigest())
