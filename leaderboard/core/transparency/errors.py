"""What a verification can find, each with its own exit code (docs/verify.md lists them).

The toolkit's ``leaderboard verify`` / ``audit-log`` exit with `Failure.code`; tests and scripts
can rely on the codes, people on the messages (each says what was compared with what). A
`Superseded` receipt passed every check but is not the submission's latest (exit 11).
"""
from __future__ import annotations


class Failure(Exception):
    """A verification that failed; ``code`` is the command's exit status."""

    code = 1
    kind = "failed"


class Malformed(Failure):
    code, kind = 2, "malformed"


class BadSignature(Failure):
    code, kind = 3, "bad signature"


class UnknownKey(Failure):
    code, kind = 4, "unknown key"


class NotInLog(Failure):
    code, kind = 5, "not in the log"


class LogForked(Failure):
    code, kind = 6, "log forked"


class ScoresDiffer(Failure):
    code, kind = 7, "scores differ"


class WrongFile(Failure):
    code, kind = 8, "wrong file"


class Unreachable(Failure):
    code, kind = 9, "server unreachable"


class BoardDiffers(Failure):
    code, kind = 10, "board differs from the log"


class Superseded(Failure):
    """A genuine receipt that is no longer the submission's current one: the log holds a later
    receipt of the same submission (hidden, rescored, disqualified, ...). ``lines``: what the
    other checks found (they all passed)."""

    code, kind = 11, "superseded"

    def __init__(self, message: str, lines: list[str] | None = None):
        super().__init__(message)
        self.lines = list(lines or [])


EXIT_CODES = {cls.kind: cls.code for cls in (Malformed, BadSignature, UnknownKey, NotInLog,
                                             LogForked, ScoresDiffer, WrongFile, Unreachable,
                                             BoardDiffers, Superseded)}
