"""SAD-Flower: a flow-matching planner steered by a minimum-norm CBF/CLF quadratic program.

The learned flow dZ/dtau = v_phi(Z, tau) (Z: the plan standardised per coordinate) gets a
virtual control input w. At every Euler step with tau > tau_on, w solves

    min ||w||^2 (+ 100 delta^2 when the CLF has a slack)
    s.t. grad h_i . (v + w) >= -mu_obs(tau) h_i     every obstacle barrier
         grad h_j . (v + w) >= -mu_act(tau) h_j     every action-bound barrier
         grad V   . (v + w) <= -mu_clf(tau) V (+ delta)   dynamic consistency (CLF)

Gains. The official code (TzuYuan107/sad-flower, gflower/CBFCLF_tool/CBF_CLF_generator.py,
``_PTCBF_TimeGain_CBF`` / ``_PTCBF_TimeGain_CLF`` and ``compute_cbf_constraints`` /
``compute_clf_dc``) uses mu(tau) = c (1 / max((T - tau)^2, pt_min) + pt_ord1 tau) with its own
c and floor pt_min for the state barriers, the action barriers and the CLF, and the
prescribed time T = the last Euler evaluation time + 1e-4 (gflower/models_flow/flow_policy.py):
:func:`official_gain`. The spec's reading, one gain mu(tau) = c / (1 - tau + delta) for every
row, is :func:`prescribed_gain` (kept for the labelled variant).

Constraint functions are evaluated on the unstandardised plan X = m + s * Z; their gradients
in Z follow from the chain rule (grad_Z = s * grad_X). An optional CLF slack delta is carried
as delta' = 10 delta appended to w with row coefficient -0.1, so the objective is the plain
squared norm of (w, delta'); the official CLF row is hard (no slack).

The QP is solved by Hildreth's dual coordinate ascent, lambda_i <- max(0, lambda_i +
(G_i w - b_i) / ||G_i||^2), w = -G^T lambda, a fixed number of sweeps, vectorised over the
batch of plans. Rows that touch disjoint coordinates (the obstacle rows of one obstacle across
time steps, the upper-bound rows of v and omega, the lower-bound rows) are updated together:
their updates do not interact, so this is exactly Hildreth's sequential sweep in a particular
row order. Barrier rows with h < active_below enter (the official QP has every row: a large
active_below); the CLF row always does.
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
    slack: bool = True       # CLF slack (cost 100 delta^2): the spec's INFERRED safeguard
    active_below: float = 0.5
    sweeps: int = 40
    exact: bool = False      # finish plans Hildreth leaves > tol off with an exact solver
    tol: float = 1e-6        # (a row violation, as a distance in Z)


def prescribed_gain(tau, c=2.0, delta=0.02):
    """The spec's gain mu(tau) = c / (1 - tau + delta): grows up to c / delta as tau -> 1."""
    return c / (1.0 - tau + delta)


def official_gain(tau, c, pt_min, pt_ord1, T):
    """The official gain c (1 / max((T - tau)^2, pt_min) + pt_ord1 tau) (CBF_CLF_generator.py).

    The floor pt_min bounds the prescribed-time term by 1 / pt_min, so near T the gain is a
    constant c (1 / pt_min + pt_ord1 tau)."""
    return c * (1.0 / max((T - tau) ** 2, pt_min) + pt_ord1 * tau)


def prescribed_time(n_steps, eps=1e-4):
    """T = the last Euler evaluation time + eps: the official ``prescribed_time`` of
    flow_policy.py for a grid of n_steps + 1 points on [0, 1]."""
    return 1.0 - 1.0 / n_steps + eps


def guided_steps(n_steps, tau_on, strict=True):
    """Indices k of the Euler steps (tau_k = k / n_steps) at which the guidance acts: tau_k >
    tau_on (the official gate skips t <= start_time) or, with strict=False, tau_k >= tau_on (the
    spec's "active for tau >= tau_on")."""
    k = np.arange(n_steps)
    tau = k / n_steps
    return k[tau > tau_on + 1e-12] if strict else k[tau >= tau_on - 1e-9]


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


