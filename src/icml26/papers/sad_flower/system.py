"""Planning systems: dynamics, demonstrations, test problems and constraint functions.

A plan is X = (x_1..x_H, u_0..u_{H-1}), stored as ``states`` (B, H, sx) and ``actions``
(B, H, 2); flat vectors are [states.ravel(), actions.ravel()] (length (sx + 2) H; 120 for the
unicycle with H = 24). x_0 and the goal g (a position in the plane) are conditioning inputs.
Three systems (a system object carries the dynamics, their Jacobians, the position map used by
the obstacles, the action box and the demonstration controller):

- ``unicycle`` (the spec's task): x = (p_x, p_y, theta), u = (v, omega),
  f = (p_x + Dt v cos theta, p_y + Dt v sin theta, theta + Dt omega); bounds 0 <= v <= b1,
  |omega| <= b2.
- ``double_integrator`` (full profile): x = (p_x, p_y, v_x, v_y), u = (a_x, a_y),
  f = (p + Dt v, v + Dt a); bounds |a_x|, |a_y| <= b1.
- ``arm`` (full profile): a kinematic 2-link planar arm, x = (q_1, q_2), u = joint velocities,
  f = q + Dt u; bounds |u_j| <= b1; the obstacles act on the end effector
  p = l_1 (cos q_1, sin q_1) + l_2 (cos(q_1 + q_2), sin(q_1 + q_2)), l_1 = l_2 = 0.5.

The module-level functions take the system as a keyword (unicycle by default). All numpy.
"""

from __future__ import annotations

import numpy as np

DT = 0.1
SX, SU = 3, 2  # unicycle state and action dimensions
ARENA = 1.0    # the arena is [-1, 1]^2 (2 x 2)


def _wrap(a):
    return (a + np.pi) % (2 * np.pi) - np.pi


def _sample_positions(rng, n, d_lo=0.8, d_hi=1.6, margin=0.0):
    """Start position uniform in the arena; goal at distance U[d_lo, d_hi] inside it."""
    lim = ARENA - margin
    starts = np.empty((n, 2))
    goals = np.empty((n, 2))
    filled = 0
    while filled < n:
        m = 4 * (n - filled) + 16
        p = rng.uniform(-lim, lim, (m, 2))
        d = rng.uniform(d_lo, d_hi, m)
        phi = rng.uniform(-np.pi, np.pi, m)
        g = p + d[:, None] * np.stack([np.cos(phi), np.sin(phi)], 1)
        ok = np.all(np.abs(g) <= lim, axis=1)
        k = min(int(ok.sum()), n - filled)
        starts[filled: filled + k] = p[ok][:k]
        goals[filled: filled + k] = g[ok][:k]
        filled += k
    return starts, goals


