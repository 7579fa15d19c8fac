"""Classical k-junta distributions on {0,1}^n: instances, samples, and the three learners.

- ``learner`` (INFERRED reconstruction, spec "Fourier-mass selection"): estimate every Fourier
  coefficient c_hat(T) = mean chi_T(x) with |T| <= k, score each k-subset J' by its Fourier mass
  M(J') = sum_{nonempty T in J'} c_hat(T)^2 (= 2^k sum_y (p_hat_J'(y) - 2^-k)^2 by Parseval),
  pick J* = argmax M and output the empirical marginal on J* times uniform on the rest.
- ``oracle``: knows J, outputs the empirical marginal on J times uniform (lower envelope).
- ``maxtv``: plug-in alternative; picks the k-subset whose empirical marginal is farthest from
  uniform in total variation (l1), then outputs its empirical marginal.

All three read the same samples of a replicate. One replicate draws max(m_grid) samples; the
learner at grid point m sees the first m of them (prefixes), so the error curve of a replicate
is a learning curve. Sufficient statistics (Fourier sums, or marginal counts for k > 3) are
accumulated chunk by chunk between grid points, so the whole curve costs one pass.
"""

from __future__ import annotations

import itertools

import numpy as np

FOURIER_MAX_DEGREE = 3  # dense coefficient tensors up to degree 3; counting route above


# --------------------------------------------------------------------------------------------
# instances and samples
# --------------------------------------------------------------------------------------------
def random_instance(n: int, k: int, tau: float, rng: np.random.Generator):
    """(J sorted, q on {0,1}^k): q = 2^-k + tau g / (0.5 ||g||_1), g centred Gaussian, so that
    TV(q, uniform) = tau; negative entries clipped and q renormalised. Atom y has bit j
    (of coordinate J[j]) equal to (y >> j) & 1."""
    J = np.sort(rng.choice(n, size=k, replace=False))
    g = rng.normal(size=2**k)
    g -= g.mean()
    q = 2.0**-k + tau * g / (0.5 * np.abs(g).sum())
    q = np.clip(q, 0.0, None)
    return J, q / q.sum()


