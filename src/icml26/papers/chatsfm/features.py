"""Domain descriptor (per dataset) and pair features (per window) of ChaTSFM (numpy).

All of it is INFERRED from the abstract's "data-derived domain descriptors" and
"inter-channel similarity"; the lists follow the spec.

The descriptor uses the shared `icml26.timeseries.features` functions directly (once per
dataset). The pair features are needed for every window of the pre-training collection
(12k windows x 64 ordered pairs x 24 lags per seed), where the shared per-pair functions cost
seconds per seed; `corr_matrix` and `lagged_corr_matrix` compute the same Pearson values for
all pairs at once with one matrix product (tests/papers/test_chatsfm.py checks them against
the shared `corr` and `lagged_corr`).
"""

from __future__ import annotations

import numpy as np

from icml26.timeseries.features import corr, lagged_corr, seasonal_strength, spectral_entropy

N_PAIR = 5
N_DESC = 7


def corr_matrix(X: np.ndarray) -> np.ndarray:
    """Pearson correlation of every channel pair: X (..., C, n) -> (..., C, C); 0 where a
    channel is constant (as the shared `corr`)."""
    d = X - X.mean(axis=-1, keepdims=True)
    nrm = np.sqrt((d * d).sum(axis=-1))
    z = d / np.where(nrm > 0, nrm, 1.0)[..., None]
    return z @ np.swapaxes(z, -1, -2)


def lagged_corr_matrix(A: np.ndarray, max_lag: int, chunk: int = 256) -> np.ndarray:
    """corr(A_i(t), A_j(t - lag)) for lag = 1..max_lag and every ordered pair (i, j):
    A (N, C, n) -> (N, C, C, max_lag), the shared `lagged_corr(A_i, A_j, max_lag)` per pair.
    Segment sums come from cumulative sums, the cross sums from one product with the
    lag-shifted copies of A."""
    N, C, n = A.shape
    out = np.empty((N, C, C, max_lag))
    lags = np.arange(1, max_lag + 1)
    m = (n - lags).astype(float)                                 # overlap lengths
    for s in range(0, N, chunk):
        a = A[s:s + chunk]
        cs = np.concatenate([np.zeros(a.shape[:-1] + (1,)), np.cumsum(a, -1)], -1)
        cq = np.concatenate([np.zeros(a.shape[:-1] + (1,)), np.cumsum(a * a, -1)], -1)
        sa = cs[..., n:n + 1] - cs[..., lags]                    # sum_{t>=lag} a_i(t)
        qa = cq[..., n:n + 1] - cq[..., lags]
        sb = cs[..., n - lags]                                   # sum_{t<n-lag} a_j(t)
        qb = cq[..., n - lags]
        pad = np.concatenate([np.zeros(a.shape[:-1] + (max_lag,)), a], -1)
        win = np.lib.stride_tricks.sliding_window_view(pad, n, axis=-1)[..., :max_lag, :]
        shifted = win[..., ::-1, :]                              # [l-1, t] = a_j(t - l)
        cross = a @ shifted.reshape(len(a), C * max_lag, n).swapaxes(-1, -2)
        cross = cross.reshape(len(a), C, C, max_lag)             # [i, j, l]
        cov = cross - sa[:, :, None, :] * sb[:, None, :, :] / m
        va = qa - sa * sa / m
        vb = qb - sb * sb / m
        den = np.sqrt(np.clip(va[:, :, None, :] * vb[:, None, :, :], 0.0, None))
        out[s:s + chunk] = np.where(den > 1e-12, cov / np.where(den > 1e-12, den, 1.0), 0.0)
    return out


def pair_features(look: np.ndarray, resid: np.ndarray, max_lag: int) -> np.ndarray:
    """f_ij from the current lookback only (look (N, C, L)) and the channels' TSFM residuals
    over the last backtest windows (resid (N, C, R)): (N, C, C, 5) =
    [corr(x_i, x_j), corr(dx_i, dx_j), max_lag corr(dx_i(t), dx_j(t - lag)), its argmax / 24
    (j leading i), corr(resid_i, resid_j)].
    The lagged feature is the signed maximum, as the spec writes it (not max |corr|): a
    negative lead-lag (ANTI) is invisible to it. Kept as written; see FIDELITY."""
    dx = np.diff(look, axis=-1)
    lc = lagged_corr_matrix(dx, max_lag)
    arg = lc.argmax(axis=-1)
    best = np.take_along_axis(lc, arg[..., None], axis=-1)[..., 0]
    return np.stack([corr_matrix(look), corr_matrix(dx), best, (arg + 1.0) / max_lag,
                     corr_matrix(resid)], axis=-1)


def _offdiag_mean(M):
    C = M.shape[-1]
    return float(M[~np.eye(C, dtype=bool)].mean()) if C > 1 else 0.0


def descriptor(context: np.ndarray, resid: np.ndarray, max_lag: int,
               channel_scale: float) -> np.ndarray:
    """delta in R^7 from a dataset's first 20% (context (C, T0)) and its TSFM backtest
    residuals there (resid (C, R), non-overlapping one-horizon-ahead windows):
    mean |corr| of levels, of first differences and of the residuals (over pairs i != j);
    mean over ordered pairs of max_lag |lagged corr| of differences; mean spectral entropy;
    mean seasonal strength (share of the top periodogram peak); C / channel_scale (20)."""
    C = context.shape[0]
    a, b = context[:, None, :], context[None, :, :]
    d = np.diff(context, axis=-1)
    lev = np.abs(corr(a, b))
    dif = np.abs(corr(d[:, None, :], d[None, :, :]))
    res = np.abs(corr(resid[:, None, :], resid[None, :, :]))
    lag = np.abs(lagged_corr(d[:, None, :], d[None, :, :], max_lag)).max(axis=-1)
    return np.array([_offdiag_mean(lev), _offdiag_mean(dif), _offdiag_mean(res),
                     _offdiag_mean(lag), float(spectral_entropy(context).mean()),
                     float(seasonal_strength(context).mean()), C / channel_scale])
