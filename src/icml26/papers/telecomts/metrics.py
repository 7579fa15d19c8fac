"""Detection and RCA metrics (numpy; checked against scikit-learn in the tests).

Non-finite scores or probabilities (a diverged model) give NaN metrics: a failed run.
"""

from __future__ import annotations

import numpy as np

from icml26.stats import rankdata


def auroc(y: np.ndarray, score: np.ndarray) -> float:
    """Area under the ROC curve (Mann-Whitney, ties counted one half)."""
    y, score = np.asarray(y, bool), np.asarray(score, float)
    if not np.isfinite(score).all():
        return float("nan")
    n1, n0 = int(y.sum()), int((~y).sum())
    if n1 == 0 or n0 == 0:
        return float("nan")
    r = rankdata(score)
    return float((r[y].sum() - n1 * (n1 + 1) / 2.0) / (n1 * n0))


def f1_binary(y: np.ndarray, pred: np.ndarray, weight=None) -> float:
    """F1 of the positive class; ``weight`` per sample (prevalence-adjusted F1)."""
    y, pred = np.asarray(y, bool), np.asarray(pred, bool)
    w = np.ones(y.size) if weight is None else np.asarray(weight, float)
    tp, fp, fn = (w * (y & pred)).sum(), (w * (~y & pred)).sum(), (w * (y & ~pred)).sum()
    den = 2 * tp + fp + fn
    return float(2 * tp / den) if den > 0 else 0.0


def prevalence_weights(y: np.ndarray, target: float) -> np.ndarray:
    """Sample weights that make the positive share ``target`` (official _prevalence_weights)."""
    y = np.asarray(y, bool)
    p = y.mean()
    return np.where(y, target / p, (1.0 - target) / (1.0 - p))


def detection(y: np.ndarray, proba: np.ndarray, prevalence: float) -> dict:
    """AUROC, F1 at threshold 0.5, accuracy and the official prevalence-adjusted F1."""
    proba = np.asarray(proba, float)
    if not np.isfinite(proba).all():
        return {k: float("nan") for k in ("det_auroc", "det_f1", "det_acc", "det_f1_prev")}
    pred = proba >= 0.5
    y = np.asarray(y, bool)
    return {"det_auroc": auroc(y, proba), "det_f1": f1_binary(y, pred),
            "det_acc": float((pred == y).mean()),
            "det_f1_prev": f1_binary(y, pred, prevalence_weights(y, prevalence))}


def confusion(y: np.ndarray, pred: np.ndarray, k: int) -> np.ndarray:
    """Counts (k, k), rows = true class, columns = predicted (official convention)."""
    cm = np.zeros((k, k), dtype=np.int64)
    np.add.at(cm, (np.asarray(y, int), np.asarray(pred, int)), 1)
    return cm


def per_class_f1(cm: np.ndarray) -> np.ndarray:
    tp = np.diag(cm).astype(float)
    den = cm.sum(axis=0) + cm.sum(axis=1)
    return np.where(den > 0, 2 * tp / np.where(den > 0, den, 1), 0.0)


def macro_f1(y: np.ndarray, pred: np.ndarray, k: int) -> float:
    """Mean F1 over the classes present in y (sklearn's macro F1 with labels = those)."""
    y = np.asarray(y, int)
    if not y.size:
        return float("nan")
    present = np.unique(y)
    return float(per_class_f1(confusion(y, pred, k))[present].mean())


def mild_severe_confusion(y: np.ndarray, pred: np.ndarray, mild: int, severe: int) -> float:
    """(# mild predicted severe + # severe predicted mild) / (# mild + # severe)."""
    y, pred = np.asarray(y, int), np.asarray(pred, int)
    pair = (y == mild) | (y == severe)
    if not pair.any():
        return float("nan")
    swapped = ((y == mild) & (pred == severe)) | ((y == severe) & (pred == mild))
    return float(swapped.sum() / pair.sum())