def solve_qp(terms, v_s, v_a, mu, rows: Rows, mu_act=None, mu_clf=None):
    """Hildreth's method for min ||w||^2 (+ delta'^2) s.t. G w <= b; returns (w_s, w_a, slack).

    v_s (B, H, 3), v_a (B, H, 2): the nominal velocity in Z. ``mu`` is the obstacle gain;
    ``mu_act`` and ``mu_clf`` (default: ``mu``) those of the action barriers and the CLF.
    Rows (G w <= b):
      barrier i with Z-gradient a_i:  -a_i . w <= mu h_i + a_i . v
      CLF:                 gV . w - 0.1 delta' <= -mu_clf V - gV . v
    It runs ``rows.sweeps`` sweeps (the spec's 40). With ``rows.exact`` (the official code
    solves the QP exactly, with qpth's interior-point method) every plan whose QP still has a
    row violated by more than ``rows.tol`` (as (G_i w - b_i) / ||G_i||, a distance in Z) is
    solved exactly by :func:`least_distance`; an infeasible QP has no solution and keeps
    Hildreth's iterate.
    """
    mu_act = mu if mu_act is None else mu_act
    mu_clf = mu if mu_clf is None else mu_clf
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
            b = mu_act * h[..., pair] + a * v_a
            blocks.append(["act", a, b, a ** 2, h[..., pair] < rows.active_below,
                           np.zeros((B, H, 2))])
    c_d = -0.1 if rows.slack else 0.0
    if rows.clf:
        gs, ga, V = terms["gV_s"], terms["gV_a"], terms["V"]
        b_c = -mu_clf * V - (gs * v_s).sum((1, 2)) - (ga * v_a).sum((1, 2))
        n_c = np.maximum((gs ** 2).sum((1, 2)) + (ga ** 2).sum((1, 2)) + c_d ** 2, 1e-12)
        blocks.append(["clf", (gs, ga), b_c, n_c, None, np.zeros(B)])
    w = [w_s, w_a, w_d]
    _hildreth(blocks, w, c_d, rows.sweeps)
    if rows.exact:
        for b in np.flatnonzero(_row_violation(blocks, w, c_d) > rows.tol):
            z = least_distance(*_dense_rows(blocks, b, c_d, v_s.shape[2], H))
            if z is not None:  # None: infeasible, Hildreth's iterate stays
                n_s = v_s.shape[2] * H
                w_s[b] = z[:n_s].reshape(H, -1)
                w_a[b] = z[n_s:n_s + 2 * H].reshape(H, 2)
                w_d[b] = z[-1] if c_d else 0.0
    return w_s, w_a, w_d / 10.0  # slack delta = delta' / 10


def _dense_rows(blocks, b, c_d, sx, H):
    """Plan b's QP as dense G z <= rhs over z = (w_s, w_a[, delta']), rows as in the blocks."""
    n_s = sx * H
    n = n_s + 2 * H + (1 if c_d else 0)
    G, rhs = [], []
    t = np.arange(H)
    for kind, a, bb, _, mask, _ in blocks:
        if kind == "obs":
            keep = np.flatnonzero(mask[b])
            rows = np.zeros((len(keep), n))
            rows[np.arange(len(keep)), sx * keep] = -a[b, keep, 0]
            rows[np.arange(len(keep)), sx * keep + 1] = -a[b, keep, 1]
            G.append(rows)
            rhs.append(bb[b, keep])
        elif kind == "act":
            for j in range(2):  # column j of the pair acts on u_j
                keep = t[mask[b, :, j]]
                rows = np.zeros((len(keep), n))
                rows[np.arange(len(keep)), n_s + 2 * keep + j] = -a[b, keep, j]
                G.append(rows)
                rhs.append(bb[b, keep, j])
        else:
            gs, ga = a
            row = np.concatenate([gs[b].ravel(), ga[b].ravel(), [c_d] if c_d else []])
            G.append(row[None])
            rhs.append(bb[b:b + 1])
    return np.vstack(G), np.concatenate(rhs)


def least_distance(G, rhs, tol=1e-9):
    """Exact min ||z||^2 s.t. G z <= rhs (Lawson and Hanson's least-distance programme, ch. 23):
    u = NNLS([-G^T; -rhs^T], e_last), r = E u - e_last, z = -r[:-1] / r[-1]; r[-1] = 0 means
    the constraints are infeasible (returns None, as for a result that fails its own
    feasibility check)."""
    from scipy.optimize import nnls

    E = np.vstack([-G.T, -rhs[None]])
    f = np.zeros(E.shape[0])
    f[-1] = 1.0
    try:
        u, _ = nnls(E, f, maxiter=50 * E.shape[1])
    except RuntimeError:  # no convergence
        return None
    r = E @ u - f
    if not r[-1] < -1e-12:
        return None
    z = -r[:-1] / r[-1]
    scale = np.maximum(np.linalg.norm(G, axis=1), 1e-12)
    if ((G @ z - rhs) / scale).max() > tol * (1.0 + np.abs(z).max()):
        return None
    return z


def _hildreth(blocks, w, c_d, sweeps):
    """``sweeps`` Hildreth sweeps over the row blocks, updating lambda and w = -G^T lambda."""
    w_s, w_a, w_d = w
    for _ in range(sweeps):
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
                gs, ga = a
                gw = (gs * w_s).sum((1, 2)) + (ga * w_a).sum((1, 2)) + c_d * w_d
                new = np.maximum(0.0, lam + (gw - b) / n)
                d = new - lam
                w_s -= d[:, None, None] * gs
                w_a -= d[:, None, None] * ga
                w_d -= d * c_d
            blk[5] = new


