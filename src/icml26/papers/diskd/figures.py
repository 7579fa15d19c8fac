"""Figures of the spec (calibration curves and weights in S3) plus a headline summary, the
simulation table (rows = methods, columns = settings), the epoch choices under the grid-edge
rule and the spec's premises checked against the run."""

from __future__ import annotations

import numpy as np

from icml26.plotting import (
    BASELINE_ZORDER,
    PROPOSED_ZORDER,
    REFERENCE_COLOR,
    legend_outside,
    method_colors,
    method_label,
    method_zorder,
    subplots,
)

from . import PROPOSED
from .claims import premises, teacher_fits


def metrics_by_setting(cfg, metrics):
    methods = list(cfg["methods"])
    colors = method_colors(methods, PROPOSED)
    settings = list(cfg["settings"])
    fig, axes = subplots(1, 2, figsize=(10.0, 3.6))
    width = 0.8 / len(methods)
    for ax, col, title in ((axes[0], "cindex_1", "cause-1 C-index"),
                           (axes[1], "calib_1", "cause-1 calibration error")):
        for i, m in enumerate(methods):
            xs, ys, es = [], [], []
            for j, s in enumerate(settings):
                v = metrics[(metrics["method"] == m) & (metrics["setting"] == s)][col]
                if len(v):
                    xs.append(j + (i - (len(methods) - 1) / 2) * width)
                    ys.append(v.mean())
                    es.append(v.std(ddof=0))
            ax.bar(xs, ys, width, yerr=es, color=colors[m], label=method_label(cfg, m), capsize=2,
                   zorder=method_zorder(m, PROPOSED))
        ax.set_xticks(range(len(settings)), settings)
        ax.set_title(title)
    axes[0].set_ylim(0.4, None)
    legend_outside(fig)
    return fig


def calibration_s3(cfg, metrics):
    fig, ax = subplots(figsize=(6.4, 4.0))
    methods = [m for m in ("local-only", "naive-kd", "diskd") if m in cfg["methods"]]
    colors = method_colors(list(cfg["methods"]), PROPOSED)
    setting = "S3" if (metrics["setting"] == "S3").any() else list(cfg["settings"])[0]
    hi = 0.0
    for m in methods:
        part = metrics[(metrics["method"] == m) & (metrics["setting"] == setting)]
        if not len(part):
            continue
        pred = np.array([part[f"dec_pred_{d}"].mean() for d in range(10)])
        true = np.array([part[f"dec_true_{d}"].mean() for d in range(10)])
        ax.plot(pred, true, "-o", ms=3, color=colors[m], label=method_label(cfg, m),
                zorder=method_zorder(m, PROPOSED))
        hi = max(hi, pred.max(), true.max())
    ax.plot([0, hi], [0, hi], "--", color=REFERENCE_COLOR, lw=1)
    ax.set_xlabel("predicted CIF_1(10) (decile mean)")
    ax.set_ylabel("true CIF_1(10) (decile mean)")
    ax.set_title(f"Calibration, {setting}")
    legend_outside(fig)
    return fig


