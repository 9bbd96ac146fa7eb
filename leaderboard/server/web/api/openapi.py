"""The OpenAPI 3.1 document of ``/api/v1``, built from the app's URL map.

Every ``/api/v1`` rule of the app appears: operations described here in full; any other one
(a route added later) with its view's docstring and path parameters, so the document can never
silently miss an endpoint (a test checks that every rule is present).
"""
from __future__ import annotations

import re
import tomllib
from importlib import metadata

from flask import Flask

from leaderboard.server.config import REPO_ROOT
from leaderboard.server.web.inputs import DB_INT_MAX

_CONVERTER = re.compile(r"<(?:(\w+):)?(\w+)>")
# <int:...> is bounded to the database's ids (leaderboard.server.web.inputs.IdConverter)
_TYPES = {"int": {"type": "integer", "minimum": 0, "maximum": DB_INT_MAX},
          "float": {"type": "number"}}


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict, description: str = "OK") -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


_NULLABLE_NUM = {"type": ["number", "null"]}
_ERRORS = {"400": _json(_ref("Error"), "Bad request (the message names the bad value)"),
           "404": _json(_ref("Error"), "Not found")}
_AUTH_ERRORS = {**_ERRORS, "401": _json(_ref("Error"), "Missing or unknown token")}
_BOARD_QUERY = [
    {"name": "modality", "in": "query", "schema": {"type": "string"},
     "description": "one of the task's modalities"},
    {"name": "slice", "in": "query", "schema": {"type": "string"},
     "description": "slice key, e.g. 'subset=COCO_AI' (axis=value;axis=value)"},
    {"name": "mode", "in": "query", "schema": {"enum": ["team", "all"], "default": "team"},
     "description": "one row per team (selected or best submission) or every submission"}]
#: the board tools (issue 38): the board page takes the same names
_TOOLS = [
    {"name": "q", "in": "query", "schema": {"type": "string", "maxLength": 200},
     "description": "team or method name contains this (case-insensitive)"},
    {"name": "baselines", "in": "query", "schema": {"enum": ["0", "1"], "default": "1"},
     "description": "0: hide the baseline rows"},
    {"name": "code", "in": "query", "schema": {"enum": ["0", "1"], "default": "0"},
     "description": "1: only submissions that give a code link"},
    {"name": "from", "in": "query", "schema": {"type": "string", "format": "date"},
     "description": "submitted on or after this date (YYYY-MM-DD, UTC)"},
    {"name": "to", "in": "query", "schema": {"type": "string", "format": "date"},
     "description": "submitted on or before this date (YYYY-MM-DD, UTC)"},
    {"name": "sort", "in": "query", "schema": {"type": "string"},
     "description": "a metric column of the board (default: its primary)"},
    {"name": "dir", "in": "query", "schema": {"enum": ["asc", "desc"]},
     "description": "default: the metric's better direction. Filtered or re-sorted rows keep "
                    "the board's ranks and rank intervals"}]
_PAGING = [
    {"name": "page", "in": "query", "schema": {"type": "integer", "minimum": 1, "default": 1}},
    {"name": "per_page", "in": "query",
     "schema": {"type": "integer", "minimum": 1, "maximum": 500, "default": 50}}]

_SPLIT = {"name": "split", "in": "query", "schema": {"type": "string", "default": "test"}}