# ------------------------------------------------------------------------------------ systems
class Unicycle:
    name, sx, su = "unicycle", 3, 2

    @staticmethod
    def step(x, u):
        th = x[..., 2]
        return np.stack([x[..., 0] + DT * u[..., 0] * np.cos(th),
                         x[..., 1] + DT * u[..., 0] * np.sin(th),
                         th + DT * u[..., 1]], axis=-1)

    @staticmethod
    def jac(x, u):
        """(df/dx, df/du), shapes (..., 3, 3) and (..., 3, 2)."""
        th, v = x[..., 2], u[..., 0]
        c, s = np.cos(th), np.sin(th)
        jx = np.zeros(x.shape + (3,))
        jx[..., 0, 0] = jx[..., 1, 1] = jx[..., 2, 2] = 1.0
        jx[..., 0, 2] = -DT * v * s
        jx[..., 1, 2] = DT * v * c
        ju = np.zeros(x.shape + (2,))
        ju[..., 0, 0], ju[..., 1, 0], ju[..., 2, 1] = DT * c, DT * s, DT
        return jx, ju

    @staticmethod
    def position(x):
        return x[..., :2]

    @staticmethod
    def position_jac(x):
        """d position / d x[..., :2] (the position depends on the first two coordinates only)."""
        return np.broadcast_to(np.eye(2), x.shape[:-1] + (2, 2))

    @staticmethod
    def bounds(b1, b2):
        return np.array([0.0, -b2]), np.array([b1, b2])

    @staticmethod
    def sample_start_goal(rng, n, margin=0.0):
        return sample_start_goal(rng, n, margin=margin)

    @classmethod
    def demonstrations(cls, rng, n, H, b1=1.0, b2=3.0, wp_sd=0.2):
        """Pure pursuit through a random waypoint (see :func:`demonstrations`)."""
        x0, g_nom = cls.sample_start_goal(rng, n)
        wp = 0.5 * (x0[:, :2] + g_nom) + wp_sd * rng.standard_normal((n, 2))
        x = x0.copy()
        phase = np.zeros(n, bool)  # False: heading to the waypoint
        states, actions = [], []
        for t in range(H):
            target = np.where(phase[:, None], g_nom, wp)
            d_t = np.linalg.norm(target - x[:, :2], axis=1)
            remaining = np.where(phase, d_t, d_t + np.linalg.norm(g_nom - wp, axis=1))
            alpha = _wrap(np.arctan2(target[:, 1] - x[:, 1], target[:, 0] - x[:, 0]) - x[:, 2])
            v = remaining / ((H - t) * DT) * np.clip(np.cos(alpha), 0.15, 1.0)
            v = np.clip(v, 0.0, b1)
            om = np.clip(2.0 * v * np.sin(alpha) / np.maximum(d_t, 0.2) + 1.5 * alpha, -b2, b2)
            u = np.column_stack([v, om])
            x = cls.step(x, u)
            states.append(x)
            actions.append(u)
            phase |= np.linalg.norm(wp - x[:, :2], axis=1) < 0.15
        return x0, np.stack(states, 1), np.stack(actions, 1)


class DoubleIntegrator:
    name, sx, su = "double_integrator", 4, 2

    @staticmethod
    def step(x, u):
        return np.concatenate([x[..., :2] + DT * x[..., 2:], x[..., 2:] + DT * u], axis=-1)

    @staticmethod
    def jac(x, u):
        jx = np.broadcast_to(np.eye(4) + DT * np.eye(4, k=2), x.shape + (4,))
        ju = np.broadcast_to(np.vstack([np.zeros((2, 2)), DT * np.eye(2)]), x.shape + (2,))
        return jx, ju

    position = staticmethod(Unicycle.position)
    position_jac = staticmethod(Unicycle.position_jac)

    @staticmethod
    def bounds(b1, b2):
        return np.array([-b1, -b1]), np.array([b1, b1])

    @staticmethod
    def sample_start_goal(rng, n, margin=0.0):
        """Start at rest (INFERRED)."""
        p, g = _sample_positions(rng, n, margin=margin)
        return np.column_stack([p, np.zeros((n, 2))]), g

    @classmethod
    def demonstrations(cls, rng, n, H, b1=2.0, b2=2.0, wp_sd=0.2):
        """PD tracking through a random waypoint, then to the goal (INFERRED controller).

        a = clip(k_p (target - p) - k_d v, +-b1) with k_p = (6 / T)^2 and k_d = 2 sqrt(k_p)
        (critically damped, mostly settled by the horizon T = H Dt; gentle enough that the
        bound rarely binds); switch at 0.15 from the waypoint.
        """
        x0, g_nom = cls.sample_start_goal(rng, n)
        wp = 0.5 * (x0[:, :2] + g_nom) + wp_sd * rng.standard_normal((n, 2))
        kp = (6.0 / (H * DT)) ** 2
        kd = 2.0 * np.sqrt(kp)
        x = x0.copy()
        phase = np.zeros(n, bool)
        states, actions = [], []
        for _ in range(H):
            target = np.where(phase[:, None], g_nom, wp)
            u = np.clip(kp * (target - x[:, :2]) - kd * x[:, 2:], -b1, b1)
            x = cls.step(x, u)
            states.append(x)
            actions.append(u)
            phase |= np.linalg.norm(wp - x[:, :2], axis=1) < 0.15
        return x0, np.stack(states, 1), np.stack(actions, 1)


