"""Figures and the benchmark table of outformer."""

from __future__ import annotations

import numpy as np
import pandas as pd

from icml26 import plotting

from . import claims as C
from .experiment import SUITES
from .priors import FAMILY, PRIORS

FAMILY_COLORS = {"gmm": "tab:blue", "copula": "tab:orange", "scm": "tab:green",
                 "real": "tab:purple"}
COLUMNS = [*SUITES, "all"]


def _methods(cfg, metrics):
    return [m for m in cfg["methods"] if m in set(metrics["method"])]


def _suite_table(metrics, methods):
    """{method: {column: (mean, sd)}} over seeds of the suite means."""
    out = {}
    for m in methods:
        part = metrics[metrics["method"] == m]
        row = {}
        for s in COLUMNS:
            col = f"auroc_{s}"
            if col in part:
                v = part[col].to_numpy(float)
                row[s] = (float(np.nanmean(v)), float(np.nanstd(v, ddof=1)) if len(v) > 1
                          else 0.0)
        out[m] = row
    return out


def benchmark(cfg, metrics):
    methods = _methods(cfg, metrics)
    prop = "outformer"
    table = _suite_table(metrics, methods)
    cols = [s for s in COLUMNS if any(s in table[m] for m in methods)]
    fig, ax = plotting.subplots(figsize=(7.6, 3.6))
    width = 0.8 / max(len(methods), 1)
    x = np.arange(len(cols))
    for i, m in enumerate(methods):
        st = plotting.method_style(m, methods, prop)
        mean = [table[m].get(s, (np.nan, 0))[0] for s in cols]
        sd = [table[m].get(s, (np.nan, 0))[1] for s in cols]
        ax.bar(x + (i - (len(methods) - 1) / 2) * width, mean, width, yerr=sd,
               color=st["color"], zorder=st["zorder"],
               label=plotting.method_label(cfg, m),
               error_kw={"elinewidth": 1.0, "capsize": 2, "ecolor": "black",
                         "zorder": st["zorder"] + 0.1})
    ax.axhline(0.5, color=plotting.REFERENCE_COLOR, linestyle=":", linewidth=1.0, zorder=1)
    ax.set_xticks(x, [{"gmm": "GMM", "copula": "copula", "scm": "SCM", "real": "real",
                       "all": "overall"}[s] for s in cols])
    ax.set_ylim(0.3, 1.02)
    ax.set_ylabel("mean AUROC (± s.d. over seeds)")
    ax.set_title("Held-out synthetic suites and scikit-learn tasks")
    plotting.legend_outside(ax)
    return fig


def per_task(cfg, metrics):
    fig, ax = plotting.subplots(figsize=(6.6, 4.4))
    cols = C.task_columns(metrics)
    a = metrics[metrics["method"] == C.OUT][cols].mean(axis=0) if cols else pd.Series(dtype=float)
    b = metrics[metrics["method"] == C.FOMO][cols].mean(axis=0) if cols else pd.Series(dtype=float)
    if len(a) and len(b):
        fam = [FAMILY.get(c.split(":", 1)[1].rsplit("-", 1)[0], "real") for c in cols]
        for f in ("gmm", "copula", "scm", "real"):
            sel = [i for i, g in enumerate(fam) if g == f]
            if sel:
                ax.scatter(b.iloc[sel], a.iloc[sel], s=22, color=FAMILY_COLORS[f], label=f,
                           edgecolor="white", linewidth=0.5)
    ax.plot([0, 1], [0, 1], color=plotting.REFERENCE_COLOR, linestyle="--", linewidth=1.0)
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(f"{plotting.method_label(cfg, C.FOMO)} AUROC (mean over seeds)")
    ax.set_ylabel(f"{plotting.method_label(cfg, C.OUT)} AUROC")
    ax.set_title("Per-task AUROC, coloured by task family")
    plotting.legend_outside(ax, title="family")
    return fig


def curriculum(cfg, curves):
    fig, ax = plotting.subplots(figsize=(7.6, 3.8))
    c = curves[(curves["method"] == C.OUT) & curves["metric"].str.startswith("p:")] \
        if curves is not None and len(curves) else pd.DataFrame()
    if len(c):
        piv = c.groupby(["step", "metric"])["value"].mean().unstack("metric").sort_index()
        order = sorted(piv.columns, key=lambda n: (PRIORS.index(n.split(":")[1]), n))
        cmap = plotting.pyplot().get_cmap("tab20")
        colors = [cmap(i % 20) for i in range(len(order))]
        ax.stackplot(piv.index.to_numpy(float), piv[order].to_numpy(float).T,
                     labels=[n[2:].replace(":", " d=") for n in order], colors=colors,
                     step="post")
        ax.set_xlim(piv.index.min(), piv.index.max())
        ax.set_ylim(0, 1)
        plotting.legend_outside(ax, fontsize=8, ncol=1)
    ax.set_xlabel("pretraining step (start of each curriculum epoch)")
    ax.set_ylabel("sampling probability")
    ax.set_title(f"{plotting.method_label(cfg, C.OUT)}: category probabilities "
                 "(mean over seeds)")
    return fig


def speed(cfg, metrics):
    methods = _methods(cfg, metrics)
    fig, ax = plotting.subplots(figsize=(6.8, 3.8))
    for m in methods:
        part = metrics[metrics["method"] == m]
        if "cpu_s_per_task" not in part or "auroc_all" not in part:
            continue
        st = plotting.method_style(m, methods, "outformer")
        t, a = part["cpu_s_per_task"].to_numpy(float), part["auroc_all"].to_numpy(float)
        ax.errorbar([np.nanmean(t)], [np.nanmean(a)],
                    xerr=[np.nanstd(t)], yerr=[np.nanstd(a)], fmt="o", markersize=7,
                    color=st["color"], zorder=st["zorder"], capsize=2,
                    label=plotting.method_label(cfg, m))
    ax.set_xscale("log")
    ax.set_xlabel("inference CPU-s per task (fit + score; PFN: ensemble forward passes)")
    ax.set_ylabel("mean AUROC, all tasks")
    ax.set_title("Accuracy against inference cost")
    plotting.legend_outside(ax)
    return fig


def make(cfg, metrics, curves) -> dict:
    figs = {"benchmark": benchmark(cfg, metrics), "per_task": per_task(cfg, metrics),
            "curriculum": curriculum(cfg, curves), "speed": speed(cfg, metrics)}
    return {k: figs[k] for k in cfg["figures"]}


def tables(cfg, metrics, curves) -> dict:
    methods = _methods(cfg, metrics)
    table = _suite_table(metrics, methods)
    cols = C.task_columns(metrics)
    ranks = C.average_ranks(metrics, [m for m in C.RANKED if m in methods], cols) \
        if cols else pd.DataFrame()
    rows = []
    for m in methods:
        row = {"method": plotting.method_label(cfg, m)}
        for s in COLUMNS:
            if s in table[m]:
                mu, sd = table[m][s]
                row[s] = f"{mu:.3f} ± {sd:.3f}"
        if m in ranks:
            row["avg rank"] = f"{ranks[m].mean():.2f}"
        part = metrics[metrics["method"] == m]
        if "final_train_loss" in part and part["final_train_loss"].notna().any():
            row["final train loss"] = f"{part['final_train_loss'].mean():.3f}"
        rows.append(row)
    return {"Benchmark: mean AUROC per suite (mean ± s.d. over seeds) and average rank":
            pd.DataFrame(rows)}