#: (endpoint, method) -> operation
OPERATIONS: dict[tuple[str, str], dict] = {
    ("api.list_benchmarks", "GET"): {
        "summary": "List benchmarks", "tags": ["boards"],
        "responses": {"200": _json({"type": "object", "properties": {
            "benchmarks": {"type": "array", "items": _ref("Benchmark")}}})}},
    ("api.get_benchmark", "GET"): {
        "summary": "One benchmark and the URLs of its boards", "tags": ["boards"],
        "responses": {"200": _json(_ref("Benchmark")), **_ERRORS}},
    ("api.board_json", "GET"): {
        "summary": "One page of a board (benchmark x task x split)", "tags": ["boards"],
        "description": "Rows are ranked by the task's headline metric, then its secondary "
                       "metrics, then the earliest submission; n/a ranks last. On the test "
                       "split the public part is shown until the private part is revealed.",
        "parameters": _BOARD_QUERY + _TOOLS + _PAGING + [
            {"name": "cursor", "in": "query", "schema": {"type": "string"},
             "description": "the next_cursor of the page before: the next page without an "
                            "offset (a cursor older than the board's last change reads the "
                            "page by its number instead)"}],
        "responses": {"200": _json(_ref("Board")), **_ERRORS}},
    ("api.board_csv", "GET"): {
        "summary": "A whole board as CSV (formula-safe cells)", "tags": ["boards"],
        "parameters": _BOARD_QUERY + _TOOLS,
        "responses": {"200": {"description": "CSV, one row per board row",
                              "content": {"text/csv": {"schema": {"type": "string"}}}},
                      **_ERRORS}},
    ("api.list_modalities", "GET"): {
        "summary": "Modalities and their boards (one per task kind), each with its leader",
        "tags": ["boards"],
        "responses": {"200": _json({"type": "object", "properties": {"modalities": {
            "type": "array", "items": _ref("ModalityIndex")}}})}},
    ("api.modality_kinds", "GET"): {
        "summary": "One modality's boards (one per task kind), each with its leader",
        "tags": ["boards"], "responses": {"200": _json(_ref("ModalityIndex")), **_ERRORS}},
    ("api.modality_json", "GET"): {
        "summary": "Modality board (modality x task kind x split): normalised mean (chance 0, "
                   "perfect 1) with its 95% interval, n, coverage, rank and rank interval; "
                   "only teams with a result on every task are ranked; baselines are marked",
        "tags": ["boards"], "parameters": [_SPLIT, *_PAGING],
        "responses": {"200": _json(_ref("ModalityBoard")), **_ERRORS}},
    ("api.modality_csv", "GET"): {
        "summary": "A whole modality board as CSV (formula-safe cells), the page's rows",
        "tags": ["boards"], "parameters": [_SPLIT],
        "responses": {"200": {"description": "CSV, one row per team or baseline",
                              "content": {"text/csv": {"schema": {"type": "string"}}}},
                      **_ERRORS}},
    ("api.openapi", "GET"): {
        "summary": "This document", "tags": ["meta"],
        "responses": {"200": _json({"type": "object"})}},
    ("api.create_submission", "POST"): {
        "summary": "Upload a predictions file (JSONL or JSONL.gz) for scoring",
        "tags": ["submissions"], "security": [{"bearerAuth": []}],
        "requestBody": {"required": True, "content": {"multipart/form-data": {"schema": {
            "type": "object", "required": ["file", "benchmark", "split", "method_name"],
            "properties": {"file": {"type": "string", "contentMediaType":
                                    "application/octet-stream"},
                           "benchmark": {"type": "string"}, "split": {"type": "string"},
                           "method_name": {"type": "string"},
                           "description": {"type": "string"},
                           "paper_url": {"type": "string"}, "code_url": {"type": "string"},
                           "is_public": {"type": "boolean"},
                           "kind": {"enum": ["predictions", "container"]},
                           "allow_rerun": {"type": "boolean", "description":
                                           "images only (default true): the platform may "
                                           "re-run the image on the benchmark's later "
                                           "releases, not counted toward the quota"},
                           "challenge": {"type": "string", "description":
                                         "a challenge's key: the submission is made to it (its "
                                         "phases, split and caps apply; entrants only)"}}}}}},
        "parameters": [{"name": "Idempotency-Key", "in": "header", "schema": {
            "type": "string", "pattern": "^[A-Za-z0-9._:-]{8,128}$"},
            "description": "Names this upload: sent again with the same key, it answers the "
                           "first submission (header Idempotent-Replayed: true), never a "
                           "second one. Retry lost answers and 503s with it."}],
        "responses": {"202": _json(_ref("SubmissionStatus"), "Accepted; poll status_url"),
                      **_AUTH_ERRORS,
                      "413": _json(_ref("Error"), "File larger than the upload limit"),
                      "422": _json(_ref("Error"), "Idempotency key already used for another "
                                                  "upload"),
                      "403": _json(_ref("Error"), "No team, submissions closed, outside the "
                                                  "challenge's phase, or (agreement_required, "
                                                  "with sign_url) a held-out split without the "
                                                  "submitter's approved agreement"),
                      "429": _json(_ref("Error"), "Daily quota of the split or the phase's cap "
                                                  "used up, or too many requests (then with "
                                                  "Retry-After)"),
                      "503": _json(_ref("Error"), "Database or queue unavailable: retry after "
                                                  "Retry-After seconds")}},
    ("api.check_submission", "GET"): {
        "summary": "Pre-flight: would an upload to this target be accepted now?",
        "tags": ["submissions"], "security": [{"bearerAuth": []}, {}],
        "description": "The upload's checks on benchmark, split, challenge and kind (split, "
                       "team, challenge phase, agreement, quota), nothing stored or counted; "
                       "the client asks it before sending a file.",
        "parameters": [{"name": n, "in": "query", "schema": {"type": "string"}}
                       for n in ("benchmark", "split", "challenge", "kind")],
        "responses": {"200": _json({"type": "object", "properties": {
            "ok": {"type": "boolean"}, "phase": {"type": ["string", "null"]},
            "challenge": {"type": ["string", "null"]},
            "quota": {"type": ["object", "null"]},
            "phase_left": {"type": ["integer", "null"]}}}), **_AUTH_ERRORS,
            "403": _json(_ref("Error"), "Refused: no team, closed, not an entrant, outside "
                                        "the challenge's phase or split, no agreement"),
            "429": _json(_ref("Error"), "Daily quota or the phase's cap used up")}},
    ("api.api_enter_challenge", "POST"): {
        "summary": "Enter the caller's team in a challenge (idempotent)",
        "tags": ["challenges"], "security": [{"bearerAuth": []}],
        "responses": {"201": _json({"type": "object"}, "Entered now"),
                      "200": _json({"type": "object"}, "Had already entered"),
                      **_AUTH_ERRORS,
                      "403": _json(_ref("Error"), "No team"),
                      "409": _json(_ref("Error"), "The challenge has ended")}},
    ("api.submission_error_analysis", "GET"): {
        "summary": "Error analysis of the caller's team's own dev-split submission: per task "
                   "the confusion matrix, calibration (reliability bins, expected calibration "
                   "error with its 95% CI), the headline per slice beside the board's best, "
                   "and the most confident errors (per-item rows need the dev-labels grant; "
                   "signed media links the media grant)",
        "tags": ["submissions"], "security": [{"bearerAuth": []}],
        "responses": {"200": _json({"type": "object"}), **_AUTH_ERRORS,
                      "403": _json(_ref("Error"), "Another team's submission, or a held-out "
                                                  "(test) split: nothing beyond the boards"),
                      "404": _json(_ref("Error"), "No such submission, or a private one of "
                                                  "another team"),
                      "409": _json(_ref("Error"), "Not scored yet"),
                      "410": _json(_ref("Error"), "The predictions file is no longer stored")}},
    ("api.method_json", "GET"): {
        "summary": "A method (a team's named detector): its card, its results on every board "
                   "where it has a row (rank, rank interval, value, CI and n as the boards show "
                   "them) and its submissions (issue 38)", "tags": ["methods"],
        "security": [{"bearerAuth": []}, {}],
        "responses": {"200": _json({"type": "object"}),
                      "404": _json(_ref("Error"), "No such method, or one with no submission "
                                                  "on a board and the caller not its team's")}},
    ("api.method_update", "PATCH"): {
        "summary": "Change a method's card (description, links, model-card fields, the team's "
                   "affiliation); the team's members only", "tags": ["methods"],
        "security": [{"bearerAuth": []}],
        "responses": {"200": _json({"type": "object"}), **_AUTH_ERRORS,
                      "400": _json(_ref("Error"), "A field is too long, or a link is not "
                                                  "http(s)"),
                      "403": _json(_ref("Error"), "Not a member of the method's team"),
                      "404": _json(_ref("Error"), "No such method")}},
    ("api.get_submission", "GET"): {
        "summary": "A submission's status (failure details for its team)",
        "tags": ["submissions"], "security": [{"bearerAuth": []}, {}],
        "responses": {"200": _json(_ref("SubmissionStatus")), **_AUTH_ERRORS}},
    ("api.list_submissions", "GET"): {
        "summary": "The caller's team's submissions, newest first", "tags": ["submissions"],
        "security": [{"bearerAuth": []}],
        "parameters": [{"name": "limit", "in": "query",
                        "schema": {"type": "integer", "minimum": 1, "maximum": 200}},
                       {"name": "before", "in": "query", "schema": {"type": "integer"},
                        "description": "the next page: the next_before of the previous one"}],
        "responses": {"200": _json({"type": "object", "properties": {"submissions": {
            "type": "array", "items": _ref("SubmissionStatus")},
            "next_before": {"type": ["integer", "null"]}}}), **_AUTH_ERRORS}},
    ("api.api_notices", "GET"): {
        "summary": "Your notices and your team's, not yet dismissed, newest first",
        "tags": ["notices"], "security": [{"bearerAuth": []}, {}],
        "description": "Agreement approved, denied or revoked (yours); submission scored, "
                       "failed, hidden or disqualified (your team's).",
        "responses": {"200": _json({"type": "object", "properties": {
            "notices": {"type": "array", "items": _ref("Notice")}}}), **_AUTH_ERRORS}},
    ("api.api_dismiss_notice", "POST"): {
        "summary": "Dismiss a notice (for the whole team when it is the team's)",
        "tags": ["notices"], "security": [{"bearerAuth": []}],
        "responses": {"200": _json(_ref("Notice")), **_AUTH_ERRORS}},
    ("api.api_phase_board", "GET"): {
        "summary": "One challenge phase's board", "tags": ["challenges"],
        "description": "The submissions made to the phase, ranked by the benchmark's board "
                       "rules, per task, each value with its CI and n, rank intervals on the "
                       "headline. source: live (the phase runs), frozen (when it closed) or "
                       "final (the challenge's results, on the phase's own part).",
        "responses": {"200": _json({"type": "object", "properties": {
            "source": {"enum": ["live", "frozen", "final"]}, "part": {"type": "string"},
            "frozen_at": {"type": ["string", "null"]}, "state": {"type": "string"},
            "tasks": {"type": "array", "items": {"type": "object"}}}}), **_ERRORS}},
}

