"""Sample a container's memory in a thread to record its peak.

A stats request that is not a container's first blocks until Docker's next 1 s sample, so it
cannot sit in the watch loop; a thread asks for one-shot samples until told to stop (a streaming
request would leave its socket open after the container is removed). cgroup v1 reports the
cgroup's own all-time maximum (``max_usage``), so one late sample gives the true peak; v2 only
reports current ``usage``, and the peak there is the largest sample seen.
"""

from __future__ import annotations

import threading
from typing import Any


class PeakMemory:
    def __init__(self, container: Any) -> None:
        self._container = container
        self.peak_bytes: int | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="lb-harness-stats", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.is_set():
            try:
                sample = self._container.stats(stream=False, one_shot=True)
            except Exception:  # noqa: BLE001 - the container is gone: the peak stays what was seen
                return
            memory = sample.get("memory_stats") or {}
            value = memory.get("max_usage") or memory.get("usage")
            if value:
                self.peak_bytes = max(self.peak_bytes or 0, int(value))
            self._stop.wait(0.2)

    def finish(self, timeout_s: float = 1.5) -> int | None:
        """Stop sampling and return the peak (None when no sample arrived: very short runs)."""
        self._stop.set()
        self._thread.join(timeout_s)
        return self.peak_bytes
