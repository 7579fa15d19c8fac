"""Detection metrics (numpy only): AUROC and TPR at a fixed FPR, machine text = positive."""

from __future__ import annotations

import numpy as np

from icml26.stats import rankdata


def auroc(human: np.ndarray, machine: np.ndarray) -> float:
    """P(score_machine > score_human) + 0.5 P(tie): the Mann-Whitney form of the ROC area."""
    h, m = np.asarray(human, float), np.asarray(machine, float)
    ranks = rankdata(np.concatenate([m, h]))       # average ranks handle ties
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
