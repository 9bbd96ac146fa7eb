"""Error analysis of a team's own dev-split submission (issue 38): the page and the API, and
their refusals (another team's submission, a held-out split), on SQLite and PostgreSQL."""
import json

import numpy as np
import pytest

from leaderboard.core.metrics.calibration import expected_calibration_error
from leaderboard.core.metrics.confusion import confusion_matrix

BOB = "bob@example.org"


def _rows(path):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _upload(client, token, path, split, method, *, is_public=True):
    with open(path, "rb") as fh:
        resp = client.post("/api/v1/submissions", headers={"Authorization": f"Bearer {token}"},
                           data={"benchmark": "syncred", "split": split, "method_name": method,
                                 "is_public": "1" if is_public else "0",
                                 "file": (fh, f"{split}.jsonl")})
    assert resp.status_code == 202, resp.get_data(as_text=True)
    sid = resp.get_json()["id"]
    status = client.get(f"/api/v1/submissions/{sid}",
                        headers={"Authorization": f"Bearer {token}"}).get_json()["status"]
    assert status == "scored", status
    return sid


@pytest.fixture
def teams(app, client, auth, imported, baseline_files, demo_packs, tmp_path):
    """Ada's team: a dev and a test submission; Bob's team: a better public dev submission and
    a private one."""
    ada = auth.member()
    a_dev = _upload(client, ada, baseline_files["dev"], "dev", "ada-dev")
    a_test = _upload(client, ada, baseline_files["test"], "test", "ada-test")
    auth.logout()
    bob = auth.member(email=BOB, team="Team Bob")
    labels = {r["id"]: r["label"] for r in _rows(demo_packs["syncred"] / "splits/dev/labels.jsonl")}
    better = tmp_path / "better.jsonl"
    with open(better, "w", encoding="utf-8") as fh:
        for i, (item, label) in enumerate(sorted(labels.items())):
            right = i % 5 != 0  # a fifth wrong, but ranked well: 0.9 > 0.55 > 0.45 > 0.1
            score = {(True, True): 0.9, (True, False): 0.45, (False, True): 0.1,
                     (False, False): 0.55}[(label == "fake", right)]
            fh.write(json.dumps({"id": item, "score": score}) + "\n")
    b_dev = _upload(client, bob, better, "dev", "bob-dev")
    b_private = _upload(client, bob, better, "dev", "bob-private", is_public=False)
    auth.logout()
    auth.login()
    return {"ada": ada, "bob": bob, "a_dev": a_dev, "a_test": a_test, "b_dev": b_dev,
            "b_private": b_private, "labels": labels}


def _expected(baseline_files, labels):
    preds = {r["id"]: r for r in _rows(baseline_files["dev"])}
    ids = sorted(labels)
    truth = [labels[i] for i in ids]
    score = np.array([preds[i]["score"] for i in ids])
    decided = ["fake" if (preds[i].get("label") == "fake" if "label" in preds[i]
                          else preds[i]["score"] >= 0.5) else "real" for i in ids]
    return (confusion_matrix(truth, decided, labels=["fake", "real"]),
            expected_calibration_error(np.array(truth) == "fake", score))


def test_own_dev_submission_page_and_api(client, teams, baseline_files):
    conf, ece = _expected(baseline_files, teams["labels"])
    sid = teams["a_dev"]
    api = client.get(f"/api/v1/submissions/{sid}/error-analysis",
                     headers={"Authorization": f"Bearer {teams['ada']}"})
    assert api.status_code == 200, api.get_data(as_text=True)
    body = api.get_json()
    assert body["split"] == "dev" and [t["task"] for t in body["tasks"]] == ["detection"]
    t = body["tasks"][0]
    assert t["confusion"]["matrix"] == conf.matrix.tolist() and t["confusion"]["n"] == 92
    cal = t["calibration"]
    assert cal["ece"] == pytest.approx(ece) and cal["ci_low"] <= cal["ece"] <= cal["ci_high"]
    assert sum(b["n"] for b in cal["bins"]) == 92
    # most confident errors first; each is wrong, with its label and score
    errs = t["errors"]
    assert errs and t["errors_total"] == conf.matrix[0, 1] + conf.matrix[1, 0]
    conf_in_wrong = [e["confidence"] for e in errs]
    assert conf_in_wrong == sorted(conf_in_wrong, reverse=True)
    for e in errs:
        assert e["label"] == teams["labels"][e["id"]] and e["decision"] != e["label"]
    # the dev media through the download gate: a signed link that serves the image
    thumb = errs[0]["thumbnail"]
    assert thumb and "/data/download/" in thumb
    with client.get(thumb[thumb.index("/data/"):]) as img:
        assert img.status_code == 200 and img.data[:8] == b"\x89PNG\r\n\x1a\n"
    # slices beside the board's best (Bob's better submission)
    s = t["slices"]
    assert s["best"]["submission_id"] == teams["b_dev"] and not s["is_best"]
    assert s["rows"][0]["slice_key"] == "" and s["rows"][0]["best"] is not None
    assert all(r["difference"] is not None for r in s["rows"] if r["best"])

    page = client.get(f"/submissions/{sid}/errors")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert 'id="confusion-detection"' in html and "Expected calibration error" in html
    assert f"<strong>{ece:.3f}</strong>" in html
    assert "detection: reliability" in html and "ROC curve" in html
    assert errs[0]["id"] in html and 'class="thumb"' in html
    assert "bob-dev" in html  # the board's best, named beside the slices
    # the submission page links to it for the team
    assert 'id="error-analysis-link"' in client.get(f"/submissions/{sid}").get_data(as_text=True)


def test_refusals_through_the_web_and_the_api(client, auth, teams):
    ada = {"Authorization": f"Bearer {teams['ada']}"}
    # a held-out split: refused with a clear reason
    for resp in (client.get(f"/submissions/{teams['a_test']}/errors"),
                 client.get(f"/api/v1/submissions/{teams['a_test']}/error-analysis",
                            headers=ada)):
        assert resp.status_code == 403
        assert "dev-split submissions only" in resp.get_data(as_text=True)
    assert 'id="error-analysis-link"' not in client.get(
        f"/submissions/{teams['a_test']}").get_data(as_text=True)
    # another team's public submission: 403; its private one: 404 (not acknowledged)
    for sid, code in ((teams["b_dev"], 403), (teams["b_private"], 404)):
        assert client.get(f"/submissions/{sid}/errors").status_code == code
        api = client.get(f"/api/v1/submissions/{sid}/error-analysis", headers=ada)
        assert api.status_code == code and api.get_json()["error"]
    assert 'id="error-analysis-link"' not in client.get(
        f"/submissions/{teams['b_dev']}").get_data(as_text=True)
    # nobody logged in: the page refuses, the API asks for a token
    auth.logout()
    assert client.get(f"/submissions/{teams['a_dev']}/errors").status_code == 403
    assert client.get(f"/api/v1/submissions/{teams['a_dev']}/error-analysis").status_code == 401
