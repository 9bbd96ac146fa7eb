"""A real SMTP server for the mail tests: aiosmtpd on 127.0.0.1, on a port that survives a
stop and a start (so "the server went away and came back" is the same address), with gates the
test opens to hold the server at a chosen step (after RCPT, after the end of DATA)."""
from __future__ import annotations

import socket
import threading
from email import message_from_bytes, policy

from aiosmtpd.controller import Controller


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Recorder:
    """The handler: keeps every message the server accepted (after the end of DATA)."""

    def __init__(self):
        self.messages: list = []
        self.hold_rcpt = threading.Event()
        self.hold_data = threading.Event()
        self.release = threading.Event()
        self.release.set()
        self.reached = threading.Event()

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        envelope.rcpt_tos.append(address)
        if self.hold_rcpt.is_set():
            self.reached.set()
            await _wait(self.release)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        self.messages.append(message_from_bytes(envelope.original_content or envelope.content,
                                                policy=policy.default))
        if self.hold_data.is_set():
            self.reached.set()
            await _wait(self.release)
        return "250 Message accepted for delivery"


async def _wait(event: threading.Event) -> None:
    import asyncio
    while not event.is_set():
        await asyncio.sleep(0.02)


class SmtpServer:
    def __init__(self):
        self.port = free_port()
        self.handler = Recorder()
        self.controller: Controller | None = None

    def start(self) -> None:
        self.controller = Controller(self.handler, hostname="127.0.0.1", port=self.port)
        self.controller.start()

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
            self.controller = None

    @property
    def messages(self) -> list:
        return self.handler.messages

    def config(self) -> dict:
        return {"SMTP_HOST": "127.0.0.1", "SMTP_PORT": self.port, "SMTP_SECURITY": "none",
                "SMTP_TIMEOUT_S": 10, "MAIL_SENDER": "Leaderboard <lb@example.org>",
                "PUBLIC_URL": "http://lb.example.org"}
