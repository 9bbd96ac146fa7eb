"""The transparency log and its keys (issue 27): public and unauthenticated, like the boards.

* ``GET /api/v1/log/head[?size=N]``: the signed tree head (current, or of an earlier size);
* ``GET /api/v1/log/proof/inclusion?index=I[&size=N]``: audit path of entry I;
* ``GET /api/v1/log/proof/consistency?first=M[&second=N]``: the tree of N extends the one of M;
* ``GET /api/v1/log/entries?start=S[&count=C]``: the entries' data (each a signed receipt);
* ``GET /api/v1/log/entries/<I>``: one receipt, as the log holds it (a download);
* ``GET /api/v1/submissions/<id>/receipt[?index=I]``: a submission's latest receipt (or one of
  its earlier ones), ``404`` when it has none (private or never scored);
* ``GET /api/v1/keys`` and ``GET /.well-known/leaderboard-keys.json``: the published keys.
"""
from __future__ import annotations

import orjson
from flask import Blueprint, Response, current_app, jsonify, request

from leaderboard.server.db import get_session
from leaderboard.server.errors import NotFound, ServiceError
from leaderboard.server.transparency import issue, log
from leaderboard.server.web.api.base import bp
from leaderboard.server.web.inputs import int_param

wellknown = Blueprint("wellknown", __name__)
_BIG = 2**40


def _keyring():
    return current_app.extensions["lb_keyring"]


def _receipt_response(data: str, name: str) -> Response:
    return Response(data, mimetype="application/json", headers={
        "Content-Disposition": f'attachment; filename="{name}"',
        "Cache-Control": "public, max-age=31536000, immutable"})


@bp.get("/log/head")
def log_head():
    """The signed tree head; ``?size=N`` signs the root of the first N entries."""
    size = int_param("size", request.args.get("size"), default=None, low=0, high=_BIG)
    return jsonify(log.signed_head(get_session(), _keyring().signer(), size=size))


@bp.get("/log/proof/inclusion")
def log_inclusion():
    """Inclusion proof (RFC 9162 2.1.3) of entry ``?index=I`` in the tree of ``?size=N``
    entries (default: the current tree)."""
    index = int_param("index", request.args.get("index"), low=0, high=_BIG)
    if index is None:
        raise ServiceError("give ?index=<the entry's log index>")
    size = int_param("size", request.args.get("size"), default=None, low=1, high=_BIG)
    return jsonify(log.inclusion(get_session(), index, size))


@bp.get("/log/proof/consistency")
def log_consistency():
    """Consistency proof (RFC 9162 2.1.4): the tree of ``?second=N`` entries (default: the
    current tree) extends the tree of ``?first=M``."""
    first = int_param("first", request.args.get("first"), default=None, low=0, high=_BIG)
    if first is None:
        raise ServiceError("give ?first=<the tree size of the head you saved>")
    second = int_param("second", request.args.get("second"), default=None, low=0, high=_BIG)
    return jsonify(log.consistency(get_session(), first, second))


@bp.get("/log/entries")
def log_entries():
    """Entries ``?start=S`` onwards (``?count=C``, at most 1000): each a signed receipt's
    canonical JSON (``data``, the leaf's bytes)."""
    start = int_param("start", request.args.get("start"), default=0, low=0, high=_BIG)
    count = int_param("count", request.args.get("count"), default=log.MAX_ENTRIES_PAGE, low=1,
                      high=log.MAX_ENTRIES_PAGE)
    session = get_session()
    # orjson: a page is up to 1000 receipts (megabytes); the stdlib encoder is the slow part
    body = {"start": start, "tree_size": log.tree_size(session),
            "entries": log.entries(session, start, count)}
    return Response(orjson.dumps(body), mimetype="application/json")


@bp.get("/log/entries/<int:index>")
def log_entry(index: int):
    """One log entry (a signed receipt) as a file."""
    return _receipt_response(log.entry_data(get_session(), index), f"receipt-{index}.json")


@bp.get("/submissions/<int:submission_id>/receipt")
def submission_receipt(submission_id: int):
    """The submission's latest receipt (``?index=`` one of its earlier ones)."""
    session = get_session()
    indexes = issue.receipt_indexes(session, submission_id)
    if not indexes:
        raise NotFound(f"submission {submission_id} has no receipt (only public submissions "
                       "are logged, once scored)")
    index = int_param("index", request.args.get("index"), default=indexes[-1], low=0, high=_BIG)
    if index not in indexes:
        raise NotFound(f"log entry {index} is not a receipt of submission {submission_id}; "
                       f"its receipts: {indexes}")
    return _receipt_response(log.entry_data(session, index),
                             f"submission-{submission_id}-receipt-{index}.json")


@bp.get("/keys")
def keys():
    """Every key that ever signed a receipt or head, with its validity window."""
    return jsonify(_keyring().published())


@wellknown.get("/.well-known/leaderboard-keys.json")
def well_known_keys():
    return jsonify(_keyring().published())
