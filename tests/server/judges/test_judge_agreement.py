"""Agreement between the offline judges and an OpenAI-compatible judge on stored TriDF responses
(a real local HTTP server speaking chat-completions), the admin page that sends it nothing, and
re-judging after the benchmark's judge changed version (a superseded identity stays buildable)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from leaderboard.core.baselines import baseline_rows
from leaderboard.core.packs import load_pack
from leaderboard.server.cli import server
from leaderboard.server.models import Score, Submission
from leaderboard.server.models.judges import JudgeOutput
from leaderboard.server.services import accounts
from leaderboard.server.services.scoring_service import clear_caches
from leaderboard.server.web import create_app
from tests.judges.test_judges_openai import ChatServer, keyword_mapper, ok
from tests.server.judges.conftest import import_key, submit, write_rows
from tests.server.conftest import make_config

RESPONSES = [
    "Likely Manipulated. The face is blurry and there is a constant hiss in the audio.",
    "The shadows point in different directions; no blur anywhere.",
    "Likely Authentic. Lighting is consistent and the text is legible.",
    "The hand has six fingers and the lips are out of sync with the speech.",
    "Colours are oversaturated and the background is warped.",
]


@pytest.fixture
def chat():
    s = ChatServer()
    s.script = [ok(keyword_mapper)]
    yield s
    s.close()


def _app(sqlite_url, tmp_path, **extra):
    clear_caches()
    from leaderboard.server.services import judging
    judging._built.clear()
    return create_app(make_config(sqlite_url, tmp_path, DEFAULT_JUDGE="rules", **extra))


def _tridf_text_submission(app, packs, tmp_path) -> tuple[str, int]:
    key = import_key(app, packs["tridf"])
    pack = load_pack(packs["tridf"])
    kinds = {t.key: t.kind for t in pack.tasks}
    items = pack.items("dev")
    task_of = dict(zip(items.ids.tolist(), items.decoded("task").tolist(), strict=True))
    rows = []
    for n, row in enumerate(baseline_rows(pack, "dev", "random", seed=3)):
        if kinds[task_of[row["id"]]] == "artifacts":
            row.pop("artifacts", None)
            row["response"] = RESPONSES[n % len(RESPONSES)]
        rows.append(row)
    write_rows(tmp_path / "text.jsonl", rows)
    return key, submit(app, key, "dev", tmp_path / "text.jsonl")


def test_agreement_command_fills_the_cache_and_reports_kappa(sqlite_url, tmp_path, packs,
                                                            chat):
    app = _app(sqlite_url, tmp_path, JUDGE_OPENAI_BASE_URL=chat.url,
               JUDGE_OPENAI_MODEL="judge-model")
    try:
        key, _ = _tridf_text_submission(app, packs, tmp_path)
        runner = CliRunner()
        with app.app_context():
            dry = runner.invoke(server, ["judge-agreement", "--benchmark", key, "--judges",
                                         "rules"])
            assert dry.exit_code == 0, dry.output
            assert "0 of 15 stored responses mapped by the reference openai:judge-model@1" in \
                dry.output and "--fill" in dry.output
            assert chat.requests == []  # nothing is sent without --fill
            res = runner.invoke(server, ["judge-agreement", "--benchmark", key, "--judges",
                                         "rules", "--judges", "rules@1", "--fill"])
            assert res.exit_code == 0, res.output
        sent = len(chat.requests)
        assert sent == 15  # one request per distinct (response, modality's candidates)
        assert "15 of 15 stored responses" in res.output
        assert "rules@3 vs openai:judge-model@1: kappa=" in res.output
        assert "rules@1 vs openai:judge-model@1" in res.output and "blurriness" in res.output
        with app.app_context():
            out = runner.invoke(server, ["judge-agreement", "--benchmark", key, "--judges",
                                         "rules", "--fill", "--json"])
        assert out.exit_code == 0 and len(chat.requests) == sent  # answers came from the cache
        import json
        rep = json.loads(out.output)
        assert rep["judged_by_reference"] == rep["responses"] == 15
        overall = rep["judges"]["rules@3"]["overall"]
        assert overall["n"] > 0 and -1.0 <= overall["kappa"] <= 1.0
        assert set(rep["judges"]["rules@3"]["per_artifact"]) <= {
            "blurriness", "blockiness", "noise", "banding", "color_inconsistency",
            "blending_artifacts", "lighting_inconsistency", "unnatural_texture",
            "reflection_inconsistency", "shadow_inconsistency", "spatial_incoherence",
            "unrealistic_background", "anatomical_inconsistency", "unnatural_expressions",
            "unnatural_gaze", "object_integrity_flaws", "unrecognizable_text", "temporal_artifacts",
            "flicker", "unnatural_movement", "unnatural_prosody", "audio_visual_desync",
            "emotional_contradiction", "clipping", "hiss", "buzz", "pops"}
        with app.app_context(), app.extensions["lb_db"].scope() as s:
            assert s.scalar(select(func.count(JudgeOutput.id)).where(
                JudgeOutput.judge == "openai:judge-model@1")) == 15
            accounts.register(s, email="root@example.org", display_name="root",
                              password="correct horse battery", is_admin=True)
        client = app.test_client()
        client.post("/login", data={"email": "root@example.org",
                                    "password": "correct horse battery"})
        page = client.get(f"/admin/benchmarks/{key}/judge-agreement?limit=50")
        assert page.status_code == 200
        html = page.get_data(as_text=True)
        assert "openai:judge-model@1" in html and "rules@3" in html and "kappa" in html
        assert len(chat.requests) == sent  # the page sends nothing to the LLM judge
        as_json = client.get(f"/admin/benchmarks/{key}/judge-agreement?format=json").get_json()
        assert as_json["judged_by_reference"] == 15 and "local-minilm@3" in as_json["judges"]
        listing = client.get("/admin/benchmarks").get_data(as_text=True)
        assert f"/admin/benchmarks/{key}/judge-agreement" in listing
    finally:
        app.extensions["lb_db"].dispose()


def test_agreement_page_without_an_llm_judge_says_how_to_configure_one(sqlite_url, tmp_path,
                                                                      packs):
    app = _app(sqlite_url, tmp_path)
    try:
        key = import_key(app, packs["tridf"])
        with app.app_context(), app.extensions["lb_db"].scope() as s:
            accounts.register(s, email="root@example.org", display_name="root",
                              password="correct horse battery", is_admin=True)
        client = app.test_client()
        client.post("/login", data={"email": "root@example.org",
                                    "password": "correct horse battery"})
        html = client.get(f"/admin/benchmarks/{key}/judge-agreement").get_data(as_text=True)
        assert "JUDGE_OPENAI_BASE_URL" in html
        assert client.get(f"/admin/benchmarks/{key}/judge-agreement?limit=x").status_code == 303
        runner = CliRunner()
        with app.app_context():
            res = runner.invoke(server, ["judge-agreement", "--benchmark", key])
        assert res.exit_code == 2 and "JUDGE_OPENAI_BASE_URL" in res.output
        with app.app_context():
            res = runner.invoke(server, ["judge-agreement", "--benchmark", "nope"])
        assert res.exit_code == 2 and "unknown benchmark 'nope'" in res.output
    finally:
        app.extensions["lb_db"].dispose()


def test_rejudge_after_the_default_judge_changed_version(sqlite_url, tmp_path, packs):
    """Records made by rules@3 leave a board pinned to rules@1 until `rejudge` re-judges them
    with the superseded (still buildable) identity."""
    app = _app(sqlite_url, tmp_path)
    try:
        key, sid = _tridf_text_submission(app, packs, tmp_path)
        db = app.extensions["lb_db"]
        with db.scope() as s:
            assert set(s.scalars(select(Score.judge).where(
                Score.submission_id == sid, Score.metric == "f05"))) == {"rules@3"}
        app.config["DEFAULT_JUDGE"] = "rules@1"
        runner = CliRunner()
        with app.app_context():
            res = runner.invoke(server, ["rejudge", "--benchmark", key])
            assert res.exit_code == 0, res.output
            assert f"{key}: 1 submission(s) queued for re-judging" in res.output
            again = runner.invoke(server, ["rejudge", "--benchmark", key])
            assert f"{key}: 0 submission(s) queued" in again.output  # nothing stale any more
            everything = runner.invoke(server, ["rejudge", "--all"])
            assert f"{key}: 1 submission(s) queued" in everything.output
            bad = runner.invoke(server, ["rejudge", "--benchmark", "nope"])
            assert bad.exit_code == 2 and "unknown benchmark(s) ['nope']" in bad.output
        with db.scope() as s:
            sub = s.get(Submission, sid)
            assert sub.notes_json["judging"] == {"state": "done", "judge": "rules@1",
                                                 "reason": None}
            assert set(s.scalars(select(Score.judge).where(
                Score.submission_id == sid, Score.metric == "f05"))) == {"rules@1"}
    finally:
        app.extensions["lb_db"].dispose()


def test_benchmark_page_shows_the_offline_judges_measured_quality(sqlite_url, tmp_path, packs):
    app = _app(sqlite_url, tmp_path)
    try:
        tridf, loki = import_key(app, packs["tridf"]), import_key(app, packs["loki"])
        client = app.test_client()
        html = client.get(f"/benchmarks/{tridf}").get_data(as_text=True)
        assert "How free-text answers are judged" in html
        assert "<td>rules@3</td><td>overall</td>" in html and "local-minilm@3" in html
        assert "How free-text answers are judged" not in client.get(
            f"/benchmarks/{loki}").get_data(as_text=True)  # LOKI rates, it does not map
    finally:
        app.extensions["lb_db"].dispose()


def test_rejudge_moves_records_to_the_hybrid_judge(sqlite_url, tmp_path, packs):
    """A server whose default judge becomes `hybrid-minilm` (issue 28) re-judges the records
    `rules@3` made; the packaged MiniLM loads once per process."""
    app = _app(sqlite_url, tmp_path)
    try:
        key, sid = _tridf_text_submission(app, packs, tmp_path)
        app.config["DEFAULT_JUDGE"] = "hybrid-minilm"
        with app.app_context():
            res = CliRunner().invoke(server, ["rejudge", "--benchmark", key])
        assert res.exit_code == 0 and f"{key}: 1 submission(s) queued" in res.output, res.output
        with app.extensions["lb_db"].scope() as s:
            assert s.get(Submission, sid).notes_json["judging"]["judge"] == "hybrid-minilm@1"
            assert set(s.scalars(select(Score.judge).where(
                Score.submission_id == sid, Score.metric == "f05"))) == {"hybrid-minilm@1"}
    finally:
        app.extensions["lb_db"].dispose()
