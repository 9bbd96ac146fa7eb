"""A predictions team opts in to the robustness track with predictions for the dev copies."""
from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

from sqlalchemy import select

from leaderboard.core.baselines import write_baseline
from leaderboard.core.packs import load_pack
from leaderboard.server.models.robustness import RobustnessBuild, RobustnessRun
from leaderboard.server.services import robustness as svc
from leaderboard.server.services.benchmarks import get_benchmark, import_pack
from tests.server.conftest import (  # noqa: F401
    app,
    app_config,
    auth,
    client,
    db_url,
    pg_url,
    session,
)


def _post(client, token, url, data: bytes, **form):  # noqa: F811
    return client.post(url, data={**form, "file": (io.BytesIO(data), "p.jsonl")},
                       headers={"Authorization": f"Bearer {token}"})


def test_dev_predictions_opt_in(app, client, auth, session, small_pack, tmp_path):  # noqa: F811
    from leaderboard.server.jobs.robustness import enqueue_build

    with app.app_context():
        with app.extensions["lb_db"].scope() as s:
            import_pack(s, small_pack, data_dir=app.config["DATA_DIR"],
                        label_keys=app.config["LABEL_KEYS"])
        with app.extensions["lb_db"].scope() as s:
            build_id = svc.request_build(s, get_benchmark(s, "syncred"), "dev").id
        enqueue_build(build_id)
    token = auth.member()
    pack = load_pack(small_pack)
    clean = {}
    for split in ("dev", "test"):
        write_baseline(pack, split, "random", tmp_path / f"{split}.jsonl", seed=1)
        resp = _post(client, token, "/api/v1/submissions", (tmp_path / f"{split}.jsonl")
                     .read_bytes(), benchmark="syncred", split=split, method_name=split)
        assert resp.status_code == 202, resp.json
        clean[split] = resp.json["id"]
    build = session.scalar(select(RobustnessBuild))
    copies = load_pack(Path(app.config["DATA_DIR"]) / build.path)
    rows = []
    for split in copies.splits[1:]:
        write_baseline(copies, split, "all-fake", tmp_path / "c.jsonl")
        rows += [{**json.loads(x), "condition": split}
                 for x in (tmp_path / "c.jsonl").read_text().splitlines()]
    body = "".join(json.dumps(r) + "\n" for r in rows).encode()
    url = f"/api/v1/submissions/{clean['dev']}/robustness"

    bad = _post(client, token, url, b'{"id": "x", "condition": "dev-image-sepia-9"}\nnope\n')
    assert bad.status_code == 400
    assert [(p["line"], p["field"]) for p in bad.json["problems"]] == [(1, "condition"),
                                                                         (2, None)]
    refused = _post(client, token, f"/api/v1/submissions/{clean['test']}/robustness", body)
    assert refused.status_code == 400 and "dev split only" in refused.json["message"]
    auth.logout()
    other = auth.member(email="eve@example.org", team="Team Eve")
    assert _post(client, other, url, body).status_code == 403

    resp = _post(client, token, url, gzip.compress(body))
    assert resp.status_code == 202, resp.json
    assert resp.json["robustness"]["run"]["status"] == "scored"
    session.expire_all()
    run = session.scalar(select(RobustnessRun).where(RobustnessRun.submission_id == clean["dev"]))
    assert run.status == "scored" and run.conditions == 4
    heads = {json.dumps(r.slice_json, sort_keys=True): r.value
             for r in svc.records_of(session, clean["dev"]) if r.metric == "tpr"}
    # all-fake predictions: every fake is caught on every condition
    assert heads['{"degradation": "jpeg", "level": "5", "modality": "image"}'] == 1.0
