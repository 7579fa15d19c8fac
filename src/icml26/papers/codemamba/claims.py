"""The spec's five claims (thresholds exactly as written) and two checks of its premises.

How each one is checked (decided before any result was seen). Every learned method runs the
same seeds on the same data, so comparisons are paired per seed (seed s of one method against
seed s of the other) and decided by check_mean, the 95% t-interval of the mean paired
difference over seeds ("mean over seeds" in the spec):
1. Pd(CodeMamba-lite) - Pd(SF-CNN) >= 0.10, and Fa(CodeMamba-lite) - Fa(SF-CNN) <= 0.
2. ">= max(IoU(implicit-only), IoU(explicit-only)) + 0.02" holds exactly when both
   IoU(CM) - IoU(implicit-only) >= 0.02 and IoU(CM) - IoU(explicit-only) >= 0.02: two parts
   (a per-seed max of two noisy IoUs would be biased upwards).
3. IoU(CM) - IoU(mean-fusion) >= 0.01.
4. Mean v1 at target pixels, drift minus no-drift > 0; mean v2, slow minus fast targets > 0
   (CodeMamba-lite's own variances, per seed).
5. Pd_point(CM) - Pd_point(MF-CNN) >= 0.
Premises (sanity): the data are built so that each stream fails in its regime (implicit-only
IoU lower under drift, explicit-only IoU lower for slow targets) and static point clutter
defeats single-frame detection (SF-CNN hits more static spots than CodeMamba-lite).
A failed (NaN) run of either method is a failed pair: it is counted and cannot help.
"""

from __future__ import annotations

import numpy as np

from icml26.claims import Claim, check_mean

CM, SF, MF, IMP, EXP, MEAN = ("codemamba", "sf-cnn", "mf-cnn", "implicit-only", "explicit-only",
                              "mean-fusion")


def col(metrics, method, name):
    part = metrics[metrics["method"] == method]
    if not len(part) or name not in part:
        return part.set_index("seed")[[]].assign(v=np.nan)["v"]
    return part.set_index("seed")[name].astype(float).sort_index()


def paired(metrics, a, b, name):
    """Per-seed difference a - b (seeds both ran); NaN where either failed."""
    x, y = col(metrics, a, name), col(metrics, b, name)
    seeds = x.index.intersection(y.index)
    return x.loc[seeds] - y.loc[seeds]


def _mean(metrics, method, name) -> str:
    v = col(metrics, method, name)
    return f"{np.nanmean(v):.3f}" if np.isfinite(v).any() else "n/a"


def collapse_note(cm) -> str:
    """Seeds whose fusion collapsed onto one stream: that stream's mean variance at target
    pixels, over all test sequences, within 5x of the 1e-3 floor of v = softplus(s) + 1e-3."""
    if not len(cm) or "v1_drift" not in cm:
        return ""
    v1 = (cm["v1_drift"] + cm["v1_nodrift"]) / 2
    v2 = (cm["v2_slow"] + cm["v2_fast"]) / 2
    on1 = [str(s) for s in cm.index[v1 <= 5e-3]]
    on2 = [str(s) for s in cm.index[v2 <= 5e-3]]
    return (f" The inverse-variance fusion collapsed onto the implicit stream (v1 at its floor) "
            f"in seeds [{', '.join(on1)}] and onto the explicit stream (v2 at its floor) in seeds "
            f"[{', '.join(on2)}] of {len(cm)}; a collapsed stream's variance carries no "
            f"regime information.")


def convergence_note(metrics) -> str:
    """How much the validation IoU still rose between the last two evaluations."""
    if "val_iou_gain_last" not in metrics:
        return ""
    g = metrics[metrics["method"].isin([CM, MEAN, IMP, EXP, SF, MF])]
    g = g.groupby("method")["val_iou_gain_last"].mean()
    if not np.isfinite(g).any():
        return ""
    return (" Validation IoU gain over the last evaluation interval (mean over seeds; > 0 means "
            "training had not converged): " + ", ".join(f"{m} {v:+.3f}" for m, v in g.items())
            + ".")