def sample(n: int, J: np.ndarray, q: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """m samples (m, n) in {0,1}: x_J ~ q, the other bits fair coins."""
    k = len(J)
    x = rng.integers(0, 2, size=(m, n), dtype=np.int8)
    atoms = rng.choice(2**k, size=m, p=q)
    x[:, J] = ((atoms[:, None] >> np.arange(k)) & 1).astype(np.int8)
    return x


# --------------------------------------------------------------------------------------------
# Fourier analysis on k-subsets
# --------------------------------------------------------------------------------------------
def subsets(n: int, k: int) -> np.ndarray:
    """All k-subsets of range(n), sorted, as an (n choose k, k) array."""
    return np.array(list(itertools.combinations(range(n), k)), dtype=np.int64).reshape(-1, k)


def chi_matrix(k: int) -> np.ndarray:
    """H[P, y] = chi_P(y) = (-1)^{|P & y|}: characters on {0,1}^k (P, y as bit masks)."""
    idx = np.arange(2**k)
    pop = np.vectorize(lambda v: bin(v).count("1"))(idx[:, None] & idx[None, :])
    return (1 - 2 * (pop % 2)).astype(float)


class FourierStats:
    """Running sums of chi_T(x) for all |T| <= k (dense tensors for degree <= 3).

    Degree 1 = column sums of s = 1 - 2x, degree 2 = s^T s, degree 3 = einsum over three
    copies of s. ``coefficients(subs)`` returns C[J', P] = c_hat(J'[P]) for each k-subset J'
    and each position mask P (C[:, 0] = c_hat(empty) = 1)."""

    def __init__(self, n: int, k: int):
        self.n, self.k, self.m = n, k, 0
        self.sums = [np.zeros((n,) * d) for d in range(1, k + 1)]

    def add(self, x: np.ndarray) -> None:
        s = 1.0 - 2.0 * x
        self.m += len(x)
        self.sums[0] += s.sum(0)
        if self.k >= 2:
            self.sums[1] += s.T @ s
        if self.k >= 3:
            self.sums[2] += np.einsum("ti,tj,tl->ijl", s, s, s, optimize=True)

    def coefficients(self, subs: np.ndarray) -> np.ndarray:
        C = np.ones((len(subs), 2**self.k))
        for P in range(1, 2**self.k):
            pos = [j for j in range(self.k) if P >> j & 1]
            C[:, P] = self.sums[len(pos) - 1][tuple(subs[:, pos].T)] / self.m
        return C


class CountStats:
    """Running marginal counts on every k-subset (used when k > 3: full profile only); its
    coefficients come from the marginals by the inverse Fourier transform C = p_hat H."""

    def __init__(self, n: int, k: int, subs: np.ndarray):
        self.k, self.m, self.subs = k, 0, subs
        self.counts = np.zeros((len(subs), 2**k))
        self.weights = 2 ** np.arange(k)

    def add(self, x: np.ndarray, chunk: int = 512) -> None:
        self.m += len(x)
        offs = np.arange(len(self.subs))[None, :] * 2**self.k
        for a in range(0, len(x), chunk):
            idx = (x[a:a + chunk][:, self.subs] * self.weights).sum(-1) + offs
            self.counts += np.bincount(idx.ravel(), minlength=self.counts.size).reshape(
                self.counts.shape)

    def coefficients(self, subs: np.ndarray) -> np.ndarray:
        return (self.counts / self.m) @ chi_matrix(self.k)


def make_stats(n: int, k: int, subs: np.ndarray):
    return FourierStats(n, k) if k <= FOURIER_MAX_DEGREE else CountStats(n, k, subs)


def fourier_mass(C: np.ndarray) -> np.ndarray:
    """M(J') = sum over nonempty T subset J' of c_hat(T)^2 (one value per row of C)."""
    return (C[:, 1:] ** 2).sum(1)


def marginals(C: np.ndarray) -> np.ndarray:
    """Empirical marginals p_hat_J'(y) = 2^-k sum_P c_hat(J'[P]) chi_P(y) (exact identity)."""
    k = int(np.log2(C.shape[1]))
    return C @ chi_matrix(k) / 2**k


def empirical_marginal(x: np.ndarray, S) -> np.ndarray:
    """Empirical marginal on coordinates S by direct counting (reference for the tests)."""
    idx = (x[:, list(S)] * 2 ** np.arange(len(S))).sum(1)
    return np.bincount(idx, minlength=2 ** len(S)) / len(x)


def tv_error(J, q, Jh, qh) -> float:
    """Exact TV between the junta p (q on J) and p_hat (qh on Jh): both are juntas on
    U = J u Jh, so sum over the 2^|U| assignments of U (the other bits cancel)."""
    U = sorted(set(map(int, J)) | set(map(int, Jh)))
    z = (np.arange(2 ** len(U))[:, None] >> np.arange(len(U))) & 1
    pos = {u: i for i, u in enumerate(U)}
    scale = 2.0 ** -(len(U) - len(J))
    iJ = (z[:, [pos[int(j)] for j in J]] * 2 ** np.arange(len(J))).sum(1)
    iH = (z[:, [pos[int(j)] for j in Jh]] * 2 ** np.arange(len(Jh))).sum(1)
    return 0.5 * float(np.abs(q[iJ] - qh[iH]).sum() * scale)


# --------------------------------------------------------------------------------------------
# one replicate: all methods along the m-grid
# --------------------------------------------------------------------------------------------
def replicate(n: int, k: int, tau: float, m_grid, methods, rng: np.random.Generator) -> dict:
    """Errors and support hits of each method at each m of the grid, for one fresh instance.

    Returns {method: (tv errors (len(m_grid),), J* == J (len(m_grid),))}."""
    J, q = random_instance(n, k, tau, rng)
    m_grid = [int(m) for m in m_grid]
    x = sample(n, J, q, m_grid[-1], rng)
    subs = subsets(n, k)
    j_row = int(np.flatnonzero((subs == J).all(1))[0])
    stats = make_stats(n, k, subs)
    out = {meth: (np.zeros(len(m_grid)), np.zeros(len(m_grid), dtype=bool)) for meth in methods}
    done = 0
    for g, m in enumerate(m_grid):
        stats.add(x[done:m])
        done = m
        C = stats.coefficients(subs)
        marg = marginals(C)
        for meth in methods:
            if meth == "learner":
                # INFERRED: argmax of the Fourier mass (the paper may add a thresholding step)
                row = int(np.argmax(fourier_mass(C)))
            elif meth == "oracle":
                row = j_row
            elif meth == "maxtv":
                row = int(np.argmax(np.abs(marg - 2.0**-k).sum(1)))
            else:
                raise ValueError(f"unknown classical method {meth!r}")
            out[meth][0][g] = tv_error(J, q, subs[row], marg[row])
            out[meth][1][g] = row == j_row
    return out
