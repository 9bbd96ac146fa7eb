"""SVG charts are well-formed XML and escape every text."""
import xml.etree.ElementTree as ET

import pytest

from leaderboard.server.boards.plots import bars_svg, format_value, heatmap_svg, pr_svg, roc_svg

NS = "{http://www.w3.org/2000/svg}"
EVIL = '<script>alert("x")</script> & \'q\''


def parse(svg):
    root = ET.fromstring(svg)
    assert root.tag == NS + "svg"
    assert not list(root.iter(NS + "script"))
    return root


def texts(root):
    return [t.text for t in root.iter(NS + "text")]


def test_roc_and_pr_are_well_formed_and_escape_labels():
    series = [{"label": EVIL, "x": [0, 0.2, 1], "y": [0, 0.7, 1]},
              {"label": "b", "x": [0, 1], "y": [0, 1]}]
    root = parse(roc_svg(series, title=EVIL))
    assert EVIL in texts(root)
    assert len(list(root.iter(NS + "polyline"))) == 2
    parse(pr_svg(series))


def test_curve_points_outside_unit_square_are_rejected():
    with pytest.raises(ValueError, match="1.5"):
        roc_svg([{"label": "a", "x": [0, 1.5], "y": [0, 1]}])
    with pytest.raises(ValueError, match="length"):
        pr_svg([{"label": "a", "x": [0, 1], "y": [0]}])


def test_heatmap_cells_and_na():
    svg = heatmap_svg(["sdxl", EVIL], ["photo", "art"],
                      {("sdxl", "photo"): 0.9, ("sdxl", "art"): None, (EVIL, "photo"): 0.1},
                      title="f.Acc by generator", row_label="generator", col_label="domain")
    root = parse(svg)
    t = texts(root)
    assert "90.0%" in t and "n/a" in t and EVIL in t
    assert len(list(root.iter(NS + "rect"))) == 4


def test_bars_with_whiskers_and_signed_range():
    bars = [{"label": "image", "value": 0.6, "ci_low": 0.55, "ci_high": 0.65},
            {"label": EVIL, "value": None}]
    root = parse(bars_svg(bars, title="Accuracy by modality"))
    assert len(list(root.iter(NS + "path"))) == 1
    assert "n/a" in texts(root)
    parse(bars_svg([{"label": "a", "value": -0.3}], title="NBI", fmt="signed",
                   lower=-1.0, upper=1.0))
    parse(bars_svg([{"label": "a", "value": 42.0}], title="score", fmt="num",
                   lower=None, upper=None))


def test_format_value():
    assert format_value(0.6123, "pct") == "61.2%"
    assert format_value(None, "pct") == "n/a"
    assert format_value(-0.1, "signed") == "-0.100"
    assert format_value(55.25, "num") == "55.2"
    with pytest.raises(ValueError, match="'percent'"):
        format_value(0.1, "percent")
