"""Releases on boards and in the API (issue 37, item 1), end to end on SQLite and PostgreSQL:
two teams scored on SynCred release 1; release 2 imported through the CLI; the family's name
now shows release 2 with a picker, ``syncred-v1`` shows release 1 with its board's JSON and
CSV bytes unchanged; lists show one entry per family; the API, CSV and receipts name the
release and the receipts verify; a release that changes an item is a 400 / exit 2."""
from __future__ import annotations

import csv
import html
import io
import json
import re

import pytest
import requests
from click.testing import CliRunner
from sqlalchemy import select

from leaderboard.cli import main
from leaderboard.server.cli import server
from leaderboard.server.models import Benchmark, User
from tests.server.releases_util import next_release
from tests.server.test_rank_intervals import _labels, _preds, _teams, _upload

V1 = "/api/v1/boards/syncred-v1/detection/test"
FAMILY = "/api/v1/boards/syncred/detection/test"


def _text(resp) -> str:
    return html.unescape(resp.get_data(as_text=True))


def _picker(page: str) -> dict:
    """The picker as a reader sees it: {release number: (href, current, latest, text)}."""
    nav = re.search(r'<nav class="releases card".*?</nav>', page, re.S)
    assert nav, "no release picker"
    out = {}
    for m in re.finditer(r'<li class="release" data-release="(\d+)"><a href="([^"]+)"'
                         r'( aria-current="page")?>(.*?)</a>(.*?)</li>', nav.group(0), re.S):
        out[int(m[1])] = (m[2], bool(m[3]), "latest" in m[4], re.sub(r"<[^>]+>", "", m[5]))
    return out


@pytest.fixture
def two_releases(app, client, auth, runner, imported, demo_packs, tmp_path):
    """Release 1 with two scored teams, its exports read, then release 2 imported by the CLI."""
    labels = _labels(demo_packs)
    tokens = _teams(client, auth, 2)
    sids = [_upload(client, tokens[0], _preds(labels), method="good"),
            _upload(client, tokens[1], _preds(labels, wrong=range(0, 200, 3)), method="bad")]
    before = {url: client.get(url).get_data() for url in (FAMILY, FAMILY + ".csv",
                                                         FAMILY + "?mode=all")}
    client.get("/benchmarks/syncred/boards/detection/test")  # warm the caches of release 1
    v2 = next_release(demo_packs["syncred"], tmp_path / "syncred-r2", release=2,
                      meta={"version": "2"})
    res = runner.invoke(server, ["import-pack", str(v2)])
    assert res.exit_code == 0, res.output
    assert "created release 2 of syncred (key syncred-v2, version 2)" in res.output
    return {"before": before, "sids": sids, "tokens": tokens, "v2": v2, "labels": labels}


