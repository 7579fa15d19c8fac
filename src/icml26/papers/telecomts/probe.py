"""Forecasting probe: how much of the next 16 steps is predictable from the previous 112.

Three predictors per KPI: last value, window mean (the reference) and a ridge AR on the last
32 lags (alpha 1), fitted on every lag row of the training windows' past parts and iterated
16 steps ahead. "Best of naive / ridge" is chosen per KPI on validation windows (the last
``val_frac`` of the training windows; a rule fixed in config, the same for both series), and
the skill is 1 - MAE(chosen) / MAE(window mean) on the test windows.
"""

from __future__ import annotations

import numpy as np

from icml26.timeseries.linear import ridge_ar_forecast, ridge_fit
from icml26.timeseries.metrics import mae

PREDICTORS = ("last", "ridge")


def lag_rows(past: np.ndarray, p: int):
    """Lag rows [x_{t-1}, ..., x_{t-p}] and targets x_t of every window (N, L), pooled: the
    rows of icml26.timeseries.linear.lag_matrix for each window, stacked."""
    w = np.lib.stride_tricks.sliding_window_view(past, p + 1, axis=-1)   # (N, L - p, p + 1)
    return w[..., :p][..., ::-1].reshape(-1, p), w[..., p].reshape(-1)


def forecasts(fit_past: np.ndarray, past: np.ndarray, horizon: int, lags: int, alpha: float):
    """Forecasts (N, horizon) of each predictor and of the window mean for windows ``past``."""
    w, b = ridge_fit(*lag_rows(fit_past, lags), alpha)
    return {"last": np.repeat(past[:, -1:], horizon, axis=1),
            "mean": np.repeat(past.mean(axis=1, keepdims=True), horizon, axis=1),
            "ridge": ridge_ar_forecast(past, w, float(b), horizon)}


def skill(train: np.ndarray, test: np.ndarray, lookback: int, horizon: int, lags: int,
          alpha: float, val_frac: float) -> dict:
    """train, test: windows (N, lookback + horizon) of one series. Returns the test skill of
    the predictor chosen on validation, which one it is, and each predictor's test MAE."""
    n_val = max(1, int(round(val_frac * train.shape[0])))
    fit, val = train[:-n_val], train[-n_val:]
    f_val = forecasts(fit[:, :lookback], val[:, :lookback], horizon, lags, alpha)
    val_mae = {k: float(mae(f_val[k], val[:, lookback:])) for k in PREDICTORS}
    choice = min(PREDICTORS, key=lambda k: (val_mae[k], PREDICTORS.index(k)))
    f = forecasts(fit[:, :lookback], test[:, :lookback], horizon, lags, alpha)
    test_mae = {k: float(mae(v, test[:, lookback:])) for k, v in f.items()}
    ref = test_mae["mean"]
    out = {"skill": 1.0 - test_mae[choice] / ref if ref > 0 else float("nan"),
           "choice": float(PREDICTORS.index(choice))}
    out.update({f"mae_{k}": v for k, v in test_mae.items()})
    return out
