"""Fig. 1 (accuracy vs local perturbation), Fig. 2 (pseudometric + objective vs start) and
Tables 1-2 of the CDOT spec."""

from __future__ import annotations

import numpy as np
import pandas as pd

from icml26.plotting import (
    REFERENCE_COLOR,
    legend_outside,
    method_colors,
    method_label,
    method_zorder,
    subplots,
)

from . import PROPOSED
from .experiment import kind, perturbation

FIG1_ORDER = ("G1", "L1", "L2", "L3")


def _per_seed(metrics, method, settings, col) -> pd.Series:
    """Per-seed mean of ``col`` over the given settings."""
    rows = metrics[(metrics["method"] == method) & metrics["setting"].isin(settings)]
    if col not in rows.columns or rows.empty:
        return pd.Series(dtype=float)
    return rows.groupby("seed")[col].mean()


def _families(cfg) -> dict[str, list[str]]:
    fam: dict[str, list[str]] = {}
    for s in cfg["settings"]:
        if kind(cfg, s) == "matching" and perturbation(cfg, s) in FIG1_ORDER:
            fam.setdefault(perturbation(cfg, s), []).append(s)
    return {f: fam[f] for f in FIG1_ORDER if f in fam}


def _fig_accuracy(cfg, metrics, curves, colors):
    fam = _families(cfg)
    fig, ax = subplots(figsize=(7.4, 3.6))
    xs = np.arange(len(fam))
    n_starts = int(cfg["params"]["starts"])
    # FGW from the random starts: one box per perturbation (instances x seeds x starts)
    rand = curves[(curves["method"] == "FGW") & (curves["metric"] == "acc_start")
                  & (curves["step"] % n_starts != 0)]
    boxes = [rand[rand["setting"].isin(settings)]["value"].to_numpy() for settings in fam.values()]
    if any(b.size for b in boxes):
        bp = ax.boxplot([b if b.size else [np.nan] for b in boxes], positions=xs, widths=0.35,
                        patch_artist=True, manage_ticks=False,
                        zorder=method_zorder("FGW", PROPOSED))
        for patch in bp["boxes"]:
            patch.set_facecolor(colors["FGW"])
            patch.set_alpha(0.25)
        ax.plot([], [], color=colors["FGW"], alpha=0.5, linewidth=6,
                label=f"{method_label(cfg, 'FGW')} (random starts)")
    for method, style, name in (("FGW", "--", f"{method_label(cfg, 'FGW')} (product start)"),
                                ("CDOT", "-", f"{method_label(cfg, 'CDOT')} (any start)")):
        per = [_per_seed(metrics, method, settings, "acc") for settings in fam.values()]
        mean = np.array([p.mean() if len(p) else np.nan for p in per])
        sd = np.array([p.std(ddof=1) if len(p) > 1 else 0.0 for p in per])
        ax.errorbar(xs, mean, yerr=sd, color=colors[method], linestyle=style, marker="o",
                    capsize=3, linewidth=2.2 if method == PROPOSED else 1.4, label=name,
                    zorder=method_zorder(method, PROPOSED))
    ax.set_xticks(xs, list(fam))
    ax.set_xlabel("perturbation (global noise -> growing local displacement)")
    ax.set_ylabel("matching accuracy")
    ax.set_ylim(0, 1.02)
    legend_outside(fig)
    return fig


