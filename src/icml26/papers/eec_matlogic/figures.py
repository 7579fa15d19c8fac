"""Figures and tables of the spec: the structured complex-query table (EM and F1 per template x
executor), the NL-KGQA table (EM per pipeline), the contract-aligned diagnostics (SPEC / EXEC /
BOTH shares) and the witness-loss / branch-entanglement rates."""

from __future__ import annotations

import numpy as np
import pandas as pd

from icml26.plotting import (
    BASELINE_ZORDER,
    legend_outside,
    method_colors,
    method_label,
    method_zorder,
    subplots,
)

from . import PROPOSED
from .contract import BRANCH_TEMPLATES
from .experiment import ATTRIBUTION, E2E, GOLD, STRUCTURED

ATTR_COLORS = {"SPEC": "#f0b27a", "EXEC": "#8e44ad", "BOTH": "#bdc3c7"}  # off the method palette


def _present(cfg, group):
    return [m for m in cfg["methods"] if m in group]


def _templates(cfg):
    return list(cfg["params"]["templates"])


def _bars(ax, cfg, metrics, methods, cols, ticks, colors):
    width = 0.8 / max(len(methods), 1)
    for i, m in enumerate(methods):
        part = metrics[metrics["method"] == m]
        ys = [part[c].mean() if c in part else np.nan for c in cols]
        es = [part[c].std(ddof=0) if c in part else np.nan for c in cols]
        xs = np.arange(len(cols)) + (i - (len(methods) - 1) / 2) * width
        # GOLD-x pipelines (gold contract, oracle specifier) hatched
        hatch = {"hatch": "//", "edgecolor": "white"} if m in GOLD else {}
        ax.bar(xs, ys, width, yerr=es, color=colors[m], label=method_label(cfg, m), capsize=2,
               zorder=method_zorder(m, PROPOSED), **hatch)
    ax.set_xticks(range(len(cols)), ticks)
    ax.set_ylim(0, 1.05)


def structured_em(cfg, metrics):
    methods = _present(cfg, STRUCTURED)
    colors = method_colors(methods, PROPOSED)
    tl = _templates(cfg)
    fig, axes = subplots(2, 1, figsize=(9.0, 6.0))
    for ax, key, name in ((axes[0], "em", "exact-set-match"), (axes[1], "f1", "answer F1")):
        _bars(ax, cfg, metrics, methods, [f"{key}_{t}" for t in tl], tl, colors)
        ax.set_ylabel(name)
    axes[0].set_title("structured queries, gold contracts")
    axes[1].set_xlabel("query template")
    legend_outside(fig)
    return fig


def nl_kgqa(cfg, metrics):
    methods = _present(cfg, list(E2E) + list(GOLD))
    colors = method_colors(methods, PROPOSED)
    tl = _templates(cfg)
    fig, ax = subplots(figsize=(10.0, 3.8))
    _bars(ax, cfg, metrics, methods, ["em"] + [f"em_{t}" for t in tl], ["overall"] + tl,
          colors)
    ax.set_ylabel("exact-set-match")
    ax.set_title("NL-KGQA: specifier + executor (E2E) and gold contract + executor (GOLD)")
    legend_outside(fig)
    return fig


def attribution(metrics, method, tl) -> pd.DataFrame:
    """SPEC / EXEC / BOTH shares of the wrong answers per template (errors pooled over seeds)."""
    part = metrics[metrics["method"] == method]
    rows = []
    for t in tl:
        if f"n_err_{t}" not in part:
            continue
        n = float(part[f"n_err_{t}"].sum())
        rows.append({"template": t, "errors": n, **{
            k: float(part[f"n_err_{k}_{t}"].sum()) / n if n else np.nan for k in ATTRIBUTION}})
    return pd.DataFrame(rows)


