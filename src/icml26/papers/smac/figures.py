"""The spec's figures (fine-tuning curves, interpolation valley, regret bars) and regret table."""

from __future__ import annotations

from icml26.plotting import band_style, legend_outside, method_label, method_style, subplots

from . import PROPOSED
from .claims import BASELINES, SMAC

METRICS = (("regret", "online regret (lower is better)"),
           ("initial_drop", "initial drop"), ("final_ns", "final NS"))


def _methods(cfg, curves):
    return [m for m in cfg["methods"] if (curves["method"] == m).any()]


def _table(curves, method, setting, metric):
    part = curves[(curves["method"] == method) & (curves["setting"] == setting)
                  & (curves["metric"] == metric)]
    return part.pivot_table(index="seed", columns="step", values="value", aggfunc="first")


def _curve_panels(cfg, curves, metric, xlabel, xscale=1.0, dashed_off=False):
    settings = list(cfg["settings"])
    methods = _methods(cfg, curves)
    fig, axes = subplots(1, len(settings), figsize=(5.2 * len(settings) + 1.8, 3.8),
                         squeeze=False)
    for ax, setting in zip(axes[0], settings, strict=True):
        for m in methods:
            t = _table(curves, m, setting, metric)
            if t.empty:
                continue
            x = t.columns.to_numpy(dtype=float) * xscale
            mean, std = t.mean(axis=0).to_numpy(), t.std(axis=0, ddof=0).to_numpy()
            style = method_style(m, methods, PROPOSED)
            style["label"] = method_label(cfg, m)
            ax.plot(x, mean, **style)
            ax.fill_between(x, mean - std, mean + std, **band_style(style))
            if dashed_off:
                ax.axhline(float(t[t.columns[0]].mean()), color=style["color"], ls="--", lw=0.9,
                           alpha=0.8, zorder=style["zorder"] - 0.5)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("normalised score NS")
        ax.set_title(f"dataset: {setting}")
    legend_outside(fig)
    return fig


def make(cfg, metrics, curves) -> dict:
    fine = _curve_panels(cfg, curves, "ns_online", "online SAC steps", dashed_off=True)
    fine.suptitle("Offline-to-online fine-tuning (dashed: NS_off)")
    k = max(1, int(cfg["params"]["interp_points"]) - 1)
    valley = _curve_panels(cfg, curves, "ns_interp", "lambda (0: offline actor, 1: fine-tuned)",
                           xscale=1.0 / k)
    valley.suptitle("NS along theta(lambda) = (1 - lambda) theta_off + lambda theta_on")
    methods = [m for m in cfg["methods"] if (metrics["method"] == m).any()]
    fig, axes = subplots(1, len(METRICS), figsize=(12.0, 3.8))
    for ax, (col, title) in zip(axes, METRICS, strict=True):
        for i, m in enumerate(methods):
            v = metrics.loc[metrics["method"] == m, col].astype(float)
            style = method_style(m, methods, PROPOSED)
            ax.bar(i, v.mean(), yerr=v.std(ddof=0), color=style["color"], capsize=3,
                   zorder=style["zorder"])
        ax.set_xticks(range(len(methods)), [method_label(cfg, m) for m in methods], rotation=30,
                      ha="right")
        ax.set_title(title)
    return {"finetune": fine, "valley": valley, "regret": fig}


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    rows = []
    for setting in cfg["settings"]:
        sub = metrics[metrics["setting"] == setting]
        means = {m: float(sub.loc[sub["method"] == m, "regret"].mean())
                 for m in cfg["methods"] if (sub["method"] == m).any()}
        base = {m: v for m, v in means.items() if m in BASELINES}
        best = min(base, key=base.get) if base else None
        for m in means:
            part = sub[sub["method"] == m]
            row = {"dataset": setting, "method": method_label(cfg, m)}
            for col in ("ns_off", "regret", "initial_drop", "final_ns", "valley_depth",
                        "monotonicity", "q_gap"):
                v = part[col].astype(float)
                row[col] = f"{v.mean():.3f} ± {v.std(ddof=0):.3f}"
            if m == SMAC and best is not None:
                row["regret reduction vs best baseline"] = (
                    f"{100 * (1 - means[m] / base[best]):.1f}% (vs {method_label(cfg, best)})")
            if m == "smac-td3" and "td3bc" in means:  # full profile: the TD3 transfer pair
                row["regret reduction vs best baseline"] = (
                    f"{100 * (1 - means[m] / means['td3bc']):.1f}% "
                    f"(vs {method_label(cfg, 'td3bc')})")
            rows.append(row)
    return {"Online regret, initial drop, final NS and interpolation metrics "
            "(mean ± std over seeds)": pd.DataFrame(rows).fillna("")}


