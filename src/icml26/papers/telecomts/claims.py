"""Claims 1-5 of the spec, thresholds as written.

Statistics (fixed from the wording before any run): representations are compared per seed on
the same windows and the same model seed stream, so "X <= Y - d (mean over seeds)" is
check_mean on the per-seed paired difference Y - X >= d; "in every seed" is check_every; the
ratio "INST >= 2 x RAW" is the linear paired form INST - 2 RAW >= 0 per seed (mean(INST) >=
2 mean(RAW), with no division by a rate that may be 0). Macro-F1 "points" are 0.01. Claims
1(a), 2, 3 and 4 are about FEAT-GBM (claim 3 names no model: FEAT-GBM, the model of the
headline, was fixed before the run; the CNN's values are in the note). Notes state what the
data show, computed at report time.
"""

from __future__ import annotations

import numpy as np

from icml26.claims import Claim, check_every, check_mean


def _col(metrics, method, setting, col):
    part = metrics[(metrics["method"] == method) & (metrics["setting"] == setting)]
    if col not in part:
        return None
    return part.sort_values("seed").set_index("seed")[col].astype(float)


def _diff(metrics, setting, col, a, b, scale=1.0):
    """Per-seed a - scale * b of one column (a Series indexed by seed), or None if absent."""
    x, y = _col(metrics, a, setting, col), _col(metrics, b, setting, col)
    if x is None or y is None or not x.notna().any() or not y.notna().any():
        return None
    seeds = x.index.intersection(y.index)
    return x.loc[seeds] - scale * y.loc[seeds]


def _mean(s) -> float:
    if s is None:
        return float("nan")
    v = s.to_numpy(float)
    v = v[np.isfinite(v)]
    return float(v.mean()) if v.size else float("nan")


def _settings(cfg, model):
    """Settings of a model family on the window tasks (detection / RCA); the full profile's
    localisation setting (traces, no claim of the spec) is left out."""
    return [s for s, p in cfg["settings"].items()
            if p["model"] == model and set(p["tasks"]) & {"detection", "rca"}]


def _fmt_means(metrics, setting, col):
    return ", ".join(f"{m} {_mean(_col(metrics, m, setting, col)):.3f}"
                     for m in ("raw", "inst", "inst-scale"))


