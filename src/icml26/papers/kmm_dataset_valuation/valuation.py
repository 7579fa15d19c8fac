"""Dataset valuation: KMM in gradient space (the paper's method) and the baselines' scores,
plus budgeted selection. Everything here is a function of given vectors or measurements.

KMM (attribution/gradient/kmm.py of the official code, linear kernel in gradient space):

    beta* = argmin_beta  1/2 beta^T K beta - c^T beta + lam ||beta||_1,
    K_ij = <g_i, g_j>,   c_j = <g_j, a>,

which is the Lasso  min 1/2 ||G beta - a||^2 + lam ||beta||_1  in Gram form (G = [g_1 .. g_M]);
beta is unconstrained in sign. Alignment enters through c, redundancy through the
off-diagonal of K: datasets whose gradients are nearly the same share the part of ``a`` they
jointly explain. The official code solves it with cvxpy/OSQP; here by cyclic coordinate
descent on the Gram form (the same optimum, tested against scikit-learn's Lasso).
"""

from __future__ import annotations

import numpy as np


def soft_threshold(z: float, lam: float) -> float:
    return float(np.sign(z) * max(abs(z) - lam, 0.0))


class KMM:
    """L1 kernel mean matching on the Gram form.

    ``lam_rel``: lambda = lam_rel * max_j |c_j| (the spec's scale-free rule; the official
    absolute lambdas were set for raw LoRA gradients and do not carry over).
    ``normalize``: L2-normalise every vector first (the official default is False).
    """

    def __init__(self, lam_rel: float = 0.02, normalize: bool = False, max_sweeps: int = 200,
                 tol: float = 1e-8):
        self.lam_rel, self.normalize = lam_rel, normalize
        self.max_sweeps, self.tol = max_sweeps, tol

    def fit(self, G: np.ndarray, a: np.ndarray) -> KMM:
        """G: (M, P) auxiliary gradient features (one row per dataset), a: (P,) target."""
        G = np.asarray(G, dtype=np.float64)
        a = np.asarray(a, dtype=np.float64)
        if self.normalize:
            G = G / np.maximum(np.linalg.norm(G, axis=1, keepdims=True), 1e-300)
            a = a / max(float(np.linalg.norm(a)), 1e-300)
        K, c = G @ G.T, G @ a
        self.lam_ = self.lam_rel * float(np.max(np.abs(c)))
        beta, self.sweeps_ = gram_lasso_cd(K, c, self.lam_, self.max_sweeps, self.tol)
        self.beta_ = polish(K, c, beta, self.lam_)
        self.kkt_ = kkt_violation(K, c, self.beta_, self.lam_)
        self.K_, self.c_ = K, c
        return self


def gram_lasso_cd(K: np.ndarray, c: np.ndarray, lam: float, max_sweeps: int = 200,
                  tol: float = 1e-8) -> tuple[np.ndarray, int]:
    """Cyclic coordinate descent on 1/2 b^T K b - c^T b + lam |b|_1:
    b_j <- S(c_j - sum_{k != j} K_jk b_k, lam) / K_jj; stops when no coordinate moves by more
    than ``tol`` in a sweep (or after ``max_sweeps``). Returns (b, sweeps used)."""
    M = len(c)
    b = np.zeros(M)
    Kb = np.zeros(M)                 # K @ b, kept up to date
    for sweep in range(1, max_sweeps + 1):
        moved = 0.0
        for j in range(M):
            if K[j, j] <= 0:
                continue
            rho = c[j] - (Kb[j] - K[j, j] * b[j])
            new = soft_threshold(rho, lam) / K[j, j]
            delta = new - b[j]
            if delta != 0.0:
                Kb += delta * K[:, j]
                b[j] = new
                moved = max(moved, abs(delta))
        if moved <= tol:
            return b, sweep
    return b, max_sweeps


def polish(K, c, b, lam, tol: float = 1e-9) -> np.ndarray:
    """The exact optimum on the support and signs coordinate descent found: solve
    K_SS b_S = c_S - lam sign(b_S); kept only if the signs stay and the optimality conditions
    hold (relative violation <= tol), else the coordinate-descent iterate is returned.
    Coordinate descent on near-duplicate columns converges slowly; this finishes the job
    (the official code gets the exact optimum from cvxpy)."""
    S = np.flatnonzero(b)
    if S.size == 0:
        return b
    s = np.sign(b[S])
    try:
        bS = np.linalg.solve(K[np.ix_(S, S)], c[S] - lam * s)
    except np.linalg.LinAlgError:
        return b
    if not np.all(np.sign(bS) == s):
        return b
    out = np.zeros_like(b)
    out[S] = bS
    return out if kkt_violation(K, c, out, lam) <= tol else b


def kkt_violation(K, c, b, lam) -> float:
    """Largest violation of the Lasso optimality conditions, relative to lam (0 at the
    optimum): |grad_j + lam sign b_j| where b_j != 0, max(|grad_j| - lam, 0) where b_j = 0."""
    g = K @ b - c
    nz = b != 0
    v = np.where(nz, np.abs(g + lam * np.sign(b)), np.maximum(np.abs(g) - lam, 0.0))
    return float(v.max() / lam) if lam > 0 else float(v.max())


def cosine(G: np.ndarray, a: np.ndarray) -> np.ndarray:
    """cos(g_j, a) per row of G (one-step gradient alignment, the official default)."""
    return (G @ a) / np.maximum(np.linalg.norm(G, axis=1) * np.linalg.norm(a), 1e-300)


def inner(G: np.ndarray, a: np.ndarray) -> np.ndarray:
    """<g_j, a> per row of G (the official one_step with similarity=dot)."""
    return G @ a


def select_top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """The official rule (run_from_scores.py): rank by descending score (ties by index),
    take the top k, then drop those with score <= 0, so fewer than k may be chosen."""
    s = np.asarray(scores, dtype=float)
    order = sorted(range(len(s)), key=lambda j: (-s[j], j))[:k]
    return np.array([j for j in order if s[j] > 0], dtype=np.int64)


def datamodel_fit(A: np.ndarray, y: np.ndarray, alpha: float) -> np.ndarray:
    """The official uniform datamodel fit (attribution/datamodel/base.py): scikit-learn's
    Lasso(alpha, fit_intercept=False) of the measured utility on the design rows
    [1, z_1 .. z_M] (a constant target column, z_j = 1 when dataset j was in the row).
    Returns the M auxiliary coefficients (the target column's is dropped)."""
    from sklearn.linear_model import Lasso

    X = np.column_stack([np.ones(len(A)), np.asarray(A, dtype=float)])
    model = Lasso(alpha=float(alpha), fit_intercept=False, max_iter=100_000, tol=1e-10)
    model.fit(X, np.asarray(y, dtype=float))
    return model.coef_[1:].astype(np.float64)


def cosine_matrix(G: np.ndarray) -> np.ndarray:
    """Pairwise cosines of the rows of G."""
    U = G / np.maximum(np.linalg.norm(G, axis=1, keepdims=True), 1e-300)
    return U @ U.T
