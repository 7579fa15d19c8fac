"""Qkmeans-LSH: the rejection sampler with an approximate nearest-centre index (INFERRED).

The paper's ANN structure is not available; this is the concrete choice of the spec:
a p-stable Euclidean LSH index (Datar et al. 2004) over the current centres, with
L = max(1, ceil(k^rho)) tables of K_h = 3 concatenated hashes h(x) = floor((a.x + b) / w).
The bucket width exploits the scaling law: w_j = 2 sqrt((S/n) j^(-eps_hat)), about twice the
predicted typical nearest-centre distance among j centres, with eps_hat from a cheap pilot.
The index is rebuilt with the new width whenever the number of centres j doubles.
"""

from __future__ import annotations

import math

import numpy as np

from .seeding import (
    Seeding,
    kmeans_pp,
    preprocess,
    rejection_step,
    row_sqnorms,
    sqdist,
)

PILOT_KS = (8, 16, 32)


def pilot_eps(X: np.ndarray, rng: np.random.Generator, n_sub: int = 1000,
              ks=PILOT_KS) -> tuple[float, int]:
    """Estimate the quantization exponent eps from a scaling-law fit on a subsample.

    k-means++ on n' points for each k in ks (n' * sum(ks) evaluations); eps_hat is minus the
    least-squares slope of log cost against log k. Returns (eps_hat, evaluations).
    """
    n = X.shape[0]
    sub = X[rng.choice(n, size=min(n_sub, n), replace=False)]
    costs = [kmeans_pp(sub, int(k), rng)[1].mean() for k in ks]
    slope = np.polyfit(np.log(ks), np.log(costs), 1)[0]
    return float(-slope), int(sub.shape[0] * sum(ks))


class CentreLSH:
    """p-stable LSH tables over a growing set of centres.

    The K_h hashes of a table are floor(a.x / w + o) with o ~ U[0, 1) (that is b = o w, so
    b ~ U[0, w)); they are packed into one exact integer bucket key per table. Instead of
    Python dicts, a query compares its L keys with the stored keys of all centres in a few
    vectorised steps; what is *counted* is what a hash table costs: the L K_h projections of
    the query, and one distance per bucket-mate returned.
    """

    KEY_BITS = 20  # each hash must lie in (-2^19, 2^19) for the packing to be exact

    def __init__(self, dim: int, tables: int, hashes: int, capacity: int,
                 rng: np.random.Generator):
        if hashes * self.KEY_BITS > 62:
            raise ValueError(f"{hashes} hashes do not fit one int64 bucket key")
        self.tables, self.hashes = tables, hashes
        self.A = rng.standard_normal((dim, tables * hashes))
        self.offset = rng.random(tables * hashes)
        self.keys = np.empty((tables, capacity), dtype=np.int64)  # table-major: fast compare
        self.size = 0
        self.w = 1.0

    @property
    def projections(self) -> int:
        """Hash projections per point (each one a length-D inner product)."""
        return self.tables * self.hashes

    def _keys(self, P: np.ndarray) -> np.ndarray:
        """(L, len(P)) bucket keys: the K_h hashes of each table packed into one integer."""
        h = np.floor(P @ self.A / self.w + self.offset).astype(np.int64)
        half = 1 << (self.KEY_BITS - 1)
        if h.size and np.abs(h).max() >= half:
            raise OverflowError("LSH hash value out of range for exact key packing")
        h = (h + half).reshape(len(P), self.tables, self.hashes)
        key = np.zeros((len(P), self.tables), dtype=np.int64)
        for m in range(self.hashes):
            key = (key << self.KEY_BITS) | h[:, :, m]
        return key.T

    def rebuild(self, C: np.ndarray, w: float) -> int:
        """Re-hash all centres with bucket width w; returns the projections used."""
        self.w = float(w)
        self.size = len(C)
        self.keys[:, : self.size] = self._keys(C)
        return self.projections * self.size

    def insert(self, c: np.ndarray) -> int:
        self.keys[:, self.size] = self._keys(c[None, :])[:, 0]
        self.size += 1
        return self.projections

    def bucket_mates(self, P: np.ndarray) -> np.ndarray:
        """Boolean (len(P), size): centre j shares a bucket with p in at least one table."""
        q = self._keys(P)
        stored = self.keys[:, : self.size]
        mates = q[0][:, None] == stored[0][None, :]
        for t in range(1, self.tables):
            mates |= q[t][:, None] == stored[t][None, :]
        return mates


