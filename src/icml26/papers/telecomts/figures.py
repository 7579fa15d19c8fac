"""Headline figure (Table 1 as bars), Fig. 1 confusion matrices, Fig. 2 example windows,
Fig. 3 forecasting skill, the full profile's figure (localisation on 1-hour traces and the
PatchTST-like transformer; a "full profile only" notice at smaller scales), and the report's
tables (Table 1, per-type F1, premises, probe; localisation and transformer tables when the
full profile ran)."""

from __future__ import annotations

import numpy as np

from icml26.plotting import (
    BASELINE_COLORS,
    REFERENCE_COLOR,
    legend_outside,
    method_colors,
    method_label,
    method_zorder,
    subplots,
    unique_handles,
)

from . import PROPOSED
from . import generator as gen
from .claims import premises

MODEL_LABEL = {"gbm": "FEAT-GBM", "cnn": "CNN", "patchtst": "PatchTST-like"}
WINDOW_TASKS = {"detection", "rca"}
PT_LABEL = {"raw": "RevIN off (RAW)", "inst": "RevIN on (INST)",
            "inst-scale": "RevIN on + scale scalars (INST+SCALE)"}


def _window_settings(cfg, model=None):
    """Settings on the window tasks (detection / RCA), optionally of one model family."""
    return [s for s, p in cfg["settings"].items() if set(p["tasks"]) & WINDOW_TASKS
            and (model is None or p["model"] == model)]


def _task_settings(cfg, task):
    return [s for s, p in cfg["settings"].items() if task in p["tasks"]]


def _methods(cfg, metrics):
    return [m for m in cfg["methods"] if (metrics["method"] == m).any()]


def _values(metrics, method, setting, col):
    part = metrics[(metrics["method"] == method) & (metrics["setting"] == setting)]
    if col not in part:
        return np.array([])
    v = part.sort_values("seed")[col].to_numpy(float)
    return v if np.isfinite(v).any() else np.array([])


def scale_matters(cfg, metrics):
    methods = _methods(cfg, metrics)
    colors = method_colors(methods, PROPOSED)
    settings = _window_settings(cfg)
    fig, axes = subplots(1, 2, figsize=(9.0, 3.8))
    width = 0.8 / max(len(methods), 1)
    for ax, (col, name, task) in zip(axes, (("rca_macro_f1", "RCA macro-F1", "rca"),
                                            ("det_auroc", "detection AUROC", "detection")),
                                     strict=True):
        ticks = []
        # the full profile's transformer appears only in the panels of the tasks it runs
        shown = [s for s in settings if cfg["settings"][s]["model"] != "patchtst"
                 or task in cfg["settings"][s]["tasks"]]
        for g, s in enumerate(shown):
            ticks.append(MODEL_LABEL.get(cfg["settings"][s]["model"], s))
            for k, m in enumerate(methods):
                v = _values(metrics, m, s, col)
                if not v.size:
                    continue
                x = g + (k - (len(methods) - 1) / 2) * width
                z = method_zorder(m, PROPOSED)
                ax.bar(x, np.nanmean(v), width * 0.92, color=colors[m], zorder=z,
                       yerr=np.nanstd(v) if v.size > 1 else None, capsize=2,
                       label=method_label(cfg, m), edgecolor="black", linewidth=0.4)
                ax.plot(np.full(v.size, x), v, "o", ms=2.5, color="black", zorder=z + 0.1)
        ax.set_xticks(range(len(shown)), ticks)
        ax.set_ylabel(name)
        ax.set_title(name + (" (CNN: RCA only below full scale)" if col == "det_auroc"
                             and any(cfg["settings"][s]["model"] == "cnn"
                                     and "detection" not in cfg["settings"][s]["tasks"]
                                     for s in settings) else ""), fontsize=9)
        lo = [np.nanmin(_values(metrics, m, s, col)) for m in methods for s in settings
              if _values(metrics, m, s, col).size]
        if lo:
            ax.set_ylim(max(0.0, min(lo) - 0.1), 1.0)
    legend_outside(fig, below=True)
    return fig


