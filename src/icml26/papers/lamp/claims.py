"""The spec's four claims (thresholds as written) and two sanity checks of our implementation.

How each one is checked (decided before any result was seen):
1. N = 10 interpolation: LAMP's IoU and parameter error are means over targets and seeds, so
   check_mean over the per-seed means (each seed's mean over its interpolation targets);
   "LAMP >= conditional decoder + 0.05" is the paired per-seed difference, check_mean >= 0.05.
2. Headline, at +50% and +100% with N = 50: the paired per-seed IoU differences LAMP - cond
   (>= 0.05) and LAMP - DNI (>= 0.03), and "LAMP's parameter error is the lowest of the three
   (mean over seeds)" as paired per-seed differences of the error, LAMP - cond < 0 and
   LAMP - DNI < 0; every part check_mean.
3. Alignment: the paired per-seed difference of interpolation IoU (N = 10),
   no-alignment - LAMP, check_mean <= -0.2.
4. Safety metric: per seed, Spearman rho(LM, 1 - IoU) and the AUROC of LM for IoU < 0.85 over
   all LAMP designs of that seed (every target set and N of the 2-D family); both "mean over
   seeds", so check_mean >= 0.5 and >= 0.75. A seed without failures (or without successes)
   has no AUROC: a failed value (NaN), counted and named, never a pass.
Sanity (ours): S1 the measurement of parameters from a grid field, applied to the analytic
SDF, recovers the target parameters (max error < 0.5%); S2 LAMP's alpha satisfies the affine
constraints exactly (max residual < 1e-8). Both are numbers without sampling variability
(check_value on the maximum over runs).
"""

from __future__ import annotations

import numpy as np

from icml26.claims import Claim, check_mean, check_value
from icml26.stats import spearman

from .mixing import auroc

LAMP, LOCAL, COND, DNI, NEAR, NOALIGN = ("lamp", "lamp-local", "cond-decoder", "dni", "nearest",
                                         "lamp-noalign")


def settings_2d(cfg) -> dict:
    """2-D settings: name -> N."""
    out = {}
    for name, s in cfg["settings"].items():
        s = s or {}
        if s.get("family", "profile2d") == "profile2d":
            out[name] = int(s["n_exemplars"])
    return out


def setting_with(cfg, n: int):
    for name, k in settings_2d(cfg).items():
        if k == n:
            return name
    return None


def col(metrics, method, setting, column):
    """Per-seed values of a metric (a Series indexed by seed; NaN where a seed is missing)."""
    part = metrics[(metrics["method"] == method) & (metrics["setting"] == setting)]
    if column not in part:
        return part.set_index("seed")["seed"].astype(float) * np.nan
    return part.set_index("seed")[column].astype(float).sort_index()


def paired(metrics, a, b, setting, column):
    x, y = col(metrics, a, setting, column), col(metrics, b, setting, column)
    seeds = x.index.union(y.index)
    return x.reindex(seeds) - y.reindex(seeds)


def design_table(cfg, curves, method=LAMP):
    """Per-design IoU and LM of a method over the 2-D settings (rows: seed, setting, target)."""
    import pandas as pd

    if curves is None or not len(curves):
        return pd.DataFrame(columns=["seed", "setting", "step", "design_iou", "design_lm"])
    part = curves[(curves["method"] == method) & curves["setting"].isin(settings_2d(cfg))
                  & curves["metric"].isin(["design_iou", "design_lm"])]
    wide = part.pivot_table(index=["seed", "setting", "step"], columns="metric",
                            values="value", aggfunc="first", dropna=False).reset_index()
    for c in ("design_iou", "design_lm"):
        if c not in wide:
            wide[c] = np.nan
    return wide


def safety_per_seed(cfg, curves, fail_iou: float):
    """Per seed: Spearman rho(LM, 1 - IoU), AUROC of LM for IoU < fail_iou, designs, failures."""
    import pandas as pd

    rows = {}
    for seed, part in design_table(cfg, curves).groupby("seed"):
        lm, iou = part["design_lm"].to_numpy(float), part["design_iou"].to_numpy(float)
        ok = np.isfinite(lm) & np.isfinite(iou)
        bad = not ok.all()
        rows[int(seed)] = {
            "spearman": np.nan if bad else spearman(lm, 1 - iou),
            "auroc": np.nan if bad else auroc(lm, iou < fail_iou),
            "n": int(len(lm)), "n_fail": int((iou < fail_iou).sum())}
    return pd.DataFrame.from_dict(rows, orient="index",
                                  columns=["spearman", "auroc", "n", "n_fail"])


