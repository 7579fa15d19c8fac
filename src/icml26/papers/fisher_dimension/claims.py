"""The spec's six claims, thresholds exactly as written.

Every claim is about one number computed from all instances together (a rank correlation over
instances, a fitted slope, a spread of medians, a ratio of standard deviations or of sums of
squares), so each part uses check_value. The instances are the runs: seeds are instance seeds,
not repetitions of the same quantity, so a t-interval over seeds would not be the spec's
statistic. Correlations and the slope use the instances with finite n* only; the F-only claims
(5, 6) use every instance, since F is defined whether or not PC reached the success threshold.
"""

from __future__ import annotations

import numpy as np

from icml26.claims import Claim, check_value
from icml26.scaling import loglog_fit

STRUCTURAL = ("n_edges", "max_indeg")
PREDICTORS = ("F_edge", "F_all", "n_edges", "max_indeg", "max_deg", "naive", "minimax")
WELL, WIDE = "well", "wide"


def rankdata(x) -> np.ndarray:
    """Ranks 1..n with ties given their average rank."""
    x = np.asarray(x, dtype=float)
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x))
    ranks[order] = np.arange(1, len(x) + 1)
    for v in np.unique(x):
        tie = x == v
        if tie.sum() > 1:
            ranks[tie] = ranks[tie].mean()
    return ranks


def spearman(x, y) -> float:
    """Spearman rank correlation (Pearson correlation of average ranks); NaN if either side is
    constant or fewer than 3 pairs."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 3:
        return float("nan")
    rx, ry = rankdata(x), rankdata(y)
    if rx.std() == 0 or ry.std() == 0:
        return float("nan")
    return float(np.corrcoef(rx, ry)[0, 1])


def with_design(cfg: dict, metrics):
    """metrics with the family and regime of each run's setting."""
    fam = {s: (p or {}).get("family") for s, p in cfg["settings"].items()}
    reg = {s: (p or {}).get("regime") for s, p in cfg["settings"].items()}
    return metrics.assign(family=metrics["setting"].map(fam), regime=metrics["setting"].map(reg))


def finite(frame):
    return frame[np.isfinite(frame["n_star"].to_numpy(dtype=float))]


def spearman_table(frame) -> dict[str, float]:
    """Spearman(predictor, n*) over the instances of frame with finite n*."""
    f = finite(frame)
    return {p: spearman(f[p], f["n_star"]) for p in PREDICTORS}


def slope_fit(frame, x: str = "F_edge") -> tuple[float, float]:
    """(slope, R^2) of the OLS fit of log n* on log F over instances with finite n*."""
    f = finite(frame)
    if len(f) < 2:
        return float("nan"), float("nan")
    slope, icpt = loglog_fit(f[x], f["n_star"])
    lx, ly = np.log(f[x].to_numpy(float)), np.log(f["n_star"].to_numpy(float))
    resid = ly - (slope * lx + icpt)
    tot = ((ly - ly.mean()) ** 2).sum()
    return slope, float(1 - (resid ** 2).sum() / tot) if tot > 0 else float("nan")


def anova_ss(frame, y: str = "log10_F_edge") -> dict[str, float]:
    """Two-way ANOVA sums of squares of y for family and regime (main effects; the design is
    balanced, so sequential and marginal sums agree), their interaction and the residual."""
    v = frame[y].to_numpy(float)
    grand = v.mean()
    out = {}
    for factor in ("family", "regime"):
        g = frame.groupby(factor)[y]
        out[factor] = float((g.count() * (g.mean() - grand) ** 2).sum())
    cells = frame.groupby(["family", "regime"])[y]
    ss_cells = float((cells.count() * (cells.mean() - grand) ** 2).sum())
    out["interaction"] = ss_cells - out["family"] - out["regime"]
    out["residual"] = float(((v - grand) ** 2).sum()) - ss_cells
    return out


def well_conditioning(frame) -> dict[str, float]:
    """Spread of per-family medians of log10 F_edge in WELL, and sd(WELL) / sd(WIDE)."""
    well, wide = frame[frame["regime"] == WELL], frame[frame["regime"] == WIDE]
    med = well.groupby("family")["log10_F_edge"].median()
    sd_well = float(well["log10_F_edge"].std(ddof=1)) if len(well) > 1 else float("nan")
    sd_wide = float(wide["log10_F_edge"].std(ddof=1)) if len(wide) > 1 else float("nan")
    return {"spread": float(med.max() - med.min()) if len(med) else float("nan"),
            "sd_well": sd_well, "sd_wide": sd_wide,
            "sd_ratio": sd_well / sd_wide if sd_wide > 0 else float("nan")}


