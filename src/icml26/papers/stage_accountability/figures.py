"""Fig. 1 (estimated vs true stage effects), Fig. 2 (spurious-correlation case study), Table 1
(correlations and identification rates), the intervention table, the stage recipes and the
spec's premises checked against the run."""

from __future__ import annotations

import numpy as np

from icml26.plotting import (
    BASELINE_COLORS,
    PROPOSED_COLOR,
    REFERENCE_COLOR,
    legend_outside,
    method_colors,
    method_label,
    method_zorder,
    subplots,
)

from . import PROPOSED
from .claims import E2, premises

# stage colours: never the proposed method's red
STAGE_COLORS = ("#2980b9", "#d35400", "#27ae60", "#8e44ad", "#b7950b", "#7f8c8d")
PREMISE_TABLE = "The spec's premises, checked against this run"


def _first_setting(cfg, metrics):
    return next((s for s in cfg["settings"] if (metrics["setting"] == s).any()), None)


def _pairs(curves, method, setting):
    part = curves[(curves["method"] == method) & (curves["setting"] == setting)]
    wide = part.pivot_table(index=["seed", "step"], columns="metric", values="value")
    return wide.reset_index()


def effects(cfg, metrics, curves):
    setting = _first_setting(cfg, metrics)
    methods = [m for m in cfg["methods"] if (metrics["method"] == m).any()]
    stages = cfg["settings"][setting]["stages"] if setting else []
    ncol = min(3, max(len(methods), 1))
    nrow = -(-len(methods) // ncol)
    fig, axes = subplots(nrow, ncol, figsize=(3.0 * ncol + 1.6, 2.9 * nrow), squeeze=False)
    for ax in axes.ravel()[len(methods):]:
        ax.set_visible(False)
    for ax, m in zip(axes.ravel(), methods, strict=False):
        w = _pairs(curves, m, setting)
        if len(w):
            nb = int(metrics.loc[metrics["method"] == m, "n_effects"].iloc[0]) // len(stages)
            stage = (w["step"].to_numpy() // nb).astype(int)
            for k in range(len(stages)):
                sel = stage == k
                ax.scatter(w.loc[sel, "true"], w.loc[sel, "est"], s=9, alpha=0.7,
                           color=STAGE_COLORS[k % len(STAGE_COLORS)],
                           label=f"stage {k + 1}: {stages[k]['name']}", linewidths=0)
            lim = float(np.nanmax(np.abs(w[["true", "est"]].to_numpy()))) * 1.1 or 1.0
            ax.plot([-lim, lim], [-lim, lim], ls="--", color=REFERENCE_COLOR, lw=1,
                    label="y = x", zorder=1)
            ticks = [0.0] + [v * 10.0**k for k in range(-2, 4, 2) if 10.0**k <= lim * 1.5
                             for v in (-1.0, 1.0)]
            ax.set_xscale("symlog", linthresh=1e-2)
            ax.set_yscale("symlog", linthresh=1e-2)
            ax.set_xticks(sorted(ticks))
            ax.set_yticks(sorted(ticks))
            r = metrics.loc[metrics["method"] == m, "pearson"].to_numpy(float)
            ax.set_title(f"{method_label(cfg, m)}\nPearson {np.nanmean(r):.2f}",
                         color=PROPOSED_COLOR if m == PROPOSED else "black", fontsize=9)
        ax.set_xlabel("true effect (retrained)", fontsize=9)
        ax.set_ylabel("estimated effect", fontsize=9)
    legend_outside(fig, below=True)
    return fig


def case_study(cfg, metrics, curves):
    setting = _first_setting(cfg, metrics)
    fig, (ax1, ax2) = subplots(1, 2, figsize=(9.0, 3.6))
    e2 = metrics[(metrics["method"] == E2) & (metrics["setting"] == setting)]
    S = len(cfg["settings"][setting]["stages"]) if setting else 0
    x = np.arange(1, S + 1)
    width = 0.38
    for off, col, name, color, z in ((-width / 2, "true_counter_s", "true (retrained)",
                                      BASELINE_COLORS[0], 2.0),
                                     (width / 2, "est_counter_s", "E2 estimate",
                                      PROPOSED_COLOR, 3.0)):
        vals = np.array([e2[f"{col}{k}"].to_numpy(float) for k in x]) if len(e2) else None
        if vals is not None and vals.size:
            ax1.bar(x + off, vals.mean(1), width, yerr=vals.std(1) if vals.shape[1] > 1 else None,
                    color=color, label=name, zorder=z, capsize=2)
    ax1.axhline(0, color=REFERENCE_COLOR, lw=0.8)
    ax1.set_xticks(x, [f"s{k}" for k in x])
    ax1.set_xlabel("stage s")
    ax1.set_ylabel("effect on counter-group loss")
    ax1.set_title("Delta_s f_counter")
    colors = method_colors([E2, "orig", "random"], PROPOSED)
    bars = (("original", "wga_orig", colors["orig"]),
            ("clean\nE2's stage", "wga_chosen", PROPOSED_COLOR),
            ("clean\nrandom stage", "wga_random", colors["random"]))
    for i, (_, col, color) in enumerate(bars):
        v = 100 * e2[col].to_numpy(float) if len(e2) else np.array([])
        if len(v):
            z = method_zorder(E2 if col == "wga_chosen" else "baseline", PROPOSED)
            ax2.bar(i, v.mean(), 0.6, yerr=v.std() if len(v) > 1 else None, color=color,
                    capsize=2, zorder=z)
    ax2.set_xticks(range(len(bars)), [b[0] for b in bars], fontsize=8)
    ax2.set_ylabel("worst-group accuracy (%)")
    if len(e2):
        lo = float(np.nanmin(100 * e2[["wga_orig", "wga_chosen", "wga_random"]].to_numpy()))
        ax2.set_ylim(max(0.0, lo - 10), 100)
    ax2.set_title("Intervention")
    legend_outside(ax1)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"effects": effects(cfg, metrics, curves), "case_study": case_study(cfg, metrics,
                                                                                 curves)}


def _ms(v) -> str:
    v = np.asarray(v, float)
    return f"{np.nanmean(v):.3f} ± {np.nanstd(v):.3f}" if np.isfinite(v).any() else "—"


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    rows = []
    for s in cfg["settings"]:
        for m in cfg["methods"]:
            part = metrics[(metrics["method"] == m) & (metrics["setting"] == s)]
            if not len(part):
                continue
            rows.append({"setting": s, "estimator": method_label(cfg, m),
                         "Pearson": _ms(part["pearson"]), "Spearman": _ms(part["spearman"]),
                         "rel. error f_counter": _ms(part["relerr_counter"]),
                         "rel. error f_aligned": _ms(part["relerr_aligned"]),
                         "identification rate": f"{part['ident'].mean():.2f}",
                         "picks spurious stage": f"{part['picks_spurious'].mean():.2f}",
                         "n seeds": len(part)})
    inter = []
    for s in cfg["settings"]:
        part = metrics[(metrics["method"] == E2) & (metrics["setting"] == s)]
        if not len(part):
            continue
        row = {"setting": s, "original": _ms(100 * part["wga_orig"])}
        for k in range(1, len(cfg["settings"][s]["stages"]) + 1):
            row[f"clean s{k}"] = _ms(100 * part[f"wga_clean_s{k}"])
        row["E2's choice"] = _ms(100 * part["wga_chosen"])
        row["random (expectation)"] = _ms(100 * part["wga_random"])
        row["random (one draw)"] = _ms(100 * part["wga_random_draw"])
        inter.append(row)
    recipe = [{"setting": s, "stage": k, **st, "optimizer": p.get("optimizer")}
              for s, p in cfg["settings"].items() for k, st in enumerate(p["stages"], start=1)]
    return {"Table 1: correlation with the retrained stage effects (mean ± std over seeds), "
            "relative error of the group behaviours, identification rates": pd.DataFrame(rows),
            "Worst-group test accuracy (%) after cleaning each stage (mean ± std over seeds)":
                pd.DataFrame(inter),
            "Stage recipes (as run)": pd.DataFrame(recipe),
            PREMISE_TABLE: pd.DataFrame(premises(cfg, metrics),
                                        columns=["setting", "premise (spec)", "measured",
                                                 "held"])}
