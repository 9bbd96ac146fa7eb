"""CSV export whose cells cannot run as spreadsheet formulas.

Team and method names are user input; a cell such as ``=HYPERLINK(...)`` opened in a spreadsheet
would execute. Following OWASP's "CSV Injection" guidance, every text cell that starts with one of
``= + - @``, a tab or a carriage return is prefixed with a single quote, and every cell is quoted.
Numbers are written as numbers (a negative *number* is data, not a formula), so that exported
boards stay sortable in a spreadsheet; a negative number written as text is still escaped.
"""
from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Sequence

#: first characters that make a spreadsheet treat a cell as a formula (OWASP)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: object) -> str | int | float:
    """One cell made safe: numbers pass through, None and NaN become "", text is neutralised.

    >>> safe_cell("=1+2")
    "'=1+2"
    >>> safe_cell(-0.5)
    -0.5
    >>> safe_cell(None)
    ''
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
            return ""
        return value
    text = str(value)
    if text.startswith(FORMULA_START):
        return "'" + text
    return text


def to_csv(rows: Iterable[Sequence[object]], *, header: Sequence[str] | None = None) -> str:
    """Render rows (sequences of cells) as CSV text with every cell passed through `safe_cell`.

    Every cell is quoted (``csv.QUOTE_NONNUMERIC`` keeps numbers bare) and lines end in CRLF as
    RFC 4180 says.
    """
    buf = io.StringIO()
    writer = csv.writer(buf, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\r\n")
    if header is not None:
        writer.writerow([safe_cell(h) for h in header])
    for row in rows:
        if isinstance(row, (str, bytes)):
            raise TypeError(f"a CSV row must be a sequence of cells, got the string {row!r}")
        writer.writerow([safe_cell(c) for c in row])
    return buf.getvalue()
