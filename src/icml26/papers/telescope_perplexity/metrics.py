"""Detection metrics (numpy only): AUROC and TPR at a fixed FPR, machine text = positive."""

from __future__ import annotations

import numpy as np


def average_ranks(x: np.ndarray) -> np.ndarray:
    """1-based ranks, tied values sharing their average rank (scipy's rankdata 'average';
    scipy.stats costs ~2 CPU-s to import)."""
    order = np.argsort(x, kind="mergesort")
    xs = x[order]
    first = np.r_[True, xs[1:] != xs[:-1]]
    group = np.cumsum(first) - 1
    starts = np.flatnonzero(first)
    ends = np.r_[starts[1:], len(xs)]
    avg = (starts + ends + 1) / 2.0           # mean of ranks starts+1 .. ends
    ranks = np.empty(len(x))
    ranks[order] = avg[group]
    return ranks


def auroc(human: np.ndarray, machine: np.ndarray) -> float:
    """P(score_machine > score_human) + 0.5 P(tie): the Mann-Whitney form of the ROC area."""
    h, m = np.asarray(human, float), np.asarray(machine, float)
    ranks = average_ranks(np.concatenate([m, h]))       # average ranks handle ties
    u = ranks[: len(m)].sum() - len(m) * (len(m) + 1) / 2
    return float(u / (len(m) * len(h)))


def tpr_at_fpr(human: np.ndarray, machine: np.ndarray, fpr: float = 0.05) -> float:
    """Largest TPR of a threshold rule ``score >= t -> machine`` whose FPR is <= ``fpr``."""
    h, m = np.sort(np.asarray(human, float))[::-1], np.asarray(machine, float)
    k = int(np.floor(fpr * len(h) + 1e-9))         # false positives allowed
    if k >= len(h):
        return 1.0
    # threshold just above the (k+1)-th highest human score: at most k humans above it
    t = h[k]
    return float((m > t).mean())
