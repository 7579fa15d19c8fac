"""Synthetic multivariate datasets with planted inter-channel dependence (numpy).

Every channel is signal + AR(1) noise (coefficient 0.5), as the spec says. The noise level,
sinusoid amplitudes and the common seasonal pattern's shape are not in the spec: INFERRED
(values in config `params`, fixed before any run). Each generator returns (series (C, T),
roles (C,)) with roles 0 = leader, 1 = follower, 2 = factor-driven, 3 = independent /
common-seasonal, so neighbour precision can be measured.

Also the univariate pre-training corpus of the stand-in TSFM (five generator families with
Gaussian noise at SNR U(2, 20)).
"""

from __future__ import annotations

import numpy as np

from icml26.timeseries import generate as gen

LEADER, FOLLOWER, FACTOR_ROLE, OTHER = 0, 1, 2, 3
COLLECTION_TYPES = ("leadlag", "factor", "indep", "commonseas")
HELDOUT_TYPES = ("leadlag", "factor", "indep", "commonseas", "anti", "mixed")
MAX_TAU = 24


def _noise(rng, signal, ratio_range, coef=0.5):
    """AR(1) noise (coefficient `coef`) scaled so that var(noise) / var(signal) ~ U(ratio_range)
    per channel (INFERRED level)."""
    C, T = signal.shape
    unit = gen.ar1(rng, (C,), T, coef, 1.0)
    ratio = rng.uniform(*ratio_range, C)
    scale = np.sqrt(ratio * signal.var(axis=1) / unit.var(axis=1))
    return unit * scale[:, None]


def _sinusoid(rng, n, T, amp_range):
    t = np.arange(T)
    periods = rng.uniform(12.0, 48.0, (n, 1))
    amps = rng.uniform(*amp_range, (n, 1))
    phases = rng.uniform(0.0, 2 * np.pi, (n, 1))
    return gen.sinusoids(t, periods, amps, phases)


def leadlag(rng, C, T, p, tau_choices=None, w_range=(0.6, 1.2)):
    """A latent driver (AR(1) 0.9 + a sinusoid of period U(12, 48)); the first C//2 channels
    are leaders (driver + noise), the others followers w * driver(t - tau) + noise.
    tau ~ U{6..20} (or from `tau_choices`), w ~ U(w_range) (ANTI: negative)."""
    drv = gen.ar1(rng, (1,), T + MAX_TAU, 0.9, 1.0) + _sinusoid(rng, 1, T + MAX_TAU,
                                                                 p["sin_amp"])
    n_lead = C // 2
    if tau_choices is None:
        tau = rng.integers(6, 21, C - n_lead)
    else:
        tau = rng.choice(np.asarray(tau_choices), C - n_lead)
    w = rng.uniform(*w_range, C - n_lead)
    lead = np.repeat(drv[:, MAX_TAU:], n_lead, axis=0)
    foll = w[:, None] * gen.delay(np.repeat(drv, C - n_lead, axis=0), tau)[:, MAX_TAU:]
    signal = np.concatenate([lead, foll])
    roles = np.array([LEADER] * n_lead + [FOLLOWER] * (C - n_lead))
    return signal + _noise(rng, signal, p["noise_ratio"]), roles


def factor(rng, C, T, p):
    """1-2 latent AR(1) factors (0.95) with loadings U(0.5, 1.5) plus idiosyncratic AR(1)
    noise; noise / factor variance ratio U(0.5, 2) per channel (the spec's)."""
    K = int(rng.integers(1, 3))
    f = gen.ar1(rng, (K,), T, 0.95, 1.0)
    load = rng.uniform(0.5, 1.5, (C, K))
    signal = load @ f
    return signal + _noise(rng, signal, p["factor_noise_ratio"]), np.full(C, FACTOR_ROLE)


def indep(rng, C, T, p):
    """Independent channels: each its own sinusoid + AR(1) (0.9) + AR(1) noise."""
    signal = _sinusoid(rng, C, T, p["sin_amp"]) + gen.ar1(rng, (C,), T, 0.9, 1.0)
    return signal + _noise(rng, signal, p["noise_ratio"]), np.full(C, OTHER)


