"""Fig. 1 (accuracy vs simulated wall-clock, 2x2), Fig. 2 (TTT bars with seed dots), tables."""

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

from . import PROPOSED
from .claims import core_settings

ROWS, COLS = ("low", "high"), ("iid", "noniid")


def _methods(cfg, metrics):
    return [m for m in cfg["methods"] if (metrics["method"] == m).any()]


def _param(cfg, setting, key):
    return {**cfg["params"], **(cfg["settings"][setting] or {})}[key]


def accuracy_vs_time(cfg, metrics, curves):
    cells = core_settings(cfg)
    panels = [(r, c) for r in ROWS for c in COLS if (r, c) in cells]
    if not panels:                      # no spec cell in this grid: one panel per setting
        panels = [(s, None) for s in cfg["settings"]]
    nrows = 2 if len(panels) > 2 else 1
    ncols = int(np.ceil(len(panels) / nrows))
    fig, axes = subplots(nrows, ncols, figsize=(4.2 * ncols + 2.0, 3.2 * nrows), squeeze=False,
                         sharey=True)
    methods = _methods(cfg, metrics)
    acc = curves[curves["metric"] == "acc"]
    for ax, key in zip(axes.ravel(), panels, strict=False):
        setting = cells[key] if key[1] is not None else key[0]
        for m in methods:
            part = acc[(acc["method"] == m) & (acc["setting"] == setting)]
            if part.empty:
                continue
            table = part.pivot_table(index="seed", columns="step", values="value")
            t = table.columns.to_numpy(dtype=float)
            mean, std = table.mean(axis=0).to_numpy(), table.std(axis=0, ddof=0).to_numpy()
            style = method_style(m, methods, PROPOSED)
            style["label"] = method_label(cfg, m)
            if m.startswith("fedqueue-"):          # ablations dashed (project style)
                style["linestyle"] = "--"
            ax.plot(t, mean, **style)
            ax.fill_between(t, mean - std, mean + std, **band_style(style))
        ax.axhline(float(_param(cfg, setting, "target")), color=REFERENCE_COLOR, ls=":", lw=1)
        ax.set_title(f"{setting} (σ_q={_param(cfg, setting, 'sigma_q')}, "
                     f"α={_param(cfg, setting, 'alpha')})")
        ax.set_xlabel("simulated wall-clock (minutes)")
        ax.set_ylim(0, 1)
    for ax in axes[:, 0]:
        ax.set_ylabel("global test accuracy")
    for ax in axes.ravel()[len(panels):]:
        ax.set_visible(False)
    legend_outside(fig)
    return fig


def ttt(cfg, metrics, curves):
    methods = _methods(cfg, metrics)
    settings = list(cfg["settings"])
    fig, ax = subplots(figsize=(min(18.0, max(5.0, 0.45 * len(settings) * len(methods)) + 2.0),
                                3.6))
    width = 0.8 / len(methods)
    for k, m in enumerate(methods):
        style = method_style(m, methods, PROPOSED)
        for j, s in enumerate(settings):
            v = metrics[(metrics["method"] == m) & (metrics["setting"] == s)]["ttt"].to_numpy(
                dtype=float)
            if not v.size:
                continue
            x = j + (k - (len(methods) - 1) / 2) * width
            ax.bar(x, v.mean(), width * 0.9, color=style["color"], alpha=0.75,
                   label=method_label(cfg, m) if j == 0 else None, zorder=style["zorder"])
            ax.scatter(np.full(v.size, x), v, s=9, color="black", zorder=style["zorder"] + 1)
    horizons = {float(_param(cfg, s, "horizon")) for s in settings}
    for h in horizons:
        ax.axhline(h, color=REFERENCE_COLOR, ls="--", lw=1)
    ax.set_xticks(range(len(settings)))
    ax.set_xticklabels(settings, rotation=20, ha="right")
    ax.set_ylabel("time to target accuracy (minutes)")
    ax.set_title("Time to target (dashed: T_max = censored)")
    legend_outside(fig)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"accuracy_vs_time": accuracy_vs_time(cfg, metrics, curves),
            "ttt": ttt(cfg, metrics, curves)}


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    rows, red = [], []
    methods = _methods(cfg, metrics)
    for s in cfg["settings"]:
        means = {}
        for m in methods:
            part = metrics[(metrics["method"] == m) & (metrics["setting"] == s)]
            if part.empty:
                continue
            means[m] = float(part["ttt"].mean())
            rows.append({
                "setting": s, "method": method_label(cfg, m),
                "TTT (mean)": means[m], "TTT (std)": float(part["ttt"].std(ddof=0)),
                "censored": int(part["censored"].sum()),
                "final acc": float(part["final_acc"].mean()),
                "AUC/T_max": float(part["auc"].mean()),
                "staleness p95": float(part["stale_p95"].mean()),
                "staleness max": float(part["stale_max"].max()),
                "dropped frac": float(part["drop_frac"].mean()),
                "global updates": float(part["updates"].mean()),
                "mean local steps": float(part["mean_steps"].mean()),
                "queue pred. err |log d̂ - log d|": float(part["pred_err"].mean()),
            })
        if PROPOSED in means:
            red.append({"setting": s, **{
                f"1 - TTT(FedQueue)/TTT({method_label(cfg, b)})": 1 - means[PROPOSED] / means[b]
                for b in means if b != PROPOSED and means[b] > 0}})
    return {
        "TTT, final accuracy and staleness per method and setting (means over seeds)":
            pd.DataFrame(rows),
        "Relative TTT reduction of FedQueue vs each baseline (ratio of mean TTTs; FedBuff "
        "reported, not claimed)": pd.DataFrame(red),
    }
