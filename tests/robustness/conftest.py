"""Shared fixtures of the robustness tests: small demo packs with a robustness plan."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from leaderboard.demo import media


def set_plan(pack_dir: Path, plan) -> Path:
    """Write ``plan`` as the pack's ``robustness:`` section (False turns it off)."""
    path = pack_dir / "benchmark.yaml"
    meta = yaml.safe_load(path.read_text())
    meta["robustness"] = plan
    path.write_text(yaml.safe_dump(meta, sort_keys=False))
    return pack_dir


SMALL_PLAN = {"items_per_condition": 8, "seed": 0,
              "suites": {"image": {"degradations": ["jpeg", "blur"], "levels": [1, 5]}}}


@pytest.fixture(scope="session")
def base_packs(tmp_path_factory):
    from leaderboard.demo import generate

    out = tmp_path_factory.mktemp("robust-packs")
    return {key: generate(key, out, scale="small", seed=0) for key in ("syncred",)}


@pytest.fixture
def small_pack(base_packs, tmp_path) -> Path:
    """A private copy of the SynCred demo pack with `SMALL_PLAN` (tests may edit it)."""
    dest = tmp_path / "syncred"
    shutil.copytree(base_packs["syncred"], dest, ignore=shutil.ignore_patterns(".cache"))
    return set_plan(dest, SMALL_PLAN)


@pytest.fixture(scope="session")
def sample_media(tmp_path_factory) -> dict[str, Path]:
    """One demo image, video and audio file."""
    out = tmp_path_factory.mktemp("robust-media")
    return {"image": media.image(out / "i.png", seed=3, size=96),
            "video": media.video(out / "v.avi", seed=3),
            "audio": media.audio(out / "a.wav", seed=3, seconds=1.0, rate=16000)}


# -- the server, Docker and busybox detectors (tests/containers' way, jobs run inline) ----------
def fragile_script(pack_dir: Path, split: str, *, sleep_on_copies: int = 0) -> str:
    """A detector that 'reads pixels' in the most fragile way: it recognises the exact bytes of
    the clean media (sha256 baked in) and is unsure (0.5) of anything else."""
    import hashlib
    import json

    fakes, reals = [], []
    items = {}
    for line in (pack_dir / "splits" / split / "items.jsonl").read_text().splitlines():
        row = json.loads(line)
        items[row["id"]] = row["media"][0]
    for line in (pack_dir / "splits" / split / "labels.jsonl").read_text().splitlines():
        row = json.loads(line)
        digest = hashlib.sha256((pack_dir / items[row["id"]]).read_bytes()).hexdigest()
        (fakes if row["label"] == "fake" else reals).append(digest)
    wait = (f"grep -q '\"id\":\"r' /input/items.jsonl && sleep {sleep_on_copies}\n"
            if sleep_on_copies else "")
    return (
        "set -e\n" + wait +
        f"FAKES=' {' '.join(fakes)} '\nREALS=' {' '.join(reals)} '\ncd /input\n"
        "while IFS= read -r line; do\n"
        "  id=$(echo \"$line\" | sed -n 's/.*\"id\": *\"\\([^\"]*\\)\".*/\\1/p')\n"
        "  m=$(echo \"$line\" | sed -n 's/.*\"media\": *\\[\"\\([^\"]*\\)\".*/\\1/p')\n"
        "  h=$(sha256sum \"$m\" | cut -c1-64)\n"
        "  s=0.5\n"
        "  case \"$FAKES\" in *\" $h \"*) s=0.9 ;; esac\n"
        "  case \"$REALS\" in *\" $h \"*) s=0.1 ;; esac\n"
        "  echo \"{\\\"id\\\": \\\"$id\\\", \\\"score\\\": $s}\" >> /output/predictions.jsonl\n"
        "done < items.jsonl\n")


#: reads only items.jsonl (never a media byte): the same answer whatever the media look like
METADATA_SCRIPT = (
    "set -e\n"
    "while IFS= read -r line; do\n"
    "  id=$(echo \"$line\" | sed -n 's/.*\"id\": *\"\\([^\"]*\\)\".*/\\1/p')\n"
    "  echo \"{\\\"id\\\": \\\"$id\\\", \\\"score\\\": 0.7, \\\"label\\\": \\\"fake\\\"}\" "
    ">> /output/predictions.jsonl\n"
    "done < /input/items.jsonl\n")
