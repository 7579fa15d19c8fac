"""Accuracy per method and setting (main table), false-yes rate (hallucination), the ImpQuant
visual-token weight heat map; tables: main table with per-type accuracy, hallucination,
token-weight diagnostics."""

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
from .experiment import TYPES


def _bars(cfg, metrics, column, fp_column, ylabel):
    settings = [s for s in cfg["settings"] if s in set(metrics["setting"])]
    methods = [m for m in cfg["methods"] if m in set(metrics["method"])]
    colors = method_colors(cfg["methods"], PROPOSED)
    fig, ax = subplots(figsize=(7.4, 3.6))
    width = 0.8 / max(1, len(methods))
    labelled: set = set()
    for k, m in enumerate(methods):
        for i, s in enumerate(settings):
            v = metrics[(metrics["method"] == m) & (metrics["setting"] == s)][column]
            if not len(v):
                continue
            ax.bar(i + (k - (len(methods) - 1) / 2) * width, v.mean(), width,
                   yerr=v.std(ddof=0) if len(v) > 1 else None, color=colors[m],
                   label="_nolegend_" if m in labelled else method_label(cfg, m),
                   zorder=method_zorder(m, PROPOSED),
                   capsize=2, error_kw={"linewidth": 0.8})
            labelled.add(m)
    fp = metrics.groupby("seed")[fp_column].first().mean() if len(metrics) else np.nan
    ax.axhline(fp, color=REFERENCE_COLOR, linestyle="--", linewidth=1.2, label="FP model")
    ax.set_xticks(range(len(settings)), settings)
    ax.set_xlabel("quantisation setting")
    ax.set_ylabel(ylabel)
    legend_outside(ax)
    return fig


def _heatmap(cfg, curves):
    part = curves[curves["metric"].astype(str).str.startswith("heatmap_")]
    ids = sorted({int(m.rsplit("_", 1)[1]) for m in part["metric"].unique()})
    n = max(1, len(ids))
    fig, axes = subplots(2, n, figsize=(max(6.4, 2.4 * n + 1.2), 5.0), squeeze=False)
    im = None
    for c, i in enumerate(ids):
        def get(name, i=i):
            s = part[part["metric"] == f"{name}_{i}"].sort_values("step")["value"]
            return s.to_numpy(float)
        rgb = np.stack([get(f"heatmap_rgb{ch}") for ch in range(3)], -1).reshape(32, 32, 3)
        w, obj = get("heatmap_w").reshape(8, 8), get("heatmap_obj").reshape(8, 8)
        axes[0, c].imshow(np.clip(rgb, 0, 1), interpolation="nearest")
        axes[0, c].set_title(f"calibration image {i}")
        from matplotlib.colors import LogNorm
        im = axes[1, c].imshow(w, cmap="viridis", norm=LogNorm(vmin=0.05, vmax=20.0),
                               interpolation="nearest")
        for r, q in zip(*np.nonzero(obj), strict=True):
            axes[1, c].add_patch(__import__("matplotlib.patches", fromlist=["Rectangle"])
                                 .Rectangle((q - 0.5, r - 0.5), 1, 1, fill=False,
                                            edgecolor="white", linewidth=1.0))
        axes[1, c].set_title("ImpQuant weight per patch")
        for ax in axes[:, c]:
            ax.set_xticks([])
            ax.set_yticks([])
    if im is not None:
        fig.colorbar(im, ax=axes[1, :].tolist(), label="token weight (log)")
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"accuracy_table": _bars(cfg, metrics, "acc", "fp_acc", "test accuracy"),
            "hallucination": _bars(cfg, metrics, "false_yes", "fp_false_yes",
                                   "false-yes rate (absent EXIST probes)"),
            "weight_heatmap": _heatmap(cfg, curves)}


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    cols = ["acc"] + [f"acc_{t}" for t in TYPES]
    rows = []
    fp = metrics.groupby("seed")[[f"fp_{c}" for c in cols] + ["fp_false_yes",
                                                               "fp_exist_f1"]].first()
    rows.append({"method": "FP", "setting": "-"}
                | {c: f"{fp[f'fp_{c}'].mean():.3f} ± {fp[f'fp_{c}'].std(ddof=0):.3f}"
                   for c in cols} | {"seeds": len(fp)})
    hall = [{"method": "FP", "setting": "-",
             "false-yes rate": f"{fp['fp_false_yes'].mean():.3f} ± "
                               f"{fp['fp_false_yes'].std(ddof=0):.3f}",
             "EXIST F1": f"{fp['fp_exist_f1'].mean():.3f}"}]
    diag = []
    for s in cfg["settings"]:
        for m in cfg["methods"]:
            part = metrics[(metrics["method"] == m) & (metrics["setting"] == s)]
            if not len(part):
                continue
            lab = method_label(cfg, m)
            rows.append({"method": lab, "setting": s}
                        | {c: f"{part[c].mean():.3f} ± {part[c].std(ddof=0):.3f}" for c in cols}
                        | {"seeds": len(part)})
            hall.append({"method": lab, "setting": s,
                         "false-yes rate": f"{part['false_yes'].mean():.3f} ± "
                                           f"{part['false_yes'].std(ddof=0):.3f}",
                         "EXIST F1": f"{part['exist_f1'].mean():.3f}"})
            diag.append({"method": lab, "setting": s,
                         "degradation": part["degradation"].mean(),
                         "rel. err. object tokens": part["err_obj"].mean(),
                         "rel. err. background": part["err_bg"].mean(),
                         "rel. err. text": part["err_text"].mean(),
                         "rel. err. (uniform)": part["err_uniform"].mean(),
                         "rel. err. (ImpQuant-weighted)": part["err_impweighted"].mean(),
                         "mean w object": part["w_obj"].mean(),
                         "mean w background": part["w_bg"].mean()})
    pos = [c for c in metrics.columns if str(c).startswith("imp_w_textpos")]
    wt = metrics.groupby("seed")[["imp_w_obj", "imp_w_bg", "imp_w_text"] + pos].first().mean()
    weights = pd.DataFrame([{"token group": k.replace("imp_w_", ""), "mean ImpQuant weight": v}
                            for k, v in wt.items()])
    return {"Accuracy per method and setting (mean ± std over seeds; per question type)":
            pd.DataFrame(rows),
            "Hallucination: false-yes rate on absent EXIST probes, EXIST F1": pd.DataFrame(hall),
            "Degradation and mean relative layer-output error (12 LM layers, calibration set)":
            pd.DataFrame(diag),
            "ImpQuant token weights by group and text position (calibration set, mean over "
            "seeds)": weights}
