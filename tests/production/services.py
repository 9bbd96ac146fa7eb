"""Throw-away PostgreSQL and Redis servers for the fault tests, on spare loopback ports.

The fault tests stop, restart and flush these, so they never touch the shared instances
(127.0.0.1:5432 and :6379). PostgreSQL refuses to run as root, so when the tests run as root (CI)
the cluster belongs to the ``postgres`` system user and its commands run through ``runuser``.
"""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, *, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout_s}s")


def postgres_bin() -> Path | None:
    """The newest PostgreSQL server binaries folder, or None when none is installed."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parent.parent.name))
    return Path(found[-1]).parent if found else None


class PostgresServer:
    """``initdb`` + ``pg_ctl`` in a temporary folder; `stop`/`start` simulate an outage."""

    def __init__(self, bindir: Path):
        self.bindir = bindir
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix="lb-prod-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self._as: list[str] = []
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            os.chown(self.root, pw.pw_uid, pw.pw_gid)
            self._as = ["runuser", "-u", "postgres", "--"]

    def _run(self, *args: str, timeout: float = 60) -> None:
        subprocess.run([*self._as, *args], check=True, timeout=timeout,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def init(self) -> None:
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-U", "postgres",
                  "--auth=trust", "--no-sync", "-E", "UTF8")
        self.start()

    def start(self) -> None:
        # fsync off is safe for a process crash (the OS keeps its buffers); synchronous_commit
        # stays ON: with it off, an acknowledged commit can vanish in a crash, as in production.
        opts = (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                "-c full_page_writes=off -c max_connections=100")
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.log),
                  "-o", opts, "-w", "-t", "60", "start")

    def stop(self, mode: str = "fast") -> None:
        """``immediate`` is a crash (no shutdown checkpoint); ``fast`` disconnects clients."""
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{dbname}"

    def close(self) -> None:
        try:
            self.stop("immediate")
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
            pass
        shutil.rmtree(self.root, ignore_errors=True)


class RedisServer:
    """``redis-server`` on a spare port, nothing kept on disk unless ``appendonly``.

    ``appendonly=True`` runs it as production does (an append-only file), with ``fsync`` after
    every write, so that a SIGKILL (`kill`) loses nothing Redis acknowledged and `start` brings
    back exactly that state: e.g. a job a worker had just taken off its queue.
    """

    def __init__(self, exe: str, *, appendonly: bool = False):
        self.exe = exe
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="lb-prod-redis-"))
        self.appendonly = appendonly
        self.proc: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        """Start it (again, after `kill` or a SIGKILL from elsewhere: same port and files)."""
        if self.proc is not None:
            self.proc.wait(timeout=10)  # the killed one: reap it
        persistence = (["--appendonly", "yes", "--appendfsync", "always"] if self.appendonly
                       else ["--appendonly", "no"])
        self.proc = subprocess.Popen(
            [self.exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             *persistence, "--dir", str(self.dir)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port)

    def kill(self) -> None:
        """SIGKILL, as a crash or the OOM killer would (no shutdown, no final write)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait(timeout=10)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
