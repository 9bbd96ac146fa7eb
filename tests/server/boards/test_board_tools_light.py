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
