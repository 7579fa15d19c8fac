"""Downstream table as grouped bars (structure and random split), split gain of
PROTDIS-SEL over RAW, and the probe heatmaps (blocks x factors) of ProtDiS and MT-ENT."""

from __future__ import annotations

import numpy as np

from icml26.plotting import (
    BASELINE_COLORS,
    PROPOSED_COLOR,
    legend_outside,
    method_label,
    method_style,
    subplots,
)

from . import PROPOSED
from .data import FACTORS, TASK_METRIC, TASKS
from .experiment import KON_BLOCK_NAMES, MT_BLOCK_NAMES

SCORE_COLS = [f"{TASK_METRIC[t]}:{t}" for t in TASKS] + ["mean_score"]
SCORE_NAMES = [f"{t}\n({TASK_METRIC[t]})" for t in TASKS] + ["mean"]
SPLITS = ("structure", "random")


def _methods(cfg, metrics):
    return [m for m in cfg["methods"] if (metrics["method"] == m).any()]


def _values(metrics, method, setting, col):
    part = metrics[(metrics["method"] == method) & (metrics["setting"] == setting)]
    return part.sort_values("seed")[col].to_numpy(float) if col in part else np.array([])


def downstream(cfg, metrics):
    methods = _methods(cfg, metrics)
    fig, axes = subplots(1, 2, figsize=(12.0, 4.2), sharey=True)
    width = 0.8 / max(1, len(methods))
    x = np.arange(len(SCORE_COLS))
    for ax, split in zip(axes, SPLITS, strict=True):
        for i, m in enumerate(methods):
            st = method_style(m, methods, PROPOSED)
            mean = [np.nanmean(_values(metrics, m, split, c)) if len(_values(
                metrics, m, split, c)) else np.nan for c in SCORE_COLS]
            sd = [np.nanstd(_values(metrics, m, split, c)) if len(_values(
                metrics, m, split, c)) else np.nan for c in SCORE_COLS]
            ax.bar(x + (i - (len(methods) - 1) / 2) * width, mean, width, yerr=sd,
                   color=st["color"], zorder=st["zorder"], label=method_label(cfg, m),
                   error_kw={"elinewidth": 0.8, "capsize": 2})
        ax.set_xticks(x, SCORE_NAMES)
        ax.set_title(f"{split} split (test)")
        ax.axhline(0, color="black", lw=0.6)
    axes[0].set_ylabel("test score (mean ± std over seeds)")
    legend_outside(axes[-1])
    return fig


def split_gain(cfg, metrics):
    fig, ax = subplots(1, 1, figsize=(8.0, 3.8))
    x = np.arange(len(SCORE_COLS))
    colors = {"structure": PROPOSED_COLOR, "random": BASELINE_COLORS[1]}
    for i, split in enumerate(SPLITS):
        gains = []
        for c in SCORE_COLS:
            a, b = _values(metrics, "protdis-sel", split, c), _values(metrics, "raw", split, c)
            gains.append(a - b if len(a) and len(a) == len(b) else np.array([np.nan]))
        pos = x + (i - 0.5) * 0.38
        ax.bar(pos, [np.nanmean(g) for g in gains], 0.36, yerr=[np.nanstd(g) for g in gains],
               color=colors[split], label=f"{split} split", zorder=2 + (split == "structure"),
               error_kw={"elinewidth": 0.8, "capsize": 2})
        for j, g in enumerate(gains):
            ax.scatter(np.full(len(g), pos[j]), g, s=10, color="black", zorder=4,
                       label="seeds" if (i == 0 and j == 0) else None)
    ax.axhline(0, color="black", lw=0.6)
    ax.set_xticks(x, SCORE_NAMES)
    ax.set_ylabel("score(PROTDIS-SEL) - score(RAW)")
    legend_outside(ax)
    return fig


def _probe_matrix(metrics, method, names):
    part = metrics[(metrics["method"] == method) & (metrics["setting"] == "structure")]
    M = np.full((len(names), len(FACTORS)), np.nan)
    for b, bn in enumerate(names):
        for k, f in enumerate(FACTORS):
            col = f"probe:{bn}:{f}"
            if col in part and len(part):
                M[b, k] = np.nanmean(part[col].to_numpy(float))
    return M


def probes(cfg, metrics):
    fig, axes = subplots(1, 2, figsize=(11.0, 4.4))
    im = None
    for ax, (method, names, title) in zip(axes, (
            ("protdis-all", KON_BLOCK_NAMES, "ProtDiS channels"),
            ("mt-ent", MT_BLOCK_NAMES, "MT-ENT bottleneck chunks")), strict=True):
        M = _probe_matrix(metrics, method, names)
        im = ax.imshow(np.nan_to_num(M, nan=0.0), vmin=0.0, vmax=1.0, cmap="viridis",
                       aspect="auto")
        for b in range(M.shape[0]):
            for k in range(M.shape[1]):
                if np.isfinite(M[b, k]):
                    ax.text(k, b, f"{M[b, k]:.2f}", ha="center", va="center", fontsize=8,
                            color="white" if M[b, k] < 0.6 else "black")
        ax.set_xticks(range(len(FACTORS)), FACTORS, rotation=30)
        ax.set_yticks(range(len(names)), names)
        ax.set_title(title)
        ax.grid(False)
    fig.colorbar(im, ax=axes, label="probe score (ss: accuracy; others: R^2)", shrink=0.9)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"downstream": downstream(cfg, metrics), "split_gain": split_gain(cfg, metrics),
            "probes": probes(cfg, metrics)}


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    methods = _methods(cfg, metrics)
    out = {}
    for split in SPLITS:
        rows = []
        for c, name in zip(SCORE_COLS, [n.replace("\n", " ") for n in SCORE_NAMES],
                           strict=True):
            row = {"task": name}
            for m in methods:
                v = _values(metrics, m, split, c)
                row[method_label(cfg, m)] = (f"{np.mean(v):.3f} ± {np.std(v):.3f}"
                                             if len(v) else "–")
            rows.append(row)
        out[f"Downstream test scores, {split} split (mean ± std over seeds)"] = pd.DataFrame(rows)
    prem = []
    for col, what in (("premise_fold_var_share", "share of var(x) explained by fold identity"),
                      ("premise_factor_var_share",
                       "share of var(x) explained linearly by the residue factors")):
        v = _values(metrics, "raw", "structure", col)
        prem.append({"premise (generator)": what,
                     "mean over seeds": f"{np.mean(v):.3f}" if len(v) else "–"})
    out["Premise: fold identity dominates the embedding"] = pd.DataFrame(prem)
    sel = []
    for m in ("protdis-sel", "protdis-foldholdout"):
        for split in SPLITS:
            part = metrics[(metrics["method"] == m) & (metrics["setting"] == split)]
            if not len(part):
                continue
            row = {"method": method_label(cfg, m), "split": split}
            for bn in KON_BLOCK_NAMES:
                col = f"selected:{bn}"
                row[bn] = f"{part[col].mean():.2f}" if col in part else "–"
            sel.append(row)
    if sel:
        out["Blocks chosen by selective fusion (fraction of tasks x seeds)"] = pd.DataFrame(sel)
    return out