def test_family_shows_latest_and_v1_is_unchanged(client, two_releases):
    # release 1's exports, asked for by its -v1 name, are byte for byte what they were
    for url, body in two_releases["before"].items():
        assert client.get(url.replace(FAMILY, V1)).get_data() == body, url
    old = json.loads(two_releases["before"][FAMILY])
    assert (old["benchmark"], old["family"], old["release"]) == ("syncred", "syncred", 1)
    assert {r["submission_id"] for r in old["rows"]} == set(two_releases["sids"])
    # the family's name is release 2 now: its own board, empty, named so
    new = client.get(FAMILY).json
    assert (new["benchmark"], new["family"], new["release"]) == ("syncred-v2", "syncred", 2)
    assert new["rows"] == [] or all(r["is_baseline"] for r in new["rows"])
    rows = list(csv.reader(io.StringIO(client.get(V1 + ".csv").get_data(as_text=True))))
    assert rows[0][-3:] == ["benchmark", "family", "release"]
    assert {tuple(r[-3:]) for r in rows[1:]} == {("syncred", "syncred", "1")}

    # pages: the family URL shows release 2 with the picker; -v1 shows release 1
    latest = _text(client.get("/benchmarks/syncred"))
    assert "Showing release 2 of syncred" in re.sub(r"<[^>]+>", "", latest)
    picker = _picker(latest)
    assert picker[1][0] == "/benchmarks/syncred-v1" and not picker[1][1] and not picker[1][2]
    assert picker[2][0] == "/benchmarks/syncred-v2" and picker[2][1] and picker[2][2]
    # item counts per split, from the packs themselves (release 2 adds 6 per split)
    api = client.get("/api/v1/benchmarks/syncred/releases").json
    assert api["family"] == "syncred" and api["latest"] == 2
    counts = {r["release"]: {s["split"]: s["items"] for s in r["splits"]}
              for r in api["releases"]}
    assert counts[2] == {s: n + 6 for s, n in counts[1].items()}
    assert counts[1]["test"] == len(two_releases["labels"])
    for n, (_href, _cur, _latest, text) in picker.items():
        for split, items in counts[n].items():
            assert f"{split} {items}" in text
    old_page = _text(client.get("/benchmarks/syncred-v1"))
    assert "Showing release 1 of syncred" in re.sub(r"<[^>]+>", "", old_page)
    assert "not the latest" in old_page and _picker(old_page)[1][1]
    # release 1's links stay on release 1 (its row key is the family's name)
    assert 'href="/benchmarks/syncred-v1/boards/detection/test"' in old_page
    # (the decay plot spans the family's releases: its page is the family's)
    assert not re.search(r'href="/benchmarks/syncred/boards/[^"]*(?<!/decay)"', old_page)
    board_v1 = _text(client.get("/benchmarks/syncred-v1/boards/detection/test"))
    assert "good" in board_v1 and "bad" in board_v1 and _picker(board_v1)[1][1]
    board = _text(client.get("/benchmarks/syncred/boards/detection/test"))
    assert _picker(board)[2][1] and ">good<" not in board
    for page in ("generators", "history"):
        got = _text(client.get(f"/benchmarks/syncred-v1/boards/detection/test/{page}"))
        assert _picker(got)[1][1], page
    assert client.get("/benchmarks/syncred-v3").status_code == 404

    # lists: one entry per family, its latest release
    listed = client.get("/api/v1/benchmarks").json["benchmarks"]
    assert [(b["key"], b["family"], b["release"]) for b in listed] == [
        ("syncred-v2", "syncred", 2)]
    home = _text(client.get("/"))
    assert home.count('<a href="/benchmarks/syncred">') == 1
    assert 'href="/benchmarks/syncred-v1"' not in home
    # modality boards read the latest release only, and say so
    mb = client.get("/api/v1/modalities/image/detection?split=test").json
    assert [c["benchmark"] for c in mb["columns"]] == ["syncred-v2"]
    assert "latest release only" in mb["rule"]


def test_ledger_equals_rebuild_with_two_releases(client, runner, two_releases):
    """The modality and task boards kept by the scoring hook equal a rebuild from the score
    rows once a second release exists (its columns replace the first's)."""
    urls = ["/api/v1/modalities/image/detection?split=test",
            "/api/v1/modalities/image/detection?split=dev", V1, V1 + "?mode=all", FAMILY]
    kept = {u: client.get(u).get_data() for u in urls}
    res = runner.invoke(server, ["rebuild-standings"])
    assert res.exit_code == 0, res.output
    for u in urls:
        a, b = json.loads(client.get(u).get_data()), json.loads(kept[u])
        for k in set(a) | set(b):
            assert a.get(k) == b.get(k), (u, k, a.get(k), b.get(k))


def test_keys_resolve_like_the_service(app, session, two_releases):
    """The boards' cached lookup answers what `services.releases.resolve` answers, and keys
    the server wrote itself (links, rows) are read exactly (`get_release`)."""
    from leaderboard.server.boards import releases as board_releases
    from leaderboard.server.errors import NotFound
    from leaderboard.server.services import benchmarks, releases

    with app.app_context():
        for key in ("syncred", "syncred-v1", "syncred-v2", "syncred-v3", "nope", "syncred-v0"):
            want = releases.resolve(session, key)
            if want is None:
                with pytest.raises(NotFound):
                    board_releases.resolve_key(session, key)
            else:
                assert board_releases.resolve_key(session, key) == want.key, key
        assert board_releases.url_key(session, "syncred") == "syncred-v1"
        assert board_releases.url_key(session, "syncred-v2") == "syncred-v2"
        assert benchmarks.get_release(session, "syncred").release == 1
        assert benchmarks.get_benchmark(session, "syncred").release == 2


