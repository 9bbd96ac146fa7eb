"""The decay plot (issue 37, 4b): each top detector's headline across a family's releases, as
one self-contained SVG (no script), drawn from `leaderboard.server.boards.decay.decay_view`.

x: the releases in order, evenly spaced, each labelled with its number and date; y: the
headline with its 95% CI as a whisker. One line per detector (consecutive releases joined),
colours from the shared Okabe-Ito palette and each line also told apart by its marker shape
and named in the legend, so colour is never the only cue. Every point is a circle, square or
diamond carrying ``data-line``, ``data-release``, ``data-submission`` and ``data-value`` (the
JSON's numbers, so the picture and the API can be held equal) and a <title> for readers.
"""
from __future__ import annotations

from leaderboard.server.boards.plots import PALETTE, esc, format_value, framed_plot

_SHAPES = ("circle", "square", "diamond")


def _marker(shape: str, x: float, y: float, colour: str, attrs: str, title: str,
            cls: str = "point") -> str:
    if shape == "circle":
        return (f'<circle class="{cls}" cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{colour}" '
                f"{attrs}><title>{title}</title></circle>")
    if shape == "square":
        return (f'<rect class="{cls}" x="{x - 4:.1f}" y="{y - 4:.1f}" width="8" height="8" '
                f'fill="{colour}" {attrs}><title>{title}</title></rect>')
    pts = f"{x:.1f},{y - 5:.1f} {x + 5:.1f},{y:.1f} {x:.1f},{y + 5:.1f} {x - 5:.1f},{y:.1f}"
    return (f'<polygon class="{cls}" points="{pts}" fill="{colour}" {attrs}>'
            f"<title>{title}</title></polygon>")


def decay_svg(view: dict, *, title: str, width: int = 640, height: int = 300) -> str:
    """The plot of a decay view; "" when no line has a value."""
    fmt = (view.get("column") or {}).get("fmt", "num")
    rels = view["releases"]
    lines = [ln for ln in view["lines"] if any(p["value"] is not None for p in ln["points"])]
    if not lines or not rels:
        return ""
    vals = [float(v) for ln in lines for p in ln["points"]
            for v in (p["value"], p["ci_low"], p["ci_high"]) if v is not None]
    v0, v1 = min(vals), max(vals)
    if v1 - v0 < 1e-12:
        v0, v1 = v0 - 0.05, v1 + 0.05
    pad = (v1 - v0) * 0.08
    v0, v1 = v0 - pad, v1 + pad
    left, right, top = 56, 24, 28
    plot_w, plot_h = width - left - right, height - top - 52
    total_h = height + 8 + 16 * len(lines)
    slot = {r["release"]: i for i, r in enumerate(rels)}

    def px(release: int) -> float:
        step = plot_w / max(len(rels), 1)
        return left + step * (slot[release] + 0.5)

    def py(v: float) -> float:
        return top + (1.0 - (float(v) - v0) / (v1 - v0)) * plot_h

    out = framed_plot(width, total_h, title, css_class="decay-plot", left=left, top=top,
                      plot_w=plot_w, plot_h=plot_h, v0=v0, v1=v1, fmt=fmt)
    for r in rels:
        x = px(r["release"])
        out.append(f'<text class="release" x="{x:.1f}" y="{top + plot_h + 14}" '
                   f'text-anchor="middle" data-release="{r["release"]}">v{r["release"]}</text>')
        out.append(f'<text x="{x:.1f}" y="{top + plot_h + 26}" text-anchor="middle" '
                   f'font-size="9" fill="#555">{esc((r["released_at"] or "undated")[:10])}'
                   "</text>")
    col = view.get("column") or {}
    out.append(f'<text x="{left + plot_w / 2:.0f}" y="{top + plot_h + 42}" text-anchor="middle">'
               f"release (date published) · {esc(col.get('title', view['metric']))} "
               f"{esc(col.get('arrow', ''))}</text>")
    nudge = min(6.0, plot_w / max(len(rels), 1) / (2 * len(lines) + 2))
    for i, ln in enumerate(lines):
        colour = PALETTE[i % (len(PALETTE) - 1)]
        shape = _SHAPES[i % len(_SHAPES)]
        dx = (i - (len(lines) - 1) / 2) * nudge  # whiskers of equal values stay apart
        pts = [p for p in ln["points"] if p["value"] is not None]
        dash = ' stroke-dasharray="5 3"' if ln["is_baseline"] else ""
        if len(pts) > 1:
            coords = " ".join(f"{px(p['release']) + dx:.1f},{py(p['value']):.1f}" for p in pts)
            out.append(f'<polyline class="line" fill="none" stroke="{colour}" stroke-width="2"'
                       f'{dash} points="{coords}"><title>{esc(ln["label"])}</title></polyline>')
        for p in pts:
            x, y = px(p["release"]) + dx, py(p["value"])
            if p["ci_low"] is not None and p["ci_high"] is not None:
                out.append(f'<line class="whisker" x1="{x:.1f}" y1="{py(p["ci_low"]):.1f}" '
                           f'x2="{x:.1f}" y2="{py(p["ci_high"]):.1f}" stroke="{colour}"/>')
            ci = (f" [{format_value(p['ci_low'], fmt)}, {format_value(p['ci_high'], fmt)}]"
                  if p["ci_low"] is not None else "")
            rank = f", rank {p['rank']} of {p['of']}" if p["rank"] is not None else ", reference"
            tip = esc(f"{ln['label']} on v{p['release']}: {format_value(p['value'], fmt)}{ci}"
                      f", n={p['n']}{rank}")
            attrs = (f'data-line="{esc(ln["key"])}" data-release="{p["release"]}" '
                     f'data-submission="{p["submission_id"]}" data-value="{p["value"]!r}"')
            out.append(_marker(shape, x, y, colour, attrs, tip))
        ly = height + 8 + 16 * i  # below the axis title
        out.append(_marker(shape, left + 5, ly - 4, colour, 'aria-hidden="true"', "", cls="key"))
        out.append(f'<text x="{left + 14}" y="{ly}">{esc(ln["label"][:70])}'
                   f'{" (baseline)" if ln["is_baseline"] else ""}</text>')
    out.append("</svg>")
    return "\n".join(out)
