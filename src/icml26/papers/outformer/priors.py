"""Synthetic outlier-detection priors (numpy): each draws one labelled task.

Five prior types, as in the official Outformer snapshot (psorus/Outformer 552dffcc,
data_priors/*.py), read for how each mechanism works and written here in our own words:

- ``gmm`` (FoMo-0D's prior): K ~ U{2..5} equally weighted diagonal Gaussians, means
  U(0,1) * U{-a..a} per coordinate (a ~ U{2..5}), variances U(0,1) * U{1..v} (v ~ U{2..5}).
  Outliers come from the same mixture with the variances of a random subspace S (|S| ~ U{1..d})
  inflated x5; an inlier must lie below the chi2_|S| 0.85 quantile of the squared Mahalanobis
  distance on S to its nearest component, an outlier above the 0.95 quantile to every one.
- ``dependence_copula`` / ``probabilistic_copula``: a Gaussian copula with an all-positive
  correlation (A A^T normalised, A ~ U(0,1)^(d x d)) and per-feature marginals from the
  official list {normal, beta, exponential, student-t, Gaussian mixture, beta mixture x2}.
  (The official mixture marginals are tabulated on a grid whose u-axis and x-axis are both
  linear, so they act as uniform marginals on [lo, hi]; reproduced as that.) Probabilistic
  outliers push k coordinates (k in [ceil(0.02 d), floor(0.2 d)], so 1 for d <= 9) of a copula
  draw into a marginal tail: u in [0, s/2] or [1 - s/2, 1], s ~ U(0.2, 0.4). Dependence
  outliers blend a contiguous block of rows of the Cholesky factor 97-99% towards the
  identity rows of a k x k block placed at the top-left (the official indexing: rows of the
  block past k are blended towards zero). No Mahalanobis filter (none in the official code).
- ``measure_scm`` / ``structure_scm``: a random MLP causal model fed a constant input of ones:
  L layers of width h (L, h discretised log-normals as in the official sampler, L h >= d),
  N(0,1) weights with 40% dropped, one activation per layer from {tanh, leaky ReLU, ELU,
  identity}, additive log-normal noise per node (log-mean U(-0.5,0.5), log-sd U(0.05,0.5));
  the features are d random nodes. Measurement outliers multiply each node's noise by 5 with
  probability 0.2 and keep a draw only if every inflated noise n satisfies
  |n - mu| >= mu + sigma (the official filter). Structure outliers zero or sign-flip each weight
  with |w| > 0.05 independently with probability max(0.03, 0.2 * 50 / (d + 50)).

Every function takes an explicit ``numpy.random.Generator``; nothing reads global state.
"""

from __future__ import annotations

import numpy as np
from scipy import special

PRIORS = ("gmm", "dependence_copula", "probabilistic_copula", "measure_scm", "structure_scm")
FAMILY = {"gmm": "gmm", "dependence_copula": "copula", "probabilistic_copula": "copula",
          "measure_scm": "scm", "structure_scm": "scm"}

_CHI2 = {}


def chi2_quantile(p: float, df: int) -> float:
    """chi2_df quantile at probability p (scipy.special.chdtri is the inverse survival)."""
    key = (p, df)
    if key not in _CHI2:
        _CHI2[key] = float(special.chdtri(df, 1.0 - p))
    return _CHI2[key]


def _fill(draw, accept, n: int, rng, max_rounds: int = 50):
    """Rejection sampling: ``draw(m)`` -> (m, d) candidates, ``accept(X)`` -> bool mask; the
    first n accepted rows (fewer only if ``max_rounds`` rounds never reach n)."""
    got, have = [], 0
    m = max(2 * n, 16)
    for _ in range(max_rounds):
        X = draw(m)
        keep = X[accept(X)]
        got.append(keep)
        have += len(keep)
        if have >= n:
            break
        m = min(4 * m, 20000)
    return np.concatenate(got)[:n]


# ----------------------------------------------------------------------------------- GMM
def gmm(d: int, n_in: int, n_out: int, rng: np.random.Generator):
    k = int(rng.integers(2, 6))
    a = int(rng.integers(2, 6))
    v = int(rng.integers(2, 6))
    means = rng.random((k, d)) * rng.integers(-a, a + 1, size=(k, d))
    var = rng.random((k, d)) * rng.integers(1, v + 1, size=(k, d))
    var[var == 0] = v / 2
    sub = np.sort(rng.permutation(d)[: int(rng.integers(1, d + 1))])
    lo = chi2_quantile(0.85, len(sub))
    hi = chi2_quantile(0.95, len(sub))
    inflate = np.ones(d)
    inflate[sub] = 5.0

    def draw(scale):
        def f(m):
            c = rng.integers(0, k, size=m)
            return means[c] + rng.standard_normal((m, d)) * np.sqrt(var[c] * scale)
        return f

    def min_d2(X):
        diff = X[:, None, sub] - means[None][:, :, sub]
        return (diff ** 2 / var[None][:, :, sub]).sum(-1).min(1)

    inl = _fill(draw(1.0), lambda X: min_d2(X) < lo, n_in, rng)
    out = _fill(draw(inflate), lambda X: min_d2(X) > hi, n_out, rng)
    return inl, out


