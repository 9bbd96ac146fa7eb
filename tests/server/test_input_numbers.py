"""Every integer a request carries is ASCII digits or a 400 naming it (issue 36, finding 2): a
cursor, a page, an id in a path or a form. And a property test: every route's path parameters
and the query parameters the web layer reads, filled with random Unicode, never answer a 500,
for an anonymous visitor, a team member and an admin."""
from __future__ import annotations

import itertools
import re
import time
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.datastructures import ImmutableMultiDict

from leaderboard.server.numbers import BadNumber, ascii_int, parse_int
from tests.server.test_input_sweep import SANE, clients  # noqa: F401  (a fixture)

_ARG = re.compile(r"<(?:(\w+)(?:\([^)]*\))?:)?(\w+)>")


# -- the helper -------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["²", "1²", "٣", "１", "1_000", "\u20031", "1e3", "0x10", "",
                                  "9" * 5000, "--1", "1 2"])
def test_only_ascii_digits_are_numbers(text):
    assert ascii_int(text, signed=True) is None
    if text.strip(" \t"):
        with pytest.raises(BadNumber, match=r"^page must be a whole number from 1 to 10 .*got"):
            parse_int("page", text, low=1, high=10)


def test_parse_int_accepts_ascii_and_bounds():
    assert parse_int("n", " 7\t", low=0, high=10) == 7
    assert parse_int("n", "-3", low=-5, high=0) == -3
    assert parse_int("n", None, default=4) == 4 and parse_int("n", "  ", default=4) == 4
    with pytest.raises(BadNumber, match="n must be a whole number from 0 to 10"):
        parse_int("n", "11", low=0, high=10)


# -- the routes that parsed with isdigit() / int() --------------------------------------------
def test_non_ascii_digits_in_cursors_and_ids_are_400s(clients):  # noqa: F811
    # "²".isdigit() is true and int("²") raised: a 500
    for cursor, (name, client) in itertools.product(
            ["%C2%B2.1.0.ab", "1.%C2%B2.0.ab", "%D9%A3.1.0.ab", "1.1.0.ab%C2%B2"],
            clients.items()):
        resp = client.get(f"/api/v1/boards/syncred/detection/dev?cursor={cursor}")
        assert resp.status_code == 400, (name, resp.status_code)
        assert "cursor" in resp.json["message"]
        resp = client.get(f"/benchmarks/syncred/boards/detection/dev?cursor={cursor}")
        assert resp.status_code == 400, (name, resp.status_code)
        assert "cursor" in resp.get_data(as_text=True)
    # other scripts' digits are not ids either (one fixture: its setup scores a submission)
    anon, admin = clients["anonymous"], clients["admin"]
    assert anon.get("/api/v1/submissions/1").status_code != 404
    # "٣" is a digit to Python's int() and \d; werkzeug's converter matched it as 3
    assert anon.get("/api/v1/submissions/%D9%A3").status_code == 404
    assert anon.get("/api/v1/compare/syncred/dev?a=%D9%A1&b=1").status_code == 400
    resp = admin.get("/admin/submissions?team=%D9%A1", headers={"Accept": "application/json"})
    assert resp.status_code == 400
    resp = admin.get("/admin/benchmarks/syncred/judge-agreement?limit=%C2%B2",
                     follow_redirects=True)
    assert resp.status_code == 200 and "limit must be a whole number" in resp.get_data(
        as_text=True)


# -- the property: random Unicode everywhere, no 500 ------------------------------------------
#: characters Python takes for digits: int() accepts the first group, refuses the second
#: ("²".isdigit() is true), and the rest are ASCII digits and separators
_TRICKY = "٣١０𝟙६" + "²³¹①⁴" + "0123456789" * 2 + ".-+_ "
_NUMBERISH = st.text(alphabet=_TRICKY, min_size=1, max_size=8)
_CURSORISH = st.tuples(_NUMBERISH, _NUMBERISH, _NUMBERISH,
                       st.text(alphabet="0123456789abcdef²", min_size=1, max_size=6)).map(
    ".".join)
_VALUE = st.one_of(st.text(max_size=12), _NUMBERISH, _CURSORISH)


