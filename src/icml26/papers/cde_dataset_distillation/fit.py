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

# fit_power_floor lives in the shared icml26.scaling; re-exported here for this paper's modules
from icml26.scaling import fit_power_floor as fit_power_floor
from icml26.scaling import samples_to_reach


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
