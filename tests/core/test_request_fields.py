"""``request_fields`` in benchmark.yaml (issue 35): optional, checked with the field named."""
from __future__ import annotations

import pytest

from leaderboard.core.errors import PackError
from leaderboard.core.packs import parse_meta
from leaderboard.core.request_fields import RequestField, parse_request_fields

BASE = """key: syncred
title: T
modalities: [image]
splits: [dev]
tasks: [{key: detection, kind: detection, modalities: [image], headline: accuracy}]
"""


def test_absent_is_backward_compatible():
    assert parse_meta(BASE).request_fields == ()


def test_parsed_with_defaults():
    meta = parse_meta(BASE + "request_fields:\n  - {key: ethics, label: Ethics approval,"
                      " required: true}\n  - {key: url, label: Project page}\n")
    assert meta.request_fields == (
        RequestField("ethics", "Ethics approval", required=True),
        RequestField("url", "Project page"))
    assert "request_fields" not in meta.extras


@pytest.mark.parametrize("raw, field", [
    ("oops", "request_fields"),
    ([{"key": "Bad Key", "label": "x"}], "request_fields[0].key"),
    ([{"key": "role", "label": "x"}], "request_fields[0].key"),
    ([{"key": "a", "label": "x"}, {"key": "a", "label": "y"}], "request_fields[1].key"),
    ([{"key": "a", "label": ""}], "request_fields[0].label"),
    ([{"key": "a", "label": "x", "required": "yes"}], "request_fields[0].required"),
    ([{"key": "a", "label": "x", "max_length": 0}], "request_fields[0].max_length"),
    ([{"key": "a", "label": "x", "colour": "red"}], "request_fields[0]"),
    ([{"key": f"k{i}", "label": "x"} for i in range(11)], "request_fields"),
])
def test_errors_name_the_field(raw, field):
    with pytest.raises(PackError) as exc:
        parse_request_fields(raw)
    assert field in [p.field for p in exc.value.problems.items]