def _cm(metrics, method, setting, seed):
    part = metrics[(metrics["method"] == method) & (metrics["setting"] == setting)
                   & (metrics["seed"] == seed)]
    if not len(part) or "rca_cm" not in part:
        return None
    k = len(gen.TYPES)
    vals = np.array([float(v) for v in str(part["rca_cm"].iloc[0]).split()])
    return vals.reshape(k, k) if vals.size == k * k else None


def confusion(cfg, metrics):
    from matplotlib.patches import Rectangle

    gbm = _window_settings(cfg, "gbm")
    seed = int(metrics["seed"].min())
    fig, axes = subplots(1, 2, figsize=(10.0, 4.8))
    im = None
    for ax, m in zip(axes, ("raw", "inst"), strict=True):
        cm = _cm(metrics, m, gbm[0], seed) if gbm else None
        ax.set_title(f"FEAT-GBM, {method_label(cfg, m)}, seed {seed}", fontsize=9)
        ax.grid(False)
        if cm is None:
            continue
        rows = cm.sum(axis=1, keepdims=True)
        frac = cm / np.where(rows > 0, rows, 1)
        im = ax.imshow(frac, vmin=0, vmax=1, cmap="Greys")
        ax.add_patch(Rectangle((gen.MILD - 0.5, gen.MILD - 0.5), 2, 2, fill=False,
                               edgecolor="#c0392b", linewidth=2))
        k = len(gen.SHORT)
        ax.set_xticks(range(k), gen.SHORT, rotation=70, fontsize=8)
        ax.set_yticks(range(k), gen.SHORT, fontsize=8)
        ax.set_xlabel("predicted type")
        ax.set_ylabel("true type")
    if im is not None:
        fig.colorbar(im, ax=list(axes), shrink=0.8, label="fraction of the true type's windows")
    return fig


def examples(cfg, data):
    """One panel per type, in the KPI's physical units: the normal session, the same session
    with the anomaly (what RAW sees), and the anomalous window after instance normalisation
    drawn in the normal session's frame (what INST sees: x_inst * s.d._normal + mean_normal,
    on the log1p scale for counts). Where the dashed line lies on the grey one, INST cannot
    tell the anomaly from normal traffic."""
    x, types = data["examples/x"], data["examples/type"]
    t = np.arange(x.shape[-1]) / gen.HZ
    fig, axes = subplots(5, 2, figsize=(10.0, 11.0), sharex=True)
    for k in range(len(gen.TYPES)):
        ax = axes[k // 2, k % 2]
        name = gen.SHOW[k]
        c = gen.K[name]
        log = name in gen.LOG_KPIS
        fwd, back = (np.log1p, np.expm1) if log else (lambda v: v, lambda v: v)
        normal, anom = fwd(x[0, c]), fwd(x[1 + k, c])
        sd = anom.std()
        inst = (anom - anom.mean()) / sd if sd > 0 else np.zeros_like(anom)
        seen = back(inst * normal.std() + normal.mean())
        ax.plot(t, x[0, c], color=REFERENCE_COLOR, lw=1.0, label="normal session")
        ax.plot(t, x[1 + k, c], color=BASELINE_COLORS[2], lw=1.2,
                label="with the anomaly (physical units, as RAW sees it)")
        ax.plot(t, seen, color=BASELINE_COLORS[0], lw=1.0, ls="--",
                label="after instance normalisation, drawn in the normal session's frame")
        if log:
            ax.set_yscale("symlog", linthresh=1.0)
        ax.set_title(f"{gen.SHORT[int(types[1 + k])]}: {name}", fontsize=9)
        ax.set_ylabel(gen.UNITS[c], fontsize=9)
        if k // 2 == 4:
            ax.set_xlabel("time (s)")
    legend_outside(fig, below=True)
    return fig


def forecast_skill(cfg, metrics):
    gbm = _window_settings(cfg, "gbm")
    names = list(cfg["params"]["probe_kpis"]) + ["control"]
    fig, ax = subplots(figsize=(7.0, 3.6))
    part = metrics[(metrics["method"] == "raw") & metrics["setting"].isin(gbm[:1])]
    for k, name in enumerate(names):
        col = f"probe_skill_{name}"
        if col not in part:
            continue
        v = part[col].to_numpy(float)
        color = BASELINE_COLORS[2] if name == "control" else BASELINE_COLORS[0]
        ax.bar(k, np.nanmean(v), 0.6, color=color, zorder=2,
               label="smooth control" if name == "control" else "TelecomTS-mini KPI")
        ax.plot(np.full(v.size, k), v, "o", ms=3, color="black", zorder=3)
    for y, lab in ((0.15, "claim: <= 0.15 (RX_Bytes)"), (0.5, "claim: >= 0.5 (control)")):
        ax.axhline(y, color=REFERENCE_COLOR, ls="--", lw=1, label=lab)
    ax.axhline(0.0, color="black", lw=0.6)
    ax.set_xticks(range(len(names)), [n if n == "control" else f"{n}" for n in names])
    ax.set_ylabel("skill vs window mean (16 steps)")
    legend_outside(ax)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"scale_matters": scale_matters(cfg, metrics),
            "confusion": confusion(cfg, metrics),
            "examples": examples(cfg, _example_data(cfg)),
            "forecast_skill": forecast_skill(cfg, metrics),
            "full_profile": full_profile(cfg, metrics, curves)}


