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
    """TPR at a fixed FPR as the authors compute it (``tpr_at_fixed_fpr`` in
    scripts/compute_roc_and_f1score_from_metrics.py): the threshold is the (1 - fpr)
    percentile of the human scores with linear interpolation, and a machine text counts as
    detected when its score is >= it."""
    h, m = np.asarray(human, float), np.asarray(machine, float)
    t = np.percentile(h, 100.0 * (1.0 - fpr), method="linear")
    return float((m >= t).mean())
