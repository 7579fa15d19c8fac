"""Figures of the spec (accuracy per method, accuracy vs angle, embedding PCA, k ablation) and
the main results table."""

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
from .experiment import flowdup_variant, setting_params, upload_floats


def _methods(cfg, metrics):
    return [m for m in cfg["methods"] if (metrics["method"] == m).any()]


def accuracy(cfg, metrics):
    settings = list(cfg["settings"])
    methods = _methods(cfg, metrics)
    colors = method_colors(methods, PROPOSED)
    fig, axes = subplots(1, len(settings), figsize=(1.0 + 0.55 * len(methods) * len(settings),
                                                    4.2), squeeze=False)
    for ax, s in zip(axes[0], settings, strict=True):
        for i, m in enumerate(methods):
            vals = metrics.loc[(metrics["method"] == m) & (metrics["setting"] == s), "acc_new"]
            if not len(vals):
                continue
            ax.bar(i, vals.mean(), yerr=vals.std(ddof=0), color=colors[m], capsize=2,
                   zorder=method_zorder(m, PROPOSED))
            ax.plot(np.full(len(vals), i), vals, "k.", ms=3, zorder=method_zorder(m, PROPOSED) + 1)
        ax.axhline(0.25, color=REFERENCE_COLOR, ls=":", lw=1)
        ax.set_xticks(range(len(methods)))
        ax.set_xticklabels([method_label(cfg, m) for m in methods], rotation=40, ha="right")
        ax.set_ylim(0, 1)
        ax.set_title(f"setting {s} ({setting_params(cfg, s)['kind']})")
    axes[0][0].set_ylabel("mean accuracy, new unlabeled clients")
    return fig


def _curve(curves, method, setting, metric):
    part = curves[(curves["method"] == method) & (curves["setting"] == setting)
                  & (curves["metric"] == metric)]
    return part.sort_values(["seed", "step"])


def _rotation_setting(cfg):
    return next((s for s in cfg["settings"] if setting_params(cfg, s)["kind"] == "rotation"),
                None)


def angle(cfg, curves):
    fig, ax = subplots(figsize=(5.2, 3.6))
    s = _rotation_setting(cfg)
    shown = [m for m in ("flowdup", "fedavg", "cluster") if m in cfg["methods"]]
    colors = method_colors(cfg["methods"], PROPOSED)
    bins = np.linspace(0, 2 * np.pi, 13)
    for m in shown:
        acc, ang = _curve(curves, m, s, "client_acc"), _curve(curves, m, s, "client_angle")
        if not len(acc):
            continue
        a, t = acc["value"].to_numpy(), ang["value"].to_numpy()
        z = method_zorder(m, PROPOSED)
        ax.scatter(np.degrees(t), a, s=6, color=colors[m], alpha=0.35, zorder=z - 0.5)
        idx = np.digitize(t, bins) - 1
        mids = [np.degrees(bins[b:b + 2].mean()) for b in range(12) if (idx == b).any()]
        means = [a[idx == b].mean() for b in range(12) if (idx == b).any()]
        ax.plot(mids, means, "-", color=colors[m], label=method_label(cfg, m), zorder=z)
    ax.axhline(0.25, color=REFERENCE_COLOR, ls=":", lw=1)
    ax.set_xlabel("client rotation angle alpha (degrees)")
    ax.set_ylabel("accuracy of the new client")
    ax.set_title(f"Setting {s}: accuracy vs rotation angle (new clients, all seeds)")
    ax.set_ylim(0, 1)
    legend_outside(fig)
    return fig


def embedding(cfg, curves):
    fig, ax = subplots(figsize=(4.6, 3.8))
    s = _rotation_setting(cfg)
    pc1, pc2 = _curve(curves, "flowdup", s, "emb_pc1"), _curve(curves, "flowdup", s, "emb_pc2")
    ang = _curve(curves, "flowdup", s, "client_angle")
    if len(pc1):
        seed = pc1["seed"].min()
        sel = [c[c["seed"] == seed]["value"].to_numpy() for c in (pc1, pc2, ang)]
        sc = ax.scatter(sel[0], sel[1], c=np.degrees(sel[2]), cmap="twilight", vmin=0, vmax=360,
                        s=22, edgecolors="k", linewidths=0.3)
        fig.colorbar(sc, ax=ax, label="rotation angle (degrees)")
        ax.set_title(f"Pooled hypernetwork embeddings, new clients (setting {s}, seed {seed})")
    ax.set_xlabel("PC 1")
    ax.set_ylabel("PC 2")
    return fig


def k_ablation(cfg, metrics):
    fig, ax = subplots(figsize=(4.8, 3.4))
    s = _rotation_setting(cfg)
    part = metrics[metrics["setting"] == s]
    ks, means, stds = [], [], []
    for m in cfg["methods"]:
        var = flowdup_variant(m, cfg["params"])
        if var is None or not var[1] or var[2]:      # only the plain FLowDUP variants
            continue
        vals = part.loc[part["method"] == m, "acc_new"]
        if len(vals):
            ks.append(var[0])
            means.append(vals.mean())
            stds.append(vals.std(ddof=0))
    order = np.argsort(ks)
    colors = method_colors(cfg["methods"], PROPOSED)
    if ks:
        ax.errorbar(np.array(ks)[order], np.array(means)[order], yerr=np.array(stds)[order],
                    marker="o", capsize=2, color=colors["flowdup"], label="FLowDUP",
                    zorder=method_zorder("flowdup", PROPOSED))
    fed = part.loc[part["method"] == "fedavg", "acc_new"]
    if len(fed):
        ax.axhline(fed.mean(), color=REFERENCE_COLOR, ls="--", label="FedAvg (d = 676)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("subspace dimension k")
    ax.set_ylabel("mean accuracy, new clients")
    ax.set_ylim(0, 1)
    ax.set_title(f"Setting {s}: accuracy vs k")
    legend_outside(fig)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"accuracy": accuracy(cfg, metrics), "angle": angle(cfg, curves),
            "embedding": embedding(cfg, curves), "k_ablation": k_ablation(cfg, metrics)}


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    main, extra = [], []
    for m in _methods(cfg, metrics):
        row = {"method": method_label(cfg, m)}
        for s in cfg["settings"]:
            v = metrics.loc[(metrics["method"] == m) & (metrics["setting"] == s), "acc_new"]
            row[f"setting {s}"] = f"{v.mean():.3f} ± {v.std(ddof=0):.3f}" if len(v) else "–"
        main.append(row)
        for s in cfg["settings"]:
            part = metrics[(metrics["method"] == m) & (metrics["setting"] == s)]
            if not len(part):
                continue
            extra.append({"method": method_label(cfg, m), "setting": s,
                          "acc. new clients": float(part["acc_new"].mean()),
                          "acc. unlabeled training clients": float(part["acc_unlabeled"].mean()),
                          "acc. labeled training clients": float(part["acc_labeled"].mean()),
                          "upload floats per client": upload_floats(m, cfg["params"])})
    return {"Mean accuracy on new unlabeled clients (mean ± std over seeds)":
                pd.DataFrame(main),
            "Accuracy by client group (mean over seeds) and deployment upload size (full model: "
            "676 floats)":
                pd.DataFrame(extra)}