def _example_data(cfg):
    """Fig. 2's windows: regenerated exactly as prepare does (cheap, deterministic)."""
    from icml26 import seeding

    from .experiment import prepare

    return prepare(cfg, seeding.rng(cfg["paper"], "prepare"))


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    methods = _methods(cfg, metrics)
    rows = []
    for s in _window_settings(cfg):
        p = cfg["settings"][s]
        for m in methods:
            row = {"model": MODEL_LABEL.get(p["model"], s), "representation": method_label(cfg, m)}
            for col, name in (("det_auroc", "detection AUROC"), ("det_f1", "detection F1@0.5"),
                              ("rca_macro_f1", "RCA macro-F1"), ("rca_acc", "RCA accuracy"),
                              ("rca_f1_full", "RCA macro-F1 (full windows)"),
                              ("rca_f1_partial", "RCA macro-F1 (partial windows)"),
                              ("rca_mild_severe_conf", "mild/severe confusion")):
                v = _values(metrics, m, s, col)
                row[name] = (f"{np.nanmean(v):.3f} ± {np.nanstd(v):.3f} (n={v.size})"
                             if v.size else "—")
            rows.append(row)
    out = {"Table 1: detection and RCA per representation and model (mean ± s.d. over "
           "seeds)": pd.DataFrame(rows)}
    rows = []
    for s in _task_settings(cfg, "rca"):
        p = cfg["settings"][s]
        for m in methods:
            row = {"model": MODEL_LABEL.get(p["model"], s), "representation": method_label(cfg, m)}
            for c, name in enumerate(gen.SHORT):
                v = _values(metrics, m, s, f"rca_f1_type{c}")
                row[name] = f"{np.nanmean(v):.2f}" if v.size else "—"
            rows.append(row)
    out["RCA F1 per anomaly type (seed mean)"] = pd.DataFrame(rows)
    gbm = _window_settings(cfg, "gbm")
    part = metrics[(metrics["method"] == "raw") & metrics["setting"].isin(gbm[:1])]
    rows = []
    for name in list(cfg["params"]["probe_kpis"]) + ["control"]:
        if f"probe_skill_{name}" not in part:
            continue
        ch = part[f"probe_choice_{name}"].to_numpy(float)
        rows.append({"series": name,
                     "skill (mean ± s.d.)": f"{part[f'probe_skill_{name}'].mean():.3f} ± "
                                            f"{part[f'probe_skill_{name}'].std(ddof=0):.3f}",
                     "MAE last value": f"{part[f'probe_mae_last_{name}'].mean():.4g}",
                     "MAE window mean": f"{part[f'probe_mae_mean_{name}'].mean():.4g}",
                     "MAE ridge AR(32)": f"{part[f'probe_mae_ridge_{name}'].mean():.4g}",
                     "chosen on validation": f"ridge in {int((ch == 1).sum())} of {ch.size} "
                                             "seeds, else last value"})
    if rows:
        out["Forecasting probe (16-step horizon; choice rule fixed in config)"] = \
            pd.DataFrame(rows)
    rows = []
    for s, p in cfg["settings"].items():
        if p["model"] != "gbm":
            continue
        for m in methods:
            for task in p["tasks"]:
                v = _values(metrics, m, s, f"gbm_iters_{task}")
                if v.size:
                    rows.append({"representation": method_label(cfg, m), "task": task,
                                 "boosting iterations (early stopping)": ", ".join(
                                     str(int(x)) for x in v),
                                 "cap": int(cfg["params"]["gbm_max_iter"])})
    if rows:
        out["FEAT-GBM iterations chosen by early stopping (per seed; 15% validation)"] = \
            pd.DataFrame(rows)
    prem = premises(cfg, metrics)
    if prem:
        out["The spec's premises, checked against this run"] = pd.DataFrame(prem)
    out.update(full_profile_tables(cfg, metrics))
    return out


