"""Statistics over seeds shared by every paper's claims and reports.

Intervals are Student-t 95% intervals of a mean over seeds (or of a paired difference over
seeds). The t quantiles are tabulated so that this module needs numpy only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# two-sided 95% Student-t quantiles t_{0.975, df} for df = 1..30; beyond that the normal 1.960.
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)


def t975(df: int) -> float:
    if df < 1:
        return math.nan
    return _T975[df - 1] if df <= len(_T975) else 1.960


@dataclass(frozen=True)
class Interval:
    mean: float
    lo: float
    hi: float
    n: int

    def fmt(self, digits: int = 3) -> str:
        if self.n < 2 or not np.isfinite(self.lo):
            return f"{self.mean:.{digits}g}"
        half = (self.hi - self.lo) / 2
        return f"{self.mean:.{digits}g} ± {half:.2g}"


def mean_ci(values) -> Interval:
    """Mean and 95% t-interval of the finite values (NaN interval when fewer than 2)."""
    x = np.asarray(values, dtype=float).ravel()
    x = x[np.isfinite(x)]
    n = x.size
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0)
    m = float(x.mean())
    if n < 2:
        return Interval(m, math.nan, math.nan, n)
    half = t975(n - 1) * float(x.std(ddof=1)) / math.sqrt(n)
    return Interval(m, m - half, m + half, n)


def paired_diff_ci(a, b) -> Interval:
    """Interval of mean(a - b) where a[i], b[i] come from the same seed."""
    a = np.asarray(a, dtype=float).ravel()
    b = np.asarray(b, dtype=float).ravel()
    if a.shape != b.shape:
        raise ValueError(f"paired samples differ in length: {a.size} vs {b.size}")
    return mean_ci(a - b)


def loglog_slope(x, y) -> float:
    """Least-squares slope of log(y) against log(x)."""
    lx = np.log(np.asarray(x, dtype=float))
    ly = np.log(np.asarray(y, dtype=float))
    return float(np.polyfit(lx, ly, 1)[0])


def geometric_mean(values) -> float:
    x = np.asarray(values, dtype=float).ravel()
    return float(np.exp(np.mean(np.log(x))))
