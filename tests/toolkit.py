"""The toolkit's ``leaderboard`` command as a team runs it: a console script made from
pyproject.toml's ``[project.scripts]`` entry (what ``pip install`` writes), run in a subprocess
from a folder outside the checkout with only the toolkit's package on its path.

The installed wheel itself is tested in tests/distribution (slow: it builds a wheel and a venv);
this is the cheap stand-in the per-feature tests use.
"""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def make_console_script(bin_dir: Path) -> Path:
    """Write ``bin_dir/leaderboard``, pip's console-script wrapper of the declared entry point;
    the checkout enters through PYTHONPATH, never through the working folder."""
    entry = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    module, func = entry["leaderboard"].split(":")
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "leaderboard"
    script.write_text(f"#!{sys.executable}\nimport sys\nfrom {module} import {func}\n"
                      f"sys.exit({func}())\n")
    script.chmod(0o755)
    return script


def toolkit_env(bin_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV",)}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT)
    return env


def run_line(line: str, *, cwd: Path, bin_dir: Path, timeout: int = 300):
    """Run one shell-free command line (as printed in the README) in ``cwd``."""
    assert not Path(cwd).resolve().is_relative_to(ROOT), "run it outside the checkout"
    return subprocess.run(shlex.split(line), cwd=cwd, env=toolkit_env(bin_dir),
                          capture_output=True, text=True, timeout=timeout)
