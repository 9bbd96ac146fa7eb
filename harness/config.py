"""Limits for one submission run, passed in by the caller (nothing here reads the environment).

The defaults suit a real GPU worker; tests pass tiny values. ``Limits.from_mapping`` turns a
flat mapping (e.g. the app's configuration, or ``os.environ`` handed over by the caller) into a
validated ``Limits`` so that the one place that reads configuration stays outside this package.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_MiB = 1024 * 1024
_GiB = 1024 * _MiB
_USER_RE = re.compile(r"^[0-9]+(:[0-9]+)?$")


@dataclass(frozen=True)
class Limits:
    """Caps applied to one submission, from upload to the end of its run.

    Sizes are bytes. ``user`` is ``"uid:gid"`` (numeric, never 0) or ``None``: the harness
    process's own ids, or 65534 (nobody) when the harness runs as root, so that it can always
    delete what the container wrote to ``/output``.
    """

    wall_s: float = 3600.0
    memory_bytes: int = 16 * _GiB
    cpus: float = 4.0
    pids: int = 512
    open_files: int = 4096
    tmp_bytes: int = 2 * _GiB
    shm_bytes: int = 1 * _GiB
    output_bytes: int = 512 * _MiB
    output_files: int = 10_000
    log_bytes: int = 1 * _MiB
    tarball_bytes: int = 20 * _GiB
    image_bytes: int = 40 * _GiB
    max_layers: int = 100
    user: str | None = None
    poll_s: float = 0.1
    reap_grace_s: float = 300.0

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == "user":
                if value is not None and (not _USER_RE.match(value) or value.split(":")[0] == "0"):
                    raise ValueError(f"Limits.user must be 'uid[:gid]' with uid != 0, got {value!r}")
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"Limits.{f.name} must be a positive number, got {value!r}")
            if f.type == "int" and not isinstance(value, int):
                raise ValueError(f"Limits.{f.name} must be an integer, got {value!r}")
        if self.poll_s > 1.0:
            raise ValueError(f"Limits.poll_s must be <= 1 s (it bounds output overshoot), got {self.poll_s!r}")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], *, prefix: str = "HARNESS_") -> "Limits":
        """Build from ``{prefix + FIELD_NAME_UPPER: value}``; strings are converted; other keys ignored."""
        kwargs: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            key = prefix + f.name.upper()
            if key not in values:
                continue
            raw = values[key]
            if f.name == "user":
                kwargs[f.name] = str(raw) if raw not in (None, "") else None
            else:
                try:
                    kwargs[f.name] = int(raw) if f.type == "int" else float(raw)
                except (TypeError, ValueError):
                    raise ValueError(f"{key} must be a number, got {raw!r}") from None
        return cls(**kwargs)

    def as_record(self) -> dict[str, Any]:
        """The limits as a JSON-ready dict, stored with each run."""
        return dataclasses.asdict(self)
