"""Figures 1-3 of the spec (scaling law, speed/quality trade-off, trial growth) and the table."""

from __future__ import annotations

import numpy as np

from icml26.plotting import (
    REFERENCE_COLOR,
    legend_outside,
    method_colors,
    method_label,
    method_zorder,
    pyplot,
    subplots,
)
from icml26.stats import geometric_mean

from . import PROPOSED
from .claims import EXACT, KPP, LSH, curve_table, fitted_slope, manifold_settings

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def _d_colors(ds):
    plt = pyplot()
    cmap = plt.get_cmap("viridis")
    return {d: cmap(0.1 + 0.75 * i / max(1, len(ds) - 1)) for i, d in enumerate(ds)}


def _digits(cfg):
    return [s for s, p in cfg["settings"].items() if (p or {}).get("dataset") == "digits"]


def _headline_k(cfg, curves, setting):
    """The spec's headline k if the setting has it, else its largest k (digits)."""
    steps = curves.loc[curves["setting"] == setting, "step"]
    kh = int(cfg["params"]["k_headline"])
    return kh if (steps == kh).any() else int(steps.max())


def scaling_law(cfg, curves):
    tori = manifold_settings(cfg)
    proxy = cfg["params"].get("scaling_proxy", KPP)
    slope_k = [int(k) for k in cfg["params"]["slope_k"]]
    colors = _d_colors(list(tori))
    fig, ax = subplots(figsize=(8.4, 4.0))
    for d, setting in tori.items():
        table = curve_table(curves, proxy, setting, "cost")
        if table.empty:
            continue
        ks = table.columns.to_numpy(dtype=float)
        mean, std = table.mean(axis=0).to_numpy(), table.std(axis=0, ddof=0).to_numpy()
        s = fitted_slope(curves, proxy, setting, "cost", slope_k,
                         "min" if proxy == "kmeans++lloyd" else "mean")
        ax.errorbar(ks, mean, yerr=std, color=colors[d], marker="o", ms=3, capsize=2,
                    label=f"d={d}: fitted {s:.2f} (theory {-2 / d:.2f})")
        anchor = [k for k in slope_k if k in table.columns] or [ks[0]]
        y0 = float(table[anchor[0]].mean())
        ax.plot(ks, y0 * (ks / anchor[0]) ** (-2.0 / d), "--", color=colors[d], lw=1, alpha=0.7)
    for setting in _digits(cfg):
        table = curve_table(curves, proxy, setting, "cost")
        if table.empty:
            continue
        ks = table.columns.to_numpy(dtype=float)
        s = fitted_slope(curves, proxy, setting, "cost", list(table.columns))
        ax.errorbar(ks, table.mean(axis=0), yerr=table.std(axis=0, ddof=0), color="#777777",
                    marker="s", ms=3, capsize=2, ls=":", label=f"{setting}: fitted {s:.2f}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("k (number of centres)")
    ax.set_ylabel(f"cost / n ({method_label(cfg, proxy)})")
    ax.set_title("Scaling law: cost ~ k^(-2/d) (dashed: slope -2/d)")
    legend_outside(fig)
    return fig


def tradeoff(cfg, curves):
    panels = list(manifold_settings(cfg).values()) + _digits(cfg)
    methods = [m for m in cfg["methods"] if (curves["method"] == m).any()]
    colors = method_colors(methods, PROPOSED)
    markers = {m: MARKERS[i % len(MARKERS)] for i, m in enumerate(methods)}
    fig, axes = subplots(1, len(panels), figsize=(3.4 * len(panels), 3.8), squeeze=False)
    for ax, setting in zip(axes[0], panels, strict=True):
        k = _headline_k(cfg, curves, setting)
        ref = curve_table(curves, KPP, setting, "cost")
        points = {}
        for m in methods:
            ev = curve_table(curves, m, setting, "evals")
            cost = curve_table(curves, m, setting, "cost")
            if ev.empty or k not in ev.columns or ref.empty:
                continue
            seeds = cost.index.intersection(ref.index)
            ratio = (cost.loc[seeds, k] / ref.loc[seeds, k]).to_numpy()
            points[m] = (ev[k].to_numpy(), ratio)
        positive = [x.mean() for x, _ in points.values() if x.mean() > 0]
        # a seeding without distance evaluations (uniform) cannot sit on a log axis: it is
        # drawn at the left edge and marked "0 evals"
        left = min(positive) / 8 if positive else 1.0
        for m, (x, ratio) in points.items():
            zero = x.mean() <= 0
            ax.errorbar(left if zero else x.mean(), ratio.mean(), xerr=None if zero else x.std(),
                        yerr=ratio.std(), color=colors[m], marker=markers[m], ms=6, capsize=2,
                        label=method_label(cfg, m), clip_on=False,
                        zorder=method_zorder(m, PROPOSED))
            if zero:
                ax.annotate("0 evals", (left, ratio.mean()), textcoords="offset points",
                            xytext=(7, -3), fontsize=8, color=colors[m])
        ax.axhline(1.0, color=REFERENCE_COLOR, lw=0.8, ls="--")
        ax.set_xscale("log")
        ax.set_xlim(left / 1.5, max(positive, default=10.0) * 3)
        ax.set_xlabel("distance-equivalents")
        ax.set_title(f"{setting}, k = {k}")
    axes[0][0].set_ylabel("cost / k-means++ cost (same seed)")
    legend_outside(fig, *axes[0][0].get_legend_handles_labels(), below=True,
                   ncol=min(5, len(methods)))
    return fig


def trials(cfg, curves):
    tori = manifold_settings(cfg)
    slope_k = [int(k) for k in cfg["params"]["slope_k"]]
    colors = _d_colors(list(tori))
    fig, ax = subplots(figsize=(8.4, 4.0))
    for d, setting in tori.items():
        table = curve_table(curves, EXACT, setting, "trials")
        if table.empty:
            continue
        ks = table.columns.to_numpy(dtype=float)
        t = fitted_slope(curves, EXACT, setting, "trials", slope_k)
        ax.plot(ks, table.mean(axis=0), "-o", ms=3, color=colors[d],
                label=f"d={d} exact: fitted {t:.2f} (theory {1 + 2 / d:.2f})")
        lsh = curve_table(curves, LSH, setting, "trials")
        if not lsh.empty:
            ax.plot(lsh.columns.to_numpy(dtype=float), lsh.mean(axis=0), "--", marker="x", ms=3,
                    color=colors[d], lw=1.2, label=f"d={d} LSH")
        anchor = [k for k in slope_k if k in table.columns] or [ks[0]]
        y0 = float(table[anchor[0]].mean())
        ax.plot(ks, y0 * (ks / anchor[0]) ** (1.0 + 2.0 / d), ":", color=REFERENCE_COLOR, lw=1)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("k (number of centres)")
    ax.set_ylabel("trials (proposals) until k centres")
    ax.set_title("Qkmeans trials ~ k^(1+2/d) (dotted: reference slope)")
    legend_outside(fig)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"scaling_law": scaling_law(cfg, curves), "tradeoff": tradeoff(cfg, curves),
            "trials": trials(cfg, curves)}


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    rows = []
    panels = list(manifold_settings(cfg).values()) + _digits(cfg)
    for setting in panels:
        k = _headline_k(cfg, curves, setting)
        ref_cost = curve_table(curves, KPP, setting, "cost")
        ref_ev = curve_table(curves, KPP, setting, "evals")
        for m in cfg["methods"]:
            cost = curve_table(curves, m, setting, "cost")
            ev = curve_table(curves, m, setting, "evals")
            if cost.empty or k not in cost.columns:
                continue
            tr = curve_table(curves, m, setting, "trials")
            seeds = cost.index.intersection(ref_cost.index)
            ratio = (cost.loc[seeds, k] / ref_cost.loc[seeds, k]).to_numpy()
            rows.append({
                "setting": setting, "k": k, "method": m,
                "cost ratio (geo. mean)": geometric_mean(ratio) if ratio.size else np.nan,
                "distance-equivalents": float(ev[k].mean()),
                "evals / k-means++": float((ev.loc[seeds, k] / ref_ev.loc[seeds, k]).mean()),
                "trials": float(tr[k].mean()) if not tr.empty and k in tr.columns else np.nan,
            })
    eps_rows = []
    for setting, p in cfg["settings"].items():
        part = metrics[(metrics["method"] == LSH) & (metrics["setting"] == setting)]
        if not len(part) or "eps_hat" not in part:
            continue
        e = part["eps_hat"].to_numpy(dtype=float)
        d = (p or {}).get("d")
        eps_rows.append({
            "setting": setting, "2/d": 2.0 / d if d else np.nan,
            "eps_hat (mean)": float(e.mean()), "eps_hat (std)": float(e.std()),
            "d_hat = 2/eps_hat": 2.0 / float(e.mean()) if e.mean() > 0 else np.nan,
        })
    return {
        f"Cost ratio and work at the headline k (k = {cfg['params']['k_headline']}; digits: "
        "largest k)": pd.DataFrame(rows),
        "Pilot estimate of the quantization exponent": pd.DataFrame(eps_rows),
    }
