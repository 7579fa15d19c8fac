"""Learning curves (headline), ablation bars, shaping diagnostic, and the main results table."""

from __future__ import annotations

import numpy as np

from icml26.plotting import band_style, legend_outside, method_label, method_style, subplots

from . import PROPOSED
from .claims import BASELINES, gain_over_best, per_seed

ABLATIONS = ("LAGEA", "LAGEA-NOKEY", "LAGEA-CONST", "LAGEA-REFLKEY", "LAGEA-SPEC")
VARIANTS = ("LAGEA-REFLKEY", "LAGEA-SPEC", "GOALSIM-DELTA")  # labelled variants: dotted


def _style(cfg, method):
    style = method_style(method, cfg["methods"], PROPOSED)
    style["label"] = method_label(cfg, method)
    if method in VARIANTS:
        style["linestyle"] = ":"
    elif method in ABLATIONS and method != PROPOSED:
        style["linestyle"] = "--"
    return style


def _curve(curves, method, setting, metric):
    part = curves[(curves["method"] == method) & (curves["setting"] == setting)
                  & (curves["metric"] == metric)]
    g = part.groupby("step")["value"]
    return g.mean(), g.std().fillna(0.0)


def _grid(n, w=3.6, h=2.8, rows=1, legend_w=2.0):
    cols = int(np.ceil(n / rows))
    return subplots(rows, cols, squeeze=False, figsize=(w * cols + legend_w, h * rows))


def learning_curves(cfg, curves):
    settings = list(cfg["settings"])
    rows = 1 if len(settings) <= 3 else int(np.ceil(len(settings) / 4))
    fig, axes = _grid(len(settings), rows=rows)
    for ax, s in zip(axes.ravel(), settings, strict=False):
        for method in cfg["methods"]:
            mean, sd = _curve(curves, method, s, "success")
            if mean.empty:
                continue
            style = _style(cfg, method)
            ax.plot(mean.index, mean, **style)
            ax.fill_between(mean.index, mean - sd, mean + sd, **band_style(style))
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"setting: {s}")
        ax.set_xlabel("training episodes per task")
        ax.set_ylabel("greedy success (task mean)")
    for ax in axes.ravel()[len(settings):]:
        ax.set_visible(False)
    legend_outside(fig)
    return fig


def ablation(cfg, metrics):
    settings = list(cfg["settings"])
    methods = [m for m in ABLATIONS if m in cfg["methods"]]
    fig, ax = subplots(figsize=(max(4.0, 1.6 * len(settings) + 2) + 2.0, 3.2))
    width = 0.8 / max(len(methods), 1)
    for i, method in enumerate(methods):
        style = _style(cfg, method)
        xs = np.arange(len(settings)) + (i - (len(methods) - 1) / 2) * width
        vals = [per_seed(metrics, method, s, "auc").to_numpy(float) for s in settings]
        means = [v.mean() if v.size else np.nan for v in vals]
        sds = [v.std(ddof=1) if v.size > 1 else 0.0 for v in vals]
        ax.bar(xs, means, width, yerr=sds, color=style["color"], label=style["label"],
               hatch="//" if method != PROPOSED else None, capsize=2, error_kw={"lw": 0.8},
               alpha=0.85, zorder=style["zorder"])
        for x, v in zip(xs, vals, strict=True):
            ax.plot(np.full(v.size, x), v, "k.", ms=3, zorder=style["zorder"] + 1)
    ax.set_xticks(np.arange(len(settings)))
    ax.set_xticklabels(settings, rotation=20 if len(settings) > 3 else 0)
    ax.set_ylabel("success AUC")
    legend_outside(fig)
    return fig


def shaping_diagnostic(cfg, curves):
    settings = list(cfg["settings"])
    fig, axes = subplots(2, len(settings), squeeze=False, sharex=True,
                         figsize=(3.6 * len(settings) + 2.2, 4.6))
    color = _style(cfg, PROPOSED)["color"]
    for j, s in enumerate(settings):
        top, bottom = axes[0, j], axes[1, j]
        for ax, metric, ls, label in ((top, "rho", "-", "rho_eff (failure-aware)"),
                                      (top, "pos_frac", "--", "pos_frac (r_goal > 0)"),
                                      (top, "sr_ema", ":", "training success EMA"),
                                      (bottom, "abs_shape", "-", "mean |r_shape| per step")):
            mean, sd = _curve(curves, PROPOSED, s, metric)
            if mean.empty:
                continue
            c = color if metric in ("rho", "abs_shape") else "#555555"
            ax.plot(mean.index, mean, color=c, ls=ls, label=label)
            ax.fill_between(mean.index, mean - sd, mean + sd, color=c, alpha=0.12, linewidth=0)
        top.set_title(f"LaGEA, setting: {s}")
        bottom.set_xlabel("training episodes per task")
    axes[0, 0].set_ylabel("rho_eff / pos_frac / success EMA")
    axes[1, 0].set_ylabel("|r_shape|")
    legend_outside(fig)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {
        "learning_curves": learning_curves(cfg, curves),
        "ablation": ablation(cfg, metrics),
        "shaping_diagnostic": shaping_diagnostic(cfg, curves),
    }


def _mean_sd(x) -> str:
    x = np.asarray(x, float)
    if x.size == 0:
        return "–"
    if x.size < 2:
        return f"{x.mean():.3f}"
    return f"{x.mean():.3f} ± {x.std(ddof=1):.3f}"


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    rows = []
    for s in cfg["settings"]:
        for method in cfg["methods"]:
            row = {"setting": s, "method": method_label(cfg, method)}
            for metric, name in (("final_success", "final success"), ("auc", "success AUC"),
                                 ("episodes_to_50", "episodes to 50%")):
                row[name] = _mean_sd(per_seed(metrics, method, s, metric))
            rows.append(row)
        if PROPOSED in cfg["methods"] and any(b in cfg["methods"] for b in BASELINES):
            rows.append({"setting": s, "method": "LaGEA gain over best baseline",
                         "final success": f"{gain_over_best(metrics, s, 'final_success'):+.3f}",
                         "success AUC": f"{gain_over_best(metrics, s, 'auc'):+.3f}",
                         "episodes to 50%": ""})
    title = ("Main results: final greedy success and success AUC per method and setting "
             "(mean ± s.d. over seeds), with LaGEA's gain over the best of SPARSE / GOALSIM")
    return {title: pd.DataFrame(rows)}
