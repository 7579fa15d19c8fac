"""The deployment figure (crash rate, time-to-stop, margin per episode), the PROPOSED inset
(alpha, mu_hat +- sd) and the table of early/late violation rate and time-to-stop."""

from __future__ import annotations

import numpy as np

from icml26.plotting import (
    REFERENCE_COLOR,
    band_style,
    legend_outside,
    method_style,
    pyplot,
    subplots,
)

from . import PROPOSED
from .claims import pooled
from .experiment import real_system

ROWS = (("crash", "crash rate"), ("time_to_stop", "time-to-stop (s)"), ("margin", "margin (m)"))


def pooled_curves(curves) -> dict:
    """q -> DataFrame indexed (method, setting, step) with the mean and s.d. over all
    deployment runs, pooled exactly from the per-run moments (mean, mean of squares, count)."""
    wide = curves.pivot_table(index=["method", "setting", "seed", "step"], columns="metric",
                              values="value", aggfunc="first")
    out = {}
    for q in ("crash", "time_to_stop", "margin", "alpha", "mu_hat", "sd"):
        n = wide[f"{q}_n"]
        part = wide.assign(n=n, s1=(wide[q] * n).fillna(0.0), s2=(wide[f"{q}_sq"] * n).fillna(0.0))
        g = part.groupby(level=["method", "setting", "step"])[["n", "s1", "s2"]].sum()
        mean = (g["s1"] / g["n"]).where(g["n"] > 0)
        sd = np.sqrt(np.maximum(0.0, (g["s2"] / g["n"]).where(g["n"] > 0) - mean ** 2))
        out[q] = mean.to_frame("mean").assign(sd=sd)
    return out


def pooled_curve(pooled_q, method: str, setting: str):
    """Episode index, mean and s.d. of one (method, setting) from ``pooled_curves(...)[q]``."""
    try:
        t = pooled_q.loc[(method, setting)]
    except KeyError:
        return np.array([]), np.array([]), np.array([])
    return t.index.to_numpy(), t["mean"].to_numpy(), t["sd"].to_numpy()


def deployment(cfg, pc):
    settings = list(cfg["settings"])
    fig, axes = subplots(len(ROWS), len(settings), figsize=(4.2 * len(settings) + 2.2, 7.6),
                         squeeze=False, sharex=True)
    for j, s in enumerate(settings):
        mu, p = real_system(cfg, s)
        for i, (q, label) in enumerate(ROWS):
            ax = axes[i, j]
            for m in cfg["methods"]:
                x, mean, sd = pooled_curve(pc[q], m, s)
                if not len(x):
                    continue
                style = method_style(m, cfg["methods"], PROPOSED)
                style["label"] = cfg["labels"].get(m, m)
                ax.plot(x, mean, **style)
                ax.fill_between(x, mean - sd, mean + sd, **band_style(style, 0.10))
            ax.set_ylabel(label)
            if i == 0:
                ax.set_title(f"{s} (mu={mu:g}, delay p={p:g})")
            if i == len(ROWS) - 1:
                ax.set_xlabel("deployment episode")
    axes[0, 0].set_ylim(-0.05, 1.05)
    legend_outside(fig)
    return fig


def adaptation(cfg, pc):
    plt = pyplot()
    fig, (a1, a2) = subplots(1, 2, figsize=(9.6, 3.4))
    colors = plt.get_cmap("tab10")
    for k, s in enumerate(cfg["settings"]):
        mu, _ = real_system(cfg, s)
        for ax, q in ((a1, "alpha"), (a2, "mu_hat")):
            x, mean, sd = pooled_curve(pc[q], PROPOSED, s)
            if not len(x):
                continue
            ax.plot(x, mean, color=colors(k), label=s)
            if q == "alpha":
                ax.fill_between(x, mean - sd, mean + sd, color=colors(k), alpha=0.15)
            else:
                # band: mean posterior sd (the posterior's own uncertainty)
                _, post_sd, _ = pooled_curve(pc["sd"], PROPOSED, s)
                ax.fill_between(x, mean - post_sd, mean + post_sd, color=colors(k), alpha=0.25)
                ax.axhline(mu, color=colors(k), ls=":", lw=1)
    a1.set_ylabel("risk level alpha (PROPOSED)")
    a2.set_ylabel("posterior mean mu_hat +- sd")
    for ax in (a1, a2):
        ax.set_xlabel("deployment episode")
    a1.axhline(1.0, color=REFERENCE_COLOR, lw=0.8)
    legend_outside(fig, title="setting")
    return fig


def make(cfg, metrics, curves) -> dict:
    pc = pooled_curves(curves)
    return {"deployment": deployment(cfg, pc), "adaptation": adaptation(cfg, pc)}


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    rows = []
    for s in cfg["settings"]:
        for m in cfg["methods"]:
            rows.append({
                "environment": s, "method": cfg["labels"].get(m, m),
                "early violation (ep 1-3)": round(pooled(metrics, m, s, "early_violation"), 3),
                "late violation (ep 4-20)": round(pooled(metrics, m, s, "late_violation"), 3),
                "time-to-stop (s, ep 6-20)": round(pooled(metrics, m, s, "time_to_stop"), 2),
                "margin (m, ep 6-20)": round(pooled(metrics, m, s, "margin"), 2),
                "alpha (ep 6-20)": round(pooled(metrics, m, s, "alpha"), 3),
            })
    return {"Violation rates and time-to-stop, pooled over all deployment runs":
            pd.DataFrame(rows)}
