"""Fig. 1 (example plans), Fig. 2 (prescribed-time convergence), rates per method, Table 1."""

from __future__ import annotations

import numpy as np

from icml26.plotting import (
    REFERENCE_COLOR,
    legend_outside,
    method_colors,
    method_label,
    method_zorder,
    pyplot,
    subplots,
)

from . import PROPOSED

SPEC_GAIN = "SAD-specgain"

TABLE_COLUMNS = {
    "safety_rate": "safety", "admissibility_rate": "admissibility",
    "consistency_mean": "consistency err (mean)", "consistency_p95": "consistency err (p95)",
    "executed_success": "executed success", "goal_error_mean": "goal error",
    "intervention": "intervention", "slack_mean": "mean CLF slack",
    "qp_residual_max": "max QP row violation",
}


def _plain_log(ax):
    """Log y-axis with plain tick labels (mathtext tick labels cost ~1 CPU-s per figure)."""
    from matplotlib.ticker import LogLocator, NullFormatter, NullLocator, StrMethodFormatter

    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, numticks=6))
    ax.yaxis.set_major_formatter(StrMethodFormatter("{x:g}"))
    ax.yaxis.set_minor_locator(NullLocator())
    ax.yaxis.set_minor_formatter(NullFormatter())


def _methods(cfg, metrics):
    return [m for m in cfg["methods"] if (metrics["method"] == m).any()]


def _series(curves, method, setting, seed, metric):
    c = curves[(curves["method"] == method) & (curves["setting"] == setting)
               & (curves["seed"] == seed) & (curves["metric"] == metric)]
    return c.sort_values("step")["value"].to_numpy(float)


def examples(cfg, curves):
    plt = pyplot()
    setting, seed = list(cfg["settings"])[0], cfg["seeds"][0]
    n = sum(1 for i in range(6) if len(_series(curves, "FM", setting, seed, f"ex{i}/px")))
    fig, axes = subplots(2, 3, figsize=(9.6, 5.6))
    colors = {"FM": "#7f8c8d", PROPOSED: method_colors([PROPOSED], PROPOSED)[PROPOSED]}
    for i, ax in enumerate(axes.ravel()):
        ax.set_aspect("equal")
        if i >= n:
            ax.axis("off")
            continue
        cx = _series(curves, "FM", setting, seed, f"ex{i}/cx")
        cy = _series(curves, "FM", setting, seed, f"ex{i}/cy")
        r = _series(curves, "FM", setting, seed, f"ex{i}/r")
        for x, y, rr in zip(cx, cy, r, strict=True):
            ax.add_patch(plt.Circle((x, y), rr, color="#e6b0aa", alpha=0.8, lw=0))
        for m in ("FM", PROPOSED):
            px = _series(curves, m, setting, seed, f"ex{i}/px")
            py = _series(curves, m, setting, seed, f"ex{i}/py")
            if len(px):
                ax.plot(px, py, "-o", ms=2, color=colors[m], label=method_label(cfg, m),
                        lw=2.0 if m == PROPOSED else 1.2, zorder=method_zorder(m, PROPOSED))
        px = _series(curves, "FM", setting, seed, f"ex{i}/px")
        g = _series(curves, "FM", setting, seed, f"ex{i}/goal")
        ax.plot(px[:1], _series(curves, "FM", setting, seed, f"ex{i}/py")[:1], "ko", ms=5)
        ax.plot(g[:1], g[1:2], "k*", ms=9)
        ax.set_title(f"problem {i}")
        ax.set_xticks([])  # positions only; tick labels cost seconds of layout per figure
        ax.set_yticks([])
    fig.suptitle(f"Example plans ({setting}, seed {seed})")
    legend_outside(fig)
    return fig


