"""Weierstrass-type Hölder targets (numpy).

d0 = 1: f(x) = sum_{k<K} 2^(-k alpha) cos(2^k pi x + phi_k)
d0 = 2: f(x) = sum_{k<K} 2^(-k alpha) cos(2^k pi x1 + phi_k) cos(2^k pi x2 + psi_k)
Hölder-alpha for alpha < 1 (Lipschitz-like at alpha = 1 up to the finite K); normalised to zero
mean and unit variance on the dense evaluation grid. The energy above octave k is
proportional to 2^(-2 k alpha): the source of the rates the claims compare.
"""

from __future__ import annotations

import numpy as np


def phases(rng: np.random.Generator, octaves: int) -> np.ndarray:
    """(2, K) phases phi_k, psi_k ~ U[0, 2 pi) (psi unused at d0 = 1)."""
    return rng.uniform(0.0, 2.0 * np.pi, size=(2, octaves))


def raw(x: np.ndarray, alpha: float, ph: np.ndarray) -> np.ndarray:
    """Unnormalised target at x (n, d0), d0 in {1, 2}."""
    K = ph.shape[1]
    k = np.arange(K)
    amp, freq = 2.0 ** (-k * alpha), np.pi * 2.0 ** k
    c1 = np.cos(x[:, :1] * freq + ph[0])                       # (n, K)
    if x.shape[1] == 1:
        return c1 @ amp
    if x.shape[1] == 2:
        return (c1 * np.cos(x[:, 1:2] * freq + ph[1])) @ amp
    raise ValueError(f"targets are defined for d0 in {{1, 2}}, got {x.shape[1]}")


def dense_grid(d0: int, grid_1d: int, grid_2d: int) -> np.ndarray:
    """Evaluation grid: grid_1d points on [0, 1] (d0 = 1) or a grid_2d x grid_2d lattice."""
    if d0 == 1:
        return np.linspace(0.0, 1.0, grid_1d)[:, None]
    t = np.linspace(0.0, 1.0, grid_2d)
    a, b = np.meshgrid(t, t, indexing="ij")
    return np.stack([a.ravel(), b.ravel()], axis=1)


class Target:
    """f normalised to zero mean, unit variance on the dense grid."""

    def __init__(self, alpha: float, d0: int, ph: np.ndarray, grid: np.ndarray):
        self.alpha, self.d0, self.ph = float(alpha), int(d0), ph
        g = raw(grid, self.alpha, ph)
        self.mean_, self.std_ = float(g.mean()), float(g.std())

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return (raw(x, self.alpha, self.ph) - self.mean_) / self.std_
