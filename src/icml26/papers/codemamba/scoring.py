"""IRSTD metrics over a test set and the classical (untrained) detector (numpy + scipy).

``detect_stack`` is ``icml26.vision.metrics.detect`` for a stack with at most one target per
image, vectorised (one ``ndimage.label`` call for the whole stack instead of one per image): the
threshold sweeps of Fig. 1 need ~10 detections per run. It is tested equal to the shared one.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from icml26.vision.metrics import iou, iou_per_image

# 8-connectivity inside each image, none across the stack axis
STACK_EIGHT = np.zeros((3, 3, 3), dtype=bool)
STACK_EIGHT[1] = True


def detect_stack(pred, centres, present, radius: float = 3.0) -> dict:
    """Pd / Fa of a stack of predicted masks (N, H, W) with at most one target per image.

    centres (N, 2) (y, x) target centres, present (N,) bool. A target is detected when a
    predicted 8-connected component has its centroid within ``radius`` px (the nearest one is
    matched); Fa = pixels of unmatched components / all pixels. Same rule as
    ``icml26.vision.metrics.detect``. Returns pd, fa, hits (N,) (False where absent)."""
    pred = np.asarray(pred, dtype=bool)
    labels, n = ndimage.label(pred, structure=STACK_EIGHT)
    hits = np.zeros(len(pred), dtype=bool)
    if n == 0:
        return {"pd": 0.0 if present.any() else np.nan, "fa": 0.0, "hits": hits}
    flat = labels.ravel()
    on = flat > 0
    idx = np.nonzero(on)[0]
    lab = flat[on] - 1
    H, W = pred.shape[1:]
    img, rem = np.divmod(idx, H * W)
    yy, xx = np.divmod(rem, W)
    size = np.bincount(lab, minlength=n).astype(float)
    cy = np.bincount(lab, yy, minlength=n) / size
    cx = np.bincount(lab, xx, minlength=n) / size
    comp_img = np.zeros(n, dtype=np.int64)
    comp_img[lab] = img
    c = np.asarray(centres, dtype=float)[comp_img]
    d = np.hypot(cy - c[:, 0], cx - c[:, 1])
    d = np.where(present[comp_img], d, np.inf)
    # nearest component of each image, matched when within the radius
    order = np.lexsort((d, comp_img))
    first = order[np.r_[True, comp_img[order][1:] != comp_img[order][:-1]]]
    matched = first[d[first] <= radius]
    hits[comp_img[matched]] = True
    used = np.zeros(n, dtype=bool)
    used[matched] = True
    return {"pd": float(hits[present].mean()) if present.any() else np.nan,
            "fa": float(size[~used].sum() / pred.size), "hits": hits}


def spot_hit_rate(pred, spots, radius: float = 3.0) -> float:
    """Fraction of static point-clutter spots (N, k, 2; NaN padded) that have a predicted
    component centroid within ``radius`` px (false alarms a single frame cannot avoid)."""
    pred = np.asarray(pred, dtype=bool)
    labels, n = ndimage.label(pred, structure=STACK_EIGHT)
    valid = np.isfinite(spots[..., 0])
    if not valid.any():
        return np.nan
    if n == 0:
        return 0.0
    cents = np.array(ndimage.center_of_mass(pred, labels, range(1, n + 1))).reshape(-1, 3)
    found = np.zeros(spots.shape[:2], dtype=bool)
    img = cents[:, 0].round().astype(int)
    for i in np.unique(img):
        c = cents[img == i, 1:]
        s = spots[i]
        d = np.hypot(s[:, None, 0] - c[None, :, 0], s[:, None, 1] - c[None, :, 1])
        found[i] = (d <= radius).any(1)
    return float(found[valid].mean())


def scores(prob, data, p) -> dict:
    """Every metric of one run at the spec's threshold: IoU, nIoU, Pd, Fa, Pd_point, clutter hit
    rate and IoU per (drift x slow) regime cell."""
    pred = prob >= float(p["threshold"])
    gt, present = data["mask"], data["present"]
    det = detect_stack(pred, data["centre"], present, float(p["match_radius"]))
    point = present & (data["sigma_t"] <= float(p["point_sigma"]))
    out = {"iou": iou(pred, gt),
           "niou": float(np.nanmean(iou_per_image(pred[present], gt[present]))),
           "pd": det["pd"], "fa": det["fa"],
           "pd_point": float(det["hits"][point].mean()) if point.any() else np.nan,
           "clutter_hit": spot_hit_rate(pred, data["spots"], float(p["match_radius"]))}
    for name, cell in regime_cells(data).items():
        out[f"iou_{name}"] = iou(pred[cell], gt[cell]) if cell.any() else np.nan
    return out


def regime_cells(data) -> dict:
    """The four (drift x slow-target) cells as boolean masks over the test sequences."""
    d, s = data["drift"].astype(bool), data["slow"].astype(bool)
    return {"nodrift_fast": ~d & ~s, "nodrift_slow": ~d & s, "drift_fast": d & ~s,
            "drift_slow": d & s}


def sweep(prob, data, thresholds, radius) -> tuple[np.ndarray, np.ndarray]:
    """Pd and Fa at each threshold of the sweep (Fig. 1)."""
    res = [detect_stack(prob >= t, data["centre"], data["present"], radius) for t in thresholds]
    return np.array([r["pd"] for r in res]), np.array([r["fa"] for r in res])


# ------------------------------------------------------------------------------------------
# classical, untrained baseline
# ------------------------------------------------------------------------------------------
def classical_score(frames, tophat: int = 5) -> np.ndarray:
    """white_tophat(F_T, tophat x tophat) * |F_T - median(F_1..F_(T-1))| per image."""
    last = frames[:, -1].astype(np.float64)
    th = ndimage.white_tophat(last, size=(1, tophat, tophat))
    return th * np.abs(last - np.median(frames[:, :-1], axis=1))


def classical_threshold(score_val, val, p) -> tuple[float, float, np.ndarray]:
    """Rule fixed in config: the smallest threshold on a grid of upper quantiles of the
    validation scores (levels 1 - 10^-k, k on ``classical_grid``) whose validation Fa is
    <= target_fa. If even the largest does not reach it, the grid is extended by one decade at a
    time (at most twice, as every selection grid here). Returns (threshold, its quantile level,
    the final grid of levels)."""
    lo, hi, n = p["classical_grid"]
    ks = np.linspace(lo, hi, int(n))
    step = ks[1] - ks[0]
    for _ in range(3):
        levels = 1.0 - 10.0 ** (-ks)
        ths = np.quantile(score_val, levels)
        fas = np.array([detect_stack(score_val >= t, val["centre"], val["present"],
                                     float(p["match_radius"]))["fa"] for t in ths])
        ok = np.nonzero(fas <= float(p["target_fa"]))[0]
        if len(ok) and ok[0] > 0:
            return float(ths[ok[0]]), float(levels[ok[0]]), levels
        if len(ok) and ok[0] == 0:            # edge at the low end: extend downwards
            ks = np.r_[ks[0] - step, ks]
        else:                                  # no threshold low enough in Fa: extend upwards
            ks = np.r_[ks, ks[-1] + step]
    i = ok[0] if len(ok) else len(ths) - 1
    return float(ths[i]), float(levels[i]), levels
