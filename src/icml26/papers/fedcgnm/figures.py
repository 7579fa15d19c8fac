"""Fig. 1 (convergence on S1), Fig. 2 (recall vs class frequency), Fig. 3 (groups ablation),
the group-gradient diagnostic, Table 1 (balanced / head / tail accuracy, rounds-to-target) and
Table 2 (the final step-size grids of the grid-edge rule and the chosen values)."""

from __future__ import annotations

import numpy as np

from icml26.plotting import (
    BASELINE_COLORS,
    PROPOSED_COLOR,
    PROPOSED_ZORDER,
    REFERENCE_COLOR,
    band_style,
    legend_outside,
    method_label,
    method_style,
    subplots,
)

from . import PROPOSED
from .data import n_classes

ABLATION = {"fednm": 1, "fedcgnm-g2": 2, "fedcgnm": 3, "fedcgnm-g5": 5, "fedcgnm-gC": "C"}
RECALL_METHODS = ("fedavg", "fedavg-cb", "fedcgnm")


def _curve(curves, method, setting, metric):
    """seed x step table of one curve."""
    part = curves[(curves["method"] == method) & (curves["setting"] == setting)
                  & (curves["metric"] == metric)]
    return part.pivot_table(index="seed", columns="step", values="value", aggfunc="first")


def _style(cfg, m):
    st = method_style(m, cfg["methods"], PROPOSED)
    st["label"] = method_label(cfg, m)
    if m in ("fednm", "fedcgnm-gC", "fedcgnm-g2", "fedcgnm-g5", "fedcgnm-rs", "fedhoo"):
        st["linestyle"] = "--"
    return st


def convergence(cfg, curves):
    setting = "S1" if "S1" in cfg["settings"] else next(iter(cfg["settings"]))
    fig, ax = subplots(figsize=(8.0, 4.0))
    for m in cfg["methods"]:
        t = _curve(curves, m, setting, "val_bacc")
        if t.empty:
            continue
        x = t.columns.to_numpy(dtype=float)
        mean, sd = t.mean(axis=0).to_numpy(), t.std(axis=0, ddof=0).to_numpy()
        st = _style(cfg, m)
        ax.plot(x, mean, **st)
        ax.fill_between(x, mean - sd, mean + sd, **band_style(st, 0.12))
    ax.set_xlabel("communication round")
    ax.set_ylabel("validation balanced accuracy (points)")
    ax.set_title(f"{setting}: convergence")
    legend_outside(fig)
    return fig


def recall_vs_frequency(cfg, curves):
    settings = list(cfg["settings"])
    fig, axes = subplots(1, len(settings), figsize=(4.4 * len(settings) + 2.0, 3.6),
                         squeeze=False)
    for ax, s in zip(axes[0], settings, strict=True):
        for m in RECALL_METHODS:
            rec = _curve(curves, m, s, "test_recall")
            cnt = _curve(curves, m, s, "class_count")
            if rec.empty:
                continue
            ax.plot(cnt.mean(axis=0).to_numpy(), rec.mean(axis=0).to_numpy(), marker="o", ms=3,
                    **_style(cfg, m))
        ax.set_xscale("log")
        ax.set_xlabel("training samples of the class (global)")
        ax.set_ylabel("test recall (points)")
        ax.set_title(s)
    legend_outside(fig)
    return fig


def groups_ablation(cfg, metrics):
    setting = "S1" if "S1" in cfg["settings"] else next(iter(cfg["settings"]))
    c = n_classes(cfg, setting)
    fig, ax = subplots(figsize=(6.8, 3.6))
    xs, means, sds = [], [], []
    for m, g in ABLATION.items():
        part = metrics[(metrics["method"] == m) & (metrics["setting"] == setting)]
        if len(part):
            xs.append(c if g == "C" else g)
            means.append(part["bacc"].mean())
            sds.append(part["bacc"].std(ddof=0))
    order = np.argsort(xs)
    xs, means, sds = (np.asarray(v, dtype=float)[order] for v in (xs, means, sds))
    ax.errorbar(xs, means, yerr=sds, marker="o", color=PROPOSED_COLOR, capsize=3,
                label="FedCGNM with G groups", zorder=PROPOSED_ZORDER)
    for m, ls in (("fedavg", ":"), ("fedavg-cb", "--")):
        part = metrics[(metrics["method"] == m) & (metrics["setting"] == setting)]
        if len(part):
            ax.axhline(part["bacc"].mean(), color=REFERENCE_COLOR, ls=ls, lw=1,
                       label=method_label(cfg, m))
    ax.set_xscale("log")
    ax.set_xticks(xs)
    ax.set_xticklabels([f"{int(x)}" + (" (=C)" if int(x) == c else "") for x in xs])
    ax.set_xlabel("number of class groups G")
    ax.set_ylabel("test balanced accuracy (points)")
    ax.set_title(f"{setting}: grouping ablation")
    legend_outside(fig)
    return fig


