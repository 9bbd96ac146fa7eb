"""The board tools' light read (`boards.tooled`) gives the page the every-row read gives
(`boards.tools.page_of_tools` over `board(per_page=None)`), row for row, ranks and rank
intervals included, for searches, filters, re-sorts, modes and pages."""
import random

from leaderboard.server.boards import service as boards
from leaderboard.server.boards import tools as board_tools
from leaderboard.server.boards.tooled import tooled_page

#: searches the database narrows (ASCII, with LIKE's own characters), searches only Python's
#: case folding answers ("ss" is in "Straße" folded), filters, re-sorts
QUERIES = ["q=ALP", "q=net", "q=baseline", "q=ss", "q=SS", "q=%", "q=_l", "q=a-2%",
           "q=ße", "baselines=0", "code=1", "from=2026-03-02", "to=2026-03-02",
           "from=2026-03-02&to=2026-03-02", "sort=fpr", "sort=accuracy&dir=asc",
           "q=a&sort=fpr&dir=desc", "baselines=0&code=1&sort=fpr", "q=zzz"]


def _tools(query: str) -> board_tools.Tools:
    pairs = dict(p.split("=", 1) for p in query.split("&"))
    return board_tools.parse_tools(pairs.get)


def test_light_read_equals_the_every_row_read(boards_app, boards_session, make):
    rng = random.Random(3)
    bench = make.benchmark()
    teams = [make.team(n) for n in ("alpha", "Beta", "Straße_lab", "ALPHA-2%")]
    for i in range(40):
        team = None if i % 9 == 0 else teams[i % 4]
        kw = ({"is_baseline": True, "baseline_kind": f"k{i}"} if team is None else
              {"disqualified_reason": "x"} if i % 11 == 5 else {})
        acc = rng.choice([0.5, 0.6, 0.7, None])  # ties and empty cells
        metrics = {"fpr": round(rng.random(), 2)}
        if acc is not None:
            metrics["accuracy"] = acc
        make.submission(bench, team, minutes=i * 97, method_name=f"net-{i % 5}",
                        code_url="https://x.org" if i % 3 else "",
                        scores={"public": metrics}, **kw)
    boards_session.commit()
    with boards_app.app_context():
        for mode in ("team", "all"):
            args = {"benchmark_key": "demo", "task": "detection", "split": "test",
                    "modality": None, "slice_key": None, "mode": mode}
            for query in QUERIES:
                tools = _tools(query)
                for page, per_page in ((1, 5), (2, 5), (1, None)):
                    plain = boards.board(boards_session, **args, page=1, per_page=5)
                    every = boards.board(boards_session, **args, page=1, per_page=None)
                    want = board_tools.page_of_tools(tools, every, page, per_page)
                    got = tooled_page(boards_session, plain=plain, args=args, tools=tools,
                                      page=page, per_page=per_page)
                    where = (mode, query, page, per_page)
                    assert got is not None, where
                    assert got["rows"] == want["rows"], where
                    for k in ("total", "pages", "board_total", "filtered", "primary", "part"):
                        assert got[k] == want[k], (where, k)


#: a signed metric ranked by |value| (closer to 0 is better), beside the usual ones
SIGNED = {"nbi": {"title": "NBI", "higher_is_better": False, "fmt": "signed", "lower": -1.0,
                  "upper": 1.0}}
#: values that print and parse exactly only when taken as stored: sums, thirds, subnormals,
#: ints, signed zero, equal values (ties) and None (n/a)
VALUES = [0.1 + 0.2, 0.3, 1 / 3, 2 / 3, 5e-324, 1e-300, 0.0, -0.0, 1, 0, 0.7, 0.7, None]


def test_resorts_equal_the_every_row_read_whole_board_and_by_id(
        boards_app, boards_session, make, monkeypatch):
    """Re-sorts by every metric column in both directions: by a ranking column (accuracy,
    fpr: sorted on the keys), by another (ap with judged and repeated records, nbi by
    magnitude: values picked out of the cells), after a search (values by id, and the whole
    board's with `tooled.BY_ID_LIMIT` 0) and with the baselines hidden; on the ledger's cells
    and again after the set-based rebuild (cells and keys made by the database). The pages
    equal the every-row read's, row for row, ranks and totals included."""
    from leaderboard.server.boards import rebuild, tooled
    from leaderboard.server.boards.cache import invalidate_boards
    from tests.server.boards.conftest import METRICS

    rng = random.Random(11)
    bench = make.benchmark(metrics={**METRICS, **SIGNED})
    teams = [make.team(f"t{i}") for i in range(6)]
    for i in range(36):
        team = None if i % 10 == 0 else teams[i % 6]
        kw = ({"is_baseline": True, "baseline_kind": f"k{i}"} if team is None else
              {"disqualified_reason": "x"} if i % 13 == 4 else {})
        metrics = {"accuracy": rng.choice(VALUES), "fpr": rng.choice(VALUES),
                   "nbi": rng.choice([-0.25, 0.25, -0.5, 0.1 + 0.2, 0.0, -0.0, None])}
        sub = make.submission(bench, team, minutes=i * 53, scores={"public": metrics}, **kw)
        if i % 4 == 1:  # a judge's record: not shown on a board with no judge
            make.score(sub, part="public", task="detection", metric="ap", value=0.9,
                       judge="rules@1")
        if i % 3 == 0:  # two records of "ap": the last allowed one is the shown one
            make.score(sub, part="public", task="detection", metric="ap",
                       value=rng.choice(VALUES), judge="self-mapped")
            make.score(sub, part="public", task="detection", metric="ap",
                       value=rng.choice(VALUES))
    boards_session.commit()
    sorts = [f"sort={m}" + (f"&dir={d}" if d else "") for m in ("accuracy", "fpr", "ap", "nbi")
             for d in ("", "asc", "desc")]
    for built in ("ledger", "rebuild"):
        if built == "rebuild":
            rebuild.rebuild(boards_session, bench.id)
            boards_session.commit()
        with boards_app.app_context():
            invalidate_boards()
            for limit in (tooled.BY_ID_LIMIT, 0):
                monkeypatch.setattr(tooled, "BY_ID_LIMIT", limit)
                invalidate_boards()  # the pages are cached per query
                for mode in ("team", "all"):
                    args = {"benchmark_key": "demo", "task": "detection", "split": "test",
                            "modality": None, "slice_key": None, "mode": mode}
                    plain = boards.board(boards_session, **args, page=1, per_page=5)
                    every = boards.board(boards_session, **args, page=1, per_page=None)
                    assert {c["metric"] for c in plain["columns"]} == {
                        "accuracy", "fpr", "ap", "nbi"}
                    for query in sorts + ["q=t1&sort=fpr", "q=t&sort=ap&dir=asc",
                                          "baselines=0&sort=nbi&dir=desc", "baselines=0&sort=fpr"]:
                        tools = _tools(query)
                        for page, per_page in ((1, 7), (3, 7), (9, 7), (1, None), (2, None)):
                            want = board_tools.page_of_tools(tools, every, page, per_page)
                            got = tooled_page(boards_session, plain=plain, args=args,
                                              tools=tools, page=page, per_page=per_page)
                            where = (built, limit, mode, query, page, per_page)
                            assert got is not None, where
                            assert got["rows"] == want["rows"], where
                            assert (got["total"], got["pages"]) == (
                                want["total"], want["pages"]), where
