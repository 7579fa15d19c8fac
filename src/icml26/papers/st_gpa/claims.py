"""The five claims of the st-gpa spec, thresholds exactly as written there.

How each is checked (see icml26.claims); every method of a cell shares the seed's graph and
the cell's partition hash, so comparisons are paired per seed:
1., 2. "ST-GPA >= GPA + 0.08 (mean over 5 seeds)": the per-seed paired difference of
   certified accuracy at the headline radius, check_mean (95% interval >= 0.08).
3. "in all four cells, ST-GPA clean accuracy >= GPA - 0.01": one part per cell, per-seed
   paired difference, check_mean (>= -0.01); all parts must hold.
4. "edges-only AUC > ST-only AUC" (structure, P = 20) and "ST-only AUC > edges-only AUC"
   (label, P = 10): per-seed paired differences, check_mean (> 0).
5. "AUC of ST-GPA > GPA in at least 3 of the 4 cells, for the mean over seeds": the fraction
   of cells whose mean-over-seeds AUC difference ST-GPA - GPA is > 0 (3 of 4 -> >= 0.75) is a
   statistic pooled over seeds, so check_pooled resamples the seeds (one resample draws the
   same seeds in every cell: a seed's graph is shared by its cells). Inconclusive unless all
   four cells ran.
Per-seed values go to the checks as pandas Series indexed by seed, so a failed (non-finite)
run is named in the note.
Cells are found by (threat, P) in the settings (and params.claim_n where several graph sizes
exist); the claim cells and headline radii are params (the spec's at default and full).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from icml26.claims import INCONCLUSIVE, Check, Claim, check_mean, check_pooled

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


def paired(metrics, a: str, b: str, setting: str | None, col: str):
    """Per-seed a - b of one metric (Series by seed) on the seeds both methods have."""
    if setting is None:
        return pd.Series([], dtype=float)
    sa, sb = _series(metrics, a, setting, col), _series(metrics, b, setting, col)
    common = sa.index.intersection(sb.index)
    return sa.loc[common] - sb.loc[common]


def cert_at(curves, method: str, setting: str | None, r: int):
    """Per-seed certified accuracy at radius r of one run, from the curves."""
    if setting is None:
        return pd.Series(dtype=float)
    part = curves[(curves["method"] == method) & (curves["setting"] == setting)
                  & (curves["metric"] == "cert_acc") & (curves["step"] == r)]
    return part.set_index("seed")["value"].astype(float).sort_index()


def paired_cert(curves, a, b, setting, r):
    sa, sb = cert_at(curves, a, setting, r), cert_at(curves, b, setting, r)
    common = sa.index.intersection(sb.index)
    return sa.loc[common] - sb.loc[common]


def cells_won(diffs: np.ndarray):
    """stat(idx) for check_pooled: the fraction of cells (columns of ``diffs``, seeds x cells)
    whose mean over the seeds ``idx`` is > 0; a non-finite seed makes its cell not won."""
    def stat(idx):
        m = diffs[np.asarray(idx)].mean(axis=0)
        return float(np.mean(np.isfinite(m) & (m > 0)))
    return stat


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
        n_seeds=seeds)
    spread = []
    for t, P in cells:
        s = find_cell(cfg, t, P)
        d = paired(metrics, ST, GPA, s, "clean_acc")
        c3.add(f"{t} P={P}", check_mean(d, ">=", -0.01))
        if d.size:
            spread.append(f"{t} P={P} {d.mean():+.3f} (s.d. {d.std(ddof=1):.3f})")
    c3.note = ("Checked on the 95% t-interval of the paired per-seed difference; mean "
               "difference (s.d. over seeds) per cell: " + ", ".join(spread))
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
        "fraction of cells with mean ST-GPA AUC > mean GPA AUC (95% bootstrap over seeds) "
        ">= 0.75 (3 of 4)", 0.75, n_seeds=seeds)
    cols, complete = [], len(cells) == 4
    for t, P in cells:
        d = paired(metrics, ST, GPA, find_cell(cfg, t, P), "cert_auc")
        if not d.size:
            complete = False
            continue
        cols.append(d)
    if complete:
        table = pd.concat(cols, axis=1)             # seeds x cells; a missing seed is NaN
        diffs = table.to_numpy(dtype=float)
        c5.add("value", check_pooled(cells_won(diffs), len(diffs), ">=", 0.75))
        c5.note = ("mean ST-GPA - GPA AUC per cell: " + ", ".join(
            f"{t} P={P} {v:+.4f}" for (t, P), v in zip(cells, diffs.mean(0), strict=True)))
    else:
        c5.add("value", Check(INCONCLUSIVE, math.nan, why="not all four cells ran"))
    claims.append(c5)
    return claims