class Arm:
    name, sx, su = "arm", 2, 2
    L1 = L2 = 0.5

    @staticmethod
    def step(x, u):
        return x + DT * u

    @staticmethod
    def jac(x, u):
        return (np.broadcast_to(np.eye(2), x.shape + (2,)),
                np.broadcast_to(DT * np.eye(2), x.shape + (2,)))

    @classmethod
    def position(cls, x):
        q1, q12 = x[..., 0], x[..., 0] + x[..., 1]
        return np.stack([cls.L1 * np.cos(q1) + cls.L2 * np.cos(q12),
                         cls.L1 * np.sin(q1) + cls.L2 * np.sin(q12)], -1)

    @classmethod
    def position_jac(cls, x):
        q1, q12 = x[..., 0], x[..., 0] + x[..., 1]
        J = np.empty(x.shape[:-1] + (2, 2))
        J[..., 0, 1] = -cls.L2 * np.sin(q12)
        J[..., 1, 1] = cls.L2 * np.cos(q12)
        J[..., 0, 0] = -cls.L1 * np.sin(q1) + J[..., 0, 1]
        J[..., 1, 0] = cls.L1 * np.cos(q1) + J[..., 1, 1]
        return J

    @staticmethod
    def bounds(b1, b2):
        return np.array([-b1, -b1]), np.array([b1, b1])

    @classmethod
    def _sample(cls, rng, n):
        """Joint configurations with q_1 ~ U[-pi, pi], q_2 ~ +-U[0.3, 2.8] (no folded arm)."""
        q2 = rng.uniform(0.3, 2.8, n) * rng.choice([-1.0, 1.0], n)
        return np.column_stack([rng.uniform(-np.pi, np.pi, n), q2])

    @classmethod
    def sample_start_goal(cls, rng, n, margin=0.0, d_lo=0.6):
        """Start and goal configurations whose end effectors are >= d_lo apart (INFERRED).

        The goal is the end-effector position of the goal configuration; the same elbow sign
        (no switch through the singular stretched arm).
        """
        q0 = np.empty((n, 2))
        g = np.empty((n, 2))
        filled = 0
        while filled < n:
            m = 4 * (n - filled) + 16
            a, b = cls._sample(rng, m), cls._sample(rng, m)
            b[:, 1] = np.abs(b[:, 1]) * np.sign(a[:, 1])
            pa, pb = cls.position(a), cls.position(b)
            ok = np.linalg.norm(pa - pb, axis=1) >= d_lo
            k = min(int(ok.sum()), n - filled)
            q0[filled: filled + k], g[filled: filled + k] = a[ok][:k], pb[ok][:k]
            filled += k
        return q0, g

    @classmethod
    def _ik(cls, p, elbow):
        """Joint angles reaching p with the given elbow sign (analytic 2-link IK)."""
        r2 = (p ** 2).sum(-1)
        c2 = np.clip((r2 - cls.L1 ** 2 - cls.L2 ** 2) / (2 * cls.L1 * cls.L2), -1.0, 1.0)
        q2 = elbow * np.arccos(c2)
        q1 = np.arctan2(p[:, 1], p[:, 0]) - np.arctan2(cls.L2 * np.sin(q2),
                                                       cls.L1 + cls.L2 * np.cos(q2))
        return np.column_stack([q1, q2])

    @classmethod
    def demonstrations(cls, rng, n, H, b1=2.0, b2=2.0, wp_sd=0.3):
        """Joint-space motion through a random joint waypoint to the goal configuration.

        The goal configuration (IK of the goal, same elbow, q_1 taken the short way round) is
        approached via a waypoint offset N(0, wp_sd^2) from the joint midpoint at speed
        remaining joint path / remaining time, |u_j| <= b1 (INFERRED controller).
        """
        q0, g_nom = cls.sample_start_goal(rng, n)
        qg = cls._ik(g_nom, np.sign(q0[:, 1]))
        qg[:, 0] = q0[:, 0] + _wrap(qg[:, 0] - q0[:, 0])
        wp = 0.5 * (q0 + qg) + wp_sd * rng.standard_normal((n, 2))
        x = q0.copy()
        phase = np.zeros(n, bool)
        states, actions = [], []
        for t in range(H):
            target = np.where(phase[:, None], qg, wp)
            d = target - x
            dist = np.linalg.norm(d, axis=1)
            remaining = np.where(phase, dist, dist + np.linalg.norm(qg - wp, axis=1))
            speed = remaining / ((H - t) * DT)
            u = np.clip(d / np.maximum(dist, 1e-9)[:, None] * speed[:, None], -b1, b1)
            x = cls.step(x, u)
            states.append(x)
            actions.append(u)
            phase |= np.linalg.norm(wp - x, axis=1) < 0.1
        return q0, np.stack(states, 1), np.stack(actions, 1)


