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