SCHEMAS = {
    "Notice": {"type": "object", "properties": {
        "id": {"type": "integer"}, "kind": {"type": "string"}, "message": {"type": "string"},
        "subject": {"type": "string", "description": "what it is about: submission:<id> or "
                                                       "benchmark:<key>"},
        "for": {"enum": ["you", "team"]}, "created_at": {"type": "string"},
        "dismissed_at": {"type": ["string", "null"]}}},
    "Error": {"type": "object", "required": ["error", "message"], "properties": {
        "error": {"type": "string"}, "message": {"type": "string"},
        "problems": {"type": "array", "items": _ref("Problem")},
        "total_problems": {"type": "integer"},
        "sign_url": {"type": "string", "description": "agreement_required (403): where the "
                                                      "benchmark's agreement is signed"}}},
    "Problem": {"type": "object", "properties": {
        "line": {"type": ["integer", "null"]}, "field": {"type": ["string", "null"]},
        "file": {"type": ["string", "null"]}, "message": {"type": "string"}}},
    "Task": {"type": "object", "properties": {
        "key": {"type": "string"}, "kind": {"type": "string"}, "title": {"type": "string"},
        "modalities": {"type": "array", "items": {"type": "string"}},
        "headline": {"type": "string"},
        "secondary": {"type": "array", "items": {"type": "string"}}}},
    "MetricSpec": {"type": "object", "properties": {
        "title": {"type": "string"}, "higher_is_better": {"type": "boolean"},
        "fmt": {"enum": ["pct", "num", "signed"]}, "lower": _NULLABLE_NUM,
        "upper": _NULLABLE_NUM}},
    "Benchmark": {"type": "object", "properties": {
        "key": {"type": "string", "description": "the release's own key (<family>-v<N> from "
                                                  "release 2 on)"},
        "family": {"type": "string", "description": "the benchmark's name: asking for it "
                                                     "gives the latest release"},
        "release": {"type": "integer", "minimum": 1},
        "title": {"type": "string"}, "version": {"type": "string"},
        "tasks": {"type": "array", "items": _ref("Task")},
        "modalities": {"type": "array", "items": {"type": "string"}},
        "splits": {"type": "array", "items": {"type": "string"}},
        "metrics": {"type": "object", "additionalProperties": _ref("MetricSpec")},
        "private_revealed": {"type": "boolean"}, "submissions_open": {"type": "boolean"}}},
    "Cell": {"type": "object", "properties": {
        "value": _NULLABLE_NUM, "ci_low": _NULLABLE_NUM, "ci_high": _NULLABLE_NUM,
        "n": {"type": "integer"}}},
    "Column": {"type": "object", "properties": {
        "metric": {"type": "string"}, "title": {"type": "string"},
        "higher_is_better": {"type": "boolean"}, "arrow": {"type": "string"},
        "fmt": {"type": "string"}}},
    "BoardRow": {"type": "object", "properties": {
        "rank": {"type": ["integer", "null"], "description": "null for baselines and "
                                                             "disqualified rows"},
        "submission_id": {"type": "integer"},
        "team": {"type": "object", "properties": {"id": {"type": ["integer", "null"]},
                                                  "name": {"type": "string"}}},
        "method_name": {"type": "string"}, "created_at": {"type": "string",
                                                          "format": "date-time"},
        "is_baseline": {"type": "boolean"}, "baseline_kind": {"type": ["string", "null"]},
        "selected": {"type": "boolean"}, "disqualified_reason": {"type": ["string", "null"]},
        "values": {"type": "object", "additionalProperties": _ref("Cell")}}},
    "Board": {"type": "object", "properties": {
        "benchmark": {"type": "string"}, "family": {"type": "string"},
        "release": {"type": "integer", "minimum": 1},
        "task": _ref("Task"), "split": {"type": "string"},
        "part": {"enum": ["all", "public", "private"]}, "modality": {"type": ["string", "null"]},
        "slice_key": {"type": "string"}, "slices": {"type": "array",
                                                    "items": {"type": "string"}},
        "mode": {"enum": ["team", "all"]}, "primary": {"type": "string"},
        "rule": {"type": "string"}, "columns": {"type": "array", "items": _ref("Column")},
        "rows": {"type": "array", "items": _ref("BoardRow")}, "page": {"type": "integer"},
        "per_page": {"type": "integer"}, "total": {"type": "integer"},
        "pages": {"type": "integer"}, "next_cursor": {"type": ["string", "null"]}}},
    "ModalityIndex": {"type": "object", "properties": {
        "modality": {"type": "string"}, "url": {"type": "string"},
        "boards": {"type": "array", "items": {"type": "object", "properties": {
            "kind": {"type": "string"}, "title": {"type": "string"},
            "url": {"type": "string"}, "csv": {"type": "string"},
            "splits": {"type": "array", "items": {"type": "object"}}}}}}},
    "ModalityBoard": {"type": "object", "properties": {
        "modality": {"type": "string"}, "kind": {"type": "string"},
        "kind_title": {"type": "string"}, "split": {"type": "string"},
        "splits": {"type": "array", "items": {"type": "string"}},
        "rule": {"type": "string"}, "interval_rule": {"type": "string"},
        "columns": {"type": "array", "items": {"type": "object"}},
        "rows": {"type": "array", "items": {"type": "object", "properties": {
            "rank": {"type": ["integer", "null"]},
            "rank_interval": {"type": ["object", "null"]}, "team": {"type": "object"},
            "is_baseline": {"type": "boolean"},
            "baseline_kind": {"type": ["string", "null"]},
            "ranked": {"type": "boolean"}, "mean_score": _NULLABLE_NUM,
            "mean_ci": {"type": ["array", "null"], "items": {"type": "number"}},
            "n": {"type": "integer"}, "covered": {"type": "integer"},
            "of": {"type": "integer"}, "cells": {"type": "object"}}}},
        "page": {"type": "integer"}, "per_page": {"type": ["integer", "null"]},
        "total": {"type": "integer"}, "ranked": {"type": "integer"},
        "pages": {"type": "integer"}}},
    "SubmissionStatus": {"type": "object", "properties": {
        "id": {"type": "integer"}, "benchmark": {"type": "string"}, "split": {"type": "string"},
        "method_name": {"type": "string"},
        "status": {"enum": ["received", "queued", "scoring", "scored", "failed"]},
        "is_public": {"type": "boolean"}, "team": {"type": ["string", "null"]},
        "allow_rerun": {"type": "boolean", "description": "images only: may be re-run on "
                                                          "later releases"},
        "rerun_of": {"type": ["integer", "null"], "description": "images only: the submission "
                     "this is the platform's re-run of, on a later release"},
        "created_at": {"type": ["string", "null"]}, "finished_at": {"type": ["string", "null"]},
        "failure_reason": {"type": ["string", "null"]},
        "problems": {"type": "array", "items": _ref("Problem")},
        "hidden": {"type": "boolean", "description": "hidden from the boards by an admin "
                                                     "(the team's view only)"},
        "hidden_reason": {"type": ["string", "null"]},
        "disqualified_reason": {"type": ["string", "null"]},
        "selectable": {"type": "boolean", "description": "may represent the team (scored, "
                                                         "not hidden, not disqualified)"},
        "status_url": {"type": "string"}}},
}


