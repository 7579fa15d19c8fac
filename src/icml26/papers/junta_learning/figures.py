"""Figures 1-3 of the spec (sample complexity vs n and k, error curves, quantum rates) and the
table of m* and support recovery."""

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
from icml26.seeding import derive_seed

from . import PROPOSED
from .claims import find_setting, pooled_curve, pooled_m_star, seed_table
from .experiment import m_star


def _colors(cfg):
    return method_colors(list(cfg["methods"]), PROPOSED)


def replicate_matrix(curves, method, setting):
    """(m grid, errors (n_m, pooled replicates)) from the per-replicate curve rows."""
    part = curves[(curves["method"] == method) & (curves["setting"] == setting)
                  & curves["metric"].str.startswith("err/")]
    if part.empty:
        return None, None
    t = part.pivot_table(index="step", columns=["seed", "metric"], values="value",
                         aggfunc="first")
    return t.index.to_numpy(dtype=float), t.to_numpy()


def bootstrap_m_star(curves, method, setting, eps, n_boot, seed_parts):
    """95% percentile interval of m*(eps) over bootstrap resamples of the pooled replicates."""
    ms, E = replicate_matrix(curves, method, setting)
    if ms is None:
        return np.nan, np.nan
    rng = np.random.default_rng(derive_seed(*seed_parts))
    vals = []
    for _ in range(n_boot):
        cols = rng.integers(0, E.shape[1], size=E.shape[1])
        vals.append(m_star(ms, E[:, cols].mean(1), eps))
    vals = np.array(vals)
    vals = vals[np.isfinite(vals)]
    if vals.size < n_boot // 2:
        return np.nan, np.nan
    return tuple(np.percentile(vals, [2.5, 97.5]))


def _classical(cfg, sweep):
    out = {}
    for name, p in cfg["settings"].items():
        p = p or {}
        if p.get("kind") == "classical" and p.get("sweep") == sweep:
            out[name] = (int(p["n"]), int(p["k"]))
    return out


def sample_complexity(cfg, curves):
    eps = float(cfg["params"]["eps_headline"])
    nb = int(cfg["params"]["n_bootstrap"])
    colors = _colors(cfg)
    fig, axes = subplots(1, 2, figsize=(11.0, 3.8))
    for ax, sweep, xi in ((axes[0], "A", 0), (axes[1], "B", 1)):
        sets = sorted(_classical(cfg, sweep).items(), key=lambda kv: kv[1][xi])
        for method, ls in (("learner", "-"), ("oracle", "--")):
            xs, ys, lo, hi = [], [], [], []
            for name, nk in sets:
                y = pooled_m_star(curves, method, name, eps)
                if not np.isfinite(y):
                    continue
                a, b = bootstrap_m_star(curves, method, name, eps, nb,
                                        (cfg["paper"], "bootstrap", method, name))
                xs.append(nk[xi])
                ys.append(y)
                lo.append(y - a if np.isfinite(a) else 0.0)
                hi.append(b - y if np.isfinite(b) else 0.0)
            if xs:
                ax.errorbar(xs, ys, yerr=[np.maximum(lo, 0), np.maximum(hi, 0)], ls=ls,
                            marker="o", ms=4, capsize=3, color=colors[method],
                            label=method_label(cfg, method), zorder=method_zorder(method, PROPOSED))
        if sweep == "A":
            ax.set_xscale("log", base=2)
            ax.set_xlabel("n (k = 2)")
            ax.set_title(f"m*(eps = {eps:g}) vs n: O(log n) predicted")
        else:
            ks = [nk[1] for _, nk in sets]
            y0 = pooled_m_star(curves, "learner", sets[0][0], eps) if sets else np.nan
            if ks and np.isfinite(y0):
                kk = np.array(ks, dtype=float)
                ax.plot(kk, y0 * 2.0 ** (kk - kk[0]), ":", color=REFERENCE_COLOR,
                        label="∝ 2^k")
            if ks:
                ax.set_xticks(ks)
            ax.set_xlabel("k (n = 12)")
            ax.set_title(f"m*(eps = {eps:g}) vs k: O(2^k) predicted")
        ax.set_yscale("log")
        ax.set_ylabel("samples m*")
    legend_outside(fig)
    return fig


