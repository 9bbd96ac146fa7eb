"""CSV export cells cannot run as formulas (OWASP CSV injection)."""
import csv
import io

import pytest

from leaderboard.server.csvsafe import safe_cell, to_csv


@pytest.mark.parametrize("text", ["=1+2", "+SUM(A1)", "-2+3", "@cmd", "\tx", "\rx",
                                  '=HYPERLINK("http://evil","x")'])
def test_formula_starts_are_prefixed(text):
    assert safe_cell(text) == "'" + text


def test_plain_values_pass():
    assert safe_cell("team a") == "team a"
    assert safe_cell(-0.25) == -0.25 and safe_cell(3) == 3
    assert safe_cell(None) == "" and safe_cell(float("nan")) == ""
    assert safe_cell(True) == "true"


def test_round_trip_keeps_cells_and_neutralises():
    text = to_csv([["=cmd|' /C calc'!A0", 0.5, None], ["a,\"b\"\nc", -1, "ok"]],
                  header=["name", "value", "x"])
    assert text.endswith("\r\n")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["name", "value", "x"]
    assert rows[1] == ["'=cmd|' /C calc'!A0", "0.5", ""]
    assert rows[2] == ["a,\"b\"\nc", "-1", "ok"]
    for row in rows:
        for cell in row:
            # a text cell never starts with a formula character (numbers may be negative)
            if cell and cell[0] in "=+@\t\r":
                pytest.fail(f"unsafe cell {cell!r}")


def test_string_row_is_rejected():
    with pytest.raises(TypeError, match="'abc'"):
        to_csv(["abc"])