def check(cfg: dict, metrics, curves) -> list[Claim]:
    frame = with_design(cfg, metrics)
    n_seeds = int(frame["seed"].nunique()) if len(frame) else 0
    n_nan = int((~np.isfinite(frame["n_star"].to_numpy(float))).sum())
    n_fin = len(frame) - n_nan
    rho = spearman_table(frame)
    claims = []

    c = Claim("C1-headline",
              "Spearman(F_edge, n*) >= 0.7 over all instances with finite n*.",
              ">=", 0.7, n_seeds=n_seeds,
              note=f"check_value over {n_fin} instances with finite n* ({n_nan} with n* = NaN "
                   f"excluded); Spearman(F_all, n*) = {rho['F_all']:.3f}")
    c.add("value", check_value(rho["F_edge"], ">=", 0.7))
    claims.append(c)

    slope, r2 = slope_fit(frame)
    c = Claim("C2-linear-scaling",
              "The OLS slope of log n* on log F_edge lies in [0.6, 1.8] (theory: 1 up to logs).",
              "in", [0.6, 1.8], n_seeds=n_seeds,
              note=f"check_value on the pooled slope (two parts); R^2 = {r2:.3f}")
    c.add("slope>=0.6", check_value(slope, ">=", 0.6))
    c.add("slope<=1.8", check_value(slope, "<=", 1.8))
    claims.append(c)

    c = Claim("C3-not-structural",
              "Spearman(F_edge, n*) >= Spearman(s, n*) + 0.2 for s in {number of edges, "
              "max in-degree}.",
              ">=", 0.2, n_seeds=n_seeds,
              note="check_value on the difference of Spearman correlations per structural "
                   "predictor; " + ", ".join(f"Spearman({s}, n*) = {rho[s]:.3f}"
                                             for s in STRUCTURAL))
    for s in STRUCTURAL:
        c.add(f"vs {s}", check_value(rho["F_edge"] - rho[s], ">=", 0.2))
    claims.append(c)

    wide = frame[frame["regime"] == WIDE]
    rho_wide = spearman_table(wide)["F_edge"] if len(wide) else float("nan")
    c = Claim("C4-within-class",
              "Inside the WIDE regime alone, Spearman(F_edge, n*) >= 0.6 (the minimax "
              "predictor is constant there).",
              ">=", 0.6, n_seeds=n_seeds,
              note=f"check_value over the {len(finite(wide))} WIDE instances with finite n*")
    c.add("value", check_value(rho_wide, ">=", 0.6))
    claims.append(c)

    wc = well_conditioning(frame)
    c = Claim("C5-bounded-well",
              "In WELL, the spread (max - min) of per-family medians of log10 F_edge is <= 0.3, "
              "and sd(log10 F_edge | WELL) <= 0.5 x sd(log10 F_edge | WIDE).",
              "<=", {"spread": 0.3, "sd_well/sd_wide": 0.5}, n_seeds=n_seeds,
              note=f"check_value on each part; sd WELL = {wc['sd_well']:.3f}, "
                   f"sd WIDE = {wc['sd_wide']:.3f} (all instances, ddof = 1)")
    c.add("spread", check_value(wc["spread"], "<=", 0.3))
    c.add("sd_well/sd_wide", check_value(wc["sd_ratio"], "<=", 0.5))
    claims.append(c)

    ss = anova_ss(frame) if len(frame) else {"family": np.nan, "regime": np.nan}
    ratio = ss["regime"] / ss["family"] if ss["family"] > 0 else float("nan")
    c = Claim("C6-parameters-dominate",
              "In the two-way ANOVA of log10 F_edge, SS(regime) >= 2 x SS(family).",
              ">=", 2.0, n_seeds=n_seeds,
              note=f"check_value on SS(regime) / SS(family); SS(regime) = {ss['regime']:.3f}, "
                   f"SS(family) = {ss['family']:.3f}")
    c.add("value", check_value(ratio, ">=", 2.0))
    claims.append(c)
    return claims
