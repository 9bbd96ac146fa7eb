"""Capture a container's combined stdout/stderr up to a byte cap: the head and the tail.

A flood of output must fill neither the host's disk nor the harness's memory, and must not slow
the run's ending down. Docker's json-file log is capped by rotation (``sandbox`` sets
``max-size``/``max-file``), which keeps the *end* of the log; the beginning is captured while the
container runs by following the stream only until the head half of the cap is full. At the end,
``finish(retained)`` joins the two: if the retained log still starts with the captured head,
nothing was rotated away and the cut is exact; otherwise the marker says the middle was dropped.
"""

from __future__ import annotations

import threading
from typing import Any


class LogCollector:
    """Follow ``container.logs(stream=True, follow=True)`` in a daemon thread for the head."""

    def __init__(self, container: Any, *, cap_bytes: int) -> None:
        if cap_bytes < 2:
            raise ValueError(f"cap_bytes must be >= 2, got {cap_bytes!r}")
        self._container = container
        self.cap_bytes = cap_bytes
        self._head_cap = cap_bytes // 2
        self._tail_cap = cap_bytes - self._head_cap
        self._head = bytearray()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._follow, name="lb-harness-logs", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _follow(self) -> None:
        stream = None
        try:
            stream = self._container.logs(stream=True, follow=True, stdout=True, stderr=True)
            for chunk in stream:
                with self._lock:
                    self._head += chunk[: self._head_cap - len(self._head)]
                    if len(self._head) >= self._head_cap:
                        break
        except Exception:  # noqa: BLE001 - the container vanishing ends the stream; the head stays partial
            pass
        finally:
            _close(stream)

    def finish(self, retained: bytes, *, timeout_s: float = 2.0) -> tuple[str, bool]:
        """Combine the followed head with ``retained`` (Docker's log after exit); (text, truncated)."""
        self._thread.join(timeout_s)
        with self._lock:
            head = bytes(self._head)
        if retained.startswith(head):  # nothing rotated away: ``retained`` is the whole log
            if len(retained) <= self.cap_bytes:
                return _text(retained), False
            cut = len(retained) - self._head_cap - self._tail_cap
            marker = f"\n[... {cut} bytes of log cut by the harness ...]\n"
            return _text(retained[: self._head_cap]) + marker + _text(retained[-self._tail_cap:]), True
        marker = "\n[... the middle of the log was cut by the harness ...]\n"
        return _text(head) + marker + _text(retained[-self._tail_cap:]), True


def _close(stream: Any) -> None:
    """Close a docker-py log stream and its HTTP response.

    ``CancellableStream.close`` only shuts the socket of a stream still open; one that ended by
    itself keeps its response (and socket) until garbage collection, so close that too.
    """
    if stream is None:
        return
    try:
        if hasattr(stream, "close"):
            stream.close()
    finally:
        response = getattr(stream, "_response", None)
        if response is not None:
            response.close()


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")
