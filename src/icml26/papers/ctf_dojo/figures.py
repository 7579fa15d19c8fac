"""Figures of the spec (Table 1 as bars, the data-scaling figure, the teacher yield) and
tables (Table 1 with mean ± s.d., the collected data sets, the step-limit rule)."""
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
from .experiment import max_steps

BENCHES = ("intercode", "nyu", "cybench")
BENCH_LABELS = {"intercode": "InterCode-mini", "nyu": "NYU-mini", "cybench": "Cybench-mini"}
TABLE1 = ("base", "unverified", "simulated", "verified", "teacher-hint", "teacher-nohint",
          "scripted")
SCALING = ("verified-n1", "verified-n2", "verified")


def _vals(metrics, method, col):
    return metrics.loc[metrics["method"] == method, col].to_numpy(dtype=float)


def pass1_by_benchmark(cfg, metrics):
    methods = [m for m in TABLE1 if m in cfg["methods"]]
    colors = method_colors(list(cfg["methods"]), PROPOSED)
    fig, ax = subplots(figsize=(8.0, 3.8))
    width = 0.8 / max(len(methods), 1)
    for i, m in enumerate(methods):
        xs = np.arange(len(BENCHES)) + (i - (len(methods) - 1) / 2) * width
        ys = [np.nanmean(_vals(metrics, m, f"pass1_{b}")) for b in BENCHES]
        es = [np.nanstd(_vals(metrics, m, f"pass1_{b}")) for b in BENCHES]
        ax.bar(xs, ys, width, yerr=es, capsize=2, color=colors[m], label=method_label(cfg, m),
               zorder=method_zorder(m, PROPOSED))
    ax.set_xticks(range(len(BENCHES)), [BENCH_LABELS[b] for b in BENCHES])
    ax.set_ylabel("pass@1 (%)")
    ax.set_ylim(0, 105)
    ax.set_title("Pass@1 on the held-out benchmarks (mean ± s.d. over seeds)")
    legend_outside(fig)
    return fig


def data_scaling(cfg, metrics):
    fig, ax = subplots(figsize=(6.8, 3.6))
    N = cfg["params"]["n_scaling"]
    colors = method_colors(list(cfg["methods"]), PROPOSED)
    ms = [m for m in SCALING if m in cfg["methods"]]
    ys = [np.nanmean(_vals(metrics, m, "pass1_avg")) for m in ms]
    es = [np.nanstd(_vals(metrics, m, "pass1_avg")) for m in ms]
    ax.errorbar(N[:len(ms)], ys, yerr=es, marker="o", capsize=3, color=colors[PROPOSED],
                lw=2.2, label="Verified SFT", zorder=PROPOSED_ZORDER)
    if "base" in cfg["methods"]:
        ax.axhline(np.nanmean(_vals(metrics, "base", "pass1_avg")), ls=":",
                   color=REFERENCE_COLOR, lw=1.2, label="Base", zorder=BASELINE_ZORDER)
    for m, mk in (("unverified", "s"), ("simulated", "^")):
        if m in cfg["methods"]:
            v = _vals(metrics, m, "pass1_avg")
            ax.errorbar([N[-1]], [np.nanmean(v)], yerr=[np.nanstd(v)], marker=mk, ls="none",
                        capsize=3, color=colors[m], label=method_label(cfg, m),
                        zorder=BASELINE_ZORDER)
    ax.set_xscale("log")
    ax.set_xticks(N, [str(n) for n in N])
    ax.set_xticks([], minor=True)
    ax.set_xlabel("training trajectories N")
    ax.set_ylabel("pass@1 averaged over benchmarks (%)")
    ax.set_title("Data scaling")
    legend_outside(fig)
    return fig


def teacher_yield(cfg, metrics):
    fig, ax = subplots(figsize=(6.4, 3.6))
    part = metrics[metrics["method"] == metrics["method"].iloc[0]].sort_values("seed")
    for x, col, lab, color, z in ((0, "yield_plain", "no hint", "#7f8c8d", BASELINE_ZORDER),
                                  (1, "yield_hint", "write-up hint", "#c0392b",
                                   PROPOSED_ZORDER)):
        v = part[col].to_numpy(dtype=float)
        ax.bar([x], [np.nanmean(v)], 0.6, color=color, alpha=0.7, label=lab, zorder=z)
        ax.plot(np.full(len(v), x) + np.linspace(-0.15, 0.15, len(v)), v, "o", ms=4,
                color="black", zorder=z + 1)
    v = part["yield_plain"].to_numpy(dtype=float)
    ax.axhline(1.5 * np.nanmean(v), ls="--", color=REFERENCE_COLOR, lw=1,
               label="1.5 x no-hint yield (claim)")
    ax.set_xticks([0, 1], ["no hint", "write-up hint"])
    ax.set_ylabel("verified per 100 attempts")
    ax.set_ylim(0, 105)
    ax.set_title("Teacher yield during collection")
    legend_outside(fig)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"pass1_by_benchmark": pass1_by_benchmark(cfg, metrics),
            "data_scaling": data_scaling(cfg, metrics),
            "teacher_yield": teacher_yield(cfg, metrics)}


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    def ms(m, col, fmt="{:.1f}"):
        v = _vals(metrics, m, col)
        v = v[np.isfinite(v)]
        return "-" if not v.size else f"{fmt.format(v.mean())} ± {fmt.format(v.std())}"

    rows = []
    for m in cfg["methods"]:
        rows.append({"agent": method_label(cfg, m),
                     **{BENCH_LABELS[b]: ms(m, f"pass1_{b}") for b in BENCHES},
                     "average": ms(m, "pass1_avg"),
                     "steps (successful)": ms(m, "steps_success", "{:.2f}"),
                     "invalid-call rate": ms(m, "invalid_rate", "{:.3f}"),
                     "wrong-submit rate": ms(m, "wrong_submit_rate", "{:.3f}"),
                     "train trajectories / pairs": (
                         "-" if not np.isfinite(_vals(metrics, m, "n_train_traj")).any() else
                         f"{np.nanmean(_vals(metrics, m, 'n_train_traj')):.0f} / "
                         f"{np.nanmean(_vals(metrics, m, 'n_train_pairs')):.0f}")})
    first = metrics[metrics["method"] == metrics["method"].iloc[0]].sort_values("seed")
    data_rows = [{"seed": int(r["seed"]), "verified kept": int(r["n_verified"]),
                  "pool challenges visited": int(r["pool_visited"]),
                  "yield, hint / no hint (per 100 attempts)":
                      f"{r['yield_hint']:.1f} / {r['yield_plain']:.1f}",
                  "unverified set: successful (%)": f"{r['unverified_success']:.1f}",
                  "simulated kept": int(r["n_simulated"]),
                  "simulator yield (per 100)": f"{r['sim_yield']:.1f}",
                  "wrong imagined observations in kept simulated (share of steps)":
                      f"{r['sim_wrong_obs_rate']:.3f}"}
                 for _, r in first.iterrows()]
    p = cfg["params"]
    rule = pd.DataFrame([{"rule (fixed before any run)": "step limit = ceil(step_factor x "
                          "longest oracle path); longest path = 4 layers + submit = 5",
                          "step_factor": p["step_factor"], "step limit": max_steps(p),
                          "official EnIGMA+ default": 40}])
    return {"Table 1: pass@1 (%) on the held-out benchmarks, mean ± s.d. over seeds, with "
            "episode statistics": pd.DataFrame(rows),
            "Collected training data per seed (CTF-Dojo recipe and the Cyber-Zero-style "
            "simulator)": pd.DataFrame(data_rows),
            "Step limit": rule}
