"""Fixtures for the access-control tests: personas in every access state, a response-body
collector (to prove no response ever carries a hidden test label), and link helpers."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import timedelta

import pytest

from leaderboard.server.access import agreements
from leaderboard.server.models import Benchmark, Submission, User, utcnow
from leaderboard.server.services import accounts, decisions, downloads, teams
from leaderboard.server.services.benchmarks import get_benchmark
from leaderboard.server.services.downloads import Target

PASSWORD = "correct horse battery"
INTENDED = "Evaluating our synthetic-image detector for a research paper."
PERSONAS = ("anonymous", "none", "pending", "approved", "denied", "revoked", "expired",
            "other_team", "admin")


@pytest.fixture(autouse=True)
def _no_hidden_labels_anywhere(request):
    """Every test here that runs the app collects its response bodies and, at the end, checks
    that none carries a hidden test label."""
    if "app" not in request.fixturenames:
        yield
        return
    seen = request.getfixturevalue("bodies")
    yield
    rows = hidden_test_rows(request.getfixturevalue("demo_packs")["syncred"])
    found = [hit for body in seen for hit in leaks(body, rows)]
    assert not found, found[:5]


@pytest.fixture
def bodies(app):
    """Every response body the app sends during the test (files included)."""
    seen: list[bytes] = []

    @app.after_request
    def _collect(resp):
        if resp.direct_passthrough:  # send_file: buffer it so it can be read here and sent
            resp.direct_passthrough = False
            original = resp.response
            seen.append(resp.get_data())
            if hasattr(original, "close"):
                original.close()
        else:
            seen.append(resp.get_data())
        return resp

    return seen


def hidden_test_rows(pack_dir) -> list[dict]:
    rows = []
    with open(pack_dir / "splits" / "test" / "labels.jsonl", encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rows.append(json.loads(line))
    return rows


def leaks(body: bytes, rows: list[dict]) -> list[str]:
    """Hidden test labels found in ``body``: a JSON-ish object naming a test id next to a label
    field, or a zip member called test/labels.jsonl."""
    text = body.decode("utf-8", errors="replace")
    found = []
    if "test/labels.jsonl" in text:
        found.append("a test/labels.jsonl archive member")
    for row in rows:
        rid = row["id"]
        if rid not in text:
            continue
        for m in re.finditer(r"\{[^{}]*" + re.escape(json.dumps(rid)[1:-1]) + r"[^{}]*\}", text):
            obj = m.group(0)
            if any(f'"{k}"' in obj for k in ("label", "part", "answer", "generator", "form")):
                found.append(f"{rid}: {obj[:120]}")
    return found


def login(app, email: str):
    client = app.test_client()
    resp = client.post("/login", data={"email": email, "password": PASSWORD})
    assert resp.status_code in (302, 303), resp.get_data(as_text=True)[:300]
    return client


@dataclass
class World:
    app: object
    key: str
    users: dict[str, int] = field(default_factory=dict)
    requests: dict[str, int] = field(default_factory=dict)
    private_submission: int | None = None
    #: Team A (it owns the private submission, whose method is "secret method")
    team_a: int | None = None
    clients: dict = field(default_factory=dict)

    def client(self, persona: str):
        if persona not in self.clients:
            self.clients[persona] = (self.app.test_client() if persona == "anonymous"
                                     else login(self.app, f"{persona}@example.org"))
        return self.clients[persona]

    def token(self, persona: str, target: Target) -> str:
        with self.app.app_context():
            user = User(id=self.users.get(persona, 999_999))
            return downloads.make_token(user, target, secret_key=self.app.config["SECRET_KEY"])

    def link(self, persona: str, target: Target) -> str:
        return f"/data/download/{self.token(persona, target)}"


def sign(session, user, bench, **kw):
    return agreements.sign(session, user, bench, full_name=user.display_name,
                           affiliation="Example University", role="Researcher",
                           intended_use=INTENDED,
                           accepted=True, ip="127.0.0.1", user_agent="pytest", **kw)


@pytest.fixture
def world(app, imported) -> World:
    """SynCred imported; one user per persona; team A owns a private scored submission."""
    w = World(app=app, key=imported)
    db = app.extensions["lb_db"]
    with app.app_context(), db.scope() as s:
        bench = get_benchmark(s, imported)
        made = {}
        for p in PERSONAS[1:]:
            made[p] = accounts.register(s, email=f"{p}@example.org", display_name=p,
                                        password=PASSWORD, is_admin=(p == "admin"))
        team_a = teams.create_team(s, made["approved"], name="Team A")
        teams.create_team(s, made["other_team"], name="Team B")
        admin = made["admin"]
        for p in ("pending", "approved", "denied", "revoked", "expired", "other_team"):
            w.requests[p] = sign(s, made[p], bench).id
        reqs = {p: decisions.get_request(s, i) for p, i in w.requests.items()}
        for p in ("approved", "revoked", "expired", "other_team"):
            decisions.approve(s, admin, reqs[p])
        decisions.deny(s, admin, reqs["denied"], reason="affiliation could not be verified")
        decisions.revoke(s, admin, reqs["revoked"], reason="terms breached")
        reqs["expired"].expires_at = utcnow() - timedelta(minutes=1)
        sub = Submission(benchmark_id=bench.id, split="test", team_id=team_a.id,
                         user_id=made["approved"].id, method_name="secret method",
                         is_public=False, status="scored", file_path="uploads/none.jsonl")
        s.add(sub)
        s.flush()
        w.private_submission = sub.id
        w.team_a = team_a.id
        w.users = {p: u.id for p, u in made.items()}
    return w


def bench_of(session, key: str) -> Benchmark:
    return get_benchmark(session, key)