# ---------------------------------------------------------------------------------------------
# full profile: temporal localisation on 1-hour traces and the PatchTST-like transformer
LOC_COLS = (("loc_f1", "per-step F1\n(no point adjustment,\nofficial)"),
            ("loc_f1_pa", "point-adjusted F1\n(inflated)"),
            ("loc_auroc", "per-step AUROC\n(threshold-free)"))


def _trace_len(p) -> str:
    sec = float(p["loc_trace_s"])
    return f"{sec / 3600:g}-hour" if sec >= 3600 else f"{sec:g}-second"


def _notice(ax, text):
    ax.axis("off")
    ax.text(0.5, 0.5, text, ha="center", va="center", fontsize=11, wrap=True,
            transform=ax.transAxes)


def _grouped_bars(ax, cfg, metrics, setting, cols, methods, colors):
    width = 0.8 / max(len(methods), 1)
    lo = []
    for g, (col, _) in enumerate(cols):
        for k, m in enumerate(methods):
            v = _values(metrics, m, setting, col)
            if not v.size:
                continue
            x = g + (k - (len(methods) - 1) / 2) * width
            z = method_zorder(m, PROPOSED)
            ax.bar(x, np.nanmean(v), width * 0.92, color=colors[m], zorder=z,
                   label=method_label(cfg, m), edgecolor="black", linewidth=0.4)
            ax.plot(np.full(v.size, x), v, "o", ms=2.5, color="black", zorder=z + 0.1)
            lo.append(np.nanmin(v))
    ax.set_xticks(range(len(cols)), [name for _, name in cols], fontsize=8)
    if lo:
        ax.set_ylim(max(0.0, min(lo) - 0.1), 1.0)