# -------------------------------------------------------------------------------- copula
MARGINALS = ("normal", "beta", "beta_mix", "expo", "gauss_mix", "beta_mix", "student")


def _marginal(rng):
    kind = MARGINALS[int(rng.integers(0, len(MARGINALS)))]
    if kind == "normal":
        return ("normal", rng.uniform(-1, 1), rng.uniform(1.5, 2))
    if kind == "beta":
        return ("beta", rng.uniform(1, 5), rng.uniform(1, 5))
    if kind == "expo":
        return ("expo", rng.uniform(1, 2), 0.0)
    if kind == "student":
        return ("student", float(rng.integers(3, 11)), 0.0)
    ncomp = int(rng.integers(1, 4))
    if kind == "gauss_mix":
        mu = rng.uniform(-3, 3, ncomp)
        sd = rng.uniform(0.5, 1.5, ncomp)
        return ("uniform", float((mu - 5 * sd).min()), float((mu + 5 * sd).max()))
    return ("uniform", -5.0, 5.0)                     # beta mixture on loc -5, scale 10


def _to_marginal(z: np.ndarray, spec) -> np.ndarray:
    u = np.clip(special.ndtr(z), 1e-6, 1 - 1e-6)
    kind, a, b = spec
    if kind == "normal":
        return a + b * special.ndtri(u)
    if kind == "beta":
        return special.betaincinv(a, b, u)
    if kind == "expo":
        return -np.log1p(-u) / a
    if kind == "student":
        return special.stdtrit(a, u)
    return a + (b - a) * u


