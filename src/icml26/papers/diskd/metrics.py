"""Test metrics on an uncensored test set (no IPCW needed).

time in 1..T for an event, T + 1 for no event by T; status 0 (no event) or the cause.
"""

from __future__ import annotations

import numpy as np


def _count_below(ref_sorted: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Per score s: #(ref < s) + 0.5 #(ref == s)."""
    lo = np.searchsorted(ref_sorted, s, side="left")
    hi = np.searchsorted(ref_sorted, s, side="right")
    return lo + 0.5 * (hi - lo)


def cindex_cr(cif_k: np.ndarray, time: np.ndarray, status: np.ndarray, cause: int) -> float:
    """Wolbers' competing-risks concordance for ``cause``, truncated at T, over ALL comparable
    pairs (exact; the spec samples 200000 of them). A pair (i, j) is comparable if i has a
    cause-k event at t_i and j has T_j > t_i or any other-cause event; it is concordant if
    CIF_k(t_i|x_i) > CIF_k(t_i|x_j); ties count 0.5. cif_k: (n, T) = CIF_k(t|x), t = 1..T.
    """
    num, den = 0.0, 0.0
    other = (status > 0) & (status != cause)
    for t in np.unique(time[status == cause]):
        cases = (status == cause) & (time == t)
        comp = (time > t) | other
        if not comp.any():
            continue
        ref = np.sort(cif_k[comp, t - 1])
        num += _count_below(ref, cif_k[cases, t - 1]).sum()
        den += cases.sum() * ref.size
    return num / den if den else np.nan


def auc(score: np.ndarray, label: np.ndarray) -> float:
    """AUROC = P(score_pos > score_neg) + 0.5 P(tie)."""
    pos, neg = score[label], np.sort(score[~label])
    if pos.size == 0 or neg.size == 0:
        return np.nan
    return float(_count_below(neg, pos).mean() / neg.size)


def integrated_brier(cif_k: np.ndarray, time, status, cause: int) -> float:
    """Mean over t = 1..T of mean_i (CIF_k(t|x_i) - 1[cause-k event by t])^2."""
    T = cif_k.shape[1]
    event_by = (status[:, None] == cause) & (time[:, None] <= np.arange(1, T + 1))
    return float(((cif_k - event_by) ** 2).mean())


def calibration_error(cif_k: np.ndarray, true_cif_k: np.ndarray) -> float:
    """Mean over subjects and t of |CIF_k(t|x) - true CIF_k(t|x)|."""
    return float(np.abs(cif_k - true_cif_k).mean())


def decile_curve(pred: np.ndarray, true: np.ndarray, bins: int = 10):
    """Mean predicted and mean true CIF within deciles of the prediction."""
    order = np.argsort(pred, kind="stable")
    parts = np.array_split(order, bins)
    return (np.array([pred[p].mean() for p in parts]), np.array([true[p].mean() for p in parts]))