def full_profile(cfg, metrics, curves):
    """The full profile's results, or a clear notice at scales where it did not run."""
    methods = _methods(cfg, metrics)
    colors = method_colors(methods, PROPOSED)
    locs = [s for s in _task_settings(cfg, "localisation")
            if "loc_f1" in metrics and _values(metrics, methods[0], s, "loc_f1").size]
    pts = [s for s in _window_settings(cfg, "patchtst")
           if "rca_macro_f1" in metrics and _values(metrics, methods[0], s, "rca_macro_f1").size]
    if not locs and not pts:
        fig, ax = subplots(figsize=(8.0, 2.6))
        _notice(ax, f"Full profile only (this run: scale={cfg['scale']}).\n"
                    "The 1-hour traces with per-step anomaly localisation and the\n"
                    "PatchTST-like transformer with / without RevIN run at scale=full:\n"
                    "snakemake --config scale=full 'papers=[telecomts]'")
        return fig
    fig, axes = subplots(2, 2, figsize=(10.0, 7.6))
    grid = axes[1, 0].get_gridspec()
    for ax in axes[1]:
        ax.remove()
    ax_a, ax_b = axes[0]
    ax_c = fig.add_subplot(grid[1, :])
    if locs:
        _grouped_bars(ax_a, cfg, metrics, locs[0], LOC_COLS, methods, colors)
        ax_a.set_title(f"(a) localisation on {_trace_len(cfg['params'])} traces (FEAT-GBM, "
                       "test traces)", fontsize=9)
        ax_a.set_ylabel("score over all test steps")
    else:
        _notice(ax_a, "(a) localisation: not run\nin this configuration")
    if pts:
        cols = (("rca_macro_f1", "RCA macro-F1"), ("rca_acc", "RCA accuracy"),
                ("rca_f1_full", "macro-F1\n(full windows)"))
        _grouped_bars(ax_b, cfg, metrics, pts[0], cols, methods, colors)
        ax_b.set_title("(b) PatchTST-like: RAW = RevIN off, INST = RevIN on,\n"
                       "INST+SCALE = RevIN + scale scalars", fontsize=9)
    else:
        _notice(ax_b, "(b) PatchTST-like transformer: not run\nin this configuration")
    part = curves[curves["metric"].astype(str).str.startswith("trace_")] if len(curves) \
        else curves
    if locs and len(part):
        part = part[part["setting"] == locs[0]]
        seed = int(part["seed"].min())
        part = part[part["seed"] == seed]
        lab = part[(part["metric"] == "trace_label") & (part["method"] == methods[0])]
        t = lab["step"].to_numpy(float) / gen.HZ
        y = lab["value"].to_numpy(float) > 0.5
        for a, b in _runs(y):
            ax_c.axvspan(t[a], t[b - 1] + 1 / gen.HZ, color=REFERENCE_COLOR, alpha=0.25, lw=0,
                         zorder=0)
        from matplotlib.patches import Patch

        proxy = Patch(color=REFERENCE_COLOR, alpha=0.25, label="true anomaly (shaded)")
        for m in methods:
            sc = part[(part["metric"] == "trace_score") & (part["method"] == m)]
            z = method_zorder(m, PROPOSED)
            ax_c.plot(sc["step"].to_numpy(float) / gen.HZ, sc["value"].to_numpy(float),
                      color=colors[m], lw=1.0, zorder=z)
            thr = _values(metrics[metrics["seed"] == seed], m, locs[0], "loc_threshold")
            if thr.size:
                ax_c.axhline(thr[0], color=colors[m], ls="--", lw=0.8, zorder=z)
        ax_c.set_xlabel("time in the first test trace (s)")
        ax_c.set_ylabel("per-step anomaly score")
        ax_c.set_ylim(-0.02, 1.02)
        ax_c.set_title(f"(c) seed {seed}: per-step scores (dashed: validation-chosen "
                       "thresholds), shaded: true anomalies", fontsize=9)
    else:
        _notice(ax_c, "(c) trace excerpt: localisation not run in this configuration")
        proxy = None
    handles, labels = unique_handles(fig.axes)
    if proxy is not None:
        handles, labels = handles + [proxy], labels + [proxy.get_label()]
    legend_outside(fig, handles, labels, below=True)
    return fig