def check(cfg, metrics, curves) -> list[Claim]:
    n = len(cfg["seeds"])
    gbm = (_settings(cfg, "gbm") or [None])[0]
    cnn = (_settings(cfg, "cnn") or [None])[0]
    out = []

    # 1 headline ---------------------------------------------------------------------------
    note = []
    if gbm is not None:
        note.append(f"Seed-mean RCA macro-F1, FEAT-GBM: {_fmt_means(metrics, gbm, 'rca_macro_f1')}")
    if cnn is not None:
        note.append(f"CNN: {_fmt_means(metrics, cnn, 'rca_macro_f1')}")
    c = Claim("C1-scale-matters", "Absolute scale matters: RCA macro-F1 with INST <= RAW - 10 "
              "points for FEAT-GBM (mean over seeds) and INST < RAW in every seed; for the CNN "
              "INST <= RAW - 5 points.", ">=",
              {"gbm_raw-inst": 0.10, "gbm_raw-inst_every_seed": 0.0, "cnn_raw-inst": 0.05},
              n_seeds=n, note="; ".join(note) + "." if note else "")
    d = _diff(metrics, gbm, "rca_macro_f1", "raw", "inst")
    if d is not None:
        c.add("gbm_raw-inst", check_mean(d, ">=", 0.10))
        c.add("gbm_raw-inst_every_seed", check_every(d, ">", 0.0))
    d = _diff(metrics, cnn, "rca_macro_f1", "raw", "inst")
    if d is not None:
        c.add("cnn_raw-inst", check_mean(d, ">=", 0.05))
    out.append(c)

    # 2 scale tokens recover it -----------------------------------------------------------
    c = Claim("C2-scale-tokens", "Scale tokens recover it: INST+SCALE macro-F1 >= INST + "
              "0.8 (RAW - INST) for FEAT-GBM (per seed: (INST+SCALE - INST) - 0.8 (RAW - INST) "
              ">= 0, mean over seeds).", ">=", {"gbm_recovery_margin": 0.0}, n_seeds=n)
    a = _diff(metrics, gbm, "rca_macro_f1", "inst-scale", "inst")
    b = _diff(metrics, gbm, "rca_macro_f1", "raw", "inst")
    if a is not None and b is not None:
        margin = a - 0.8 * b
        c.add("gbm_recovery_margin", check_mean(margin, ">=", 0.0))
        gap = _mean(b)
        if np.isfinite(gap) and gap != 0:
            c.note = (f"Recovered share of the RAW - INST gap (seed means): "
                      f"{_mean(a) / gap:.2f} (claim: >= 0.8).")
    out.append(c)

    # 3 mechanism ------------------------------------------------------------------------
    note = []
    for s, label in ((gbm, "FEAT-GBM"), (cnn, "CNN")):
        if s is None:
            continue
        r, i = (_mean(_col(metrics, m, s, "rca_mild_severe_conf")) for m in ("raw", "inst"))
        gf = _mean(_diff(metrics, s, "rca_f1_full", "raw", "inst"))
        gp = _mean(_diff(metrics, s, "rca_f1_partial", "raw", "inst"))
        note.append(f"{label}: mild/severe confusion RAW {r:.3f}, INST {i:.3f}; RAW - INST "
                    f"macro-F1 gap on full windows {gf:.3f}, on partial {gp:.3f}")
    c = Claim("C3-mechanism", "Mechanism (FEAT-GBM): the mild/severe interference confusion "
              "rate under INST is >= 2x that under RAW, and the RAW - INST macro-F1 gap is "
              "larger on full-window anomalies than on partial-window ones.", ">=",
              {"conf_inst-2*raw": 0.0, "gap_full-gap_partial": 0.0}, n_seeds=n,
              note="; ".join(note) + "." if note else "")
    d = _diff(metrics, gbm, "rca_mild_severe_conf", "inst", "raw", scale=2.0)
    if d is not None:
        c.add("conf_inst-2*raw", check_mean(d, ">=", 0.0))
    f = _diff(metrics, gbm, "rca_f1_full", "raw", "inst")
    q = _diff(metrics, gbm, "rca_f1_partial", "raw", "inst")
    if f is not None and q is not None:
        c.add("gap_full-gap_partial", check_mean(f - q, ">", 0.0))
    out.append(c)

    # 4 detection ------------------------------------------------------------------------
    c = Claim("C4-detection-scale", "Detection also needs scale: AUROC(INST) <= AUROC(RAW) - "
              "0.03 (FEAT-GBM, mean over seeds).", ">=", {"gbm_auroc_raw-inst": 0.03},
              n_seeds=n, note=(f"Seed-mean detection AUROC, FEAT-GBM: "
                               f"{_fmt_means(metrics, gbm, 'det_auroc')}."
                               if gbm is not None else ""))
    d = _diff(metrics, gbm, "det_auroc", "raw", "inst")
    if d is not None:
        c.add("gbm_auroc_raw-inst", check_mean(d, ">=", 0.03))
    out.append(c)

    # 5 weak temporal structure -------------------------------------------------------------
    c = Claim("C5-weak-structure", "Weak temporal structure: forecasting skill <= 0.15 for "
              "RX_Bytes on TelecomTS-mini and >= 0.5 on the smooth control, in every seed.",
              "<= (RX_Bytes), >= (control)", {"skill_RX_Bytes": 0.15, "skill_control": 0.5},
              n_seeds=n)
    rx = _col(metrics, "raw", gbm, "probe_skill_RX_Bytes") if gbm is not None else None
    ctl = _col(metrics, "raw", gbm, "probe_skill_control") if gbm is not None else None
    if rx is not None and ctl is not None:
        c.add("skill_RX_Bytes", check_every(rx, "<=", 0.15))
        c.add("skill_control", check_every(ctl, ">=", 0.5))
        chosen = _col(metrics, "raw", gbm, "probe_choice_RX_Bytes")
        c.note = (f"Seed-mean skill: RX_Bytes {_mean(rx):.3f}, control {_mean(ctl):.3f}; "
                  f"ridge chosen on validation for RX_Bytes in {int((chosen == 1).sum())} of "
                  f"{len(chosen)} seeds (else last value).")
    out.append(c)
    return out


def premises(cfg, metrics) -> list[dict]:
    """What the spec states as fact, measured in this run (rows for the report)."""
    rows = []
    gbm = _settings(cfg, "gbm")
    part = metrics[metrics["setting"].isin(gbm)].drop_duplicates("seed") \
        if "inst_meansd_dev" in metrics else metrics.iloc[:0]
    if len(part):
        dev = part["inst_meansd_dev"].astype(float)
        rows.append({"premise (spec)": "under INST the mean and s.d. features are constant and "
                                       "carry nothing",
                     "measured": f"largest deviation of a test window's INST mean from 0 / s.d. "
                                 f"from 1 (0 for a flat channel): {dev.max():.2e}",
                     "held": "yes" if dev.max() < 1e-9 else "no"})
        z = {k: part[f"zero_frac_{k}"].astype(float).mean()
             for k in ("TX_Bytes", "RX_Bytes", "UL_Buffer", "DL_BLER", "UL_BLER")}
        rows.append({"premise (spec)": "observability series are zero-inflated",
                     "measured": "; ".join(f"{k} {v:.2f}" for k, v in z.items())
                                 + " (fraction of exact zeros, training windows, seed mean)",
                     "held": "yes" if min(z.values()) > 0.3 else "no"})
        a = part["acf1_log_RX_Bytes"].astype(float).mean()
        skill = part["probe_skill_RX_Bytes"].astype(float) \
            if "probe_skill_RX_Bytes" in part else None
        held = "reported" if skill is None else (
            "yes" if (skill <= 0.15).all() else
            f"no: skill > 0.15 in {int((skill > 0.15).sum())} of {len(skill)} seeds")
        rows.append({"premise (spec)": "an on/off process with i.i.d. log-normal bursts, so "
                                       "little of the traffic is forecastable",
                     "measured": f"lag-1 autocorrelation of log1p RX_Bytes (normal windows, seed "
                                 f"mean) {a:.3f}; the bursts are i.i.d. but the on/off state "
                                 "is not: its autocorrelation at lag h is (1 - 0.10 - 0.05)^h "
                                 "= 0.85^h by construction, so the last value predicts the "
                                 "state over the 16-step horizon (claim 5)",
                     "held": held})
    return rows
