"""Fig. 1 convergence, Fig. 2 uniqueness, Fig. 3 kappa scaling, and the summary table."""

from __future__ import annotations

import numpy as np

from icml26.plotting import (
    REFERENCE_COLOR,
    band_style,
    legend_outside,
    method_label,
    method_style,
    subplots,
)
from icml26.stats import loglog_slope

from . import PROPOSED
from .claims import (
    CLASSIC,
    best_step,
    best_t_eps,
    chain,
    curve_stats,
    feature_sets,
    kappa,
    literal_t_eps,
    per_seed,
)
from .experiment import metric_name


def _style(cfg, method):
    style = method_style(method, cfg["methods"], PROPOSED)
    style["label"] = method_label(cfg, method)
    if method.endswith("-raw"):  # ablation
        style["linestyle"] = "--"
    return style


def _chain_title(cfg, metrics, setting):
    n, p = chain(cfg, setting)
    return f"p={p:g}, n={n} (kappa={kappa(metrics, setting):.1f})"


def convergence(cfg, metrics, stats):
    settings, feats = list(cfg["settings"]), feature_sets(cfg)
    # each panel has its own best step size a per method, hence one legend per panel
    fig, axes = subplots(len(feats), len(settings), squeeze=False, sharex=True,
                         figsize=(5.6 * len(settings), 2.8 * len(feats)))
    for i, F in enumerate(feats):
        for j, s in enumerate(settings):
            ax = axes[i, j]
            for method in cfg["methods"]:
                a = best_step(cfg, metrics, method, s, F, "Ec")
                c = stats.get((method, s, metric_name("Ec", F, a)))
                if c is None or c["mean"].isna().all():
                    continue
                style = _style(cfg, method)
                style["label"] = f"{style['label']} (a={a:g})"
                ax.plot(c.index, c["mean"], **style)
                sd = c["std"].fillna(0)
                ax.fill_between(c.index, np.maximum(c["mean"] - sd, 1e-3), c["mean"] + sd,
                                **band_style(style))
            ax.axhline(float(cfg["params"]["epsilon"]), color=REFERENCE_COLOR, lw=0.8, ls=":")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.minorticks_off()  # minor log tick labels dominate the drawing time
            ax.set_title(f"{F}: {_chain_title(cfg, metrics, s)}")
            if i == len(feats) - 1:
                ax.set_xlabel("step t")
            if j == 0:
                ax.set_ylabel("E_c(t)")
            legend_outside(ax)
    return fig


def uniqueness(cfg, metrics):
    settings, feats, methods = list(cfg["settings"]), feature_sets(cfg), cfg["methods"]
    fig, axes = subplots(1, len(settings), squeeze=False, sharey=True,
                         figsize=(3.6 * len(settings) + 1.8, 3.2))
    width = 0.8 / len(methods)
    for j, s in enumerate(settings):
        ax = axes[0, j]
        for m, method in enumerate(methods):
            means, sds = [], []
            for F in feats:
                a = best_step(cfg, metrics, method, s, F, "Ec")
                x = per_seed(cfg, metrics, method, s, "offset_spread", F, a).to_numpy(float)
                means.append(np.nanmean(x) if np.isfinite(x).any() else np.nan)
                sds.append(np.nanstd(x) if np.isfinite(x).sum() > 1 else 0.0)
            style = _style(cfg, method)
            ax.bar(np.arange(len(feats)) + (m - (len(methods) - 1) / 2) * width, means, width,
                   yerr=sds, color=style["color"], label=style["label"],
                   hatch="//" if method.endswith("-raw") else None, capsize=2,
                   error_kw={"lw": 0.8}, zorder=style["zorder"])
        ax.set_yscale("log")
        ax.minorticks_off()
        ax.set_xticks(np.arange(len(feats)))
        ax.set_xticklabels([f"{F} (control)" if F == "F3" else F for F in feats])
        ax.set_title(_chain_title(cfg, metrics, s))
        if j == 0:
            ax.set_ylabel("offset spread over theta_0 at T")
    legend_outside(fig)
    return fig


