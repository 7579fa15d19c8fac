"""Chronological splits, (lookback, horizon) windows and normalisation (numpy)."""
from __future__ import annotations

import numpy as np


def chrono_split(length: int, fractions) -> list[slice]:
    """Consecutive slices of range(length) with the given fractions (they must sum to 1)."""
    fractions = np.asarray(fractions, dtype=float)
    if np.any(fractions <= 0) or not np.isclose(fractions.sum(), 1.0):
        raise ValueError(f"split fractions must be positive and sum to 1, got {fractions.tolist()}")
    edges = np.round(np.concatenate([[0.0], np.cumsum(fractions)]) * length).astype(int)
    edges[-1] = length
    return [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=False)]


def window_starts(length: int, lookback: int, horizon: int, stride: int = 1) -> np.ndarray:
    """First indices of every window [s, s + lookback + horizon) that fits in `length` steps."""
    last = length - lookback - horizon
    return np.arange(0, last + 1, stride) if last >= 0 else np.zeros(0, dtype=int)


def sliding_windows(x: np.ndarray, lookback: int, horizon: int, stride: int = 1):
    """Cut x (..., T) into past (N, ..., lookback) and future (N, ..., horizon) windows."""
    x = np.asarray(x)
    starts = window_starts(x.shape[-1], lookback, horizon, stride)
    idx = starts[:, None] + np.arange(lookback + horizon)
    w = np.moveaxis(x[..., idx], -2, 0)  # (N, ..., lookback + horizon)
    return np.ascontiguousarray(w[..., :lookback]), np.ascontiguousarray(w[..., lookback:])


class Standardiser:
    """Per-channel standardisation with statistics of a training part (channels on axis -2 of a
    (C, T) series or on the given axis)."""

    def __init__(self, eps: float = 1e-8):
        self.eps = eps

    def fit(self, x: np.ndarray, axis=-1):
        self.mean_ = np.mean(x, axis=axis, keepdims=True)
        self.scale_ = np.std(x, axis=axis, keepdims=True) + self.eps
        return self

    def transform(self, x: np.ndarray) -> np.ndarray:
        return (x - self.mean_) / self.scale_

    def inverse(self, z: np.ndarray) -> np.ndarray:
        return z * self.scale_ + self.mean_


def instance_normalise(x: np.ndarray, eps: float = 1e-5, axis: int = -1):
    """Per-window, per-channel z-normalisation (RevIN without affine): returns (z, mean, sd)."""
    mean = np.mean(x, axis=axis, keepdims=True)
    sd = np.std(x, axis=axis, keepdims=True)
    return (x - mean) / (sd + eps), mean, sd
