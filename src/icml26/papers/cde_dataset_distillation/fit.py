"""The scaling-law fit Delta(k) = A k^-alpha + F with A, F >= 0 and alpha in a box, and the
coverage-law read-outs (numpy only).

``fit_power_floor`` solves the bounded least-squares problem of scipy.optimize.curve_fit with
bounds exactly, by profiling: for a fixed alpha the model is linear in (A, F), so the
non-negative least-squares solution has a closed form (interior, A = 0 or F = 0); the profile
SSE(alpha) is scanned on a grid and refined by golden-section search around the best grid
point. This finds the global optimum on the box (curve_fit, a local method, can stop in a
worse one) and is vectorised over many curves at once (bootstrap resamples). Tested against
curve_fit on curves with known (A, alpha, F). A shared-block candidate for icml26.scaling.
"""

from __future__ import annotations

import math

import numpy as np

from icml26.scaling import samples_to_reach

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


def fit_resamples(k, G, draws, bounds=(0.05, 2.0)) -> dict:
    """fit_power_floor of the mean curve of G[draw] for every row of ``draws`` (resampled
    seed indices); each distinct multiset of seeds is fitted once (a mean does not depend on
    the order), so 2000 resamples of 5 seeds cost at most 126 fits."""
    G = np.asarray(G, dtype=float)
    keys, inverse = np.unique(np.sort(draws, axis=1), axis=0, return_inverse=True)
    fits = fit_power_floor(k, G[keys].mean(1), bounds)
    return {name: v[np.ravel(inverse)] for name, v in fits.items()}


def floor_interval(k, G, bounds=(0.05, 2.0), n_boot: int = 2000, seed: int = 0):
    """(point floor, 2.5%, 97.5%) of the fitted floor F of the seed-mean curve, percentile
    bootstrap over the rows (seeds) of G (n_seeds, n_k); all resamples fitted in one call."""
    G = np.asarray(G, dtype=float)
    point = fit_power_floor(k, G.mean(0), bounds)["F"]
    if len(G) < 3:
        return point, math.nan, math.nan
    draws = np.random.default_rng(seed).integers(0, len(G), size=(n_boot, len(G)))
    F = fit_resamples(k, G, draws, bounds)["F"]
    F = F[np.isfinite(F)]
    if F.size < 0.95 * n_boot:
        return point, math.nan, math.nan
    lo, hi = np.quantile(F, [0.025, 0.975])
    return point, float(lo), float(hi)


def half_rate_excess(k, y, floor: float) -> float:
    """max over grid points of Delta(k) - [(Delta(k_min) - F) (k / k_min)^-1/2 + F + 0.01]:
    <= 0 when every point lies under the k^-1/2 envelope through the first point (claim 2)."""
    k = np.asarray(k, dtype=float)
    y = np.asarray(y, dtype=float)
    bound = (y[0] - floor) * (k / k[0]) ** -0.5 + floor + 0.01
    return float(np.max(y - bound))


def required_size(k, gap, eps: float) -> tuple[float, int]:
    """k* = smallest k with gap <= eps (linear interpolation in log k; icml26.scaling), and a
    censoring sign: +1 never reached (k* >= k_max, entered at k_max), -1 reached already at
    k_min (k* <= k_min), 0 exact."""
    k = np.asarray(k, dtype=float)
    v = samples_to_reach(k, gap, eps, higher_is_better=False)
    if not np.isfinite(v):
        return float(k[-1]), 1
    if v == k[0]:
        return float(k[0]), -1
    return float(v), 0


def linear_fit(x, y) -> tuple[float, float, float]:
    """(slope, intercept, R^2) of the least-squares line y = a x + b."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.size < 2 or np.ptp(x) == 0:
        return math.nan, math.nan, math.nan
    a, b = np.polyfit(x, y, 1)
    sst = float(((y - y.mean()) ** 2).sum())
    sse = float(((y - a * x - b) ** 2).sum())
    return float(a), float(b), (1.0 - sse / sst) if sst > 0 else math.nan
