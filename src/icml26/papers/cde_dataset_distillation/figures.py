"""Fig. 1 (gap vs k per method on c0 with fitted laws), Fig. 2 (DM under configuration
shift), Fig. 3 (coverage law k*(m)) and Table 1 (fits per method and configuration)."""

from __future__ import annotations

import numpy as np

from icml26.plotting import (
    REFERENCE_COLOR,
    band_style,
    legend_outside,
    method_label,
    method_style,
    subplots,
)

from . import PROPOSED, fit
from . import configs as C
from .claims import _gap, _ipcs, _kstars, floors_table, seed_curves

FLOOR_DRAWN = 1e-3


def _law1(cfg):
    return [s for s, p in cfg["settings"].items() if (p or {}).get("kind") == "law1"]


def _bounds(cfg):
    p = cfg.get("params", {})
    return (p.get("alpha_min", 0.05), p.get("alpha_max", 2.0))


def scaling_law(cfg, metrics):
    ipcs = _ipcs(cfg, metrics)
    k = np.array(ipcs, float) * 10
    settings = _law1(cfg)
    fig, axes = subplots(1, max(1, len(settings)), figsize=(7.2 * max(1, len(settings)), 4.0),
                         squeeze=False)
    methods = [m for m in cfg["methods"] if (metrics["method"] == m).any()]
    for ax, s in zip(axes[0], settings, strict=False):
        for m in methods:
            G = seed_curves(metrics, m, s, _gap(C.name(C.C0)), ipcs)
            if G is None:
                continue
            G = G.to_numpy(float)
            st = method_style(m, methods, PROPOSED)
            st["label"] = method_label(cfg, m)
            mean, sd = G.mean(0), G.std(0)
            ax.plot(k, np.maximum(mean, FLOOR_DRAWN), marker="o", ms=4, **st)
            ax.fill_between(k, np.maximum(mean - sd, FLOOR_DRAWN),
                            np.maximum(mean + sd, FLOOR_DRAWN), **band_style(st))
            if len(ipcs) >= 4:
                f = fit.fit_power_floor(k, mean, _bounds(cfg))
                kk = np.geomspace(k[0], k[-1], 100)
                ax.plot(kk, np.maximum(f["A"] * kk ** -f["alpha"] + f["F"], FLOOR_DRAWN),
                        color=st["color"], lw=1.0, ls=":", zorder=st["zorder"],
                        label=f"{method_label(cfg, m)} fit (alpha {f['alpha']:.2f})")
                if f["F"] > FLOOR_DRAWN:
                    ax.axhline(f["F"], color=st["color"], lw=0.8, ls="--",
                               zorder=st["zorder"] - 0.3,
                               label=f"{method_label(cfg, m)} floor F = {f['F']:.3f}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("distilled size k = 10 x IPC")
        ax.set_ylabel("risk gap on c0")
        ax.set_title(f"{s}: gap vs k on c0 (mean ± std over seeds)")
    legend_outside(fig, *_handles(axes))
    return fig


def _handles(axes):
    hs, ls = [], []
    for ax in np.ravel(axes):
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            if lab not in ls:
                hs.append(h)
                ls.append(lab)
    return hs, ls


def config_shift(cfg, metrics):
    ipcs = _ipcs(cfg, metrics)
    k = np.array(ipcs, float) * 10
    settings = _law1(cfg)
    fig, axes = subplots(1, max(1, len(settings)), figsize=(7.2 * max(1, len(settings)), 4.0),
                         squeeze=False)
    names = [C.name(c) for c in C.SHIFT]
    styles = {names[0]: ("#c0392b", "c0 (within)"), names[1]: ("#2980b9", "c1 (optimizer)"),
              names[2]: ("#27ae60", "c2 (arch + noise)")}
    for ax, s in zip(axes[0], settings, strict=False):
        for i, n in enumerate(names):
            G = seed_curves(metrics, "dm", s, _gap(n), ipcs)
            if G is None:
                continue
            G = G.to_numpy(float)
            color, lab = styles[n]
            mean, sd = G.mean(0), G.std(0)
            z = 3.0 if i == 0 else 2.0
            ax.plot(k, mean, marker="o", ms=4, color=color, lw=2.0 if i == 0 else 1.4,
                    label=f"{lab}: {n}", zorder=z)
            ax.fill_between(k, mean - sd, mean + sd, color=color, alpha=0.15, lw=0,
                            zorder=z - 0.5)
        ax.axhline(0.0, color=REFERENCE_COLOR, lw=0.8, ls="--")
        ax.set_xscale("log")
        ax.set_yscale("symlog", linthresh=0.01)
        ax.set_xlabel("distilled size k = 10 x IPC")
        ax.set_ylabel("risk gap of the DM set (c0-distilled)")
        ax.set_title(f"{s}: configuration shift")
    legend_outside(fig, *_handles(axes))
    return fig


def coverage_law(cfg, metrics):
    ipcs = _ipcs(cfg, metrics)
    k = np.array(ipcs, float) * 10
    eps = float(cfg.get("params", {}).get("eps", 0.04))
    cover = sorted([s for s, p in cfg["settings"].items() if (p or {}).get("kind") == "cover"],
                   key=lambda s: int(cfg["settings"][s]["m"]))
    fig, ax = subplots(figsize=(7.2, 4.0))
    Gs = [seed_curves(metrics, "dm", s, lambda q: f"gapF:ipc{q}", ipcs) for s in cover]
    if cover and all(G is not None for G in Gs):
        ms = np.array([int(cfg["settings"][s]["m"]) for s in cover], float)
        kst, signs = _kstars(k, [G.to_numpy(float) for G in Gs], eps)
        per_seed = np.array([[fit.required_size(k, G.loc[seed].to_numpy(float), eps)[0]
                              for G in Gs] for seed in Gs[0].index])
        for row in per_seed:
            ax.plot(ms, row, color=REFERENCE_COLOR, lw=0.6, alpha=0.6, zorder=1)
        ax.plot([], [], color=REFERENCE_COLOR, lw=0.6, label="per seed")
        exact = signs == 0
        ax.plot(ms[exact], kst[exact], "o", color="#c0392b", ms=7, zorder=3,
                label="k*(m), seed-mean curve")
        if (~exact).any():
            ax.plot(ms[~exact], kst[~exact], "o", mfc="white", mec="#c0392b", ms=7, zorder=3,
                    label="censored k* (at grid bound)")
        a, b, r2 = fit.linear_fit(ms, kst)
        if np.isfinite(a):
            xx = np.linspace(ms.min(), ms.max(), 50)
            ax.plot(xx, a * xx + b, "--", color="#34495e", lw=1.2, zorder=2,
                    label=f"fit k* = {a:.1f} m + {b:.1f} (R^2 {r2:.2f})")
        ax.set_xticks(ms)
    ax.set_xlabel("covering number m of the configuration family F_m")
    ax.set_ylabel(f"required size k* (mean gap <= {eps})")
    ax.set_title("Coverage law (DM distilled for F_m, evaluated on F_m)")
    legend_outside(fig)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"scaling_law": scaling_law(cfg, metrics), "config_shift": config_shift(cfg, metrics),
            "coverage_law": coverage_law(cfg, metrics)}


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    out = {"Table 1: fitted alpha / floor / R^2 per method and evaluated configuration "
           "(fit to the seed-mean gap curve; floor 95% CI: bootstrap over seeds)":
           floors_table(cfg, metrics)}
    refs = [c for c in metrics.columns if c.startswith("ref_err:")]
    if refs:
        rows = [{"configuration": c.split(":", 1)[1],
                 "full-data test error (mean over seeds)": round(float(metrics[c].mean()), 4),
                 "seeds": int(metrics.groupby("seed")[c].first().notna().sum())}
                for c in refs]
        out["Reference: train_c(D_full) test error per configuration"] = pd.DataFrame(rows)
    return out
