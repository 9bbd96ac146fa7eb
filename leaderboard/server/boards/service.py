"""The boards' facade for views and other services: what a page or an API call asks for.

Each job has its own module; this one only names them in one place (views import
``service as boards``):

* `leaderboard.server.boards.meta`: benchmark metadata, tasks, slice keys, modalities;
* `leaderboard.server.boards.board`: one page of a task board (cached), exports, intervals;
* `leaderboard.server.boards.modality`: the modality boards' index and one page of a board
  (modality x task kind x split, cached), exports;
* `leaderboard.server.boards.releases`: which release a reader's key names (`resolve_key`,
  once, at the edge), the key a link to a release uses, the release picker (issue 37);
* `leaderboard.server.boards.reads`: the standings reads under both (placement, pages);
* `leaderboard.server.boards.reference`: a board from the score rows (tests' reference);
* `leaderboard.server.boards.cache`: the cache and `invalidate_boards`, which every write that
  changes a board calls after its commit (scores stored, a submission hidden, disqualified,
  selected, a private part revealed, a pack imported).
"""
from __future__ import annotations

from leaderboard.server.boards.board import board, board_rows, compute_board
from leaderboard.server.boards.cache import CROSS, get_cache, invalidate_boards
from leaderboard.server.boards.meta import (
    MAX_PER_PAGE,
    MODES,
    _info_of,
    benchmark_info,
    board_split,
    list_benchmark_infos,
    modalities,
    parse_slice_key,
    task_of,
)
from leaderboard.server.boards.modality import (
    default_split,
    modality_board,
    modality_index,
    modality_rows,
)
from leaderboard.server.boards.modality_ledger import MODALITY_ORDER, all_boards
from leaderboard.server.boards.normalise import KIND_TITLES
from leaderboard.server.boards.reads import placement
from leaderboard.server.boards.reference import compute_board_full
from leaderboard.server.boards.releases import (
    family_releases,
    picker,
    release_of,
    resolve_key,
    url_key,
)

__all__ = ["CROSS", "KIND_TITLES", "MAX_PER_PAGE", "MODALITY_ORDER", "MODES", "_info_of",
           "all_boards", "benchmark_info", "board", "board_rows", "board_split", "compute_board",
           "compute_board_full", "default_split", "family_releases", "get_cache",
           "invalidate_boards", "list_benchmark_infos", "modalities", "modality_board",
           "modality_index", "modality_rows", "parse_slice_key", "picker", "placement", "release_of", "resolve_key",
           "task_of", "url_key"]
