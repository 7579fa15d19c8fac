"""Data of the paper: flat-torus manifolds of known intrinsic dimension, and digits.

The flat torus is the cleanest test bed for the manifold hypothesis: u ~ U[0,1)^d is mapped
to z = [cos(2 pi u), sin(2 pi u)] / sqrt(2) in R^(2d), an isometric (flat) embedding with
uniform density, and then rotated into R^D by a random matrix Q with orthonormal columns.
Its intrinsic dimension is exactly d, so the quantization exponent is exactly eps = 2/d.
"""

from __future__ import annotations

import numpy as np


def random_orthonormal(D: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """A D x m matrix with orthonormal columns (QR of a Gaussian matrix, signs fixed)."""
    if m > D:
        raise ValueError(f"cannot embed {m} dimensions in D={D}")
    q, r = np.linalg.qr(rng.standard_normal((D, m)))
    # fixing the signs of diag(r) makes Q Haar-distributed (and the result unique)
    return q * np.sign(np.diag(r))


def flat_torus(n: int, D: int, d: int, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """n points of the flat d-torus embedded in R^D, plus isotropic noise of scale sigma."""
    u = rng.random((n, d))
    angle = 2.0 * np.pi * u
    z = np.concatenate([np.cos(angle), np.sin(angle)], axis=1) / np.sqrt(2.0)
    Q = random_orthonormal(D, 2 * d, rng)
    x = z @ Q.T
    if sigma > 0:
        x = x + sigma * rng.standard_normal((n, D))
    return x


def load_digits_standardised() -> np.ndarray:
    """scikit-learn's 8x8 digits (n=1797, D=64), each feature scaled to mean 0, variance 1.

    Constant pixels (variance 0) are only centred. scikit-learn is imported here and only
    here, so that jobs that do not need digits do not pay for the import.
    """
    from sklearn.datasets import load_digits

    x = load_digits().data.astype(np.float64)
    std = x.std(axis=0)
    return (x - x.mean(axis=0)) / np.where(std > 0, std, 1.0)
