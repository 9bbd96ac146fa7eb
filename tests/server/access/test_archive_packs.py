"""Downloads are packs (issue 21): each demo benchmark's dev archive, fetched through the data
page's signed link as an approved member, unzips to a pack the toolkit scores unchanged
(``leaderboard baseline`` then ``score``, run as a team runs them from a folder outside the
checkout), with the same numbers as scoring the original pack; a test archive holds no label,
its pack still takes ``baseline`` and ``score`` says it needs labels. A real receipt of a dev
submission is recomputed by ``leaderboard verify --pack`` on the unzipped download (issue 33)."""
from __future__ import annotations

import hashlib
import io
import json
import re
import zipfile

import pytest
import requests

from .conftest import hidden_test_rows, leaks, login, sign

from leaderboard.core.packs import load_pack
from leaderboard.core.scoring import score_predictions
from leaderboard.demo import BENCHMARKS
from leaderboard.server.services.benchmarks import import_pack
from tests.toolkit import make_console_script, run_line

from tests.server.conftest import live_server  # noqa: F401  (fixture)


@pytest.fixture
def db_url(sqlite_url):  # files and the toolkit, not the database, are under test
    return sqlite_url


@pytest.fixture(scope="module")
def five_packs(tmp_path_factory):
    from leaderboard.demo import generate

    out = tmp_path_factory.mktemp("five")
    return {k: generate(k, out, scale="small", seed=0) for k in BENCHMARKS}


@pytest.fixture
def member(app, five_packs):
    """All five imported; an approved member's logged-in client."""
    from leaderboard.server.services import decisions
    from leaderboard.server.services import accounts

    db = app.extensions["lb_db"]
    with app.app_context(), db.scope() as s:
        user = accounts.register(s, email="team@example.org", display_name="Team",
                                 password="correct horse battery")
        admin = accounts.register(s, email="boss@example.org", display_name="Boss",
                                  password="correct horse battery", is_admin=True)
        for pack in five_packs.values():
            bench = import_pack(s, pack, data_dir=app.config["DATA_DIR"],
                                label_keys=app.config["LABEL_KEYS"])
            s.flush()
            decisions.approve(s, admin, sign(s, user, bench))
    return login(app, "team@example.org")


def _download(client, key: str, split: str, labels: bool) -> bytes:
    """The archive behind the data page's link, as a member's browser fetches it."""
    link_id = f"dl-{split}-archive" + ("-labels" if labels else "")
    page = client.get(f"/data/{key}").get_data(as_text=True)
    href = re.search(rf'id="{link_id}" href="([^"]+)"', page)
    assert href, f"no {link_id} link on /data/{key}"
    resp = client.get(href[1].replace("&amp;", "&"))
    assert resp.status_code == 200
    assert f'filename={key}-{split}.zip' in resp.headers["Content-Disposition"]
    return resp.get_data()


def test_every_dev_download_scores_with_the_toolkit(member, five_packs, tmp_path):
    bin_dir = tmp_path / "bin"
    make_console_script(bin_dir)
    work = tmp_path / "team"
    work.mkdir()
    for key in BENCHMARKS:
        data = _download(member, key, "dev", labels=True)
        zipfile.ZipFile(io.BytesIO(data)).extractall(work)
        pack = f"{key}-dev"
        assert (work / pack / "benchmark.yaml").is_file()
        out = run_line(f"leaderboard baseline --pack {pack} --split dev --kind random "
                       f"--out {key}.jsonl", cwd=work, bin_dir=bin_dir)
        assert out.returncode == 0, out.stderr
        out = run_line(f"leaderboard score --pack {pack} --split dev --predictions "
                       f"{key}.jsonl --json", cwd=work, bin_dir=bin_dir)
        assert out.returncode == 0, f"{key}: {out.stderr}"
        got = json.loads(out.stdout)
        want = score_predictions(load_pack(five_packs[key]), "dev", work / f"{key}.jsonl")
        assert got == [r.as_dict() for r in want.parts["all"]], key
        load_pack(work / pack).validate()  # media and all, as validate-pack does