def _runs(y):
    d = np.diff(np.r_[0, y.astype(np.int8), 0])
    return list(zip(np.flatnonzero(d == 1), np.flatnonzero(d == -1), strict=True))


def _ms(v, fmt=".3f"):
    return f"{np.nanmean(v):{fmt}} ± {np.nanstd(v):{fmt}} (n={v.size})" if v.size else "—"


def full_profile_tables(cfg, metrics) -> dict:
    """Tables of the full profile, present only when its runs are in the metrics."""
    import pandas as pd

    out = {}
    methods = _methods(cfg, metrics)
    for s in _task_settings(cfg, "localisation"):
        if "loc_f1" not in metrics:
            continue
        rows = []
        for m in methods:
            row = {"representation": method_label(cfg, m)}
            for col, name in (("loc_f1", "per-step F1, NO point adjustment (official)"),
                              ("loc_precision", "per-step precision"),
                              ("loc_recall", "per-step recall"),
                              ("loc_f1_pa", "point-adjusted F1 (extra; inflated)"),
                              ("loc_auroc", "per-step AUROC"),
                              ("loc_val_f1", "validation per-step F1"),
                              ("loc_threshold", "threshold (chosen on validation)")):
                row[name] = _ms(_values(metrics, m, s, col))
            rows.append(row)
        p = cfg["params"]
        out[f"Full profile: temporal localisation on {_trace_len(p)} "
            f"traces (FEAT-GBM window detector, {int(p['T'])}-step windows, stride "
            f"{int(p['loc_stride'])}; test traces per seed: {int(p['loc_test_traces'])}; "
            "mean ± s.d. over seeds)"] = pd.DataFrame(rows)
        part = metrics[metrics["setting"] == s].drop_duplicates("seed")
        if "loc_mean_gap_s" in part:
            gap, dur = float(p["loc_gap_s"]), float(p["loc_dur_s"])
            rows = [{"quantity": name, "official process": ref,
                     "measured (mean ± s.d. over seeds)": _ms(part[col].to_numpy(float), ".2f")}
                    for col, name, ref in (
                        ("loc_mean_gap_s", "mean gap before an onset (s)", f"{gap:g}"),
                        ("loc_mean_dur_s", "mean anomaly duration (s)", f"{dur:g}"),
                        ("loc_anomalies_per_h", "anomalies per hour",
                         f"{3600 / (gap + dur):.1f} (= 3600 / (gap + duration))"),
                        ("loc_anom_frac", "share of anomalous steps",
                         f"{dur / (gap + dur):.3f} (= duration / (gap + duration))"))]
            g = _values(metrics, methods[0], s, "loc_win_pos_frac")
            rows.append({"quantity": "share of anomalous training windows (label rule)",
                         "official process": "—",
                         "measured (mean ± s.d. over seeds)": _ms(g, ".3f")})
            out["Full profile: the traces' anomaly process, checked against the official "
                "one (all traces of each seed)"] = pd.DataFrame(rows)
    for s in _window_settings(cfg, "patchtst"):
        if "rca_macro_f1" not in metrics or not _values(metrics, methods[0], s,
                                                       "rca_macro_f1").size:
            continue
        rows = []
        for m in methods:
            row = {"PatchTST-like variant": PT_LABEL.get(m, m)}
            for col, name in (("rca_macro_f1", "RCA macro-F1"), ("rca_acc", "RCA accuracy"),
                              ("rca_f1_full", "macro-F1 (full windows)"),
                              ("rca_f1_partial", "macro-F1 (partial windows)"),
                              ("rca_mild_severe_conf", "mild/severe confusion"),
                              ("patchtst_loss_rca_final", "final training loss")):
                row[name] = _ms(_values(metrics, m, s, col))
            rows.append(row)
        out["Full profile: the PatchTST-like transformer on RCA, with and without RevIN "
            "(mean ± s.d. over seeds)"] = pd.DataFrame(rows)
    return out
