"""Fig. 1 (success vs demonstrations), Fig. 2 (the CLASP failure map) and Table 1."""

from __future__ import annotations

import numpy as np

from icml26.plotting import band_style, legend_outside, method_label, method_style, subplots

from . import PROPOSED, env

MAP_ROUND = 2  # the spec shows the map after round 2


def success_vs_demos(cfg, metrics, curves):
    settings = list(cfg["settings"])
    fig, axes = subplots(1, len(settings), figsize=(5.2 * len(settings) + 2.0, 3.8),
                         squeeze=False)
    sc = curves[curves["metric"] == "success_id"]
    for ax, s in zip(axes[0], settings, strict=True):
        for m in cfg["methods"]:
            part = sc[(sc["method"] == m) & (sc["setting"] == s)]
            if part.empty:
                continue
            table = part.pivot_table(index="seed", columns="step", values="value")
            x = table.columns.to_numpy(float)
            mean, std = table.mean(axis=0).to_numpy(), table.std(axis=0, ddof=0).to_numpy()
            style = method_style(m, cfg["methods"], PROPOSED)
            style["label"] = method_label(cfg, m)
            if "weight-only" in m or "map-only" in m:
                style["linestyle"] = "--"
            if len(x) == 1:  # BC-offline: one point at the full budget
                ax.errorbar(x, mean, yerr=std, fmt="s", capsize=3, color=style["color"],
                            label=style["label"], zorder=style["zorder"])
            else:
                ax.plot(x, mean, marker="o", markersize=3, **style)
                ax.fill_between(x, mean - std, mean + std, **band_style(style, 0.12))
        ax.set_xlabel("demonstrations used")
        ax.set_ylabel("in-distribution success")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(s)
    legend_outside(fig)
    return fig


def _map_of_run(curves, setting, seed):
    """(anchors (K, 2), f (K,), round) of CLASP's map after MAP_ROUND (or the last one)."""
    is_map = curves["metric"].str.match(r"^(anchor\d+_[xy]|f\d+)$")
    part = curves[(curves["method"] == PROPOSED) & (curves["setting"] == setting)
                  & (curves["seed"] == seed) & is_map]
    if part.empty:
        return None
    rnd = int(min(MAP_ROUND, part["step"].max()))
    vals = part[part["step"] == rnd].set_index("metric")["value"]
    K = int(sum(1 for k in vals.index if k.startswith("f")))
    anchors = np.array([[vals[f"anchor{k}_x"], vals[f"anchor{k}_y"]] for k in range(K)])
    f = np.array([vals[f"f{k}"] for k in range(K)])
    return anchors, f, rnd


def failure_map(cfg, metrics, curves):
    from matplotlib.patches import Circle, Rectangle

    settings = list(cfg["settings"])
    seed = cfg["seeds"][0]
    fig, axes = subplots(1, len(settings), figsize=(5.2 * len(settings), 5.6), squeeze=False)
    for ax, s in zip(axes[0], settings, strict=True):
        mp = cfg["settings"][s]["map"]
        got = _map_of_run(curves, s, seed)
        if got is not None:
            anchors, f, rnd = got
            g = np.linspace(0, 1, 200)
            xx, yy = np.meshgrid(g, g)
            pts = np.stack([xx.ravel(), yy.ravel()], axis=1)
            lab = ((pts[:, None, :] - anchors[None]) ** 2).sum(-1).argmin(1).reshape(xx.shape)
            im = ax.imshow(f[lab], origin="lower", extent=(0, 1, 0, 1), cmap="Reds", vmin=0,
                           vmax=float(f.max()), alpha=0.85)
            ax.contour(xx, yy, lab, levels=np.arange(len(anchors)) + 0.5, colors="k",
                       linewidths=0.4)
            ax.scatter(anchors[:, 0], anchors[:, 1], c="k", s=18, zorder=3)
            for a, fk in zip(anchors, f, strict=True):
                ax.annotate(f"{fk:.2f}", a, xytext=(3, 3), textcoords="offset points",
                            fontsize=8)
            fig.colorbar(im, ax=ax, fraction=0.046, label="failure rate f_r")
            ax.set_title(f"{s}: CLASP map after round {rnd} (seed {seed})")
        for x0, y0, x1, y1 in env.wall_rects(env.get_map(mp)["gaps"]):
            ax.add_patch(Rectangle((x0, y0), x1 - x0, y1 - y0, color="0.45", zorder=2))
        ax.add_patch(Circle(env.GOAL, env.GOAL_RADIUS, color="#27ae60", zorder=2))
        ob = env.get_map(mp)["obstacle"]
        if ob is not None:
            ax.add_patch(Rectangle((ob[0] - ob[4], ob[1] - ob[2] - ob[4]), 2 * ob[4],
                                   2 * (ob[2] + ob[4]), fill=False, ls=":", color="0.3"))
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
        ax.grid(False)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"success_vs_demos": success_vs_demos(cfg, metrics, curves),
            "failure_map": failure_map(cfg, metrics, curves)}


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    rows = []
    for s in cfg["settings"]:
        for m in cfg["methods"]:
            part = metrics[(metrics["method"] == m) & (metrics["setting"] == s)]
            if part.empty:
                continue
            row = {"map": s, "method": method_label(cfg, m)}
            for col, name in (("success_id", "success (in-dist)"),
                              ("success_shift", "success (shift)"),
                              ("diversity", "diversity (bits)"), ("targeting", "demo targeting")):
                v = part[col].to_numpy(float)
                row[name] = (f"{np.nanmean(v):.3f} ± {np.nanstd(v):.3f}"
                             if np.isfinite(v).any() else "n/a")
            rows.append(row)
    return {"Table 1: final success, robustness and diversity (mean ± s.d. over seeds)":
            pd.DataFrame(rows)}
