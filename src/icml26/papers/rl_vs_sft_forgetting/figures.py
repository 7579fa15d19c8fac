"""Fig. 1 (mixture densities), Fig. 2 (old vs new accuracy along training) and the tables."""

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

from . import PROPOSED, mixture
from .claims import MIXTURE, POLICY
from .experiment import setting_params

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def _methods_in(cfg, frame, setting):
    present = set(frame.loc[frame["setting"] == setting, "method"])
    return [m for m in cfg["methods"] if m in present]


def _mean_trace(curves, method, setting):
    part = curves[(curves["method"] == method) & (curves["setting"] == setting)]
    return part.pivot_table(index="step", columns="metric", values="value", aggfunc="mean")


def _part_settings(cfg, parts):
    return [s for s, v in cfg["settings"].items() if (v or {}).get("part") in parts]


def forgetting_tradeoff(cfg, curves):
    """One panel per Part B setting (the MLP `policy`; at full scale also the transformer)."""
    panels = _part_settings(cfg, ("policy", "sequence")) or [POLICY]
    fig, axes = subplots(1, len(panels), figsize=(7.8 * len(panels), 4.2), squeeze=False)
    for ax, setting in zip(axes[0], panels, strict=True):
        methods = _methods_in(cfg, curves, setting)
        colors = method_colors(methods, PROPOSED)
        base = None
        for m in methods:
            t = _mean_trace(curves, m, setting)
            if t.empty:
                continue
            ax.plot(t["new_acc"], t["old_acc"], ls="--" if m.endswith("-spec") else "-",
                    marker=MARKERS[cfg["methods"].index(m) % len(MARKERS)], ms=3,
                    color=colors[m], lw=2.2 if m == PROPOSED else 1.4, label=method_label(cfg, m),
                    zorder=method_zorder(m, PROPOSED))
            base = (t["new_acc"].iloc[0], t["old_acc"].iloc[0])
        if base is not None:
            ax.plot(*base, "*", ms=14, color="black", label="base model", zorder=5)
        ax.axvline(float(cfg["params"]["match_acc"]), color=REFERENCE_COLOR, ls=":", lw=1)
        ax.set_xlabel("new-task accuracy P(y in C(i))")
        ax.set_ylabel("old-task accuracy P(g(j))")
        ax.set_title(f"Part B ({setting}): forgetting along post-training (mean over seeds)")
        legend_outside(ax)  # colours are per panel (the methods present in it)
    return fig


def mixture_densities(cfg, curves):
    methods = [m for m in ("sft", "rl") if m in _methods_in(cfg, curves, MIXTURE)]
    p = setting_params(cfg, MIXTURE) if MIXTURE in cfg["settings"] else None
    iters = int(p["iterations"]) if p else 0
    snaps = sorted({s for s in (p["snapshots"] if p else []) if s <= iters} | {iters})
    fig, axes = subplots(max(1, len(methods)), max(1, len(snaps)), squeeze=False,
                         figsize=(2.6 * max(1, len(snaps)), 2.4 * max(1, len(methods))),
                         sharex=True, sharey=True)
    if not methods:
        return fig
    c = mixture.constants(p)
    ys = mixture.grid(c)
    target = mixture.target_density(c, ys)
    colors = method_colors(methods, PROPOSED)
    for row, m in enumerate(methods):
        part = curves[(curves["method"] == m) & (curves["setting"] == MIXTURE)]
        seed = part["seed"].min()
        t = part[part["seed"] == seed].pivot_table(index="step", columns="metric", values="value")
        for col, step in enumerate(snaps):
            ax = axes[row][col]
            ax.plot(ys, target, "--", color=REFERENCE_COLOR, lw=1.2)
            if step in t.index:
                nat = t.loc[step, list(mixture.NATURAL_NAMES)].to_numpy(dtype=float)
                w1, w2, q = mixture.component_densities(nat[None, :], ys[None, :], "direct")
                ax.fill_between(ys, q[0], color=colors[m], alpha=0.25, lw=0)
                ax.plot(ys, q[0], color=colors[m], lw=1.4)
                ax.set_title(f"{method_label(cfg, m).split(' (')[0]}, it {step}\n"
                             f"Acc(T')={t.loc[step, 'old_acc']:.2f} Acc(T)="
                             f"{t.loc[step, 'new_acc']:.2f} π={t.loc[step, 'pi']:.2f}",
                             fontsize=8)
            ax.set_xlim(ys[0], ys[-1])
        axes[row][0].set_ylabel("density")
    for ax in axes[-1]:
        ax.set_xlabel("y")
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"forgetting_tradeoff": forgetting_tradeoff(cfg, curves),
            "mixture_densities": mixture_densities(cfg, curves)}


def _ms(x) -> str:
    x = np.asarray(x, dtype=float)
    ok = x[np.isfinite(x)]
    if not ok.size:
        return "n/a"
    s = f"{ok.mean():.3f} ± {ok.std():.3f}"
    return s if ok.size == x.size else f"{s} ({ok.size}/{x.size} seeds)"


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    out = {}
    rows = []
    for setting in _part_settings(cfg, ("policy", "sequence")):
        for m in _methods_in(cfg, metrics, setting):
            r = metrics[(metrics["method"] == m) & (metrics["setting"] == setting)]
            rows.append({"setting": setting, "method": method_label(cfg, m),
                         "new acc (final)": _ms(r["new_acc_final"]),
                         "step reaching 0.9": _ms(r["step_matched"]),
                         "drop at matched acc": _ms(r["drop_matched"]),
                         "final drop": _ms(r["drop_final"]),
                         "KL to base (matched)": _ms(r["kl_matched"]),
                         "KL to base (final)": _ms(r["kl_final"])})
    if rows:
        out["Part B: new accuracy, old-task drop and KL to the base model (mean ± std over "
            "seeds; steps are each method's own optimiser steps, and the official RL recipe "
            "takes rl_step_factor times as many as SFT)"] = pd.DataFrame(rows)
    rows = []
    for setting in _part_settings(cfg, ("mixture",)):
        p = setting_params(cfg, setting)
        for m in _methods_in(cfg, metrics, setting):
            r = metrics[(metrics["method"] == m) & (metrics["setting"] == setting)]
            rows.append({"setting": setting, "slow factor": p["slow_factor"],
                         "target mode": p["target_mean"], "method": method_label(cfg, m),
                         "Acc(T') final": _ms(r["old_acc_final"]),
                         "Acc(T) final": _ms(r["new_acc_final"]),
                         "pi final": _ms(r["pi_final"]),
                         "iteration gain 0.9": _ms(r["iter_gain"]),
                         "drop at gain 0.9": _ms(r["drop_gain"]),
                         "KL to init (final)": _ms(r["kl_final"])})
    if rows:
        out["Part A: final accuracies and mixing weight, and the official reading (first "
            "iteration whose gain in Acc(T) reaches 0.9; drop of Acc(T') there; a seed that "
            "never reaches it is read at the last iteration) (mean ± std over seeds)"] = \
            pd.DataFrame(rows)
    return out
