"""Shared builder rules: encodings, splitting, paths, and the build-pack command."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from leaderboard.builders import build, check_paths
from leaderboard.builders.cli import build_pack
from leaderboard.builders.common import SourceError, Splitter, detect_encoding, iter_csv, load_json
from tests.builders.test_build_syncred import make_release


@pytest.mark.parametrize("codec", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be",
                                   "utf-32"])
def test_json_in_any_unicode_encoding(tmp_path, codec):
    path = tmp_path / "x.json"
    path.write_bytes(json.dumps([{"q": "Est-ce généré ? 是"}], ensure_ascii=False).encode(codec))
    assert load_json(path, rel="x.json") == [{"q": "Est-ce généré ? 是"}]


def test_undecodable_and_binary_files_are_named(tmp_path):
    with pytest.raises(SourceError, match="x.bin: binary data"):
        detect_encoding(b"\x00\x00\x00\x01", rel="x.bin")
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'[1, 2,\n 3,]')
    with pytest.raises(SourceError, match=r"bad.json, line 2: not valid JSON"):
        load_json(bad, rel="bad.json")
    csv = tmp_path / "a.csv"
    csv.write_text("a,b\n1,2\n1,2,3\n")
    with pytest.raises(SourceError, match=r"a.csv, line 3: 1 more cells"):
        list(iter_csv(csv, rel="a.csv"))


def test_splitter_is_deterministic_and_validated():
    s = Splitter(0.3, 0.5, 4)
    got = [s.assign(f"unit{k}") for k in range(2000)]
    assert got == [Splitter(0.3, 0.5, 4).assign(f"unit{k}") for k in range(2000)]
    dev = sum(split == "dev" for split, _ in got) / len(got)
    private = [p for split, p in got if split == "test"]
    assert 0.25 < dev < 0.35 and 0.45 < private.count("private") / len(private) < 0.55
    assert all(p is None for split, p in got if split == "dev")
    assert Splitter(0.0, 1.0, 0).assign("u") == ("test", "private")
    for bad in ({"dev_fraction": 1.5}, {"private_fraction": -0.1}, {"seed": "x"}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            Splitter(**{"dev_fraction": 0.3, "private_fraction": 0.5, "seed": 0, **bad})


def test_output_folder_is_guarded(tmp_path):
    src = tmp_path / "release"
    src.mkdir()
    with pytest.raises(ValueError, match="outside the release"):
        check_paths(src, src / "pack")
    other = tmp_path / "home"
    other.mkdir()
    (other / "thesis.tex").write_text("precious")
    with pytest.raises(ValueError, match="not a pack; refusing"):
        build("syncred", src, other)
    with pytest.raises(ValueError, match="unknown benchmark"):
        build("imagenet", src, tmp_path / "p")


def test_build_pack_command(tmp_path):
    release = make_release(tmp_path / "SynCred")
    out = tmp_path / "pack"
    runner = CliRunner()
    res = runner.invoke(build_pack, ["syncred", "--from", str(release), "--out", str(out),
                                     "--dev-fraction", "0.25", "--seed", "3", "--link-media"])
    assert res.exit_code == 0, res.output
    assert "syncred 1: wrote" in res.output
    media = next((out / "media" / "images").iterdir())
    assert media.stat().st_nlink == 2  # hard-linked, not copied
    (release / "SynCred-600" / "ZZ_NR_1.png").write_bytes(b"x")
    res = runner.invoke(build_pack, ["syncred", "--from", str(release), "--out", str(out)])
    assert res.exit_code == 2
    assert "SynCred-600/ZZ_NR_1.png" in res.output
    res = runner.invoke(build_pack, ["syncred", "--from", str(release), "--out", str(out),
                                     "--dev-fraction", "2"])
    assert res.exit_code == 2 and "dev_fraction must be a number in [0, 1], got 2.0" in res.output


def test_build_pack_scoring_only(tmp_path, monkeypatch):
    release = make_release(tmp_path / "SynCred")
    out = tmp_path / "pack"
    res = CliRunner().invoke(build_pack, ["syncred", "--from", str(release), "--out", str(out),
                                          "--scoring-only"])
    assert res.exit_code == 0, res.output
    assert "scoring-only pack: 28 media files listed as absent (28 images); 0 of them were not " \
           "in the release either" in res.output
    assert "scoring_only: true" in (out / "benchmark.yaml").read_text()
    # a builder that cannot leave its media out says so, naming itself
    from leaderboard.builders import syncred

    monkeypatch.setattr(syncred, "build", lambda source, out, **kw: None)
    with pytest.raises(ValueError, match="the syncred builder cannot build a scoring-only pack"):
        build("syncred", release, tmp_path / "p", scoring_only=True)