SYSTEMS = {s.name: s for s in (Unicycle, DoubleIntegrator, Arm)}
UNICYCLE = Unicycle


def get(name: str):
    if name not in SYSTEMS:
        raise ValueError(f"sad-flower: unknown system {name!r} (known: {sorted(SYSTEMS)})")
    return SYSTEMS[name]


# ---------------------------------------------------------------- dynamics and the plan layout
def step(x, u, sysm=UNICYCLE):
    """f(x, u), batched over leading axes."""
    return sysm.step(x, u)


def flatten(states, actions):
    B = states.shape[0]
    return np.concatenate([states.reshape(B, -1), actions.reshape(B, -1)], axis=1)


def unflatten(X, H, sx=SX, su=SU):
    B = X.shape[0]
    return X[:, : sx * H].reshape(B, H, sx), X[:, sx * H:].reshape(B, H, su)


def rollout(x0, actions, sysm=UNICYCLE):
    """States x_1..x_H of the true dynamics from x0 (B, sx) under actions (B, H, 2)."""
    out, x = [], x0
    for t in range(actions.shape[1]):
        x = sysm.step(x, actions[:, t])
        out.append(x)
    return np.stack(out, axis=1)


# ------------------------------------------------------------------------ demonstrations
def sample_start_goal(rng, n, d_lo=0.8, d_hi=1.6, margin=0.0):
    """Unicycle start uniform in the arena with uniform heading; goal at distance U[d_lo, d_hi]."""
    lim = ARENA - margin
    starts = np.empty((n, 3))
    goals = np.empty((n, 2))
    filled = 0
    while filled < n:
        m = 4 * (n - filled) + 16
        p = rng.uniform(-lim, lim, (m, 2))
        th = rng.uniform(-np.pi, np.pi, m)
        d = rng.uniform(d_lo, d_hi, m)
        phi = rng.uniform(-np.pi, np.pi, m)
        g = p + d[:, None] * np.stack([np.cos(phi), np.sin(phi)], 1)
        ok = np.all(np.abs(g) <= lim, axis=1)
        k = min(int(ok.sum()), n - filled)
        starts[filled: filled + k] = np.column_stack([p, th])[ok][:k]
        goals[filled: filled + k] = g[ok][:k]
        filled += k
    return starts, goals


def demonstrations(rng, n, H, v_max=1.0, om_max=3.0, wp_sd=None, sysm=UNICYCLE):
    """Demonstrations through a random waypoint; exactly consistent (x, u) pairs.

    Unicycle: the controller aims at the waypoint (offset N(0, wp_sd^2) from the start-goal
    midpoint) and then at the goal; its speed is the remaining path length over the remaining
    time (so plans arrive near step H), reduced while the heading is far off, in [0, v_max];
    the turn rate is the pure-pursuit curvature 2 sin(alpha) / L times v plus a heading term,
    |om| <= om_max. INFERRED controller details (the spec fixes only the ingredients). For every
    system the conditioning goal of a demonstration is its reached end point (hindsight
    relabelling), so X_1 ends at g. Returns (x0, goal, states, actions).
    """
    kw = {} if wp_sd is None else {"wp_sd": wp_sd}
    x0, states, actions = sysm.demonstrations(rng, n, H, v_max, om_max, **kw)
    return x0, sysm.position(states[:, -1]).copy(), states, actions


