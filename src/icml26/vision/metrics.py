"""Metrics of binary maps and small-target detection (numpy + scipy.ndimage)."""
from __future__ import annotations

import numpy as np
from scipy import ndimage


def iou(pred, gt) -> float:
    """Dataset-level IoU: total intersection over total union of all maps (1 when both empty)."""
    pred, gt = np.asarray(pred, dtype=bool), np.asarray(gt, dtype=bool)
    union = np.logical_or(pred, gt).sum()
    return float(np.logical_and(pred, gt).sum() / union) if union else 1.0


def iou_per_image(pred, gt) -> np.ndarray:
    """IoU of every map of a stack (N, H, W); NaN where both are empty."""
    pred, gt = np.asarray(pred, dtype=bool), np.asarray(gt, dtype=bool)
    inter = np.logical_and(pred, gt).sum(axis=(-2, -1))
    union = np.logical_or(pred, gt).sum(axis=(-2, -1))
    return np.where(union > 0, inter / np.maximum(union, 1), np.nan)


def f1_binary(pred, truth) -> float:
    """F1 of the positive class (0 when there are no positives on either side)."""
    pred, truth = np.asarray(pred, dtype=bool), np.asarray(truth, dtype=bool)
    tp = np.sum(pred & truth)
    denom = pred.sum() + truth.sum()
    return float(2 * tp / denom) if denom else 0.0


def cohen_kappa(pred, truth) -> float:
    """Cohen's kappa of two label vectors (agreement beyond chance)."""
    pred, truth = np.asarray(pred).ravel(), np.asarray(truth).ravel()
    labels = np.union1d(pred, truth)
    po = np.mean(pred == truth)
    pe = sum(np.mean(pred == c) * np.mean(truth == c) for c in labels)
    return float((po - pe) / (1 - pe)) if pe < 1 else 1.0


def count_components(mask: np.ndarray, connectivity: int = 8):
    """Connected components of a mask of any dimension: (labels, n). connectivity 8 joins every
    touching neighbour (8 in 2-D, 26 in 3-D); 4 joins faces only (4 in 2-D, 6 in 3-D)."""
    if connectivity not in (4, 8):
        raise ValueError(f"connectivity must be 4 or 8, got {connectivity}")
    mask = np.asarray(mask, dtype=bool)
    structure = ndimage.generate_binary_structure(mask.ndim, mask.ndim if connectivity == 8 else 1)
    return ndimage.label(mask, structure=structure)


def components(mask: np.ndarray, connectivity: int = 8):
    """Connected components of a 2-D mask: (labels, n, centroids (n, 2) in (y, x))."""
    labels, n = count_components(mask, connectivity)
    centroids = np.array(ndimage.center_of_mass(np.ones_like(labels), labels, range(1, n + 1)))
    return labels, n, centroids.reshape(-1, 2)


def detect(pred_masks, target_centres, radius: float = 3.0) -> dict:
    """Target-level detection over a stack of predicted masks (N, H, W).

    target_centres: per image an (k, 2) array of (y, x) target centres (k may be 0). A target is
    detected when a predicted component (8-connected) has its centroid within `radius` px; each
    component matches at most one target (nearest first). Fa counts the pixels of unmatched
    components over all pixels. Returns {"pd", "fa", "n_targets", "detected", "false_pixels",
    "hits"} with hits the per-target detection flags in order."""
    pred_masks = np.asarray(pred_masks, dtype=bool)
    hits, false_pixels = [], 0
    for mask, centres in zip(pred_masks, target_centres, strict=True):
        labels, n, cents = components(mask)
        centres = np.asarray(centres, dtype=float).reshape(-1, 2)
        used = np.zeros(n, dtype=bool)
        for c in centres:
            d = np.linalg.norm(cents - c, axis=1) if n else np.zeros(0)
            d[used] = np.inf
            j = int(np.argmin(d)) if n else -1
            ok = n > 0 and d[j] <= radius
            if ok:
                used[j] = True
            hits.append(bool(ok))
        sizes = np.bincount(labels.ravel(), minlength=n + 1)[1:]
        false_pixels += int(sizes[~used].sum())
    hits = np.array(hits, dtype=bool)
    return {"pd": float(hits.mean()) if len(hits) else float("nan"),
            "fa": false_pixels / pred_masks.size, "n_targets": int(len(hits)),
            "detected": int(hits.sum()), "false_pixels": false_pixels, "hits": hits}
