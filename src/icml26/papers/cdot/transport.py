"""CDOT and its baselines (W, GW, FGW) on discrete attributed metric-measure spaces.

A space is (C, F, w): an n x n distance matrix, n x d node features and weights summing to one.
Every method minimises an objective over the couplings Pi(mu, nu) = {pi >= 0, pi 1 = mu,
pi^T 1 = nu}:

    W     <M, pi>                                    (linear: one exact OT solve)
    GW    sum_{ijkl} (C_X[i,k] - C_Y[j,l])^2 pi_ij pi_kl          (non-convex quadratic)
    FGW   (1 - a) <M, pi> + a GW(pi)                             (non-convex quadratic)
    CDOT  (1 - a) <M, pi> + a Delta(pi)                          (convex quadratic)

with the CDOT operator regulariser (INFERRED from the abstract; see the paper's FIDELITY)

    Delta(pi) = sum_{x,y} mu(x) nu(y) [ (C_X pi)_{xy} / nu(y) - (pi C_Y)_{xy} / mu(x) ]^2,

the squared Hilbert-Schmidt norm of D_X K_pi - K_pi D_Y, where D is the distance operator
(D_X u)(x) = sum_x' C_X(x, x') u(x') mu(x') and K_pi the conditional expectation
(K_pi v)(x) = sum_y pi(x, y) v(y) / mu(x). The map pi -> D_X K_pi - K_pi D_Y is linear, so Delta
is a convex quadratic form.

The three quadratic objectives are minimised by one Frank-Wolfe loop with exact line search:
along a segment pi + t D a quadratic objective is F(pi) + t <grad F(pi), D> + t^2 q(D), where
q is the objective's pure quadratic part, so the best step has a closed form. The linear
minimisation oracle is an exact OT solve (POT ``ot.emd``); for equal sizes with uniform
weights the vertices of Pi are permutation matrices / n (Birkhoff), so
``linear_sum_assignment`` solves it exactly and much faster.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

MAX_ITER = 300
GAP_TOL = 1e-7


# ---------------------------------------------------------------------------------------------
# The CDOT operator regulariser
# ---------------------------------------------------------------------------------------------


def cdot_residual(pi, cx, cy, mu, nu):
    """Kernel of D_X K_pi - K_pi D_Y w.r.t. nu: (C_X pi)/nu(y) - (pi C_Y)/mu(x). Linear in pi."""
    return (cx @ pi) / nu[None, :] - (pi @ cy) / mu[:, None]


def delta(pi, cx, cy, mu, nu) -> float:
    """Delta(pi) = sum mu(x) nu(y) residual(x, y)^2 (a squared HS norm, hence convex)."""
    r = cdot_residual(pi, cx, cy, mu, nu)
    return float(np.sum(mu[:, None] * nu[None, :] * r * r))


def delta_grad(pi, cx, cy, mu, nu):
    """Gradient of Delta: 2 L*(w * L(pi)) with L the residual map and L* its adjoint."""
    w_r = mu[:, None] * nu[None, :] * cdot_residual(pi, cx, cy, mu, nu)
    # adjoint of pi -> C_X pi / nu is R -> C_X^T (R / nu); of pi -> pi C_Y / mu: R -> (R / mu) C_Y^T
    return 2.0 * (cx.T @ (w_r / nu[None, :]) - (w_r / mu[:, None]) @ cy.T)


# ---------------------------------------------------------------------------------------------
# The Gromov-Wasserstein quadratic (square loss), as in Peyre et al. (2016)
# ---------------------------------------------------------------------------------------------


def gw_objective(pi, cx, cy, mu, nu) -> float:
    """sum_{ijkl} (C_X[i,k] - C_Y[j,l])^2 pi_ij pi_kl for pi in Pi(mu, nu).

    Expanding the square: mu^T C_X^2 mu + nu^T C_Y^2 nu - 2 <C_X pi C_Y^T, pi>.
    """
    const = mu @ (cx * cx) @ mu + nu @ (cy * cy) @ nu
    return float(const - 2.0 * np.sum((cx @ pi @ cy.T) * pi))


def gw_grad(pi, cx, cy):
    """Gradient of GW up to terms f(i) + g(j), which are constant over Pi and so leave the LMO,
    the FW gap and the line search unchanged (symmetric C assumed)."""
    return -4.0 * (cx @ pi @ cy.T)


# ---------------------------------------------------------------------------------------------
# Problems: the objective, its gradient and the quadratic part used by the line search
# ---------------------------------------------------------------------------------------------


@dataclass
class Problem:
    """Distance matrices, feature cost and weights of one pair of spaces."""

    cx: np.ndarray
    cy: np.ndarray
    m: np.ndarray
    mu: np.ndarray
    nu: np.ndarray

    def __post_init__(self):
        n, k = self.m.shape
        # equal sizes and uniform weights: Pi's vertices are the permutation matrices / n
        self.permutation_lmo = bool(
            n == k and np.allclose(self.mu, 1.0 / n) and np.allclose(self.nu, 1.0 / k)
        )


def objective(method: str, alpha: float, pb: Problem, pi) -> float:
    """F(pi) of a method; CDOT's discrepancy is sqrt(F(pi*))."""
    lin = float(np.sum(pb.m * pi))
    if method == "W":
        return lin
    if method == "GW":
        return gw_objective(pi, pb.cx, pb.cy, pb.mu, pb.nu)
    if method == "FGW":
        return (1 - alpha) * lin + alpha * gw_objective(pi, pb.cx, pb.cy, pb.mu, pb.nu)
    if method == "CDOT":
        return (1 - alpha) * lin + alpha * delta(pi, pb.cx, pb.cy, pb.mu, pb.nu)
    raise ValueError(f"unknown method {method!r}; allowed: W, GW, FGW, CDOT")


