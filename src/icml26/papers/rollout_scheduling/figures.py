"""Fig. 1 (training curves vs fresh rollouts), Fig. 2 (final accuracy vs buffer capacity), the
noise-filtering / calibration panel, and Table 1 (final accuracy and efficiency per method)."""

from __future__ import annotations

import numpy as np

from icml26.plotting import (
    REFERENCE_COLOR,
    band_style,
    legend_outside,
    method_colors,
    method_label,
    method_style,
    method_zorder,
    subplots,
)

from . import PROPOSED

CAPACITY = (("cbs-intra", 0), ("cbs-c128", 128), ("cbs-c512", 512))


def _setting(cfg, metrics):
    names = [s for s in cfg["settings"] if (metrics["setting"] == s).any()]
    return "q015" if "q015" in names else (names[0] if names else list(cfg["settings"])[0])


def training_curves(cfg, metrics, curves):
    s = _setting(cfg, metrics)
    methods = list(cfg["methods"])
    fig, ax = subplots(figsize=(7.6, 4.0))
    acc = curves[(curves["metric"] == "train_acc") & (curves["setting"] == s)]
    roll = curves[(curves["metric"] == "fresh_rollouts") & (curves["setting"] == s)]
    for m in methods:
        a = acc[acc["method"] == m].pivot_table(index="step", columns="seed", values="value")
        if not len(a):
            continue
        x = roll[roll["method"] == m].groupby("step")["value"].first().reindex(a.index)
        mu, sd = a.mean(axis=1).to_numpy(), a.std(axis=1, ddof=0).to_numpy()
        st = method_style(m, methods, PROPOSED)
        st["label"] = method_label(cfg, m)
        ax.plot(x.to_numpy(), mu, **st)
        ax.fill_between(x.to_numpy(), mu - sd, mu + sd, **band_style(st))
    ax.set_xlabel("fresh rollouts generated")
    ax.set_ylabel("clean greedy training accuracy")
    ax.set_title(f"Training curves ({s}, mean ± std over seeds)")
    legend_outside(ax)
    return fig


def buffer_capacity(cfg, metrics, curves):
    s = _setting(cfg, metrics)
    fig, axes = subplots(1, 2, figsize=(8.0, 3.6))
    part = metrics[metrics["setting"] == s]
    colors = method_colors(list(cfg["methods"]), PROPOSED)
    for ax, col, title in ((axes[0], "final_train_acc", "training prompts"),
                           (axes[1], "final_held_acc", "held-out prompts")):
        xs, mu, sd = [], [], []
        for m, c in CAPACITY:
            v = part[part["method"] == m][col]
            if len(v):
                xs.append(c)
                mu.append(v.mean())
                sd.append(v.std(ddof=0))
        if xs:
            ax.errorbar(xs, mu, yerr=sd, fmt="-o", color=colors.get("cbs-c512", "#c0392b"),
                        capsize=3, label="CBS", zorder=method_zorder("cbs-c512", PROPOSED))
        g = part[part["method"] == "grpo"][col]
        if len(g):
            ax.axhline(g.mean(), ls="--", color=REFERENCE_COLOR, lw=1, label="GRPO (mean)")
        ax.set_xticks([c for _, c in CAPACITY])
        ax.set_xlabel("buffer capacity C")
        ax.set_ylabel("final clean accuracy")
        ax.set_title(title)
    legend_outside(fig)
    return fig


def noise_filtering(cfg, metrics, curves, state=None):
    s = _setting(cfg, metrics)
    methods = list(cfg["methods"])
    colors = method_colors(methods, PROPOSED)
    fig, ax = subplots(figsize=(7.6, 3.8))
    part = metrics[metrics["setting"] == s]
    labels = []
    for m in methods:
        p = part[part["method"] == m]
        if not len(p):
            continue
        labels.append(method_label(cfg, m))
        for off, col, hatch in ((-0.18, "fresh_fp_rate", ""), (0.18, "used_fp_rate", "//")):
            v = p[col].to_numpy(float)
            ax.bar(len(labels) - 1 + off, np.nanmean(v) if np.isfinite(v).any() else 0.0, 0.36,
                   yerr=np.nanstd(v) if np.isfinite(v).any() else 0.0, color=colors[m],
                   hatch=hatch, edgecolor="white", capsize=2,
                   zorder=method_zorder(m, PROPOSED))
    ax.set_xticks(range(len(labels)), labels, rotation=25, ha="right")
    ax.set_ylabel("false-positive rate among reward-1")
    ax.set_title(f"Fresh batches (plain) vs rollouts used (hatched), {s}")
    from matplotlib.patches import Patch

    legend_outside(ax, [Patch(facecolor="#999999"), Patch(facecolor="#999999", hatch="//",
                                                          edgecolor="white")],
                   ["fresh batch", "used in the update"])
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"training_curves": training_curves(cfg, metrics, curves),
            "buffer_capacity": buffer_capacity(cfg, metrics, curves),
            "noise_filtering": noise_filtering(cfg, metrics, curves)}


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    rows = []
    for s in cfg["settings"]:
        for m in cfg["methods"]:
            p = metrics[(metrics["method"] == m) & (metrics["setting"] == s)]
            if not len(p):
                continue

            def cell(col, p=p):
                v = p[col].to_numpy(float) if col in p else np.array([np.nan])
                if not np.isfinite(v).any():
                    return "-"
                return f"{np.nanmean(v):.3f} ± {np.nanstd(v):.3f}"

            rows.append({"setting": s, "method": method_label(cfg, m),
                         "final train acc": cell("final_train_acc"),
                         "final held-out acc": cell("final_held_acc"),
                         "rollouts to 0.8 x GRPO final": cell("rollouts_to_target"),
                         "ratio vs GRPO": cell("rollouts_ratio_vs_grpo"),
                         "used FP rate": cell("used_fp_rate"),
                         "fresh FP rate": cell("fresh_fp_rate"),
                         "Spearman(pred, obs gain)": cell("gain_spearman"),
                         "buffer share of used": cell("buffer_share")})
    prem = []
    lo, hi = cfg["params"].get("premise_band", [0.1, 0.9])
    for s in cfg["settings"]:
        g = metrics[(metrics["method"] == "grpo") & (metrics["setting"] == s)]
        if not len(g) or "sft_spread_frac" not in g:
            continue
        g = g.sort_values("seed")
        for _, r in g.iterrows():
            prem.append({"setting": s, "seed": int(r["seed"]),
                         "SFT steps taken": int(r["sft_steps_taken"]),
                         "mean pass rate (train prompts)": f"{r['sft_pass_mean']:.3f}",
                         f"share of train prompts with pass rate in [{lo}, {hi}]":
                             f"{r['sft_spread_frac']:.3f}",
                         "greedy acc. train": f"{r['sft_train_acc']:.3f}",
                         "greedy acc. held-out": f"{r['sft_held_acc']:.3f}"})
    out = {"Table 1: final clean accuracy (mean of the last 3 evaluations), efficiency, noise "
           "filtering and calibration per method (mean ± std over seeds)": pd.DataFrame(rows)}
    if prem:
        out["Table 2: the warm-start premise (not a claim), per seed, before any RL step: the "
            "policy should be partly capable, with a spread of per-prompt pass rates (exact "
            "probability that a rollout is correct) on the RL training prompts and some "
            "held-out accuracy; the same for every method of a seed"] = pd.DataFrame(prem)
    return out