def test_test_downloads_hold_no_labels(member, five_packs, tmp_path):
    bin_dir = tmp_path / "bin"
    make_console_script(bin_dir)
    for key in BENCHMARKS:
        data = _download(member, key, "test", labels=False)
        archive = zipfile.ZipFile(io.BytesIO(data))
        assert not [n for n in archive.namelist() if "labels" in n], key
        rows = hidden_test_rows(five_packs[key])
        for name in archive.namelist():
            if name.endswith((".jsonl", ".yaml", ".md")):
                assert not leaks(archive.read(name), rows), (key, name)
        assert not leaks(data, rows), key
        archive.extractall(tmp_path)
    pack = "syncred-test"
    out = run_line(f"leaderboard baseline --pack {pack} --split test --kind random "
                   "--out t.jsonl", cwd=tmp_path, bin_dir=bin_dir)
    assert out.returncode == 0, out.stderr
    out = run_line(f"leaderboard score --pack {pack} --split test --predictions t.jsonl",
                   cwd=tmp_path, bin_dir=bin_dir)
    assert out.returncode == 2 and "scoring needs labels" in out.stderr
    assert "leaderboard submit" in out.stderr


def _token(client) -> str:
    client.post("/team/create", data={"name": "Team Verify"})
    page = client.post("/team/tokens", data={"name": "cli"}).get_data(as_text=True)
    found = re.search(r'<code id="new-token">([^<]+)</code>', page)
    assert found, page[:500]
    return found[1]


def test_a_receipt_recomputes_on_the_unzipped_download(member, live_server, tmp_path):
    """docs/verify.md's recomputation with what a team has: its download (not the server's pack
    folder) and its own predictions, for every demo benchmark; a changed prediction is exit 8."""
    bin_dir = tmp_path / "bin"
    make_console_script(bin_dir)
    work = tmp_path / "team"
    work.mkdir()
    token = _token(member)
    for key in BENCHMARKS:
        zipfile.ZipFile(io.BytesIO(_download(member, key, "dev", labels=True))).extractall(work)
        pack = f"{key}-dev"
        out = run_line(f"leaderboard baseline --pack {pack} --split dev --kind random --seed 7 "
                       f"--out {key}.jsonl", cwd=work, bin_dir=bin_dir)
        assert out.returncode == 0, out.stderr
        resp = requests.post(f"{live_server}/api/v1/submissions", timeout=60,
                             headers={"Authorization": f"Bearer {token}"},
                             data={"benchmark": key, "split": "dev", "method_name": "mine"},
                             files={"file": ("preds.jsonl", (work / f"{key}.jsonl").read_bytes())})
        assert resp.status_code == 202, resp.text
        sid = resp.json()["id"]
        receipt = requests.get(f"{live_server}/api/v1/submissions/{sid}/receipt", timeout=30)
        assert receipt.status_code == 200, (key, receipt.text[:300])
        (work / f"{key}.receipt.json").write_bytes(receipt.content)
        body = receipt.json()["receipt"]
        # the receipt commits to the download's own bytes: sha256sum benchmark.yaml equals it
        got = hashlib.sha256((work / pack / "benchmark.yaml").read_bytes()).hexdigest()
        assert body["pack"]["benchmark_yaml"] == f"sha256:{got}", key
        line = (f"leaderboard verify {key}.receipt.json --server {live_server} --pack {pack} "
                f"--predictions {key}.jsonl")
        out = run_line(line, cwd=work, bin_dir=bin_dir)
        assert out.returncode == 0, f"{key}: {out.stdout}{out.stderr}"
        assert "equal the receipt's exactly" in out.stdout, out.stdout

        rows = (work / f"{key}.jsonl").read_text().splitlines()
        first = json.loads(rows[0])
        changed = {**first, **{f: _other(first[f]) for f in first if f != "id"}}
        (work / f"{key}.jsonl").write_text("\n".join([json.dumps(changed), *rows[1:]]) + "\n")
        out = run_line(line, cwd=work, bin_dir=bin_dir)
        assert out.returncode == 8, f"{key}: {out.stdout}{out.stderr}"
        assert "is not the file this receipt scored" in out.stdout + out.stderr, key


def _other(value):
    """A different prediction of the same type (the row stays valid)."""
    flips = {"fake": "real", "real": "fake", "yes": "no", "no": "yes"}
    if isinstance(value, str):
        return flips.get(value, value + " (changed)")
    if isinstance(value, float):
        return 1.0 - value if value != 0.5 else 0.25
    if isinstance(value, list):
        return value[:-1] if len(value) > 1 else value + ["Z"]
    return value
