"""Capture a container's combined stdout/stderr up to a byte cap: the head and the tail, and
whether anything was cut.

A flood of output must fill neither the host's disk nor the harness's memory, and must not slow
the run's ending down. Docker's json-file log is capped by rotation (``sandbox`` sets
``max-size``/``max-file``), which keeps the *end* of the log. The beginning comes from an attach
made *before the container starts* (so it sees the first byte), read until the stream ends or
until it has seen more than ``cap_bytes``.

Whether the record is cut is decided from what the attach saw, never from comparing bytes:
a log of identical lines (``yes``) rotated by Docker looks, byte for byte, like its own
beginning, and a check of ``retained.startswith(head)`` once reported a 1 GiB flood cut to its
last MiB as whole (issue 36). So: the stream ended by itself having seen at most ``cap_bytes``
-> the whole log, ``cut`` False; more than ``cap_bytes`` -> head + marker + Docker's tail,
``cut`` True; the attach failed or did not end (the engine in trouble) -> the harness cannot
vouch for the whole log, ``cut`` True, and the marker says so.
"""

from __future__ import annotations

import threading
from typing import Any

#: how the join of head and tail reads when more than the cap was written
CUT_MARKER = "\n[... the log passed {cap} bytes: its middle was cut by the harness ...]\n"
#: ... and when the harness could not follow the log to its end
UNSURE_MARKER = "\n[... the harness could not read the whole log: its middle may be cut by the harness ...]\n"


class LogCollector:
    """Attach to the container (`attach`, before it starts), then follow in a daemon thread."""

    def __init__(self, container: Any, *, cap_bytes: int) -> None:
        if cap_bytes < 2:
            raise ValueError(f"cap_bytes must be >= 2, got {cap_bytes!r}")
        self._container = container
        self.cap_bytes = cap_bytes
        self._head_cap = cap_bytes // 2
        self._tail_cap = cap_bytes - self._head_cap
        self._seen = bytearray()  # at most cap_bytes: the whole log when it ends within them
        self._over = False  # more than cap_bytes were written
        self._ended = False  # the stream ended by itself (the container's output closed)
        self._stream: Any = None
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._follow, name="lb-harness-logs", daemon=True)

    def attach(self) -> None:
        """Attach to the created container's stdout and stderr; call before ``start()`` so that
        no output is written before the harness listens. Raises docker's APIError."""
        self._stream = self._container.attach(stdout=True, stderr=True, stream=True, logs=True)

    def start(self) -> None:
        self._thread.start()

    def _follow(self) -> None:
        stream, total = self._stream, 0
        try:
            if stream is None:
                return
            for chunk in stream:
                total += len(chunk)
                with self._lock:
                    self._seen += chunk[: self.cap_bytes - len(self._seen)]
                    if total > self.cap_bytes:
                        self._over = True
                        break  # detached: the container writes on at full speed
            else:
                with self._lock:
                    self._ended = True
        except Exception:  # noqa: BLE001 - the engine failing ends the stream; the record says unsure
            pass
        finally:
            _close(stream)

    def finish(self, retained: bytes, *, timeout_s: float = 2.0) -> tuple[str, bool]:
        """The log record from what the attach saw and ``retained`` (Docker's log after exit):
        ``(text, cut)``, ``cut`` True whenever ``text`` may not be the whole log."""
        self._thread.join(timeout_s)
        with self._lock:
            seen, over, ended = bytes(self._seen), self._over, self._ended
        if ended and not over:
            return _text(seen), False
        head, tail = seen[: self._head_cap], retained[-self._tail_cap:] if retained else b""
        marker = CUT_MARKER.format(cap=self.cap_bytes) if over else UNSURE_MARKER
        return _text(head) + marker + _text(tail), True


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
