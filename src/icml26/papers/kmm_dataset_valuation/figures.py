"""Fig. 1 (scores per dataset: alignment vs KMM), Fig. 2 (accuracy against the budget k),
a coverage / duplicates panel, and Table 1 (accuracy per method and budget, valuation time)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from icml26.plotting import (
    REFERENCE_COLOR,
    band_style,
    legend_outside,
    method_label,
    method_style,
    subplots,
)

from . import PROPOSED
from .claims import budgets

REFERENCES = ("target-only", "all")


def _names(cfg):
    return [d["name"] for d in cfg["params"]["pool"]]


def _style(cfg, method):
    st = method_style(method, list(cfg["methods"]), PROPOSED)
    st["label"] = method_label(cfg, method)
    return st


def _score_matrix(curves, method, setting):
    part = curves[(curves["method"] == method) & (curves["setting"] == setting)
                  & (curves["metric"] == "score")]
    if part.empty:
        return None
    tab = part.pivot_table(index="seed", columns="step", values="value", aggfunc="first")
    return tab.sort_index()


def scores(cfg, metrics, curves):
    names = _names(cfg)
    dup = set(cfg["params"]["duplicate_group"])
    setting = f"k{max(budgets(metrics))}"
    fig, ax = subplots(figsize=(9.0, 3.8))
    x = np.arange(len(names))
    for i, n in enumerate(names):
        if n in dup:
            ax.axvspan(i - 0.5, i + 0.5, color=REFERENCE_COLOR, alpha=0.15, linewidth=0,
                       zorder=0.5)
    shown = [m for m in ("alignment", "kmm") if m in cfg["methods"]]
    width = 0.8 / max(len(shown), 1)
    for i, method in enumerate(shown):
        tab = _score_matrix(curves, method, setting)
        if tab is None:
            continue
        v = tab.reindex(columns=range(len(names))).to_numpy(dtype=float)
        v = v / np.maximum(np.nanmax(np.abs(v), axis=1, keepdims=True), 1e-300)
        st = _style(cfg, method)
        off = (i - (len(shown) - 1) / 2) * width
        ax.bar(x + off, np.nanmean(v, axis=0), width, yerr=np.nanstd(v, axis=0),
               color=st["color"], label=st["label"] + " (mean ± s.d.)", zorder=st["zorder"],
               error_kw={"elinewidth": 1.0, "capsize": 2})
        ax.plot(x + off, v[0], "o", ms=3.5, color="black", zorder=st["zorder"] + 0.1,
                label=f"seed {int(tab.index[0])}" if i == 0 else None)
    ax.axhline(0.0, color="black", lw=0.8, zorder=1.0)
    ax.set_xticks(x, names)
    ax.set_xlabel("auxiliary dataset (shaded: near-duplicate group)")
    ax.set_ylabel("score / max |score| (per seed)")
    ax.set_title("Scores per auxiliary dataset at w_0 (largest budget's runs)")
    legend_outside(ax)
    return fig


def _per_k(metrics, method, col="test_acc"):
    part = metrics[metrics["method"] == method].copy()
    if part.empty:
        return None
    part["k"] = part["setting"].str[1:].astype(int)
    g = part.groupby("k")[col]
    return g.mean(), g.std(ddof=0)


def accuracy_vs_budget(cfg, metrics, curves):
    fig, ax = subplots(figsize=(7.6, 3.8))
    for method in ("random", "alignment", "kmm"):
        if method not in cfg["methods"]:
            continue
        res = _per_k(metrics, method)
        if res is None:
            continue
        mean, sd = res
        st = _style(cfg, method)
        ax.plot(mean.index, mean.to_numpy(), "-o", ms=4, **st)
        ax.fill_between(mean.index, (mean - sd).to_numpy(), (mean + sd).to_numpy(),
                        **band_style(st))
    for method, ls in zip(REFERENCES, (":", "--"), strict=True):
        if method in cfg["methods"]:
            part = metrics[metrics["method"] == method]
            if len(part):
                ax.axhline(float(part["test_acc"].mean()), ls=ls, color=REFERENCE_COLOR,
                           lw=1.4, label=method_label(cfg, method), zorder=1.0)
    ks = budgets(metrics)
    ax.set_xticks(ks)
    ax.set_xlabel("budget k (datasets selected)")
    ax.set_ylabel("target test accuracy")
    ax.set_title("Accuracy after post-training on the selected datasets")
    legend_outside(ax)
    return fig


def coverage(cfg, metrics, curves):
    k = max(budgets(metrics))
    part = metrics[metrics["setting"] == f"k{k}"]
    methods = [m for m in cfg["methods"] if m in set(part["method"]) and m not in REFERENCES]
    fig, axes = subplots(1, 2, figsize=(10.0, 3.9))
    for ax, col, title in ((axes[0], "n_duplicates", "duplicates of the group selected"),
                           (axes[1], "coverage", "target sub-populations covered")):
        for i, m in enumerate(methods):
            v = part[part["method"] == m][col].astype(float)
            st = _style(cfg, m)
            ax.barh(i, v.mean(), xerr=v.std(ddof=0), color=st["color"], zorder=st["zorder"],
                    error_kw={"elinewidth": 1.0, "capsize": 2})
        ax.set_yticks(range(len(methods)), [method_label(cfg, m) for m in methods])
        ax.invert_yaxis()
        ax.set_xlabel(f"{title} (k = {k})")
    axes[1].set_yticklabels([])
    axes[0].set_title("redundancy")
    axes[1].set_title("coverage")
    return fig


FIGURES = {"scores": scores, "accuracy_vs_budget": accuracy_vs_budget, "coverage": coverage}


def make(cfg, metrics, curves) -> dict:
    return {name: FIGURES[name](cfg, metrics, curves) for name in cfg["figures"]}


def _ms(s):
    s = np.asarray(s, dtype=float)
    s = s[np.isfinite(s)]
    return f"{s.mean():.3f} ± {s.std():.3f}" if s.size else "n/a"


def tables(cfg, metrics, curves) -> dict:
    out = {}
    ks = budgets(metrics)
    rows = []
    for m in cfg["methods"]:
        part = metrics[metrics["method"] == m]
        if part.empty:
            continue
        row = {"method": method_label(cfg, m)}
        for k in ks:
            row[f"accuracy k={k}"] = _ms(part[part["setting"] == f"k{k}"]["test_acc"])
        row["valuation CPU ms (k max)"] = _ms(
            1e3 * part[part["setting"] == f"k{ks[-1]}"]["valuation_cpu_s"])
        rows.append(row)
    out["Table 1: target test accuracy (mean ± s.d. over seeds) and valuation time"] = \
        pd.DataFrame(rows)

    k = ks[-1]
    part = metrics[metrics["setting"] == f"k{k}"]
    subcols = sorted(c for c in metrics.columns if c.startswith("acc_subpop"))
    rows = []
    for m in cfg["methods"]:
        p = part[part["method"] == m]
        if p.empty:
            continue
        row = {"method": method_label(cfg, m), "selected": _ms(p["n_selected"]),
               "duplicates": _ms(p["n_duplicates"]), "coverage": _ms(p["coverage"])}
        for c in subcols:
            row[c.replace("acc_subpop", "acc sub-pop ")] = _ms(p[c])
        row["Spearman with leave-one-in"] = _ms(p["spearman_loi"])
        rows.append(row)
    out[f"Selection at k = {k}: size, duplicates, coverage, per-sub-population accuracy, "
        "Spearman of the scores with leave-one-in utility (reported, not claimed)"] = \
        pd.DataFrame(rows)

    p = part[part["method"] == "kmm"]
    if len(p):
        cols = {"dup_cos": "cos between duplicates' features",
                "dup_cos_kshot": "same, 4-shot features",
                "a_pop_cos": "cos(a, population target gradient)",
                "a_pop_cos_train": "same, a from the target train set",
                "grad_norm_ratio": "max / min feature norm (relevant sets)",
                "kmm_sweeps": "CD sweeps", "kmm_kkt": "KKT violation / lambda"}
        out["Premises and solver (per seed)"] = pd.DataFrame(
            [{"seed": int(r["seed"]), **{v: f"{r[c]:.3g}" for c, v in cols.items() if c in r}}
             for _, r in p.sort_values("seed").iterrows()])
    return out
