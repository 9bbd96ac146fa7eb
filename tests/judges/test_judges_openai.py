"""The OpenAI-compatible judge against a real local HTTP server speaking chat-completions."""
from __future__ import annotations

import json
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from leaderboard.judges import ExplanationCase, JudgeError, get_judge

AUDIO = ["clipping", "hiss", "buzz", "pops", "unnatural_prosody", "emotional_contradiction"]


class ChatServer:
    """Serves POST /v1/chat/completions. `script` is a list of replies consumed in order (the last
    one repeats); a reply is a callable taking the request body and returning
    (status, content-or-raw-bytes, delay_s, headers)."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.script: list = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server API)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                    step = server.script.pop(0) if len(server.script) > 1 else server.script[0]
                status, content, delay, headers = step(body)
                time.sleep(delay)
                if isinstance(content, bytes):
                    payload = content
                else:
                    payload = json.dumps({"id": "x", "object": "chat.completion", "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": "stop"}]}).encode()
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,),
                                       daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


def ok(content_fn):
    return lambda body: (200, content_fn(body), 0.0, {})


def analysis_of(body) -> str:
    user = body["messages"][1]["content"]
    return re.search(r"<<<ANALYSIS\n(.*)\nANALYSIS>>>", user, re.S).group(1)


def keys_of(body) -> list[str]:
    user = body["messages"][1]["content"]
    return user.rsplit("exactly these keys: ", 1)[1].strip().split(", ")


def keyword_mapper(body) -> str:
    """A deterministic stand-in model: an artifact is true when its key's first word occurs."""
    text = analysis_of(body).lower()
    return json.dumps({k: k.split("_")[0] in text for k in keys_of(body)})


@pytest.fixture
def server():
    s = ChatServer()
    yield s
    s.close()


@pytest.fixture
def make_judge(server):
    judges = []

    def make(**config):
        config = {"base_url": server.url, "model": "judge-model", "api_key": "sk-test",
                  "timeout_s": 2.0, "max_retries": 2, "backoff_s": 0.01, **config}
        judge = get_judge("openai", **config)
        judges.append(judge)
        return judge

    yield make
    for judge in judges:
        judge.close()


def test_maps_artifacts_and_sends_the_protocol(server, make_judge):
    server.script = [ok(keyword_mapper)]
    judge = make_judge()
    assert judge.identity == "openai:judge-model@1"
    got = judge.map_artifacts(["A constant hiss and a hum.", "Clean audio."], candidates=AUDIO)
    assert got == [frozenset({"hiss"}), frozenset()]
    body = server.requests[0]
    assert body["model"] == "judge-model" and body["temperature"] == 0
    assert body["response_format"] == {"type": "json_object"}
    assert keys_of(body) == AUDIO  # only the candidates, in taxonomy order
    assert "Hiss - High-frequency static noise" in body["messages"][1]["content"]
    assert server.headers[0]["Authorization"] == "Bearer sk-test"


def test_concurrent_requests_keep_input_order(server, make_judge):
    server.script = [ok(keyword_mapper)]
    responses = [f"item {i}: " + ("hiss" if i % 2 else "buzz") for i in range(12)]
    got = make_judge(max_workers=4).map_artifacts(responses, candidates=AUDIO)
    assert got == [frozenset({"hiss" if i % 2 else "buzz"}) for i in range(12)]
    assert len(server.requests) == 12


def test_500_then_success_is_retried(server, make_judge):
    server.script = [lambda b: (500, b'{"error": "boom"}', 0.0, {}),
                     lambda b: (429, b'{"error": "slow down"}', 0.0, {"Retry-After": "0"}),
                     ok(keyword_mapper)]
    assert make_judge().map_artifacts(["loud hiss"], candidates=AUDIO) == [frozenset({"hiss"})]
    assert len(server.requests) == 3


def test_malformed_json_then_success_is_retried(server, make_judge):
    server.script = [ok(lambda b: "{not json"), ok(lambda b: '{"hiss": true}'),
                     ok(keyword_mapper)]
    # The first reply is not JSON, the second misses keys: both are retried.
    assert make_judge().map_artifacts(["hiss"], candidates=AUDIO) == [frozenset({"hiss"})]
    assert len(server.requests) == 3


