"""Main table (figure and table), the add-DYN / move-DYN bars, MSE vs lookback, an example
forecast."""

from __future__ import annotations

import numpy as np
import pandas as pd

from icml26.plotting import REFERENCE_COLOR, legend_outside, method_label, method_style, subplots

from . import PROPOSED
from .data import LABELS

CONFIGURATION = {"linear": "DYN only", "informer-lite": "PRO only",
                 "informer-lite+dyn": "PRO -> DYN", "patch-lite": "PRO -> DYN",
                 "patch-lite-dynfirst": "DYN -> PRO"}
HORIZON = 48


def _cells(cfg, horizon=HORIZON):
    """(dataset, L, setting) of the cells with the spec's horizon, by data set then L."""
    out = [(s["dataset"], int(s["lookback"]), name) for name, s in cfg["settings"].items()
           if int(s["horizon"]) == horizon]
    order = {d: i for i, d in enumerate(LABELS)}
    return sorted(out, key=lambda c: (order.get(c[0], 99), c[1]))


def _methods(cfg, metrics):
    return [m for m in cfg["methods"] if (metrics["method"] == m).any()]


def _stats(metrics, method, setting, col="test_mse"):
    v = metrics.loc[(metrics["method"] == method) & (metrics["setting"] == setting), col]
    v = v.to_numpy(float)
    return (np.nanmean(v), np.nanstd(v)) if len(v) else (np.nan, np.nan)


def _style(cfg, m, methods):
    st = method_style(m, methods, PROPOSED)
    st["label"] = f"{method_label(cfg, m)} ({CONFIGURATION.get(m, '?')})"
    return st


def _bars(ax, cfg, metrics, cells, methods_here, methods, title):
    """Bars of `methods_here` per cell, coloured as in the whole method list `methods`."""
    width = 0.8 / max(len(methods_here), 1)
    for k, m in enumerate(methods_here):
        st = _style(cfg, m, methods)
        stats = [_stats(metrics, m, s) for _, _, s in cells]
        mean, sd = [a for a, _ in stats], [b for _, b in stats]
        x = np.arange(len(cells)) + (k - (len(methods_here) - 1) / 2) * width
        ax.bar(x, mean, width, yerr=sd, color=st["color"], label=st["label"], zorder=st["zorder"],
               edgecolor="black", linewidth=0.4, capsize=2)
    ax.set_xticks(range(len(cells)), [f"{LABELS[d]}\nL = {L}" for d, L, _ in cells])
    ax.set_ylabel("test MSE (standardised)")
    ax.set_title(title)


def main_table(cfg, metrics):
    """One panel per data set (their MSE scales differ), bars per lookback and model."""
    methods = sorted(_methods(cfg, metrics), key=lambda m: list(CONFIGURATION).index(m))
    cells = _cells(cfg)
    datasets = list(dict.fromkeys(d for d, _, _ in cells)) or [None]
    fig, axes = subplots(1, len(datasets), figsize=(max(7.5, 3.4 * len(datasets) + 3.5), 3.8),
                         squeeze=False)
    for ax, d in zip(axes[0], datasets, strict=True):
        here = [c for c in cells if c[0] == d]
        _bars(ax, cfg, metrics, here, methods, methods, LABELS.get(d, ""))
        ax.set_xticks(range(len(here)), [f"L = {L}" for _, L, _ in here])
    fig.suptitle(f"Test MSE per model, H = {HORIZON} (mean ± s.d. over seeds)")
    legend_outside(fig, title="model (PRO-DYN configuration)")
    return fig


def dyn_add_move(cfg, metrics):
    cells = _cells(cfg)
    methods = _methods(cfg, metrics)
    fig, axes = subplots(1, 2, figsize=(max(9.0, 2.4 * len(cells) + 2.0), 3.8))
    for ax, pair, title in ((axes[0], ("informer-lite", "informer-lite+dyn"),
                             "Adding a final DYN (INFORMER-LITE)"),
                            (axes[1], ("patch-lite", "patch-lite-dynfirst"),
                             "Moving DYN to the front (PATCH-LITE)")):
        _bars(ax, cfg, metrics, cells, [m for m in pair if m in methods], methods, title)
        ax.set_yscale("log")  # the data sets' MSEs differ by an order of magnitude
        ax.set_ylabel("test MSE (standardised, log scale)")
        ax.tick_params(axis="x", labelsize=8)
    legend_outside(fig, below=True)
    return fig


