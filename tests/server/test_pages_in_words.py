"""The small things a person notices (issue 21, item 8): the 404 page says what was not found in
words (the JSON answer keeps its message for scripts); the API reference shows its version and
prints ``Bearer <token>`` (Swagger renders descriptions as Markdown, which drops ``<token>``
unless it is in a code span)."""
from __future__ import annotations

import html

import pytest

from leaderboard.server.web.errors import in_words


@pytest.mark.parametrize("message, words", [
    ("no benchmark 'nope'; known: []", "There is no benchmark “nope”. The ones there are: none."),
    ("no benchmark 'x'; known: ['loki', 'syncred', 'tridf']",
     "There is no benchmark “x”. The ones there are: “loki”, “syncred” and “tridf”."),
    ("benchmark 'loki' has no task 'z'; tasks: ['judgment']",
     "Benchmark “loki” has no task “z”. Its tasks are: “judgment”."),
    ("no submission 12", "There is no submission 12."),
    ("", ""),
])
def test_in_words(message, words):
    assert in_words(message) == words


def test_404_pages_speak_words(client, imported):
    page = html.unescape(client.get("/benchmarks/nope").get_data(as_text=True))
    assert "There is no benchmark “nope”. The ones there are: “syncred”." in page
    assert "['" not in page and "Not found" in page
    assert client.get("/api/v1/benchmarks/nope").json["message"].startswith(
        "no benchmark 'nope'")  # scripts keep the plain message
    unknown = html.unescape(client.get("/no/such/page").get_data(as_text=True))
    assert "There is no page at /no/such/page." in unknown
    assert 'href="/challenges/"' in unknown


def test_api_reference_version_and_bearer(client):
    doc = client.get("/api/v1/openapi.json").json
    assert doc["info"]["version"].startswith("1 (server ")
    assert "`Authorization: Bearer <token>`" in doc["info"]["description"]
    texts = []

    def walk(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "description" and isinstance(v, str):
                    texts.append(v)
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(doc)
    import re
    bare = [t for t in texts if re.search(r"(?<![`\w])<\w+>(?![`\w])", t)]
    assert bare == []
    page = client.get("/api/docs/").get_data(as_text=True)
    assert 'id="api-version"' in page and "API version 1" in page