# ------------------------------------------------------------------------- test problems
def test_problems(rng, n, n_obs=3, r_lo=0.1, r_hi=0.2, clearance=0.08, sysm=UNICYCLE):
    """Start/goal pairs with n_obs circular obstacles on or near the straight start-goal segment.

    INFERRED placement: centre = start + s (goal - start) + lateral offset, s ~ U[0.25, 0.75],
    lateral ~ U[-0.1, 0.1]; redrawn until start and goal are clear of the disc by `clearance`
    (for the arm: start and goal are end-effector positions).
    """
    x0, goal = sysm.sample_start_goal(rng, n, margin=0.05)
    p0 = sysm.position(x0)
    seg = goal - p0
    normal = np.stack([-seg[:, 1], seg[:, 0]], 1) / np.linalg.norm(seg, axis=1, keepdims=True)
    centres = np.empty((n, n_obs, 2))
    radii = np.empty((n, n_obs))
    for i in range(n):
        for o in range(n_obs):
            while True:
                s, lat, r = rng.uniform(0.25, 0.75), rng.uniform(-0.1, 0.1), rng.uniform(r_lo, r_hi)
                c = p0[i] + s * seg[i] + lat * normal[i]
                if (np.linalg.norm(c - p0[i]) > r + clearance
                        and np.linalg.norm(c - goal[i]) > r + clearance):
                    break
            centres[i, o], radii[i, o] = c, r
    return x0, goal, centres, radii


# -------------------------------------------------------------- constraints and their gradients
def obstacle_h(states, centres, radii, sysm=UNICYCLE):
    """h_{t,o} = ||p_t - c_o||^2 - r_o^2, shape (B, H, O) (p_t: the system's position)."""
    d = sysm.position(states)[:, :, None, :] - centres[:, None, :, :]
    return (d ** 2).sum(-1) - radii[:, None, :] ** 2


def obstacle_grad(states, centres, sysm=UNICYCLE):
    """d h_{t,o} / d x_t[:2], shape (B, H, O, 2) (the position depends on x[:2] only)."""
    d = sysm.position(states)[:, :, None, :] - centres[:, None, :, :]
    return 2 * np.einsum("bhoi,bhij->bhoj", d, sysm.position_jac(states))


def action_h(actions, v_max, om_max, sysm=UNICYCLE):
    """(hi_0 - u_0, u_0 - lo_0, hi_1 - u_1, u_1 - lo_1), shape (B, H, 4).

    Unicycle: (v_max - v, v, om_max - om, om_max + om).
    """
    lo, hi = sysm.bounds(v_max, om_max)
    return np.stack([hi[0] - actions[..., 0], actions[..., 0] - lo[0],
                     hi[1] - actions[..., 1], actions[..., 1] - lo[1]], -1)


def clip_actions(actions, v_max, om_max, sysm=UNICYCLE):
    lo, hi = sysm.bounds(v_max, om_max)
    return np.clip(actions, lo, hi)


def residuals(x0, states, actions, sysm=UNICYCLE):
    """r_t = x_{t+1} - f(x_t, u_t), t = 0..H-1 (x_0 given), shape (B, H, sx)."""
    prev = np.concatenate([x0[:, None, :], states[:, :-1]], axis=1)
    return states - sysm.step(prev, actions)


def clf(x0, states, actions, sysm=UNICYCLE):
    """V = sum_t ||r_t||^2 and its gradient (dV/dstates, dV/dactions)."""
    prev = np.concatenate([x0[:, None, :], states[:, :-1]], axis=1)
    r = states - sysm.step(prev, actions)
    V = (r ** 2).sum(axis=(1, 2))
    jx, ju = sysm.jac(prev, actions)
    gs = 2 * r  # d/dx_{t+1}
    gs[:, :-1] -= 2 * np.einsum("bhij,bhi->bhj", jx[:, 1:], r[:, 1:])  # d/dx_t of -f(x_t, u_t)
    ga = -2 * np.einsum("bhij,bhi->bhj", ju, r)
    return V, gs, ga


def consistency_error(x0, states, actions, sysm=UNICYCLE):
    """max_t ||x_{t+1} - f(x_t, u_t)|| per plan."""
    return np.linalg.norm(residuals(x0, states, actions, sysm), axis=-1).max(axis=1)
