"""Downloads are packs (issue 21): each demo benchmark's dev archive, fetched through the data
page's signed link as an approved member, unzips to a pack the toolkit scores unchanged
(``leaderboard baseline`` then ``score``, run as a team runs them from a folder outside the
checkout), with the same numbers as scoring the original pack; a test archive holds no label,
its pack still takes ``baseline`` and ``score`` says it needs labels."""
from __future__ import annotations

import io
import json
import re
import zipfile

import pytest

from .conftest import hidden_test_rows, leaks, login, sign

from leaderboard.core.packs import load_pack
from leaderboard.core.scoring import score_predictions
from leaderboard.demo import BENCHMARKS
from leaderboard.server.services.benchmarks import import_pack
from tests.toolkit import make_console_script, run_line


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
