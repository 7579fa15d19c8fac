"""The five claims of the st-gpa spec, thresholds exactly as written there.

How each is checked (see icml26.claims); every method of a cell shares the seed's graph and
the cell's partition hash, so comparisons are paired per seed:
1., 2. "ST-GPA >= GPA + 0.08 (mean over 5 seeds)": the per-seed paired difference of
   certified accuracy at the headline radius, check_mean (95% interval >= 0.08).
3. "in all four cells, ST-GPA clean accuracy >= GPA - 0.01": one part per cell, per-seed
   paired difference, check_mean (>= -0.01); all parts must hold.
4. "edges-only AUC > ST-only AUC" (structure, P = 20) and "ST-only AUC > edges-only AUC"
   (label, P = 10): per-seed paired differences, check_mean (> 0).
5. "AUC of ST-GPA > GPA in at least 3 of the 4 cells, for the mean over seeds": the spec
   compares means over seeds directly, so the count of cells where mean ST-GPA AUC > mean
   GPA AUC is one number, check_value (>= 3); inconclusive unless all four cells ran.
Cells are found by (threat, P) in the settings (and params.claim_n where several graph sizes
exist); the claim cells and headline radii are params (the spec's at default and full).
"""

from __future__ import annotations

import math

import numpy as np

from icml26.claims import INCONCLUSIVE, Check, Claim, check_mean, check_value

from .experiment import cell, setting_params

GPA, ST, ST_ONLY, EDGES = "gpa", "st-gpa", "st-only", "edges-only"


def find_cell(cfg: dict, threat: str, P: int) -> str | None:
    """The setting of a (threat, P) cell (at params.claim_n if given), or None."""
    want_n = cfg["params"].get("claim_n")
    for s in cfg["settings"]:
        if cell(cfg, s) == (threat, int(P)) and (
                want_n is None or int(setting_params(cfg, s)["n"]) == int(want_n)):
            return s
    return None


def _series(metrics, method, setting, col):
    rows = metrics[(metrics["method"] == method) & (metrics["setting"] == setting)]
    return rows.set_index("seed")[col].astype(float).sort_index()


def paired(metrics, a: str, b: str, setting: str | None, col: str) -> np.ndarray:
    """Per-seed a - b of one metric on the seeds both methods have (empty if absent)."""
    if setting is None:
        return np.zeros(0)
    sa, sb = _series(metrics, a, setting, col), _series(metrics, b, setting, col)
    common = sa.index.intersection(sb.index)
    return (sa.loc[common] - sb.loc[common]).to_numpy()


def cert_at(curves, method: str, setting: str | None, r: int):
    """Per-seed certified accuracy at radius r of one run, from the curves."""
    import pandas as pd

    if setting is None:
        return pd.Series(dtype=float)
    part = curves[(curves["method"] == method) & (curves["setting"] == setting)
                  & (curves["metric"] == "cert_acc") & (curves["step"] == r)]
    return part.set_index("seed")["value"].astype(float).sort_index()


def paired_cert(curves, a, b, setting, r) -> np.ndarray:
    sa, sb = cert_at(curves, a, setting, r), cert_at(curves, b, setting, r)
    common = sa.index.intersection(sb.index)
    return (sa.loc[common] - sb.loc[common]).to_numpy()


def check(cfg: dict, metrics, curves) -> list[Claim]:
    seeds = int(metrics["seed"].nunique()) if len(metrics) else 0
    p = cfg["params"]
    lab, struc = p["claim_label"], p["claim_structure"]
    cells = [(t, int(P)) for t in ("label", "structure") for P in p["claim_cells"][t]]
    claims = []

    c1 = Claim(
        "label_poisoning_certified_gain",
        f"Label poisoning (headline): at P = {lab['P']}, certified accuracy at r = {lab['r']} "
        "of ST-GPA >= GPA + 0.08 (mean over seeds).",
        "ST-GPA - GPA certified accuracy at the headline radius (paired per seed) >= 0.08",
        0.08, n_seeds=seeds)
    s = find_cell(cfg, "label", lab["P"])
    c1.add(f"label P={lab['P']} r={lab['r']}",
           check_mean(paired_cert(curves, ST, GPA, s, int(lab["r"])), ">=", 0.08))
    claims.append(c1)

    c2 = Claim(
        "structure_poisoning_certified_gain",
        f"Structure poisoning (headline): at P = {struc['P']}, certified accuracy at r = "
        f"{struc['r']} of ST-GPA >= GPA + 0.08 (mean over seeds).",
        "ST-GPA - GPA certified accuracy at the headline radius (paired per seed) >= 0.08",
        0.08, n_seeds=seeds)
    s = find_cell(cfg, "structure", struc["P"])
    c2.add(f"structure P={struc['P']} r={struc['r']}",
           check_mean(paired_cert(curves, ST, GPA, s, int(struc["r"])), ">=", 0.08))
    claims.append(c2)

    c3 = Claim(
        "clean_accuracy_kept",
        "Clean accuracy is kept: in all (threat, P) cells, ST-GPA clean accuracy >= GPA clean "
        "accuracy - 0.01.",
        "ST-GPA - GPA clean accuracy (paired per seed) >= -0.01, in every cell", -0.01,
        n_seeds=seeds,
        note="Checked on the 95% interval of the paired per-seed difference: clean accuracy "
             "on the test nodes varies by several points between seeds (graph and hash), so a "
             "cell whose mean difference is positive can still leave the interval straddling "
             "-0.01 at 5 seeds (inconclusive rather than reproduced).")
    for t, P in cells:
        s = find_cell(cfg, t, P)
        c3.add(f"{t} P={P}", check_mean(paired(metrics, ST, GPA, s, "clean_acc"), ">=", -0.01))
    claims.append(c3)

    c4 = Claim(
        "both_components_matter",
        f"Both components matter in their own threat model: structure threat (P = "
        f"{struc['P']}) edges-only AUC > ST-only AUC; label threat (P = {lab['P']}) ST-only "
        "AUC > edges-only AUC.",
        "paired per-seed AUC difference > 0 in each part", 0.0, n_seeds=seeds)
    s = find_cell(cfg, "structure", struc["P"])
    c4.add(f"structure P={struc['P']}: edges-only - ST-only",
           check_mean(paired(metrics, EDGES, ST_ONLY, s, "cert_auc"), ">", 0.0))
    s = find_cell(cfg, "label", lab["P"])
    c4.add(f"label P={lab['P']}: ST-only - edges-only",
           check_mean(paired(metrics, ST_ONLY, EDGES, s, "cert_auc"), ">", 0.0))
    claims.append(c4)

    c5 = Claim(
        "auc_better_in_most_cells",
        "Certified-accuracy AUC of ST-GPA > GPA in at least 3 of the 4 (threat, P) cells, for "
        "the mean over seeds.",
        "number of cells with mean ST-GPA AUC > mean GPA AUC >= 3", 3, n_seeds=seeds)
    wins, complete = 0, len(cells) == 4
    for t, P in cells:
        s = find_cell(cfg, t, P)
        a = _series(metrics, ST, s, "cert_auc") if s else None
        b = _series(metrics, GPA, s, "cert_auc") if s else None
        if a is None or b is None or not len(a) or not len(b):
            complete = False
            continue
        wins += int(a.mean() > b.mean())
    c5.add("value", check_value(wins, ">=", 3) if complete
           else Check(INCONCLUSIVE, math.nan))
    claims.append(c5)
    return claims
