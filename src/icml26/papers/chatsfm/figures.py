"""The zero-shot MSE per dataset (the paper's main table, as bars and as Table 1), CHADA's
relative MSE per dataset (the "consistent improvement" chart) and the gate diagnostic."""

from __future__ import annotations

import numpy as np
import pandas as pd

from icml26.plotting import (
    REFERENCE_COLOR,
    legend_outside,
    method_colors,
    method_label,
    method_zorder,
    subplots,
)

from . import PROPOSED
from .claims import ALL, col, rel


def _kinds(metrics):
    return [k for k in ALL if f"mse_{k}" in metrics]


def _main(cfg):
    return list(cfg["settings"])[0]


def zero_shot_mse(cfg, metrics):
    s = _main(cfg)
    methods = [m for m in cfg["methods"] if (metrics["method"] == m).any()]
    colors = method_colors(methods, PROPOSED)
    kinds = _kinds(metrics)
    fig, ax = subplots(figsize=(9.0, 3.8))
    width = 0.8 / max(1, len(methods))
    for i, m in enumerate(methods):
        xs, ys, es = [], [], []
        for j, k in enumerate(kinds):
            v = col(metrics, m, s, f"mse_{k}")
            if len(v):
                xs.append(j + (i - (len(methods) - 1) / 2) * width)
                ys.append(v.mean())
                es.append(v.std(ddof=0))
        ax.bar(xs, ys, width, yerr=es, color=colors[m], label=method_label(cfg, m), capsize=2,
               zorder=method_zorder(m, PROPOSED), hatch="//" if m == "local-var" else None,
               edgecolor="white" if m == "local-var" else None)
    ax.set_xticks(range(len(kinds)), [k.upper() for k in kinds])
    ax.set_ylabel("zero-shot test MSE (standardised)")
    ax.set_title(f"Held-out datasets, backbone {s}")
    legend_outside(fig)
    return fig


def relative_mse(cfg, metrics):
    s = _main(cfg)
    kinds = _kinds(metrics)
    color = method_colors(list(cfg["methods"]), PROPOSED)[PROPOSED]
    fig, ax = subplots(figsize=(7.6, 3.6))
    for j, k in enumerate(kinds):
        r = rel(metrics, PROPOSED, s, k)
        if not len(r):
            continue
        ax.bar(j, r.mean(), 0.6, color=color, alpha=0.8, zorder=2,
               label=method_label(cfg, PROPOSED) + " (mean)" if j == 0 else None)
        ax.scatter(j + np.linspace(-0.15, 0.15, len(r)), r.to_numpy(), s=14, color="black",
                   zorder=4, label="seeds" if j == 0 else None)
    ax.axhline(1.0, color=REFERENCE_COLOR, lw=1, label="TSFM (= 1)")
    ax.axhline(0.95, color=REFERENCE_COLOR, lw=1, ls="--", label="headline 0.95")
    ax.set_xticks(range(len(kinds)), [k.upper() for k in kinds])
    ax.set_ylabel("MSE(CHADA) / MSE(TSFM)")
    lo = min([1.0] + [rel(metrics, PROPOSED, s, k).min() for k in kinds
                      if len(rel(metrics, PROPOSED, s, k))])
    ax.set_ylim(max(0.0, lo - 0.1), None)
    legend_outside(fig)
    return fig


def gate(cfg, metrics):
    s = _main(cfg)
    kinds = [k for k in ALL if f"gate_{k}" in metrics]
    methods = [m for m in ("chada", "chada-nodesc") if (metrics["method"] == m).any()]
    colors = method_colors(list(cfg["methods"]), PROPOSED)
    fig, ax = subplots(figsize=(7.6, 3.6))
    width = 0.38
    for i, m in enumerate(methods):
        xs, ys, es = [], [], []
        for j, k in enumerate(kinds):
            v = col(metrics, m, s, f"gate_{k}")
            xs.append(j + (i - 0.5) * width)
            ys.append(v.mean())
            es.append(v.std(ddof=0))
        ax.bar(xs, ys, width, yerr=es, color=colors[m], label=method_label(cfg, m), capsize=2,
               zorder=method_zorder(m, PROPOSED))
    ax.axhline(1.0 / (1.0 + np.exp(-float(cfg["params"]["gate_bias"]))), color=REFERENCE_COLOR,
               ls=":", lw=1, label="gate at initialisation")
    ax.set_xticks(range(len(kinds)), [k.upper() for k in kinds])
    ax.set_ylabel("mean gate g")
    legend_outside(fig)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"zero_shot_mse": zero_shot_mse(cfg, metrics),
            "relative_mse": relative_mse(cfg, metrics), "gate": gate(cfg, metrics)}


def tables(cfg, metrics, curves) -> dict:
    out = {}
    for s in cfg["settings"]:
        kinds = _kinds(metrics)
        rows = []
        for k in kinds:
            row = {"dataset": k.upper()}
            for m in cfg["methods"]:
                v = col(metrics, m, s, f"mse_{k}")
                row[method_label(cfg, m)] = (f"{v.mean():.4f} ± {v.std(ddof=0):.4f}"
                                             if len(v) else "—")
            rows.append(row)
        out[f"Table 1 ({s}): zero-shot test MSE per held-out dataset (mean ± std over "
            "seeds; LOCAL-VAR fitted in-domain)"] = pd.DataFrame(rows)
        rows = []
        for m in ("chada", "chada-nodesc", "dense-nogate"):
            row = {"method": method_label(cfg, m)}
            for k in kinds:
                r = rel(metrics, m, s, k)
                row[f"rel. MSE {k.upper()}"] = f"{r.mean():.3f}" if len(r) else "—"
            for k in ("leadlag", "mixed"):
                v = col(metrics, m, s, f"nprec_{k}")
                if len(v):
                    row[f"nbr. precision {k.upper()}"] = f"{v.mean():.2f}"
            v = col(metrics, m, s, "n_params")
            row["parameters"] = f"{v.iloc[0]:.0f}" if len(v) else "—"
            for c in cfg["params"]["timing_channels"]:
                v = col(metrics, m, s, f"cpu_s_per_1k_cw_C{c}")
                if len(v):
                    row[f"CPU-s / 1000 channel-windows (C={c})"] = f"{v.median():.3f}"
            rows.append(row)
        out[f"Table 2 ({s}): adapters — relative MSE vs the TSFM, neighbour precision, "
            "size and inference cost (mean over seeds; CPU time median)"] = pd.DataFrame(rows)
        rows = []
        for k in kinds:
            v = col(metrics, "local-var", s, f"log10_alpha_{k}")
            e = col(metrics, "local-var", s, f"alpha_at_edge_{k}")
            if len(v):
                rows.append({"dataset": k.upper(),
                             "chosen alpha per seed": ", ".join(f"{10 ** x:g}" for x in v),
                             "seeds at the final grid's edge": int(e.sum())})
        if rows:
            out[f"Table 3 ({s}): LOCAL-VAR ridge alpha (grid "
                f"{list(cfg['params']['alpha_grid'])}, extended x10 at a chosen edge at most "
                f"{cfg['params']['alpha_extend']} times; chosen on the latest 20% of the fit "
                "part)"] = pd.DataFrame(rows)
    return out
