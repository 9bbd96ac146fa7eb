"""The detectors x generators matrix as server-side SVG (issue 37), in the style of `plots`.

One row per submission, one column per generator (by the date it became public), each cell the
task's headline on that generator's items, coloured by value over the metric's declared range;
the hover text (``<title>``) gives the value, its 95% CI and n. A cell unseen by that detector
(the generator became public after the submission was made) carries a corner mark; a cell
without a value (fewer items than the minimum, or none) is grey. Every text is XML-escaped.
"""
from __future__ import annotations

from leaderboard.server.boards.plots import _mix, _svg_open, _title_width, esc, format_value

#: the corner mark of an unseen cell (Okabe-Ito vermillion: visible on white and on deep blue)
UNSEEN_INK = "#D55E00"


def _ci(cell: dict, fmt: str) -> str:
    if cell.get("ci_low") is None:
        return ""
    return f" [{format_value(cell['ci_low'], fmt)}, {format_value(cell['ci_high'], fmt)}]"


def matrix_svg(view: dict, *, title: str, fmt: str = "pct", lower: float | None = 0.0,
               upper: float | None = 1.0) -> str:
    """The matrix of a `leaderboard.server.boards.generators.generator_view` (rows in its
    order). ``lower``/``upper``: the colour scale (the metric's range; None: the observed)."""
    gens = view["generators"]
    rows = [r for r in view["rows"] if r["cells"]]
    nums = [c["value"] for r in rows for c in r["cells"] if c["value"] is not None]
    lo = lower if lower is not None else (min(nums) if nums else 0.0)
    hi = upper if upper is not None else (max(nums) if nums else 1.0)
    span = (hi - lo) or 1.0
    labels = [f"{r['team']['name']} · {r['method_name']}"[:40] for r in rows]
    cell_w, cell_h = 76, 34
    label_w = max([len(s) for s in labels] + [8]) * 6 + 12
    top = 62
    width = max(label_w + cell_w * max(len(gens), 1) + 12, _title_width(title))
    height = top + cell_h * len(rows) + 34
    out = _svg_open(width, height, title)
    for j, g in enumerate(gens):
        x = label_w + cell_w * j + cell_w / 2
        out.append(f'<text x="{x:.0f}" y="{top - 20}" text-anchor="middle">'
                   f'{esc(g["name"][:12])}<title>{esc(g["name"])}</title></text>')
        out.append(f'<text x="{x:.0f}" y="{top - 7}" text-anchor="middle" font-size="9" '
                   f'fill="#555">{esc(g["date"] or "undated")}</text>')
    # the cells' texts are centred by one group (their markup is most of a matrix page)
    out.append('<g text-anchor="middle">')
    for i, (r, label) in enumerate(zip(rows, labels)):
        y = top + cell_h * i
        out.append(f'<text x="{label_w - 6}" y="{y + 20}" text-anchor="end">{esc(label)}</text>')
        for j, c in enumerate(r["cells"]):
            x = label_w + cell_w * j
            v = c["value"]
            text = format_value(v, fmt) if v is not None else "—"
            if v is None:
                fill, ink = "#ddd", "#333"
            else:
                t = (v - lo) / span
                fill, ink = _mix(t), ("#fff" if t > 0.55 else "#000")
            g = gens[j]
            hover = (f"{r['team']['name']} · {r['method_name']} / {g['name']}: "
                     + (f"{text}{_ci(c, fmt)}" if v is not None else "no value (too few items)")
                     + f", n={c['n']}" + ("; unseen by this submission" if c["unseen"] else ""))
            out.append(f'<g><title>{esc(hover)}</title>'
                       f'<rect x="{x}" y="{y}" width="{cell_w - 1}" height="{cell_h - 1}" '
                       f'fill="{fill}"/>')
            if c["unseen"]:
                out.append(f'<polygon points="{x + cell_w - 15},{y} {x + cell_w - 1},{y} '
                           f'{x + cell_w - 1},{y + 14}" fill="{UNSEEN_INK}"/>')
            cx = f"{x + cell_w / 2:.0f}"
            out.append(f'<text x="{cx}" y="{y + 16}" fill="{ink}">{esc(text)}'
                       f'<tspan x="{cx}" dy="12" font-size="9">n={c["n"]}</tspan></text></g>')
    out.append("</g>")
    ly = top + cell_h * len(rows) + 18
    out.append(f'<polygon points="{label_w},{ly - 10} {label_w + 12},{ly - 10} '
               f'{label_w + 12},{ly + 2}" fill="{UNSEEN_INK}"/>'
               f'<text x="{label_w + 18}" y="{ly}">unseen by that submission (made public '
               f'after it was made); grey: no value; colour: lowest to highest '
               f'value shown</text>')
    out.append("</svg>")
    return "\n".join(out)