def check(cfg: dict, metrics, curves) -> list[Claim]:
    n = int(metrics["seed"].nunique()) if len(metrics) else 0
    out = []

    c = Claim("C1-multiframe-sensitivity",
              "Multi-frame sensitivity: CodeMamba-lite Pd >= SF-CNN Pd + 0.10, with Fa no higher "
              "than SF-CNN's.", ">= / <=", {"pd_gain": 0.10, "fa_diff": 0.0}, n_seeds=n,
              note="check_mean of the per-seed paired differences (CM - SF).")
    c.add("pd_cm-sf>=0.10", check_mean(paired(metrics, CM, SF, "pd"), ">=", 0.10))
    c.add("fa_cm-sf<=0", check_mean(paired(metrics, CM, SF, "fa"), "<=", 0.0))
    c.note += (f" Means: Pd CM {_mean(metrics, CM, 'pd')}, SF {_mean(metrics, SF, 'pd')}; "
               f"Fa (x1e-4) CM {1e4 * np.nanmean(col(metrics, CM, 'fa')):.2f}, SF "
               f"{1e4 * np.nanmean(col(metrics, SF, 'fa')):.2f}.")
    out.append(c)

    c = Claim("C2-complementary-streams",
              "Complementary streams: IoU(CodeMamba-lite) >= max(IoU(implicit-only), "
              "IoU(explicit-only)) + 0.02.", ">=", 0.02, n_seeds=n,
              note="Two parts, each check_mean of the per-seed paired IoU difference.")
    c.add("iou_cm-implicit>=0.02", check_mean(paired(metrics, CM, IMP, "iou"), ">=", 0.02))
    c.add("iou_cm-explicit>=0.02", check_mean(paired(metrics, CM, EXP, "iou"), ">=", 0.02))
    c.note += (f" Mean IoU: CM {_mean(metrics, CM, 'iou')}, implicit-only "
               f"{_mean(metrics, IMP, 'iou')}, explicit-only {_mean(metrics, EXP, 'iou')}.")
    out.append(c)

    c = Claim("C3-uncertainty-fusion",
              "Uncertainty-weighted fusion helps: IoU(CodeMamba-lite) >= IoU(mean-fusion) + 0.01 "
              "(mean over seeds).", ">=", 0.01, n_seeds=n,
              note="check_mean of the per-seed paired IoU difference.")
    c.add("iou_cm-meanfusion>=0.01", check_mean(paired(metrics, CM, MEAN, "iou"), ">=", 0.01))
    c.note += (f" Mean IoU: CM {_mean(metrics, CM, 'iou')}, mean-fusion "
               f"{_mean(metrics, MEAN, 'iou')}.")
    c.note += collapse_note(metrics[metrics["method"] == CM].set_index("seed").sort_index())
    c.note += convergence_note(metrics)
    out.append(c)

    c = Claim("C4-uncertainty-tracks-reliability",
              "At target pixels, CodeMamba-lite's mean v1 (implicit) is larger in the drift "
              "regime than without drift, and mean v2 (explicit) is larger for slow than for "
              "fast targets.", ">", 0.0, n_seeds=n,
              note="check_mean of the per-seed differences of regime means.")
    cm = metrics[metrics["method"] == CM].set_index("seed").sort_index()
    for label, a, b in (("v1_drift-nodrift>0", "v1_drift", "v1_nodrift"),
                        ("v2_slow-fast>0", "v2_slow", "v2_fast")):
        d = (cm[a] - cm[b]).astype(float) if a in cm else cm.assign(v=np.nan)["v"]
        c.add(label, check_mean(d, ">", 0.0))
    for k in ("v1_drift", "v1_nodrift", "v2_slow", "v2_fast"):
        if k in cm:
            c.note += f" {k} {np.nanmean(cm[k]):.3g};"
    c.note += collapse_note(cm)
    out.append(c)

    c = Claim("C5-point-targets",
              "Point-like targets (sigma_t <= 0.6 px): Pd_point(CodeMamba-lite) >= "
              "Pd_point(MF-CNN).", ">=", 0.0, n_seeds=n,
              note="check_mean of the per-seed paired difference.")
    c.add("pd_point_cm-mf>=0", check_mean(paired(metrics, CM, MF, "pd_point"), ">=", 0.0))
    c.note += (f" Means: CM {_mean(metrics, CM, 'pd_point')}, MF-CNN "
               f"{_mean(metrics, MF, 'pd_point')}.")
    out.append(c)

    c = Claim("P1-stream-failure-regimes",
              "Premise: implicit-only IoU is lower under camera drift than without, and "
              "explicit-only IoU is lower for slow than for fast targets.", ">", 0.0,
              category="sanity", n_seeds=n,
              note="check_mean of per-seed differences of regime IoUs (pooled over the other "
                   "regime's two cells by averaging them).")
    for label, m, a, b in (("implicit_nodrift-drift>0", IMP, ("nodrift_fast", "nodrift_slow"),
                            ("drift_fast", "drift_slow")),
                           ("explicit_fast-slow>0", EXP, ("nodrift_fast", "drift_fast"),
                            ("nodrift_slow", "drift_slow"))):
        good = sum(col(metrics, m, f"iou_{k}") for k in a) / 2
        bad = sum(col(metrics, m, f"iou_{k}") for k in b) / 2
        c.add(label, check_mean(good - bad, ">", 0.0))
    out.append(c)

    c = Claim("P2-static-clutter",
              "Premise: static point clutter defeats single-frame detection: SF-CNN flags a "
              "larger fraction of the static clutter spots than CodeMamba-lite.", ">", 0.0,
              category="sanity", n_seeds=n,
              note="check_mean of the per-seed paired difference of spot hit rates (a spot is "
                   "hit when a predicted component centroid lies within the match radius).")
    c.add("clutter_hit_sf-cm>0", check_mean(paired(metrics, SF, CM, "clutter_hit"), ">", 0.0))
    c.note += (f" Means: SF-CNN {_mean(metrics, SF, 'clutter_hit')}, CM "
               f"{_mean(metrics, CM, 'clutter_hit')}, MF-CNN {_mean(metrics, MF, 'clutter_hit')}.")
    out.append(c)

    lr = col(metrics, CM, "lr")
    if len(lr) and len(metrics):
        pilot = [k for k in metrics.columns if k.startswith("pilot_val_iou_lr")]
        row = metrics.iloc[0]
        grid = ", ".join(f"{k[len('pilot_val_iou_lr'):]}: {row[k]:.3f}" for k in pilot)
        for cl in out:
            cl.note += (f" Every learned method trained with lr {lr.iloc[0]:.4g}, chosen by the "
                        f"pilot rule on validation (grid and validation IoU of the pilot: "
                        f"{grid}).")
            break
    return out
