"""Board tools (issue 38): search, filters, sort, on the page, its JSON and its CSV alike; the
rows keep the board's ranks; bad values are a 400 naming the parameter."""
import csv
import io
import re

import pytest

URL = "/benchmarks/demo/boards/detection/test"
API = "/api/v1/boards/demo/detection/test"


def _seed(make, session):
    bench = make.benchmark()
    subs = {}
    for name, method, acc, fpr, minutes, code in (
            ("alpha", "detector-a", 0.9, 0.30, 0, "https://example.org/a"),
            ("bravo", "clip-probe", 0.8, 0.05, 60 * 24 * 3, ""),
            ("charlie", "freq-net", 0.7, 0.20, 60 * 24 * 10, "https://example.org/c")):
        subs[name] = make.submission(bench, make.team(name), method_name=method,
                                     minutes=minutes, code_url=code,
                                     scores={"public": {"accuracy": acc, "fpr": fpr}})
    subs["base"] = make.submission(bench, None, is_baseline=True, baseline_kind="random",
                                   method_name="random", minutes=5,
                                   scores={"public": {"accuracy": 0.5, "fpr": 0.5}})
    session.commit()
    return subs


def _api(client, query=""):
    r = client.get(f"{API}?{query}")
    assert r.status_code == 200, r.get_data(as_text=True)
    return r.get_json()


def _html_rows(client, query=""):
    """(rank cell text, method) of each row of the page's table."""
    r = client.get(f"{URL}?{query}")
    assert r.status_code == 200, r.get_data(as_text=True)
    html = r.get_data(as_text=True)
    body = html[html.index("<tbody>"):html.index("</tbody>")] if "<tbody>" in html else ""
    ranks = re.findall(r'data-label="Rank" data-value="([0-9]*)"', body)
    methods = re.findall(r'<td data-label="Method"><a href="/submissions/\d+">([^<]+)</a>', body)
    return list(zip(ranks, methods)), html


def _rows(body):
    return [(str(r["rank"]) if r["rank"] is not None else "", r["method_name"])
            for r in body["rows"]]


def test_search_filters_sort_keep_ranks(boards_client, boards_session, make):
    _seed(make, boards_session)
    full = _rows(_api(boards_client))
    assert [m for _, m in full] == ["detector-a", "clip-probe", "freq-net", "random"]
    ranks = dict((m, r) for r, m in full)
    # search by team or method, case-insensitive
    assert _rows(_api(boards_client, "q=BRAVO")) == [(ranks["clip-probe"], "clip-probe")]
    assert _rows(_api(boards_client, "q=freq")) == [(ranks["freq-net"], "freq-net")]
    # baselines hidden / shown
    assert "random" not in [m for _, m in _rows(_api(boards_client, "baselines=0"))]
    assert "random" in [m for _, m in _rows(_api(boards_client, "baselines=1"))]
    # has a code link
    assert [m for _, m in _rows(_api(boards_client, "code=1"))] == ["detector-a", "freq-net"]
    # date range on the submission date, inclusive (T0 = 2026-03-01)
    assert [m for _, m in _rows(_api(boards_client, "from=2026-03-04"))] == [
        "clip-probe", "freq-net"]
    assert [m for _, m in _rows(_api(boards_client, "from=2026-03-01&to=2026-03-04"))] == [
        "detector-a", "clip-probe", "random"]
    # sort by another metric, both ways; ranks stay the board's
    asc = _rows(_api(boards_client, "sort=fpr&dir=asc"))
    assert [m for _, m in asc] == ["clip-probe", "freq-net", "detector-a", "random"]
    assert all(ranks[m] == r for r, m in asc)
    assert [m for _, m in _rows(_api(boards_client, "sort=fpr"))] == [m for _, m in asc]
    desc = _rows(_api(boards_client, "sort=fpr&dir=desc&baselines=0"))
    assert [m for _, m in desc] == ["detector-a", "freq-net", "clip-probe"]
    assert [m for _, m in _rows(_api(boards_client, "sort=accuracy&dir=asc"))] == [
        "random", "freq-net", "clip-probe", "detector-a"]
    body = _api(boards_client, "q=a&baselines=0")
    assert body["filtered"] is True and body["board_total"] == 4 and body["total"] == 3
    # the default sort is the board itself
    assert _rows(_api(boards_client, "sort=accuracy&dir=desc")) == full


@pytest.mark.parametrize("query", ["", "q=probe", "baselines=0", "code=1&sort=fpr",
                                   "from=2026-03-02&to=2026-03-20&dir=asc",
                                   "sort=fpr&dir=desc&per_page=2&page=2"])
def test_api_html_and_csv_show_the_same_rows(boards_client, boards_session, make, query):
    _seed(make, boards_session)
    html_rows, html = _html_rows(boards_client, query)
    assert html_rows == _rows(_api(boards_client, query))
    if query and "page=2" not in query:
        assert "ranks are the full board" in html or query == "baselines=1"
        # the form carries the state: reloading the URL it builds gives the same rows
        assert 'name="q"' in html and 'name="sort"' in html
    if "page" not in query:
        got = boards_client.get(f"{API}.csv?{query}")
        assert got.status_code == 200
        lines = list(csv.DictReader(io.StringIO(got.get_data(as_text=True))))
        assert [(r["rank"], r["method"]) for r in lines] == html_rows


@pytest.mark.parametrize("param,value", [
    ("q", "x" * 201), ("baselines", "2"), ("baselines", "yes"), ("code", "²"),
    ("from", "2026-13-01"), ("from", "2026-3-1"), ("to", "٢٠٢٦-03-01"),
    ("to", "2026-03-01T00:00"), ("sort", "nope"), ("dir", "up"), ("page", "0")])
def test_bad_parameters_are_a_400_naming_them(boards_client, boards_session, make,
                                              param, value):
    _seed(make, boards_session)
    for url in (URL, API) if param == "page" else (URL, API, f"{API}.csv"):  # CSV: no pages
        r = boards_client.get(url, query_string={param: value})
        assert r.status_code == 400, (url, r.status_code)
        # the HTML error page writes the message as a sentence (capitalised)
        assert param in r.get_data(as_text=True).lower(), (url, r.get_data(as_text=True))


def test_from_after_to_is_a_400(boards_client, boards_session, make):
    _seed(make, boards_session)
    r = boards_client.get(f"{API}?from=2026-03-05&to=2026-03-01")
    assert r.status_code == 400 and "from" in r.get_json()["message"]


def test_empty_result_says_so(boards_client, boards_session, make):
    _seed(make, boards_session)
    rows, html = _html_rows(boards_client, "q=nobody-has-this")
    assert rows == [] and "No row of this board matches" in html
    assert _api(boards_client, "q=nobody-has-this")["rows"] == []


def test_tools_on_an_empty_board(boards_client, boards_session, make):
    make.benchmark()
    boards_session.commit()
    for query in ("q=x&sort=accuracy&dir=asc", "baselines=0&from=2026-01-01"):
        assert boards_client.get(f"{URL}?{query}").status_code == 200
        assert _api(boards_client, query)["rows"] == []
        assert boards_client.get(f"{API}.csv?{query}").status_code == 200