def weights_s3(cfg, metrics):
    fig, ax = subplots(figsize=(6.6, 3.6))
    setting = "S3" if (metrics["setting"] == "S3").any() else list(cfg["settings"])[0]
    part = metrics[(metrics["method"] == "diskd") & (metrics["setting"] == setting)]
    part = part.sort_values("seed")
    seeds = part["seed"].to_numpy()
    x = np.arange(len(seeds))
    for off, col, lab, color in ((-0.25, "w_compatible", "compatible", "#c0392b"),
                                 (0.0, "w_incompatible", "misspecified", "#34495e"),
                                 (0.25, "w_null", "null (local-only)", "#7f8c8d")):
        if col in part:
            ax.bar(x + off, part[col].fillna(0).to_numpy(), 0.25, color=color, label=lab,
                   zorder=PROPOSED_ZORDER if col == "w_compatible" else BASELINE_ZORDER)
    ax.axhline(0.8, ls="--", color=REFERENCE_COLOR, lw=1)
    ax.set_xticks(x, [str(s) for s in seeds])
    ax.set_xlabel("seed")
    ax.set_ylabel("DiSKD teacher weight")
    ax.set_title(f"Adaptive weights, {setting}")
    ax.set_ylim(0, 1.3)
    legend_outside(fig)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"metrics_by_setting": metrics_by_setting(cfg, metrics),
            "calibration_s3": calibration_s3(cfg, metrics),
            "weights_s3": weights_s3(cfg, metrics)}


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    rows = []
    for m in cfg["methods"]:
        row = {"method": method_label(cfg, m)}
        for s in cfg["settings"]:
            part = metrics[(metrics["method"] == m) & (metrics["setting"] == s)]
            if not len(part):
                row[s] = "-"
                continue
            row[s] = " / ".join(f"{part[c].mean():.3f}±{part[c].std(ddof=0):.3f}"
                                for c in ("cindex_1", "ibs_1", "calib_1"))
        rows.append(row)
    rows2 = []
    for m in cfg["methods"]:
        for s in cfg["settings"]:
            part = metrics[(metrics["method"] == m) & (metrics["setting"] == s)]
            if len(part):
                rows2.append({"method": method_label(cfg, m), "setting": s,
                              **{c: float(part[c].mean()) for c in
                                 ("cindex_2", "auc_1", "auc_2", "ibs_2", "calib_2")}})
    return {"Simulation table: cause-1 C-index / integrated Brier / calibration error "
            "(mean ± std over seeds)": pd.DataFrame(rows),
            "Cause 2 and AUC at t = 10 (means over seeds)": pd.DataFrame(rows2),
            EPOCH_TABLE: epoch_table(cfg, metrics),
            PREMISE_TABLE: pd.DataFrame(premises(cfg, metrics),
                                        columns=["premise (spec)", "measured", "reading",
                                                 "held"])}


EPOCH_TABLE = ("Epoch chosen by early stopping on validation NLL, with the grid-edge rule "
               "(best epoch = last epoch of the cap doubles the cap, at most twice): best "
               "epoch / final cap per seed")
PREMISE_TABLE = "The spec's premises, checked against this run"


def epoch_table(cfg, metrics):
    """Per model (student method x setting, local-only once; teachers by type): the starting
    cap, best epoch / final cap per seed, and how many were extended or stay on the edge."""
    import pandas as pd

    cols = ["model", "setting", "starting cap", "best / final cap per seed", "extended",
            "on the edge after the cap"]
    if "best_epoch" not in metrics:
        return pd.DataFrame(columns=cols)
    rows = []

    def row(model, setting, start, seeds, best, cap):
        pairs = ", ".join(f"{int(b)}/{int(c)}" for b, c in zip(best, cap, strict=True))
        ext = sum(c > start for c in cap)
        edge = [str(d) for d, b, c in zip(seeds, best, cap, strict=True) if b >= c]
        rows.append({"model": model, "setting": setting, "starting cap": int(start),
                     "best / final cap per seed": pairs, "extended": f"{ext} of {len(cap)}",
                     "on the edge after the cap": ", ".join(edge) if edge else "none"})

    epochs = float(cfg["params"]["epochs"])
    for m in cfg["methods"]:
        if m == "teacher-only":
            continue
        settings = list(cfg["settings"])[:1] if m == "local-only" else list(cfg["settings"])
        for s in settings:
            part = metrics[(metrics["method"] == m) & (metrics["setting"] == s)]
            part = part.sort_values("seed")
            if len(part):
                row(method_label(cfg, m), "all" if m == "local-only" else s, epochs,
                    part["seed"].tolist(), part["best_epoch"].tolist(),
                    part["epoch_cap"].tolist())
    fits = teacher_fits(metrics)
    for t in dict.fromkeys(f["teacher"] for f in fits):
        mine = [f for f in fits if f["teacher"] == t]
        row(f"teacher: {t}", "-", float(cfg["params"]["teacher_epochs"]),
            [f["seed"] for f in mine], [f["best_epoch"] for f in mine],
            [f["epoch_cap"] for f in mine])
    return pd.DataFrame(rows, columns=cols)
