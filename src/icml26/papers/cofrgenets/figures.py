"""Figures (bpc curves, bpc vs parameters) and tables (main table, gradient tests)."""

from __future__ import annotations

import numpy as np

from icml26.plotting import band_style, legend_outside, method_label, method_style, subplots

from . import PROPOSED
from .claims import FULL, GRAD, lm_setting

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p", "8", "d")


def _lm_methods(cfg, metrics):
    return [m for m in cfg["methods"] if m != GRAD and (metrics["method"] == m).any()]


def bpc_curves(cfg, metrics, curves):
    s = lm_setting(cfg)
    methods = _lm_methods(cfg, metrics)
    fig, ax = subplots(figsize=(7.6, 3.8))
    for m in methods:
        part = curves[(curves["method"] == m) & (curves["setting"] == s)
                      & (curves["metric"] == "val_bpc_curve")]
        if part.empty:
            continue
        table = part.pivot_table(index="seed", columns="step", values="value", aggfunc="first")
        steps = table.columns.to_numpy(dtype=float)
        mean, std = table.mean(axis=0).to_numpy(), table.std(axis=0, ddof=0).to_numpy()
        style = method_style(m, methods, PROPOSED)
        style["label"] = method_label(cfg, m)
        ax.plot(steps, mean, **style)
        ax.fill_between(steps, mean - std, mean + std, **band_style(style, 0.18))
    ax.set_xlabel("training step")
    ax.set_ylabel("validation bits per character")
    part = curves[curves["metric"] == "val_bpc_curve"]
    later = part.loc[part["step"] > np.sort(part["step"].unique())[:2].max(), "value"]
    if len(later):  # zoom on the later part: step 0 (~6.5 bpc) would flatten every curve
        ax.set_ylim(float(later.min()) - 0.05, float(later.max()) + 0.15)
    ax.set_title("Char-level LM on pydoc topics: validation bpc during training")
    legend_outside(fig)
    return fig


def bpc_vs_params(cfg, metrics, curves):
    s = lm_setting(cfg)
    methods = _lm_methods(cfg, metrics)
    fig, ax = subplots(figsize=(7.6, 3.8))
    for i, m in enumerate(methods):
        part = metrics[(metrics["method"] == m) & (metrics["setting"] == s)]
        style = method_style(m, methods, PROPOSED)
        ax.scatter(part["n_params"], part["val_bpc"], color=style["color"],
                   marker=MARKERS[i % len(MARKERS)], s=36 if m in PROPOSED else 24,
                   label=method_label(cfg, m), zorder=style["zorder"])
    ax.set_xlabel("trainable parameters (tied embeddings once)")
    ax.set_ylabel("final validation bpc (whole split)")
    ax.set_title("Validation bpc vs parameter count (one point per model and seed)")
    legend_outside(fig)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"bpc_curves": bpc_curves(cfg, metrics, curves),
            "bpc_vs_params": bpc_vs_params(cfg, metrics, curves)}


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    s = lm_setting(cfg)
    rows = []
    full = metrics[(metrics["method"] == FULL) & (metrics["setting"] == s)]
    full_params = float(full["n_params"].mean()) if len(full) else np.nan
    for m in _lm_methods(cfg, metrics):
        part = metrics[(metrics["method"] == m) & (metrics["setting"] == s)]
        bpc = part["val_bpc"].to_numpy(dtype=float)
        params = float(part["n_params"].mean())
        rows.append({
            "model": method_label(cfg, m),
            "parameters": int(round(params)),
            "ratio to Transformer-full": round(params / full_params, 3),
            "validation bpc (mean ± std)": f"{bpc.mean():.4f} ± {bpc.std(ddof=0):.4f}",
            "CPU ms / step": round(1e3 * float(part["cpu_s_per_step"].mean()), 2),
            "seeds": len(part),
        })
    main = pd.DataFrame(rows)
    grad = metrics[metrics["method"] == GRAD]
    names = {
        "rand_custom32_vs_analytic64": "random: custom fp32 vs analytic fp64 (max rel. err.)",
        "rand_custom32_vs_autograd64": "random: custom fp32 vs nested autograd fp64",
        "rand_custom64_vs_autograd64": "random: custom fp64 vs nested autograd fp64",
        "rand_custom64_vs_analytic64": "random: custom fp64 vs analytic fp64",
        "rand_naive32_vs_analytic64": "random: naive autograd fp32 vs analytic fp64",
        "rand_custom64_vs_fd": "random: custom fp64 vs central finite differences",
        "rand_forward64_rel_diff": "random: forward, continuant vs nested fp64",
        "stress_naive32_nonfinite_frac": "stress: naive autograd fp32, non-finite fraction",
        "stress_custom32_nonfinite_frac": "stress: custom fp32, non-finite fraction",
        "stress_custom32_vs_analytic64": "stress: custom fp32 vs analytic fp64 (max rel. err.)",
    }
    grows = []
    for col, title in names.items():
        if col in grad:
            values = grad[col].to_numpy(dtype=float)
            worst = values.max() if "frac" not in col or "custom" in col else values.min()
            grows.append({"test": title, "worst over jobs": f"{worst:.3g}",
                          "jobs": len(values)})
    return {"Main table: models, parameters, validation bpc, CPU time per step": main,
            _grad_title(grad): pd.DataFrame(grows)}


def _grad_title(grad) -> str:
    if len(grad) and "grad_vectors" in grad:
        n, d = int(grad["grad_vectors"].iloc[0]), int(grad["grad_depth"].iloc[0])
        return f"Gradient tests ({n} vectors per set and job, depth D = {d})"
    return "Gradient tests"
