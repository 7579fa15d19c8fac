"""Figures 1-3 of the spec (ID vs gap scatter, predictor bar chart, W1 curves) and tables."""

from __future__ import annotations

import numpy as np

from icml26.plotting import (
    BASELINE_COLORS,
    BASELINE_ZORDER,
    PROPOSED_COLOR,
    PROPOSED_ZORDER,
    REFERENCE_COLOR,
    legend_outside,
    pyplot,
    subplots,
)

from .claims import PREDICTORS, premise, rho, zoo

DEPTH_MARKERS = {1: "o", 2: "s", 3: "^", 4: "D", 5: "v", 6: "P"}


def bootstrap_abs_rho(x, y, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """|Spearman rho| on n_boot resamples of the models (rows), vectorised: ranks per resample
    (average ranks for ties, as spearmanr) then the Pearson correlation of the ranks."""
    from scipy.stats import rankdata

    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y)
    x, y = x[ok], y[ok]
    idx = rng.integers(len(x), size=(n_boot, len(x)))
    rx, ry = rankdata(x[idx], axis=1), rankdata(y[idx], axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    den = np.sqrt((rx ** 2).sum(axis=1) * (ry ** 2).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (rx * ry).sum(axis=1) / den
    return np.abs(r[np.isfinite(r)])


def id_vs_gap(cfg, m, others=None):
    """Models of the claims (they interpolated) in colour; those that stopped at the training
    cap without interpolating, if any, as grey crosses (not in rho)."""
    plt = pyplot()
    fig, ax = subplots(figsize=(8.4, 4.0))
    noises = sorted(m["noise"].unique())
    cmap = plt.get_cmap("coolwarm")
    for i, q in enumerate(noises):
        col = cmap(0.15 + 0.7 * i / max(1, len(noises) - 1))
        for d in sorted(m["depth"].unique()):
            part = m[(m["noise"] == q) & (m["depth"] == d)]
            ax.scatter(part["id_final"], part["gap"], color=col, s=22, alpha=0.85,
                       marker=DEPTH_MARKERS.get(int(d), "x"), label=f"noise {q:g}, depth {d:g}")
    if others is not None and len(others):
        ax.scatter(others["id_final"], others["gap"], color=REFERENCE_COLOR, s=22, marker="x",
                   label="did not interpolate (cap; not in rho)", zorder=BASELINE_ZORDER)
    ax.set_xlabel("final-layer TwoNN ID (test embeddings)")
    ax.set_ylabel("generalization gap g (test err - train err)")
    ax.set_title(f"Spearman rho = {rho(m, 'id_final', 'gap'):.2f} over the {len(m)} "
                 "interpolating models")
    legend_outside(fig, ncol=2 if len(ax.collections) > 8 else 1)
    return fig


def predictors(cfg, m):
    rng = np.random.default_rng(0)
    n_boot = int(cfg["params"].get("bootstrap", 1000))
    fig, ax = subplots(figsize=(6.4, 3.8))
    names = list(PREDICTORS)
    for i, col in enumerate(names):
        signed = rho(m, col, "gap")
        r = abs(signed)
        boot = bootstrap_abs_rho(m[col], m["gap"], n_boot, rng)
        lo, hi = (np.percentile(boot, [2.5, 97.5]) if boot.size else (np.nan, np.nan))
        color = PROPOSED_COLOR if i == 0 else BASELINE_COLORS[(i - 1) % len(BASELINE_COLORS)]
        ax.bar(i, r, color=color, yerr=[[max(r - lo, 0)], [max(hi - r, 0)]], capsize=3,
               zorder=PROPOSED_ZORDER if i == 0 else BASELINE_ZORDER)
        ax.text(i, 0.02, f"rho={signed:+.2f}", ha="center", fontsize=8, color="white",
                zorder=PROPOSED_ZORDER + 1)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels([PREDICTORS[c] for c in names], rotation=20, ha="right")
    ax.set_ylabel("|Spearman rho| with g (signed rho at the bar's foot)")
    ax.set_ylim(0, 1)
    return fig


def w1_cols(m):
    cols = [c for c in m.columns if c.startswith("w1_m") and m[c].notna().any()]
    return sorted(cols, key=lambda c: int(c[4:]))


def w1_curves(cfg, m):
    plt = pyplot()
    fig, ax = subplots(figsize=(9.6, 4.0))
    cols = w1_cols(m)
    ms = np.array([int(c[4:]) for c in cols], dtype=float)
    ranked = m[np.isfinite(m["id_final"])].sort_values("id_final")
    if len(ranked):
        picks = {"low": ranked.iloc[0], "median": ranked.iloc[len(ranked) // 2],
                 "high": ranked.iloc[-1]}
        colors = {"low": BASELINE_COLORS[2], "median": BASELINE_COLORS[0], "high": PROPOSED_COLOR}
        for name, row in picks.items():
            w = row[cols].to_numpy(float)
            d = float(row["id_final"])
            z = PROPOSED_ZORDER if colors[name] == PROPOSED_COLOR else BASELINE_ZORDER
            ax.plot(ms, w, "o-", color=colors[name], ms=3, zorder=z,
                    label=f"{name} ID {d:.1f} ({row['setting']}, seed {row['seed']}): "
                          f"b = {row['w1_slope']:.2f}")
            ax.plot(ms, w[0] * (ms / ms[0]) ** (-1.0 / d), "--", color=colors[name], lw=1,
                    zorder=z)
    ax.plot([], [], "--", color=REFERENCE_COLOR, label="reference slope -1/d_hat")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(ms)
    ax.set_xticklabels([f"{int(v)}" for v in ms])
    ax.xaxis.set_minor_formatter(plt.NullFormatter())
    ax.set_xlabel("subset size m")
    ax.set_ylabel("W1 between disjoint m-subsets")
    legend_outside(fig)
    return fig


def make(cfg, metrics, curves) -> dict:
    m, others = premise(zoo(cfg, metrics))
    return {"id_vs_gap": id_vs_gap(cfg, m, others), "predictors": predictors(cfg, m),
            "w1_curves": w1_curves(cfg, m)}


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    from .claims import _kendall
    from .experiment import INTERPOLATION_CAP

    cols = ["test_err", "gap", "gap_loss", "pop_gap", "id_final", "pca_final", "lip", "bound"]
    per_cfg = (metrics.groupby("setting", sort=False)[cols].mean().round(3).reset_index())
    by_setting = metrics.groupby("setting", sort=False)
    training = pd.DataFrame({
        "models": by_setting.size(),
        "interpolated": by_setting["interpolated"].sum().astype(int),
        "epochs_min": by_setting["epochs"].min().astype(int),
        "epochs_median": by_setting["epochs"].median(),
        "epochs_max": by_setting["epochs"].max().astype(int),
        "train_err_max": by_setting["train_err"].max().round(4),
    }).reset_index()
    everything = zoo(cfg, metrics)
    m, others = premise(everything)
    rows = []

    for col, label in PREDICTORS.items():
        rows.append({"predictor": label, "spearman_g": rho(m, col, "gap"),
                     "kendall_g": _kendall(m, col, "gap"),
                     "spearman_test_err": rho(m, col, "test_err")})
    rows.append({"predictor": "final ID vs W1 slope b (not g)", "spearman_g": rho(m, "id_final",
                                                                          "w1_slope"),
                 "kendall_g": _kendall(m, "id_final", "w1_slope"), "spearman_test_err": np.nan})
    corr = pd.DataFrame(rows).round(3)
    cap = INTERPOLATION_CAP * int(cfg["params"]["epochs"])
    out = {f"Training to interpolation per configuration: at least the spec's "
           f"{cfg['params']['epochs']} epochs, then until every training label is fit, at most "
           f"{cap}": training,
           "Per configuration (mean over seeds)": per_cfg,
           f"Rank correlation of each predictor with g and test error (claim zoo: the "
           f"{len(m)} of {len(everything)} models that interpolated)": corr}
    if len(others):
        out["The models left out of the claims (stopped at the cap without interpolating)"] = (
            others[["setting", "seed", "epochs", "train_err", "test_err", "gap", "id_final"]]
            .round(4).reset_index(drop=True))
    teacher = metrics[metrics["teacher"] > 0.5]
    if len(teacher):
        out["Teacher task: rank correlations with g"] = pd.DataFrame(
            [{"predictor": label, "spearman_g": rho(teacher, col, "gap")}
             for col, label in PREDICTORS.items()]).round(3)
    return out
