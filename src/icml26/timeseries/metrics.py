"""Forecast errors (numpy): overall and per channel."""
from __future__ import annotations

import numpy as np


def mse(pred, target, axis=None):
    return np.mean((np.asarray(pred) - np.asarray(target)) ** 2, axis=axis)


def mae(pred, target, axis=None):
    return np.mean(np.abs(np.asarray(pred) - np.asarray(target)), axis=axis)


def per_channel(metric, pred, target, channel_axis: int = -2) -> np.ndarray:
    """`metric` averaged over every axis but the channel axis: one value per channel."""
    pred, target = np.asarray(pred), np.asarray(target)
    axes = tuple(a for a in range(pred.ndim) if a != channel_axis % pred.ndim)
    return metric(pred, target, axis=axes)
