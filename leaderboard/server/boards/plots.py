"""Server-side SVG charts: ROC / PR curves, heat maps, bars with CI whiskers.

No CDN and no JavaScript library: each function returns one self-contained ``<svg>`` element as a
string, ready to embed in a page (the CSP forbids inline scripts, and SVG needs none). Every piece
of text that reaches the SVG (titles, generator names, team names) is XML-escaped here, because
slice values come from pack files and method names from users.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from xml.sax.saxutils import escape as _xml_escape

FMTS = ("pct", "num", "signed")
#: series colours (Okabe-Ito, distinguishable with common colour-vision deficiencies)
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")
_FONT = 'font-family="system-ui, sans-serif" font-size="11"'


def esc(text: object) -> str:
    """XML-escape text for element content and double-quoted attributes."""
    return _xml_escape(str(text), {'"': "&quot;", "'": "&#x27;"})


def format_value(value: float | None, fmt: str = "num", *, digits: int = 1) -> str:
    """Format a metric value as the boards show it: "pct" 0.612 -> "61.2%", "num", "signed"."""
    if fmt not in FMTS:
        raise ValueError(f"fmt must be one of {FMTS}, got {fmt!r}")
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if fmt == "pct":
        return f"{100.0 * value:.{digits}f}%"
    if fmt == "signed":
        return f"{value:+.3f}"
    return f"{value:.3f}" if abs(value) < 10 else f"{value:.{digits}f}"


def _num(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".")


def _title_width(title: str) -> int:
    """Width a bold 13px title needs (approximate glyph width), so it is never clipped."""
    return int(len(title) * 7.8) + 24


def _svg_open(width: int, height: int, title: str) -> list[str]:
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="{esc(title)}" {_FONT}>',
            f"<title>{esc(title)}</title>",
            f'<text x="{width / 2:.0f}" y="16" text-anchor="middle" font-size="13" '
            f'font-weight="bold">{esc(title)}</text>']


def framed_plot(width: int, total_h: int, title: str, *, css_class: str, left: float,
                top: float, plot_w: float, plot_h: float, v0: float, v1: float,
                fmt: str) -> list[str]:
    """The start of a responsive value-over-something plot (history, decay): the SVG opened
    at 100% width up to ``width``, the plot's frame, and five horizontal grid lines from
    ``v0`` (bottom) to ``v1`` (top) labelled in ``fmt``. The caller appends its own marks."""
    out = _svg_open(width, total_h, title)
    out[0] = out[0].replace('width="%d"' % width, 'width="100%"', 1).replace(
        "<svg ", f'<svg class="{css_class}" style="max-width:{width}px" ', 1)
    out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" '
               'stroke="#888"/>')
    for i in range(5):
        v = v0 + (v1 - v0) * i / 4
        y = top + (1.0 - (v - v0) / (v1 - v0)) * plot_h
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" '
                   'stroke="#eee"/>')
        out.append(f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end">'
                   f"{esc(format_value(v, fmt))}</text>")
    return out


def _check_xy(x: Sequence[float], y: Sequence[float], label: str) -> None:
    if len(x) != len(y):
        raise ValueError(f"curve {label!r}: x and y differ in length ({len(x)} != {len(y)})")
    for v in (*x, *y):
        if v is None or not (0.0 <= float(v) <= 1.0):
            raise ValueError(f"curve {label!r}: points must lie in [0, 1], got {v!r}")


def curve_svg(series: Sequence[Mapping], *, title: str, x_label: str, y_label: str,
              diagonal: bool = False, size: int = 320) -> str:
    """Line chart on the unit square: ``series`` = [{"label", "x": [...], "y": [...]}].

    ``diagonal`` draws the chance line (ROC). Points outside [0, 1] are an error: ROC and PR
    curves live in the unit square, anything else means the stored curve is corrupt.
    """
    left, top, pad = 44, 28, 12
    plot = size - left - pad
    height = top + plot + 40 + 14 * len(series)

    def px(v: float) -> float:
        return left + float(v) * plot

    def py(v: float) -> float:
        return top + (1.0 - float(v)) * plot

    out = _svg_open(size, height, title)
    out.append(f'<rect x="{left}" y="{top}" width="{plot}" height="{plot}" fill="none" '
               'stroke="#888"/>')
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        out.append(f'<line x1="{px(t):.1f}" y1="{top}" x2="{px(t):.1f}" y2="{top + plot}" '
                   'stroke="#eee"/>')
        out.append(f'<line x1="{left}" y1="{py(t):.1f}" x2="{left + plot}" y2="{py(t):.1f}" '
                   'stroke="#eee"/>')
        out.append(f'<text x="{px(t):.1f}" y="{top + plot + 13}" text-anchor="middle">'
                   f"{_num(t)}</text>")
        out.append(f'<text x="{left - 4}" y="{py(t) + 4:.1f}" text-anchor="end">{_num(t)}</text>')
    out.append(f'<text x="{left + plot / 2:.0f}" y="{top + plot + 28}" text-anchor="middle">'
               f"{esc(x_label)}</text>")
    out.append(f'<text x="12" y="{top + plot / 2:.0f}" text-anchor="middle" '
               f'transform="rotate(-90 12 {top + plot / 2:.0f})">{esc(y_label)}</text>')
    if diagonal:
        out.append(f'<line x1="{px(0)}" y1="{py(0)}" x2="{px(1)}" y2="{py(1)}" stroke="#aaa" '
                   'stroke-dasharray="4 3"/>')
    for i, s in enumerate(series):
        label = str(s.get("label", f"series {i + 1}"))
        x, y = list(s["x"]), list(s["y"])
        _check_xy(x, y, label)
        colour = PALETTE[i % len(PALETTE)]
        pts = " ".join(f"{px(a):.1f},{py(b):.1f}" for a, b in zip(x, y))
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{pts}">'
                   f"<title>{esc(label)}</title></polyline>")
        ly = top + plot + 44 + 14 * i
        out.append(f'<rect x="{left}" y="{ly - 8}" width="10" height="10" fill="{colour}"/>')
        out.append(f'<text x="{left + 14}" y="{ly + 1}">{esc(label)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def roc_svg(series: Sequence[Mapping], *, title: str = "ROC curve") -> str:
    """ROC: false-positive rate (x) against true-positive rate (y), chance diagonal drawn."""
    return curve_svg(series, title=title, x_label="False-positive rate",
                     y_label="True-positive rate", diagonal=True)


def pr_svg(series: Sequence[Mapping], *, title: str = "Precision-recall curve") -> str:
    """PR: recall (x) against precision (y)."""
    return curve_svg(series, title=title, x_label="Recall", y_label="Precision")


def _mix(t: float) -> str:
    """White (t=0) to deep blue (t=1), perceptually monotone enough for a heat map."""
    t = min(1.0, max(0.0, t))
    lo, hi = (247, 251, 255), (8, 48, 107)
    r, g, b = (round(a + (c - a) * t) for a, c in zip(lo, hi))
    return f"#{r:02x}{g:02x}{b:02x}"


def heatmap_svg(rows: Sequence[str], cols: Sequence[str],
                values: Mapping[tuple[str, str], float | None], *, title: str,
                fmt: str = "pct", lower: float | None = 0.0, upper: float | None = 1.0,
                row_label: str = "", col_label: str = "",
                counts: Mapping[tuple[str, str], int] | None = None) -> str:
    """Heat map of ``values[(row, col)]`` (e.g. f.Acc by generator x domain); n/a cells grey.

    The colour scale runs from ``lower`` to ``upper`` (the metric's declared range); when either
    is None the observed range is used. ``counts[(row, col)]``: each cell's n, printed under its
    value and in its hover text (100% on n=1 must not read like 100% on n=200).
    """
    if fmt not in FMTS:
        raise ValueError(f"fmt must be one of {FMTS}, got {fmt!r}")
    nums = [v for v in values.values() if v is not None]
    lo = lower if lower is not None else (min(nums) if nums else 0.0)
    hi = upper if upper is not None else (max(nums) if nums else 1.0)
    span = (hi - lo) or 1.0
    cell_w, cell_h = 64, (32 if counts else 22)
    label_w = max([len(str(r)) for r in rows] + [len(row_label), 6]) * 7 + 12
    top = 44 + (14 if col_label else 0)
    width = max(label_w + cell_w * max(len(cols), 1) + 12, _title_width(title))
    height = top + cell_h * len(rows) + 12
    out = _svg_open(width, height, title)
    if col_label:
        out.append(f'<text x="{label_w + cell_w * len(cols) / 2:.0f}" y="32" '
                   f'text-anchor="middle">{esc(col_label)}</text>')
    if row_label:
        out.append(f'<text x="4" y="{top - 6}" font-style="italic">{esc(row_label)}</text>')
    for j, c in enumerate(cols):
        out.append(f'<text x="{label_w + cell_w * j + cell_w / 2:.0f}" y="{top - 6}" '
                   f'text-anchor="middle">{esc(c)}</text>')
    for i, r in enumerate(rows):
        y = top + cell_h * i
        out.append(f'<text x="{label_w - 6}" y="{y + 15}" text-anchor="end">{esc(r)}</text>')
        for j, c in enumerate(cols):
            v = values.get((r, c))
            x = label_w + cell_w * j
            text = format_value(v, fmt)
            n = counts.get((r, c)) if counts else None
            if v is None:
                fill, ink = "#ddd", "#555"
            else:
                t = (v - lo) / span
                fill, ink = _mix(t), ("#fff" if t > 0.55 else "#000")
            hover = f"{r} / {c}: {text}" + (f", n={n}" if n is not None else "")
            out.append(f'<rect x="{x}" y="{y}" width="{cell_w - 1}" height="{cell_h - 1}" '
                       f'fill="{fill}"><title>{esc(hover)}</title></rect>')
            out.append(f'<text x="{x + cell_w / 2:.0f}" y="{y + 15}" text-anchor="middle" '
                       f'fill="{ink}">{esc(text)}</text>')
            if n is not None:
                out.append(f'<text x="{x + cell_w / 2:.0f}" y="{y + 27}" text-anchor="middle" '
                           f'font-size="9" fill="{ink}">n={n}</text>')
    out.append("</svg>")
    return "\n".join(out)


def bars_svg(bars: Sequence[Mapping], *, title: str, fmt: str = "pct",
             lower: float | None = 0.0, upper: float | None = 1.0) -> str:
    """Horizontal bars, one per slice: [{"label", "value", "ci_low", "ci_high"}], CI whiskers.

    The axis spans the metric's declared range; an open end takes the data's extreme (and 0 is
    always on the axis, so bars of signed metrics grow from zero). n/a bars are labelled, not drawn.
    """
    if fmt not in FMTS:
        raise ValueError(f"fmt must be one of {FMTS}, got {fmt!r}")
    nums = [float(b[k]) for b in bars for k in ("value", "ci_low", "ci_high")
            if b.get(k) is not None]
    lo = lower if lower is not None else min(nums + [0.0])
    hi = upper if upper is not None else max(nums + [0.0])
    if hi <= lo:
        hi = lo + 1.0
    label_w = max([len(str(b["label"])) for b in bars] + [6]) * 7 + 12
    plot_w, bar_h, top = 300, 18, 30
    width = max(label_w + plot_w + 80, _title_width(title))
    height = top + bar_h * len(bars) + 24

    def px(v: float) -> float:
        return label_w + (min(max(v, lo), hi) - lo) / (hi - lo) * plot_w

    out = _svg_open(width, height, title)
    zero = px(0.0)
    out.append(f'<line x1="{zero:.1f}" y1="{top - 4}" x2="{zero:.1f}" '
               f'y2="{top + bar_h * len(bars)}" stroke="#888"/>')
    for t, v in (("lo", lo), ("hi", hi)):
        anchor = "start" if t == "lo" else "end"
        out.append(f'<text x="{px(v):.1f}" y="{height - 6}" text-anchor="{anchor}">'
                   f"{esc(format_value(v, fmt, digits=0))}</text>")
    for i, b in enumerate(bars):
        y = top + bar_h * i
        label, v = str(b["label"]), b.get("value")
        text = format_value(v, fmt)
        out.append(f'<text x="{label_w - 6}" y="{y + 13}" text-anchor="end">{esc(label)}</text>')
        if v is not None:
            x0, x1 = sorted((zero, px(float(v))))
            out.append(f'<rect x="{x0:.1f}" y="{y + 3}" width="{max(x1 - x0, 1):.1f}" '
                       f'height="{bar_h - 6}" fill="{PALETTE[0]}">'
                       f"<title>{esc(label)}: {esc(text)}</title></rect>")
            cl, ch = b.get("ci_low"), b.get("ci_high")
            if cl is not None and ch is not None:
                a, c, m = px(float(cl)), px(float(ch)), y + bar_h / 2
                out.append(f'<path d="M{a:.1f},{m:.1f}H{c:.1f}M{a:.1f},{m - 4:.1f}V{m + 4:.1f}'
                           f'M{c:.1f},{m - 4:.1f}V{m + 4:.1f}" stroke="#000" fill="none"/>')
        out.append(f'<text x="{label_w + plot_w + 6}" y="{y + 13}">{esc(text)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def reliability_svg(bins: Sequence[Mapping], *, title: str, size: int = 320) -> str:
    """Reliability diagram: per equal-width score bin ``{"lo", "hi", "n", "confidence",
    "observed"}`` (`leaderboard.core.metrics.calibration.reliability_bins`), a bar up to the
    fraction of fakes observed in the bin, a dot at (mean score, observed) and the diagonal a
    calibrated detector lies on. Empty bins are left blank; each bar's hover text gives its n.
    """
    left, top, pad = 44, 28, 12
    plot = size - left - pad
    height = top + plot + 58

    def px(v: float) -> float:
        return left + min(max(float(v), 0.0), 1.0) * plot

    def py(v: float) -> float:
        return top + (1.0 - min(max(float(v), 0.0), 1.0)) * plot

    out = _svg_open(size, height, title)
    out.append(f'<rect x="{left}" y="{top}" width="{plot}" height="{plot}" fill="none" '
               'stroke="#888"/>')
    for t in (0.0, 0.25, 0.5, 0.75, 1.0):
        out.append(f'<line x1="{left}" y1="{py(t):.1f}" x2="{left + plot}" y2="{py(t):.1f}" '
                   'stroke="#eee"/>')
        out.append(f'<text x="{px(t):.1f}" y="{top + plot + 13}" text-anchor="middle">'
                   f"{_num(t)}</text>")
        out.append(f'<text x="{left - 4}" y="{py(t) + 4:.1f}" text-anchor="end">{_num(t)}</text>')
    dots = []
    for b in bins:
        lo, hi, n = float(b["lo"]), float(b["hi"]), int(b["n"])
        if not n or b.get("observed") is None:
            continue
        obs, conf = float(b["observed"]), float(b["confidence"])
        hover = (f"scores {_num(lo)}-{_num(hi)}: n={n}, mean score {conf:.3f}, "
                 f"fake {obs:.3f}")
        x0, x1 = px(lo) + 1, px(hi) - 1
        out.append(f'<rect x="{x0:.1f}" y="{py(obs):.1f}" width="{max(x1 - x0, 1):.1f}" '
                   f'height="{py(0) - py(obs):.1f}" fill="{PALETTE[5]}" fill-opacity="0.6">'
                   f"<title>{esc(hover)}</title></rect>")
        dots.append((px(conf), py(obs), hover))
    out.append(f'<line x1="{px(0)}" y1="{py(0)}" x2="{px(1)}" y2="{py(1)}" stroke="#555" '
               'stroke-dasharray="4 3"/>')
    for x, y, hover in dots:
        out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{PALETTE[1]}">'
                   f"<title>{esc(hover)}</title></circle>")
    out.append(f'<text x="{left + plot / 2:.0f}" y="{top + plot + 28}" text-anchor="middle">'
               "Score (confidence of fake)</text>")
    out.append(f'<text x="12" y="{top + plot / 2:.0f}" text-anchor="middle" '
               f'transform="rotate(-90 12 {top + plot / 2:.0f})">Fraction fake</text>')
    ly = top + plot + 46
    out.append(f'<rect x="{left}" y="{ly - 8}" width="10" height="10" fill="{PALETTE[5]}"/>'
               f'<text x="{left + 14}" y="{ly + 1}">observed per bin</text>'
               f'<circle cx="{left + 134}" cy="{ly - 3}" r="3.5" fill="{PALETTE[1]}"/>'
               f'<text x="{left + 142}" y="{ly + 1}">at mean score</text>')
    out.append("</svg>")
    return "\n".join(out)
