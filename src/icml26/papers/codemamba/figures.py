"""Fig. 1 (Pd vs Fa threshold sweep), Fig. 2 (regime IoU heat maps, stream variances) and
Table 1 (IoU, nIoU, Pd, Fa per method, mean +- s.d. over seeds)."""

from __future__ import annotations

import numpy as np

from icml26.plotting import (
    legend_outside,
    method_colors,
    method_label,
    method_style,
    method_zorder,
    subplots,
)

from . import PROPOSED

CELLS = (("nodrift_fast", "no drift", "fast"), ("nodrift_slow", "no drift", "slow"),
         ("drift_fast", "drift", "fast"), ("drift_slow", "drift", "slow"))


def _tn(t: float) -> str:
    return f"{round(100 * t):02d}"


def pd_fa(cfg, metrics):
    fig, ax = subplots(figsize=(7.6, 4.0))
    shown = [m for m in ("sf-cnn", "mf-cnn", "mean-fusion", "codemamba")
             if (metrics["method"] == m).any()]
    sweep = cfg["params"]["sweep"]
    thr = float(cfg["params"]["threshold"])
    for m in shown:
        part = metrics[metrics["method"] == m]
        pd_ = np.array([np.nanmean(part[f"pd_t{_tn(t)}"]) for t in sweep])
        fa = np.array([np.nanmean(part[f"fa_t{_tn(t)}"]) for t in sweep]) * 1e4
        st = method_style(m, shown, PROPOSED)
        ax.plot(fa, pd_, marker="o", ms=3, **{**st, "label": method_label(cfg, m)})
        at = [i for i, t in enumerate(sweep) if abs(t - thr) < 1e-9]
        if at:
            ax.plot(fa[at], pd_[at], marker="o", ms=7, ls="none", color=st["color"],
                    zorder=st.get("zorder", 2))
    cl = metrics[metrics["method"] == "classical"]
    if len(cl):
        ax.plot([1e4 * cl["fa"].mean()], [cl["pd"].mean()], marker="s", ms=7, ls="none",
                color="#6c3483", label=method_label(cfg, "classical"))
    ax.set_xlabel("Fa (x 1e-4, false-alarm pixels / all pixels)")
    ax.set_ylabel("Pd (targets detected)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("Pd vs Fa over thresholds 0.1-0.9 (mean over seeds)")
    legend_outside(ax)
    return fig


def mechanism(cfg, metrics):
    shown = [m for m in ("implicit-only", "explicit-only", "mean-fusion", "codemamba")
             if (metrics["method"] == m).any()]
    fig, axes = subplots(1, len(shown) + 1, figsize=(3.0 * (len(shown) + 1), 3.6),
                         gridspec_kw={"width_ratios": [1] * len(shown) + [1.8]})
    axes = np.atleast_1d(axes)
    im = None
    for ax, m in zip(axes, shown, strict=False):
        part = metrics[metrics["method"] == m]
        grid = np.array([[np.nanmean(part[f"iou_{d}_{s}"]) for s in ("fast", "slow")]
                         for d in ("nodrift", "drift")])
        top = np.nanmax(metrics[[f"iou_{k}" for k, _, _ in CELLS]].to_numpy(float))
        im = ax.imshow(grid, vmin=0.0, vmax=max(0.05, float(np.nan_to_num(top))),
                       cmap="viridis")
        for (i, j), v in np.ndenumerate(grid):
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=9,
                    color="white" if v < 0.6 * im.get_clim()[1] else "black")
        ax.set_xticks([0, 1], ["fast", "slow"])
        ax.set_yticks([0, 1], ["no drift", "drift"])
        ax.set_xlabel("target speed")
        ax.grid(False)
        ax.set_title(method_label(cfg, m), fontsize=9)
    if im is not None:
        fig.colorbar(im, ax=axes[:len(shown)].tolist(), label="test IoU", shrink=0.8)
    ax = axes[-1]
    cm = metrics[metrics["method"] == "codemamba"]
    colors = method_colors(["implicit", "codemamba"], "codemamba")
    x = np.arange(len(CELLS))
    for off, k, name, color in ((-0.2, "v1", "v1 (implicit stream)", colors["implicit"]),
                                (0.2, "v2", "v2 (explicit stream)", "#c0392b")):
        if not len(cm):
            continue
        vals = np.array([[cm[f"{k}_{c}"].to_numpy(float)] for c, _, _ in CELLS])[:, 0]
        ax.bar(x + off, np.nanmean(vals, 1), 0.4, yerr=np.nanstd(vals, 1), color=color,
               capsize=2, label=name, zorder=method_zorder("codemamba" if k == "v2" else "x",
                                                           PROPOSED))
    ax.set_xticks(x, [f"{a}\n{b}" for _, a, b in CELLS], fontsize=8)
    ax.set_ylabel("mean variance at target pixels")
    ax.set_title("CodeMamba-lite stream variances", fontsize=9)
    legend_outside(fig, below=True)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"pd_fa": pd_fa(cfg, metrics), "mechanism": mechanism(cfg, metrics)}


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    rows = []
    for m in cfg["methods"]:
        part = metrics[metrics["method"] == m]
        if not len(part):
            continue
        row = {"method": method_label(cfg, m)}
        for name, colname, scale in (("IoU", "iou", 1), ("nIoU", "niou", 1), ("Pd", "pd", 1),
                                     ("Fa (x1e-4)", "fa", 1e4), ("Pd_point", "pd_point", 1),
                                     ("static-spot hits", "clutter_hit", 1),
                                     ("val IoU (last)", "val_iou_final", 1)):
            v = part[colname].to_numpy(float) * scale
            row[name] = (f"{np.nanmean(v):.3f} ± {np.nanstd(v):.3f}" if np.isfinite(v).any()
                         else "—")
        row["parameters"] = f"{int(part['n_params'].iloc[0])}"
        row["train CPU-s per run"] = f"{np.nanmean(part['cpu_s_train']):.1f}"
        row["failed runs"] = int((~np.isfinite(part["iou"].to_numpy(float))).sum())
        rows.append(row)
    out = {"Table 1: test metrics per method (mean ± s.d. over seeds; threshold 0.5)":
           pd.DataFrame(rows)}
    pilot = [k for k in metrics.columns if k.startswith("pilot_val_iou_lr")]
    if pilot:
        r = metrics.iloc[0]
        chosen = metrics["lr"].dropna()
        out["Learning-rate selection (pilot: validation IoU of "
            f"{cfg['params']['lr_pilot']} per lr; the best is used by every learned method)"] = \
            pd.DataFrame([{"lr": k[len("pilot_val_iou_lr"):], "pilot validation IoU":
                           f"{r[k]:.4f}", "chosen": bool(len(chosen) and abs(
                               float(k[len('pilot_val_iou_lr'):]) - chosen.iloc[0])
                               <= 1e-6 * chosen.iloc[0])} for k in pilot])
    return out
