"""Challenges with phases (issues 12 and 21): a benchmark may run a timed challenge, as on
EvalAI, Codabench and Kaggle. One module per job:

* `timeline`: reading a challenge and where it stands in time (window, open phase, state, the
  page's description and countdown).
* `editing`: creating, editing and deleting a challenge and its phases, validated and audited.
* `rules`: what a challenge allows a submission (the open phase's split, quotas, caps) and the
  teams' final selections.
* `phase_boards`: the ranking of the submissions made during a phase (the boards' own ranking
  rules, `leaderboard.server.boards.standings`), live while it runs, frozen when it closes.
* `finishing`: what the reconciler does when phases close (freeze their boards) and when the
  last one closes (reveal the private part, freeze the final results).

Rules (design.md, "Boards, splits and fairness"; the models in
`leaderboard.server.models.challenges`):

* A challenge's *window* runs from its first phase's opening to its last phase's closing (UTC).
  Inside the window the benchmark accepts submissions only while a phase is open and only on
  that phase's split; a phase's ``daily_quota`` replaces the benchmark's daily quota and its
  ``max_submissions`` caps a team's scored work over the phase. Outside every window the
  standing leaderboard works as it always does.
* A submission belongs to the phase whose window holds its ``created_at``.
* Final selection (Kaggle): a team marks up to ``max_selections`` scored submissions per
  benchmark and split (``Submission.selected``; boards rank a team by its selected ones). For a
  challenge submission the choice closes with the challenge's last phase.
* When the last phase has closed the challenge is finished: the benchmark's
  ``private_revealed`` is set, each phase's final ranking is frozen into ``results_json`` and
  audited. A team's final row is the best, on the phase's part, of its selected submissions in
  the phase; a team that selected none is represented by its best on the public part (on the
  whole split when it has no parts), as Kaggle auto-selects.

Times are timezone-aware UTC everywhere. Functions take the session and never commit.
"""
from __future__ import annotations

from leaderboard.server.services.challenges.editing import (
    create_challenge,
    delete_challenge,
    update_challenge,
)
from leaderboard.server.services.challenges.finishing import finish_challenge, finish_due, freeze
from leaderboard.server.services.challenges.phase_boards import (
    phase_board,
    phase_results,
    results_rows,
)
from leaderboard.server.services.challenges.rules import (
    DEFAULT_MAX_SELECTIONS,
    check_submission,
    phase_daily_quota,
    selection_rules,
    set_selected,
)
from leaderboard.server.services.challenges.timeline import (
    countdown_target,
    covering,
    describe,
    get_challenge,
    get_phase,
    list_challenges,
    phase_at,
    state,
    window,
)

__all__ = ["DEFAULT_MAX_SELECTIONS", "check_submission", "countdown_target", "covering",
           "create_challenge", "delete_challenge", "describe", "finish_challenge", "finish_due",
           "freeze", "get_challenge", "get_phase", "list_challenges", "phase_at", "phase_board",
           "phase_daily_quota", "phase_results", "results_rows", "selection_rules",
           "set_selected", "state", "update_challenge", "window"]