def openapi_path(rule: str) -> tuple[str, list[dict]]:
    """Flask rule -> (OpenAPI path template, path parameters)."""
    params = []

    def sub(m: re.Match) -> str:
        params.append({"name": m.group(2), "in": "path", "required": True,
                       "schema": dict(_TYPES.get(m.group(1) or "", {"type": "string"}))})
        return "{" + m.group(2) + "}"

    return _CONVERTER.sub(sub, rule), params


def build_document(app: Flask, *, prefix: str = "/api/v1") -> dict:
    paths: dict[str, dict] = {}
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
        if not rule.rule.startswith(prefix + "/"):
            continue
        path, params = openapi_path(rule.rule)
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            op = dict(OPERATIONS.get((rule.endpoint, method)) or _from_view(app, rule.endpoint))
            op["operationId"] = rule.endpoint.split(".")[-1] + (
                "" if method == "GET" else "_" + method.lower())
            op["parameters"] = params + list(op.get("parameters", []))
            if not op["parameters"]:
                del op["parameters"]
            paths.setdefault(path, {})[method.lower()] = op
    doc = {"openapi": "3.1.0",
           "info": {"title": "Synthetic-media detection leaderboard API",
                    "version": f"{API_VERSION} (server {server_version()})",
                    "description": "JSON under `/api/v1` (API version "
                                   f"{API_VERSION}, server {server_version()}); errors are "
                                   "`{\"error\", \"message\"}`. Tokens: "
                                   "'Authorization: Bearer <token>', created on the team "
                                   "page."},
           "servers": [{"url": "/"}], "paths": paths,
           "components": {"schemas": SCHEMAS, "securitySchemes": {
               "bearerAuth": {"type": "http", "scheme": "bearer",
                              "description": "'Authorization: Bearer <token>' with a token "
                                             "from your team page"}}}}
    return markdown_safe(doc)


