"""Affine weight mixing (LAMP), its baselines' mixing rules, and the safety metric (numpy).

Every generator here is a mixing vector alpha over the N exemplars (sum alpha = 1): the
decoder weights are w = W^T alpha. The conditional decoder is the only method without one.
Distances between parameter vectors are measured after scaling each parameter by its
training-range width (our choice: the parameters have different units).
"""

from __future__ import annotations

import numpy as np

from icml26.stats import rankdata


def min_norm_alpha(P: np.ndarray, target: np.ndarray, constrained=None, ridge: float = 1e-6,
                   max_cond: float = 1e12) -> np.ndarray:
    """alpha* = argmin ||alpha||_2 s.t. P_C^T alpha = p*_C and 1^T alpha = 1.

    The minimum-norm exact solution alpha = A^T (A A^T)^-1 b, A = [P_C^T; 1^T], b = [p*_C; 1]
    (the paper's min ||P_C^T alpha - p*_C||^2 s.t. 1^T alpha = 1, taking the smallest alpha
    among its exact solutions). A ridge is added to A A^T when it is ill-conditioned (fewer
    exemplars than constraints, or exemplars on a lower-dimensional set)."""
    P = np.asarray(P, dtype=float)
    cols = list(range(P.shape[1])) if constrained is None else list(constrained)
    A = np.vstack([P[:, cols].T, np.ones(len(P))])
    b = np.r_[np.asarray(target, dtype=float)[cols], 1.0]
    G = A @ A.T
    if np.linalg.cond(G) > max_cond:
        G = G + ridge * np.eye(len(G))
    return A.T @ np.linalg.solve(G, b)


def scaled_distance(P: np.ndarray, target: np.ndarray, width: np.ndarray) -> np.ndarray:
    """Euclidean distance after dividing each parameter by its training-range width."""
    return np.linalg.norm((np.asarray(P) - np.asarray(target)) / width, axis=-1)


def local_alpha(P, target, width, k: int, constrained=None) -> np.ndarray:
    """LAMP-local: min-norm mixing of the k exemplars nearest to p* (zeros elsewhere)."""
    idx = np.argsort(scaled_distance(P, target, width), kind="stable")[:k]
    alpha = np.zeros(len(P))
    alpha[idx] = min_norm_alpha(P[idx], target, constrained)
    return alpha


def dni_alpha(P, target, width, k: int = 10) -> np.ndarray:
    """DNI (Wang et al. 2019) between two exemplars: among pairs of the k nearest, the pair
    whose parameter line passes closest to p*; t* = the (unclamped) projection of p* on that
    line; w = (1 - t*) w_a + t* w_b."""
    Q = np.asarray(P) / width
    q = np.asarray(target) / width
    near = np.argsort(np.linalg.norm(Q - q, axis=1), kind="stable")[:k]
    best = (np.inf, 0, 0, 0.0)
    for i, a in enumerate(near):
        for b in near[i + 1:]:
            u = Q[b] - Q[a]
            uu = float(u @ u)
            if uu == 0:
                continue
            t = float((q - Q[a]) @ u) / uu
            r = float(np.linalg.norm(Q[a] + t * u - q))
            if r < best[0]:
                best = (r, a, b, t)
    alpha = np.zeros(len(P))
    _, a, b, t = best
    alpha[a], alpha[b] = 1.0 - t, t
    return alpha


def nearest_alpha(P, target, width) -> np.ndarray:
    """The nearest exemplar itself (no control; lower reference)."""
    alpha = np.zeros(len(P))
    alpha[int(np.argmin(scaled_distance(P, target, width)))] = 1.0
    return alpha


def guided_alpha(P, target, constrained, gain: np.ndarray, mu: float) -> np.ndarray:
    """Performance-guided choice inside the feasible set (full profile, a sketch):
    argmin g^T P^T alpha + mu ||alpha||^2 s.t. P_C^T alpha = p*_C, 1^T alpha = 1, for a proxy
    linear in the parameters with gradient ``gain``. Closed form: the min-norm solution minus
    the projection of P g / (2 mu) onto the null space of the constraints."""
    P = np.asarray(P, dtype=float)
    cols = list(constrained)
    A = np.vstack([P[:, cols].T, np.ones(len(P))])
    base = min_norm_alpha(P, target, cols)
    v = P @ np.asarray(gain, dtype=float)
    proj = v - A.T @ np.linalg.solve(A @ A.T, A @ v)
    return base - proj / (2 * mu)


def linearity_mismatch(f_mixed: np.ndarray, mixture: np.ndarray, band: float = 0.2) -> np.ndarray:
    """LM (INFERRED definition): mean over grid points with |sum_i alpha_i f_wi(x)| < band of
    |f_{sum alpha_i w_i}(x) - sum_i alpha_i f_wi(x)|, per design (rows). NaN when no grid
    point lies in the band."""
    f_mixed = f_mixed.reshape(len(f_mixed), -1)
    mixture = mixture.reshape(len(mixture), -1)
    mask = np.abs(mixture) < band
    n = mask.sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, (np.abs(f_mixed - mixture) * mask).sum(1) / n, np.nan)


def auroc(score: np.ndarray, positive: np.ndarray) -> float:
    """Area under the ROC curve of ``score`` for the labels ``positive`` (Mann-Whitney, ties
    counted half); NaN when either class is empty or a score is not finite."""
    score = np.asarray(score, dtype=float)
    positive = np.asarray(positive, dtype=bool)
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    if n_pos == 0 or n_neg == 0 or not np.isfinite(score).all():
        return float("nan")
    r = rankdata(score)
    return float((r[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))
