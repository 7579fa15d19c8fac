"""Figures of the spec (validation scatter, structure vs parameters, success curves) and the
tables (Spearman correlations of every predictor, log10 F_edge per cell, ANOVA)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from icml26.plotting import (
    BASELINE_COLORS,
    PROPOSED_COLOR,
    PROPOSED_ZORDER,
    REFERENCE_COLOR,
    legend_outside,
    subplots,
)

from .claims import (
    PREDICTORS,
    WELL,
    WIDE,
    anova_ss,
    finite,
    slope_fit,
    spearman,
    spearman_table,
    well_conditioning,
    with_design,
)
from .experiment import setting_params

MARKERS = {WELL: "o", WIDE: "^"}


FAMILY_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#17becf")


def _family_colors(families):
    return {f: FAMILY_COLORS[i % len(FAMILY_COLORS)] for i, f in enumerate(families)}


def _families(frame):
    return list(dict.fromkeys(frame["family"]))


def validation(cfg, frame):
    fig, axes = subplots(1, 2, figsize=(12.0, 4.0))
    colors = _family_colors(_families(frame))
    fin = finite(frame)
    nan = frame[~np.isfinite(frame["n_star"].to_numpy(float))]
    top = float(fin["n_star"].max()) * 1.6 if len(fin) else 1.0
    for ax, x in zip(axes, ("F_edge", "F_all"), strict=True):
        for (fam, reg), g in fin.groupby(["family", "regime"], sort=False):
            ax.scatter(g[x], g["n_star"], color=colors[fam], marker=MARKERS.get(reg, "s"),
                       s=26, alpha=0.85, label=f"{fam} / {reg}")
        if len(nan):
            ax.scatter(nan[x], np.full(len(nan), top), color=REFERENCE_COLOR, marker="x", s=26,
                       label="n* = NaN (failed at max n)")
        slope, r2 = slope_fit(frame, x)
        rho = spearman(fin[x], fin["n_star"]) if len(fin) >= 3 else float("nan")
        if np.isfinite(slope):
            lx = np.log(fin[x].to_numpy(float))
            icpt = float(np.mean(np.log(fin["n_star"].to_numpy(float))) - slope * lx.mean())
            xs = np.geomspace(fin[x].min(), fin[x].max(), 50)
            ax.plot(xs, np.exp(icpt) * xs ** slope, color=PROPOSED_COLOR, lw=1.4,
                    label="OLS fit", zorder=PROPOSED_ZORDER)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(f"{x} (INFERRED definition)")
        ax.set_ylabel("n* (PC, success >= %g)" % float(cfg["params"]["threshold"]))
        ax.set_title(f"n* vs {x}: slope {slope:.2f}, R² {r2:.2f}, Spearman {rho:.2f}")
    legend_outside(fig)
    return fig


def structure_vs_params(cfg, frame):
    fams = _families(frame)
    regimes = [r for r in (WELL, WIDE) if (frame["regime"] == r).any()]
    fig, ax = subplots(figsize=(7.6, 3.8))
    width = 0.8 / max(1, len(regimes))
    reg_colors = {WELL: BASELINE_COLORS[2], WIDE: BASELINE_COLORS[1]}
    for k, reg in enumerate(regimes):
        pos = np.arange(len(fams)) + (k - (len(regimes) - 1) / 2) * width
        data = [frame[(frame["family"] == f) & (frame["regime"] == reg)]["log10_F_edge"]
                .to_numpy(float) for f in fams]
        bp = ax.boxplot(data, positions=pos, widths=width * 0.85, patch_artist=True,
                        showfliers=False)
        for box in bp["boxes"]:
            box.set_facecolor(reg_colors.get(reg, REFERENCE_COLOR))
            box.set_alpha(0.45)
        for x0, d in zip(pos, data, strict=True):
            ax.scatter(np.full(len(d), x0), d, s=10, color=reg_colors.get(reg, "k"), zorder=3)
        ax.plot([], [], color=reg_colors.get(reg, "k"), lw=6, alpha=0.45, label=reg.upper())
    ax.set_xticks(np.arange(len(fams)))
    ax.set_xticklabels(fams)
    ax.set_ylabel("log10 F_edge")
    wc = well_conditioning(frame)
    ax.set_title(f"Structure vs parameters: WELL median spread {wc['spread']:.2f}, "
                 f"sd WELL/WIDE {wc['sd_ratio']:.2f}")
    legend_outside(fig)
    return fig


def example_instances(frame, k: int = 4):
    """k instances spread over the range of F_edge among those with finite n*."""
    fin = finite(frame).sort_values("F_edge", kind="stable")
    if len(fin) <= k:
        return fin
    idx = np.unique(np.round(np.linspace(0, len(fin) - 1, k)).astype(int))
    return fin.iloc[idx]


def success_curves(cfg, frame, curves):
    fig, ax = subplots(figsize=(9.0, 3.8))
    ex = example_instances(frame)
    colors = _family_colors(list(range(len(ex))))
    for i, (_, row) in enumerate(ex.iterrows()):
        part = curves[(curves["setting"] == row["setting"]) & (curves["seed"] == row["seed"])
                      & (curves["metric"] == "success")].sort_values("step")
        ax.plot(part["step"], part["value"], marker="o", ms=3, color=colors[i],
                label=f"{row['setting']} #{int(row['seed'])}: F_edge={row['F_edge']:.3g}, "
                      f"n*={row['n_star']:.0f}")
        ax.axvline(row["F_edge"], color=colors[i], ls="--", lw=1)
    ax.axhline(float(cfg["params"]["threshold"]), color=REFERENCE_COLOR, ls=":", lw=1)
    ax.set_xscale("log")
    ax.set_xlabel("n (evaluated by the bisection)")
    ax.set_ylabel("MEC recovery rate")
    ax.set_ylim(-0.03, 1.03)
    ax.set_title("Success vs n (dashed: n = F_edge)")
    legend_outside(fig)
    return fig


def make(cfg, metrics, curves):
    frame = with_design(cfg, metrics)
    return {"validation": validation(cfg, frame),
            "structure_vs_params": structure_vs_params(cfg, frame),
            "success_curves": success_curves(cfg, frame, curves)}


def tables(cfg, metrics, curves):
    frame = with_design(cfg, metrics)
    rows = []
    for name, part in (("all", frame), ("WELL", frame[frame["regime"] == WELL]),
                       ("WIDE", frame[frame["regime"] == WIDE])):
        rho = spearman_table(part)
        rows.append({"instances": name, "n finite": len(finite(part)),
                     "n* = NaN": int(len(part) - len(finite(part))),
                     **{p: round(rho[p], 3) for p in PREDICTORS}})
    spear = pd.DataFrame(rows)
    cells = (frame.groupby(["family", "regime"])["log10_F_edge"]
             .agg(["median", "std", "count"]).round(3).reset_index())
    ss = anova_ss(frame)
    anova = pd.DataFrame([{"source": k, "sum of squares": round(v, 4)} for k, v in ss.items()])
    p_of = {s: int(setting_params(cfg, s)["p"]) for s in cfg["settings"]}
    nan = frame.assign(p=frame["setting"].map(p_of)).groupby(["p", "regime"])["n_star_found"]
    found = nan.agg(["sum", "count"]).reset_index().rename(
        columns={"sum": "n* finite", "count": "instances"})
    return {"Spearman correlation of each predictor with n* (finite n* only)": spear,
            "log10 F_edge per family and regime": cells,
            "Two-way ANOVA of log10 F_edge (family, regime)": anova,
            "Instances with finite n*": found}
