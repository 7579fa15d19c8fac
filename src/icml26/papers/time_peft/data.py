"""Synthetic series of time-peft and the two complexity metrics (numpy only).

- `pretrain_corpus`: the "standard-benchmark-like" pretraining windows (1-2 sinusoids, a linear
  trend, AR(1) noise; channels independent by construction).
- `target_series`: one dataset D(T, M) of the 3x3 grid of temporal x multichannel complexity
  (or, at full scale, an ETT-like clone with daily/weekly seasonality and regime shifts).
- `temporal_complexity` (TC, normalised spectral entropy on non-overlapping windows) and
  `multichannel_complexity` (MC, Gaussian transfer entropy from ridge AR models; INFERRED).
- `eval_windows` / `train_starts`: the chronological split and the windows of each part.
"""
from __future__ import annotations

import numpy as np

from icml26.timeseries import generate as gen
from icml26.timeseries.features import spectral_entropy
from icml26.timeseries.linear import lag_matrix, ridge_fit, ridge_predict
from icml26.timeseries.windows import chrono_split, instance_normalise, window_starts

# temporal level -> (sinusoids per channel, period range): the spec's T-low / T-mid / T-high
TEMPORAL = {"low": (1, (12.0, 48.0)), "mid": (4, (6.0, 64.0)), "high": (12, (4.0, 80.0))}
# multichannel level -> coupling kappa: M-none / M-mid / M-high
COUPLING = {"none": 0.0, "mid": 0.6, "high": 1.2}


def pretrain_corpus(rng: np.random.Generator, n: int, length: int, p: dict) -> np.ndarray:
    """(n, length) windows a1 sin(2 pi t / P1 + phi1) + a2 sin(...) + trend + AR(1) noise,
    P ~ U(12, 48), a2 = 0 with probability 0.5 (spec). Amplitudes U(0.3, 1) and the trend
    slope N(0, slope_sd^2) per step are INFERRED (the spec gives no values)."""
    periods = rng.uniform(*p["pretrain_periods"], (n, 2))
    amps = rng.uniform(*p["amplitude"], (n, 2))
    amps[:, 1] *= rng.random(n) >= 0.5
    phases = rng.uniform(0, 2 * np.pi, (n, 2))
    t = np.arange(length)
    x = gen.sinusoids(t, periods, amps, phases)
    x += rng.standard_normal((n, 1)) * p["trend_slope_sd"] * t
    x += gen.ar1(rng, n, length, p["pretrain_ar_phi"], p["pretrain_ar_sd"])
    return x


AMPLITUDE_RULES = ("per-sinusoid", "equal-variance")


def seasonal_variance(p: dict) -> float:
    """Common variance of every target channel's seasonal sum under the equal-variance rule
    (INFERRED): the expected variance of T-high's seasonal sum as the spec writes it, 12
    sinusoids with amplitudes a ~ U(lo, hi), i.e. 12 E[a^2] / 2 with E[a^2] = (hi^3 - lo^3) /
    (3 (hi - lo)) (about 2.78 for U(0.3, 1)). T-high is the only level whose amplitudes the
    spec states, so it keeps its specified signal power in expectation and the other levels
    are given the same power."""
    lo, hi = (float(v) for v in p["amplitude"])
    mean_sq = (hi ** 3 - lo ** 3) / (3 * (hi - lo)) if hi > lo else lo ** 2
    return TEMPORAL["high"][0] * mean_sq / 2


def apply_amplitude_rule(seasonal: np.ndarray, rule: str, p: dict) -> np.ndarray:
    """The targets' seasonal sums (C, T) under `rule`.

    - per-sinusoid: as drawn, amplitudes U(0.3, 1) per sinusoid at every level (the first
      reading: more sinusoids then also means more signal power against the fixed noise, so
      T-high has the highest signal-to-noise ratio and the flattest-noise T-low the highest TC).
    - equal-variance (INFERRED; the default): the drawn amplitudes are relative weights; each
      channel's seasonal sum is rescaled to variance `seasonal_variance(p)`, the same at every
      level, so that the T levels differ in the number of periodic patterns and not in
      signal-to-noise (the grid's premise). Uses no random numbers, so both rules see the same
      draws.
    """
    if rule == "per-sinusoid":
        return seasonal
    if rule != "equal-variance":
        raise ValueError(f"unknown amplitude_rule {rule!r} (one of {AMPLITUDE_RULES})")
    sd = seasonal.std(axis=-1, keepdims=True)
    return seasonal * (np.sqrt(seasonal_variance(p)) / np.where(sd > 0, sd, 1.0))