def rca(y: np.ndarray, proba: np.ndarray, full: np.ndarray, k: int, mild: int,
        severe: int) -> dict:
    """Macro-F1, accuracy, per-type F1, confusion matrix (cm_i_j), macro-F1 on full-window and
    partial-window anomalies, and the mild/severe confusion rate."""
    proba = np.asarray(proba, float)
    out = {}
    if not np.isfinite(proba).all():
        nan = float("nan")
        out.update(rca_macro_f1=nan, rca_acc=nan, rca_f1_full=nan, rca_f1_partial=nan,
                   rca_mild_severe_conf=nan)
        out.update({f"rca_f1_type{c}": nan for c in range(k)})
        out.update({f"cm_{i}_{j}": nan for i in range(k) for j in range(k)})
        return out
    y, full = np.asarray(y, int), np.asarray(full, bool)
    pred = proba.argmax(axis=1)
    cm = confusion(y, pred, k)
    out["rca_macro_f1"] = macro_f1(y, pred, k)
    out["rca_acc"] = float((pred == y).mean())
    out["rca_f1_full"] = macro_f1(y[full], pred[full], k)
    out["rca_f1_partial"] = macro_f1(y[~full], pred[~full], k)
    out["rca_mild_severe_conf"] = mild_severe_confusion(y, pred, mild, severe)
    out.update({f"rca_f1_type{c}": float(v) for c, v in enumerate(per_class_f1(cm))})
    out.update({f"cm_{i}_{j}": float(cm[i, j]) for i in range(k) for j in range(k)})
    return out


# ---------------------------------------------------------------------------------------------
# temporal localisation on long traces (full profile)
def segments(label: np.ndarray) -> list[tuple[int, int]]:
    """Contiguous runs of True in a 1-D label as [start, stop) pairs."""
    d = np.diff(np.r_[0, np.asarray(label, bool).astype(np.int8), 0])
    return list(zip(np.flatnonzero(d == 1).tolist(), np.flatnonzero(d == -1).tolist(),
                    strict=True))


def point_adjust(label: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """Point adjustment (Xu et al., 2018; the common but inflating protocol): within every
    contiguous true anomaly segment, if any step is predicted anomalous, all of its steps
    count as predicted. Rows of 2-D inputs are separate traces (segments never cross them)."""
    label, pred = np.atleast_2d(np.asarray(label, bool)), np.atleast_2d(np.asarray(pred, bool))
    out = pred.copy()
    for r in range(label.shape[0]):
        for a, b in segments(label[r]):
            if pred[r, a:b].any():
                out[r, a:b] = True
    return out


def localisation(label: np.ndarray, score: np.ndarray, threshold: float) -> dict:
    """Per-step metrics over all steps of all traces (micro, as the official localisation F1):
    F1, precision and recall of score >= threshold WITHOUT point adjustment (the official
    metric), the point-adjusted F1 (extra, labelled as such) and the threshold-free per-step
    AUROC. A non-finite score is a failed run (NaN metrics)."""
    label, score = np.atleast_2d(np.asarray(label, bool)), np.atleast_2d(np.asarray(score, float))
    keys = ("loc_f1", "loc_precision", "loc_recall", "loc_f1_pa", "loc_auroc")
    if not np.isfinite(score).all():
        return {k: float("nan") for k in keys}
    pred = score >= threshold
    tp, fp, fn = (label & pred).sum(), (~label & pred).sum(), (label & ~pred).sum()
    return {"loc_f1": f1_binary(label.ravel(), pred.ravel()),
            "loc_precision": float(tp / (tp + fp)) if tp + fp else 0.0,
            "loc_recall": float(tp / (tp + fn)) if tp + fn else 0.0,
            "loc_f1_pa": f1_binary(label.ravel(), point_adjust(label, pred).ravel()),
            "loc_auroc": auroc(label.ravel(), score.ravel())}
