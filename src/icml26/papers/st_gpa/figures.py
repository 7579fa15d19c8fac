"""Fig 1 of the spec (certified accuracy against radius, per (threat, P)) and its table."""

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
from .experiment import cell, setting_params

ABLATIONS = ("st-only", "edges-only")


def certified_accuracy(cfg, metrics, curves):
    settings = list(cfg["settings"])
    methods = [m for m in cfg["methods"] if (curves["method"] == m).any()]
    colors = method_colors(methods, PROPOSED)
    ncol = min(4, len(settings))
    nrow = int(np.ceil(len(settings) / ncol))
    fig, axes = subplots(nrow, ncol, figsize=(3.6 * ncol, 3.0 * nrow + 0.6), squeeze=False)
    for ax, setting in zip(axes.ravel(), settings, strict=False):
        threat, P = cell(cfg, setting)
        for m in methods:
            part = curves[(curves["method"] == m) & (curves["setting"] == setting)
                          & (curves["metric"] == "cert_acc")]
            if part.empty:
                continue
            table = part.pivot_table(index="seed", columns="step", values="value")
            r = table.columns.to_numpy(dtype=float)
            mean, std = table.mean(axis=0).to_numpy(), table.std(axis=0, ddof=0).to_numpy()
            z = method_zorder(m, PROPOSED)
            ax.plot(r, mean, color=colors[m], lw=2.2 if m == PROPOSED else 1.4,
                    ls="--" if m in ABLATIONS else "-", label=method_label(cfg, m), zorder=z)
            ax.fill_between(r, mean - std, mean + std, color=colors[m], alpha=0.15, lw=0,
                            zorder=z - 0.5)
        ref = metrics.loc[metrics["setting"] == setting, "ref_clean_acc"]
        if len(ref):
            ax.axhline(float(ref.mean()), color=REFERENCE_COLOR, ls=":", lw=1,
                       label="P = 1 reference (clean)")
        n = setting_params(cfg, setting)["n"]
        ax.set_title(f"{threat} poisoning, P = {P}" + (f", n = {n}" if len(
            {setting_params(cfg, s)["n"] for s in settings}) > 1 else ""))
        ax.set_xlabel("radius r (poisoned " + ("labels" if threat == "label" else "edges") + ")")
        ax.set_ylim(0, 1)
    for ax in axes[:, 0]:
        ax.set_ylabel("certified accuracy")
    for ax in axes.ravel()[len(settings):]:
        ax.axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()
    legend_outside(fig, handles, labels, below=True, ncol=min(5, len(labels)))
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"certified_accuracy": certified_accuracy(cfg, metrics, curves)}


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    rows = []
    for setting in cfg["settings"]:
        threat, P = cell(cfg, setting)
        r = int(setting_params(cfg, setting)["r_head"])
        part = metrics[metrics["setting"] == setting]
        for m in cfg["methods"]:
            mm = part[part["method"] == m]
            if mm.empty:
                continue
            rows.append({
                "threat": threat, "P": P, "method": method_label(cfg, m),
                "clean acc": float(mm["clean_acc"].mean()),
                "cert. acc at r_head": float(mm["cert_acc_head"].mean()),
                "r_head": r,
                "cert. AUC": float(mm["cert_auc"].mean()),
                "mean radius (correct)": float(mm["mean_radius"].mean()),
                "base-model acc": float(mm["base_acc"].mean()),
                "pseudo-label acc": float(mm["pseudo_acc"].mean()),
            })
        if len(part):
            rows.append({"threat": threat, "P": 1, "method": "reference (P = 1, all data)",
                         "clean acc": float(part["ref_clean_acc"].mean()), "r_head": 0})
    return {"Clean and certified accuracy (means over seeds; r_head = 3 at P = 10, 5 at "
            "P = 20), with the non-certified P = 1 reference": pd.DataFrame(rows)}