def diagnostics(cfg, metrics):
    methods = _present(cfg, E2E)
    tl = _templates(cfg)
    fig, axes = subplots(1, len(methods), figsize=(3.4 * len(methods) + 1.4, 3.8),
                         squeeze=False, sharey=True)
    for ax, m in zip(axes[0], methods, strict=True):
        tab = attribution(metrics, m, tl)
        bottom = np.zeros(len(tab))
        for kind in ATTRIBUTION:
            ys = np.nan_to_num(tab[kind].to_numpy(dtype=float)) if len(tab) else bottom
            ax.bar(range(len(tab)), ys, 0.7, bottom=bottom, color=ATTR_COLORS[kind],
                   label=kind, zorder=BASELINE_ZORDER)
            bottom = bottom + ys
        labels = [f"{t}\n({int(e)})" for t, e in zip(tab.get("template", []),
                                                       tab.get("errors", []), strict=True)]
        ax.set_xticks(range(len(tab)), labels, fontsize=8)
        ax.set_title(method_label(cfg, m))
        ax.set_ylim(0, 1.05)
    axes[0, 0].set_ylabel("share of wrong answers\n(template, errors pooled)")
    legend_outside(fig)
    return fig


def witness_entanglement(cfg, metrics):
    methods = _present(cfg, STRUCTURED)
    colors = method_colors(methods, PROPOSED)
    tl = _templates(cfg)
    br = [t for t in tl if t in BRANCH_TEMPLATES]
    fig, axes = subplots(1, 2, figsize=(11.0, 3.8),
                         gridspec_kw={"width_ratios": [max(len(tl), 1), max(len(br), 1)]})
    _bars(axes[0], cfg, metrics, methods, [f"wloss_{t}" for t in tl], tl, colors)
    axes[0].set_ylabel("witness-loss rate")
    axes[0].set_xlabel("query template")
    _bars(axes[1], cfg, metrics, methods, [f"entangle_{t}" for t in br], br, colors)
    axes[1].set_ylabel("branch-entanglement rate")
    axes[1].set_xlabel("branch template")
    legend_outside(fig)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"structured_em": structured_em(cfg, metrics), "nl_kgqa": nl_kgqa(cfg, metrics),
            "diagnostics": diagnostics(cfg, metrics),
            "witness_entanglement": witness_entanglement(cfg, metrics)}


def _fmt(part, c):
    if c not in part or not np.isfinite(part[c].to_numpy(dtype=float)).any():
        return "–"
    return f"{part[c].mean():.3f} ± {part[c].std(ddof=0):.3f}"


def tables(cfg, metrics, curves) -> dict:
    tl = _templates(cfg)
    out = {}
    rows = []
    for m in _present(cfg, STRUCTURED):
        part = metrics[metrics["method"] == m]
        rows.append({"executor": method_label(cfg, m),
                     **{f"EM {t}": _fmt(part, f"em_{t}") for t in tl},
                     **{f"F1 {t}": _fmt(part, f"f1_{t}") for t in tl}})
    out["Structured queries (gold contracts): EM and F1, mean ± std over seeds"] = \
        pd.DataFrame(rows)
    rows = []
    for m in _present(cfg, list(E2E) + list(GOLD)):
        part = metrics[metrics["method"] == m]
        rows.append({"pipeline": method_label(cfg, m), "EM overall": _fmt(part, "em"),
                     **{f"EM {t}": _fmt(part, f"em_{t}") for t in tl},
                     "contract accuracy": _fmt(part, "spec_acc"),
                     "spec. error (ambiguous)": _fmt(part, "spec_err_ambiguous"),
                     "spec. error (clear)": _fmt(part, "spec_err_clear")})
    out["NL-KGQA: EM per pipeline, mean ± std over seeds"] = pd.DataFrame(rows)
    rows = []
    for m in _present(cfg, E2E):
        tab = attribution(metrics, m, tl)
        for _, r in tab.iterrows():
            rows.append({"pipeline": method_label(cfg, m), "template": r["template"],
                         "wrong answers": int(r["errors"]),
                         **{k: "–" if not np.isfinite(r[k]) else f"{r[k]:.3f}"
                            for k in ATTRIBUTION}})
    out["Contract-aligned error attribution (shares of wrong answers, pooled over seeds)"] = \
        pd.DataFrame(rows)
    part = metrics[metrics["method"] == "matlogic"]
    if len(part):
        out["Premise and witness checks (MATLOGIC, mean ± std over seeds)"] = pd.DataFrame([
            {"template": t, "mixed-witness queries": _fmt(part, f"mixed_{t}"),
             "witness validity": _fmt(part, f"witness_validity_{t}")} for t in tl])
    return out
