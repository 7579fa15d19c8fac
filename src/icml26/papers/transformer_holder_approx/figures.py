"""Fig. 1 (error vs blocks), Fig. 2 (excess risk vs n) and the spec's table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from icml26 import plotting

from .claims import TRANSFORMER, approx_table, decay_slope, reg_slopes, table

MLP = "mlp"
# one colour per target (targets, not methods, are the lines here)
TARGET_COLORS = ["#1b9e77", "#7570b3", "#d95f02", "#e7298a", "#66a61e"]
MARKERS = ["o", "s", "^", "D", "v"]


def _targets(cfg, metrics):
    have = set(metrics.loc[metrics["method"] == TRANSFORMER, "setting"])
    return [s for s in cfg["settings"] if s in have]


def _label(cfg, s):
    p = cfg["settings"][s]
    return f"{s} (α={p['alpha']:g}, d₀={p['d0']})"


def make(cfg, metrics, curves):
    figs = {}
    fig, ax = plotting.subplots(figsize=(7.2, 4.0))
    for k, s in enumerate(_targets(cfg, metrics)):
        col, mk = TARGET_COLORS[k % 5], MARKERS[k % 5]
        blocks, t = approx_table(cfg, metrics, s)
        E = t.to_numpy(float)
        m = np.nanmean(E, axis=0)
        a = -decay_slope(blocks, E)
        ax.plot(blocks, m, color=col, marker=mk, label=f"{_label(cfg, s)}: a = {a:.2f}",
                zorder=3)
        ax.fill_between(blocks, np.nanmin(E, axis=0), np.nanmax(E, axis=0), color=col,
                        alpha=0.15, linewidth=0, zorder=2.5)
        ref = cfg["settings"][s]["alpha"] / cfg["settings"][s]["d0"]
        ax.plot(blocks, m[0] * (np.asarray(blocks, float) / blocks[0]) ** (-ref), color=col,
                linestyle="--", linewidth=1.0, zorder=2, label=f"{s}: reference slope −{ref:g}")
        mb = sorted(int(n) for n in cfg["params"]["mlp_blocks"])
        tm = table(metrics, s, [f"l2_N{n}" for n in mb], MLP)
        if len(tm) and np.isfinite(tm.to_numpy(float)).any():
            ax.plot(mb, np.nanmean(tm.to_numpy(float), axis=0), color=col, marker="x",
                    linestyle="none", markersize=9, zorder=3,
                    label=f"{s}: ReLU MLP (matched params)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("Transformer blocks N")
    ax.set_ylabel("grid L2 error e(N)")
    ax.set_title("Approximation error vs blocks (Experiment A)")
    plotting.legend_outside(ax, fontsize=8)
    figs["approx_vs_blocks"] = fig

    fig, ax = plotting.subplots(figsize=(7.2, 4.0))
    ns = [int(n) for n in cfg["params"]["n_grid"]]
    for k, s in enumerate(_targets(cfg, metrics)):
        col, mk = TARGET_COLORS[k % 5], MARKERS[k % 5]
        R = table(metrics, s, [f"R_n{n}" for n in ns]).to_numpy(float)
        m = np.nanmean(R, axis=0)
        b = reg_slopes(cfg, metrics, s).mean()
        ax.plot(ns, m, color=col, marker=mk, zorder=3, label=f"{_label(cfg, s)}: b = {b:.2f}")
        ax.fill_between(ns, np.nanmin(R, axis=0), np.nanmax(R, axis=0), color=col, alpha=0.15,
                        linewidth=0, zorder=2.5)
        p = cfg["settings"][s]
        ref = -2 * p["alpha"] / (2 * p["alpha"] + p["d0"])
        ax.plot(ns, m[0] * (np.asarray(ns, float) / ns[0]) ** ref, color=col, linestyle="--",
                linewidth=1.0, zorder=2, label=f"{s}: minimax slope {ref:.2f}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("training samples n")
    ax.set_ylabel("excess risk R(n)")
    ax.set_title(f"Excess risk vs n (Experiment B, N = {cfg['params']['reg_blocks']})")
    plotting.legend_outside(ax, fontsize=8)
    figs["excess_risk_vs_n"] = fig
    return {name: figs[name] for name in cfg["figures"]}


def tables(cfg, metrics, curves):
    rows = []
    for s in _targets(cfg, metrics):
        p = cfg["settings"][s]
        blocks, t = approx_table(cfg, metrics, s)
        b = reg_slopes(cfg, metrics, s)
        rows.append({"target": s, "alpha": p["alpha"], "d0": p["d0"],
                     "fitted a (A, seed means)": -decay_slope(blocks, t.to_numpy(float)),
                     "theory alpha/d0": p["alpha"] / p["d0"],
                     "fitted b (B, mean over seeds)": float(b.mean()),
                     "b s.d. over seeds": float(b.std(ddof=1)) if b.notna().sum() > 1 else np.nan,
                     "minimax -2a/(2a+d0)": -2 * p["alpha"] / (2 * p["alpha"] + p["d0"])})
    out = {"Fitted exponents vs theory": pd.DataFrame(rows)}
    rows = []
    for s in _targets(cfg, metrics):
        for n in sorted(int(n) for n in cfg["params"]["mlp_blocks"]):
            tr = table(metrics, s, [f"l2_N{n}", f"max_N{n}", f"train_rmse_N{n}",
                                    f"params_N{n}"])
            ml = table(metrics, s, [f"l2_N{n}", f"max_N{n}", f"params_N{n}"], MLP)
            if not len(ml):
                continue
            rows.append({"target": s, "N": n,
                         "Transformer params": tr[f"params_N{n}"].mean(),
                         "MLP params": ml[f"params_N{n}"].mean(),
                         "Transformer L2": tr[f"l2_N{n}"].mean(),
                         "MLP L2": ml[f"l2_N{n}"].mean(),
                         "Transformer max": tr[f"max_N{n}"].mean(),
                         "MLP max": ml[f"max_N{n}"].mean(),
                         "Transformer train RMSE": tr[f"train_rmse_N{n}"].mean()})
    out["Transformer vs ReLU MLP at matched parameters (seed means)"] = pd.DataFrame(rows)
    stops = []
    for s in _targets(cfg, metrics):
        ns = [int(n) for n in cfg["params"]["n_grid"]]
        st = table(metrics, s, [f"stop_n{n}" for n in ns]).mean()
        stops.append({"target": s, **{f"n={n}": st[f"stop_n{n}"] for n in ns}})
    out["Experiment B: mean early-stopping step (best validation)"] = pd.DataFrame(stops)
    return out
