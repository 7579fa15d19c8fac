"""Logistic-regression variant of nested DRO (full profile only), read top to bottom.

INFERRED throughout: the spec only names "a logistic-regression variant with label
contamination". Labels y ∈ {−1, +1}, loss ℓ(θ; x, y) = softplus(−y θᵀx).
1. Inner OT step (quadratic cost γ‖δ‖² on x only), per sample. The worst δ moves the margin
   m = yθᵀx down along −yθ/‖θ‖. With a = the margin decrease,
       ℓ̃ = sup_{a ≥ 0} softplus(a − m) − (γ/‖θ‖²) a²,
   a 1-D concave problem while ‖θ‖² < 8γ (softplus'' ≤ 1/4). Its maximiser solves
   σ(a − m) = 2γa/‖θ‖² on [0, ‖θ‖²/(2γ)], found by vectorised bisection. There is no closed
   form here, unlike the squared loss.
2. Outer χ² step: the same optimistic / pessimistic weights as for regression (dro.weights).
3. Danskin gradient, with δ* = −(a*/‖θ‖²) y θ fixed:
       ∇ℓ̃_i = −σ(a*_i − m_i) y_i (x_i + δ*_i) = −σ_i y_i x_i + σ_i (a*_i/‖θ‖²) θ,
   and the same Adam + radial projection as for regression (dro.fit_adam).
"""

from __future__ import annotations

import numpy as np

from . import data as datasets
from . import dro


def softplus(z):
    return np.logaddexp(0.0, z)


def sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def inner_shift(margin: np.ndarray, sq: np.ndarray, gamma, iters: int = 50) -> np.ndarray:
    """a* ≥ 0 maximising softplus(a − m) − (γ/‖θ‖²) a² per sample (B, n); 0 where γ = ∞."""
    gamma = np.broadcast_to(np.asarray(gamma, dtype=float), sq.shape)
    finite = np.isfinite(gamma)
    c = np.where(finite, gamma, 1.0) / np.maximum(sq, 1e-300)          # γ/‖θ‖²
    lo = np.zeros_like(margin)
    hi = np.broadcast_to((0.5 / c)[:, None], margin.shape).copy()       # σ ≤ 1 ⇒ a* ≤ 1/(2c)
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        up = sigmoid(mid - margin) > 2.0 * c[:, None] * mid               # derivative > 0
        lo = np.where(up, mid, lo)
        hi = np.where(up, hi, mid)
    a = 0.5 * (lo + hi)
    return np.where(finite[:, None] & (sq[:, None] > 0), a, 0.0)


def robust_losses(X, y, theta, gamma, iters: int = 50):
    """ℓ̃ (B, n), the margin decrease a* and the margins m."""
    margin = y * (X * theta[:, None, :]).sum(axis=-1)
    sq = (theta * theta).sum(axis=-1)
    a = inner_shift(margin, sq, gamma, iters)
    gamma = np.broadcast_to(np.asarray(gamma, dtype=float), sq.shape)
    c = np.where(np.isfinite(gamma), gamma, 0.0) / np.maximum(sq, 1e-300)
    return softplus(a - margin) - c[:, None] * a * a, a, margin


def objective_and_grad(X, y, theta, gamma, mode, eta, mask=None, iters: int = 60):
    """F(θ) = Σ w*_i ℓ̃_i and its Danskin gradient (same signature as dro.objective_and_grad)."""
    loss, a, margin = robust_losses(X, y, theta, gamma)
    w = dro.weights(loss, mode, eta, mask, iters)
    sig = sigmoid(a - margin)
    sq = np.maximum((theta * theta).sum(axis=-1), 1e-300)
    grad = (-(X * (w * sig * y)[:, :, None]).sum(axis=1)
            + ((w * sig * a).sum(axis=-1) / sq)[:, None] * theta)
    return (w * loss).sum(axis=-1), grad, w


def erm_newton(X: np.ndarray, y: np.ndarray, iters: int = 30, ridge: float = 1e-6):
    """Unregularised logistic ERM by Newton's method (tiny ridge for numerical safety): the
    ERM baseline and (INFERRED) the common initialisation of the Adam-based methods."""
    theta = np.zeros(X.shape[1])
    for _ in range(iters):
        m = y * (X @ theta)
        p = sigmoid(-m)
        g = -(X * (p * y)[:, None]).sum(axis=0) + ridge * theta
        h = X.T @ (X * (p * (1 - p))[:, None]) + ridge * np.eye(X.shape[1])
        theta = theta - np.linalg.solve(h, g)
    return theta


def synthetic(p: dict, rng: np.random.Generator) -> dict:
    """Classification version of the synthetic design (INFERRED): the regression inputs,
    y = sign(θ*ᵀx + 0.3·t_ν), a fraction eps of BULK labels flipped; clean test labels
    sign(θ*ᵀx + 0.3·N(0, 1)) at x ~ N(0, I), and the perturbed-input test condition."""
    inst = datasets.synthetic({**p, "eps": 0.0}, rng)
    y = np.where(inst["y"] >= 0, 1.0, -1.0)
    kind = inst["kind"]
    n_bulk = int((kind == 0).sum())
    n_out = int(round(float(p["eps"]) * n_bulk))
    if n_out:
        idx = rng.choice(n_bulk, size=n_out, replace=False)
        y[idx] = -y[idx]
        kind = kind.copy()
        kind[idx] = datasets.OUTLIER
    return {**inst, "y": y, "kind": kind,
            "y_test": np.where(inst["y_test"] >= 0, 1.0, -1.0)}
