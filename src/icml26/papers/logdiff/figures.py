"""Figures of the spec (composition scatter, guidance-field error along the oracle's trajectory,
TV overview) and its quantitative table (satisfaction and TV per formula and method)."""

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

from . import PROPOSED, mixture, sampler
from .experiment import with_info

ORDER = ("oracle", "logdiff", "naive-or", "negprompt", "compose-w1", "compose-w3",
         "indep-rules", "monolithic")


def _style(cfg, method):
    st = method_style(method, list(cfg["methods"]), PROPOSED)
    st["label"] = method_label(cfg, method)
    return st


def composition(cfg, metrics, curves):
    settings = [s for s in cfg["params"]["scatter_settings"] if s in set(curves["setting"])]
    per = {s: [m for m in ORDER if ((curves["setting"] == s) & (curves["method"] == m)
                                    & (curves["metric"] == "sample_x1")).any()][:4]
           for s in settings}
    ncol = max([len(v) for v in per.values()] + [1])
    fig, axes = subplots(max(len(settings), 1), ncol, figsize=(2.6 * ncol + 1.0,
                                                              2.6 * max(len(settings), 1)),
                         squeeze=False)
    for i, s in enumerate(settings):
        spec = cfg["settings"][s]
        mix = mixture.build(cfg["params"]["datasets"][spec["dataset"]])
        from .logic import parse, satisfied
        sat = satisfied(parse(spec["formula"]), mix.attrs)
        seed = int(curves.loc[curves["setting"] == s, "seed"].min())
        for j, meth in enumerate(per[s]):
            ax = axes[i][j]
            sel = curves[(curves["setting"] == s) & (curves["method"] == meth)
                         & (curves["seed"] == seed)]
            x1 = sel[sel["metric"] == "sample_x1"].sort_values("step")["value"].to_numpy()
            x2 = sel[sel["metric"] == "sample_x2"].sort_values("step")["value"].to_numpy()
            st = _style(cfg, meth)
            ax.scatter(x1, x2, s=3, color=st["color"], alpha=0.5, zorder=st["zorder"],
                       label=st["label"])
            ax.scatter(mix.means[sat, 0], mix.means[sat, 1], marker="X", s=40,
                       color=REFERENCE_COLOR, edgecolor="k", linewidth=0.5, zorder=4,
                       label="component mean (satisfies)")
            ax.scatter(mix.means[~sat, 0], mix.means[~sat, 1], marker="x", s=30,
                       color=REFERENCE_COLOR, zorder=4, label="component mean (violates)")
            lim = float(np.abs(mix.means).max()) + 1.5
            ax.set_xlim(-lim, lim)
            ax.set_ylim(-lim, lim)
            ax.set_aspect("equal")
            ax.set_title(f"{spec['formula']}: {st['label']}", fontsize=8)
            ax.set_xlabel("x1")
            ax.set_ylabel("x2")
        for j in range(len(per[s]), ncol):
            axes[i][j].set_axis_off()
    legend_outside(fig, below=True, markerscale=2.0)
    return fig


def guidance_error(cfg, metrics, curves):
    gf = curves[curves["metric"] == "gf_err"]
    info = with_info(cfg, metrics).drop_duplicates("setting").set_index("setting")
    cands = [s for s in info.index if info.loc[s, "variant"] == "analytic"
             and info.loc[s, "dataset"] == "D1"]
    pick = next((s for s in cands if info.loc[s, "formula"] == "A|B"),
                cands[0] if cands else None)
    fig, ax = subplots(figsize=(7.0, 3.8))
    if pick is not None:
        vp = cfg["params"]["analytic"]
        tgrid = sampler.time_grid(int(vp["steps"]), float(cfg["params"]["t_end"]))
        for meth in ("indep-rules", "logdiff"):
            part = gf[(gf["setting"] == pick) & (gf["method"] == meth)]
            if part.empty:
                continue
            tab = part.pivot_table(index="step", columns="seed", values="value",
                                   aggfunc="first")
            t = tgrid[tab.index.to_numpy()]
            v = np.maximum(tab.to_numpy(), 1e-30)
            st = _style(cfg, meth)
            ax.plot(t, v.mean(1), **st)
            ax.fill_between(t, v.min(1), v.max(1), **band_style(st))
        ax.set_title(f"guidance-field error on D1, {info.loc[pick, 'formula']}")
    ax.set_yscale("log")
    ax.set_xlabel("diffusion time t")
    ax.set_ylabel("||g - g_exact||^2 / ||g_exact||^2")
    ax.invert_xaxis()
    legend_outside(ax)
    return fig


