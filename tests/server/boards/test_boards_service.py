"""The standings service over a real database: parts, visibility, modality boards, cache."""
from sqlalchemy import select

from leaderboard.server.boards import service as boards
from leaderboard.server.models import Curve
from leaderboard.server.services import curves
from tests.redis_db import redis_test_url


def _board(app, session, **kw):
    args = {"benchmark_key": "demo", "task": "detection", "split": "test", **kw}
    with app.app_context():
        return boards.board(session, **args)


def ids(b):
    return [r["submission_id"] for r in b["rows"]]


def test_public_part_until_reveal_then_private(boards_app, boards_session, make):
    bench = make.benchmark()
    a = make.submission(bench, make.team(), scores={"public": {"accuracy": 0.9},
                                                    "private": {"accuracy": 0.5},
                                                    "all": {"accuracy": 0.7}})
    b = make.submission(bench, make.team(), scores={"public": {"accuracy": 0.6},
                                                    "private": {"accuracy": 0.8},
                                                    "all": {"accuracy": 0.7}})
    boards_session.commit()
    board = _board(boards_app, boards_session)
    assert board["part"] == "public" and ids(board) == [a.id, b.id]
    assert [r["values"]["accuracy"]["value"] for r in board["rows"]] == [0.9, 0.6]
    # the private numbers appear nowhere until the reveal
    assert "0.5" not in repr(board) and "0.8" not in repr(board)

    bench.private_revealed = True
    boards_session.commit()
    with boards_app.app_context():
        boards.invalidate_boards("demo")
    board = _board(boards_app, boards_session)
    assert board["part"] == "private" and ids(board) == [b.id, a.id]


def test_dev_split_uses_all_part(boards_app, boards_session, make):
    bench = make.benchmark()
    s = make.submission(bench, make.team(), split="dev", scores={"all": {"accuracy": 0.4}})
    boards_session.commit()
    board = _board(boards_app, boards_session, split="dev")
    assert board["part"] == "all" and ids(board) == [s.id]


def test_hidden_private_unscored_excluded_disqualified_only_in_all_mode(
        boards_app, boards_session, make):
    bench = make.benchmark()
    ok = make.submission(bench, make.team(), scores={"public": {"accuracy": 0.5}})
    make.submission(bench, make.team(), hidden=True, scores={"public": {"accuracy": 0.99}})
    make.submission(bench, make.team(), is_public=False, scores={"public": {"accuracy": 0.98}})
    make.submission(bench, make.team(), status="scoring", scores={"public": {"accuracy": 0.97}})
    dq = make.submission(bench, make.team(), disqualified_reason="used test labels",
                         scores={"public": {"accuracy": 0.96}})
    base = make.submission(bench, None, is_baseline=True, baseline_kind="random",
                           scores={"public": {"accuracy": 0.5}})
    boards_session.commit()
    team_board = _board(boards_app, boards_session)
    assert ids(team_board) == [ok.id, base.id]
    assert team_board["rows"][1]["is_baseline"] and team_board["rows"][1]["rank"] is None
    all_board = _board(boards_app, boards_session, mode="all")
    assert ids(all_board) == [ok.id, base.id, dq.id]
    assert all_board["rows"][-1]["disqualified_reason"] == "used test labels"


def test_team_representative_and_selected(boards_app, boards_session, make):
    bench = make.benchmark()
    team = make.team()
    best = make.submission(bench, team, scores={"public": {"accuracy": 0.8}})
    make.submission(bench, team, scores={"public": {"accuracy": 0.7}})
    boards_session.commit()
    assert ids(_board(boards_app, boards_session)) == [best.id]
    chosen = make.submission(bench, team, selected=True, scores={"public": {"accuracy": 0.1}})
    boards_session.commit()
    with boards_app.app_context():
        boards.invalidate_boards("demo")
    assert ids(_board(boards_app, boards_session)) == [chosen.id]
    assert len(_board(boards_app, boards_session, mode="all")["rows"]) == 3


def test_na_last_and_tie_break_rule_on_board(boards_app, boards_session, make):
    bench = make.benchmark()
    na = make.submission(bench, make.team(), scores={"public": {"accuracy": None, "fpr": 0.0}})
    late = make.submission(bench, make.team(), scores={"public": {"accuracy": 0.7, "fpr": 0.1}})
    better_fpr = make.submission(bench, make.team(),
                                 scores={"public": {"accuracy": 0.7, "fpr": 0.05}})
    early = make.submission(bench, make.team(), minutes=0,
                            scores={"public": {"accuracy": 0.7, "fpr": 0.1}})
    boards_session.commit()
    b = _board(boards_app, boards_session)
    assert ids(b) == [better_fpr.id, early.id, late.id, na.id]
    assert [c["metric"] for c in b["columns"]] == ["accuracy", "fpr"]
    assert [c["arrow"] for c in b["columns"]] == ["\u2191", "\u2193"]
    assert b["rule"].startswith("Ranked by Accuracy (higher is better), then FPR")


