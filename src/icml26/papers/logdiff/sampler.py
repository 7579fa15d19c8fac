"""Reverse-time samplers of the VP diffusion (numpy), shared by every method.

- ``em``: the spec's Euler-Maruyama discretisation of the reverse VP-SDE,
  x <- x + [beta x / 2 + beta s] dt + sqrt(beta dt) xi, on a uniform grid from t = 1 to t_end.
- ``ddim``: the deterministic DDIM update (eta = 0) the official image code uses (50 steps):
  eps = -sqrt(1 - abar) s, x0 = (x - sqrt(1 - abar) eps) / sqrt(abar),
  x' = sqrt(abar') x0 + sqrt(1 - abar') eps.
Both use the same initial noise for every method of a seed (the official code's paired
comparison), and ``em`` the same noise increments.
"""

from __future__ import annotations

import numpy as np

from .mixture import alpha_bar, beta

SAMPLERS = ("em", "ddim")


def time_grid(steps: int, t_end: float) -> np.ndarray:
    return np.linspace(1.0, t_end, steps + 1)


def step(kind: str, x: np.ndarray, s: np.ndarray, t: float, t_next: float,
         xi: np.ndarray | None) -> np.ndarray:
    if kind == "em":
        b, dt = beta(t), t - t_next
        return x + (0.5 * b * x + b * s) * dt + np.sqrt(b * dt) * xi
    if kind == "ddim":
        a, a2 = alpha_bar(t), alpha_bar(t_next)
        eps = -np.sqrt(1.0 - a) * s
        x0 = (x - np.sqrt(1.0 - a) * eps) / np.sqrt(a)
        return np.sqrt(a2) * x0 + np.sqrt(1.0 - a2) * eps
    raise ValueError(f"unknown sampler {kind!r}; allowed: {', '.join(SAMPLERS)}")
