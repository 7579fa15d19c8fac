"""Scaling laws and sample complexity: log-log slopes over seeds, samples needed to reach a
target. numpy only; used by the statistical-learning-theory papers and later ones.

- ``loglog_fit``: least-squares line through (log x, log y): slope and intercept.
- ``seed_slopes`` / ``slope_interval``: one slope per seed, then the mean with a 95%
  t-interval over seeds (the project's rule for claims about an exponent).
- ``samples_to_reach``: the smallest n at which a measured curve reaches a target, by linear
  interpolation in log n between the last grid point below and the first at or above it.
- ``fit_power_floor``: least squares for y = A k^-alpha + F with A, F >= 0 and alpha in bounds
  (or fixed), for one curve or a batch: a scaling law with an irreducible floor.
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


GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def _nnls2(x, y):
    """min ||y - A x - F||^2 over A, F >= 0 for x (..., n), y (..., n): (A, F, sse)."""
    n = x.shape[-1]
    sx, sy = x.sum(-1), y.sum(-1)
    sxx, sxy = (x * x).sum(-1), (x * y).sum(-1)
    det = n * sxx - sx * sx
    with np.errstate(divide="ignore", invalid="ignore"):
        a_free = np.where(det > 0, (n * sxy - sx * sy) / det, 0.0)
    f_free = (sy - a_free * sx) / n
    a_only = np.maximum(np.where(sxx > 0, sxy / np.where(sxx > 0, sxx, 1.0), 0.0), 0.0)
    f_only = np.maximum(sy / n, 0.0)
    cands = [(a_free, f_free), (a_only, np.zeros_like(a_only)), (np.zeros_like(f_only), f_only)]
    best_a, best_f, best_sse = None, None, None
    for a, f in cands:
        ok = (a >= 0) & (f >= 0)
        sse = ((y - a[..., None] * x - f[..., None]) ** 2).sum(-1)
        sse = np.where(ok, sse, np.inf)
        if best_sse is None:
            best_a, best_f, best_sse = a, f, sse
        else:
            take = sse < best_sse
            best_a = np.where(take, a, best_a)
            best_f = np.where(take, f, best_f)
            best_sse = np.where(take, sse, best_sse)
    return best_a, best_f, best_sse


def fit_power_floor(k, y, alpha_bounds=(0.05, 2.0), alpha=None, grid: int = 64,
                    iters: int = 40) -> dict:
    """Least-squares fit of y = A k^-alpha + F (A, F >= 0, alpha in ``alpha_bounds``; or alpha
    fixed) to one curve y (n,) or many (B, n). Returns arrays (scalars for one curve):
    A, alpha, F, sse, r2 (1 - SSE / total sum of squares about the mean)."""
    k = np.asarray(k, dtype=float)
    y = np.asarray(y, dtype=float)
    single = y.ndim == 1
    Y = y[None] if single else y
    lk = np.log(k)
    if alpha is not None:
        al = np.full(len(Y), float(alpha))
    else:
        lo, hi = alpha_bounds
        g = np.linspace(lo, hi, grid)
        x = np.exp(-g[:, None] * lk[None])                               # (G, n)
        _, _, sse = _nnls2(x[None], Y[:, None, :])                       # (B, G)
        i = np.argmin(sse, axis=1)
        a = g[np.maximum(i - 1, 0)]
        b = g[np.minimum(i + 1, grid - 1)]

        def prof(al):
            return _nnls2(np.exp(-al[:, None] * lk[None]), Y)[2]

        c = b - GOLDEN * (b - a)
        d = a + GOLDEN * (b - a)
        fc, fd = prof(c), prof(d)
        for _ in range(iters):
            left = fc < fd
            b = np.where(left, d, b)
            a = np.where(left, a, c)
            nc = b - GOLDEN * (b - a)
            nd = a + GOLDEN * (b - a)
            c, d = np.where(left, nc, d), np.where(left, c, nd)
            fc, fd = np.where(left, prof(c), fd), np.where(left, fc, prof(d))
        al = np.where(fc < fd, c, d)
        # keep the grid point if it is better than the refined one (flat profiles)
        gi = g[i]
        al = np.where(prof(gi) < prof(al), gi, al)
    A, F, sse = _nnls2(np.exp(-al[:, None] * lk[None]), Y)
    sst = ((Y - Y.mean(1, keepdims=True)) ** 2).sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        r2 = np.where(sst > 0, 1.0 - sse / sst, np.nan)
    bad = ~np.isfinite(Y).all(1)
    out = {"A": A, "alpha": al, "F": F, "sse": sse, "r2": r2}
    for key in out:
        out[key] = np.where(bad, np.nan, out[key])
    return {key: float(v[0]) for key, v in out.items()} if single else out