def test_modality_filter_and_one_modality_task(boards_app, boards_session, make):
    bench = make.benchmark()
    s = make.submission(bench, make.team(), slice_key="modality=video",
                        scores={"public": {"accuracy": 0.61}})
    make.score(s, part="public", task="detection", metric="accuracy", value=0.5)
    j = make.submission(bench, make.team(), task="judgment",
                        scores={"public": {"accuracy": 0.3}})
    boards_session.commit()
    video = _board(boards_app, boards_session, modality="video")
    assert video["slice_key"] == "modality=video"
    assert video["rows"][0]["values"]["accuracy"]["value"] == 0.61
    assert "modality=video" in video["slices"]
    # judgment has one modality: its overall rows are its image rows
    image = _board(boards_app, boards_session, task="judgment", modality="image")
    assert ids(image) == [j.id] and image["slice_key"] == ""


def test_bad_arguments_name_the_value(boards_app, boards_session, make):
    import pytest

    from leaderboard.server.errors import NotFound, ServiceError
    make.benchmark()
    boards_session.commit()
    for kw, bad in [({"benchmark_key": "nope"}, "'nope'"), ({"task": "t9"}, "'t9'"),
                    ({"split": "val"}, "'val'"), ({"modality": "audio"}, "'audio'"),
                    ({"mode": "every"}, "'every'"), ({"slice_key": "noequals"}, "noequals")]:
        with pytest.raises((NotFound, ServiceError), match=bad):
            _board(boards_app, boards_session, **kw)


def test_cache_fills_and_invalidation_clears(boards_app, boards_session, make):
    bench = make.benchmark()
    team = make.team()
    make.submission(bench, team, scores={"public": {"accuracy": 0.5}})
    boards_session.commit()
    with boards_app.app_context():
        cache = boards.get_cache()
        first = _board(boards_app, boards_session)
        filled = len(cache)
        assert filled > 0
        hits = cache.hits
        assert _board(boards_app, boards_session) is first  # served from the cache
        assert cache.hits > hits
        # a new score is invisible until the named invalidation runs
        new = make.submission(bench, make.team(), scores={"public": {"accuracy": 0.9}})
        boards_session.commit()
        assert ids(_board(boards_app, boards_session)) == ids(first)
        boards.invalidate_boards("demo")
        assert len(cache) < filled
        assert ids(_board(boards_app, boards_session))[0] == new.id
        boards.invalidate_boards()
        assert len(cache) == 0


def test_invalidation_reaches_other_processes_through_generations(boards_app, tmp_path):
    from leaderboard.server.boards.cache import BoardCache
    a = BoardCache(state_dir=tmp_path / "gen")
    b = BoardCache(state_dir=tmp_path / "gen")  # a second worker on the same host
    calls = []
    assert a.get_or_compute("demo", ("k",), lambda: calls.append(1) or "v1") == "v1"
    assert a.get_or_compute("demo", ("k",), lambda: "never") == "v1"
    b.invalidate("demo")
    assert a.get_or_compute("demo", ("k",), lambda: "v2") == "v2"
    assert a.get_or_compute("*cross*", ("m",), lambda: "m1") == "m1"
    b.invalidate("other")  # another benchmark still clears cross-benchmark pages
    assert a.get_or_compute("demo", ("k",), lambda: "never") == "v2"
    assert a.get_or_compute("*cross*", ("m",), lambda: "m2") == "m2"


def test_redis_backed_cache_shares_and_clears(tmp_path):
    import redis as redis_lib

    from leaderboard.server.boards.cache import BoardCache
    r = redis_lib.Redis.from_url(redis_test_url(10))
    r.flushdb()
    try:
        a, b = BoardCache(redis_client=r), BoardCache(redis_client=r)
        assert a.get_or_compute("demo", ("k", 1), lambda: {"rows": [1]}) == {"rows": [1]}
        assert b.get_or_compute("demo", ("k", 1), lambda: "never") == {"rows": [1]}
        b.invalidate("demo")
        assert a.get_or_compute("demo", ("k", 1), lambda: {"rows": [2]}) == {"rows": [2]}
        b.invalidate()
        assert a.get_or_compute("demo", ("k", 1), lambda: "fresh") == "fresh"
        r.flushdb()  # Redis lost everything: nothing cached before may be served again
        assert a.get_or_compute("demo", ("k", 1), lambda: "after flush") == "after flush"
    finally:
        r.flushdb()


def test_store_curves_validates_and_replaces(boards_app, boards_session, make):
    import pytest
    bench = make.benchmark()
    sub = make.submission(bench, make.team())
    curve = {"part": "public", "task": "detection", "slice": {}, "kind": "roc",
             "x": [0, 0.5, 1], "y": [0, 0.8, 1]}
    curves.store_curves(boards_session, sub, [curve, {**curve, "kind": "pr"}])
    curves.store_curves(boards_session, sub, [curve])
    boards_session.commit()
    rows = boards_session.scalars(select(Curve).where(Curve.submission_id == sub.id)).all()
    assert [(c.kind, c.points_json["y"]) for c in rows] == [("roc", [0.0, 0.8, 1.0])]
    for bad, msg in [({"kind": "det"}, "kind"), ({"x": [0, 2], "y": [0, 1]}, "2"),
                     ({"x": [0, 1], "y": [0]}, "same length"), ({"part": "x"}, "'x'")]:
        with pytest.raises(ValueError, match=msg):
            curves.store_curves(boards_session, sub, [{**curve, **bad}])
