"""Statistics over seeds shared by every paper's claims and reports.

- ``mean_ci``: the Student-t 95% interval of a mean over seeds (or of a paired difference).
  A non-finite per-seed value is a failed run: it is counted in ``n_failed`` and left out of
  the mean, and the claim checks make sure it can never help a claim pass.
- ``bootstrap_ci``: a 95% percentile-bootstrap interval of any statistic pooled over units
  (seeds, or instances where the statistic pools instances), resampling the units with a
  fixed generator so the interval is the same bytes on every run.
- ``rankdata`` and ``spearman``: average ranks (as ``scipy.stats.rankdata``) and the Spearman
  rank correlation (as ``scipy.stats.spearmanr``), in plain numpy because bootstraps call them
  thousands of times and ``scipy.stats`` costs about a CPU-second to import.

The t quantile is ``scipy.special.stdtrit``, the function ``scipy.stats.t.ppf`` evaluates; it
is imported instead of ``scipy.stats`` because that import costs about a CPU-second a job.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20260101  # fixed: the same interval for the same data on every run


@lru_cache(maxsize=None)
def t975(df: int) -> float:
    """Two-sided 95% Student-t quantile t_{0.975, df}; NaN for df < 1."""
    if df < 1:
        return math.nan
    from scipy.special import stdtrit

    return float(stdtrit(df, 0.975))


@dataclass(frozen=True)
class Interval:
    mean: float
    lo: float
    hi: float
    n: int  # finite values the interval rests on
    n_failed: int = 0  # non-finite values (failed runs), not in the mean

    def fmt(self, digits: int = 3) -> str:
        failed = f" ({self.n_failed} failed)" if self.n_failed else ""
        if self.n < 2 or not np.isfinite(self.lo):
            return f"{self.mean:.{digits}g}{failed}"
        half = (self.hi - self.lo) / 2
        return f"{self.mean:.{digits}g} ± {half:.2g}{failed}"


def mean_ci(values) -> Interval:
    """Mean and 95% t-interval of the finite values; non-finite ones are counted as failed.

    The interval is NaN with fewer than 2 finite values.
    """
    x = np.asarray(values, dtype=float).ravel()
    finite = np.isfinite(x)
    n_failed = int((~finite).sum())
    x = x[finite]
    n = x.size
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0, n_failed)
    m = float(x.mean())
    if n < 2:
        return Interval(m, math.nan, math.nan, n, n_failed)
    half = t975(n - 1) * float(x.std(ddof=1)) / math.sqrt(n)
    return Interval(m, m - half, m + half, n, n_failed)


def paired_diff_ci(a, b) -> Interval:
    """Interval of mean(a - b) where a[i], b[i] come from the same seed."""
    a = np.asarray(a, dtype=float).ravel()
    b = np.asarray(b, dtype=float).ravel()
    if a.shape != b.shape:
        raise ValueError(f"paired samples differ in length: {a.size} vs {b.size}")
    return mean_ci(a - b)


def bootstrap_ci(stat, n_units: int, n_boot: int = BOOTSTRAP_RESAMPLES,
                 seed: int = BOOTSTRAP_SEED) -> Interval:
    """Percentile-bootstrap 95% interval of ``stat`` over ``n_units`` resampled units.

    ``stat(idx)`` computes the pooled statistic from the units at the integer indices ``idx``
    (with repeats); ``stat(np.arange(n_units))`` is the point estimate. Resamples whose
    statistic is not finite (say a slope through one distinct point) are counted in
    ``n_failed``; if more than 5% of them fail, the interval is NaN (undecidable).
    """
    n_units = int(n_units)
    point = float(stat(np.arange(n_units)))
    if n_units < 2 or not np.isfinite(point):
        return Interval(point, math.nan, math.nan, n_units, 0)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_units, size=(n_boot, n_units))
    boot = np.array([float(stat(idx)) for idx in draws])
    ok = np.isfinite(boot)
    n_bad = int((~ok).sum())
    if n_bad > 0.05 * n_boot:
        return Interval(point, math.nan, math.nan, n_units, n_bad)
    lo, hi = np.quantile(boot[ok], [0.025, 0.975])
    return Interval(point, float(lo), float(hi), n_units, n_bad)


def loglog_slope(x, y) -> float:
    """Least-squares slope of log(y) against log(x)."""
    lx = np.log(np.asarray(x, dtype=float))
    ly = np.log(np.asarray(y, dtype=float))
    return float(np.polyfit(lx, ly, 1)[0])


def rankdata(x) -> np.ndarray:
    """Ranks 1..n of a 1-d array, tied values sharing their average rank."""
    x = np.asarray(x, dtype=float)
    n = x.size
    order = np.argsort(x, kind="stable")
    xs = x[order]
    new = np.r_[True, xs[1:] != xs[:-1]] if n else np.empty(0, bool)
    starts = np.flatnonzero(new)
    ends = np.r_[starts[1:], n]
    ranks = np.empty(n)
    ranks[order] = ((starts + 1 + ends) / 2.0)[np.cumsum(new) - 1]  # mean of starts+1..ends
    return ranks


def spearman(x, y) -> float:
    """Spearman rank correlation: the Pearson correlation of the average ranks. NaN with
    fewer than 3 pairs or when either side is constant (undefined)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    rx, ry = rankdata(x), rankdata(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    return float(rx @ ry / np.sqrt((rx @ rx) * (ry @ ry)))


def geometric_mean(values) -> float:
    x = np.asarray(values, dtype=float).ravel()
    return float(np.exp(np.mean(np.log(x))))
