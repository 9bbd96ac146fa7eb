"""Fixtures for the transparency tests: the server-wide app fixtures (SQLite and PostgreSQL),
and helpers that submit predictions through the API (scored inline) and admin actions."""
from __future__ import annotations

import io

import pytest

from tests.server.conftest import (  # noqa: F401  (fixtures)
    LABEL_KEY,
    AuthActions,
    _empty_pg,
    app,
    app_config,
    auth,
    baseline_files,
    client,
    db_url,
    demo_packs,
    imported,
    live_server,
    make_config,
    pg_url,
    session,
    sqlite_url,
)


def post_predictions(client, token, data: bytes, *, split="dev", method="m1", **fields):
    form = {"benchmark": "syncred", "split": split, "method_name": method, **fields,
            "file": (io.BytesIO(data), "preds.jsonl")}
    resp = client.post("/api/v1/submissions", data=form,
                       headers={"Authorization": f"Bearer {token}"},
                       content_type="multipart/form-data")
    assert resp.status_code == 202, resp.get_json()
    return resp.get_json()["id"]


@pytest.fixture
def scored(client, auth, imported, baseline_files):
    """A team that submitted the random baseline on dev and on test (both scored): (token,
    dev submission id, test submission id)."""
    token = auth.member()
    dev = post_predictions(client, token, baseline_files["dev"].read_bytes(), split="dev")
    test = post_predictions(client, token, baseline_files["test"].read_bytes(), split="test",
                            method="m2")
    return token, dev, test


def make_admin(app, email="root@example.org"):
    """An admin user row (for calling the admin service functions directly)."""
    from sqlalchemy import select

    from leaderboard.server.models import User
    from leaderboard.server.security import hash_password

    db = app.extensions["lb_db"]
    with db.scope() as s:
        found = s.scalar(select(User.id).where(User.email == email))
        if found is not None:
            return found
        user = User(email=email, display_name="root", password_hash=hash_password("x" * 12),
                    is_admin=True)
        s.add(user)
        s.flush()
        return user.id