def prescribed_time(cfg, curves):
    """Top row: the whole flow; bottom row: tau >= 0.9, where the official guidance acts."""
    setting = list(cfg["settings"])[0]
    methods = [m for m in ("FM", "CBF-states-only", "SAD-noCLF", SPEC_GAIN, PROPOSED)
               if (curves["method"] == m).any()]
    colors = method_colors(methods, PROPOSED)
    fig, axes = subplots(2, 3, figsize=(13.0, 6.4))
    panels = (("plan0_min_h_obs", "min_t,o h_obstacle", False),
              ("plan0_min_h_act", "min_t action barrier", False),
              ("plan0_consistency", "max_t ||x_t+1 - f(x_t,u_t)||", True))
    params = cfg["params"]
    for row, (lo, title) in enumerate(((0.0, "whole flow"), (0.9, "tau >= 0.9"))):
        for ax, (metric, ylabel, log) in zip(axes[row], panels, strict=True):
            for m in methods:
                c = curves[(curves["method"] == m) & (curves["setting"] == setting)]
                tau = c[c["metric"] == "tau"].pivot(index="step", columns="seed", values="value")
                val = c[c["metric"] == metric].pivot(index="step", columns="seed",
                                                     values="value")
                if val.empty:
                    continue
                t = tau.mean(axis=1).to_numpy()
                keep = t >= lo - 1e-9
                z = method_zorder(m, PROPOSED)
                ax.plot(t[keep], val.mean(axis=1)[keep], color=colors[m],
                        lw=2.2 if m == PROPOSED else 1.3,
                        label=method_label(cfg, m) if row == 0 else None, zorder=z)
                ax.fill_between(t[keep], val.min(axis=1)[keep], val.max(axis=1)[keep],
                                color=colors[m], alpha=0.12, lw=0, zorder=z - 0.5)
            ax.axvline(float(params["tau_on"]), color=REFERENCE_COLOR, ls=":")
            if row == 0 and SPEC_GAIN in methods:
                ax.axvline(float(params["spec_tau_on"]), color=REFERENCE_COLOR, ls="-.")
            if log:
                _plain_log(ax)
                ax.axhline(1e-2, color=REFERENCE_COLOR, ls="--", lw=1)
            else:
                from matplotlib.ticker import NullLocator, StrMethodFormatter

                ax.axhline(0.0, color=REFERENCE_COLOR, ls="--", lw=1)
                ax.set_yscale("symlog", linthresh=1e-3)  # shows the sign change at small |h|
                ax.yaxis.set_major_formatter(StrMethodFormatter("{x:g}"))
                ax.yaxis.set_minor_locator(NullLocator())
            ax.set_xlim(lo, 1.0)
            ax.set_xlabel(f"flow time tau ({title})")
            ax.set_ylabel(ylabel)
    legend_outside(fig)
    return fig


def constraint_rates(cfg, metrics):
    methods = _methods(cfg, metrics)
    colors = method_colors(methods, PROPOSED)
    fig, axes = subplots(1, 4, figsize=(13.0, 4.2))
    cols = (("safety_rate", "safety rate"), ("admissibility_rate", "admissibility rate"),
            ("executed_success", "executed success"), ("consistency_mean", "consistency error"))
    x = np.arange(len(methods))
    for ax, (col, title) in zip(axes, cols, strict=True):
        vals = metrics[col].where(np.isfinite(metrics[col]))  # diverged runs: no bar
        g = vals.groupby(metrics["method"])
        mean = [g.mean().get(m, np.nan) for m in methods]
        sd = [g.std(ddof=0).get(m, np.nan) for m in methods]
        bars = ax.bar(x, mean, yerr=sd, color=[colors[m] for m in methods], capsize=2)
        for bar, m in zip(bars, methods, strict=True):
            bar.set_zorder(method_zorder(m, PROPOSED))
        ax.set_xticks(x, methods, rotation=60, ha="right")
        ax.set_title(title)
        if col == "consistency_mean":
            _plain_log(ax)
            ax.axhline(1e-2, color=REFERENCE_COLOR, ls="--", lw=1)
        else:
            ax.set_ylim(0, 1.05)
    return fig


def make(cfg, metrics, curves):
    return {"examples": examples(cfg, curves), "prescribed_time": prescribed_time(cfg, curves),
            "constraint_rates": constraint_rates(cfg, metrics)}


def tables(cfg, metrics, curves):
    """Table 1: mean +- s.d. over seeds of the constraint-satisfaction metrics per method."""
    import pandas as pd

    rows = []
    for s in cfg["settings"]:
        for m in _methods(cfg, metrics):
            part = metrics[(metrics["method"] == m) & (metrics["setting"] == s)]
            row = {"setting": s, "method": method_label(cfg, m)}
            for col, name in TABLE_COLUMNS.items():
                v = part[col].to_numpy(float)
                if not np.all(np.isfinite(v)):  # diverged plans (gradient guidance)
                    row[name] = "diverged"
                    continue
                row[name] = f"{v.mean():.3g} ± {v.std():.2g}"
            rows.append(row)
    return {"Table 1: constraint satisfaction (mean ± s.d. over seeds)": pd.DataFrame(rows)}