#: the version of the ``/api/v1`` contract (a breaking change would be ``/api/v2``)
API_VERSION = "1"
_QUOTED_PLACEHOLDER = re.compile(r"'([^'`]*<\w+>[^'`]*)'")
_PLACEHOLDER = re.compile(r"(?<![`\w])<(\w+)>(?![`\w])")


def server_version() -> str:
    """The server's release: the installed distribution's version, else pyproject.toml's (a
    checkout run without ``pip install``)."""
    try:
        return metadata.version("leaderboard")
    except metadata.PackageNotFoundError:
        try:
            with open(REPO_ROOT / "pyproject.toml", "rb") as fh:
                return tomllib.load(fh)["project"]["version"]
        except (OSError, KeyError, ValueError):
            return "unknown"


def _code(text: str) -> str:
    # Swagger UI renders descriptions as Markdown and drops what looks like an HTML tag, so
    # "Bearer <token>" showed as "Bearer ": placeholders go in code spans, where they print
    text = _QUOTED_PLACEHOLDER.sub(r"`\1`", text)
    return _PLACEHOLDER.sub(r"`<\1>`", text)


def markdown_safe(node):
    """Every ``description`` in the document with its ``<placeholder>``s in code spans."""
    if isinstance(node, dict):
        return {k: (_code(v) if k == "description" and isinstance(v, str)
                    else markdown_safe(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [markdown_safe(v) for v in node]
    return node


def _from_view(app: Flask, endpoint: str) -> dict:
    doc = (app.view_functions[endpoint].__doc__ or endpoint).strip()
    summary, _, rest = doc.partition("\n")
    op = {"summary": summary.strip(), "responses": {"200": _json({"type": "object"}),
                                                    **_ERRORS}}
    if rest.strip():
        op["description"] = " ".join(rest.split())
    return op
