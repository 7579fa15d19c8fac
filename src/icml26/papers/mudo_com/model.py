"""The multi-domain generative model of spec 48 and its exact synthetic generator.

s in R^d, E[s] = 0, Cov(s) = Sigma (a correlation matrix shared by all domains);
domain e: x_e = A Lambda_e s_e + noise, Lambda_e = diag(lam_e), lam_e > 0, so that
C_e = A (Sigma o lam_e lam_e^T) A^T (+ sigma^2 I).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Truth:
    A: np.ndarray        # (d, d) mixing, A_ij ~ N(0, 1)
    Sigma: np.ndarray    # (d, d) latent correlation (1 - rho) I + rho u u^T
    lam: np.ndarray      # (E, d) domain scalings ~ U(lam_lo, lam_hi)


def equicorrelation(d: int, rho: float, rng: np.random.Generator) -> np.ndarray:
    """Sigma = (1 - rho) I + rho u u^T with random signs u: every |corr| equals rho."""
    u = rng.choice([-1.0, 1.0], size=d)
    return (1.0 - rho) * np.eye(d) + rho * np.outer(u, u)


def draw_truth(d: int, E: int, rho: float, rng: np.random.Generator,
               lam_lo: float = 0.3, lam_hi: float = 2.0) -> Truth:
    Sigma = equicorrelation(d, rho, rng)
    A = rng.normal(size=(d, d))
    lam = rng.uniform(lam_lo, lam_hi, size=(E, d))
    return Truth(A=A, Sigma=Sigma, lam=lam)


def sample(truth: Truth, n: int, noise: float, rng: np.random.Generator):
    """Gaussian sources s (E, n, d) and observations x (E, n, d) of every domain."""
    E, d = truth.lam.shape
    chol = np.linalg.cholesky(truth.Sigma)
    s = rng.normal(size=(E, n, d)) @ chol.T
    x = (s * truth.lam[:, None, :]) @ truth.A.T
    if noise > 0:
        x = x + noise * rng.normal(size=x.shape)
    return s, x


def covariances(x: np.ndarray) -> np.ndarray:
    """Empirical (mean-centred) covariance of every domain: (E, d, d)."""
    xc = x - x.mean(axis=1, keepdims=True)
    return np.einsum("eni,enj->eij", xc, xc) / (x.shape[1] - 1)


def population_covariances(truth: Truth, noise: float = 0.0) -> np.ndarray:
    """Exact C_e = A (Sigma o lam_e lam_e^T) A^T + noise^2 I."""
    M = truth.Sigma[None] * truth.lam[:, :, None] * truth.lam[:, None, :]
    d = truth.A.shape[0]
    return truth.A @ M @ truth.A.T + noise ** 2 * np.eye(d)[None]
