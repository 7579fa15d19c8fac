"""Figures and tables of the spec: the main ExpRate table (per category x recogniser x
variant), the complexity figure, the failure taxonomy of DIRECT, and the variant ablation."""

from __future__ import annotations

import numpy as np

from icml26.plotting import (
    BASELINE_ZORDER,
    legend_outside,
    method_colors,
    method_label,
    method_zorder,
    subplots,
)

from . import PROPOSED
from .claims import REC_LABEL, categories_present, premises
from .layout import OFFICIAL_CODE

TAX_COLORS = {"STRUCT": "#34495e", "ROLE": "#e67e22", "PERCEPT": "#95a5a6", "OTHER": "#d5dbdb"}
REC_COLORS = {"lr": "#2980b9", "knn": "#27ae60", "mlp": "#b7950b"}


def _recs(cfg):
    return [s for s in ("lr", "knn", "mlp") if s in cfg["settings"]]


def _part(metrics, method, setting):
    return metrics[(metrics["method"] == method) & (metrics["setting"] == setting)]


def exprate_by_category(cfg, metrics):
    methods = list(cfg["methods"])
    colors = method_colors(methods, PROPOSED)
    recs = _recs(cfg)
    cats = categories_present(metrics) + ["overall"]
    fig, axes = subplots(len(recs), 1, figsize=(9.0, 2.6 * len(recs) + 0.6), squeeze=False)
    width = 0.8 / len(methods)
    for ax, r in zip(axes[:, 0], recs, strict=True):
        for i, m in enumerate(methods):
            part = _part(metrics, m, r)
            cols = [f"exprate_{c}" if c != "overall" else "exprate" for c in cats]
            ys = [part[c].mean() for c in cols]
            es = [part[c].std(ddof=0) for c in cols]
            xs = np.arange(len(cats)) + (i - (len(methods) - 1) / 2) * width
            ax.bar(xs, ys, width, yerr=es, color=colors[m], label=method_label(cfg, m),
                   capsize=2, zorder=method_zorder(m, PROPOSED))
        ax.set_xticks(range(len(cats)), cats)
        ax.set_ylabel("ExpRate")
        ax.set_ylim(0, 1)
        ax.set_title(f"recogniser {REC_LABEL[r]}")
    legend_outside(fig)
    return fig


def complexity(cfg, metrics):
    cats = categories_present(metrics)
    fig, axes = subplots(1, 2, figsize=(10.0, 3.6))
    x = np.arange(len(cats))
    for ax, prefix, title in ((axes[0], "exprate", "DIRECT ExpRate"),
                              (axes[1], "symbol_acc", "symbol accuracy")):
        for r in _recs(cfg):
            part = _part(metrics, "direct", r)
            ys = np.array([part[f"{prefix}_{c}"].mean() for c in cats])
            sd = np.array([part[f"{prefix}_{c}"].std(ddof=0) for c in cats])
            ax.plot(x, ys, "-o", ms=4, color=REC_COLORS[r], label=REC_LABEL[r],
                    zorder=BASELINE_ZORDER)
            ax.fill_between(x, ys - sd, ys + sd, color=REC_COLORS[r], alpha=0.15, lw=0)
        ax.set_xticks(x, cats)
        ax.set_xlabel("category (structural complexity ->)")
        ax.set_title(title)
        ax.set_ylim(0, 1.02)
    legend_outside(fig)
    return fig


def failure_taxonomy(cfg, metrics):
    cats = categories_present(metrics)
    recs = _recs(cfg)
    fig, axes = subplots(1, len(recs), figsize=(3.4 * len(recs) + 1.6, 3.6), squeeze=False,
                         sharey=True)
    for ax, r in zip(axes[0], recs, strict=True):
        part = _part(metrics, "direct", r)
        bottom = np.zeros(len(cats))
        for kind, color in TAX_COLORS.items():
            ys = np.array([part[f"tax_{kind}_{c}"].mean() if f"tax_{kind}_{c}" in part
                           else np.nan for c in cats])
            ys = np.nan_to_num(ys)
            ax.bar(range(len(cats)), ys, 0.7, bottom=bottom, color=color, label=kind,
                   zorder=BASELINE_ZORDER)
            bottom += ys
        ax.set_xticks(range(len(cats)), cats, rotation=45)
        ax.set_title(f"DIRECT, {REC_LABEL[r]}")
        ax.set_ylim(0, 1.05)
    axes[0, 0].set_ylabel("share of failed expressions")
    legend_outside(fig)
    return fig


def ablation(cfg, metrics):
    methods = list(cfg["methods"])
    colors = method_colors(methods, PROPOSED)
    recs = _recs(cfg)
    fig, ax = subplots(figsize=(7.0, 3.6))
    width = 0.8 / len(methods)
    for i, m in enumerate(methods):
        xs, ys, es = [], [], []
        for j, r in enumerate(recs):
            v = _part(metrics, m, r)["exprate"]
            x = j + (i - (len(methods) - 1) / 2) * width
            xs.append(x)
            ys.append(v.mean())
            es.append(v.std(ddof=0))
            ax.plot(np.full(len(v), x), v, ".", color="black", ms=3, zorder=4)
        ax.bar(xs, ys, width, yerr=es, color=colors[m], label=method_label(cfg, m), capsize=2,
               zorder=method_zorder(m, PROPOSED))
    ax.set_xticks(range(len(recs)), [REC_LABEL[r] for r in recs])
    ax.set_xlabel("recogniser")
    ax.set_ylabel("overall ExpRate")
    ax.set_ylim(0, 1)
    legend_outside(fig)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"exprate_by_category": exprate_by_category(cfg, metrics),
            "complexity": complexity(cfg, metrics),
            "failure_taxonomy": failure_taxonomy(cfg, metrics),
            "ablation": ablation(cfg, metrics)}


def _ms(x):
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    return f"{x.mean():.3f}±{x.std():.3f}" if x.size else "-"


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    cats = categories_present(metrics)
    main, other, schema = [], [], []
    for r in _recs(cfg):
        for m in cfg["methods"]:
            part = _part(metrics, m, r)
            if not len(part):
                continue
            head = {"recogniser": REC_LABEL[r], "variant": method_label(cfg, m)}
            main.append({**head, **{f"{c} ({OFFICIAL_CODE[c]})": _ms(part[f"exprate_{c}"])
                                    for c in cats}, "overall": _ms(part["exprate"])})
            other.append({**head, **{k: _ms(part[k]) for k in (
                "exprate_le1", "exprate_le2", "token_acc", "struct_rate", "symbol_acc",
                "role_acc", "schema_acc", "exprate_clean", "exprate_artifact")}})
            if m != "direct":
                schema.append({**head, **{c: _ms(part[f"schema_acc_{c}"]) for c in cats}})
    return {
        "Main table: ExpRate per category (official code where one exists) and overall "
        "(pooled over expressions), mean ± std over seeds": pd.DataFrame(main),
        "ExpRate within 1 / 2 token edits, official token accuracy (1 - Lev / max length), "
        "structure rate, symbol and role accuracy, schema-ID accuracy, and ExpRate on clean vs "
        "artifact expressions (mean ± std over seeds)": pd.DataFrame(other),
        "Schema-ID accuracy per true category (SIL and SASR: 1-NN on the exemplars; MSR: hand "
        "rules)": pd.DataFrame(schema),
        "Premises and built-in properties, checked against this run":
            pd.DataFrame(premises(cfg, metrics), columns=["premise", "measured", "held"]),
    }
