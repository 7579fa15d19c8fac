"""The infinite-width, large-batch limit: a 2-D fast-slow ODE for (m, a) (spec's reconstruction).

Teacher y = He_1(z) - beta He_2(z)/sqrt(2) = z - beta (z^2 - 1)/sqrt(2), z = <w*, x>.
Student (1/N) sum_j a_j sigma(<w_j, x>), ||w_j|| = 1. With every first-layer weight at overlap
m with w* (spread uniformly around it) and every a_j = a, the network is a function of z only:
f(z) = a s_m(z), s_m(z) = E_xi sigma(m z + q xi), q = sqrt(1 - m^2). The population loss
L(m, a) = 0.5 E_z (a s_m(z) - y(z))^2 drives the gradient flow

    eps dm/dt = -(1 - m^2) dL/dm       (fast: first layer on the sphere)
        da/dt = -dL/da                  (slow: second layer)

Expectations over z use probabilists' Gauss-Hermite quadrature (the spec's 81 nodes). For ReLU
the inner expectation over xi is the spec's closed form, for tanh (full profile) a second
Gauss-Hermite sum. ``relu_closed_form`` gives L and its gradient exactly (arc-cosine kernel),
for the tests of the quadrature.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr

from icml26.dynamics import integrate

SQRT2 = math.sqrt(2.0)
SQRT2PI = math.sqrt(2.0 * math.pi)
Q_MIN = 1e-15            # q = sqrt(1 - m^2) floored: m = 1 is the boundary of the sphere


def gauss_hermite(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of E_{z ~ N(0,1)} g(z) ~ sum_k w_k g(z_k) (weights sum to 1)."""
    z, w = np.polynomial.hermite_e.hermegauss(int(n))
    return z, w / w.sum()


def target(z, beta):
    """y(z) = He_1(z) - beta He_2(z) / sqrt(2)."""
    return z - beta * (z * z - 1.0) / SQRT2


def _phi(u):
    return np.exp(-0.5 * u * u) / SQRT2PI


def smoothed(m, z, activation: str, quad):
    """(s_m(z), ds_m/dm) on the nodes z; m broadcasts against z (m[..., None])."""
    m = np.clip(m, -1.0, 1.0)
    q = np.maximum(np.sqrt(np.maximum(1.0 - m * m, 0.0)), Q_MIN)
    if activation == "relu":
        # E_xi ReLU(m z + q xi) = m z Phi(u) + q phi(u), u = m z / q (the spec's formula)
        u = m * z / q
        cdf, pdf = ndtr(u), _phi(u)
        return m * z * cdf + q * pdf, z * cdf - (m / q) * pdf
    if activation == "tanh":
        xi, wx = quad
        h = m[..., None] * z[..., None] + q[..., None] * xi
        th = np.tanh(h)
        s = (wx * th).sum(-1)
        ds = (wx * (1.0 - th * th) * (z[..., None] - (m / q)[..., None] * xi)).sum(-1)
        return s, ds
    raise ValueError(f"activation {activation!r}; allowed: relu, tanh")


def loss_and_grad(m, a, beta, activation: str, quad):
    """Population loss L(m, a) and (dL/dm, dL/da) by Gauss-Hermite quadrature over z.

    m and a broadcast; the nodes are the last axis. ``activation="relu-exact"`` gives the
    exact ReLU values instead (relu_closed_form), for the report's check of the quadrature.
    """
    if activation == "relu-exact":
        return relu_closed_form(m, a, beta)
    z, w = quad
    m, a = np.broadcast_arrays(np.asarray(m, float), np.asarray(a, float))
    s, ds = smoothed(m[..., None], z, activation, quad)
    r = a[..., None] * s - target(z, beta)
    L = 0.5 * (w * r * r).sum(-1)
    return L, (w * r * a[..., None] * ds).sum(-1), (w * r * s).sum(-1)


def relu_closed_form(m, a, beta):
    """Exact L, dL/dm, dL/da for ReLU: E s_m^2 = kappa(m^2) (degree-1 arc-cosine kernel),
    E s_m z = m/2, E s_m He_2 = m^2/sqrt(2 pi), E y^2 = 1 + beta^2."""
    m, a = np.clip(np.asarray(m, float), -1.0, 1.0), np.asarray(a, float)
    rho = m * m
    kappa = (np.sqrt(np.maximum(1.0 - rho * rho, 0.0)) + rho * (np.pi - np.arccos(rho))) \
        / (2 * np.pi)
    dkappa = (np.pi - np.arccos(rho)) / (2 * np.pi)          # d kappa / d rho
    sy = m / 2 - beta * rho / (SQRT2 * SQRT2PI)
    dsy = 0.5 - 2 * beta * m / (SQRT2 * SQRT2PI)
    L = 0.5 * (a * a * kappa - 2 * a * sy + 1.0 + beta * beta)
    return L, a * a * dkappa * m - a * dsy, a * kappa - sy


def field(beta, eps, activation, quad):
    """The fast-slow vector field (t, [m, a]) -> [dm/dt, da/dt]."""
    def f(_t, y):
        m, a = y
        _, gm, ga = loss_and_grad(m, a, beta, activation, quad)
        return np.array([-(1.0 - min(m * m, 1.0)) * gm / eps, -ga])
    return f


def solve(beta, a0, eps, m0, t_grid, activation, quad, rtol, atol):
    """(m, a, L) on t_grid from (m0, a0), by scipy's solve_ivp (icml26.dynamics)."""
    y = integrate(field(beta, eps, activation, quad), [m0, a0], t_grid, method="RK45",
                  rtol=rtol, atol=atol)
    m, a = y[:, 0], y[:, 1]
    L = loss_and_grad(m, a, beta, activation, quad)[0]
    return m, a, L


def critical_m(a, beta, activation, quad, iters: int = 60):
    """m*(a): the stable fast equilibrium dL/dm(m*, a) = 0, by bisection on (0, 1).

    dL/dm < 0 near m = 0 (alignment grows from a small overlap); where dL/dm is still <= 0
    just below m = 1 there is no interior root and the fast flow goes to m* = 1.
    """
    a = np.atleast_1d(np.asarray(a, float))
    lo, hi = np.full(a.shape, 1e-9), np.full(a.shape, 1.0 - 1e-12)
    top = loss_and_grad(hi, a, beta, activation, quad)[1]
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        g = loss_and_grad(mid, a, beta, activation, quad)[1]
        up = g < 0
        lo, hi = np.where(up, mid, lo), np.where(up, hi, mid)
    return np.where(top <= 0, 1.0, 0.5 * (lo + hi))


def reduced_flow(a, beta, activation, quad):
    """Slow flow on the critical manifold: da/dt = -dL/da(m*(a), a)."""
    a = np.atleast_1d(np.asarray(a, float))
    return -loss_and_grad(critical_m(a, beta, activation, quad), a, beta, activation, quad)[2]


def a_equilibrium(beta, activation, quad, lo: float = 1e-3, hi: float = 100.0,
                  iters: int = 60) -> float:
    """The zero a_eq of the reduced slow flow (stable: positive below, negative above) by
    bisection on [lo, hi]; NaN when the flow does not change sign there."""
    r_lo, r_hi = reduced_flow([lo, hi], beta, activation, quad)
    if not (r_lo > 0 > r_hi):
        return math.nan
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if reduced_flow(mid, beta, activation, quad)[0] > 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)