def lookback(cfg, metrics):
    cells = _cells(cfg)
    datasets = list(dict.fromkeys(d for d, _, _ in cells))
    methods = _methods(cfg, metrics)
    fig, axes = subplots(1, max(len(datasets), 1),
                         figsize=(max(6.4, 3.6 * len(datasets) + 2.2), 3.6), squeeze=False)
    for ax, d in zip(axes[0], datasets, strict=False):
        here = [(L, s) for dd, L, s in cells if dd == d]
        Ls = [L for L, _ in here]
        for m in methods:
            st = _style(cfg, m, methods)
            stats = [_stats(metrics, m, s) for _, s in here]
            mean, sd = [a for a, _ in stats], [b for _, b in stats]
            ax.errorbar(Ls, mean, yerr=sd, marker="o", capsize=3, **st)
        ref = [metrics.loc[metrics["setting"] == s, "ls_test_mse"].iloc[0] for _, s in here]
        ax.plot(Ls, ref, ls=":", color=REFERENCE_COLOR, marker="x",
                label="least-squares optimum of LINEAR's class")
        ax.set_xscale("log")
        ax.set_xticks(Ls, [str(L) for L in Ls])
        ax.minorticks_off()
        ax.set_xlabel("lookback L")
        ax.set_ylabel("test MSE (standardised)")
        ax.set_title(LABELS[d])
    legend_outside(fig, below=True)
    return fig


def example_forecast(cfg, curves):
    cells = [c for c in _cells(cfg) if c[0] == "ett"] or _cells(cfg)
    fig, ax = subplots(figsize=(8.0, 3.6))
    if not cells:
        return fig
    _, L, setting = max(cells, key=lambda c: c[1])
    part = curves[curves["setting"] == setting]
    seed = part["seed"].min()
    truth = part[(part["metric"] == "truth") & (part["seed"] == seed)].drop_duplicates("step")
    truth = truth[truth["step"] >= -96]
    ax.plot(truth["step"], truth["value"], color=REFERENCE_COLOR, lw=1.4, label="truth", zorder=1)
    methods = [m for m in cfg["methods"] if (part["method"] == m).any()]
    for m in methods:
        f = part[(part["method"] == m) & (part["seed"] == seed) & (part["metric"] == "forecast")]
        st = _style(cfg, m, methods)
        ax.plot(f["step"], f["value"], **st)
    ax.axvline(0, color="black", lw=0.8, ls="--")
    ax.set_xlabel("step relative to the forecast start")
    ax.set_ylabel("value (standardised), channel 0")
    ax.set_title(f"{LABELS.get(cfg['settings'][setting]['dataset'], setting)}, L = {L}: "
                 f"first test window (seed {seed})")
    legend_outside(ax)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"main_table": main_table(cfg, metrics), "dyn_add_move": dyn_add_move(cfg, metrics),
            "lookback": lookback(cfg, metrics), "example_forecast": example_forecast(cfg, curves)}


def tables(cfg, metrics, curves) -> dict:
    methods = sorted(_methods(cfg, metrics), key=lambda m: list(CONFIGURATION).index(m))
    cells = [(s["dataset"], int(s["lookback"]), int(s["horizon"]), name)
             for name, s in cfg["settings"].items()]
    rows = []
    for m in methods:
        row = {"PRO-DYN": CONFIGURATION.get(m, "?"), "model": method_label(cfg, m)}
        part = metrics[metrics["method"] == m]
        for d, L, H, s in cells:
            col = f"{LABELS[d]} L={L}" + ("" if H == HORIZON else f" H={H}")
            mse, msd = _stats(metrics, m, s)
            mae, asd = _stats(metrics, m, s, "test_mae")
            n = int(((part["setting"] == s) & np.isfinite(part["test_mse"])).sum())
            row[col] = f"MSE {mse:.4f} ± {msd:.4f} / MAE {mae:.4f} ± {asd:.4f} (n={n})"
        rows.append(row)
    ref = {"PRO-DYN": "reference", "model": "least-squares LINEAR (closed form, no seed)"}
    for d, L, H, s in cells:
        v = metrics.loc[metrics["setting"] == s, "ls_test_mse"]
        ref[f"{LABELS[d]} L={L}" + ("" if H == HORIZON else f" H={H}")] = \
            f"MSE {v.iloc[0]:.4f}" if len(v) else "—"
    rows.append(ref)
    extra = []
    for m in methods:
        part = metrics[metrics["method"] == m]
        for d, L, H, s in cells:
            p = part[part["setting"] == s]
            if not len(p):
                continue
            extra.append({"model": method_label(cfg, m), "cell": f"{LABELS[d]} L={L} H={H}",
                          "parameters": int(p["n_params"].iloc[0]),
                          "best val MSE (mean)": f"{p['val_mse_best'].mean():.4f}",
                          "best step (mean)": f"{p['best_step'].mean():.0f}",
                          "failed runs": int((~np.isfinite(p["test_mse"])).sum())})
    return {"Main table: test MSE / MAE per model and cell (standardised scale, mean ± s.d. over "
            "seeds), grouped by PRO-DYN configuration": pd.DataFrame(rows),
            "Parameters, best validation MSE and best checkpoint step": pd.DataFrame(extra)}
