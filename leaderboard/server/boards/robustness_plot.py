"""The severity plot: a submission's headline against degradation level, one line per
degradation (level 0 = the clean subset), other ranked submissions' lines faint behind.

Same conventions as `boards.plots` (self-contained SVG, no script, every text escaped, the
Okabe-Ito palette). The y axis spans the metric's declared range (``lower``/``upper``), or the
data's where a bound is open; an n/a point breaks its line.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from leaderboard.server.boards.plots import PALETTE, _svg_open, _title_width, esc, format_value


def severity_svg(series: Sequence[Mapping], faint: Sequence[Mapping] = (), *, title: str,
                 y_label: str, fmt: str = "num", lower: float | None = 0.0,
                 upper: float | None = 1.0, levels: int = 5) -> str:
    """``series``/``faint``: [{"label", "x": [0, 1, ...], "y": [value or None, ...]}]."""
    ys = [float(v) for s in (*series, *faint) for v in s["y"] if v is not None]
    lo = lower if lower is not None else min(ys + [0.0])
    hi = upper if upper is not None else max(ys + [1.0])
    if hi <= lo:
        hi = lo + 1.0
    left, top, plot_w, plot_h = 64, 28, 300, 200
    width = max(left + plot_w + 20, _title_width(title))
    height = top + plot_h + 44 + 14 * len(series)

    def px(level: float) -> float:
        return left + float(level) / levels * plot_w

    def py(v: float) -> float:
        return top + (1.0 - (min(max(float(v), lo), hi) - lo) / (hi - lo)) * plot_h

    out = _svg_open(width, height, title)
    out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" '
               'stroke="#888"/>')
    for k in range(levels + 1):
        out.append(f'<line x1="{px(k):.1f}" y1="{top}" x2="{px(k):.1f}" y2="{top + plot_h}" '
                   'stroke="#eee"/>')
        out.append(f'<text x="{px(k):.1f}" y="{top + plot_h + 13}" text-anchor="middle">'
                   f'{"clean" if k == 0 else k}</text>')
    for frac in (0.0, 0.5, 1.0):
        v = lo + frac * (hi - lo)
        out.append(f'<line x1="{left}" y1="{py(v):.1f}" x2="{left + plot_w}" y2="{py(v):.1f}" '
                   'stroke="#eee"/>')
        out.append(f'<text x="{left - 4}" y="{py(v) + 4:.1f}" text-anchor="end">'
                   f'{esc(format_value(v, fmt))}</text>')
    out.append(f'<text x="{left + plot_w / 2:.0f}" y="{top + plot_h + 28}" '
               'text-anchor="middle">severity level</text>')
    out.append(f'<text x="12" y="{top + plot_h / 2:.0f}" text-anchor="middle" '
               f'transform="rotate(-90 12 {top + plot_h / 2:.0f})">{esc(y_label)}</text>')
    names = [str(s.get("label", "")) for s in series]
    for s in faint:  # behind: thin, light, in the colour of the same degradation
        i = names.index(str(s.get("label"))) if str(s.get("label")) in names else len(names)
        for seg in _segments(s):
            pts = " ".join(f"{px(a):.1f},{py(b):.1f}" for a, b in seg)
            out.append(f'<polyline class="faint" fill="none" stroke="{PALETTE[i % len(PALETTE)]}" '
                       f'stroke-opacity="0.18" stroke-width="1" points="{pts}"/>')
    for i, s in enumerate(series):
        colour, label = PALETTE[i % len(PALETTE)], str(s.get("label", f"series {i + 1}"))
        for seg in _segments(s):
            pts = " ".join(f"{px(a):.1f},{py(b):.1f}" for a, b in seg)
            out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" '
                       f'points="{pts}"><title>{esc(label)}</title></polyline>')
            for a, b in seg:
                out.append(f'<circle cx="{px(a):.1f}" cy="{py(b):.1f}" r="2.5" fill="{colour}">'
                           f'<title>{esc(label)} level {a}: {esc(format_value(b, fmt))}</title>'
                           '</circle>')
        ly = top + plot_h + 44 + 14 * i
        out.append(f'<rect x="{left}" y="{ly - 8}" width="10" height="10" fill="{colour}"/>')
        out.append(f'<text x="{left + 14}" y="{ly + 1}">{esc(label)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def _segments(s: Mapping) -> list[list[tuple[float, float]]]:
    segs, cur = [], []
    for a, b in zip(s["x"], s["y"]):
        if b is None:
            if cur:
                segs.append(cur)
            cur = []
        else:
            cur.append((a, float(b)))
    if cur:
        segs.append(cur)
    return segs
