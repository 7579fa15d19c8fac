"""Fig. 1 (IoU vs extrapolation level), Fig. 2 (IoU vs N), Fig. 3 (LM vs IoU), the gallery,
Table 1 and the premise / full-profile tables."""

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

from . import PROPOSED
from . import shapes as sh
from .claims import COND, DNI, LAMP, design_table, settings_2d
from .experiment import gallery_target, set_names

LEVEL_LABEL = {"interp": "interp.", "e25": "+25%", "e50": "+50%", "e100": "+100%"}


def _methods(cfg, metrics):
    return [m for m in cfg["methods"] if (metrics["method"] == m).any()]


def _style(cfg, m, methods):
    st = method_style(m, methods, PROPOSED)
    st["label"] = method_label(cfg, m)
    return st


def _largest_2d(cfg):
    s2 = settings_2d(cfg)
    return max(s2, key=s2.get) if s2 else None


def iou_vs_extrapolation(cfg, metrics):
    names = set_names(cfg["params"]["levels"])
    x = np.r_[0.0, 100 * np.asarray(cfg["params"]["levels"], dtype=float)]
    setting = _largest_2d(cfg)
    methods = _methods(cfg, metrics)
    fig, ax = subplots(figsize=(7.4, 3.8))
    for m in methods:
        part = metrics[(metrics["method"] == m) & (metrics["setting"] == setting)]
        if not len(part):
            continue
        v = np.stack([part[f"iou_{n}"].to_numpy(float) for n in names], 1)
        st = _style(cfg, m, methods)
        if m not in (LAMP, COND, DNI):
            st.update(linestyle="--", linewidth=1.0, alpha=0.7)
        sd = v.std(0) if len(v) > 1 else np.zeros(len(names))
        ax.errorbar(x, v.mean(0), yerr=sd, marker="o", capsize=3, **st)
    ax.set_xticks(x, [LEVEL_LABEL.get(n, n) for n in names])
    ax.set_xlabel("target set (extrapolation beyond the training range, % of range width)")
    ax.set_ylabel("IoU with the analytic shape")
    n = (cfg["settings"].get(setting) or {}).get("n_exemplars", "?")
    ax.set_title(f"Controlled generation at N = {n} exemplars")
    legend_outside(ax)
    return fig


def iou_vs_n(cfg, metrics):
    s2 = settings_2d(cfg)
    methods = _methods(cfg, metrics)
    fig, ax = subplots(figsize=(7.4, 3.8))
    for m in methods:
        xs, mean, sd = [], [], []
        for s, n in sorted(s2.items(), key=lambda kv: kv[1]):
            v = metrics.loc[(metrics["method"] == m) & (metrics["setting"] == s),
                            "iou_interp"].to_numpy(float)
            if len(v):
                xs.append(n)
                mean.append(v.mean())
                sd.append(v.std())
        if not xs:
            continue
        st = _style(cfg, m, methods)
        ax.plot(xs, mean, marker="o", **st)
        ax.fill_between(xs, np.array(mean) - sd, np.array(mean) + sd, **band_style(st))
    ax.set_xscale("log")
    ns = sorted(set(s2.values()))
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.minorticks_off()
    ax.set_xlabel("exemplars N")
    ax.set_ylabel("interpolation IoU")
    legend_outside(ax)
    return fig


def lm_vs_iou(cfg, curves):
    fig, ax = subplots(figsize=(7.0, 3.8))
    table = design_table(cfg, curves)
    lm, iou = table["design_lm"].to_numpy(float), table["design_iou"].to_numpy(float)
    ok = np.isfinite(lm) & np.isfinite(iou) & (lm > 0)
    st = method_style(LAMP, [LAMP], PROPOSED)
    if ok.any():
        ax.scatter(lm[ok], iou[ok], s=8, alpha=0.5, color=st["color"], zorder=st["zorder"],
                   label="LAMP designs")
        thr = np.percentile(lm[ok], float(cfg["params"]["lm_percentile"]))
        ax.axvline(thr, color=REFERENCE_COLOR, ls="--", lw=1,
                   label=f"LM {cfg['params']['lm_percentile']:g}th percentile")
        ax.set_xscale("log")
    ax.axhline(float(cfg["params"]["fail_iou"]), color=REFERENCE_COLOR, ls=":", lw=1,
               label=f"failure: IoU < {cfg['params']['fail_iou']:g}")
    ax.set_xlabel("linearity mismatch LM")
    ax.set_ylabel("IoU")
    legend_outside(ax)
    return fig