def test_receipts_name_the_release_and_verify(app, client, auth, live_server, two_releases,
                                              tmp_path):
    from leaderboard.core.baselines import write_baseline
    from leaderboard.core.packs import load_pack

    auth.approve_all("u0@example.org")  # release 2 has its own agreement row
    preds = tmp_path / "v2.jsonl"
    write_baseline(load_pack(two_releases["v2"]), "test", "random", preds, seed=3)
    sid = _upload(client, two_releases["tokens"][0], preds.read_bytes(), method="on-v2")
    for sub_id, (key, extra) in ((two_releases["sids"][0], ("syncred", {})),
                                 (sid, ("syncred-v2", {"family": "syncred", "release": 2}))):
        path = tmp_path / f"r{sub_id}.json"
        path.write_bytes(requests.get(f"{live_server}/api/v1/submissions/{sub_id}/receipt",
                                      timeout=10).content)
        bench = json.loads(path.read_bytes())["receipt"]["benchmark"]
        assert bench["key"] == key and {k: bench[k] for k in extra} == extra
        assert ("release" in bench) == bool(extra)  # release 1's receipts are as before
        res = CliRunner().invoke(main, ["verify", str(path), "--server", live_server],
                                 catch_exceptions=False)
        assert res.exit_code == 0, res.output
    entries = requests.get(f"{live_server}/api/v1/log/entries", timeout=10).json()["entries"]
    assert {"syncred", "syncred-v2"} <= {e.get("benchmark_key") for e in entries} | {
        json.loads(e["data"])["receipt"]["benchmark"]["key"] for e in entries}
    records = client.get(f"/submissions/{sid}/records.json").json["submission"]
    assert (records["benchmark"], records["family"], records["release"]) == (
        "syncred-v2", "syncred", 2)
    # the submit form's menu: one entry per family, the family's name selects its latest
    auth.login(email="u0@example.org")
    form = _text(client.get("/submit?benchmark=syncred"))
    options = re.findall(r'<option value="(syncred[^"]*)"[^>]*?( selected)?>', form)
    assert options == [("syncred-v2", " selected")], options


def test_a_changing_release_is_refused_clearly(app, client, auth, runner, two_releases,
                                               demo_packs, tmp_path):
    bad = next_release(two_releases["v2"], tmp_path / "r3", release=3,
                       change_first_label={"label": lambda v: "real" if v == "fake" else "fake"})
    res = runner.invoke(server, ["import-pack", str(bad)])
    assert res.exit_code == 2 and "changed its label field 'label'" in res.output, res.output
    app.config["PACK_ROOTS"] = [str(tmp_path.resolve())]
    auth.register(email="root@example.org", display_name="root")
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        s.scalar(select(User).where(User.email == "root@example.org")).is_admin = True
    auth.login(email="root@example.org")
    resp = client.post("/admin/benchmarks/import", data={"path": str(bad)})
    assert resp.status_code == 400
    assert "Import refused" in _text(resp) and "changed its label field" in _text(resp)
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        assert s.scalars(select(Benchmark.key).order_by(Benchmark.key)).all() == [
            "syncred", "syncred-v2"]
    good = next_release(two_releases["v2"], tmp_path / "r3ok", release=3, prefix="z")
    resp = client.post("/admin/benchmarks/import", data={"path": str(good)},
                       follow_redirects=True)
    assert resp.status_code == 200
    assert "created release 3 of syncred (key syncred-v3" in _text(resp)
    resp = client.post("/admin/benchmarks/import", data={"path": str(good)},
                       follow_redirects=True)
    assert "refreshed release 3 of syncred" in _text(resp)
    # the admin's forms act on the release they show (release 1's key is the family's name)
    page = _text(client.get("/admin/benchmarks"))
    assert 'action="/admin/benchmarks/syncred-v1"' in page
