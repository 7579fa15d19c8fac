"""The three input representations of a window and the FEAT-GBM summary features.

RAW (scale-preserving): log1p on count KPIs, then standardisation with training-split
statistics (dataset level). INST (scale-free, foundation-model style): per-window,
per-channel z-normalisation of RAW (RevIN / MOMENT / PatchTST instance norm); since RAW is an
affine map per channel, INST keeps the window's shape and loses its level and spread exactly.
INST+SCALE ("natively scale-aware", the official NonStationary-Transformer's de-stationary
side information is the nearest relative): INST plus, per channel, the window mean and
log s.d. of RAW as 2 C extra scalars.
"""

from __future__ import annotations

import numpy as np

from icml26.timeseries.features import lag1_autocorr, periodogram
from icml26.timeseries.windows import Standardiser, instance_normalise

from .generator import LOG_KPIS, K

REPRESENTATIONS = ("raw", "inst", "inst-scale")
FEATURE_DECIMALS = 9
FEATURES = ("mean", "sd", "min", "max", "q10", "q50", "q90", "frac_at_min", "slope",
            "quarter_diff", "lag1_acf", "dom_freq", "dom_power")


def log_transform(x: np.ndarray) -> np.ndarray:
    """Per-KPI transform fixed for the whole dataset: log1p on counts, identity otherwise."""
    out = np.array(x, dtype=float)
    for name in LOG_KPIS:
        out[:, K[name]] = np.log1p(np.maximum(out[:, K[name]], 0.0))
    return out


def fit_raw(x_train: np.ndarray) -> Standardiser:
    """Dataset-level per-KPI mean / s.d. over (windows, time) of the training split."""
    g = log_transform(x_train)
    return Standardiser(eps=1e-8).fit(np.moveaxis(g, 1, 0).reshape(g.shape[1], -1), axis=1)


def raw(x: np.ndarray, std: Standardiser) -> np.ndarray:
    g = log_transform(x)
    return (g - std.mean_[None]) / std.scale_[None]


def instance(z_raw: np.ndarray, eps: float) -> np.ndarray:
    """Per-window, per-channel z-normalisation (x - mean) / sd; a channel with sd <= eps (a
    flat window, e.g. an all-zero buffer) maps to 0.

    The spec writes (x - mean) / (sd + 1e-6). Its additive eps leaks scale: the normalised
    window's s.d. becomes 1 - eps / sd, a monotone function of the RAW s.d. that a quantile-
    binned GBM can split on, which breaks the spec's own premise that under INST "the mean and
    s.d. features are constant and carry nothing, by construction". Here eps only guards the
    division, so that premise holds exactly (tested; the premise is also checked in the run).
    """
    _, mean, sd = instance_normalise(z_raw, eps=1.0, axis=-1)   # only its mean and s.d.
    flat = sd <= eps
    return np.where(flat, 0.0, (z_raw - mean) / np.where(flat, 1.0, sd))


def represent(z_raw: np.ndarray, kind: str, eps_inst: float, eps_scale: float):
    """(series (n, C, T), scale scalars (n, 2C) or None) of a representation, from RAW; the
    scale scalars are the window mean and log(s.d. + eps_scale) of RAW per channel."""
    if kind == "raw":
        return z_raw, None
    z = instance(z_raw, eps_inst)
    _, mean, sd = instance_normalise(z_raw, eps=1.0, axis=-1)   # only its mean and s.d.
    if kind == "inst":
        return z, None
    if kind == "inst-scale":
        scale = np.concatenate([mean[..., 0], np.log(sd[..., 0] + eps_scale)], axis=1)
        return z, scale
    raise ValueError(f"unknown representation {kind!r}; allowed: {', '.join(REPRESENTATIONS)}")


def features(z: np.ndarray) -> np.ndarray:
    """13 summary features per channel of z (n, C, T): (n, C * 13), channel-major.

    ``frac_at_min`` is the fraction of steps at the channel's window minimum: the spec's
    "fraction of exact zeros" made representation-independent (decided before any run; under
    any per-channel affine map, RAW's standardisation or INST, the transformed zeros are no
    longer zero, but a zero-inflated count's zeros stay at its window minimum). The dominant
    frequency is the argmax of the non-DC periodogram (1-based bin) and its power share.
    """
    n, C, T = z.shape
    t = np.arange(T) - (T - 1) / 2.0
    q = np.quantile(z, [0.1, 0.5, 0.9], axis=-1)
    lo = z.min(axis=-1)
    mean = z.mean(axis=-1)
    slope = (z * t).sum(axis=-1) / (t * t).sum()
    quarter = T // 4
    pgram = periodogram(z)
    total = pgram.sum(axis=-1)
    dom = pgram.argmax(axis=-1)
    share = np.where(total > 0, pgram.max(axis=-1) / np.where(total > 0, total, 1.0), 0.0)
    cols = [mean, z.std(axis=-1), lo, z.max(axis=-1), q[0], q[1], q[2],
            (z == lo[..., None]).mean(axis=-1), slope,
            z[..., T - quarter:].mean(axis=-1) - z[..., :quarter].mean(axis=-1),
            lag1_autocorr(z), np.where(total > 0, dom + 1.0, 0.0), share]
    # rounded to FEATURE_DECIMALS: under INST the mean and s.d. features are 0 and 1 only up
    # to floating-point rounding, and that rounding grows with the window's level / spread,
    # a scale leak a quantile-binned GBM can split on (tested)
    f = np.stack(cols, axis=-1).reshape(n, C * len(FEATURES))
    return np.round(f, FEATURE_DECIMALS) + 0.0


def gbm_inputs(z_raw: np.ndarray, kind: str, eps_inst: float, eps_scale: float,
               cache: dict | None = None) -> np.ndarray:
    """FEAT-GBM's input rows: features of the representation (+ the 2C scale scalars).
    ``cache`` keeps the features of RAW and of INST (INST+SCALE reuses INST's)."""
    z, scale = represent(z_raw, kind, eps_inst, eps_scale)
    base = "raw" if kind == "raw" else "inst"
    if cache is None or base not in cache:
        f = features(z)
        if cache is not None:
            cache[base] = f
    f = cache[base] if cache is not None else f
    return f if scale is None else np.concatenate([f, scale], axis=1)
