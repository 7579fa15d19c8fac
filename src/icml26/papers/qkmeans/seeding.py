"""k-means seedings that count their work: k-means++, uniform, AFK-MC^2 and Qkmeans-exact.

Unit of work ("distance-equivalent"): one length-D inner product, i.e. one squared distance
||x - c||^2 or one hash projection a.x. Every seeding returns, for each prefix size j, the
number of distance-equivalents it used to choose its first j centres, so that one seeding to
k_max answers every k of the k-list. This is legitimate for the sequential samplers here:
the first j centres of a sequential D^2 (or MCMC, or uniform-without-replacement) seeding to
k_max have exactly the distribution of a seeding to j, and the work counted up to j is the
work such a shorter run would have done.

Distances are computed in numpy with the expansion ||x||^2 - 2 x.c + ||c||^2 (fast BLAS);
what is *counted* is what the algorithm needs, independent of how numpy computes it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Seeding:
    """Centres (indices into X, in the order chosen) and cumulative work per prefix size.

    ``evals[j-1]`` and ``trials[j-1]`` are the distance-equivalents and proposals used to
    choose the first j centres (``trials`` is None for seedings without proposals).
    """

    centres: np.ndarray
    evals: np.ndarray
    trials: np.ndarray | None = None


# ---------------------------------------------------------------------------------------------
# distances
# ---------------------------------------------------------------------------------------------
def row_sqnorms(X: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->i", X, X)


def sqdist_to_point(X: np.ndarray, xsq: np.ndarray, i: int) -> np.ndarray:
    """||x - X[i]||^2 for every row x of X (n distance evaluations)."""
    d2 = xsq - 2.0 * (X @ X[i]) + xsq[i]
    np.maximum(d2, 0.0, out=d2)  # round-off of the expansion can go slightly negative
    d2[i] = 0.0
    return d2


def sqdist(P: np.ndarray, psq: np.ndarray, C: np.ndarray, csq: np.ndarray) -> np.ndarray:
    """Matrix of ||p - c||^2 (len(P) * len(C) distance evaluations)."""
    d2 = psq[:, None] - 2.0 * (P @ C.T) + csq[None, :]
    return np.maximum(d2, 0.0, out=d2)


def prefix_costs(X: np.ndarray, centres: np.ndarray, ks, block: int = 32) -> dict[int, float]:
    """cost(C_k)/n for the first k centres, for every k in ks (evaluation, not counted).

    One pass over the centres in blocks: the distances to a block of centres, a running
    minimum along the block, and the smallest D^2 so far give D^2(x, C_j) for every j.
    """
    wanted = sorted(set(int(k) for k in ks))
    if wanted and wanted[-1] > len(centres):
        raise ValueError(f"prefix_costs: only {len(centres)} centres, asked for k={wanted}")
    xsq = row_sqnorms(X)
    C = X[np.asarray(centres[: wanted[-1]], dtype=np.int64)]
    csq = xsq[np.asarray(centres[: wanted[-1]], dtype=np.int64)]
    out = {}
    d2 = np.full(X.shape[0], np.inf)
    for s in range(0, len(C), block):
        running = np.minimum.accumulate(sqdist(X, xsq, C[s:s + block], csq[s:s + block]), axis=1)
        np.minimum(running, d2[:, None], out=running)
        for k in wanted:
            if s < k <= s + running.shape[1]:
                out[k] = float(running[:, k - s - 1].mean())
        d2 = running[:, -1]
    return out


def _sample_cumulative(cum: np.ndarray, rng: np.random.Generator, size=None):
    """Index i with probability (cum[i] - cum[i-1]) / cum[-1] (inverse-CDF sampling)."""
    u = rng.random(size) * cum[-1]
    return np.minimum(np.searchsorted(cum, u, side="right"), len(cum) - 1)


# ---------------------------------------------------------------------------------------------
# baselines
# ---------------------------------------------------------------------------------------------
def kmeans_pp(X: np.ndarray, k: int, rng: np.random.Generator) -> tuple[Seeding, np.ndarray]:
    """Plain k-means++ (one candidate per step): exact D^2 sampling.

    Returns the seeding and the final D^2(x, C_k) of every point. After each new centre the
    n distances to it update D^2 (n evaluations per centre, n*k in all: the update after the
    k-th centre is counted too, as in the paper's n*k, although it only serves the cost).
    """
    n = X.shape[0]
    xsq = row_sqnorms(X)
    centres = np.empty(k, dtype=np.int64)
    centres[0] = rng.integers(n)
    d2 = sqdist_to_point(X, xsq, int(centres[0]))
    for j in range(1, k):
        cum = np.cumsum(d2)
        if cum[-1] <= 0:  # every point already is a centre: nothing left to sample from
            centres[j] = rng.integers(n)
        else:
            centres[j] = _sample_cumulative(cum, rng)
        d2 = np.minimum(d2, sqdist_to_point(X, xsq, int(centres[j])))
    evals = n * np.arange(1, k + 1, dtype=np.int64)
    return Seeding(centres, evals), d2


def uniform(X: np.ndarray, k: int, rng: np.random.Generator) -> Seeding:
    """k distinct points chosen uniformly at random (no distance evaluations)."""
    centres = rng.choice(X.shape[0], size=k, replace=False).astype(np.int64)
    return Seeding(centres, np.zeros(k, dtype=np.int64))


def mcmc_draw(q, cum_q, candidate_d2, m: int, rng: np.random.Generator) -> tuple[int, int]:
    """One AFK-MC^2 step: a Metropolis-Hastings chain of length m targeting D^2 sampling.

    Proposals y ~ q are independent of the state, so the chain accepts y over the current x
    with probability min(1, (D2(y)/q(y)) / (D2(x)/q(x))). ``candidate_d2(idx)`` returns
    D2(x, C) of the proposals (len(C) evaluations each). Returns (index, evaluations).
    """
    cand = _sample_cumulative(cum_q, rng, m)
    d2, evals = candidate_d2(cand)
    u = rng.random(m)
    x, dx, qx = int(cand[0]), float(d2[0]), float(q[cand[0]])
    for t in range(1, m):
        y, dy, qy = int(cand[t]), float(d2[t]), float(q[cand[t]])
        # written without division: accept if dy/qy >= u * dx/qx (always when dx = 0)
        if dy * qx > u[t] * dx * qy or dx == 0.0:
            x, dx, qx = y, dy, qy
    return x, evals


def afkmc2(X: np.ndarray, k: int, rng: np.random.Generator, m: int = 100) -> Seeding:
    """AFK-MC^2 (Bachem et al. 2016): first centre uniform, then k-1 MCMC chains of length m.

    The proposal q(x) = D2(x, c_1) / (2 sum) + 1/(2n) costs n evaluations once; each chain
    costs m * |C| evaluations (the proposals' distances to the current centres).
    """
    n, D = X.shape
    xsq = row_sqnorms(X)
    C = np.empty((k, D))
    csq = np.empty(k)
    centres = np.empty(k, dtype=np.int64)
    evals = np.empty(k, dtype=np.int64)
    centres[0] = rng.integers(n)
    C[0], csq[0] = X[centres[0]], xsq[centres[0]]
    d1 = sqdist_to_point(X, xsq, int(centres[0]))
    q = 0.5 * d1 / d1.sum() + 0.5 / n if d1.sum() > 0 else np.full(n, 1.0 / n)
    cum_q = np.cumsum(q)
    used = n
    evals[0] = used
    for j in range(1, k):

        def candidate_d2(idx, j=j):
            return sqdist(X[idx], xsq[idx], C[:j], csq[:j]).min(axis=1), len(idx) * j

        centres[j], cost = mcmc_draw(q, cum_q, candidate_d2, m, rng)
        C[j], csq[j] = X[centres[j]], xsq[centres[j]]
        used += cost
        evals[j] = used
    return Seeding(centres, evals)


def _assign(X, xsq, C, chunk):
    """Nearest centre and its D^2 for every point, in row chunks (bounded memory)."""
    csq = row_sqnorms(C)
    label = np.empty(X.shape[0], dtype=np.int64)
    d2 = np.empty(X.shape[0])
    for s in range(0, X.shape[0], chunk):
        block = sqdist(X[s:s + chunk], xsq[s:s + chunk], C, csq)
        label[s:s + chunk] = block.argmin(axis=1)
        d2[s:s + chunk] = block[np.arange(block.shape[0]), label[s:s + chunk]]
    return label, d2


def lloyd(X: np.ndarray, centres_xy: np.ndarray, iters: int, chunk: int = 4096) -> np.ndarray:
    """Lloyd iterations from the given centre coordinates; returns the final D^2 per point.

    Used only for the full profile's OPT proxy; assignment is done in row chunks so that the
    n x k distance matrix never has to be held in memory at once.
    """
    C = np.array(centres_xy, dtype=float)
    xsq = row_sqnorms(X)
    for _ in range(iters):
        label, _ = _assign(X, xsq, C, chunk)
        counts = np.bincount(label, minlength=len(C))
        sums = np.zeros_like(C)
        np.add.at(sums, label, X)
        nonempty = counts > 0  # an empty cluster keeps its old centre
        C[nonempty] = sums[nonempty] / counts[nonempty, None]
    return _assign(X, xsq, C, chunk)[1]


# ---------------------------------------------------------------------------------------------
# Qkmeans: rejection sampling of the D^2 distribution
# ---------------------------------------------------------------------------------------------
@dataclass
class Moments:
    """The O(nD) preprocessing: mean mu, r2(x) = ||x - mu||^2, S = sum r2 (n evaluations)."""

    mu: np.ndarray
    r2: np.ndarray
    cum_r2: np.ndarray
    S: float
    n: int


def preprocess(X: np.ndarray) -> Moments:
    mu = X.mean(axis=0)
    r2 = row_sqnorms(X - mu)
    cum = np.cumsum(r2)
    # S is taken from the cumulative array so that sampling and probabilities agree exactly
    return Moments(mu, r2, cum, float(cum[-1]), X.shape[0])


def propose(mom: Moments, dmu: float, size: int, rng: np.random.Generator) -> np.ndarray:
    """Proposals with q(i) proportional to r2(x_i) + dmu, as a two-part mixture.

    With probability S / (S + n dmu) draw i ~ r2 / S, else i ~ Uniform(n): the mixture
    density is (r2(x_i) + dmu) / (S + n dmu).
    """
    from_r2 = rng.random(size) * (mom.S + mom.n * dmu) < mom.S
    by_r2 = _sample_cumulative(mom.cum_r2, rng, size)
    by_uniform = rng.integers(mom.n, size=size)
    return np.where(from_r2, by_r2, by_uniform)


def acceptance_ratio(d2: np.ndarray, r2: np.ndarray, dmu: float) -> np.ndarray:
    """a / (2 (r2 + dmu)), the acceptance probability of a proposal with D^2 value a.

    Since ||x - c||^2 <= 2 ||x - mu||^2 + 2 ||mu - c||^2, an exact D^2 never exceeds the
    denominator, so the ratio is a probability and accepted proposals are D^2-distributed:
    q(i) * accept(i) is proportional to D2(x_i, C). An over-estimated D^2 (LSH) can exceed
    1; comparing a uniform coin with it then simply accepts (the clip at 1).
    """
    denom = 2.0 * (r2 + dmu)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, d2 / denom, 0.0)


def rejection_step(mom: Moments, dmu: float, nearest, rng: np.random.Generator,
                   batch: int = 256, max_batches: int = 100_000) -> tuple[int, int, int]:
    """Choose one new centre by rejection sampling. Returns (index, trials, evaluations).

    ``nearest(idx)`` returns (D^2 estimates of the proposals, evaluations per proposal).
    Proposals and their acceptance coins are drawn in vectorised batches; the first accepted
    proposal wins, and only the trials up to and including it are counted (what a sequential
    implementation would have done).
    """
    trials = evals = 0
    for _ in range(max_batches):
        idx = propose(mom, dmu, batch, rng)
        d2, cost = nearest(idx)
        accept = rng.random(batch) < acceptance_ratio(d2, mom.r2[idx], dmu)
        if accept.any():
            t = int(np.argmax(accept))
            return int(idx[t]), trials + t + 1, evals + int(np.sum(cost[:t + 1]))
        trials += batch
        evals += int(np.sum(cost))
    raise RuntimeError("rejection sampling accepted nothing: is every point already a centre?")


def qkmeans_exact(X: np.ndarray, k: int, rng: np.random.Generator, batch: int = 256) -> Seeding:
    """Qkmeans-exact: D^2 sampling by rejection, with exact nearest-centre distances.

    Work: n evaluations of preprocessing; per new centre one evaluation to keep
    dmu = D2(mu, C) up to date (dmu only ever decreases: min with the newest centre); per
    trial |C| evaluations for D2(x_i, C). The expected number of trials for the next centre
    is 2 (S + n dmu) / cost(C), of the order of beta_k = n Var / OPT_k.
    """
    n, D = X.shape
    xsq = row_sqnorms(X)
    mom = preprocess(X)
    C = np.empty((k, D))
    csq = np.empty(k)
    centres = np.empty(k, dtype=np.int64)
    evals = np.empty(k, dtype=np.int64)
    trials = np.empty(k, dtype=np.int64)

    centres[0] = rng.integers(n)
    C[0], csq[0] = X[centres[0]], xsq[centres[0]]
    dmu = float(np.sum((mom.mu - C[0]) ** 2))
    used, tried = n + 1, 0
    evals[0], trials[0] = used, tried
    for j in range(1, k):

        def nearest(idx, j=j):
            d2 = sqdist(X[idx], xsq[idx], C[:j], csq[:j]).min(axis=1)
            return d2, np.full(len(idx), j, dtype=np.int64)

        i, t, cost = rejection_step(mom, dmu, nearest, rng, batch)
        centres[j], C[j], csq[j] = i, X[i], xsq[i]
        dmu = min(dmu, float(np.sum((mom.mu - C[j]) ** 2)))
        used += cost + 1
        tried += t
        evals[j], trials[j] = used, tried
    return Seeding(centres, evals, trials)
