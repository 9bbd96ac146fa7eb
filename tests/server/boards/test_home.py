"""The home page's cards tell what the boards say (issue 21 item 2): the leader is the best
ranked team even when baselines rank above it, its place is the board's ("tied 1st (1–2)"),
and a value is never printed without its n."""
from __future__ import annotations

import re

from leaderboard.server.web.public import _place


def test_home_card_shows_the_team_below_a_baseline(boards_client, boards_session, make):
    bench = make.benchmark("loki", splits=("test",))
    for kind, v in (("all-fake", 0.61), ("random", 0.55), ("all-real", 0.52), ("extra", 0.5)):
        make.submission(bench, None, is_baseline=True, baseline_kind=kind,
                        scores={"public": {"accuracy": v}})
    make.submission(bench, make.team("Low Team"), scores={"public": {"accuracy": (0.3, .25, .35)}})
    make.submission(bench, make.team("Lower Team"), scores={"public": {"accuracy": 0.2}})
    boards_session.commit()
    html = boards_client.get("/").get_data(as_text=True)
    card = html[html.index('id="bench-loki"'):]
    card = card[:card.index("</section>")]
    card = next(li for li in card.split("<li>") if ">Detection</a>" in li)
    assert "Low Team" in card and "No team ranked yet" not in card
    assert "Lower Team" not in card  # the best ranked team, not the first row
    assert "2 ranked" in card
    assert not re.search(r"n=\s*<", card) and "n=100" in card
    assert "of 2" not in card


def test_place_reads_as_the_board_does():
    assert _place({"rank_interval": {"lo": 1, "hi": 2, "open_end": False,
                                     "tied_first": True}})[0] == "tied 1st (1\u20132)"
    assert _place({"rank_interval": {"lo": 1, "hi": 1, "open_end": False,
                                     "tied_first": False}})[0] == "1st (1)"
    assert _place({"rank_interval": {"lo": 1, "hi": 100, "open_end": True,
                                     "tied_first": True}})[0] == "tied 1st (1\u2013100+)"
    assert _place({"rank_interval": None})[0] == "1st"
