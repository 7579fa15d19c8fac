"""Fig. 1 (gain vs complexity), test MSE per dataset, the adapter ablation, validation curves;
Tables 1 (MSE per method x dataset), 2 (ablation), 3 (complexities and gains) and 4 (the
grid's premise per seed: TC by T level, MC by M level)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from icml26.plotting import (
    PROPOSED_ZORDER,
    legend_outside,
    method_colors,
    method_label,
    method_style,
    method_zorder,
    subplots,
)
from icml26.stats import spearman

from . import PROPOSED
from .claims import (
    GAIN_METHODS,
    LORA,
    NOCHAN,
    NOFREQ,
    TP,
    ZS,
    gains,
    grid_settings,
    is_complex,
    per_dataset,
    table,
)


def _z(x):
    x = np.asarray(x, float)
    return (x - x.mean()) / x.std() if x.std() > 0 else np.zeros_like(x)


def complexity_gain(cfg, metrics):
    fig, axes = subplots(1, 2, figsize=(9.0, 3.8), sharey=True)
    tab = per_dataset(cfg, metrics) if len(metrics) else pd.DataFrame()
    g = gains(metrics)
    for ax, col, name in ((axes[0], "tc", "temporal complexity TC"),
                          (axes[1], "mc", "multichannel complexity MC")):
        if len(tab):
            sd = []
            for s in tab.index:
                best = tab.loc[s, list(GAIN_METHODS)].astype(float).idxmax()
                sd.append(float(g.xs(s, level="setting")[best].std()))
            rho = spearman(tab[col], tab["G*"])
            ax.errorbar(tab[col], tab["G*"], yerr=sd, fmt="o", color="#c0392b", capsize=2,
                        zorder=PROPOSED_ZORDER, label=f"{name}: Spearman rho = {rho:.2f}")
            for s in tab.index:
                ax.annotate(s, (tab.loc[s, col], tab.loc[s, "G*"]), fontsize=8,
                            xytext=(3, 3), textcoords="offset points")
        ax.set_xlabel(name)
    axes[0].set_ylabel("achievable gain G* (1 - MSE / MSE zero-shot)")
    if len(tab) >= 3:
        rho = spearman(_z(tab["tc"]) + _z(tab["mc"]), tab["G*"])
        axes[1].plot([], [], " ", label=f"z(TC) + z(MC): Spearman rho = {rho:.2f}")
    legend_outside(fig, below=True)
    return fig


def mse_by_dataset(cfg, metrics):
    settings = list(cfg["settings"])
    methods = [m for m in cfg["methods"] if (metrics["method"] == m).any()]
    colors = method_colors(methods, PROPOSED)
    grid = grid_settings(cfg)
    fig, ax = subplots(figsize=(max(8.0, 0.9 * len(settings) + 2), 3.8))
    width = 0.8 / max(len(methods), 1)
    for k, m in enumerate(methods):
        part = metrics[metrics["method"] == m].groupby("setting")["test_mse"]
        mean, sd = part.mean().reindex(settings), part.std().reindex(settings)
        x = np.arange(len(settings)) + (k - (len(methods) - 1) / 2) * width
        ax.bar(x, mean, width, yerr=sd, color=colors[m], capsize=1.5,
               label=method_label(cfg, m), zorder=method_zorder(m, PROPOSED))
    ticks = [s + (" *" if s in grid and is_complex(grid[s]) else "") for s in settings]
    ax.set_xticks(range(len(settings)), ticks, rotation=30, ha="right")
    ax.set_ylabel("test MSE (normalised scale)")
    legend_outside(ax)
    return fig


def ablation(cfg, metrics):
    grid = grid_settings(cfg)
    complex_ = [s for s, tm in grid.items() if is_complex(tm)]
    methods = [m for m in (TP, NOFREQ, NOCHAN) if (metrics["method"] == m).any()]
    colors = method_colors(methods, PROPOSED)
    fig, ax = subplots(figsize=(8.0, 3.6))
    t = table(metrics)
    width = 0.8 / max(len(methods), 1)
    for k, m in enumerate(methods):
        vals, sds = [], []
        for s in complex_:
            if s in t.index.get_level_values(0) and m in t and TP in t:
                r = (t.xs(s, level="setting")[m] / t.xs(s, level="setting")[TP]).astype(float)
                vals.append(r.mean())
                sds.append(r.std())
            else:
                vals.append(np.nan)
                sds.append(np.nan)
        x = np.arange(len(complex_)) + (k - (len(methods) - 1) / 2) * width
        ax.bar(x, vals, width, yerr=sds, color=colors[m], capsize=2,
               label=method_label(cfg, m), zorder=method_zorder(m, PROPOSED))
    ax.axhline(1.0, color="#999999", lw=1, ls="--")
    ax.set_xticks(range(len(complex_)), complex_, rotation=20, ha="right")
    ax.set_ylabel("test MSE / MSE of Time-PEFT")
    legend_outside(ax)
    return fig


def validation_curves(cfg, curves):
    fig, ax = subplots(figsize=(7.6, 3.6))
    v = curves[curves["metric"] == "val_mse"]
    methods = [m for m in cfg["methods"] if m != ZS and (v["method"] == m).any()]
    if len(v):
        start = v[v["step"] == 0].set_index(["setting", "seed", "method"])["value"]
        for m in methods:
            part = v[v["method"] == m]
            rel = part["value"].to_numpy(float) / start.reindex(
                pd.MultiIndex.from_frame(part[["setting", "seed", "method"]])).to_numpy(float)
            curve = pd.Series(rel, index=part["step"].to_numpy()).groupby(level=0).mean()
            style = method_style(m, cfg["methods"], PROPOSED)
            style["label"] = method_label(cfg, m)
            ax.plot(curve.index, curve.to_numpy(), marker="o", markersize=3, **style)
    ax.axhline(1.0, color="#999999", lw=1, ls="--")
    ax.set_xlabel("fine-tuning step")
    ax.set_ylabel("validation MSE / zero-shot")
    legend_outside(ax)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"complexity_gain": complexity_gain(cfg, metrics),
            "mse_by_dataset": mse_by_dataset(cfg, metrics),
            "ablation": ablation(cfg, metrics),
            "validation_curves": validation_curves(cfg, curves)}


def _fmt(v):
    v = np.asarray(v, float)
    return f"{np.mean(v):.4f} ± {np.std(v, ddof=1) if len(v) > 1 else 0.0:.4f}" if len(v) else "—"


def tables(cfg, metrics, curves) -> dict:
    grid = grid_settings(cfg)
    settings = list(cfg["settings"])
    rows = []
    for m in cfg["methods"]:
        part = metrics[metrics["method"] == m]
        row = {"method": method_label(cfg, m)}
        for s in settings:
            name = s + (" *" if s in grid and is_complex(grid[s]) else "")
            v = part.loc[part["setting"] == s, "test_mse"]
            row[name] = _fmt(v) if len(v) else "—"
        n = part["n_trainable"].dropna()
        row["trainable parameters"] = f"{int(n.iloc[0])}" if len(n) else "—"
        rows.append(row)
    out = {"Table 1: test MSE per method x dataset (mean ± s.d. over seeds; * complex)":
           pd.DataFrame(rows)}
    complex_ = [s for s, tm in grid.items() if is_complex(tm)]
    t = table(metrics)
    rows = []
    for s in complex_:
        if s not in t.index.get_level_values(0):
            continue
        part = t.xs(s, level="setting")
        row = {"dataset": s}
        for m in (TP, NOFREQ, NOCHAN, LORA):
            if m in part:
                row[method_label(cfg, m)] = _fmt(part[m].dropna())
        for m in (NOFREQ, NOCHAN):
            if m in part:
                row[f"{method_label(cfg, m)} / Time-PEFT"] = _fmt((part[m] / part[TP]).dropna())
        rows.append(row)
    out["Table 2: ablation of the two adapters on the complex datasets"] = pd.DataFrame(rows)
    if len(metrics):
        tab = per_dataset(cfg, metrics)
        tab = tab.rename(columns={m: f"G {method_label(cfg, m)}" for m in GAIN_METHODS})
        out["Table 3: complexities and fine-tuning gains per grid dataset (seed means)"] = (
            tab.round(4).reset_index().rename(columns={"index": "dataset"}))
    zs = metrics[(metrics["method"] == ZS) & metrics["setting"].isin(list(grid))]
    if len(zs):
        lev = zs.assign(T=zs["setting"].map(lambda s: grid[s][0]),
                        M=zs["setting"].map(lambda s: grid[s][1]))
        tc = lev.groupby(["seed", "T"])["tc"].mean().unstack("T").reindex(
            columns=["low", "mid", "high"])
        mc = lev.groupby(["seed", "M"])["mc"].mean().unstack("M").reindex(
            columns=["none", "mid", "high"])
        prem = pd.concat([tc.add_prefix("TC T-"), mc.add_prefix("MC M-")], axis=1)
        prem["TC low < mid < high"] = np.where((tc["low"] < tc["mid"]) & (tc["mid"] < tc["high"]),
                                               "yes", "no")
        rule = cfg.get("params", {}).get("amplitude_rule", "equal-variance")
        out[f"Table 4: premise of the grid per seed: mean TC by T level and MC by M level "
            f"(amplitude rule {rule})"] = prem.round(4).reset_index()
    return out