def bucket_width(S: float, n: int, j: int, eps_hat: float) -> float:
    """w_j = 2 sqrt((S/n) j^(-eps)), eps clipped to [0, 2] (a d_hat of at least 1)."""
    eps = min(max(eps_hat, 0.0), 2.0)
    return 2.0 * math.sqrt((S / n) * j ** (-eps))


def qkmeans_lsh(X: np.ndarray, k: int, rng: np.random.Generator, rho: float = 0.5,
                hashes: int = 3, batch: int = 256, eps_hat: float | None = None,
                pilot_evals: int = 0) -> Seeding:
    """Qkmeans-LSH(rho) seeding of k centres.

    Identical to Qkmeans-exact except that D2(x_i, C) inside a trial is the distance to the
    nearest bucket-mate over the L tables, or, if x_i has none, to ceil(k^rho) uniformly
    random centres; both are over-estimates of the true D^2, which is where the loss of
    exactness (the rho^-2 factor of the approximation bound) comes from. The pilot's work
    (``pilot_evals``) is charged from the start.
    """
    n, D = X.shape
    if eps_hat is None:
        raise ValueError("qkmeans_lsh needs eps_hat (run pilot_eps first)")
    xsq = row_sqnorms(X)
    mom = preprocess(X)
    budget = max(1, math.ceil(k ** rho))  # L tables, and the fallback sample size
    index = CentreLSH(D, budget, hashes, k, rng)

    C = np.empty((k, D))
    csq = np.empty(k)
    centres = np.empty(k, dtype=np.int64)
    evals = np.empty(k, dtype=np.int64)
    trials = np.empty(k, dtype=np.int64)

    centres[0] = rng.integers(n)
    C[0], csq[0] = X[centres[0]], xsq[centres[0]]
    dmu = float(np.sum((mom.mu - C[0]) ** 2))
    used = pilot_evals + n + 1
    used += index.rebuild(C[:1], bucket_width(mom.S, n, 1, eps_hat))
    tried = 0
    evals[0], trials[0] = used, tried
    for j in range(1, k):

        def nearest(idx, j=j):
            P = X[idx]
            # all |C| distances are computed for speed, but only bucket-mates are used and
            # counted, exactly as if the index had returned them
            d2_all = sqdist(P, xsq[idx], C[:j], csq[:j])
            mates = index.bucket_mates(P)
            found = mates.sum(axis=1)
            d2 = np.where(mates, d2_all, np.inf).min(axis=1)
            cost = index.projections + found
            empty = np.flatnonzero(found == 0)
            if empty.size:
                r = min(j, budget)
                # r distinct random centres per empty query: the r smallest of random keys
                pick = np.argpartition(rng.random((empty.size, j)), r - 1, axis=1)[:, :r]
                d2[empty] = np.take_along_axis(d2_all[empty], pick, axis=1).min(axis=1)
                cost[empty] += r
            return d2, cost

        i, t, cost = rejection_step(mom, dmu, nearest, rng, batch)
        centres[j], C[j], csq[j] = i, X[i], xsq[i]
        dmu = min(dmu, float(np.sum((mom.mu - C[j]) ** 2)))
        used += cost + 1
        tried += t
        size = j + 1
        if size & (size - 1) == 0:  # j doubled: rebuild with the narrower bucket width
            used += index.rebuild(C[:size], bucket_width(mom.S, n, size, eps_hat))
        else:
            used += index.insert(C[j])
        evals[j], trials[j] = used, tried
    return Seeding(centres, evals, trials)
