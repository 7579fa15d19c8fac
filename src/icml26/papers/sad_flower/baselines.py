"""Baselines: unguided FM, post-hoc projection, gradient (cost) guidance, states-only CBF.

All start from the same initial noise Z0 as SAD-Flower (paired comparison) and use the same
learned velocity field.
"""

from __future__ import annotations

import numpy as np

from . import system
from .sad_flower import Problems, Rows, Standardiser, constraint_terms, guided_sample, solve_qp


def fm_sample(velocity, Z0, n_steps: int, record=None):
    """Unguided Euler sampling of the flow from tau = 0 to 1."""
    Z = Z0.copy()
    dtau = 1.0 / n_steps
    for k in range(n_steps):
        if record is not None:
            record(k, k * dtau, Z, np.zeros(Z.shape[0]))
        Z = Z + dtau * velocity(Z, k * dtau)
    if record is not None:
        record(n_steps, 1.0, Z, np.zeros(Z.shape[0]))
    return Z


def project(Z_fm, prob: Problems, std: Standardiser, n_gn: int = 5, rows: Rows | None = None):
    """FM + post-hoc projection: Gauss-Newton steps of min ||Z - Z_FM||^2 s.t. the constraints.

    Step k linearises every constraint at Z_k and solves, with the same QP solver,
        min ||w||^2  s.t.  h_i(Z_k) + grad h_i . (d + w) >= 0,  V(Z_k) + grad V . (d + w) <= delta
    with d = Z_FM - Z_k, then sets Z_{k+1} = Z_FM + w (so Z_{k+1} - Z_FM = w is the smallest
    move meeting the linearised constraints). This is the flow QP with v = d and mu = 1.
    INFERRED: "the linearised constraints" are read as the same constraint set as SAD-Flower's
    (obstacles, action bounds, consistency V <= 0 with the same slack), in standardised space.
    """
    rows = rows or Rows()
    Z = Z_fm.copy()
    for _ in range(n_gn):
        states, actions = std.to_x(Z)
        terms = constraint_terms(states, actions, prob, std)
        d_s, d_a = system.unflatten(Z_fm - Z, std.H, std.sx)
        w_s, w_a, _ = solve_qp(terms, d_s, d_a, 1.0, rows)
        Z = Z_fm + system.flatten(w_s, w_a)
    return Z


def cost_gradient(states, actions, prob: Problems):
    """grad_X of sum relu(-h)^2 (obstacles and action bounds) + V, in unstandardised units."""
    sysm = prob.sysm
    V, g_s, g_a = system.clf(prob.x0, states, actions, sysm)
    h_obs = system.obstacle_h(states, prob.centres, prob.radii, sysm)
    a_obs = system.obstacle_grad(states, prob.centres, sysm)  # grad_{x[:2]} h
    # d/dX relu(-h)^2 = -2 relu(-h) grad_X h
    g_s[..., :2] += (-2 * np.maximum(-h_obs, 0)[..., None] * a_obs).sum(2)
    h_act = system.action_h(actions, prob.v_max, prob.om_max, sysm)
    coef = -2 * np.maximum(-h_act, 0) * np.array([-1.0, 1.0, -1.0, 1.0])
    g_a[..., 0] += coef[..., 0] + coef[..., 1]
    g_a[..., 1] += coef[..., 2] + coef[..., 3]
    return system.flatten(g_s, g_a)


def cost_gradient_z(Z, prob: Problems, std: Standardiser):
    """grad_Z of the guidance cost: the flow's standardised coordinates, grad_Z = s grad_X."""
    states, actions = std.to_x(Z)
    return std.std * cost_gradient(states, actions, prob)


def cost_curvature(Z, prob: Problems, std: Standardiser, iters: int = 20, eps: float = 1e-5,
                   seed: int = 0):
    """Per-plan estimate of the largest Hessian eigenvalue of the cost in Z (power iteration
    on finite-difference Hessian-vector products; fixed start, so deterministic)."""
    g0 = cost_gradient_z(Z, prob, std)
    u = np.random.default_rng(seed).standard_normal(Z.shape)
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    lam = np.zeros(Z.shape[0])
    for _ in range(iters):
        hu = (cost_gradient_z(Z + eps * u, prob, std) - g0) / eps
        lam = np.linalg.norm(hu, axis=1)
        u = hu / np.maximum(lam, 1e-300)[:, None]
    return lam


def gradient_guided_sample(velocity, Z0, prob: Problems, std: Standardiser, n_steps: int,
                           lam: float = 20.0, tau_on: float = 0.3, record=None, stats=None):
    """Diffuser-style cost guidance: dZ/dtau = v_phi - lam grad_Z [sum relu(-h)^2 + V] for
    tau >= tau_on.

    The flow lives in standardised plan coordinates Z (X = m + s Z), so the guidance gradient
    is taken with respect to the same Z: grad_Z = s grad_X by the chain rule, the mapping
    SAD-Flower's QP uses. Each Euler step of the flow (one network call) is followed by n
    explicit sub-steps of the guidance term over the same dtau (Lie splitting of the same
    ODE). One explicit step of lam grad_Z C over one Euler step dtau is unstable wherever
    lam dtau x curvature(C) > 2, which the consistency term V exceeds, so n is set at every
    step from the estimated curvature L of the batch: n = ceil(lam dtau max L), i.e. each
    sub-step has lam h L <= 1, half the explicit stability limit. ``stats`` (a list) receives
    n per guided step.
    """
    Z = Z0.copy()
    dtau = 1.0 / n_steps
    for k in range(n_steps):
        tau = k * dtau
        if record is not None:
            record(k, tau, Z, np.zeros(Z.shape[0]))
        Z = Z + dtau * velocity(Z, tau)
        if tau >= tau_on - 1e-9:
            curv = cost_curvature(Z, prob, std, seed=k)
            n = max(1, int(np.ceil(lam * dtau * float(np.max(curv, initial=0.0)))))
            for _ in range(n):
                Z = Z - (dtau / n) * lam * cost_gradient_z(Z, prob, std)
            if stats is not None:
                stats.append(n)
    if record is not None:
        record(n_steps, 1.0, Z, np.zeros(Z.shape[0]))
    return Z


def cbf_states_only_sample(velocity, Z0, prob: Problems, std: Standardiser, n_steps: int,
                           mu: float = 5.0, tau_on: float = 0.3, record=None, stats=None):
    """SafeDiffuser-style invariance: obstacle CBF rows only, constant gain mu, no CLF."""
    rows = Rows(obstacles=True, actions=False, clf=False, slack=False)
    Z, _ = guided_sample(velocity, Z0, prob, std, n_steps, rows, lambda tau: mu,
                         tau_on=tau_on, record=record, strict=False,  # tau >= tau_on (spec)
                         stats=stats)
    return Z
