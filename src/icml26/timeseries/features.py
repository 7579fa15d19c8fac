"""Descriptive statistics of series (numpy): forecastability and dependence features."""
from __future__ import annotations

import numpy as np


def periodogram(x: np.ndarray) -> np.ndarray:
    """|rFFT(x - mean)|^2 over the non-DC bins, along the last axis."""
    x = np.asarray(x, dtype=float)
    return np.abs(np.fft.rfft(x - x.mean(axis=-1, keepdims=True), axis=-1)[..., 1:]) ** 2


def spectral_entropy(x: np.ndarray) -> np.ndarray:
    """Normalised spectral entropy in [0, 1] (Goerg 2013): -sum p log p / log(#bins) of the
    non-DC periodogram; 0 for one pure frequency, near 1 for white noise."""
    p = periodogram(x)
    total = p.sum(axis=-1, keepdims=True)
    p = p / np.where(total > 0, total, 1.0)
    h = -np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0), axis=-1)
    return h / np.log(p.shape[-1])


def seasonal_strength(x: np.ndarray) -> np.ndarray:
    """Share of the (non-DC) periodogram power at its largest peak."""
    p = periodogram(x)
    return p.max(axis=-1) / np.maximum(p.sum(axis=-1), 1e-300)


def lag1_autocorr(x: np.ndarray) -> np.ndarray:
    """Lag-1 sample autocorrelation along the last axis (0 for a constant series)."""
    x = np.asarray(x, dtype=float)
    d = x - x.mean(axis=-1, keepdims=True)
    den = np.sum(d * d, axis=-1)
    num = np.sum(d[..., 1:] * d[..., :-1], axis=-1)
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def corr(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson correlation along the last axis (0 where either side is constant)."""
    a = np.asarray(a, dtype=float) - np.mean(a, axis=-1, keepdims=True)
    b = np.asarray(b, dtype=float) - np.mean(b, axis=-1, keepdims=True)
    den = np.sqrt(np.sum(a * a, axis=-1) * np.sum(b * b, axis=-1))
    return np.where(den > 0, np.sum(a * b, axis=-1) / np.where(den > 0, den, 1.0), 0.0)


def lagged_corr(a: np.ndarray, b: np.ndarray, max_lag: int) -> np.ndarray:
    """corr(a(t), b(t - lag)) for lag = 1..max_lag along the last axis: shape (..., max_lag)."""
    n = np.asarray(a).shape[-1]
    lags = range(1, max_lag + 1)
    return np.stack([corr(a[..., lag:], b[..., : n - lag]) for lag in lags], axis=-1)
