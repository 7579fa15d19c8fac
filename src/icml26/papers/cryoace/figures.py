"""Static benchmark (headline, Table 1 as bars), RMSD vs recycle (Fig. 1), two-state maps
(Fig. 2), and Table 1."""

from __future__ import annotations

import textwrap

import numpy as np

from icml26.plotting import (
    REFERENCE_COLOR,
    band_style,
    legend_outside,
    method_colors,
    method_label,
    method_style,
    method_zorder,
    subplots,
)

from . import PROPOSED

STATIC = ("cryoace", "cryoace-k1", "voxel-cnn", "rsr")
DYN = ("cryoace", "cryoace-unguided", "cryoace-consensus")


def _first_setting(cfg):
    return list(cfg["settings"])[0]


def _vals(metrics, method, setting, col):
    part = metrics[(metrics["method"] == method) & (metrics["setting"] == setting)]
    return part[col].to_numpy(float) if col in part else np.array([])


def static_benchmark(cfg, metrics):
    s = _first_setting(cfg)
    methods = [m for m in cfg["methods"] if m in STATIC and (metrics["method"] == m).any()]
    colors = method_colors(cfg["methods"], PROPOSED)
    fig, axes = subplots(1, 3, figsize=(10.0, 3.6))
    for ax, (col, name) in zip(axes, (("rmsd", "Calpha RMSD (A)"), ("recall_1A", "Recall@1A"),
                                      ("bond_validity", "bond validity")), strict=True):
        for k, m in enumerate(methods):
            v = _vals(metrics, m, s, col)
            if not len(v):
                continue
            ax.bar(k, np.nanmean(v), 0.7, yerr=np.nanstd(v) if len(v) > 1 else None,
                   color=colors[m], capsize=2, zorder=method_zorder(m, PROPOSED),
                   label=method_label(cfg, m))
        if col == "rmsd":
            start = _vals(metrics, "cryoace", s, "start_rmsd")
            if len(start):
                ax.axhline(np.nanmean(start), color=REFERENCE_COLOR, ls="--", lw=1,
                           label="coarse start")
        ax.set_xticks(range(len(methods)),
                      [textwrap.fill(method_label(cfg, m), 11) for m in methods], fontsize=8)
        ax.set_ylabel(name)
    legend_outside(fig, below=True)
    fig.suptitle(f"Static test maps ({s})")
    return fig


def recycling(cfg, metrics, curves):
    s = _first_setting(cfg)
    fig, ax = subplots(figsize=(7.2, 3.8))
    part = curves[(curves["method"] == "cryoace") & (curves["setting"] == s)
                  & (curves["metric"] == "rmsd_vs_recycle")]
    style = method_style("cryoace", cfg["methods"], PROPOSED)
    style["label"] = method_label(cfg, "cryoace").replace(" (K=4)", "")
    if len(part):
        wide = part.pivot_table(index="step", columns="seed", values="value")
        k = wide.index.to_numpy(float)
        mu, sd = wide.mean(axis=1).to_numpy(), wide.std(axis=1, ddof=0).to_numpy()
        ax.plot(k, mu, marker="o", **style)
        ax.fill_between(k, mu - sd, mu + sd, **band_style(style))
    for m, ls in (("voxel-cnn", "-"), ("rsr", "-.")):
        v = _vals(metrics, m, s, "rmsd")
        if len(v):
            st = method_style(m, cfg["methods"], PROPOSED)
            st.update(label=method_label(cfg, m), ls=ls)
            ax.axhline(np.nanmean(v), **st)
    ax.axvline(int(cfg["params"]["k_test"]), color=REFERENCE_COLOR, ls=":", lw=1,
               label="K_test")
    ax.set_xlabel("recycle index k (k = 0: coarse start)")
    ax.set_ylabel("Calpha RMSD (A)")
    legend_outside(ax)
    return fig


