"""Fig. 1 (accuracy vs mean FLOPs per method family, all / easy / hard), Fig. 2 (per-problem
FLOPs histogram, adaptive vs BoN@8), Table 1 (headline theta vs BoN at the closest FLOPs), the
full per-point table and the spec's premises checked against the run."""

from __future__ import annotations

import numpy as np
import pandas as pd

from icml26.plotting import band_style, legend_outside, method_label, method_style, subplots

from . import PROPOSED
from .experiment import HIST_EDGES, SUBSETS, hist_points, points

CURVES = ("sc", "bon", "beam", "adaptive", "adaptive-learned")
MARKERS = ("adaptive-notool", "adaptive-nostop")


def _seed_points(metrics, method, pts, sub):
    part = metrics[metrics["method"] == method]
    F = np.array([[part[f"flops_{sub}_{p}"].to_numpy(float)] for p in pts])[:, 0]  # (pts, seeds)
    A = np.array([[part[f"acc_{sub}_{p}"].to_numpy(float)] for p in pts])[:, 0]
    return F, A


def accuracy_vs_flops(cfg, metrics):
    methods = list(cfg["methods"])
    fig, axes = subplots(1, 3, figsize=(12.0, 3.8), sharey=False)
    th = f"t{float(cfg['params']['theta_headline']):g}"
    for ax, sub in zip(axes, SUBSETS, strict=True):
        for m in methods:
            if not (metrics["method"] == m).any():
                continue
            st = method_style(m, methods, PROPOSED)
            st["label"] = method_label(cfg, m)
            pts = points(cfg, m)
            if m in MARKERS:
                pts = [th] if m == "adaptive-notool" else pts
                F, A = _seed_points(metrics, m, pts, sub)
                ax.errorbar(F.mean(1), A.mean(1), yerr=A.std(1), fmt="s", ms=5, capsize=2,
                            color=st["color"], label=st["label"], zorder=st["zorder"])
                continue
            F, A = _seed_points(metrics, m, pts, sub)
            f, a, s = F.mean(1), A.mean(1), A.std(1)
            o = np.argsort(f)
            ax.plot(f[o], a[o], "-o", ms=3, **st)
            ax.fill_between(f[o], (a - s)[o], (a + s)[o], **band_style(st))
        ax.set_xscale("log")
        ax.set_xlabel("mean FLOPs per problem")
        ax.set_title({"all": "all problems", "easy": f"easy (K <= {cfg['params']['easy_max_K']})",
                      "hard": f"hard (K >= {cfg['params']['hard_min_K']})"}[sub])
    axes[0].set_ylabel("accuracy")
    legend_outside(axes[-1], *_handles(axes))
    return fig


def _handles(axes):
    from icml26.plotting import unique_handles

    return unique_handles(axes)


def flops_histogram(cfg, metrics, curves):
    fig, ax = subplots(figsize=(7.0, 3.6))
    methods = list(cfg["methods"])
    centers = 0.5 * (HIST_EDGES[:-1] + HIST_EDGES[1:])
    width = HIST_EDGES[1] - HIST_EDGES[0]
    for m, pt in hist_points(cfg).items():
        rows = curves[(curves["method"] == m) & (curves["metric"] == f"flops_hist_{pt}")]
        if not len(rows):
            continue
        h = rows.groupby("step")["value"].sum().reindex(range(len(centers)), fill_value=0.0)
        st = method_style(m, methods, PROPOSED)
        ax.bar(centers, h.to_numpy() / max(h.sum(), 1.0), width=width * 0.9, alpha=0.6,
               color=st["color"], zorder=st["zorder"],
               label=f"{method_label(cfg, m)} ({pt.replace('t', 'theta = ')})"
               if m == "adaptive" else f"{method_label(cfg, m)} (N = {pt[1:]})")
    ax.set_xlabel("log10 FLOPs per problem")
    ax.set_ylabel("fraction of problems")
    ax.set_title("Per-problem compute")
    legend_outside(ax)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"accuracy_vs_flops": accuracy_vs_flops(cfg, metrics),
            "flops_histogram": flops_histogram(cfg, metrics, curves)}


def _ms(x):
    x = np.asarray(x, dtype=float)
    return f"{x.mean():.3f} ± {x.std():.3f}"


