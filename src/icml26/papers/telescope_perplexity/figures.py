"""Table 1 (detection AUROC, passes, time), Fig. 1 (emergence over S's training, and the
authors' measurement over G's training), Fig. 2 (histograms of log tau_i) and the detection bar
chart (headline)."""

from __future__ import annotations

import numpy as np

from icml26.plotting import (
    BASELINE_ZORDER,
    PROPOSED_ZORDER,
    REFERENCE_COLOR,
    legend_outside,
    method_colors,
    method_label,
    method_zorder,
    subplots,
)

from . import PROPOSED
from .claims import BLACK, LL, TEL, WHITE, gen_checkpoint_table


def _settings(cfg, metrics):
    return [s for s in cfg["settings"] if (metrics["setting"] == s).any()]


def detection(cfg, metrics):
    settings = _settings(cfg, metrics)
    methods = [m for m in cfg["methods"] if (metrics["method"] == m).any()]
    colors = method_colors(methods, PROPOSED)
    fig, axes = subplots(1, len(settings), figsize=(3.6 * len(settings), 4.0), sharey=True,
                         squeeze=False)
    for ax, s in zip(axes[0], settings, strict=True):
        for i, m in enumerate(methods):
            v = metrics[(metrics["method"] == m) & (metrics["setting"] == s)]["auroc"].to_numpy()
            if not len(v):
                continue
            z = method_zorder(m, PROPOSED)
            ax.bar(i, v.mean(), color=colors[m], alpha=0.85, zorder=z)
            ax.plot(np.full(len(v), i), v, "o", color="black", ms=3, zorder=z + 1)
        ax.axhline(0.75, ls="--", color=REFERENCE_COLOR, lw=1)
        ax.axhline(0.5, ls=":", color=REFERENCE_COLOR, lw=1)
        ax.set_xticks(range(len(methods)))
        ax.set_xticklabels(methods, rotation=45, ha="right")
        ax.set_ylim(0, 1)
        ax.set_title(s)
    axes[0][0].set_ylabel("AUROC (machine = positive)")
    return fig


def emergence(cfg, curves):
    fig, (ax_a, ax_r, ax_g) = subplots(1, 3, figsize=(16.0, 3.6))
    c = curves[(curves["setting"] == BLACK) & curves["metric"].isin(
        ["ckpt_A", "ckpt_auroc", "ckpt_frac"])]
    if len(c):
        wide = c.pivot_table(index=["method", "seed", "step"], columns="metric",
                             values="value").reset_index()
        a = wide.drop_duplicates(["seed", "step"]).pivot_table(index="ckpt_frac",
                                                               columns="seed", values="ckpt_A")
        ax_a.plot(a.index, a.to_numpy(), color="#7f8c8d", lw=0.8, alpha=0.7)
        ax_a.plot(a.index, a.mean(axis=1), "o-", color="black", label="A (mean over seeds)")
        ax_a.axhline(0.5, ls="--", color=REFERENCE_COLOR, lw=1, label="claim 4: 0.5")
        ax_a.axhline(1.0, ls=":", color=REFERENCE_COLOR, lw=1, label="no aversion (A = 1)")
        colors = method_colors([TEL, LL], PROPOSED)
        for m in (TEL, LL):
            r = wide[wide["method"] == m].pivot_table(index="ckpt_frac", columns="seed",
                                                      values="ckpt_auroc")
            if r.empty:
                continue
            z = method_zorder(m, PROPOSED)
            ax_r.plot(r.index, r.to_numpy(), color=colors[m], lw=0.8, alpha=0.5, zorder=z)
            ax_r.plot(r.index, r.mean(axis=1), "o-", color=colors[m], label=method_label(cfg, m),
                      zorder=z)
        ax_r.axhline(0.5, ls=":", color=REFERENCE_COLOR, lw=1)
    gen = gen_checkpoint_table(curves)
    if gen is not None:
        m, h = gen
        color = method_colors([TEL], PROPOSED)[TEL]
        ax_g.plot(m.columns, m.to_numpy().T, color=color, lw=0.8, alpha=0.5)
        ax_g.plot(m.columns, m.mean(axis=0), "o-", color=color, label="G-checkpoint samples")
        ax_g.axhline(h.mean(), ls="--", color=REFERENCE_COLOR, lw=1, label="human text")
        legend_outside(ax_g)
    ax_g.set_xscale("log")
    ax_g.set_xlabel("fraction of G's training steps")
    ax_g.set_ylabel("log TPPL under the final S")
    for ax in (ax_a, ax_r):
        ax.set_xscale("log")
        ax.set_xlabel("fraction of S's training steps")
    ax_a.set_yscale("log")
    ax_a.set_ylabel("aversion index A (human text)")
    ax_r.set_ylabel("black-box AUROC")
    legend_outside(ax_a)
    legend_outside(ax_r)
    return fig