def _grad(method, alpha, pb, pi):
    if method == "GW":
        return gw_grad(pi, pb.cx, pb.cy)
    if method == "FGW":
        return (1 - alpha) * pb.m + alpha * gw_grad(pi, pb.cx, pb.cy)
    return (1 - alpha) * pb.m + alpha * delta_grad(pi, pb.cx, pb.cy, pb.mu, pb.nu)


def _quadratic_part(method, alpha, pb, d) -> float:
    """q(D) with F(pi + tD) = F(pi) + t <grad, D> + t^2 q(D) (D has zero marginals)."""
    if method == "CDOT":
        return alpha * delta(d, pb.cx, pb.cy, pb.mu, pb.nu)
    weight = 1.0 if method == "GW" else alpha
    return -2.0 * weight * float(np.sum((pb.cx @ d @ pb.cy.T) * d))


# ---------------------------------------------------------------------------------------------
# Linear minimisation oracle and the Frank-Wolfe loop
# ---------------------------------------------------------------------------------------------


def lmo(g, pb: Problem):
    """argmin_{S in Pi(mu, nu)} <g, S>: an exact OT problem with cost g."""
    if pb.permutation_lmo:
        rows, cols = linear_sum_assignment(g)
        s = np.zeros_like(g)
        s[rows, cols] = 1.0 / g.shape[0]
        return s
    return _exact_ot(pb.mu, pb.nu, g)


def _pot():
    """POT, imported on first use: only unequal sizes (graphs) need it, and its import is the
    most expensive part of a job's start-up. We pass numpy arrays only, so when this is the
    first import of POT in the process its torch backend (another ~2 CPU-s) is left out."""
    if "ot" not in sys.modules:
        os.environ.setdefault("POT_BACKEND_DISABLE_PYTORCH", "1")
    import ot
    import ot.lp

    return ot


def _exact_ot(mu, nu, cost):
    """Exact OT plan (POT's network simplex).

    On the 12-20 node graphs the public ``ot.emd`` spends most of its time in input checks,
    backend dispatch and dual post-processing, which dominate the Frank-Wolfe loops; the
    compiled core it wraps gives the same plan about 3x faster. Falls back to ``ot.emd`` if
    POT's internal layout differs.
    """
    ot = _pot()
    cost = np.ascontiguousarray(cost, dtype=np.float64)
    core = getattr(getattr(ot.lp, "emd_wrap", None), "emd_c", None)
    if core is not None:
        try:
            return core(mu, nu, cost, 100000, 1)[0]
        except TypeError:  # pragma: no cover - another signature
            pass
    return ot.emd(mu, nu, cost, check_marginals=False, center_dual=False)


def _exact_step(lin: float, quad: float) -> float:
    """argmin_{t in [0,1]} lin t + quad t^2 (lin < 0 on a descent direction)."""
    if quad > 0:
        return float(np.clip(-lin / (2.0 * quad), 0.0, 1.0))
    # concave or flat along the segment: the minimum is at an end point
    return 1.0 if lin + quad < 0 else 0.0


@dataclass
class Solution:
    pi: np.ndarray
    value: float  # F(pi)
    gap: float  # last Frank-Wolfe gap <grad, pi - S> (an upper bound on F - F* when convex)
    iters: int
    trace: np.ndarray  # F at each iterate, start included


def frank_wolfe(method: str, alpha: float, pb: Problem, start=None, max_iter=MAX_ITER,
                tol=GAP_TOL, keep_trace=False) -> Solution:
    """Minimise GW, FGW or CDOT over Pi(mu, nu) from ``start`` (default: mu nu^T)."""
    if method not in ("GW", "FGW", "CDOT"):
        raise ValueError(f"frank_wolfe solves GW, FGW or CDOT, not {method!r}")
    pi = np.outer(pb.mu, pb.nu) if start is None else np.array(start, dtype=float)
    trace = [objective(method, alpha, pb, pi)] if keep_trace else []
    gap, iters = np.inf, 0
    while iters < max_iter:
        iters += 1
        g = _grad(method, alpha, pb, pi)
        s = lmo(g, pb)
        d = s - pi
        gap = -float(np.sum(g * d))
        if gap < tol:
            break
        t = _exact_step(-gap, _quadratic_part(method, alpha, pb, d))
        if t <= 0.0:  # no descent along the FW direction: a stationary point of a non-convex F
            break
        pi = pi + t * d
        if keep_trace:
            trace.append(objective(method, alpha, pb, pi))
    return Solution(pi, objective(method, alpha, pb, pi), gap, iters, np.asarray(trace))


def solve(method: str, alpha: float, pb: Problem, start=None, **kw) -> Solution:
    """Any method; W is one exact OT solve of the feature cost (start ignored)."""
    if method == "W":
        pi = lmo(pb.m, pb)
        return Solution(pi, objective("W", alpha, pb, pi), 0.0, 1, np.zeros(0))
    return frank_wolfe(method, alpha, pb, start=start, **kw)


def random_permutation_coupling(n: int, rng: np.random.Generator):
    """A vertex of Pi(1/n, 1/n): the coupling of a uniformly random permutation."""
    pi = np.zeros((n, n))
    pi[np.arange(n), rng.permutation(n)] = 1.0 / n
    return pi

