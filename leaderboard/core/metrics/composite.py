"""TriDF challenge composite score, per modality (the TRIDENT kit's ``compute_tcs_from_tasks``).

TCS = 0.4 S_Det + 0.3 S_Hal + 0.3 S_Perc on a 0-100 scale, where
S_Det = 100 ACC(type B), S_Hal = 100 (F0.5_A + F0.5_B) / 2, S_Perc = 100 (0.5 ACC_TFQ + 0.5 MCQ_clamped).
Ties are broken by S_Det, then S_Hal, then S_Perc (``tcs_sort_key``).
"""
from __future__ import annotations

import math
from typing import NamedTuple


class TCS(NamedTuple):
    tcs: float
    s_det: float
    s_hal: float
    s_perc: float


def _component(name: str, value) -> float:
    if value is None:
        return math.nan
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number in [0, 1] or None, got {value!r}") from None
    if not math.isnan(out) and not 0.0 <= out <= 1.0:
        raise ValueError(f"{name} must be a number in [0, 1] or None, got {value!r}")
    return out


def tridf_tcs(*, acc_typeb, f05_a, f05_b, acc_tfq, mcq_clamped) -> TCS:
    """The composite and its three parts; inputs are fractions in [0, 1].

    A missing input (None or NaN) makes its part and the TCS NaN: the composite is only shown
    for a submission that covers all four tasks of the modality.

    >>> tridf_tcs(acc_typeb=0.8, f05_a=0.5, f05_b=0.3, acc_tfq=0.7, mcq_clamped=0.5)
    TCS(tcs=62.0, s_det=80.0, s_hal=40.0, s_perc=60.0)
    """
    det = _component("acc_typeb", acc_typeb)
    fa, fb = _component("f05_a", f05_a), _component("f05_b", f05_b)
    tfq, mcq = _component("acc_tfq", acc_tfq), _component("mcq_clamped", mcq_clamped)
    # the kit's order of operations (compute_tcs_from_tasks), so the floats are its floats
    s_det = 100.0 * det
    s_hal = 100.0 * ((fa + fb) / 2.0)
    s_perc = 100.0 * ((0.5 * tfq) + (0.5 * mcq))
    tcs = (0.4 * s_det) + (0.3 * s_hal) + (0.3 * s_perc)
    return TCS(tcs=tcs, s_det=s_det, s_hal=s_hal, s_perc=s_perc)


def tcs_sort_key(score: TCS) -> tuple[float, float, float, float]:
    """Sort key, best first with ``sorted(..., key=tcs_sort_key)``: TCS, then S_Det, S_Hal, S_Perc.

    NaN parts sort after every number (an "n/a" never ranks above a number).

    >>> a = TCS(60.0, 70.0, 50.0, 55.0); b = TCS(60.0, 72.0, 40.0, 60.0)
    >>> [s.s_det for s in sorted([a, b], key=tcs_sort_key)]
    [72.0, 70.0]
    """
    return tuple(math.inf if math.isnan(v) else -v for v in score)
