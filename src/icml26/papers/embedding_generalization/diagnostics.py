"""The embedding diagnostics of one trained model, and the competing predictors.

- ``twonn_id``: TwoNN intrinsic dimension (Facco et al. 2017), maximum-likelihood form
  (with the dropped 10% treated as censored; see its docstring).
- ``pca_dim``: number of principal components explaining a fraction (0.9) of the variance.
- ``w1_exact``: 1-Wasserstein distance between two equal-size uniform point clouds, solved
  exactly as an assignment problem (for uniform weights and equal sizes an optimal transport
  plan is a permutation, Birkhoff-von Neumann).
- ``w1_curve`` / ``w1_slope``: W1 between two disjoint random m-subsets of a pool, for each m,
  and the log-log slope b (theory: b ~ -1/d for d > 2, Weed & Bach 2019).
- ``head_lipschitz``: sqrt(2) ||W_head||_2, the Lipschitz constant of embedding -> CE loss.
- ``class_matched_w1``: W1 between the validation embeddings and a class-matched subsample of
  the remaining held-out pool (the post-hoc bound's W1 term).
- ``spectral_product`` and ``n_params``: the norm-based and parameter-count baselines.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

from icml26.scaling import loglog_fit


def twonn_id(x: np.ndarray, discard: float = 0.1, censored: bool = True) -> float:
    """TwoNN: mu_i = r2_i / r1_i (2nd over 1st nearest-neighbour Euclidean distance), with
    duplicate points removed; mu follows a Pareto law P(mu > t) = t^(-d). The fraction
    ``discard`` of largest mu_i is dropped and d is estimated by maximum likelihood.

    The spec writes the estimate as d_hat = N' / sum_{kept} log mu_i. Read literally, that is
    the untruncated MLE applied to truncated data: for a Pareto law it overestimates d by the
    constant factor 1 / (1 - discard ln(1/discard) / (1 - discard)) ~ 1.34, whatever d is
    (tested). INFERRED fix: the MLE that treats the dropped points as right-censored at the
    cut mu_c, d_hat = N' / (sum_{kept} log mu_i + (N - N') log mu_c), which is consistent.
    ``censored=False`` gives the literal form. Rank correlations are the same for both,
    since the factor does not depend on d."""
    x = np.unique(np.asarray(x, dtype=float), axis=0)
    if len(x) < 3:
        return float("nan")
    d2 = cdist(x, x, "sqeuclidean")
    np.fill_diagonal(d2, np.inf)
    two = np.partition(d2, 1, axis=1)[:, :2]
    r1, r2 = np.sqrt(two[:, 0]), np.sqrt(two[:, 1])
    log_mu = np.sort(np.log(r2 / r1))
    n_keep = int(np.floor(len(log_mu) * (1.0 - discard)))
    s = float(log_mu[:n_keep].sum())
    if censored and n_keep < len(log_mu):
        s += (len(log_mu) - n_keep) * float(log_mu[n_keep - 1])
    return float(n_keep / s) if s > 0 else float("nan")


def pca_dim(x: np.ndarray, frac: float = 0.9) -> int:
    """Smallest number of principal components whose explained variance reaches ``frac``."""
    x = np.asarray(x, dtype=float)
    xc = x - x.mean(axis=0)
    ev = np.linalg.svd(xc, compute_uv=False) ** 2
    if ev.sum() <= 0:
        return 0
    cum = np.cumsum(ev) / ev.sum()
    return int(np.searchsorted(cum, frac - 1e-12) + 1)


def w1_exact(a: np.ndarray, b: np.ndarray) -> float:
    """W1 between the uniform empirical measures of two equal-size clouds (Euclidean cost)."""
    if len(a) != len(b):
        raise ValueError(f"w1_exact needs equal sizes, got {len(a)} and {len(b)}")
    cost = cdist(a, b, "euclidean")
    r, c = linear_sum_assignment(cost)
    return float(cost[r, c].mean())


def w1_curve(pool: np.ndarray, ms, repeats: int, rng: np.random.Generator) -> np.ndarray:
    """Mean over ``repeats`` of W1 between two disjoint random m-subsets of ``pool``, per m."""
    out = []
    for m in ms:
        m = int(m)
        if 2 * m > len(pool):
            raise ValueError(f"pool of {len(pool)} points cannot give two disjoint {m}-subsets")
        vals = []
        for _ in range(repeats):
            idx = rng.permutation(len(pool))[: 2 * m]
            vals.append(w1_exact(pool[idx[:m]], pool[idx[m:]]))
        out.append(np.mean(vals))
    return np.asarray(out)


def w1_slope(ms, w1) -> float:
    """Least-squares slope b of log W1 against log m (icml26.scaling.loglog_fit)."""
    w1 = np.asarray(w1, dtype=float)
    if np.any(w1 <= 0):
        return float("nan")
    return loglog_fit(ms, w1)[0]


def head_lipschitz(w_head: np.ndarray) -> float:
    """Lipschitz constant of h -> CE(W^T h + b, y): sqrt(2) ||W_head||_2, since the gradient of
    cross-entropy in the logits, p - e_y, has Euclidean norm at most sqrt(2)."""
    return float(np.sqrt(2.0) * np.linalg.norm(w_head, ord=2))


def class_matched_w1(e_val, y_val, e_rest, y_rest, rng: np.random.Generator) -> float:
    """W1 between the validation embeddings and an equal-size subsample of the remaining pool
    with the same class counts (INFERRED: the spec's class matching; each class draws its
    validation count from the rest of that class without replacement)."""
    idx = []
    for c in np.unique(y_val):
        need = int(np.sum(y_val == c))
        cand = np.flatnonzero(y_rest == c)
        if len(cand) < need:
            raise ValueError(f"class {c}: {len(cand)} pool points for {need} validation points")
        idx.append(rng.choice(cand, size=need, replace=False))
    return w1_exact(e_val, e_rest[np.concatenate(idx)])


def spectral_product(weights) -> float:
    """Product of the spectral norms of all weight matrices (Bartlett et al. 2017 style)."""
    return float(np.prod([np.linalg.norm(w, ord=2) for w in weights]))


def n_params(params) -> int:
    return int(sum(p.size for p in params))
