"""Synthetic series generators (numpy). Every function takes an explicit Generator, returns
float arrays with time on the last axis, and broadcasts its parameters over the leading
`shape`, so a whole dataset (channels, windows, datasets) is drawn in one call."""
from __future__ import annotations

import numpy as np


def _param(value, shape) -> np.ndarray:
    return np.broadcast_to(np.asarray(value, dtype=float), shape)


def ar1(rng: np.random.Generator, shape, length: int, phi, sd,
        stationary: bool = True) -> np.ndarray:
    """x_t = phi x_{t-1} + e_t, e_t ~ N(0, sd^2); started from the stationary law
    N(0, sd^2/(1-phi^2)) (|phi| < 1), or from e_0 when `stationary` is False."""
    shape = tuple(np.atleast_1d(shape)) if np.ndim(shape) else (int(shape),)
    phi, sd = _param(phi, shape), _param(sd, shape)
    e = rng.standard_normal(shape + (length,)) * sd[..., None]
    x = np.empty_like(e)
    x[..., 0] = e[..., 0] / np.sqrt(1.0 - phi ** 2) if stationary else e[..., 0]
    for t in range(1, length):
        x[..., t] = phi * x[..., t - 1] + e[..., t]
    return x


def ar2(rng: np.random.Generator, shape, length: int, phi1, phi2, sd,
        burn: int = 200) -> np.ndarray:
    """x_t = phi1 x_{t-1} + phi2 x_{t-2} + e_t, after `burn` discarded steps from zero."""
    shape = tuple(np.atleast_1d(shape)) if np.ndim(shape) else (int(shape),)
    phi1, phi2, sd = _param(phi1, shape), _param(phi2, shape), _param(sd, shape)
    e = rng.standard_normal(shape + (length + burn,)) * sd[..., None]
    x = np.zeros_like(e)
    x[..., 0] = e[..., 0]
    x[..., 1] = phi1 * x[..., 0] + e[..., 1]
    for t in range(2, length + burn):
        x[..., t] = phi1 * x[..., t - 1] + phi2 * x[..., t - 2] + e[..., t]
    return x[..., burn:]


def stable_ar2_coefficients(rng: np.random.Generator, shape, max_root: float = 0.95):
    """AR(2) coefficients with both characteristic roots inside radius `max_root`: real roots
    r1, r2 ~ U(-max_root, max_root) or a complex pair of modulus U(0.3, max_root) (half each)."""
    shape = tuple(np.atleast_1d(shape)) if np.ndim(shape) else (int(shape),)
    real = rng.random(shape) < 0.5
    r1 = rng.uniform(-max_root, max_root, shape)
    r2 = rng.uniform(-max_root, max_root, shape)
    mod = rng.uniform(0.3, max_root, shape)
    ang = rng.uniform(0.0, np.pi, shape)
    phi1 = np.where(real, r1 + r2, 2 * mod * np.cos(ang))
    phi2 = np.where(real, -r1 * r2, -mod ** 2)
    return phi1, phi2


def random_walk(rng: np.random.Generator, shape, length: int, sd) -> np.ndarray:
    shape = tuple(np.atleast_1d(shape)) if np.ndim(shape) else (int(shape),)
    return np.cumsum(rng.standard_normal(shape + (length,)) * _param(sd, shape)[..., None], axis=-1)


def sinusoids(t: np.ndarray, periods, amps, phases) -> np.ndarray:
    """sum_k amps[..., k] sin(2 pi t / periods[..., k] + phases[..., k]); t has shape (T,)."""
    periods, amps, phases = (np.asarray(a, dtype=float) for a in (periods, amps, phases))
    arg = 2 * np.pi * np.asarray(t, dtype=float) / periods[..., None] + phases[..., None]
    return np.sum(amps[..., None] * np.sin(arg), axis=-2)


def piecewise_linear_trend(rng: np.random.Generator, shape, length: int, knot_every: int,
                           slope_sd: float) -> np.ndarray:
    """A continuous trend whose slope takes a random-walk step N(0, slope_sd^2) at every knot."""
    shape = tuple(np.atleast_1d(shape)) if np.ndim(shape) else (int(shape),)
    n_knots = int(np.ceil(length / knot_every))
    slopes = np.cumsum(rng.standard_normal(shape + (n_knots,)) * slope_sd, axis=-1)
    per_step = np.repeat(slopes, knot_every, axis=-1)[..., :length]
    return np.cumsum(per_step, axis=-1) - per_step[..., :1]