def _curve_panel(ax, cfg, curves, setting, methods, colors):
    for method in methods:
        ms, E = replicate_matrix(curves, method, setting)
        if ms is None:
            continue
        mean = E.mean(1)
        se = E.std(1, ddof=1) / np.sqrt(E.shape[1]) if E.shape[1] > 1 else 0 * mean
        ls = "--" if method == "oracle" else "-"
        z = method_zorder(method, PROPOSED)
        ax.plot(ms, mean, ls, marker="o", ms=3, color=colors[method],
                label=method_label(cfg, method),
                zorder=z)
        ax.fill_between(ms, np.maximum(mean - se, 1e-6), mean + se, color=colors[method],
                        alpha=0.15, lw=0, zorder=z - 0.5)
    ax.set_xscale("log")
    ax.set_yscale("log")


def error_curves(cfg, curves):
    colors = _colors(cfg)
    panels = [(find_setting(cfg, "classical", 12, k), f"n = 12, k = {k}") for k in (1, 2, 3)]
    panels.append((find_setting(cfg, "classical", 16, 2), "n = 16, k = 2 (with max-TV)"))
    panels = [(s, t) for s, t in panels if s]
    fig, axes = subplots(1, max(1, len(panels)), figsize=(3.6 * max(1, len(panels)) + 1.6, 3.6),
                         squeeze=False)
    for ax, (setting, title) in zip(axes[0], panels, strict=False):
        _curve_panel(ax, cfg, curves, setting, [m for m in cfg["methods"]], colors)
        ax.set_title(title)
        ax.set_xlabel("samples m")
        ax.set_ylabel("mean TV error")
    legend_outside(fig)
    return fig


def quantum(cfg, curves):
    plt = pyplot()
    sets = [(name, int(p["n"]), int(p["k"])) for name, p in cfg["settings"].items()
            if (p or {}).get("kind") == "quantum"]
    cmap = plt.get_cmap("viridis")
    fig, ax = subplots(figsize=(8.4, 4.0))
    for i, (name, n, k) in enumerate(sorted(sets, key=lambda s: (s[2], s[1]))):
        col = cmap(0.1 + 0.75 * i / max(1, len(sets) - 1))
        for method, ls in (("learner", "-"), ("oracle", "--")):
            ms, e = pooled_curve(curves, method, name)
            if ms is None:
                continue
            lab = f"n={n}, k={k}" + ("" if method == "learner" else " (oracle)")
            ax.plot(ms, e, ls, marker="o" if method == "learner" else None, ms=3, color=col,
                    label=lab, zorder=method_zorder(method, PROPOSED))
        if i == 0:
            ms, e = pooled_curve(curves, "learner", name)
            if ms is not None:
                ax.plot(ms, e[0] * (ms / ms[0]) ** -0.5, ":", color=REFERENCE_COLOR,
                        label="slope -1/2")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("copies m")
    ax.set_ylabel("mean trace distance")
    ax.set_title("Quantum junta states (solid: learner, dashed: oracle support)")
    legend_outside(fig)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"sample_complexity": sample_complexity(cfg, curves),
            "error_curves": error_curves(cfg, curves),
            "quantum": quantum(cfg, curves)}


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    p = cfg["params"]
    rows = []
    for name, s in cfg["settings"].items():
        s = s or {}
        quantum_ = s.get("kind") == "quantum"
        eps_list = p["q_eps_list"] if quantum_ else p["eps_list"]
        rec_m = int(p["q_recovery_m"] if quantum_ else p["recovery_m"])
        for method in cfg["methods"]:
            if seed_table(curves, method, name).empty:
                continue
            row = {"setting": name, "kind": s.get("kind"), "n": int(s["n"]), "k": int(s["k"]),
                   "method": method}
            for e in eps_list:
                row[f"m*({float(e):g})"] = pooled_m_star(curves, method, name, float(e))
            found = seed_table(curves, method, name, "found")
            row[f"recovery at m={rec_m}"] = (float(found[rec_m].mean())
                                             if rec_m in found.columns else np.nan)
            rows.append(row)
    return {"Sample complexity m* (pooled replicates) and support recovery": pd.DataFrame(rows)}