def target_series(rng: np.random.Generator, setting: dict, p: dict) -> np.ndarray:
    """One target dataset (C, length).

    Grid kind: channel c = s_c + kappa s_(c-1 mod C)(t - l_c) + (kappa/2) d(t) with own signal
    s_c = sum of sinusoids (count and periods by the T level, amplitudes U(0.3, 1) and, under
    the default equal-variance rule, each channel's sum rescaled to a common variance: see
    `apply_amplitude_rule`) + AR(1) noise (s.d. 0.2) + a slowly varying "random-walk-like"
    component (AR(1), marginal s.d. 0.3), lags l_c ~ U{4..10} and d a shared latent AR(2)
    driver scaled to unit s.d.
    INFERRED (the spec leaves them open): the lagged neighbour enters with its own signal (not
    its coupled one, which would be circular); the random-walk-like component is a stationary
    AR(1) with phi = rw_phi (a true random walk would swamp the sinusoids over 3,000 steps) and
    is part of every channel's own signal (each channel leads the next); the AR noise has
    phi = 0.5 as in the pretraining corpus.
    ETT kind (full scale only, INFERRED): daily (24) and weekly (168) seasonality with
    channel-specific phases and amplitudes (the same amplitude rule), level shifts at random
    times (regime shifts), the same coupling and noise.
    """
    C, n = int(setting.get("channels", p["channels"])), int(p["length"])
    t = np.arange(n)
    kappa = COUPLING[setting["M"]]
    rule = p.get("amplitude_rule", "equal-variance")
    if setting.get("kind", "grid") == "ett":
        periods = np.broadcast_to([24.0, 168.0, 12.0], (C, 3))
        amps = rng.uniform(*p["amplitude"], (C, 3)) * np.array([1.0, 0.7, 0.3])
        own = apply_amplitude_rule(
            gen.sinusoids(t, periods, amps, rng.uniform(0, 2 * np.pi, (C, 3))), rule, p)
        own += gen.level_shifts(rng, C, n, p["ett_shifts"], 0.5)
    else:
        k, (lo, hi) = TEMPORAL[setting["T"]]
        own = apply_amplitude_rule(
            gen.sinusoids(t, rng.uniform(lo, hi, (C, k)), rng.uniform(*p["amplitude"], (C, k)),
                          rng.uniform(0, 2 * np.pi, (C, k))), rule, p)
    own += gen.ar1(rng, C, n, p["noise_phi"], p["noise_sd"])
    rw_innov = p["rw_sd"] * np.sqrt(1 - p["rw_phi"] ** 2)
    own += gen.ar1(rng, C, n, p["rw_phi"], rw_innov)
    lags = rng.integers(p["lag_range"][0], p["lag_range"][1] + 1, C)
    phi1, phi2 = gen.stable_ar2_coefficients(rng, 1)
    driver = gen.ar2(rng, 1, n, phi1, phi2, 1.0)[0]
    driver = (driver - driver.mean()) / driver.std()
    leader = np.roll(own, 1, axis=0)              # row c holds s_(c-1 mod C)
    return own + kappa * gen.delay(leader, lags) + 0.5 * kappa * driver


# ------------------------------------------------------------------------------------------
# complexity metrics (computed on the training split)
# ------------------------------------------------------------------------------------------
def temporal_complexity(train: np.ndarray, window: int) -> np.ndarray:
    """TC per channel: normalised spectral entropy of the non-DC periodogram on non-overlapping
    windows of `window` steps, averaged over windows (spec). train (C, T) -> (C,)."""
    C, T = train.shape
    n_win = T // window
    if n_win < 1:
        raise ValueError(f"training split of {T} steps is shorter than the TC window {window}")
    w = train[:, : n_win * window].reshape(C, n_win, window)
    return spectral_entropy(w).mean(axis=1)


def multichannel_complexity(train: np.ndarray, lags: int, alpha: float,
                            fit_frac: float) -> np.ndarray:
    """MC_i = 1/2 log(sigma2_own,i / sigma2_full,i) per channel (INFERRED operationalisation:
    Gaussian transfer entropy from the other channels). sigma2_own: held-out residual variance
    of a ridge AR(lags) of channel i on its own past; sigma2_full: the same with the `lags`
    past values of every channel. Ridge alpha, fitted on the first `fit_frac` of the training
    split, residuals on the rest. Channels are standardised with training statistics first
    (INFERRED: it makes the ridge penalty scale-free). Not clipped at 0: a negative value means
    the other channels do not help out of sample. train (C, T) -> (C,)."""
    x = (train - train.mean(axis=1, keepdims=True)) / train.std(axis=1, keepdims=True)
    mats = [lag_matrix(x[c], lags) for c in range(x.shape[0])]
    X_all = np.concatenate([m[0] for m in mats], axis=1)
    n = X_all.shape[0]
    cut = int(round(fit_frac * n))
    out = np.empty(x.shape[0])
    for c, (X_own, y) in enumerate(mats):
        resid = []
        for X in (X_own, X_all):
            w, b = ridge_fit(X[:cut], y[:cut], alpha)
            resid.append(np.var(y[cut:] - ridge_predict(X[cut:], w, b)))
        out[c] = 0.5 * np.log(resid[0] / resid[1])
    return out


# ------------------------------------------------------------------------------------------
# splits and windows
# ------------------------------------------------------------------------------------------
def split_slices(length: int, p: dict) -> dict:
    tr, va, te = chrono_split(length, p["split"])
    return {"train": tr, "val": va, "test": te}


def train_starts(length: int, p: dict, lookback: int, horizon: int) -> np.ndarray:
    """Starts of the stride-1 training windows lying wholly in the training split."""
    tr = split_slices(length, p)["train"]
    return tr.start + window_starts(tr.stop - tr.start, lookback, horizon, 1)


def eval_starts(length: int, p: dict, part: str, lookback: int, horizon: int) -> np.ndarray:
    """Starts of the stride-`eval_stride` windows whose horizon lies in split `part` (the
    lookback may reach back into the previous part, as in the usual benchmark loaders)."""
    sl = split_slices(length, p)[part]
    first = sl.start - lookback
    return first + window_starts(sl.stop - first, lookback, horizon, p["eval_stride"])


def windows_at(series: np.ndarray, starts: np.ndarray, lookback: int, horizon: int):
    """Normalised (RevIN: each window's lookback mean and s.d. per channel) lookbacks and
    targets at the given starts: (N, C, lookback), (N, C, horizon)."""
    idx = starts[:, None] + np.arange(lookback + horizon)
    w = np.moveaxis(series[:, idx], 1, 0)                        # (N, C, L + H)
    z, mean, sd = instance_normalise(w[..., :lookback])
    return z, (w[..., lookback:] - mean) / (sd + 1e-5)