def commonseas(rng, C, T, p):
    """One deterministic seasonal pattern (a period U(12, 48) and its second harmonic, the same
    phase) in every channel plus independent AR(1) (0.9) innovations of s.d.
    `commonseas_ar_sd`: high raw correlation, nothing to learn from neighbours (INFERRED
    shape)."""
    t = np.arange(T)
    P = rng.uniform(12.0, 48.0)
    a1, a2 = rng.uniform(2.0, 3.0), rng.uniform(0.5, 1.5)
    ph1, ph2 = rng.uniform(0.0, 2 * np.pi, 2)
    seas = a1 * np.sin(2 * np.pi * t / P + ph1) + a2 * np.sin(4 * np.pi * t / P + ph2)
    signal = seas[None, :] + gen.ar1(rng, (C,), T, 0.9, float(p["commonseas_ar_sd"]))
    return signal + _noise(rng, signal, p["noise_ratio"]), np.full(C, OTHER)


def mixed(rng, C, T, p, tau_choices=None):
    """Half the channels LEADLAG (one driver), then FACTOR (ceil of the rest's half) and
    INDEP (the remainder): 5 / 3 / 2 at C = 10 (the split of odd counts is INFERRED)."""
    n_ll = C // 2
    n_fa = (C - n_ll + 1) // 2
    parts = [leadlag(rng, n_ll, T, p, tau_choices), factor(rng, n_fa, T, p),
             indep(rng, C - n_ll - n_fa, T, p)]
    return (np.concatenate([s for s, _ in parts]), np.concatenate([r for _, r in parts]))


def make_dataset(kind: str, rng, C: int, T: int, p, heldout: bool = False):
    """One dataset of a pattern type. Held-out LEADLAG / ANTI / MIXED draw tau from
    params.heldout_tau ({8, 16}); ANTI is LEADLAG with w ~ U(-1.2, -0.6)."""
    tau = p["heldout_tau"] if heldout else None
    if kind == "leadlag":
        return leadlag(rng, C, T, p, tau)
    if kind == "anti":
        return leadlag(rng, C, T, p, tau, w_range=(-1.2, -0.6))
    if kind == "mixed":
        return mixed(rng, C, T, p, tau)
    return {"factor": factor, "indep": indep, "commonseas": commonseas}[kind](rng, C, T, p)


def standardise(series, fit_until: int):
    """Per-channel z-score with the statistics of the first `fit_until` points (the parts
    before the test part), so metrics are on the standardised scale without test leakage."""
    mu = series[:, :fit_until].mean(axis=1, keepdims=True)
    sd = series[:, :fit_until].std(axis=1, keepdims=True) + 1e-8
    return (series - mu) / sd


# ---------------------------------------------------------------- TSFM pre-training corpus
def tsfm_corpus(rng, n: int, length: int) -> np.ndarray:
    """n univariate windows of `length` points, one fifth from each family: sums of 1-3
    sinusoids (periods U(6, 48)), stable AR(2), random walk, trend + seasonality, piecewise
    level shifts; each plus Gaussian noise at SNR (variance ratio) U(2, 20). Amplitudes and
    the families' own scales are INFERRED."""
    t = np.arange(length)
    k = np.array_split(np.arange(n), 5)
    out = np.empty((n, length))
    m = len(k[0])
    per = rng.uniform(6.0, 48.0, (m, 3))
    amp = rng.uniform(0.3, 2.0, (m, 3)) * (np.arange(3) < rng.integers(1, 4, (m, 1)))
    out[k[0]] = gen.sinusoids(t, per, amp, rng.uniform(0, 2 * np.pi, (m, 3)))
    m = len(k[1])
    phi1, phi2 = gen.stable_ar2_coefficients(rng, (m,))
    out[k[1]] = gen.ar2(rng, (m,), length, phi1, phi2, 1.0)
    m = len(k[2])
    out[k[2]] = gen.random_walk(rng, (m,), length, 1.0)
    m = len(k[3])
    trend = gen.piecewise_linear_trend(rng, (m,), length, 40, 0.05)
    out[k[3]] = trend + gen.sinusoids(t, rng.uniform(6.0, 48.0, (m, 1)),
                                      rng.uniform(0.5, 2.0, (m, 1)),
                                      rng.uniform(0, 2 * np.pi, (m, 1)))
    m = len(k[4])
    out[k[4]] = gen.level_shifts(rng, (m,), length, 3, 1.0) + gen.ar1(rng, (m,), length, 0.5,
                                                                       0.3)
    snr = rng.uniform(2.0, 20.0, n)
    sd = np.sqrt(out.var(axis=1) / snr)
    out = out + rng.standard_normal(out.shape) * sd[:, None]
    return out[rng.permutation(n)]
