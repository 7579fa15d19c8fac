"""Baselines of spec 48: JD-GEVD (exact two-domain joint diagonalisation) and FastICA.

JD-LS is mudocom.fit(..., free_sigma=False) (the same least-squares code with S = I); the
oracle is the true mixing matrix (no code).
"""

from __future__ import annotations

import numpy as np

from .mudocom import gevd_unmixing


def jd_gevd(C: np.ndarray) -> np.ndarray:
    """Mixing estimate from the generalised eigendecomposition of (C_0, C_1) (Tong / AMUSE
    style): W = eigvecs(C_1, C_0)^T diagonalises both covariances; exact when E = 2 and
    Sigma = I, since then W C_e W^T is diagonal for both domains."""
    return np.linalg.inv(gevd_unmixing(C[0], C[1]))


def standardise(x: np.ndarray):
    """Per-domain standardisation of every channel: returns z, means (E, d), stds (E, d)."""
    mu = x.mean(axis=1, keepdims=True)
    sd = x.std(axis=1, keepdims=True)
    return (x - mu) / sd, mu[:, 0], sd[:, 0]


def fastica_unmixing(x: np.ndarray, seed: int, max_iter: int = 1000,
                     n_fit: int | None = None) -> np.ndarray:
    """FastICA on the pooled, per-domain-standardised data (x: (E, n, d)).

    n_fit: samples per domain given to FastICA (the first n_fit; None = all). On Gaussian
    latents FastICA never converges and always runs max_iter iterations, so its cost is
    linear in the pooled sample size; the budget caps it (see FIDELITY).

    Returns the unmixing W_ica of standardised data; the unmixing of domain e's raw data is
    W_ica diag(1 / sd_e) (applied after centring), see experiment.unmixings.
    """
    import warnings

    from sklearn.decomposition import FastICA  # imported only here (baseline only)
    from sklearn.exceptions import ConvergenceWarning

    z, _, _ = standardise(x)
    if n_fit is not None:
        z = z[:, :n_fit]
    pooled = z.reshape(-1, z.shape[-1])
    ica = FastICA(n_components=z.shape[-1], whiten="unit-variance", max_iter=max_iter,
                  random_state=seed % (2**32))
    with warnings.catch_warnings():
        # Gaussian latents: FastICA is expected not to converge (that is the point)
        warnings.simplefilter("ignore", ConvergenceWarning)
        ica.fit(pooled)
    return np.asarray(ica.components_, float)
