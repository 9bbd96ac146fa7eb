"""LOKI's own submission format through the server: aligned via the encrypted hidden labels."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from sqlalchemy import select

from leaderboard.server.models import Score

FIXTURES = Path(__file__).resolve().parents[1] / "conformance" / "fixtures" / "loki"
SOURCE = "image/true_or_false.json"


@pytest.fixture(scope="module")
def loki_pack(tmp_path_factory) -> Path:
    from leaderboard.builders import loki

    out = tmp_path_factory.mktemp("loki") / "pack"
    loki.build(FIXTURES, out, dev_fraction=0.5, seed=2)   # the folder holding data_json/
    return out


@pytest.fixture
def imported_loki(app, loki_pack):
    from leaderboard.server.services.benchmarks import import_pack

    with app.app_context(), app.extensions["lb_db"].scope() as s:
        import_pack(s, loki_pack, data_dir=app.config["DATA_DIR"],
                    label_keys=app.config["LABEL_KEYS"])
    return "loki"


def _post(client, token, doc: dict):
    form = {"benchmark": "loki", "split": "test", "method_name": "m1",
            "file": (io.BytesIO(json.dumps(doc, indent=4).encode()), "m_loki-image-tf_result.json")}
    return client.post("/api/v1/submissions", data=form, content_type="multipart/form-data",
                       headers={"Authorization": f"Bearer {token}"})


def test_the_authors_format_is_scored_by_file_and_index(client, auth, imported_loki, session):
    token = auth.member()
    raw = json.loads((FIXTURES / "data_json" / SOURCE).read_text(encoding="utf-8"))
    doc = {"model": "oracle", "source": SOURCE, "responses": [r["answer"] for r in raw]}
    resp = _post(client, token, doc)
    assert resp.status_code == 202, resp.json
    status = client.get(resp.json["status_url"]).json
    assert status["status"] == "scored", status
    acc = session.scalars(select(Score).where(
        Score.submission_id == resp.json["id"], Score.part == "all", Score.task == "judgment",
        Score.metric == "accuracy", Score.slice_key != "")).all()
    assert acc and all(s.value == 1.0 for s in acc)


def test_a_list_of_the_wrong_length_fails_with_the_reason(client, auth, imported_loki):
    token = auth.member()
    resp = _post(client, token, {"model": "m", "source": SOURCE, "responses": ["Yes"] * 3})
    status = client.get(resp.json["status_url"]).json
    assert status["status"] == "failed"
    assert "image/true_or_false.json has 22 records; this document has 3" in json.dumps(status)
