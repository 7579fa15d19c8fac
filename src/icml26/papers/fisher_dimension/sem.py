"""Linear Gaussian SEMs: graph families, parameters, covariance, partial correlations and the
Fisher dimension (primary edge-wise definition and the all-subsets variant).

Conventions. A DAG is a (p, p) 0/1 matrix A with A[i, j] = 1 for i -> j; nodes are
topologically ordered (every edge has i < j). The SEM is x_j = sum_i B_ij x_i + e_j with
e ~ N(0, diag(D)), i.e. X = B^T X + e as a column vector, or x = x B + e as a row vector, so a
data matrix is E (I - B)^-1 and Sigma = (I - B^T)^-1 diag(D) (I - B^T)^-T.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

FAMILIES = ("chain", "tree", "er", "collider", "grid", "hub")


# ---------------------------------------------------------------------------------------------
# graphs
# ---------------------------------------------------------------------------------------------
def sample_dag(family: str, p: int, rng: np.random.Generator, er_prob: float = 0.3) -> np.ndarray:
    """A topologically ordered DAG of the named family on p nodes."""
    A = np.zeros((p, p), dtype=np.int64)
    if family == "chain":                     # 0 -> 1 -> ... -> p-1
        A[np.arange(p - 1), np.arange(1, p)] = 1
    elif family == "tree":                    # random recursive tree: parent uniform on {0..j-1}
        for j in range(1, p):
            A[rng.integers(0, j), j] = 1
    elif family == "er":                      # ER-SPARSE: each i < j with prob er_prob, >= 1 edge
        while True:
            A = np.triu(rng.random((p, p)) < er_prob, k=1).astype(np.int64)
            if A.any():
                break
    elif family == "collider":
        # spec (p = 6): 0 -> 5, 1 -> 5, 2 -> 5 plus 2 -> 3 -> 4. INFERRED for p > 6: the chain
        # 2 -> 3 -> ... -> p-2 is lengthened; the three-parent collider stays at the last node.
        if p < 5:
            raise ValueError(f"the collider family needs p >= 5, got {p}")
        A[[0, 1, 2], p - 1] = 1
        A[np.arange(2, p - 2), np.arange(3, p - 1)] = 1
    elif family == "grid":
        # full profile only, INFERRED: a 2-D lattice (rows x cols with rows the largest divisor
        # of p that is <= sqrt(p)), nodes row-major, edges to the right and downwards
        rows = max(r for r in range(1, int(np.sqrt(p)) + 1) if p % r == 0)
        cols = p // rows
        for r in range(rows):
            for c in range(cols):
                k = r * cols + c
                if c + 1 < cols:
                    A[k, k + 1] = 1
                if r + 1 < rows:
                    A[k, k + cols] = 1
    elif family == "hub":
        # full profile only, INFERRED: two hub nodes 0 and 1; every node j >= 2 is a child of
        # hub 0 and/or hub 1 (each with prob 0.7, at least one), giving high degrees and many
        # colliders 0 -> j <- 1.
        for j in range(2, p):
            parents = rng.random(2) < 0.7
            if not parents.any():
                parents[rng.integers(0, 2)] = True
            A[[0, 1], j] = parents
    else:
        raise ValueError(f"unknown graph family {family!r}; allowed: {', '.join(FAMILIES)}")
    return A


def sample_params(A: np.ndarray, b_range, d_range, rng: np.random.Generator):
    """Edge weights |B_ij| ~ U(b_range) with a random sign on the edges of A, D_i ~ U(d_range)."""
    A = np.asarray(A, dtype=bool)
    mag = rng.uniform(b_range[0], b_range[1], size=A.shape)
    sign = np.where(rng.random(A.shape) < 0.5, -1.0, 1.0)
    B = np.where(A, mag * sign, 0.0)
    D = rng.uniform(d_range[0], d_range[1], size=A.shape[0])
    return B, D


def covariance(B: np.ndarray, D: np.ndarray) -> np.ndarray:
    """Sigma = (I - B^T)^-1 diag(D) (I - B^T)^-T."""
    M = np.linalg.inv(np.eye(len(D)) - B.T)
    return M @ np.diag(D) @ M.T


def sample_data(B: np.ndarray, D: np.ndarray, n: int, trials: int,
                rng: np.random.Generator) -> np.ndarray:
    """``trials`` independent data sets of n rows each, shape (trials, n, p): x = x B + e."""
    p = len(D)
    E = rng.standard_normal((trials, n, p)) * np.sqrt(D)
    return E @ np.linalg.inv(np.eye(p) - B)


def sample_covariances(X: np.ndarray) -> np.ndarray:
    """Unbiased sample covariance of each data set, (trials, n, p) -> (trials, p, p)."""
    Xc = X - X.mean(axis=1, keepdims=True)
    return np.matmul(np.swapaxes(Xc, 1, 2), Xc) / (X.shape[1] - 1)


def sample_sem_covariances(B: np.ndarray, D: np.ndarray, n: int, trials: int,
                           rng: np.random.Generator) -> np.ndarray:
    """Sample covariances of ``trials`` data sets of n rows drawn from the SEM.

    Same numbers as sample_covariances(sample_data(...)) up to rounding, computed without
    forming X: X = E M with M = (I - B)^-1, so cov(X) = M^T cov(E) M. The noise rows E are
    drawn for real (n of them per trial); only the product with M is moved after the Gram
    matrix, which halves the cost at n = 40000.
    """
    p = len(D)
    M = np.linalg.inv(np.eye(p) - B)
    E = rng.standard_normal((trials, n, p)) * np.sqrt(D)
    m = E.mean(axis=1)                                                  # (T, p)
    G = np.matmul(np.swapaxes(E, 1, 2), E) - n * m[:, :, None] * m[:, None, :]
    return M.T @ (G / (n - 1)) @ M


# ---------------------------------------------------------------------------------------------
# partial correlations
# ---------------------------------------------------------------------------------------------
def partial_corrs(C: np.ndarray, pairs: np.ndarray, conds: np.ndarray) -> np.ndarray:
    """rho(i, j | S) for m queries of one conditioning size, from sub-covariances.

    C: (..., p, p); pairs: (m, 2); conds: (m, l). With P = inv(C[{i,j} u S, {i,j} u S]),
    rho = -P_12 / sqrt(P_11 P_22). Returns (..., m).
    """
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    conds = np.asarray(conds, dtype=np.int64).reshape(len(pairs), -1)
    idx = np.concatenate([pairs, conds], axis=1)                       # (m, k)
    sub = C[..., idx[:, :, None], idx[:, None, :]]                     # (..., m, k, k)
    P = np.linalg.inv(sub)
    return -P[..., 0, 1] / np.sqrt(P[..., 0, 0] * P[..., 1, 1])


def partial_corr(C: np.ndarray, i: int, j: int, S=()) -> float:
    """One partial correlation rho(i, j | S) of a single covariance matrix."""
    return float(partial_corrs(C, [[i, j]], [list(S)])[0])


# ---------------------------------------------------------------------------------------------
# Fisher dimension (INFERRED definitions, see FIDELITY)
# ---------------------------------------------------------------------------------------------
def edge_partial_corrs(A: np.ndarray, Sigma: np.ndarray) -> np.ndarray:
    """|rho(i, j | pa(j) \\ {i})| for every edge i -> j (in row-major edge order).

    INFERRED (primary): the partial correlation that carries the regression coefficient B_ij
    of the child j on its parents, i.e. the signal of the edge's Fisher information.
    """
    A = np.asarray(A, dtype=bool)
    out = []
    for i, j in zip(*np.nonzero(A), strict=True):
        rest = [k for k in np.flatnonzero(A[:, j]) if k != i]
        out.append(abs(partial_corr(Sigma, int(i), int(j), rest)))
    return np.array(out)


def fisher_edge(A: np.ndarray, Sigma: np.ndarray) -> tuple[float, float]:
    """(F_edge, rho_min) with rho_min = min over edges of |rho(i, j | pa(j) \\ {i})|, F = 1/rho^2.
    INFERRED definition (primary)."""
    r = edge_partial_corrs(A, Sigma)
    rho = float(r.min())
    return 1.0 / rho ** 2, rho


def fisher_all(A: np.ndarray, Sigma: np.ndarray) -> tuple[float, float]:
    """(F_all, rho_min) with rho_min = min over adjacent pairs {i, j} and every S of V \\ {i, j}
    of |rho(i, j | S)|: any of these may be tested by PC. INFERRED definition (secondary)."""
    A = np.asarray(A, dtype=bool)
    p = A.shape[0]
    skel = A | A.T
    rho = np.inf
    adj_pairs = [(i, j) for i in range(p) for j in range(i + 1, p) if skel[i, j]]
    for size in range(p - 1):
        pairs, conds = [], []
        for i, j in adj_pairs:
            others = [k for k in range(p) if k not in (i, j)]
            for S in combinations(others, size):
                pairs.append((i, j))
                conds.append(S)
        if pairs:
            r = np.abs(partial_corrs(Sigma, np.array(pairs), np.array(conds).reshape(len(pairs),
                                                                                     size)))
            rho = min(rho, float(r.min()))
    return 1.0 / rho ** 2, rho


# ---------------------------------------------------------------------------------------------
# baseline predictors of n*
# ---------------------------------------------------------------------------------------------
def structural_predictors(A: np.ndarray) -> dict[str, float]:
    """Number of edges, maximum in-degree and maximum (total) degree."""
    A = np.asarray(A, dtype=bool)
    skel = A | A.T
    return {"n_edges": float(A.sum()), "max_indeg": float(A.sum(axis=0).max()),
            "max_deg": float(skel.sum(axis=1).max())}


def naive_predictor(A: np.ndarray, B: np.ndarray) -> float:
    """1 / min |B_ij|^2 over edges: edge strength alone, ignoring the covariance."""
    return float(1.0 / np.min(np.abs(B[np.asarray(A, dtype=bool)])) ** 2)


def minimax_predictor(b_range) -> float:
    """Class-level predictor 1 / b_min^2: a constant within a regime (its class bound depends
    only on the regime's smallest edge magnitude)."""
    return float(1.0 / b_range[0] ** 2)