def test_malformed_json_after_retries_is_a_clear_error(server, make_judge):
    server.script = [ok(lambda b: "Sure! Here is the JSON you asked for")]
    with pytest.raises(JudgeError, match=r"failed after 3 attempt\(s\): malformed JSON"):
        make_judge().map_artifacts(["hiss"], candidates=AUDIO)
    assert len(server.requests) == 3


def test_slow_reply_times_out(server, make_judge):
    server.script = [lambda b: (200, "{}", 1.0, {})]
    started = time.monotonic()
    with pytest.raises(JudgeError, match=r"no reply within 0.2 s"):
        make_judge(timeout_s=0.2, max_retries=1).map_artifacts(["hiss"], candidates=AUDIO)
    assert time.monotonic() - started < 1.5


def test_client_error_is_not_retried(server, make_judge):
    server.script = [lambda b: (401, b'{"error": "bad key"}', 0.0, {})]
    with pytest.raises(JudgeError, match=r"answered HTTP 401: .*bad key"):
        make_judge().map_artifacts(["hiss"])
    assert len(server.requests) == 1


def test_connection_refused_is_a_clear_error(make_judge):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    judge = make_judge(base_url=f"http://127.0.0.1:{port}/v1", max_retries=1)
    with pytest.raises(JudgeError, match=r"failed after 2 attempt\(s\): cannot connect"):
        judge.map_artifacts(["hiss"])


IMAGE_CASE = dict(item_id="img-1", modality="image", response="The hand has six fingers.",
                  reference={"global": [{"desc": "distorted hand"}],
                             "regional": [{"region": [10, 20, 30, 40], "desc": "six fingers"}]})


def test_rates_explanations_on_the_rubric(server, make_judge):
    scores = {"overall": 4, "completeness": 5, "correctness": 3, "plausibility": 5}
    server.script = [ok(lambda b: json.dumps({"refused": False, "scores": scores,
                                              "reason": "found the hand"}))]
    [rating] = make_judge().rate_explanations([ExplanationCase(**IMAGE_CASE)])
    assert dict(rating.scores) == scores and rating.total == pytest.approx(85.0)
    assert rating.rationale == "found the hand" and not rating.refused
    user = server.requests[0]["messages"][1]["content"]
    assert "- regional (region [10, 20, 30, 40]): six fingers" in user
    assert "<<<RESPONSE\nThe hand has six fingers.\nRESPONSE>>>" in user


def test_refusal_verdict_scores_zero(server, make_judge):
    server.script = [ok(lambda b: json.dumps({"refused": True, "scores": {}, "reason": "real"}))]
    [rating] = make_judge().rate_explanations([ExplanationCase(**IMAGE_CASE)])
    assert rating.refused and rating.total == 0.0 and set(rating.scores.values()) == {0.0}


def test_out_of_range_score_is_malformed(server, make_judge):
    bad = {"overall": 7, "completeness": 5, "correctness": 3, "plausibility": 5}
    server.script = [ok(lambda b: json.dumps({"refused": False, "scores": bad}))]
    with pytest.raises(JudgeError, match=r"'overall' must be in \[0, 5\], got 7"):
        make_judge(max_retries=0).rate_explanations([ExplanationCase(**IMAGE_CASE)])


@pytest.mark.parametrize("config, message", [
    ({"base_url": "localhost:8000"}, "base_url must be an http"),
    ({"model": ""}, "model must be a non-empty name"),
    ({"max_retries": -1}, "max_retries must be an integer >= 0"),
    ({"timeout_s": 0}, "timeout_s must be > 0"),
    ({"bogus": 1}, "bad configuration for judge 'openai'"),
])
def test_bad_config_is_rejected(config, message):
    full = {"base_url": "http://127.0.0.1:1/v1", "model": "m", **config}
    with pytest.raises(JudgeError, match=message):
        get_judge("openai", **full)
