"""The spec's simulation: covariates, cause-specific hazards, censoring, true CIFs.

x ~ N(0, I_8); for t = 1..T and k = 1, 2:
    eta_k(t, x) = a_k + 0.3 log t + beta_k . x + 0.5 g_k(x),  g_1 = x1 x2, g_2 = sin(x3),
    h_k = exp(eta_k) / (1 + sum_j exp(eta_j))  (class 0 = no event has logit 0).
a_1, a_2 are set once by bisection on 10^5 draws so that the population CIF_1(T) ~ 0.08 and
CIF_2(T) ~ 0.05 (rare events): ``calibrate_intercepts`` did it once (about a CPU-minute) and
INTERCEPTS holds its result for T = 10 (a test checks the CIFs it gives).
Censoring: independent drop-out with probability 0.03 per interval (after surviving it)
plus administrative censoring at T.
Populations: "local" (= compatible teacher's), "incompatible" (beta_1 signs flipped on
x1..x3 and g_1 removed); the "coarse" teacher's cohort is the local population with the
status seen as any-event.
"""

from __future__ import annotations

import numpy as np

from .survival import cif, softmax

D = 8
INTERCEPTS = {10: (-5.82807343, -6.10443951)}  # calibrate_intercepts(10), see module doc
BETA = np.array([[0.8, -0.6, 0.5, 0, 0.4, 0, 0, 0],
                 [0, 0.5, -0.7, 0.6, 0, 0, 0.3, 0]], dtype=float)


def true_logits(x: np.ndarray, a, T: int, population: str = "local") -> np.ndarray:
    """(..., n, T, 3) logits of the generator (class 0 = no event, logit 0)."""
    beta = BETA.copy()
    g1 = x[..., 0] * x[..., 1]
    if population == "incompatible":
        beta[0, :3] *= -1
        g1 = np.zeros_like(g1)
    elif population != "local":
        raise ValueError(f"unknown population {population!r}; allowed: local, incompatible")
    g2 = np.sin(x[..., 2])
    lin = np.stack([x @ beta[0] + 0.5 * g1, x @ beta[1] + 0.5 * g2], axis=-1)   # (..., n, 2)
    logt = 0.3 * np.log(np.arange(1, T + 1))
    eta = np.asarray(a)[None, :] + logt[:, None] + lin[..., None, :]            # (..., n, T, 2)
    return np.concatenate([np.zeros(eta.shape[:-1] + (1,)), eta], axis=-1)


def true_hazards(x, a, T, population="local"):
    return softmax(true_logits(x, a, T, population))


def calibrate_intercepts(T: int, target=(0.08, 0.05), n: int = 100_000, seed: int = 20260,
                         rounds: int = 8, iters: int = 40) -> np.ndarray:
    """a_1, a_2 by bisection (alternating, one cause at a time) on n fixed covariate draws so
    that the population CIFs at T equal ``target``. The CIFs are computed exactly given x."""
    x = np.random.default_rng(seed).standard_normal((n, D))
    a = np.array([-4.0, -4.0])
    for _ in range(rounds):
        for k in range(2):
            lo, hi = -15.0, 5.0
            for _ in range(iters):
                a[k] = 0.5 * (lo + hi)
                c = cif(true_hazards(x, a, T))[:, -1, k].mean()
                lo, hi = (a[k], hi) if c < target[k] else (lo, a[k])
            a[k] = 0.5 * (lo + hi)
    return a


def simulate(x, a, T: int, rng: np.random.Generator, population: str = "local",
             dropout: float = 0.03, censor: bool = True):
    """Observed (time, status) per subject: time in 1..T, status 0 (censored) or the cause.

    Interval by interval: the event class is drawn from h(t|x); a subject with no event then
    drops out with probability ``dropout`` (censored at the end of t). Without censoring
    (test set), a subject with no event by T gets time T + 1, status 0.
    """
    h = true_hazards(x, a, T, population)              # (n, T, 3)
    n = x.shape[0]
    u = rng.random((n, T))
    cum = np.cumsum(h, axis=-1)
    cls = (u[..., None] > cum[..., :-1]).sum(axis=-1)  # (n, T) event class per interval
    drop = rng.random((n, T)) < dropout if censor else np.zeros((n, T), dtype=bool)
    stop = (cls > 0) | drop
    stop[:, -1] |= censor                               # administrative censoring at T
    any_stop = stop.any(axis=1)
    first = np.where(any_stop, stop.argmax(axis=1), T)
    time = first + 1
    status = np.where(any_stop, cls[np.arange(n), np.minimum(first, T - 1)], 0)
    return time.astype(np.int64), status.astype(np.int64)
