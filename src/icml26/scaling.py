"""Scaling laws and sample complexity: log-log slopes over seeds, samples needed to reach a
target. numpy only; used by the statistical-learning-theory papers and later ones.

- ``loglog_fit``: least-squares line through (log x, log y): slope and intercept.
- ``seed_slopes`` / ``slope_interval``: one slope per seed, then the mean with a 95%
  t-interval over seeds (the project's rule for claims about an exponent).
- ``samples_to_reach``: the smallest n at which a measured curve reaches a target, by linear
  interpolation in log n between the last grid point below and the first at or above it.
- ``bisect_grid``: the smallest grid value whose (monotone) predicate holds, with O(log) calls,
  for sample complexities that are expensive to evaluate at every grid point.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from .stats import Interval, mean_ci


def loglog_fit(x, y) -> tuple[float, float]:
    """(slope, intercept) of the least-squares line log y = slope · log x + intercept."""
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if x.size != y.size or x.size < 2:
        raise ValueError(f"need two or more (x, y) pairs of equal length, got {x.size}/{y.size}")
    if not (np.all(np.isfinite(x) & (x > 0)) and np.all(np.isfinite(y) & (y > 0))):
        raise ValueError("log-log fit needs positive, finite x and y")
    lx, ly = np.log(x), np.log(y)
    slope, intercept = np.polyfit(lx, ly, 1)
    return float(slope), float(intercept)


def seed_slopes(frame, x: str, y: str, seed: str = "seed") -> dict[int, float]:
    """Log-log slope of column ``y`` against ``x`` separately for each seed of a DataFrame."""
    return {int(s): loglog_fit(g[x], g[y])[0] for s, g in frame.groupby(seed, sort=True)}


def slope_interval(frame, x: str, y: str, seed: str = "seed") -> Interval:
    """Mean per-seed log-log slope with its 95% t-interval over seeds."""
    return mean_ci(list(seed_slopes(frame, x, y, seed).values()))


def samples_to_reach(ns: Sequence[float], values: Sequence[float], target: float,
                     higher_is_better: bool = True) -> float:
    """Smallest n at which ``values`` (measured at increasing ``ns``) reaches ``target``.

    Interpolates linearly in log n between the last point that misses the target and the
    first that reaches it (the first crossing); returns ns[0] if the first point already
    reaches it and NaN if no point does.
    """
    ns = np.asarray(ns, dtype=float)
    v = np.asarray(values, dtype=float)
    if ns.shape != v.shape or ns.size == 0:
        raise ValueError(f"ns and values must be non-empty and equally long: {ns.size}/{v.size}")
    if np.any(np.diff(ns) <= 0):
        raise ValueError("ns must be strictly increasing")
    ok = v >= target if higher_is_better else v <= target
    if not ok.any():
        return math.nan
    i = int(np.argmax(ok))
    if i == 0:
        return float(ns[0])
    v0, v1 = v[i - 1], v[i]
    frac = 1.0 if v1 == v0 else (target - v0) / (v1 - v0)
    if frac >= 1.0:                       # reached exactly at the grid point
        return float(ns[i])
    return float(np.exp(np.log(ns[i - 1]) + frac * (np.log(ns[i]) - np.log(ns[i - 1]))))


def bisect_grid(grid: Sequence[float], predicate: Callable[[float], bool]) -> tuple[float, int]:
    """(smallest grid value with predicate True, number of predicate calls), assuming the
    predicate is monotone (False ... False True ... True) on the sorted grid; (NaN, calls) if
    it fails at the last value."""
    grid = list(grid)
    lo, hi, calls = 0, len(grid) - 1, 1
    if not predicate(grid[hi]):
        return math.nan, calls
    while lo < hi:
        mid = (lo + hi) // 2
        calls += 1
        if predicate(grid[mid]):
            hi = mid
        else:
            lo = mid + 1
    return float(grid[lo]), calls


def geometric_grid(start: float, stop: float, num: int, integer: bool = True) -> np.ndarray:
    """``num`` values from ``start`` to ``stop`` equally spaced in log (rounded if integer;
    duplicates after rounding removed)."""
    g = np.geomspace(start, stop, num)
    return np.unique(np.round(g).astype(np.int64)) if integer else g
