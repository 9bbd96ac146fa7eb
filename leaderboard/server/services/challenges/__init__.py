"""Challenges with phases (issues 12 and 21): a benchmark may run a timed challenge, as on
EvalAI, Codabench and Kaggle. One module per job:

* `timeline`: reading a challenge and where it stands in time (window, open phase, state, the
  page's description and countdown).
* `editing`: creating, editing and deleting a challenge and its phases, validated and audited.
* `entrants`: the teams that entered a challenge; only they submit to it.
* `rules`: what a challenge allows the submissions made to it (an entrant, the open phase's
  split, quotas, caps) and the teams' final selections.
* `phase_boards`: the ranking of the submissions made during a phase (the boards' own ranking
  rules, `leaderboard.server.boards.standings`), live while it runs, frozen when it closes.
* `finishing`: what the reconciler does when phases close (freeze their boards) and when the
  last one closes (reveal the private part, freeze the final results).

Rules (design.md, "Boards, splits and fairness"; the models in
`leaderboard.server.models.challenges`):

* A challenge binds its entrants only (issue 33). A team enters it; a submission is made to it
  when it names it (the ``challenge`` field, ``leaderboard submit --challenge``), and then
  records its phase (``Submission.phase_id``). Every other submission, an entrant's included,
  goes to the standing boards under the benchmark's own rules, whatever challenge runs.
* A challenge's *window* runs from its first phase's opening to its last phase's closing (UTC).
  A challenge submission is accepted only while a phase is open and only on that phase's split;
  it counts against the phase's ``daily_quota`` (or, without one, the benchmark's daily quota on
  that split) in the phase's own daily counter, and against ``max_submissions`` over the phase:
  both count challenge submissions only (scored work, as every quota).
* A phase's board ranks the submissions made to that phase.
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
from leaderboard.server.services.challenges.entrants import enter, entered_ids, is_entrant
from leaderboard.server.services.challenges.finishing import finish_challenge, finish_due, freeze
from leaderboard.server.services.challenges.phase_boards import (
    phase_board,
    phase_results,
    results_rows,
)
from leaderboard.server.services.challenges.rules import (
    DEFAULT_MAX_SELECTIONS,
    check_submission,
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
           "create_challenge", "delete_challenge", "describe", "enter", "entered_ids",
           "finish_challenge", "finish_due", "freeze", "get_challenge", "get_phase", "is_entrant",
           "list_challenges", "phase_at", "phase_board", "phase_results", "results_rows",
           "selection_rules", "set_selected", "state", "update_challenge", "window"]
