"""The history step plot (issue 38): a board's best over time and each top team's best, as one
self-contained SVG (no script), drawn from `leaderboard.server.boards.history.board_history`.

Every step is a circle carrying ``data-submission``, ``data-at`` and ``data-value`` (the
numbers of the JSON, so the picture and the API can be held equal) and a <title> for readers.
"""
from __future__ import annotations

from datetime import datetime

from leaderboard.server.boards.plots import PALETTE, esc, format_value, framed_plot


def history_svg(h: dict, *, title: str, width: int = 640, height: int = 300) -> str:
    """The step plot of a history; a short note instead when it has no step."""
    fmt = (h.get("column") or {}).get("fmt", "num")
    series = [("Board best", h["best"], "#000000", "4")]
    series += [(t["team"]["name"], t["steps"], PALETTE[i % (len(PALETTE) - 1)], "2")
               for i, t in enumerate(h["teams"])]
    pts = [s for _n, steps, _c, _w in series for s in steps if s["value"] is not None]
    if not pts:
        return ""
    left, right, top = 56, 16, 28
    plot_w, plot_h = width - left - right, height - top - 48
    total_h = height + 16 * len(series)
    times = [datetime.fromisoformat(s["at"]).timestamp() for s in pts]
    t0, t1 = min(times), max(times)
    t1 = t1 if t1 > t0 else t0 + 1.0
    vals = [float(s["value"]) for s in pts]
    v0, v1 = min(vals), max(vals)
    if v1 - v0 < 1e-12:
        v0, v1 = v0 - 0.05, v1 + 0.05
    pad = (v1 - v0) * 0.08
    v0, v1 = v0 - pad, v1 + pad

    def px(at: str) -> float:
        return left + (datetime.fromisoformat(at).timestamp() - t0) / (t1 - t0) * plot_w

    def py(v: float) -> float:
        return top + (1.0 - (float(v) - v0) / (v1 - v0)) * plot_h

    out = framed_plot(width, total_h, title, css_class="history-plot", left=left, top=top,
                      plot_w=plot_w, plot_h=plot_h, v0=v0, v1=v1, fmt=fmt)
    first = min(pts, key=lambda s: s["at"])["at"]
    last = max(pts, key=lambda s: s["at"])["at"]
    cut = 10 if first[:10] != last[:10] else 16  # one day: say the times
    for at, anchor in ((first, "start"), (last, "end")):
        out.append(f'<text x="{px(at):.1f}" y="{top + plot_h + 14}" text-anchor="{anchor}">'
                   f'{esc(at[:cut].replace("T", " "))}</text>')
    col = h.get("column") or {}
    out.append(f'<text x="{left + plot_w / 2:.0f}" y="{top + plot_h + 30}" text-anchor="middle">'
               f"time (submitted) · {esc(col.get('title', h['primary']))} "
               f"{esc(col.get('arrow', ''))}</text>")
    end = left + plot_w
    for i, (name, steps, colour, w) in enumerate(series):
        steps = [s for s in steps if s["value"] is not None]
        if not steps:
            continue
        coords: list[str] = []
        for j, s in enumerate(steps):
            x, y = px(s["at"]), py(s["value"])
            if j:
                coords.append(f"{x:.1f},{coords[-1].split(',')[1]}")
            coords.append(f"{x:.1f},{y:.1f}")
        coords.append(f"{end:.1f},{coords[-1].split(',')[1]}")
        out.append(f'<polyline class="series" fill="none" stroke="{colour}" stroke-width="{w}" '
                   f'points="{" ".join(coords)}"><title>{esc(name)}</title></polyline>')
        kind = "best" if i == 0 else "team"
        for s in steps:
            out.append(f'<circle class="step step-{kind}" cx="{px(s["at"]):.1f}" '
                       f'cy="{py(s["value"]):.1f}" r="3" fill="{colour}" '
                       f'data-series="{kind}" data-submission="{s["submission_id"]}" '
                       f'data-at="{esc(s["at"])}" data-value="{s["value"]!r}">'
                       f"<title>{esc(name)}: {esc(s['team']['name'])} · "
                       f"{esc(s['method_name'])} · {esc(format_value(s['value'], fmt))} · "
                       f"{esc(s['at'][:16])}</title></circle>")
        ly = height + 16 * i
        out.append(f'<rect x="{left}" y="{ly - 9}" width="10" height="10" fill="{colour}"/>')
        out.append(f'<text x="{left + 14}" y="{ly}">{esc(name)}</text>')
    out.append("</svg>")
    return "\n".join(out)