def tv_overview(cfg, metrics, curves):
    m = with_info(cfg, metrics)
    groups = [("analytic", "D1"), ("analytic", "D2"), ("learned", None)]
    groups = [(v, d) for v, d in groups if ((m["variant"] == v)
                                            & ((m["dataset"] == d) if d else True)).any()]
    fig, axes = subplots(1, max(len(groups), 1), figsize=(4.2 * max(len(groups), 1), 3.8),
                         squeeze=False)
    for ax, (variant, ds) in zip(axes[0], groups, strict=False):
        part = m[(m["variant"] == variant) & ((m["dataset"] == ds) if ds else True)]
        forms = list(dict.fromkeys(part["formula"]))
        meths = [x for x in ORDER if x in set(part["method"])]
        width = 0.8 / max(len(meths), 1)
        for j, meth in enumerate(meths):
            st = _style(cfg, meth)
            g = part[part["method"] == meth].groupby("formula")["tv"]
            xs = [i + (j - (len(meths) - 1) / 2) * width for i, f in enumerate(forms)
                  if f in g.groups]
            mean = [g.mean()[f] for f in forms if f in g.groups]
            sd = [g.std(ddof=0)[f] for f in forms if f in g.groups]
            ax.bar(xs, mean, width=width, yerr=sd, color=st["color"], label=st["label"],
                   zorder=st["zorder"], capsize=2)
        ax.axhline(0.04 if variant == "analytic" else 0.08, ls=":", color=REFERENCE_COLOR,
                   zorder=1)
        ax.set_xticks(range(len(forms)))
        ax.set_xticklabels(forms, fontsize=8)
        ax.set_ylabel("TV to p(c | phi)")
        ax.set_title(f"{variant}, {ds or cfg['params']['learned']['dataset']}")
    legend_outside(fig, below=True)
    return fig


FIGURES = {"composition": composition, "guidance_error": guidance_error,
           "tv_overview": tv_overview}


def make(cfg, metrics, curves) -> dict:
    return {name: FIGURES[name](cfg, metrics, curves) for name in cfg["figures"]}


def tables(cfg, metrics, curves) -> dict:
    m = with_info(cfg, metrics)
    rows = []
    for (variant, ds, f), part in m.groupby(["variant", "dataset", "formula"], sort=False):
        for meth in [x for x in ORDER if x in set(part["method"])]:
            g = part[part["method"] == meth]
            rows.append({"variant": variant, "dataset": ds, "formula": f,
                         "method": method_label(cfg, meth), "seeds": len(g),
                         "satisfaction": f"{g['satisfaction'].mean():.3f}",
                         "TV": f"{g['tv'].mean():.3f} ± {g['tv'].std(ddof=0):.3f}",
                         "sliced W1": f"{g['swd'].mean():.3f}",
                         "guidance-field error": f"{g['gf_err'].mean():.2e}",
                         "failed runs": int(g["tv"].isna().sum())})
    out = {"Satisfaction and TV per (dataset, formula, method), mean over seeds "
           "(analytic variant, then the learned hybrid variant)": pd.DataFrame(rows)}
    learned = m[(m["variant"] == "learned") & (m["method"] == "logdiff")]
    if len(learned) and "denoiser_mse" in learned:
        per_seed = learned.drop_duplicates("seed")
        out["Learned networks per seed (last fifth of training)"] = pd.DataFrame({
            "seed": per_seed["seed"].to_numpy(),
            "denoiser eps-MSE": per_seed["denoiser_mse"].map(lambda v: f"{v:.4f}").to_numpy(),
            "classifier CE": per_seed["classifier_ce"].map(lambda v: f"{v:.4f}").to_numpy(),
            "classifier accuracy": per_seed["classifier_acc"].map(
                lambda v: f"{v:.3f}").to_numpy()})
    return out
