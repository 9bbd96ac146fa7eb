"""Watch the disk while Docker loads an image, and stop the load when it writes past the cap.

Inspection (`harness.tarball`) already counts what the layers decompress to, every manifest
occurrence at its size, so a well-behaved engine writes at most the image cap. This is the
second line, for whatever inspection and the engine disagree on: while ``docker load`` runs, a
thread polls the *used* bytes of the file system that holds Docker's data root
(``DockerRootDir``, read with ``statvfs``) and trips when they have grown past an allowance
(the image cap, plus the archive Docker unpacks to a temporary directory first, plus a margin
for everything else on the host). A trip

* stops the upload at once (the streamed body ends with an error, so Docker discards it), and
* closes the progress stream when the archive has already gone through;

the caller then removes whatever was loaded and refuses the image. Docker 20.10 to 24 registers
the layers of an archive it has fully received even after its client has gone, so past the
upload the trip cannot interrupt the engine mid-layer: it bounds the damage to what is written
before the poll notices plus the layer being written, and the refusal removes it.

The probe is skipped (``DiskWatchdog.enabled`` false, and the load runs unwatched, relying on
inspection and the after-load size check) when Docker's data root is not visible to this
process, e.g. a remote engine.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

log = logging.getLogger(__name__)

#: bytes the rest of the host may write during a load before the watchdog blames the image
MARGIN_BYTES = 64 * 1024 * 1024
_CHUNK = 1024 * 1024


class LoadStopped(Exception):
    """Raised inside the upload when the watchdog tripped; the engine turns it into a refusal."""


def used_bytes(path: str) -> int:
    """Bytes in use on the file system holding ``path`` (``OSError`` if it is not visible)."""
    st = os.statvfs(path)
    return (st.f_blocks - st.f_bfree) * st.f_frsize


class DiskWatchdog:
    """Polls ``probe()`` every ``poll_s`` from ``start()`` to ``stop()``; trips past ``allowance``.

    ``probe`` returns used bytes, or is None (nothing to watch: never trips). ``grown`` is the
    largest growth seen over the baseline taken at ``start()``; ``tripped`` an Event.
    """

    def __init__(self, probe: Callable[[], int] | None, *, allowance: int, poll_s: float) -> None:
        self.probe, self.allowance, self.poll_s = probe, allowance, poll_s
        self.tripped = threading.Event()
        self.grown = 0
        self._baseline = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._on_trip: list[Callable[[], Any]] = []

    @property
    def enabled(self) -> bool:
        return self.probe is not None

    def on_trip(self, action: Callable[[], Any]) -> None:
        """Run ``action`` (e.g. close a response) from the watchdog thread when it trips."""
        self._on_trip.append(action)
        if self.tripped.is_set():
            action()

    def start(self) -> "DiskWatchdog":
        if self.probe is None:
            return self
        self._baseline = self.probe()
        self._thread = threading.Thread(target=self._run, name="lb-load-watchdog", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.check()  # one last look, so a load that finished between polls is still measured

    def check(self) -> bool:
        """Measure once; True (and trip) when growth is past the allowance."""
        if self.probe is None:
            return False
        try:
            grown = self.probe() - self._baseline
        except OSError as exc:  # the data root vanished mid-load: stop watching, say so
            log.warning("disk watchdog probe failed error=%s", exc)
            self.probe = None
            return False
        self.grown = max(self.grown, grown)
        if grown > self.allowance and not self.tripped.is_set():
            log.warning("disk watchdog tripped grown=%d allowance=%d", grown, self.allowance)
            self.tripped.set()
            for action in self._on_trip:
                try:
                    action()
                except Exception:  # noqa: BLE001 - stopping the load must not crash the thread
                    log.exception("disk watchdog trip action failed")
        return self.tripped.is_set()

    def _run(self) -> None:
        while not self._stop.wait(self.poll_s):
            if self.check():
                return

    def __enter__(self) -> "DiskWatchdog":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def watched_body(fh: BinaryIO, watchdog: DiskWatchdog) -> Iterator[bytes]:
    """The archive as chunks for a streamed request body; raises ``LoadStopped`` once tripped."""
    while True:
        if watchdog.tripped.is_set():
            raise LoadStopped("disk watchdog tripped during the upload")
        chunk = fh.read(_CHUNK)
        if not chunk:
            return
        yield chunk
        time.sleep(0)  # let the watchdog thread run between chunks


def docker_root_probe(client: Any) -> Callable[[], int] | None:
    """A probe for the file system of the engine's ``DockerRootDir``, or None if not visible."""
    try:
        root = client.info().get("DockerRootDir")
    except Exception as exc:  # noqa: BLE001 - an engine that cannot say is simply not watched
        log.info("disk watchdog off: engine info failed error=%s", exc)
        return None
    if not root:
        return None
    try:
        used_bytes(root)
    except OSError as exc:
        log.info("disk watchdog off: %s is not visible here error=%s", root, exc)
        return None
    return lambda: used_bytes(root)