def copula(d: int, n_in: int, n_out: int, rng: np.random.Generator, outlier: str):
    A = rng.random((d, d))
    C = A @ A.T
    s = np.sqrt(np.diag(C))
    C = C / s[:, None] / s[None, :]
    np.fill_diagonal(C, 1.0)
    L = np.linalg.cholesky(C + 1e-6 * np.eye(d))
    specs = [_marginal(rng) for _ in range(d)]
    inl = rng.standard_normal((n_in, d)) @ L.T
    if outlier == "probabilistic":
        strength = rng.uniform(0.2, 0.4)
        out = rng.standard_normal((n_out, d)) @ L.T
        U = special.ndtr(out)
        kmin = max(1, int(np.ceil(0.02 * d)))
        kmax = max(kmin, int(np.floor(0.2 * d)))
        k = rng.integers(kmin, kmax + 1, size=n_out)
        rank = np.argsort(rng.random((n_out, d)), axis=1).argsort(axis=1)
        mask = rank < k[:, None]
        low = rng.random((n_out, d)) < 0.5
        push = strength * rng.random((n_out, d)) * 0.5
        U = np.where(mask & low, push, np.where(mask, 1.0 - push, U))
        out = special.ndtri(np.clip(U, 1e-12, 1 - 1e-12))
    elif outlier == "dependence":
        strength = rng.uniform(0.97, 0.99)
        lower = 1 + d // 3
        upper = min(1 + 2 * d // 3, d + 1)
        if lower == upper:
            upper += 1
        k = rng.integers(lower, upper, size=n_out)
        i0 = np.floor(rng.random(n_out) * (d - k + 1)).astype(int)
        rows = np.arange(d)
        in_block = (rows[None] >= i0[:, None]) & (rows[None] < (i0 + k)[:, None])   # (n, d)
        target = np.zeros((n_out, d, d))
        diag_ok = rows[None] < k[:, None]                                           # top-left k
        target[:, rows, rows] = diag_ok.astype(float)
        lower_tri = rows[None, :, None] >= rows[None, None, :]
        where = in_block[:, :, None] & lower_tri
        Lm = np.where(where, (1 - strength) * L[None] + strength * target, L[None])
        Lm[:, rows, rows] = np.maximum(Lm[:, rows, rows], 1e-6)
        out = np.einsum("nij,nj->ni", Lm, rng.standard_normal((n_out, d)))
    else:
        raise ValueError(f"copula outlier type {outlier!r}; allowed: probabilistic, dependence")
    X = np.concatenate([inl, out])
    X = np.stack([_to_marginal(X[:, j], specs[j]) for j in range(d)], 1)
    return X[:n_in], X[n_in:]


# ----------------------------------------------------------------------------------- SCM
def _lognormal_int(rng, mu, sigma, lo, hi):
    return int(np.clip(int(np.round(rng.lognormal(mu, sigma))), lo, hi))


def _act(x, kind):
    if kind == 0:
        return np.tanh(x)
    if kind == 1:
        return np.where(x > 0, x, 0.01 * x)
    if kind == 2:
        return np.where(x > 0, x, np.expm1(np.minimum(x, 0)))
    return x


def scm(d: int, n_in: int, n_out: int, rng: np.random.Generator, outlier: str):
    min_l = max(int(np.sqrt(d)) - 3, 2)
    min_h = max(d // min_l + 2, 2)
    max_h = min(min_h + 7, 40)
    while True:
        n_layers = _lognormal_int(rng, 0.7, 0.4, min_l, 5)
        h = _lognormal_int(rng, 1.2, 0.5, min_h, max_h)
        if n_layers * h >= d:
            break
    acts = rng.integers(0, 4, size=n_layers)
    raw = rng.standard_normal((n_layers, h, h))      # perturbable: |raw weight| > 0.05
    W = raw * (rng.random((n_layers, h, h)) < 0.6)    # 40% of the weights dropped
    mu = rng.random((n_layers, h)) - 0.5
    sd = rng.random((n_layers, h)) * 0.45 + 0.05
    chosen = rng.choice(n_layers * h, size=d, replace=False)

    def run(m, noise_scale=None, wmask=None):
        x = np.ones((m, h))
        nodes, noises = [], []
        for layer in range(n_layers):
            if wmask is None:
                x = x @ W[layer].T
            else:
                x = np.einsum("noi,ni->no", W[layer][None] * wmask[layer], x)
            noise = np.exp(mu[layer] + sd[layer] * rng.standard_normal((m, h)))
            if noise_scale is not None:
                noise = noise * noise_scale[layer]
            noises.append(noise)
            x = _act(x + noise, acts[layer])
            nodes.append(x)
        return np.concatenate(nodes, 1)[:, chosen], noises

    inl, _ = run(n_in)
    if outlier == "measure":
        p_high = 0.2 if d < 50 else max(0.01, 0.2 * 50 / (d + 50))

        def draw_measure(m):
            scale = np.where(rng.random((n_layers, m, h)) < p_high, 5.0, 1.0)
            X, noises = run(m, noise_scale=scale)
            ok = np.ones(m, bool)
            for layer in range(n_layers):
                high = scale[layer] == 5.0
                far = np.abs(noises[layer] - mu[layer]) >= mu[layer] + sd[layer]
                ok &= (far | ~high).all(1)
            return np.concatenate([X, ok[:, None].astype(float)], 1)

        out = _fill(draw_measure, lambda Z: Z[:, -1] > 0.5, n_out, rng)[:, :-1]
    elif outlier == "structure":
        p = max(0.03, 0.2 * 50 / (d + 50))
        pert = (rng.random((n_layers, n_out, h, h)) < p) & (np.abs(raw)[:, None] > 0.05)
        flip = rng.random((n_layers, n_out, h, h)) < 0.5
        wmask = np.where(pert & flip, -1.0, np.where(pert, 0.0, 1.0))
        out, _ = run(n_out, wmask=wmask)
    else:
        raise ValueError(f"SCM outlier type {outlier!r}; allowed: measure, structure")
    return inl, out


# ---------------------------------------------------------------------------------- tasks
def draw(prior: str, d: int, n_in: int, n_out: int, rng: np.random.Generator):
    """(inliers (n_in, d), outliers (n_out, d)) from one freshly drawn model of ``prior``.
    Rows that are not finite (an exploding SCM draw) are redrawn from a new model."""
    for _ in range(20):
        if prior == "gmm":
            inl, out = gmm(d, n_in, n_out, rng)
        elif prior == "dependence_copula":
            inl, out = copula(d, n_in, n_out, rng, "dependence")
        elif prior == "probabilistic_copula":
            inl, out = copula(d, n_in, n_out, rng, "probabilistic")
        elif prior == "measure_scm":
            inl, out = scm(d, n_in, n_out, rng, "measure")
        elif prior == "structure_scm":
            inl, out = scm(d, n_in, n_out, rng, "structure")
        else:
            raise ValueError(f"unknown prior {prior!r}; allowed: {', '.join(PRIORS)}")
        if (len(inl) == n_in and len(out) == n_out and np.isfinite(inl).all()
                and np.isfinite(out).all() and (inl.std(0) > 1e-9).all()):
            return inl.astype(np.float64), out.astype(np.float64)
    raise RuntimeError(f"prior {prior} (d={d}) gave no usable task in 20 draws")


def dim_bins(d_min: int, d_max: int, n_bins: int) -> list[tuple[int, int]]:
    """Power-law dimension bins (official rule, exponent 2: finer bins at small d) as
    [lo, hi) ranges; empty bins are merged away."""
    lin = np.linspace(0, 1, n_bins + 1)
    edges = np.round(d_min + (d_max - d_min) * lin ** 2).astype(int)
    edges[-1] = d_max + 1
    edges = np.unique(edges)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True)]
