"""One family of errors for everything a user can get wrong.

A `Problem` names where (file, line, field) and what; a `ProblemList` keeps the first
`MAX_LISTED` problems and counts the rest, so a 1 GB file full of errors costs no memory.
"""
from __future__ import annotations

from dataclasses import dataclass, field

MAX_LISTED = 50


@dataclass(frozen=True)
class Problem:
    message: str
    line: int | None = None
    field: str | None = None
    file: str | None = None

    def __str__(self) -> str:
        where = []
        if self.file:
            where.append(self.file)
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.field:
            where.append(f"field '{self.field}'")
        return f"{', '.join(where)}: {self.message}" if where else self.message

    def as_dict(self) -> dict:
        return {"line": self.line, "field": self.field, "file": self.file, "message": self.message}


@dataclass
class ProblemList:
    """Bounded collector: at most `limit` problems are kept, all are counted."""

    limit: int = MAX_LISTED
    items: list[Problem] = field(default_factory=list)
    total: int = 0

    def add(self, message: str, *, line: int | None = None, field: str | None = None,
            file: str | None = None) -> None:
        self.total += 1
        if len(self.items) < self.limit:
            self.items.append(Problem(message, line, field, file))

    def __bool__(self) -> bool:
        return self.total > 0

    def __len__(self) -> int:
        return self.total

    def summary(self) -> str:
        lines = [str(p) for p in self.items]
        if self.total > len(self.items):
            lines.append(f"... and {self.total - len(self.items)} more problems "
                         f"({self.total} in total)")
        return "\n".join(lines)


class LeaderboardError(Exception):
    """Base of every error whose message is meant for the user (exit code 2, HTTP 4xx)."""

    def __init__(self, message: str, problems: ProblemList | None = None):
        super().__init__(message)
        self.message = message
        self.problems = problems if problems is not None else ProblemList()

    def __str__(self) -> str:
        if self.problems:
            return f"{self.message}\n{self.problems.summary()}"
        return self.message

    def as_dict(self) -> dict:
        return {
            "message": self.message,
            "problems": [p.as_dict() for p in self.problems.items],
            "total_problems": self.problems.total,
        }


class PackError(LeaderboardError):
    """A benchmark pack is malformed (names file, line and field)."""


class PredictionError(LeaderboardError):
    """A predictions file is invalid (names line and field, first 50 problems + total).

    ``unknown_ids``: the first ids that are not in the split (empty when every id was known),
    so that a caller that knows other benchmarks can say which one the file was meant for.
    """

    unknown_ids: list[str] = []


def describe(value) -> str:
    """A JSON value as an error message names it: ``the string '0.7'``, ``the number 3``,
    ``true``, ``null``, ``a list of 2 items``, ``an object``; so that "must be a number, got
    the string '0.7'" says what is wrong, where ``str(value)`` would print ``0.7``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"the string {value[:40]!r}" + ("..." if len(value) > 40 else "")
    if isinstance(value, (int, float)):
        return f"the number {str(value)[:40]}"
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)} item" + ("" if len(value) == 1 else "s")
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def fail(cls: type[LeaderboardError], message: str, **where) -> LeaderboardError:
    """Build a one-problem error, e.g. ``raise fail(PackError, "missing", file="x.yaml")``."""
    problems = ProblemList()
    problems.add(message, **where)
    return cls(message if not where else "invalid input", problems)