def kappa_scaling(cfg, metrics, stats):
    sizes = sorted({chain(cfg, s)[0] for s in cfg["settings"]})
    fig, axes = subplots(1, len(sizes), squeeze=False, figsize=(6.4 * len(sizes), 3.6))
    for ax, n in zip(axes[0], sizes, strict=True):
        chains = sorted((s for s in cfg["settings"] if chain(cfg, s)[0] == n),
                        key=lambda s: kappa(metrics, s))
        ks = np.array([kappa(metrics, s) for s in chains])
        anchor = None
        for method in (PROPOSED, CLASSIC):
            if method not in cfg["methods"] or "F1" not in feature_sets(cfg):
                continue
            ts = np.array([literal_t_eps(cfg, stats, metrics, method, s, "F1") for s in chains])
            ok = np.isfinite(ts)
            style = _style(cfg, method)
            if ok.sum() >= 2:
                style["label"] += f" (slope {loglog_slope(ks[ok], ts[ok]):.2f})"
            ax.plot(ks[ok], ts[ok], marker="o", **style)
            if anchor is None and ok.any():
                anchor = (ks[ok][0], ts[ok][0])
        if anchor is not None:
            grid = np.geomspace(ks.min(), ks.max(), 20)
            for power, ls in ((2, "--"), (4, ":")):
                ax.plot(grid, anchor[1] * (grid / anchor[0]) ** power, color=REFERENCE_COLOR,
                        ls=ls, lw=1.0, label=f"slope {power}")
        if anchor is None:  # e.g. smoke: E_c never reached epsilon
            ax.text(0.5, 0.5, "T_eps not reached on any chain", ha="center",
                    transform=ax.transAxes)
        else:
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.minorticks_off()
            ax.set_xticks(ks, [f"{k:.1f}" for k in ks])
        ax.set_xlabel("condition number kappa")
        ax.set_ylabel(f"T_eps (E_c <= {cfg['params']['epsilon']:g}), F1")
        ax.set_title(f"n={n}: samples to accuracy (a of lowest final E_c)")
        legend_outside(ax)
    return fig


def make(cfg, metrics, curves) -> dict:
    stats = curve_stats(curves)
    return {
        "convergence": convergence(cfg, metrics, stats),
        "uniqueness": uniqueness(cfg, metrics),
        "kappa_scaling": kappa_scaling(cfg, metrics, stats),
    }


def _mean_sd(x) -> str:
    x = np.asarray(x, float)
    if not np.isfinite(x).any():
        return "–"
    if np.isfinite(x).sum() < 2:
        return f"{np.nanmean(x):.3g}"
    return f"{np.nanmean(x):.3g} ± {np.nanstd(x, ddof=1):.2g}"


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    rows, stats = [], curve_stats(curves)
    for s in cfg["settings"]:
        for F in feature_sets(cfg):
            for method in cfg["methods"]:
                a = best_step(cfg, metrics, method, s, F, "Ec")
                t, a_t = best_t_eps(cfg, stats, method, s, F)

                def col(kind, a=a, method=method, F=F, s=s):
                    return _mean_sd(per_seed(cfg, metrics, method, s, kind, F, a))

                rows.append({
                    "chain": s, "kappa": f"{kappa(metrics, s):.1f}", "features": F,
                    "method": method_label(cfg, method), "a (best E_c)": f"{a:g}",
                    "E_c(T)": col("Ec"), "E_theta(T)": col("Etheta"),
                    "offset spread": col("offset_spread"),
                    "T_eps (best a)": f"{t:.0f} (a={a_t:g})" if np.isfinite(t) else "not reached",
                })
    title = ("Final errors at T per method x chain x feature set (mean ± s.d. over seeds, "
             "step size with the lowest mean final E_c; T_eps with the step size reaching "
             "epsilon first)")
    return {title: pd.DataFrame(rows)}
