"""Fig. 1 (GT per reward function and network size, PPO), Fig. 2 (GT learning curves) and the
table of GT, CVaR10, IQR across seeds and costly-action rate per (algorithm, N, reward)."""

from __future__ import annotations

import numpy as np

from icml26.plotting import (
    REFERENCE_COLOR,
    legend_outside,
    method_colors,
    method_label,
    method_zorder,
    subplots,
)

from . import PROPOSED
from .claims import iqr, main_setting

REWARDS = ("SP", "SPN", "DS", "DYT")
REFERENCE = ("random", "do-nothing", "greedy")


def _ppo_sizes(cfg):
    out = {}
    for name, s in cfg["settings"].items():
        n = int(s["n"])
        if s["algo"] == "ppo" and main_setting(cfg, "ppo", n) == name:
            out[n] = name
    return dict(sorted(out.items()))


def gt_by_reward(cfg, metrics):
    rewards = [m for m in REWARDS if m in cfg["methods"]]
    colors = method_colors(rewards, PROPOSED)
    sizes = _ppo_sizes(cfg)
    fig, ax = subplots(figsize=(3.4 + 1.5 * len(sizes), 3.6))
    width = 0.8 / max(1, len(rewards))
    rng = np.random.default_rng(0)  # horizontal jitter of the seed dots only
    for j, setting in enumerate(sizes.values()):
        part = metrics[metrics["setting"] == setting]
        for i, m in enumerate(rewards):
            v = part.loc[part["method"] == m, "gt"].to_numpy(float)
            if not v.size:
                continue
            x = j + (i - (len(rewards) - 1) / 2) * width
            ax.bar(x, v.mean(), width * 0.9, yerr=v.std(ddof=0), capsize=2, color=colors[m],
                   alpha=0.85 if m in PROPOSED else 0.6, hatch="//" if m == "SPN" else None,
                   label=method_label(cfg, m) if j == 0 else None,
                   zorder=method_zorder(m, PROPOSED))
            ax.scatter(x + rng.uniform(-0.15, 0.15, v.size) * width, v, s=8, color="k", zorder=4)
        for ref, ls in (("greedy", "--"), ("random", ":")):
            v = part.loc[part["method"] == ref, "gt"].to_numpy(float)
            if v.size:
                ax.hlines(v.mean(), j - 0.45, j + 0.45, colors=REFERENCE_COLOR, linestyles=ls,
                          label=method_label(cfg, ref) if j == 0 else None)
    ax.set_xticks(range(len(sizes)), [f"N = {n}" for n in sizes])
    ax.set_ylabel("ground-truth score GT")
    ax.set_ylim(0, 1.02)
    legend_outside(fig)
    ax.set_title("PPO: GT per reward function")
    return fig


def learning_curves(cfg, curves):
    sizes = _ppo_sizes(cfg)
    fig, ax = subplots(figsize=(6.8, 3.6))
    if not sizes:
        return fig
    n, setting = max(sizes.items())
    rewards = [m for m in REWARDS if m in cfg["methods"]]
    colors = method_colors(rewards, PROPOSED)
    part = curves[(curves["setting"] == setting) & (curves["metric"] == "gt")]
    for m in rewards:
        table = part[part["method"] == m].pivot_table(index="seed", columns="step",
                                                      values="value")
        if table.empty:
            continue
        steps = table.columns.to_numpy(float)
        mean, sd = table.mean(axis=0).to_numpy(), table.std(axis=0, ddof=0).to_numpy()
        z = method_zorder(m, PROPOSED)
        ax.plot(steps, mean, color=colors[m], lw=2.2 if m in PROPOSED else 1.4,
                ls="--" if m == "SPN" else "-", label=method_label(cfg, m), zorder=z)
        ax.fill_between(steps, mean - sd, mean + sd, color=colors[m], alpha=0.15, lw=0,
                        zorder=z - 0.5)
    ax.set_xlabel("environment steps")
    ax.set_ylabel("GT (20 greedy episodes)")
    ax.set_ylim(0, 1.02)
    ax.set_title(f"PPO learning curves, N = {n}")
    legend_outside(fig)
    return fig


def make(cfg, metrics, curves) -> dict:
    figs = {"gt_by_reward": gt_by_reward(cfg, metrics),
            "learning_curves": learning_curves(cfg, curves)}
    return {name: figs[name] for name in cfg["figures"]}


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    rows = []
    for setting, s in cfg["settings"].items():
        for m in cfg["methods"]:
            part = metrics[(metrics["setting"] == setting) & (metrics["method"] == m)]
            if not len(part):
                continue
            rows.append({
                "algorithm": "reference" if m in REFERENCE else s["algo"],
                "N": int(s["n"]), "setting": setting, "policy": method_label(cfg, m),
                "GT": part["gt"].mean(), "GT std (seeds)": part["gt"].std(ddof=0),
                "IQR GT (seeds)": iqr(part["gt"]), "CVaR10": part["cvar10"].mean(),
                "costly-action rate": part["costly_rate"].mean(),
                "wasted restores": part["wasted_restore_rate"].mean(),
                "all-safe steps": part["all_safe_frac"].mean(),
                "seeds": len(part),
            })
    table = pd.DataFrame(rows).round(4)
    return {"GT, risk, reliability and costly actions per (algorithm, N, policy)": table}