def _mean(series) -> str:
    v = np.asarray(series, dtype=float)
    v = v[np.isfinite(v)]
    return f"{v.mean():.3f}" if len(v) else "n/a"


def check(cfg: dict, metrics, curves) -> list[Claim]:
    n_seeds = int(metrics["seed"].nunique()) if len(metrics) else 0
    fail_iou = float(cfg.get("params", {}).get("fail_iou", 0.85))
    s10, s50 = setting_with(cfg, 10), setting_with(cfg, 50)
    claims = []

    # 1. data-efficient controlled interpolation (N = 10) -----------------------------------
    c = Claim("C1-interpolation-N10",
              "With N = 10 exemplars, LAMP's interpolation IoU >= 0.90 and parameter error "
              "<= 5% (mean over targets and seeds), and LAMP >= conditional decoder (N = 10) "
              "+ 0.05 IoU.",
              ">= / <= / >=", {"iou": 0.90, "param_error_%": 5.0, "lamp-cond": 0.05},
              n_seeds=n_seeds,
              note="check_mean over seeds of each seed's mean over its interpolation targets; "
                   "the comparison is paired per seed.")
    if s10 is not None:
        c.add("lamp_iou>=0.90", check_mean(col(metrics, LAMP, s10, "iou_interp"), ">=", 0.90))
        c.add("lamp_param_error<=5%", check_mean(col(metrics, LAMP, s10, "perr_interp"),
                                                 "<=", 5.0))
        c.add("lamp-cond_iou>=0.05", check_mean(paired(metrics, LAMP, COND, s10, "iou_interp"),
                                                ">=", 0.05))
        ex = col(metrics, LAMP, s10, "exemplar_iou")
        cond = col(metrics, COND, s10, "iou_interp")
        c.note += (f" Premise (the overfit exemplars reproduce their own shapes): mean IoU of "
                   f"the N = 10 exemplar decoders against their analytic shapes "
                   f"{_mean(ex)}; a mixture cannot be expected to beat its exemplars' fit. "
                   f"Conditional decoder interpolation IoU {_mean(cond)}.")
    else:
        c.note += " No N = 10 setting at this scale."
    claims.append(c)

    # 2. safe extrapolation (headline, N = 50) ----------------------------------------------
    c = Claim("C2-safe-extrapolation",
              "At +50% and +100% beyond the training range, LAMP (N = 50) IoU >= conditional "
              "decoder IoU + 0.05 and >= DNI IoU + 0.03, and LAMP's parameter error is the "
              "lowest of the three (mean over seeds).",
              ">= / >= / < / <", {"lamp-cond": 0.05, "lamp-dni": 0.03,
                                  "perr lamp-cond": 0.0, "perr lamp-dni": 0.0},
              n_seeds=n_seeds,
              note="check_mean of paired per-seed differences (each seed's mean over the 15 "
                   "targets of a level).")
    if s50 is not None:
        notes = []
        for lev in ("e50", "e100"):
            c.add(f"{lev}:lamp-cond_iou>=0.05",
                  check_mean(paired(metrics, LAMP, COND, s50, f"iou_{lev}"), ">=", 0.05))
            c.add(f"{lev}:lamp-dni_iou>=0.03",
                  check_mean(paired(metrics, LAMP, DNI, s50, f"iou_{lev}"), ">=", 0.03))
            c.add(f"{lev}:lamp-cond_param_error<0",
                  check_mean(paired(metrics, LAMP, COND, s50, f"perr_{lev}"), "<", 0.0))
            c.add(f"{lev}:lamp-dni_param_error<0",
                  check_mean(paired(metrics, LAMP, DNI, s50, f"perr_{lev}"), "<", 0.0))
            notes.append(f"{lev}: IoU LAMP {_mean(col(metrics, LAMP, s50, f'iou_{lev}'))}, "
                         f"cond {_mean(col(metrics, COND, s50, f'iou_{lev}'))}, "
                         f"DNI {_mean(col(metrics, DNI, s50, f'iou_{lev}'))}; error (%) LAMP "
                         f"{_mean(col(metrics, LAMP, s50, f'perr_{lev}'))}, cond "
                         f"{_mean(col(metrics, COND, s50, f'perr_{lev}'))}, DNI "
                         f"{_mean(col(metrics, DNI, s50, f'perr_{lev}'))}; LAMP ||alpha||_1 "
                         f"{_mean(col(metrics, LAMP, s50, f'alpha_l1_{lev}'))}")
        c.note += " Means: " + "; ".join(notes) + "."
    else:
        c.note += " No N = 50 setting at this scale."
    claims.append(c)

    # 3. alignment ----------------------------------------------------------------------------
    c = Claim("C3-alignment",
              "Alignment is what makes mixing work: LAMP-no-alignment interpolation IoU <= "
              "LAMP IoU - 0.2 (N = 10).",
              "<=", -0.2, n_seeds=n_seeds,
              note="check_mean of the paired per-seed difference no-alignment - LAMP of "
                   "interpolation IoU.")
    if s10 is not None:
        c.add("noalign-lamp_iou<=-0.2",
              check_mean(paired(metrics, NOALIGN, LAMP, s10, "iou_interp"), "<=", -0.2))
        c.note += (f" The no-alignment exemplars (independent random initialisations, same "
                   f"steps and points) fit their own shapes with mean IoU "
                   f"{_mean(col(metrics, NOALIGN, s10, 'exemplar_iou'))} (aligned: "
                   f"{_mean(col(metrics, LAMP, s10, 'exemplar_iou'))}); their mixtures' LM "
                   f"{_mean(col(metrics, NOALIGN, s10, 'lm_interp'))} vs LAMP's "
                   f"{_mean(col(metrics, LAMP, s10, 'lm_interp'))}.")
    claims.append(c)

    # 4. safety metric ---------------------------------------------------------------------
    c = Claim("C4-safety-metric",
              "The linearity-mismatch LM detects failures: Spearman rho(LM, 1 - IoU) >= 0.5 "
              "across all generated LAMP designs of a seed (all target sets, all N), and "
              "AUROC of LM for IoU < 0.85 >= 0.75 (mean over seeds).",
              ">= / >=", {"spearman": 0.5, "auroc": 0.75}, n_seeds=n_seeds,
              note="check_mean over seeds of the per-seed statistics; LM as defined in "
                   "FIDELITY (INFERRED).")
    per = safety_per_seed(cfg, curves, fail_iou)
    c.add("spearman>=0.5", check_mean(per["spearman"], ">=", 0.5))
    c.add("auroc>=0.75", check_mean(per["auroc"], ">=", 0.75))
    if len(per):
        c.note += (f" Designs per seed: {int(per['n'].iloc[0])}; failures (IoU < {fail_iou}) "
                   f"per seed: {', '.join(str(int(v)) for v in per['n_fail'])}.")
    claims.append(c)

    # sanity ----------------------------------------------------------------------------------
    c = Claim("S1-measurement", "Sanity: the sub-cell measurement of (length, height, cabin) "
              "from a grid field recovers the analytic shapes' parameters (max error < 0.5%).",
              "<", 0.5, category="sanity", n_seeds=n_seeds,
              note="max over every target and seed of the parameter error of the analytic "
                   "SDF's grid field.")
    v = metrics.loc[metrics["method"] == LAMP, "gt_perr_max"] if "gt_perr_max" in metrics \
        else []
    c.add("value", check_value(float(np.max(v)) if len(v) else np.nan, "<", 0.5))
    claims.append(c)
    c = Claim("S2-affine-constraints", "Sanity: LAMP's alpha meets P^T alpha = p* and "
              "1^T alpha = 1 exactly (max residual < 1e-8).", "<", 1e-8, category="sanity",
              n_seeds=n_seeds, note="max over every LAMP design.")
    v = metrics.loc[metrics["method"] == LAMP, "constraint_residual_max"] \
        if "constraint_residual_max" in metrics else []
    c.add("value", check_value(float(np.max(v)) if len(v) else np.nan, "<", 1e-8))
    claims.append(c)
    return claims