def gallery(cfg, metrics, curves):
    fam = sh.family("profile2d")
    part = (curves[(curves["metric"] == "gallery_field")
                   & curves["setting"].isin(settings_2d(cfg))] if len(curves) else curves)
    methods = [m for m in cfg["methods"] if len(part) and (part["method"] == m).any()]
    ncols = 3
    nrows = max(1, int(np.ceil(len(methods) / ncols)))
    fig, axes = subplots(nrows, ncols, figsize=(9.0, 2.0 * nrows + 0.6), sharex=True,
                         sharey=True, squeeze=False)
    ax_x, ax_y = sh.axes(fam)
    target = gallery_target(fam, float(cfg["params"]["gallery_level"]))
    pts, shape = sh.grid_points(fam)
    truth = sh.sdf(fam, target[None], pts)[0].reshape(shape)
    for k, ax in enumerate(axes.ravel()):
        if k >= len(methods):
            ax.set_visible(False)
            continue
        m = methods[k]
        rows = part[part["method"] == m].sort_values("step")
        f = rows["value"].to_numpy(float)
        ax.contourf(ax_x, ax_y, truth, levels=[-10, 0], colors=["#d5d8dc"])
        if f.size == truth.size:
            st = method_style(m, cfg["methods"], PROPOSED)
            ax.contour(ax_x, ax_y, f.reshape(shape), levels=[0], colors=[st["color"]],
                       linewidths=1.6)
        setting = rows["setting"].iloc[0] if len(rows) else ""
        ax.set_title(f"{method_label(cfg, m)} ({setting})", fontsize=9)
        ax.set_aspect("equal")
    fig.supxlabel("x")
    fig.supylabel("y")
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"iou_vs_extrapolation": iou_vs_extrapolation(cfg, metrics),
            "iou_vs_n": iou_vs_n(cfg, metrics),
            "lm_vs_iou": lm_vs_iou(cfg, curves),
            "gallery": gallery(cfg, metrics, curves)}


def _cell(v, digits=3):
    v = np.asarray(v, dtype=float)
    v = v[np.isfinite(v)]
    if not len(v):
        return "—"
    return f"{v.mean():.{digits}f} ± {v.std():.{digits}f}"


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    names = set_names(cfg["params"]["levels"])
    setting = _largest_2d(cfg)
    rows = []
    for m in _methods(cfg, metrics):
        part = metrics[(metrics["method"] == m) & (metrics["setting"] == setting)]
        if not len(part):
            continue
        row = {"method": method_label(cfg, m)}
        for n in names:
            row[f"IoU {LEVEL_LABEL.get(n, n)}"] = _cell(part[f"iou_{n}"])
        for n in names:
            row[f"error % {LEVEL_LABEL.get(n, n)}"] = _cell(part[f"perr_{n}"], 2)
        rows.append(row)
    n = (cfg["settings"].get(setting) or {}).get("n_exemplars", "?")
    out = {f"Table 1: IoU and parameter error per method and target set at N = {n} "
           "(mean ± s.d. over seeds)": pd.DataFrame(rows)}
    rows = []
    for (m, s), part in metrics.groupby(["method", "setting"], sort=False):
        rows.append({"method": method_label(cfg, m), "setting": s,
                     "exemplar self-IoU": _cell(part["exemplar_iou"]),
                     "||w - w_init|| / ||w_init||": _cell(part["weight_drift"]),
                     "valid (all targets)": _cell(part["valid_all"]),
                     "LM (all targets)": _cell(part["lm_all"], 4),
                     "||alpha||_1 (all)": _cell(part["alpha_l1_all"], 2),
                     "empty designs": f"{part['n_empty'].sum():.0f}"})
    out["Premises and diagnostics per method and setting (mean ± s.d. over seeds)"] = \
        pd.DataFrame(rows)
    if "partial_iou" in metrics and np.isfinite(metrics["partial_iou"]).any():
        rows = []
        for s, part in metrics[metrics["method"] == LAMP].groupby("setting", sort=False):
            rows.append({"setting": s, "IoU (min-norm)": _cell(part["partial_iou"]),
                         "error % on C (min-norm)": _cell(part["partial_perr"], 2),
                         "IoU (guided)": _cell(part["guided_iou"]),
                         "error % on C (guided)": _cell(part["guided_perr"], 2),
                         "drag proxy drop (h + c)": _cell(part["guided_proxy_drop"], 4),
                         "LM min-norm / guided": f"{_cell(part['partial_lm'], 4)} / "
                                                 f"{_cell(part['guided_lm'], 4)}"})
        out["Full profile: partial constraints and performance-guided selection (LAMP)"] = \
            pd.DataFrame(rows)
    return out
