"""Ridge regression and ridge autoregressions on lag matrices (numpy)."""
from __future__ import annotations

import numpy as np


def lag_matrix(x: np.ndarray, p: int):
    """Rows [x_{t-1}, ..., x_{t-p}] and targets x_t for t = p..T-1 of a 1-D series."""
    x = np.asarray(x, dtype=float)
    n = x.shape[-1] - p
    X = np.stack([x[p - k: p - k + n] for k in range(1, p + 1)], axis=1)
    return X, x[p:]


def ridge_fit(X: np.ndarray, y: np.ndarray, alpha: float, intercept: bool = True):
    """argmin ||y - X w - b||^2 + alpha ||w||^2 (the intercept is not penalised), like
    sklearn.linear_model.Ridge. y may be (n,) or (n, k). Returns (w, b)."""
    X, y = np.asarray(X, dtype=float), np.asarray(y, dtype=float)
    if intercept:
        xm, ym = X.mean(axis=0), y.mean(axis=0)
        X, y = X - xm, y - ym
    gram = X.T @ X + alpha * np.eye(X.shape[1])
    w = np.linalg.solve(gram, X.T @ y)
    b = ym - xm @ w if intercept else np.zeros(y.shape[1:])
    return w, b


def ridge_predict(X: np.ndarray, w: np.ndarray, b) -> np.ndarray:
    return np.asarray(X, dtype=float) @ w + b


def ridge_ar_forecast(past: np.ndarray, w: np.ndarray, b: float, horizon: int) -> np.ndarray:
    """Iterate a fitted AR(p) (w from lag_matrix order: w[0] multiplies x_{t-1}) `horizon` steps
    beyond each row of past (N, L): returns (N, horizon)."""
    p = w.shape[0]
    hist = np.array(past[:, -p:][:, ::-1], dtype=float)  # newest first
    out = np.empty((past.shape[0], horizon))
    for h in range(horizon):
        out[:, h] = hist @ w + b
        hist = np.concatenate([out[:, h: h + 1], hist[:, :-1]], axis=1)
    return out