def level_shifts(rng: np.random.Generator, shape, length: int, n_shifts: int,
                 sd: float) -> np.ndarray:
    """A step function: `n_shifts` jumps N(0, sd^2) at uniform random times (each series its
    own)."""
    shape = tuple(np.atleast_1d(shape)) if np.ndim(shape) else (int(shape),)
    times = rng.integers(1, length, shape + (n_shifts,))
    sizes = rng.standard_normal(shape + (n_shifts,)) * sd
    steps = (np.arange(length) >= times[..., None]) * sizes[..., None]
    return steps.sum(axis=-2)


def onoff_markov(rng: np.random.Generator, shape, length: int, p_on_off: float, p_off_on: float,
                 start_on=None) -> np.ndarray:
    """Two-state Markov chain (True = on); starts from its stationary law unless `start_on` is
    given."""
    shape = tuple(np.atleast_1d(shape)) if np.ndim(shape) else (int(shape),)
    u = rng.random(shape + (length,))
    on = np.empty(shape + (length,), dtype=bool)
    if start_on is None:
        on[..., 0] = u[..., 0] < p_off_on / (p_on_off + p_off_on)
    else:
        on[..., 0] = np.broadcast_to(start_on, shape)
    for t in range(1, length):
        on[..., t] = np.where(on[..., t - 1], u[..., t] >= p_on_off, u[..., t] < p_off_on)
    return on


def zero_inflated_lognormal(rng: np.random.Generator, shape, p_zero, median, sigma) -> np.ndarray:
    """0 with probability p_zero, else LogNormal(log median, sigma)."""
    shape = tuple(np.atleast_1d(shape)) if np.ndim(shape) else (int(shape),)
    zero = rng.random(shape) < _param(p_zero, shape)
    value = _param(median, shape) * np.exp(rng.standard_normal(shape) * _param(sigma, shape))
    return np.where(zero, 0.0, value)


def delay(x: np.ndarray, lag) -> np.ndarray:
    """x(t - lag) along the last axis, the first `lag` values held at x(0); `lag` broadcasts over
    the leading axes (one integer lag per series)."""
    x = np.asarray(x, dtype=float)
    lag = np.broadcast_to(np.asarray(lag, dtype=int), x.shape[:-1])
    idx = np.clip(np.arange(x.shape[-1]) - lag[..., None], 0, None)
    return np.take_along_axis(x, idx, axis=-1)


def stable_var_coefficients(rng: np.random.Generator, channels: int, order: int, density: float,
                            radius: float) -> np.ndarray:
    """VAR(order) coefficients A (order, C, C) with sparse random off-diagonal cross terms (kept
    with probability `density`), a full diagonal, rescaled so the companion matrix has spectral
    radius exactly `radius`."""
    a = rng.standard_normal((order, channels, channels))
    mask = rng.random((order, channels, channels)) < density
    mask |= np.eye(channels, dtype=bool)[None]
    a = a * mask
    companion = np.zeros((channels * order, channels * order))
    companion[:channels] = np.concatenate(list(a), axis=1)
    companion[channels:, :-channels] = np.eye(channels * (order - 1))
    rho = np.max(np.abs(np.linalg.eigvals(companion)))
    # scaling lag k by s^k scales every companion eigenvalue by s
    s = radius / rho
    return a * (s ** np.arange(1, order + 1))[:, None, None]


def var_process(rng: np.random.Generator, coefs: np.ndarray, length: int, sd, forcing=None,
                burn: int = 200) -> np.ndarray:
    """x_t = sum_k A_k x_{t-k} + forcing_t + e_t (channels first: returns (C, length))."""
    order, channels, _ = coefs.shape
    e = rng.standard_normal((length + burn, channels)) * np.broadcast_to(sd, (channels,))
    if forcing is not None:
        f = np.asarray(forcing, dtype=float).T  # (length, C)
        e[burn:] += f
    x = np.zeros((length + burn, channels))
    for t in range(order, length + burn):
        x[t] = e[t] + sum(coefs[k] @ x[t - 1 - k] for k in range(order))
    return x[burn:].T