def heterogeneity(cfg, metrics, curves, state=None):
    s = _first_setting(cfg)
    fig, (ax0, ax1) = subplots(1, 2, figsize=(10.0, 4.2))
    ex = _example(curves, s)
    if ex is not None:
        for name, color, lw in (("state_A", "#000000", 2.0), ("state_B", "#555555", 2.0)):
            if name in ex:
                ax0.plot(ex[name][:, 1], ex[name][:, 0], color=color, lw=lw, marker="o", ms=3,
                         label=name.replace("_", " "), zorder=4)
        cols = method_colors(cfg["methods"], PROPOSED)
        for name, method, z in (("unguided", "cryoace-unguided", 2), ("guided", "cryoace", 3)):
            for j, pts in enumerate(ex.get(name, [])):
                ax0.plot(pts[:, 1], pts[:, 0], color=cols.get(method, "#7f8c8d"), lw=0.8,
                         alpha=0.7, zorder=z, label=f"{name} samples" if j == 0 else None)
        ax0.set_aspect("equal")
        ax0.invert_yaxis()
    ax0.set_xlabel("x (A)")
    ax0.set_ylabel("y (A)")
    ax0.set_title("first two-state map, first seed")
    legend_outside(ax0)
    methods = [m for m in DYN if (metrics["method"] == m).any()]
    colors = method_colors(cfg["methods"], PROPOSED)
    ax1b = ax1.twinx()
    ax1b.spines["right"].set_visible(True)
    for k, m in enumerate(methods):
        for off, col, ax, hatch in ((-0.2, "coverage_rmsd", ax1, None),
                                    (0.2, "both_resolved", ax1b, "//")):
            v = _vals(metrics, m, s, col)
            if len(v):
                ax.bar(k + off, np.nanmean(v), 0.38, yerr=np.nanstd(v) if len(v) > 1 else None,
                       color=colors[m], hatch=hatch, alpha=1.0 if hatch is None else 0.55,
                       edgecolor="black", linewidth=0.5, capsize=2,
                       zorder=method_zorder(m, PROPOSED))
    names = {"cryoace": "guided (g = 1.5)", "cryoace-unguided": "unguided (g = 0)",
             "cryoace-consensus": "consensus (1 run)"}
    ax1.set_xticks(range(len(methods)), [names[m] for m in methods], fontsize=8)
    ax1.set_ylabel("coverage RMSD (A), solid")
    ax1b.set_ylabel("both-states-resolved rate, hatched")
    ax1b.set_ylim(0, 1)
    ax1b.grid(False)
    return fig


def _example(curves, setting):
    """The example map's states and samples, stored by train as curve rows (metric
    'example_*', step = atom index * 2 + coordinate)."""
    part = curves[(curves["setting"] == setting) & curves["metric"].astype(str).str.startswith(
        "example_")]
    if not len(part):
        return None
    out = {}
    for metric, grp in part.groupby("metric", sort=False):
        name = metric[len("example_"):]
        v = grp.sort_values("step")["value"].to_numpy(float)
        if name.startswith("state_"):
            out[name] = v.reshape(-1, 2)
        else:
            kind, j = name.rsplit("_", 1)
            out.setdefault(kind, []).append((int(j), v.reshape(-1, 2)))
    for kind in ("guided", "unguided"):
        if kind in out:
            out[kind] = [v for _, v in sorted(out[kind], key=lambda t: t[0])]
    return out


def make(cfg, metrics, curves) -> dict:
    return {"static_benchmark": static_benchmark(cfg, metrics),
            "recycling": recycling(cfg, metrics, curves),
            "heterogeneity": heterogeneity(cfg, metrics, curves)}


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    out = {}
    for s in cfg["settings"]:
        rows = []
        for m in cfg["methods"]:
            if m not in STATIC:
                continue
            row = {"method": method_label(cfg, m)}
            for col, name, fmt in (("rmsd", "RMSD (A)", ".3f"), ("recall_1A", "Recall@1A", ".3f"),
                                   ("bond_validity", "bond validity", ".3f"),
                                   ("flops_per_map", "FLOPs / map", ".3g"),
                                   ("cpu_s_per_map", "CPU ms / map", ".3f")):
                v = _vals(metrics, m, s, col)
                if col == "cpu_s_per_map":
                    v = v * 1e3
                if not len(v) or not np.isfinite(v).any():
                    row[name] = "—"
                elif col == "flops_per_map":
                    row[name] = f"{np.nanmean(v):{fmt}}"
                else:
                    row[name] = f"{np.nanmean(v):{fmt}} ± {np.nanstd(v):{fmt}}"
            row["n seeds"] = len(_vals(metrics, m, s, "rmsd"))
            rows.append(row)
        out[f"Table 1 ({s}): static benchmark, mean ± s.d. over seeds"] = pd.DataFrame(rows)
        rows = []
        for m in DYN:
            row = {"sampler": method_label(cfg, m)}
            for col, name in (("coverage_rmsd", "coverage RMSD (A)"),
                              ("both_resolved", "both-states-resolved rate"),
                              ("rigid_rmsd", "rigid-part RMSD (A)"),
                              ("flex_rmsd_to_parent", "flexible tail to parent (A)")):
                v = _vals(metrics, m, s, col)
                row[name] = (f"{np.nanmean(v):.3f} ± {np.nanstd(v):.3f}"
                             if len(v) and np.isfinite(v).any() else "—")
            rows.append(row)
        out[f"Two-state maps ({s}): guided vs unguided sampling, mean ± s.d. over seeds"] = \
            pd.DataFrame(rows)
    return out
