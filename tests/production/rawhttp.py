"""A raw HTTP/1.1 client for hostile requests: huge bodies that stop when the server answers,
chunked bodies, and slow clients trickling bytes (what ``requests`` cannot send)."""
from __future__ import annotations

import re
import select
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path

MIB = 1 << 20


@dataclass
class Answer:
    status: int | None  # None: the connection ended without an HTTP answer
    sent: int  # body bytes the server let us send before it answered
    head: str


def send_big(port: int, path: str, *, head_fields: str, body_prefix: bytes, total: int,
             body_suffix: bytes = b"", chunked: bool = False, timeout_s: float = 60.0) -> Answer:
    """Send ``body_prefix`` + zeros + ``body_suffix`` (``total`` bytes in all) and stop as soon
    as the server answers; returns its status and how many body bytes went out."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout_s)
    length = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {total}"
    sock.sendall(f"POST {path} HTTP/1.1\r\nHost: localhost\r\n{head_fields}{length}\r\n\r\n"
                 .encode())
    zeros = bytes(MIB)
    sent, reply = 0, b""
    deadline = time.monotonic() + timeout_s
    try:
        sock.setblocking(False)
        pieces = [body_prefix]
        filler = total - len(body_prefix) - len(body_suffix)
        while time.monotonic() < deadline:
            readable, writable, _ = select.select([sock], [sock], [], 0.5)
            if readable:
                data = sock.recv(65536)
                reply += data
                if not data or b"\r\n\r\n" in reply:
                    break
                continue
            if not writable or sent >= total:
                continue
            if not pieces:
                if filler > 0:
                    n = min(MIB, filler)
                    pieces.append(zeros[:n])
                    filler -= n
                else:
                    pieces.append(body_suffix)
            piece = pieces.pop(0)
            frame = (f"{len(piece):x}\r\n".encode() + piece + b"\r\n") if chunked else piece
            n = sock.send(frame)
            if n < len(frame):  # the kernel took part of it: keep the rest for later
                rest = frame[n:]
                while rest and time.monotonic() < deadline:
                    r, w, _ = select.select([sock], [sock], [], 0.5)
                    if r:
                        break
                    if w:
                        rest = rest[sock.send(rest):]
                if rest:
                    continue
            sent += len(piece)
            if chunked and sent >= total:
                sock.send(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        try:
            sock.setblocking(True)
            reply += sock.recv(65536)
        except OSError:
            pass
    finally:
        sock.close()
    match = re.match(rb"HTTP/1\.[01] (\d{3})", reply)
    return Answer(int(match.group(1)) if match else None, sent,
                  reply.split(b"\r\n\r\n")[0].decode("latin-1"))


def multipart_head(fields: dict[str, str], boundary: str = "lbboundary") -> tuple[str, bytes, bytes]:
    """(content-type header line, body up to the file's bytes, the closing part)."""
    body = b"".join(f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'
                    .encode() for k, v in fields.items())
    body += (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="f.jsonl"\r\n'
             "Content-Type: application/octet-stream\r\n\r\n").encode()
    return (f"Content-Type: multipart/form-data; boundary={boundary}\r\n", body,
            f"\r\n--{boundary}--\r\n".encode())


class Trickler(threading.Thread):
    """A slow client: sends ``fast`` at once, then ``slow`` one byte every ``every_s``."""

    def __init__(self, port: int, slow: bytes, every_s: float, fast: bytes = b"") -> None:
        super().__init__(daemon=True)
        self.port, self.fast, self.slow, self.every_s = port, fast, slow, every_s
        self.stop = threading.Event()

    def run(self) -> None:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
                sock.sendall(self.fast)
                for byte in self.slow:
                    if self.stop.wait(self.every_s):
                        return
                    sock.sendall(bytes([byte]))
                self.stop.wait()
        except OSError:
            pass


def io_written(pids: list[int]) -> int:
    """Bytes the processes passed to write() calls so far (/proc/<pid>/io wchar): files, pipes
    and sockets alike, so an upload spooled to any file shows."""
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/io").read_text().splitlines():
                if line.startswith("wchar:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total
