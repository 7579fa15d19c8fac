"""Figures of the spec (F1 per method and variant, low-confidence pseudo-label precision,
plug-and-play gain) and its tables (Table 1: OA / kappa / F1; pseudo-label quality; Table 2:
plug-and-play; the spec's premises checked against the run)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from icml26.plotting import (
    PROPOSED_COLOR,
    REFERENCE_COLOR,
    legend_outside,
    method_colors,
    method_label,
    method_zorder,
    subplots,
)
from icml26.stats import mean_ci

from . import PROPOSED
from .claims import main_settings, paired, premises

ABLATIONS = ("ia-sft-afcd",)


def _grouped_bars(ax, cfg, metrics, methods, col, settings):
    colors = method_colors(list(cfg["methods"]), PROPOSED)
    width = 0.8 / max(len(methods), 1)
    for i, m in enumerate(methods):
        for j, s in enumerate(settings):
            v = metrics[(metrics["method"] == m) & (metrics["setting"] == s)][col]
            v = v.to_numpy(dtype=float)
            v = v[np.isfinite(v)]
            if not v.size:
                continue
            x = j + (i - (len(methods) - 1) / 2) * width
            z = method_zorder(m, PROPOSED)
            # the ablation hatched: with nine methods the muted colour cycle repeats
            ax.bar(x, v.mean(), width, yerr=v.std(ddof=0), color=colors[m], capsize=2,
                   zorder=z, label=method_label(cfg, m) if j == 0 else None,
                   hatch="///" if m in ABLATIONS else None, edgecolor="white", linewidth=0.3)
            ax.plot(np.full(v.size, x), v, "o", ms=2.5, color="black", alpha=0.6, zorder=z + 0.1)
    ax.set_xticks(range(len(settings)), settings)
    ax.set_xlabel("scene variant")


def f1_by_method(cfg, metrics):
    fig, ax = subplots(figsize=(10.0, 4.0))
    settings = list(cfg["settings"])
    _grouped_bars(ax, cfg, metrics, list(cfg["methods"]), "f1", settings)
    ax.set_ylabel("change-class F1 (test pixels)")
    ax.set_ylim(0, 1.05)
    ax.set_title("Change F1 per method and scene variant")
    legend_outside(fig)
    return fig


def low_conf_precision(cfg, metrics):
    fig, ax = subplots(figsize=(7.6, 3.8))
    methods = [m for m in ("random-low", "conf-0.7", "ia-sft") if m in cfg["methods"]]
    settings = list(cfg["settings"])
    _grouped_bars(ax, cfg, metrics, methods, "prec_low", settings)
    if "prec_candidates" in metrics:
        for j, s in enumerate(settings):
            v = metrics[(metrics["method"] == "ia-sft") & (metrics["setting"] == s)]
            v = v["prec_candidates"].to_numpy(dtype=float)
            if np.isfinite(v).any():
                ax.hlines(np.nanmean(v), j - 0.45, j + 0.45, colors=REFERENCE_COLOR,
                          linestyles="--", lw=1.2, zorder=4,
                          label="IA-SFT's candidates (before selection)" if j == 0 else None)
    ax.set_ylabel("precision of accepted\nlow-confidence pseudo-labels")
    ax.set_ylim(0, 1.05)
    ax.set_title("Pseudo-label quality (final round)")
    legend_outside(fig)
    return fig


FRAMEWORKS = (("autoencoder features", "ia-sft", "conf-high", 0.02),
              ("raw spectra + PCA", "ia-sft-rawfeat", "conf-high-rawfeat", 0.01))


def plug_and_play(cfg, metrics):
    fig, ax = subplots(figsize=(6.8, 3.6))
    S = main_settings(cfg)
    for i, (_name, ia, conf, thr) in enumerate(FRAMEWORKS):
        if not ((metrics["method"] == ia).any() and (metrics["method"] == conf).any()):
            continue
        d = 100 * paired(metrics, ia, conf, "f1", S).to_numpy(dtype=float)
        d = d[np.isfinite(d)]
        ax.bar(i, d.mean() if d.size else np.nan, 0.6, color=PROPOSED_COLOR, alpha=0.85,
               zorder=3, label="IA selection - Conf-high (seed mean)" if i == 0 else None)
        ax.plot(np.full(d.size, i), d, "o", ms=3.5, color="black", zorder=3.5,
                label="per seed (mean over variants)" if i == 0 else None)
        ax.hlines(100 * thr, i - 0.4, i + 0.4, colors=REFERENCE_COLOR, linestyles="--", lw=1.2,
                  zorder=4, label="claim threshold" if i == 0 else None)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(range(len(FRAMEWORKS)), [f[0] for f in FRAMEWORKS])
    ax.set_ylabel("F1 gain (points)")
    ax.set_title("Plug-and-play: IA selection over Conf-high")
    legend_outside(fig)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"f1_by_method": f1_by_method(cfg, metrics),
            "low_conf_precision": low_conf_precision(cfg, metrics),
            "plug_and_play": plug_and_play(cfg, metrics)}


def _ms(v):
    v = np.asarray(v, dtype=float)
    v = v[np.isfinite(v)]
    return f"{v.mean():.3f}±{v.std(ddof=0):.3f}" if v.size else "-"


def tables(cfg, metrics, curves) -> dict:
    S = main_settings(cfg)
    t1 = []
    for m in cfg["methods"]:
        row = {"method": method_label(cfg, m)}
        for s in cfg["settings"]:
            part = metrics[(metrics["method"] == m) & (metrics["setting"] == s)]
            row[s] = " / ".join(_ms(part[c]) for c in ("oa", "kappa", "f1")) if len(part) \
                else "-"
        t1.append(row)
    cols = [("n_hc", "high-conf. accepted"), ("n_low", "low-conf. accepted"),
            ("n_candidates", "low-conf. band"), ("prec_hc", "precision high-conf."),
            ("prec_low", "precision low-conf."), ("prec_all", "precision overall"),
            ("div_all", "mean |logit| accepted"), ("div_low", "mean |logit| low-conf."),
            ("acc_frac_changed", "share marked changed"),
            ("low_frac_changed", "share marked changed (low-conf.)"),
            ("pool_frac_changed", "share changed in pool")]
    q = []
    part = metrics[metrics["setting"].isin(S)]
    for m in cfg["methods"]:
        pm = part[part["method"] == m]
        if len(pm) and "n_accepted" in pm and pm["n_accepted"].notna().any():
            q.append({"method": method_label(cfg, m),
                      **{lab: _ms(pm[c]) if c in pm else "-" for c, lab in cols}})
    t2 = []
    for name, ia, conf, thr in FRAMEWORKS:
        if not ((metrics["method"] == ia).any() and (metrics["method"] == conf).any()):
            continue
        d = paired(metrics, ia, conf, "f1", S)
        iv = mean_ci(d.to_numpy(dtype=float))
        t2.append({"features": name, "Conf-high F1": _ms(
            part[part["method"] == conf]["f1"]), "IA-SFT F1": _ms(part[part["method"] == ia]["f1"]),
            "gain (points), mean over seeds": f"{100 * iv.mean:.2f}",
            "95% interval": f"[{100 * iv.lo:.2f}, {100 * iv.hi:.2f}]",
            "claim threshold": f"{100 * thr:g}"})
    return {"Table 1: OA / kappa / change F1 per method and scene variant (mean ± std over "
            "seeds)": pd.DataFrame(t1),
            "Pseudo-label quality of the final accepted set (mean ± std over seeds and main "
            "variants)": pd.DataFrame(q),
            "Table 2: plug-and-play, F1 gain of IA selection over Conf-high per feature "
            "framework (paired per seed, mean over variants)": pd.DataFrame(t2),
            "The spec's premises, checked against this run": pd.DataFrame(
                premises(cfg, metrics), columns=["premise (spec)", "measured", "reading",
                                                  "held"])}
