"""Identifiability metrics for latent-source recovery (numpy + scipy).

- ``mcc``: mean correlation coefficient — absolute Pearson correlations between true and
  estimated sources after the optimal one-to-one matching (Hungarian algorithm); 1 means the
  sources are recovered up to permutation and scaling.
- ``amari_distance``: Amari et al. (1996) index of P = W A for an estimated unmixing W and the
  true mixing A, normalised to [0, 1]; 0 exactly when P is a scaled permutation.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment


def mcc(true_sources: np.ndarray, est_sources: np.ndarray) -> float:
    """Mean |corr| of matched pairs; both arrays are (samples, d)."""
    s, e = np.asarray(true_sources, float), np.asarray(est_sources, float)
    if s.shape != e.shape or s.ndim != 2:
        raise ValueError(f"sources must be equal (samples, d) arrays, got {s.shape} vs {e.shape}")
    d = s.shape[1]
    corr = np.abs(np.corrcoef(s.T, e.T)[:d, d:])
    rows, cols = linear_sum_assignment(-corr)
    return float(corr[rows, cols].mean())


def amari_distance(unmixing: np.ndarray, mixing: np.ndarray) -> float:
    """(1 / (2 d (d-1))) [sum_i (sum_j |p_ij| / max_j |p_ij| - 1)
    + sum_j (sum_i |p_ij| / max_i |p_ij| - 1)], P = unmixing @ mixing."""
    p = np.abs(np.asarray(unmixing, float) @ np.asarray(mixing, float))
    d = p.shape[0]
    if p.shape != (d, d) or d < 2:
        raise ValueError(f"unmixing @ mixing must be square with d >= 2, got {p.shape}")
    rows = (p.sum(axis=1) / p.max(axis=1) - 1.0).sum()
    cols = (p.sum(axis=0) / p.max(axis=0) - 1.0).sum()
    return float((rows + cols) / (2.0 * d * (d - 1)))
