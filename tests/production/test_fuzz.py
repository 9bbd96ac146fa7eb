"""Hostile input over HTTP: every API operation from the OpenAPI document (schemathesis), and the
upload endpoint with malformed files (hypothesis). The property in both: zero server errors.

The app runs in-process (WSGI) on PostgreSQL (a private server, schema built by the migrations),
which refuses what SQLite would store (ids past ``integer``, NUL characters), with jobs inline, so
an accepted upload is scored inside the request: the fuzzing reaches the predictions parser and
the scorer, not only the views. Rate limits are off here (their 429s would only cut the number of
cases); the daily quota is high.
"""
from __future__ import annotations

import gzip
import io
import uuid

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.datastructures import FileStorage
from werkzeug.test import encode_multipart

from tests.production.conftest import LABEL_KEY, add_member, new_database

MAX_UPLOAD_MB = 2


@pytest.fixture(scope="module")
def fuzz_app(tmp_path_factory, syncred_pack, predictions, pg):
    from leaderboard.server.services.benchmarks import import_pack
    from leaderboard.server.web import create_app

    tmp = tmp_path_factory.mktemp("fuzz")
    url = new_database(pg)
    app = create_app({"TESTING": True, "DATABASE_URL": url, "DATA_DIR": str(tmp / "data"),
                      "SECRET_KEY": uuid.uuid4().hex, "LABEL_KEYS": [LABEL_KEY],
                      "REDIS_URL": None, "COOKIE_SECURE": "0", "RATELIMIT_ENABLED": False,
                      "DAILY_QUOTA": 100000, "MAX_UPLOAD_MB": MAX_UPLOAD_MB})
    with app.app_context(), app.extensions["lb_db"].scope() as s:
        import_pack(s, syncred_pack, data_dir=app.config["DATA_DIR"],
                    label_keys=app.config["LABEL_KEYS"])
    app.config["FUZZ_TOKEN"] = add_member(app)
    client = app.test_client()
    with predictions["test"].open("rb") as fh:  # one scored submission for the status paths
        resp = client.post("/api/v1/submissions",
                           headers={"Authorization": f"Bearer {app.config['FUZZ_TOKEN']}"},
                           data={"benchmark": "syncred", "split": "test", "method_name": "seed",
                                 "file": (fh, "p.jsonl")})
    assert resp.status_code == 202, resp.get_data(as_text=True)
    yield app
    app.extensions["lb_db"].dispose()


@pytest.fixture(scope="module")
def api_schema(fuzz_app):
    return schemathesis.openapi.from_wsgi("/api/v1/openapi.json", fuzz_app)


schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_api_operations_never_answer_5xx(case, fuzz_app):
    for headers in ({"Authorization": f"Bearer {fuzz_app.config['FUZZ_TOKEN']}"}, {}):
        response = case.call(headers=headers)
        assert response.status_code < 500, (case.method, case.formatted_path,
                                            response.status_code, response.text[:300])
        if case.method.upper() in ("OPTIONS", "HEAD"):
            continue  # Flask's automatic answers: empty bodies
        ctype = {k.lower(): v for k, v in response.headers.items()}.get("content-type")
        ctype = ctype[0] if isinstance(ctype, list) else ctype
        assert ctype.split(";")[0] in ("application/json", "text/csv"), (
            case.method, case.formatted_path, case.query, response.status_code, ctype,
            response.text[:200])


def _gzip_bomb(n_bytes: int) -> bytes:
    """Highly compressible: ``n_bytes`` of the same line, gzipped (about 1000:1)."""
    buf = io.BytesIO()
    line = b'{"id": "x", "score": 0.5}\n'
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=9) as gz:
        for _ in range(n_bytes // (1 << 20)):
            gz.write(line * ((1 << 20) // len(line)))
    return buf.getvalue()


GZIP_BOMB = _gzip_bomb(300 << 20)  # 300 MB of JSONL in a few hundred KB

hostile_files = st.one_of(
    st.binary(max_size=4096),
    st.binary(max_size=2048).map(gzip.compress),
    st.just(GZIP_BOMB),
    st.integers(min_value=1, max_value=3).map(lambda n: b'{"id": "' + b"a" * (n << 20) + b'"}\n'),
    st.text(max_size=2000).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.lists(st.dictionaries(st.sampled_from(["id", "score", "label", "task", "x"]),
                             st.one_of(st.none(), st.floats(allow_nan=True), st.text(max_size=20),
                                       st.integers(), st.booleans()), max_size=5),
             max_size=30).map(lambda rows: "\n".join(map(repr, rows)).encode()),
    st.just(b"\x1f\x8b\x08\x00truncated gzip"),
    st.just(b"x" * ((MAX_UPLOAD_MB << 20) + 10)),  # over the upload limit
)
content_types = st.sampled_from([None, "application/json", "application/gzip", "text/plain",
                                 "image/png", "application/x-tar", "multipart/mixed"])
filenames = st.sampled_from(["p.jsonl", "p.jsonl.gz", "p.gz", "p.tar", "../../etc/passwd",
                             "p\x00.jsonl", "", "ü.jsonl"])


@pytest.mark.slow
@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(body=hostile_files, ctype=content_types, name=filenames,
       split=st.sampled_from(["test", "dev", "nope", ""]))
def test_upload_malformed_files_never_5xx(fuzz_app, body, ctype, name, split):
    upload = FileStorage(io.BytesIO(body), filename=name, content_type=ctype)
    # encoded in memory: the test client's own spooled encoder leaves its temp file unclosed
    boundary, payload = encode_multipart({"benchmark": "syncred", "split": split,
                                          "method_name": "fuzz", "file": upload})
    resp = fuzz_app.test_client().post(
        "/api/v1/submissions", data=payload,
        content_type=f"multipart/form-data; boundary={boundary}",
        headers={"Authorization": f"Bearer {fuzz_app.config['FUZZ_TOKEN']}"})
    assert resp.status_code < 500, resp.get_data(as_text=True)[:300]
    assert resp.is_json
    if resp.status_code == 202:  # accepted: scored inline, so its final state is known
        assert resp.get_json()["status"] in ("scored", "failed")


@pytest.mark.slow
@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(raw=st.binary(max_size=4096),
       ctype=st.sampled_from(["application/json", "multipart/form-data",
                              "multipart/form-data; boundary=xyz",
                              "application/x-www-form-urlencoded", "text/plain"]))
def test_upload_raw_bodies_never_5xx(fuzz_app, raw, ctype):
    """Bodies that are not valid multipart at all, under every content type."""
    resp = fuzz_app.test_client().post(
        "/api/v1/submissions", data=raw, content_type=ctype,
        headers={"Authorization": f"Bearer {fuzz_app.config['FUZZ_TOKEN']}"})
    assert resp.status_code < 500, resp.get_data(as_text=True)[:300]
