"""The database models (typed SQLAlchemy 2.0), one module per area.

`base` holds the declarative Base (with the constraint naming convention), time helpers and the
core entities (teams, users, tokens, benchmarks, label sets, submissions, scores, quotas, curves);
`access`, `judges`, `containers`, `challenges`, `methods`, `notices`, `mail`, `sessions`,
`idempotency`, `identity` (persons, second factor, invitations), `releases` (re-run campaigns)
and `transparency` add their areas. Importing this
package registers every table on ``Base.metadata`` (Alembic and ``create_all`` rely on that).
Submodules import from `.base` only, never from this package, so there is no import cycle.
"""
from leaderboard.server.models import (  # noqa: F401  (register tables)
    access,
    challenges,
    containers,
    idempotency,
    identity,
    judges,
    mail,
    methods,
    notices,
    releases,
    robustness,
    sessions,
    standings,
    transparency,
)
from leaderboard.server.models.base import (
                                            IN_FLIGHT,
                                            KINDS,
                                            PARTS,
                                            STATUSES,
                                            ApiToken,
                                            Base,
                                            Benchmark,
                                            Curve,
                                            LabelSet,
                                            QuotaUsage,
                                            Score,
                                            Submission,
                                            Team,
                                            TZDateTime,
                                            User,
                                            utcnow,
)

__all__ = ["IN_FLIGHT", "KINDS", "PARTS", "STATUSES", "ApiToken", "Base", "Benchmark", "Curve",
           "LabelSet", "QuotaUsage", "Score", "Submission", "Team", "TZDateTime", "User", "utcnow"]
