"""Figures and Table 1 of also-social: scores per method (headline, Table 1 as bars), score
curves over episodes, and the ablation bars."""

from __future__ import annotations

import numpy as np
import pandas as pd

from icml26.plotting import legend_outside, method_label, method_style, subplots

from . import PROPOSED

ABLATION = ("also", "also-nohist", "also-iw", "also-lin", "also-pooled")
DASHED = ("also-pooled",)      # the spec's own design, reported (not claimed)


def _present(cfg, metrics, setting):
    return [m for m in cfg["methods"]
            if ((metrics["method"] == m) & (metrics["setting"] == setting)).any()]


def _vals(metrics, method, setting, col="score") -> np.ndarray:
    part = metrics[(metrics["method"] == method) & (metrics["setting"] == setting)]
    return part.sort_values("seed")[col].to_numpy(dtype=float)


def _bars(ax, cfg, metrics, setting, methods, col="score"):
    for i, m in enumerate(methods):
        st = method_style(m, cfg["methods"], PROPOSED)
        v = _vals(metrics, m, setting, col)
        ok = v[np.isfinite(v)]
        if not ok.size:
            continue
        sd = float(ok.std(ddof=1)) if ok.size > 1 else 0.0
        ax.bar(i, ok.mean(), color=st["color"], zorder=st["zorder"], alpha=0.85,
               label=method_label(cfg, m))
        ax.errorbar(i, ok.mean(), yerr=sd, color="black", capsize=3, linewidth=1,
                    zorder=st["zorder"] + 0.1)
        ax.plot(np.full(ok.size, i), ok, "o", color="black", markersize=2.5,
                zorder=st["zorder"] + 0.2)
    ax.set_xticks(range(len(methods)))
    ax.set_xticklabels([method_label(cfg, m) for m in methods], rotation=55, ha="right")


def scores_figure(cfg, metrics):
    settings = [s for s in ("adversarial", "stationary") if s in set(metrics["setting"])]
    widths = [max(1, len(_present(cfg, metrics, s))) for s in settings]
    fig, axes = subplots(1, len(settings), figsize=(9.0, 4.2), squeeze=False,
                         gridspec_kw={"width_ratios": widths})
    for ax, s in zip(axes[0], settings, strict=True):
        _bars(ax, cfg, metrics, s, _present(cfg, metrics, s))
        ax.set_title(f"{s} setting")
        ax.set_ylabel("episode score (0-10)")
    return fig


def curves_figure(cfg, metrics, curves):
    w = int(cfg["params"]["curve_window"])
    fig, ax = subplots(figsize=(8.0, 4.0))
    c = curves[(curves["setting"] == "adversarial") & (curves["metric"] == "score")]
    for m in [m for m in cfg["methods"] if m not in ABLATION[1:4]]:
        part = c[c["method"] == m]
        if part.empty:
            continue
        tab = part.pivot_table(index="step", columns="seed", values="value").sort_index()
        ma = tab.rolling(w, min_periods=1).mean()
        mean, sd = ma.mean(axis=1), ma.std(axis=1, ddof=1).fillna(0.0)
        st = method_style(m, cfg["methods"], PROPOSED)
        st["label"] = method_label(cfg, m)
        ax.plot(ma.index, mean, linestyle="--" if m in DASHED else "-", **st)
        ax.fill_between(ma.index, mean - sd, mean + sd, color=st["color"], alpha=0.12,
                        linewidth=0, zorder=st["zorder"] - 0.5)
    warm = int(cfg["params"]["warmup_episodes"])
    if 0 < warm < int(cfg["params"]["episodes"]):
        ax.axvline(warm + 0.5, color="#999999", linestyle=":", linewidth=1,
                   label="end of warm-up")
    ax.set_xlabel("episode")
    ax.set_ylabel(f"episode score (moving average of {w})")
    ax.set_title("adversarial setting")
    legend_outside(ax)
    return fig


def ablation_figure(cfg, metrics):
    methods = [m for m in ABLATION if ((metrics["method"] == m)
                                       & (metrics["setting"] == "adversarial")).any()]
    fig, axes = subplots(1, 2, figsize=(8.0, 3.8))
    _bars(axes[0], cfg, metrics, "adversarial", methods)
    axes[0].set_ylabel("episode score (0-10)")
    _bars(axes[1], cfg, metrics, "adversarial", methods, col="oracle_frac")
    axes[1].set_ylabel("fraction of turns on the best arm")
    for ax in axes:
        ax.set_title("adversarial setting")
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"scores": scores_figure(cfg, metrics), "curves": curves_figure(cfg, metrics, curves),
            "ablation": ablation_figure(cfg, metrics)}


def tables(cfg, metrics, curves) -> dict:
    rows = []
    for s in ("adversarial", "stationary"):
        for m in _present(cfg, metrics, s):
            row = {"setting": s, "method": method_label(cfg, m)}
            for col, name in (("score", "episode score"), ("oracle_frac", "on best arm"),
                              ("surrogate_mse", "surrogate MSE")):
                v = _vals(metrics, m, s, col)
                v = v[np.isfinite(v)]
                row[name] = (f"{v.mean():.3f} ± {v.std(ddof=1):.3f}" if v.size > 1
                             else f"{v.mean():.3f}" if v.size else "")
            rows.append(row)
    title = ("Table 1: episode score (0-10, episodes after the warm-up), fraction of turns on "
             "the noiseless best arm and surrogate squared error, mean ± s.d. over seeds")
    return {title: pd.DataFrame(rows)}