def table1(cfg, metrics):
    """Headline theta against BoN at the N whose mean FLOPs (all problems) are closest in log."""
    th = f"t{float(cfg['params']['theta_headline']):g}"
    a = metrics[metrics["method"] == "adaptive"]
    b = metrics[metrics["method"] == "bon"]
    cols = ["method", "mean FLOPs", "easy", "hard", "all"]
    if not len(a) or not len(b):
        return pd.DataFrame(columns=cols)
    f_a = a[f"flops_all_{th}"].mean()
    pts = points(cfg, "bon")
    best = min(pts, key=lambda p: abs(np.log(b[f"flops_all_{p}"].mean()) - np.log(f_a)))
    rows = []
    for name, part, pt in ((f"{method_label(cfg, 'adaptive')} ({th.replace('t', 'theta = ')})",
                            a, th), (f"{method_label(cfg, 'bon')} (N = {best[1:]}, closest "
                                     "FLOPs)", b, best)):
        rows.append({"method": name, "mean FLOPs": f"{part[f'flops_all_{pt}'].mean():.3g}",
                     **{s: _ms(part[f"acc_{s}_{pt}"]) for s in SUBSETS}})
    return pd.DataFrame(rows, columns=cols)


def points_table(cfg, metrics):
    rows = []
    for m in cfg["methods"]:
        part = metrics[metrics["method"] == m]
        if not len(part):
            continue
        for pt in points(cfg, m):
            rows.append({"method": method_label(cfg, m), "point": pt,
                         **{f"acc {s}": _ms(part[f"acc_{s}_{pt}"]) for s in SUBSETS},
                         "mean FLOPs": f"{part[f'flops_all_{pt}'].mean():.3g}",
                         "CI": f"{part[f'ci_{pt}'].mean():.1f}",
                         "tool calls": f"{part[f'tools_{pt}'].mean():.2f}",
                         "iterations": f"{part[f'iters_{pt}'].mean():.2f}"})
    return pd.DataFrame(rows)


PREMISES = (
    ("generator right on its seen triples (greedy)", "premise_gen_acc_seen", ">=", 0.99),
    ("generator mostly wrong on unseen triples (greedy)", "premise_gen_acc_unseen", "<", 0.5),
    ("... but diffuse: P(right value) on unseen triples above chance 1/m",
     "premise_gen_ptrue_unseen", ">", "chance"),
    ("PRM imperfect on triples it has not seen (accuracy below its seen-triple accuracy)",
     "premise_prm_acc_unseen", "<", "premise_prm_acc_seen"),
)


def premise_table(cfg, metrics):
    seeds = metrics.drop_duplicates("seed").set_index("seed")
    rows = []
    for text, col, op, thr in PREMISES:
        if col not in seeds:
            continue
        v = seeds[col].astype(float)
        ref = (seeds["premise_chance"] if thr == "chance" else seeds[thr]
               if isinstance(thr, str) else pd.Series(thr, index=seeds.index)).astype(float)
        held = {">=": v >= ref, "<": v < ref, ">": v > ref}[op]
        thr_name = thr.removeprefix("premise_") if isinstance(thr, str) else thr
        rows.append({"premise (spec)": text,
                     "measured (mean over seeds)": f"{v.mean():.3f} (reference "
                                                   f"{ref.mean():.3f})",
                     "reading": f"{col.removeprefix('premise_')} {op} {thr_name}",
                     "held": f"{int(held.sum())} of {len(held)} seeds"})
    if "premise_prm_right_other" in seeds:
        rows.append({"premise (spec)": "(measured, no threshold) PRM score of the right step: on "
                                       "triples in both the PRM's and the generator's training "
                                       "sets / on all other triples",
                     "measured (mean over seeds)":
                         f"{seeds['premise_prm_right_familiar'].mean():.3f} / "
                         f"{seeds['premise_prm_right_other'].mean():.3f}",
                     "reading": "a PRM that never saw a triple's right step labelled scores it "
                                "low, which sends iterations 3-4 to the calculator",
                     "held": "-"})
    if "premise_gen_steps_used" in seeds:
        st = seeds["premise_gen_steps_used"].astype(int)
        rows.append({"premise (spec)": "generator trained 400 steps; trained on to the premise "
                                       "above (blocks of gen_steps, capped)",
                     "measured (mean over seeds)": ", ".join(str(x) for x in st),
                     "reading": f"steps used per seed (cap {cfg['params']['gen_max_steps']})",
                     "held": "-"})
    return pd.DataFrame(rows)


def tables(cfg, metrics, curves) -> dict:
    return {"Table 1: accuracy (mean ± std over seeds) on easy / hard / all at the headline "
            "theta and for BoN at the closest FLOPs": table1(cfg, metrics),
            "Every budget point: accuracy (mean ± std over seeds), mean FLOPs, compute "
            "intensity, calculator calls and iterations per problem": points_table(cfg, metrics),
            "The spec's premises, checked against this run": premise_table(cfg, metrics)}