def _row_violation(blocks, w, c_d):
    """Per plan, the largest (G_i w - b_i)_+ / ||G_i|| over the QP's rows."""
    w_s, w_a, w_d = w
    worst = np.zeros(w_d.shape[0])
    for kind, a, b, n, mask, _ in blocks:
        if kind == "obs":
            v = (-(a * w_s[..., :2]).sum(-1) - b) / np.sqrt(n) * mask
            worst = np.maximum(worst, v.max(axis=1))
        elif kind == "act":
            v = (-a * w_a - b) / np.sqrt(n) * mask
            worst = np.maximum(worst, v.max(axis=(1, 2)))
        else:
            gs, ga = a
            v = ((gs * w_s).sum((1, 2)) + (ga * w_a).sum((1, 2)) + c_d * w_d - b) / np.sqrt(n)
            worst = np.maximum(worst, v)
    return np.maximum(worst, 0.0)


def qp_residual(terms, v_s, v_a, w_s, w_a, slack, mu, rows: Rows, mu_act=None, mu_clf=None):
    """Per plan, the largest violation (G_i w - b_i)_+ / ||G_i|| of a QP row by the returned w
    (a distance in Z): 0 for an exact solution. Hildreth stops after a fixed number of sweeps;
    the official solver (qpth's interior point method) is exact."""
    mu_act = mu if mu_act is None else mu_act
    mu_clf = mu if mu_clf is None else mu_clf
    worst = np.zeros(v_s.shape[0])
    if rows.obstacles:
        h, a = terms["h_obs"], terms["a_obs"]                           # (B, H, O), (B, H, O, 2)
        lhs = (a * (v_s + w_s)[:, :, None, :2]).sum(-1)                  # grad h . (v + w)
        viol = (-mu * h - lhs) / np.maximum(np.linalg.norm(a, axis=-1), 1e-12)
        worst = np.maximum(worst, np.where(h < rows.active_below, viol, 0).max(axis=(1, 2)))
    if rows.actions:
        h, a = terms["h_act"], terms["a_act"]                           # (B, H, 4)
        u = (v_a + w_a)[..., terms["var"]]
        viol = (-mu_act * h - a * u) / np.maximum(np.abs(a), 1e-12)
        worst = np.maximum(worst, np.where(h < rows.active_below, viol, 0).max(axis=(1, 2)))
    if rows.clf:
        gs, ga, V = terms["gV_s"], terms["gV_a"], terms["V"]
        lhs = (gs * (v_s + w_s)).sum((1, 2)) + (ga * (v_a + w_a)).sum((1, 2))
        rhs = -mu_clf * V + (slack if rows.slack else 0.0)
        norm = np.sqrt((gs ** 2).sum((1, 2)) + (ga ** 2).sum((1, 2)))
        worst = np.maximum(worst, (lhs - rhs) / np.maximum(norm, 1e-12))
    return np.maximum(worst, 0.0)


def guided_sample(velocity, Z0, prob: Problems, std: Standardiser, n_steps: int,
                  rows: Rows, gain, tau_on=0.3, record=None, strict=True, stats=None):
    """Euler integration of dZ/dtau = v_phi + w from tau = 0 to 1; w from the QP at the steps
    of :func:`guided_steps` (tau > tau_on; with strict=False, tau >= tau_on).

    ``gain(tau)`` is the class-K gain: one number for every row (the spec's prescribed-time
    gain, the states-only baseline's constant) or a tuple (mu_obs, mu_act, mu_clf) (the
    official gains). ``record(k, tau, Z, slack)`` is called before every step and at the end.
    ``stats`` (a dict) receives the per-plan largest QP row violation over the guided steps
    (``qp_residual``). Returns the final Z and the per-plan mean slack over the guided steps.
    """
    on = set(guided_steps(n_steps, tau_on, strict).tolist())
    if not on:
        raise ValueError(f"sad-flower: no Euler step has tau > tau_on = {tau_on} with "
                         f"n_steps = {n_steps}; the guidance would never act")
    Z = Z0.copy()
    dtau = 1.0 / n_steps
    slack_sum = np.zeros(Z.shape[0])
    resid = np.zeros(Z.shape[0])
    B, H = Z.shape[0], std.H
    for k in range(n_steps):
        tau = k * dtau
        v = velocity(Z, tau)
        slack = np.zeros(B)
        if k in on:
            states, actions = std.to_x(Z)
            terms = constraint_terms(states, actions, prob, std)
            v_s, v_a = system.unflatten(v, H, std.sx)
            g = gain(tau)
            # discrete-time CBF/CLF: h_{k+1} >= (1 - mu dtau) h_k keeps h >= 0 only while
            # mu dtau <= 1, so every gain is capped at 1 / dtau
            mus = [min(m, 1.0 / dtau) for m in (g if np.ndim(g) else (g, g, g))]
            w_s, w_a, slack = solve_qp(terms, v_s, v_a, mus[0], rows, mus[1], mus[2])
            if stats is not None:
                resid = np.maximum(resid, qp_residual(terms, v_s, v_a, w_s, w_a, slack,
                                                      mus[0], rows, mus[1], mus[2]))
            v = v + system.flatten(w_s, w_a)
            slack_sum += slack
        if record is not None:
            record(k, tau, Z, slack)
        Z = Z + dtau * v
    if record is not None:
        record(n_steps, 1.0, Z, np.zeros(B))
    if stats is not None:
        stats["qp_residual"] = resid
    return Z, slack_sum / len(on)
