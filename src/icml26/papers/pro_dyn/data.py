"""Synthetic multivariate series standing in for the LTSF benchmarks, and their windows (numpy).

ETT-LIKE and WEATHER-LIKE follow the spec. EXCHANGE-LIKE and TRAFFIC-LIKE (full profile only)
are INFERRED: the spec names them without a recipe. Each generator returns (C, T) and draws
only from the Generator it is given, built from the shared icml26.timeseries.generate blocks.
"""

from __future__ import annotations

import numpy as np

from icml26.timeseries import generate as gen
from icml26.timeseries.windows import Standardiser, chrono_split, sliding_windows

DATASETS = ("ett", "weather", "exchange", "traffic")
LABELS = {"ett": "ETT-LIKE", "weather": "WEATHER-LIKE", "exchange": "EXCHANGE-LIKE",
          "traffic": "TRAFFIC-LIKE"}


def ett_like(rng: np.random.Generator, channels: int, length: int) -> np.ndarray:
    """x_c(t) = a_c sin(2 pi t/24 + phi_c) + b_c sin(2 pi t/96 + psi_c) + 0.3 sin(4 pi t/24 + chi_c)
    + trend_c(t) + e_c(t) + level shifts: a_c, b_c ~ U(0.5, 1.5); the trend a piecewise-linear
    random walk on the slope (knots every 500 steps, slope steps N(0, 0.002^2)); e_c AR(1) with
    coefficient 0.8 and innovation sd 0.3; 3 level shifts N(0, 0.5^2) at random times."""
    t = np.arange(length)
    amps = np.stack([rng.uniform(0.5, 1.5, channels), rng.uniform(0.5, 1.5, channels),
                     np.full(channels, 0.3)], axis=1)
    periods = np.broadcast_to(np.array([24.0, 96.0, 12.0]), (channels, 3))
    phases = rng.uniform(0.0, 2 * np.pi, (channels, 3))
    seasonal = gen.sinusoids(t, periods, amps, phases)
    trend = gen.piecewise_linear_trend(rng, channels, length, 500, 0.002)
    noise = gen.ar1(rng, channels, length, 0.8, 0.3)
    shifts = gen.level_shifts(rng, channels, length, 3, 0.5)
    return seasonal + trend + noise + shifts


def weather_like(rng: np.random.Generator, channels: int, length: int) -> np.ndarray:
    """A VAR(2) with companion spectral radius 0.95 and sparse cross-lag terms (density 0.3),
    driven by a shared seasonal forcing g_c sin(2 pi t/96) and innovations of sd 0.5.
    The gains g_c ~ U(0.5, 1.5) are INFERRED (the spec says "channel-specific gains")."""
    coefs = gen.stable_var_coefficients(rng, channels, 2, 0.3, 0.95)
    gains = rng.uniform(0.5, 1.5, channels)
    forcing = gains[:, None] * np.sin(2 * np.pi * np.arange(length) / 96.0)[None]
    return gen.var_process(rng, coefs, length, 0.5, forcing=forcing)


def exchange_like(rng: np.random.Generator, channels: int, length: int) -> np.ndarray:
    """INFERRED (full only): exchange rates as random walks, each channel a loading
    U(0.3, 1) on one common random walk plus its own walk (innovation sd 1 each)."""
    common = gen.random_walk(rng, 1, length, 1.0)
    own = gen.random_walk(rng, channels, length, 1.0)
    return rng.uniform(0.3, 1.0, channels)[:, None] * common + own


def traffic_like(rng: np.random.Generator, channels: int, length: int) -> np.ndarray:
    """INFERRED (full only): road occupancy with a daily (24) cycle, its first harmonic and a
    weekly (168) cycle with channel-specific amplitudes and phases, plus AR(1) noise (0.9,
    sd 0.2)."""
    t = np.arange(length)
    amps = np.stack([rng.uniform(0.5, 1.5, channels), rng.uniform(0.2, 0.6, channels),
                     rng.uniform(0.2, 0.8, channels)], axis=1)
    periods = np.broadcast_to(np.array([24.0, 12.0, 168.0]), (channels, 3))
    phases = rng.uniform(0.0, 2 * np.pi, (channels, 3))
    return gen.sinusoids(t, periods, amps, phases) + gen.ar1(rng, channels, length, 0.9, 0.2)


GENERATORS = {"ett": ett_like, "weather": weather_like, "exchange": exchange_like,
              "traffic": traffic_like}


def make_dataset(name: str, rng: np.random.Generator, channels: int, length: int, split):
    """A series standardised per channel with the statistics of its chronological training part:
    returns (z (C, T), boundaries [n_train, n_train + n_val, T])."""
    raw = GENERATORS[name](rng, channels, length)
    parts = chrono_split(length, split)
    z = Standardiser().fit(raw[:, parts[0]]).transform(raw)
    return z, np.array([parts[0].stop, parts[1].stop, parts[2].stop])


def split_windows(z: np.ndarray, bounds, part: str, lookback: int, horizon: int, stride: int):
    """(past (N, C, L), future (N, C, H)) of one chronological part.

    Training windows lie wholly inside the training part. A validation or test window's
    forecast starts inside its part (at the part's first step, then every `stride` steps) and
    its lookback may reach back into the part before, as in Time-Series-Library's data
    loaders, so every lookback forecasts the same targets."""
    n_train, n_val_end, n_end = (int(b) for b in bounds)
    if part == "train":
        return sliding_windows(z[:, :n_train], lookback, horizon, stride)
    start, end = (n_train, n_val_end) if part == "val" else (n_val_end, n_end)
    if start - lookback < 0:
        raise ValueError(f"lookback={lookback} reaches before the series start for the {part} part")
    return sliding_windows(z[:, start - lookback:end], lookback, horizon, stride)
