"""Integration of an autonomous or time-dependent vector field on a fixed output grid.

``integrate`` wraps ``scipy.integrate.solve_ivp``: the solver chooses its own steps, the
trajectory is returned exactly at the requested times (dense evaluation is not interpolated
between records; ``t_eval`` makes the solver report its solution there). Used by papers whose
macroscopic quantities follow an ODE (fast-slow dynamics of infinite-width networks) and whose
finite-width simulations are compared with it on the same time grid. numpy/scipy only.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


class IntegrationError(RuntimeError):
    """The solver stopped before the end of the grid (its message says why)."""


def integrate(field: Callable[[float, np.ndarray], np.ndarray], y0, t_grid, *,
              method: str = "RK45", rtol: float = 1e-9, atol: float = 1e-11,
              max_step: float = np.inf) -> np.ndarray:
    """Solve dy/dt = field(t, y), y(t_grid[0]) = y0; the solution at every time of ``t_grid``.

    ``t_grid`` must be strictly increasing (its first entry is the initial time). Returns an
    array of shape (len(t_grid), len(y0)). Raises IntegrationError when the solver fails or
    the solution stops being finite.
    """
    from scipy.integrate import solve_ivp

    t = np.asarray(t_grid, dtype=float).ravel()
    y0 = np.atleast_1d(np.asarray(y0, dtype=float))
    if t.size < 2 or np.any(np.diff(t) <= 0):
        raise ValueError("t_grid needs two or more strictly increasing times")
    sol = solve_ivp(field, (float(t[0]), float(t[-1])), y0, method=method, t_eval=t,
                    rtol=rtol, atol=atol, max_step=max_step)
    if not sol.success or sol.y.shape[1] != t.size:
        stop = sol.t[-1] if sol.t.size else t[0]
        raise IntegrationError(f"solve_ivp ({method}) stopped at t = {stop:g}: {sol.message}")
    y = sol.y.T.copy()
    if not np.all(np.isfinite(y)):
        raise IntegrationError(f"solve_ivp ({method}) returned a non-finite solution")
    return y