class _Reads(ImmutableMultiDict):
    """Query parameters that record which names a view asked for."""

    names: set[str] = set()

    def get(self, key, *args, **kwargs):
        self.names.add(key)
        return super().get(key, *args, **kwargs)

    def __getitem__(self, key):
        self.names.add(key)
        return super().__getitem__(key)

    def getlist(self, key, *args, **kwargs):
        self.names.add(key)
        return super().getlist(key, *args, **kwargs)

    def __contains__(self, key):
        self.names.add(key)
        return super().__contains__(key)


def _routes(app):
    """(rule, method, client names): GET for everyone; POST (no body) for the anonymous
    visitor only, so that no logged-in client logs itself out or acts as an admin."""
    out = []
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        if "GET" in rule.methods:
            out.append((rule, "GET", ("anonymous", "member", "admin")))
        if "POST" in rule.methods:
            out.append((rule, "POST", ("anonymous",)))
    return out


def _path(rule, values: dict, sane: bool) -> str:
    def sub(match):
        converter, name = match.group(1) or "default", match.group(2)
        if sane:
            return "1" if converter == "int" else SANE.get(name, "x")
        return quote(values.get(name, "x").encode("utf-8"), safe="")
    return _ARG.sub(sub, rule.rule)


def _query(app, clients, routes) -> dict:
    """{rule: the query parameter names its view (and the helpers it calls) reads}, recorded
    by requesting each route once per client with sane path parameters."""

    class Recording(app.request_class):
        parameter_storage_class = _Reads

    app.request_class = Recording
    reads = {}
    for rule, method, who in routes:
        _Reads.names = set()
        for name in who:
            clients[name].open(_path(rule, {}, True), method=method).close()
        reads[rule.rule, method] = sorted(_Reads.names)
    return reads


def test_random_unicode_in_every_route_parameter_is_never_a_500(app, clients):  # noqa: F811
    routes = _routes(app)
    assert len(routes) > 100
    reads = _query(app, clients, routes)
    read_any = {name for names in reads.values() for name in names}
    # the views' own parameters and those of the shared helpers (page_args, board_args, ...)
    assert {"cursor", "page", "per_page", "modality", "slice", "mode", "limit", "before",
            "size", "index", "start", "count", "a", "b", "team", "since"} <= read_any
    # routes that read a query parameter are drawn as often as all the others together
    readers = [r for r in routes if reads[r[0].rule, r[1]]]
    # first, each parameter of each route alone with digits Python half-accepts
    for rule, method, who in readers:
        for name in reads[rule.rule, method]:
            for value in ("²", "٣", "².1.0.ab", "1.٣.0.ab"):
                url = f"{_path(rule, {}, True)}?{name}={quote(value)}"
                resp = clients[who[-1]].open(url, method=method)
                resp.close()
                assert resp.status_code < 500, (who[-1], method, url, resp.status_code)
    seen: set[str] = set()

    @settings(max_examples=150, deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture,
                                     HealthCheck.too_slow])
    @given(st.data())
    def one_request(data):
        rule, method, who = data.draw(st.sampled_from(readers) | st.sampled_from(routes))
        client_name = data.draw(st.sampled_from(who))
        path_names = [m.group(2) for m in _ARG.finditer(rule.rule)]
        sane = data.draw(st.sampled_from([True, True, True, False])) if path_names else True
        values = {n: data.draw(_VALUE) for n in path_names}
        # each parameter absent, a plain "1" (so that the next one is reached) or random
        query = {n: v for n in reads[rule.rule, method]
                 if (v := data.draw(st.none() | st.just("1") | _VALUE)) is not None}
        url = _path(rule, values, sane)
        if query:
            url += "?" + "&".join(f"{k}={quote(v.encode('utf-8'), safe='')}"
                                  for k, v in query.items())
        resp = clients[client_name].open(url, method=method)
        resp.close()
        seen.add(rule.rule)
        assert resp.status_code < 500, (client_name, method, url, resp.status_code,
                                        resp.get_data(as_text=True)[:300])

    started = time.monotonic()
    one_request()
    # a bounded run (the suite's time), and one that reached many routes
    assert time.monotonic() - started < 60
    assert len(seen) >= 20
