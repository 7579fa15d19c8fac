"""Table 1 (accuracy per method at B = 80) as the headline figure, Fig. 1 (tool calls and
tokens per round), Fig. 2 (accuracy against the budget B), and the report's tables."""

from __future__ import annotations

import numpy as np

from icml26.plotting import (
    band_style,
    legend_outside,
    method_colors,
    method_label,
    method_style,
    method_zorder,
    subplots,
)

from . import PROPOSED
from .claims import SETTING, premises

BUDGET_SETTINGS = ("B40", "B80", "B120")


def _part(metrics, method, setting):
    return metrics[(metrics["method"] == method) & (metrics["setting"] == setting)]


def _b80(cfg):
    return SETTING if SETTING in cfg["settings"] else list(cfg["settings"])[0]


def accuracy_b80(cfg, metrics):
    setting = _b80(cfg)
    methods = [m for m in cfg["methods"] if len(_part(metrics, m, setting))]
    colors = method_colors(list(cfg["methods"]), PROPOSED)
    fig, ax = subplots(figsize=(7.6, 3.8))
    for i, m in enumerate(methods):
        v = _part(metrics, m, setting)["accuracy"].astype(float)
        ax.bar(i, v.mean(), 0.7, yerr=v.std(ddof=0), capsize=3, color=colors[m],
               label=method_label(cfg, m), zorder=method_zorder(m, PROPOSED))
        ax.plot(np.full(len(v), i), v, "o", ms=3, color="black", zorder=4)
    ax.set_xticks(range(len(methods)), [method_label(cfg, m) for m in methods], rotation=15)
    ax.set_ylabel("accuracy (final answer = target)")
    ax.set_ylim(0, 1.05)
    ax.set_title(f"Accuracy at {setting} (mean ± std over seeds; dots: seeds)")
    legend_outside(ax)
    return fig


def per_round(cfg, metrics):
    setting = _b80(cfg)
    fig, axes = subplots(1, 2, figsize=(10.0, 3.8))
    methods = [m for m in cfg["methods"] if len(_part(metrics, m, setting))
               and "calls_r1" in metrics
               and _part(metrics, m, setting)["calls_r1"].notna().any()]
    for m in methods:
        part = _part(metrics, m, setting)
        rounds = [r for r in range(1, 9) if f"calls_r{r}" in part
                  and part[f"calls_r{r}"].notna().all()]
        x = np.array(rounds)
        st = method_style(m, list(cfg["methods"]), PROPOSED)
        st["label"] = method_label(cfg, m)
        if m not in ("re-trac",):
            st["linestyle"] = "--"
        for ax, col in ((axes[0], "calls_r"), (axes[1], "tokens_r")):
            y = part[[f"{col}{r}" for r in rounds]].to_numpy(dtype=float)
            mu, sd = y.mean(0), y.std(0)
            ax.plot(x, mu, marker="o", ms=3, **st)
            ax.fill_between(x, mu - sd, mu + sd, **band_style(st))
    axes[0].set_ylabel("tool calls in round r")
    axes[1].set_ylabel("tokens in round r (observations + state)")
    for ax in axes:
        ax.set_xlabel("round / cycle r")
    axes[0].set_title(f"Tool calls per round, {setting}")
    axes[1].set_title(f"Tokens per round, {setting}")
    legend_outside(fig)
    return fig


def accuracy_vs_budget(cfg, metrics):
    fig, ax = subplots(figsize=(7.2, 3.8))
    settings = [s for s in BUDGET_SETTINGS if s in cfg["settings"]] or list(cfg["settings"])
    for m in cfg["methods"]:
        xs, mu, sd = [], [], []
        for s in settings:
            v = _part(metrics, m, s)["accuracy"].astype(float)
            if len(v):
                xs.append(float(cfg["settings"][s]["budget"]))
                mu.append(v.mean())
                sd.append(v.std(ddof=0))
        if not xs:
            continue
        st = method_style(m, list(cfg["methods"]), PROPOSED)
        st["label"] = method_label(cfg, m)
        mu, sd = np.array(mu), np.array(sd)
        ax.plot(xs, mu, marker="o", ms=4, **st)
        ax.fill_between(xs, mu - sd, mu + sd, **band_style(st))
    ax.set_xlabel("tool-call budget B per question")
    ax.set_ylabel("accuracy")
    ax.set_ylim(0, 1.05)
    ax.set_title("Accuracy against the budget (mean ± std over seeds)")
    legend_outside(ax)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"accuracy_b80": accuracy_b80(cfg, metrics),
            "per_round": per_round(cfg, metrics),
            "accuracy_vs_budget": accuracy_vs_budget(cfg, metrics)}


def _ms(v):
    v = v.astype(float)
    return f"{v.mean():.3f} ± {v.std(ddof=0):.3f}"


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    setting = _b80(cfg)
    t1 = []
    for m in cfg["methods"]:
        part = _part(metrics, m, setting)
        if len(part):
            t1.append({"method": method_label(cfg, m), "accuracy": _ms(part["accuracy"]),
                       "tool calls / question": _ms(part["tool_calls"]),
                       "tokens / question": f"{part['tokens'].mean():.0f}",
                       "redundancy": _ms(part["redundancy"]), "seeds": len(part)})
    t_round = []
    for m in cfg["methods"]:
        part = _part(metrics, m, setting)
        if not len(part) or "calls_r1" not in part or part["calls_r1"].isna().all():
            continue
        for r in range(1, 9):
            if f"calls_r{r}" not in part or part[f"calls_r{r}"].isna().any():
                break
            t_round.append({"method": method_label(cfg, m), "round": r,
                            "tool calls": _ms(part[f"calls_r{r}"]),
                            "tokens": _ms(part[f"tokens_r{r}"]),
                            "of which state tokens": f"{part[f'state_tokens_r{r}'].mean():.1f}",
                            "ended by the policy's answer": f"{part[f'answered_r{r}'].mean():.3f}"})
    t_all = []
    for s in cfg["settings"]:
        for m in cfg["methods"]:
            part = _part(metrics, m, s)
            if len(part):
                t_all.append({"setting": s, "B": int(part["budget"].iloc[0]),
                              "W": int(part["window"].iloc[0]), "C": int(part["n_clues"].iloc[0]),
                              "method": method_label(cfg, m), "accuracy": _ms(part["accuracy"]),
                              "tool calls / question": f"{part['tool_calls'].mean():.1f}",
                              "redundancy": f"{part['redundancy'].mean():.3f}"})
    return {f"Table 1: accuracy per method at {setting} (mean ± std over seeds)":
            pd.DataFrame(t1),
            f"Per round at {setting}: tool calls and tokens (mean ± std over seeds)":
            pd.DataFrame(t_round),
            "Every setting (budget B, window W, clues C) and method (means over seeds)":
            pd.DataFrame(t_all),
            "The spec's premises, checked against this run":
            pd.DataFrame(premises(cfg, metrics), columns=["premise (spec)", "measured", "held"])}