def grad_ratio(cfg, curves):
    fig, ax = subplots(figsize=(8.0, 3.6))
    for i, s in enumerate(cfg["settings"]):
        color = BASELINE_COLORS[i % len(BASELINE_COLORS)]
        for metric, ls, what in (("share_ratio", "-", "share of batch gradient"),
                                 ("grad_ratio", "--", "group-mean gradient")):
            t = _curve(curves, "fedcgnm", s, metric)
            if t.empty:
                continue
            x = t.columns.to_numpy(dtype=float)
            ax.plot(x, np.exp(np.log(t).mean(axis=0)).to_numpy(), ls=ls, color=color,
                    label=f"{s}: {what}")
    ax.axhline(1.0, color=REFERENCE_COLOR, ls=":", label="after normalisation")
    ax.set_yscale("log")
    ax.set_xlabel("communication round")
    ax.set_ylabel("head / tail group gradient norm")
    ax.set_title("FedCGNM (G=3): raw head vs tail group gradients")
    legend_outside(fig)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"convergence": convergence(cfg, curves),
            "recall_vs_frequency": recall_vs_frequency(cfg, curves),
            "groups_ablation": groups_ablation(cfg, metrics),
            "grad_ratio": grad_ratio(cfg, curves)}


def rounds_to_target(curves, frac: float = 0.9):
    """First round whose validation balanced accuracy reaches frac x the best final value over
    all methods of the same (setting, seed); NaN if never reached. Rows (method, setting, seed)."""
    import pandas as pd

    val = curves[curves["metric"] == "val_bacc"]
    rows = []
    for (s, seed), part in val.groupby(["setting", "seed"]):
        last = part.loc[part.groupby("method")["step"].idxmax()]
        target = frac * last["value"].max()
        for m, pm in part.groupby("method"):
            hit = pm[pm["value"] >= target].sort_values("step")
            rows.append({"method": m, "setting": s, "seed": seed,
                         "rounds": float(hit["step"].iloc[0]) if len(hit) else np.nan})
    return pd.DataFrame(rows)


def _pm(values) -> str:
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if not v.size:
        return "–"
    return f"{v.mean():.1f} ± {v.std(ddof=1):.1f}" if v.size > 1 else f"{v.mean():.1f}"


def _grid_text(curves, method, setting, chosen: float) -> str:
    """'lr: val, ...' over the final grid of the tuning seed, the chosen step size in brackets
    ('–' when the curves hold no grid)."""
    part = curves[(curves["method"] == method) & (curves["setting"] == setting)]
    if not len(part):
        return "–"
    seed = part["seed"].min()                           # every run of a pair has the same grid
    part = part[part["seed"] == seed]
    lrs = part[part["metric"] == "tune_lr"].sort_values("step")["value"].to_numpy(dtype=float)
    val = part[part["metric"] == "tune_val"].sort_values("step")["value"].to_numpy(dtype=float)
    if not lrs.size:
        return "–"
    cells = [(f"[{a:g}: {v:.1f}]" if np.isclose(a, chosen) else f"{a:g}: {v:.1f}")
             for a, v in zip(lrs, val, strict=True)]
    return ", ".join(cells)


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    rtt = rounds_to_target(curves)
    rows, grids = [], []
    for m in cfg["methods"]:
        for s in cfg["settings"]:
            part = metrics[(metrics["method"] == m) & (metrics["setting"] == s)]
            if not len(part):
                continue
            r = rtt[(rtt["method"] == m) & (rtt["setting"] == s)]["rounds"]
            rows.append({
                "method": method_label(cfg, m), "setting": s,
                "balanced acc": _pm(part["bacc"]), "head acc": _pm(part["head_acc"]),
                "tail acc": _pm(part["tail_acc"]),
                "rounds to 90% target": _pm(r),
                "chosen lr": f"{part['lr'].iloc[0]:g}",
            })
            grids.append({
                "method": method_label(cfg, m), "setting": s,
                "final grid (val bacc), [chosen]": _grid_text(curves, m, s,
                                                              float(part["lr"].iloc[0])),
                "values added": int(part["lr_extensions"].iloc[0]),
                "choice": ("on the edge after the cap" if part["lr_on_edge"].iloc[0]
                           else "inside the grid"),
            })
    return {"Table 1: test balanced, head (3 most frequent) and tail (3 rarest) accuracy in "
            "points, mean ± s.d. over seeds; rounds to reach 90% of the best final validation "
            "balanced accuracy of the (setting, seed); step size chosen on the tuning seed":
            pd.DataFrame(rows),
            "Table 2: step-size selection on the tuning seed. Each method starts from the "
            "spec's grid; a choice on the grid's edge adds one step of the same ratio in that "
            "direction, at most twice (the same rule for every method). Final grid with each "
            "value's final validation balanced accuracy (points), the chosen value in brackets":
            pd.DataFrame(grids)}