def _fig_pseudometric(cfg, metrics, curves, colors):
    fig, (ax1, ax2) = subplots(1, 2, figsize=(10.4, 3.6))
    pseudo = [s for s in cfg["settings"] if kind(cfg, s) == "pseudometric"]
    methods = [m for m in ("FGW", "CDOT") if m in cfg["methods"]]
    for x, m in enumerate(methods):
        per = _per_seed(metrics, m, pseudo, "tri_viol")
        if len(per):
            ax1.bar(x, per.mean(), color=colors[m], alpha=0.8, width=0.6,
                    zorder=method_zorder(m, PROPOSED))
            ax1.scatter(np.full(len(per), x), per.to_numpy(), color="k", s=10, zorder=4)
            ratio = _per_seed(metrics, m, pseudo, "tri_ratio_max").max()
            ax1.annotate(f"max d(X,Z)/(d(X,Y)+d(Y,Z))\n= {ratio:.3f}", (x, per.mean()),
                         xytext=(0, 8), textcoords="offset points", ha="center", fontsize=8)
    ax1.axhline(0.02, color=REFERENCE_COLOR, linestyle=":", label="2% (claim)")
    ax1.set_ylim(0, 0.03)
    ax1.set_xticks(range(len(methods)), [method_label(cfg, m) for m in methods])
    ax1.set_ylabel("triangle-violation rate of sqrt(F)")
    ax1.set_title("(a) pseudometric check")

    n_starts = int(cfg["params"]["starts"])
    obj = curves[curves["metric"] == "obj_start"].copy()
    lo, hi = np.inf, -np.inf
    for m in methods:
        rows = obj[obj["method"] == m].copy()
        if rows.empty:
            continue
        rows["instance"] = rows["step"] // n_starts
        rows["start"] = rows["step"] % n_starts
        key = ["setting", "seed", "instance"]
        prod = rows[rows["start"] == 0].set_index(key)["value"]
        rand = rows[rows["start"] > 0].join(prod.rename("product"), on=key)
        ax2.scatter(rand["product"], rand["value"], s=12, alpha=0.6, color=colors[m],
                    label=method_label(cfg, m), zorder=method_zorder(m, PROPOSED))
        vals = np.r_[rand["product"].to_numpy(), rand["value"].to_numpy()]
        vals = vals[vals > 0]
        if vals.size:
            lo, hi = min(lo, vals.min()), max(hi, vals.max())
    if np.isfinite(lo):
        ax2.plot([lo, hi], [lo, hi], color=REFERENCE_COLOR, linestyle=":", linewidth=1)
        ax2.set_xscale("log")
        ax2.set_yscale("log")
    ax2.set_xlabel("objective from the product start")
    ax2.set_ylabel("objective from a random start")
    ax2.set_title("(b) one value per instance for CDOT")
    legend_outside(fig)
    return fig


def make(cfg, metrics, curves) -> dict:
    colors = method_colors(cfg["methods"], PROPOSED)
    return {
        "accuracy_vs_perturbation": _fig_accuracy(cfg, metrics, curves, colors),
        "pseudometric_and_starts": _fig_pseudometric(cfg, metrics, curves, colors),
    }


def _fmt(values) -> str:
    v = pd.Series(values, dtype=float).dropna()
    if v.empty:
        return ""
    return f"{v.mean():.3f} ± {v.std(ddof=1):.3f}" if len(v) > 1 else f"{v.mean():.3f}"


def tables(cfg, metrics, curves) -> dict:
    out = {}
    cols = {"acc": "accuracy (product start)", "acc_avg": "init-averaged accuracy",
            "acc_sd": "stability s.d.", "mse": "MSE", "disp_gap": "dispersion gap GW - Δ"}
    rows = []
    for s in (s for s in cfg["settings"] if kind(cfg, s) == "matching"):
        for m in cfg["methods"]:
            sub = metrics[(metrics["method"] == m) & (metrics["setting"] == s)]
            if sub.empty:
                continue
            rows.append({"setting": s, "method": method_label(cfg, m),
                         **{name: _fmt(sub[c]) for c, name in cols.items() if c in sub}})
    if rows:
        out["Table 1: point-cloud matching (mean ± s.d. over seeds)"] = pd.DataFrame(rows)
    rows = []
    for s in (s for s in cfg["settings"] if kind(cfg, s) == "graphs"):
        for m in cfg["methods"]:
            sub = metrics[(metrics["method"] == m) & (metrics["setting"] == s)]
            if sub.empty:
                continue
            row = {"setting": s, "method": method_label(cfg, m),
                   "3-NN LOO accuracy": _fmt(sub["knn_acc"]), "mean chosen α": _fmt(sub["alpha"])}
            if "svm_acc" in sub and sub["svm_acc"].notna().any():
                row["SVM 5-fold accuracy"] = _fmt(sub["svm_acc"])
            rows.append(row)
    if rows:
        out["Table 2: graph classification (mean ± s.d. over seeds)"] = pd.DataFrame(rows)
    return out