def log_tau_hist(cfg, curves):
    lo, hi, n = cfg["params"]["hist_edges"]
    edges = np.linspace(float(lo), float(hi), int(n) + 1)
    c = curves[(curves["method"] == TEL) & curves["metric"].str.startswith("log_tau_hist")]
    settings = [s for s in (WHITE, BLACK) if (c["setting"] == s).any()]
    fig, axes = subplots(1, max(1, len(settings)), figsize=(4.4 * max(1, len(settings)) + 1.2, 3.4),
                         squeeze=False)
    seed = int(c["seed"].min()) if len(c) else 0
    for ax, s in zip(axes[0], settings, strict=False):
        for name, color, z in (("human", "#34495e", BASELINE_ZORDER),
                               ("machine", "#c0392b", PROPOSED_ZORDER)):
            part = c[(c["setting"] == s) & (c["seed"] == seed)
                     & (c["metric"] == f"log_tau_hist_{name}")].sort_values("step")
            counts = part["value"].to_numpy()
            if counts.sum() > 0:
                ax.stairs(counts / counts.sum(), edges, color=color, label=name, lw=1.6,
                          zorder=z)
        ax.set_xlabel("log tau_i = log p(s_i | s_1..s_i)")
        ax.set_ylabel("fraction of tokens")
        ax.set_title(f"{s} (seed {seed})")
    legend_outside(fig)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"detection": detection(cfg, metrics), "emergence": emergence(cfg, curves),
            "log_tau_hist": log_tau_hist(cfg, curves)}


def tables(cfg, metrics, curves) -> dict:
    """Table 1: AUROC and TPR@5%FPR (mean ± s.d. over seeds) per detector x setting, with
    forward passes per text, models and scoring CPU seconds per 100 texts; plus diagnostics."""
    import pandas as pd

    rows = []
    for m in cfg["methods"]:
        row = {"detector": method_label(cfg, m)}
        for s in _settings(cfg, metrics):
            part = metrics[(metrics["method"] == m) & (metrics["setting"] == s)]
            if not len(part):
                continue
            for col, name in (("auroc", "AUROC"), ("tpr_at_5fpr", "TPR@5%FPR")):
                v = part[col].to_numpy(float)
                sd = f" ± {v.std(ddof=1):.3f}" if len(v) > 1 else ""
                row[f"{name} {s}"] = f"{v.mean():.3f}{sd}"
        part = metrics[metrics["method"] == m]
        row["forward passes / text"] = f"{part['forward_passes'].mean():g}"
        row["models"] = f"{part['models'].mean():g}"
        for s in _settings(cfg, metrics):
            v = metrics[(metrics["method"] == m) & (metrics["setting"] == s)]["cpu_s_per_100"]
            row[f"CPU s / 100 texts {s}"] = f"{v.mean():.3f}"
        rows.append(row)
    diag = []
    for s in _settings(cfg, metrics):
        part = metrics[(metrics["method"] == TEL) & (metrics["setting"] == s)]
        if not len(part):
            continue
        diag.append({
            "setting": s,
            "log PPL human": f"{part['log_ppl_human'].mean():.3f}",
            "log PPL machine": f"{part['log_ppl_machine'].mean():.3f}",
            "log TPPL human": f"{part['log_tppl_human'].mean():.3f}",
            "log TPPL machine": f"{part['log_tppl_machine'].mean():.3f}",
            "aversion A (scorer, human)": f"{part['aversion_A'].mean():.3f}",
            "repeat rate human": f"{part['rep_human'].mean():.4f}",
            "repeat rate machine": f"{part['rep_machine'].mean():.4f}",
            # repeats of the grid-table pipe token and of <unk> (no "|" in a markdown header)
            **{f"{n} repeat rate {w}": f"{part[f'rep_{n}_{w}'].mean():.4f}"
               for n in ("pipe", "unk") for w in ("human", "machine") if f"rep_{n}_{w}" in part},
            "corpus repeat rate": f"{part['corpus_rep_rate'].mean():.4f}",
            "unigram-implied rate": f"{part['unigram_rep_rate'].mean():.4f}",
            "human texts / seed": f"{part['n_human'].mean():g}",
        })
    return {"Table 1: detection (mean ± s.d. over seeds) and cost": pd.DataFrame(rows),
            "Diagnostics (Telescope runs, mean over seeds)": pd.DataFrame(diag)}
