"""SAD-Flower: a flow-matching planner steered by a minimum-norm CBF/CLF quadratic program.

The learned flow dZ/dtau = v_phi(Z, tau) (Z: the plan standardised per coordinate) gets a
virtual control input w. At every Euler step, for tau >= tau_on, w solves

    min ||w||^2 + 100 delta^2
    s.t. grad h_i . (v + w) >= -mu(tau) h_i        every barrier (obstacles, action bounds)
         grad V   . (v + w) <= -mu(tau) V + delta   the Lyapunov function of dynamic consistency

with the prescribed-time gain mu(tau) = c / (1 - tau + delta_pt). Constraint functions are
evaluated on the unstandardised plan X = m + s * Z; their gradients in Z follow from the chain
rule (grad_Z = s * grad_X). The slack delta is carried as delta' = 10 delta appended to w with
row coefficient -0.1, so the objective is the plain squared norm of (w, delta').

The QP is solved by Hildreth's dual coordinate ascent, lambda_i <- max(0, lambda_i +
(G_i w - b_i) / ||G_i||^2), w = -G^T lambda, 40 sweeps, vectorised over the batch of plans.
Rows that touch disjoint coordinates (the obstacle rows of one obstacle across time steps, the
upper-bound rows of v and omega, the lower-bound rows) are updated together: their updates do
not interact, so this is exactly Hildreth's sequential sweep in a particular row order.
Only barrier rows with h < 0.5 (near-active) enter; the CLF row always does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import system


@dataclass
class Problems:
    """A batch of test problems (numpy, unstandardised)."""

    x0: np.ndarray       # (B, sx)
    goal: np.ndarray     # (B, 2)
    centres: np.ndarray  # (B, O, 2)
    radii: np.ndarray    # (B, O)
    v_max: float         # action bounds b1, b2 (unicycle: v_max, om_max; see system.bounds)
    om_max: float
    sysm: type = system.Unicycle


@dataclass
class Standardiser:
    """X = mean + std * Z per plan coordinate (training statistics)."""

    mean: np.ndarray  # ((sx + 2) H,)
    std: np.ndarray   # ((sx + 2) H,)
    H: int
    sx: int = system.SX

    def to_x(self, Z):
        return system.unflatten(self.mean + self.std * Z, self.H, self.sx)

    def to_z(self, states, actions):
        return (system.flatten(states, actions) - self.mean) / self.std

    def split_std(self):
        s_states, s_actions = system.unflatten(self.std[None], self.H, self.sx)
        return s_states[0], s_actions[0]


@dataclass
class Rows:
    """Which constraint families enter the QP, and its parameters."""

    obstacles: bool = True
    actions: bool = True
    clf: bool = True
    slack: bool = True       # CLF slack (cost 100 delta^2), INFERRED feasibility safeguard
    active_below: float = 0.5
    sweeps: int = 40


def prescribed_gain(tau, c=2.0, delta=0.02):
    """mu(tau) = c / (1 - tau + delta): grows without bound (up to 1/delta) as tau -> 1."""
    return c / (1.0 - tau + delta)


def constraint_terms(states, actions, prob: Problems, std: Standardiser):
    """Barrier values and Z-space gradients; V and its Z-space gradient."""
    s_st, s_ac = std.split_std()
    sysm = prob.sysm
    h_obs = system.obstacle_h(states, prob.centres, prob.radii, sysm)           # (B, H, O)
    # gradient w.r.t. x_t[:2] (the position depends on these only), chained into Z
    a_obs = system.obstacle_grad(states, prob.centres, sysm) * s_st[None, :, None, :2]
    h_act = system.action_h(actions, prob.v_max, prob.om_max, sysm)             # (B, H, 4)
    sign = np.array([-1.0, 1.0, -1.0, 1.0])
    var = np.array([0, 0, 1, 1])   # rows 0, 1 act on v_t; rows 2, 3 on omega_t
    a_act = sign[None, None, :] * s_ac[None, :, var]                            # (1, H, 4)
    V, gs, ga = system.clf(prob.x0, states, actions, sysm)
    return {"h_obs": h_obs, "a_obs": a_obs, "h_act": h_act,
            "a_act": np.broadcast_to(a_act, h_act.shape), "var": var,
            "V": V, "gV_s": gs * s_st[None], "gV_a": ga * s_ac[None]}


def solve_qp(terms, v_s, v_a, mu, rows: Rows):
    """Hildreth's method for min ||w||^2 (+ delta'^2) s.t. G w <= b; returns (w_s, w_a, slack).

    v_s (B, H, 3), v_a (B, H, 2): the nominal velocity in Z. Rows (G w <= b):
      barrier i with Z-gradient a_i:  -a_i . w <= mu h_i + a_i . v
      CLF:                 gV . w - 0.1 delta' <= -mu V - gV . v
    """
    B, H, _ = v_s.shape
    w_s, w_a, w_d = np.zeros_like(v_s), np.zeros_like(v_a), np.zeros(B)
    blocks = []  # rows updated together, in sweep order: [kind, a, b, ||G_i||^2, mask, lambda]
    if rows.obstacles:
        h, a_all = terms["h_obs"], terms["a_obs"]
        for o in range(h.shape[2]):  # one obstacle, all time steps: disjoint coordinates p_t
            a = np.ascontiguousarray(a_all[:, :, o])
            b = mu * h[..., o] + (a * v_s[..., :2]).sum(-1)
            n = np.maximum((a ** 2).sum(-1), 1e-12)
            blocks.append(["obs", a, b, n, h[..., o] < rows.active_below, np.zeros((B, H))])
    if rows.actions:
        h, a_all = terms["h_act"], terms["a_act"]
        # rows (0: v_max - v, 2: om_max - om) together, then (1: v, 3: om_max + om): each pair
        # acts on (v_t, om_t), distinct coordinates
        for pair in ((0, 2), (1, 3)):
            a = np.ascontiguousarray(a_all[..., pair])          # (B, H, 2): column j acts on u_j
            b = mu * h[..., pair] + a * v_a
            blocks.append(["act", a, b, a ** 2, h[..., pair] < rows.active_below,
                           np.zeros((B, H, 2))])
    if rows.clf:
        gs, ga, V = terms["gV_s"], terms["gV_a"], terms["V"]
        c_d = -0.1 if rows.slack else 0.0
        b_c = -mu * V - (gs * v_s).sum((1, 2)) - (ga * v_a).sum((1, 2))
        n_c = np.maximum((gs ** 2).sum((1, 2)) + (ga ** 2).sum((1, 2)) + c_d ** 2, 1e-12)
        blocks.append(["clf", None, b_c, n_c, None, np.zeros(B)])
    for _ in range(rows.sweeps):
        for blk in blocks:
            kind, a, b, n, mask, lam = blk
            if kind == "obs":
                gw = -(a * w_s[..., :2]).sum(-1)                 # G_i w with G_i = -a_i
                new = np.maximum(0.0, lam + (gw - b) / n) * mask
                w_s[..., :2] += (new - lam)[..., None] * a       # w = -G^T lambda
            elif kind == "act":
                gw = -a * w_a
                new = np.maximum(0.0, lam + (gw - b) / n) * mask
                w_a += (new - lam) * a
            else:
                gw = (gs * w_s).sum((1, 2)) + (ga * w_a).sum((1, 2)) + c_d * w_d
                new = np.maximum(0.0, lam + (gw - b) / n)
                d = new - lam
                w_s -= d[:, None, None] * gs
                w_a -= d[:, None, None] * ga
                w_d -= d * c_d
            blk[5] = new
    return w_s, w_a, w_d / 10.0  # slack delta = delta' / 10


def guided_sample(velocity, Z0, prob: Problems, std: Standardiser, n_steps: int,
                  rows: Rows, gain, tau_on=0.3, record=None):
    """Euler integration of dZ/dtau = v_phi + w from tau = 0 to 1; w from the QP when tau >= tau_on.

    ``gain(tau)`` is the class-K gain (prescribed-time for SAD-Flower, constant for the
    states-only baseline). ``record(k, tau, Z, slack)`` is called before every step and at the end.
    Returns the final Z and the per-plan mean slack over the guided steps.
    """
    Z = Z0.copy()
    dtau = 1.0 / n_steps
    slack_sum, guided = np.zeros(Z.shape[0]), 0
    B, H = Z.shape[0], std.H
    for k in range(n_steps):
        tau = k * dtau
        v = velocity(Z, tau)
        slack = np.zeros(B)
        if tau >= tau_on - 1e-9:
            states, actions = std.to_x(Z)
            terms = constraint_terms(states, actions, prob, std)
            v_s, v_a = system.unflatten(v, H, std.sx)
            # discrete-time CBF/CLF: h_{k+1} >= (1 - mu dtau) h_k keeps h >= 0 only while
            # mu dtau <= 1, so the gain is capped at 1 / dtau (binds at the last step only)
            w_s, w_a, slack = solve_qp(terms, v_s, v_a, min(gain(tau), 1.0 / dtau), rows)
            v = v + system.flatten(w_s, w_a)
            slack_sum += slack
            guided += 1
        if record is not None:
            record(k, tau, Z, slack)
        Z = Z + dtau * v
    if record is not None:
        record(n_steps, 1.0, Z, np.zeros(B))
    return Z, slack_sum / max(guided, 1)
