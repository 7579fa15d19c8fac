"""Fig. 1 (LM validation loss vs step), Fig. 2 (VKR accuracy vs step, 1 and 2 layers) and the
main table (final val loss / bpc / perplexity / params per method) plus the exactness table."""

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
from .claims import settings_of

LN2 = float(np.log(2.0))


def _band(ax, cfg, part, metric, methods):
    for m in methods:
        table = part[(part["method"] == m) & (part["metric"] == metric)].pivot_table(
            index="seed", columns="step", values="value")
        if table.empty:
            continue
        steps = table.columns.to_numpy(float)
        mean, sd = table.mean(axis=0).to_numpy(), table.std(axis=0, ddof=0).to_numpy()
        style = method_style(m, cfg["methods"], PROPOSED) | {"label": method_label(cfg, m)}
        ax.plot(steps, mean, **style)
        ax.fill_between(steps, mean - sd, mean + sd, **band_style(style))


def lm_loss(cfg, curves):
    lms = settings_of(cfg, "lm")
    fig, axes = subplots(1, max(1, len(lms)), figsize=(4.6 * max(1, len(lms)) + 2.4, 3.6),
                         squeeze=False)
    for ax, s in zip(axes[0], lms, strict=False):
        part = curves[curves["setting"] == s]
        _band(ax, cfg, part, "val_loss_curve", cfg["methods"])
        sub = part[(part["metric"] == "val_loss_curve") & (part["step"] > 0)]
        if len(sub):  # zoom past the initial ln(vocab) so the late-training gaps are visible
            lo, hi = sub["value"].min(), sub["value"].quantile(0.9)
            ax.set_ylim(lo - 0.05 * (hi - lo + 1e-9), hi + 0.05 * (hi - lo + 1e-9))
        ax.set_xlabel("training step")
        ax.set_ylabel("validation loss (nats/char)")
        ax.set_title(f"char-level LM ({s})")
    legend_outside(fig)
    return fig


def vkr_accuracy(cfg, curves):
    panels = settings_of(cfg, "vkr", 1) + settings_of(cfg, "vkr", 2)
    fig, axes = subplots(1, max(1, len(panels)), figsize=(3.8 * max(1, len(panels)) + 1.6, 3.4),
                         squeeze=False, sharey=True)
    methods = [m for m in cfg["methods"] if m != "causal-wide"]
    for ax, s in zip(axes[0], panels, strict=False):
        _band(ax, cfg, curves[curves["setting"] == s], "test_acc_curve", methods)
        ax.axhline(0.125, color=REFERENCE_COLOR, ls=":", lw=1, label="chance (1/8)")
        layers = cfg["settings"][s].get("layers")
        ax.set_title(f"VKR, {layers} layer{'s' if layers != 1 else ''}")
        ax.set_xlabel("training step")
        ax.set_ylim(0, 1.02)
    axes[0][0].set_ylabel("test accuracy")
    legend_outside(fig)
    return fig


def make(cfg, metrics, curves) -> dict:
    figs = {"lm_loss": lm_loss(cfg, curves), "vkr_accuracy": vkr_accuracy(cfg, curves)}
    return {name: figs[name] for name in cfg["figures"]}


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    rows = []
    for s in settings_of(cfg, "lm"):
        for m in cfg["methods"]:
            part = metrics[(metrics["setting"] == s) & (metrics["method"] == m)]
            if not len(part):
                continue
            rows.append({"setting": s, "method": method_label(cfg, m),
                         "val loss (nats/char)": part["val_loss"].mean(),
                         "± std": part["val_loss"].std(ddof=0),
                         "bpc": part["bpc"].mean(), "bpc ± std": part["bpc"].std(ddof=0),
                         "perplexity": part["perplexity"].mean(),
                         "params": int(part["n_params"].iloc[0]),
                         "CPU-s / step": part["cpu_s_per_step"].mean(), "seeds": len(part)})
    vrows = []
    for s in settings_of(cfg, "vkr"):
        for m in cfg["methods"]:
            part = metrics[(metrics["setting"] == s) & (metrics["method"] == m)]
            if not len(part):
                continue
            vrows.append({"setting": s, "method": method_label(cfg, m),
                          "test accuracy": part["test_acc"].mean(),
                          "± std": part["test_acc"].std(ddof=0),
                          "params": int(part["n_params"].iloc[0]),
                          "CPU-s / step": part["cpu_s_per_step"].mean(), "seeds": len(part)})
    castle = metrics[metrics["method"] == "castle"]
    erows = []
    for name, col, thr in (("(a) parallel == recurrent", "diff_recurrent", 1e-5),
                           ("(a) parallel == decoding", "diff_decode", 1e-5),
                           ("(b) causality", "diff_causality", 1e-6),
                           ("(c) V^U = 0 -> causal attention", "diff_vu0", 1e-6)):
        worst = float(castle[col].max()) if len(castle) else float("nan")
        erows.append({"test": name, "max abs diff (all CASTLE runs)": f"{worst:.2e}",
                      "threshold": f"{thr:g}", "passed": "yes" if worst < thr else "no"})
    out = {}
    lm = metrics[metrics["setting"].isin(settings_of(cfg, "lm"))]
    if len(lm) and "corpus_sha32" in lm:
        row = lm.iloc[0]
        v = int(row["python_version"])
        out["Corpus provenance (stdlib docstrings, printable ASCII; full hash in data.npz)"] = (
            pd.DataFrame([{"python": f"{v // 10000}.{v // 100 % 100}.{v % 100}",
                           "characters": int(row["corpus_chars"]),
                           "sha256 (first 8 hex digits)": f"{int(row['corpus_sha32']):08x}",
                           "same corpus in every LM run":
                               "yes" if lm["corpus_sha32"].nunique() == 1 else "no"}]))
    return out | {
        "LM: final validation loss on the whole validation split (mean over seeds)":
            pd.DataFrame(rows).round(4),
        "VKR: final test accuracy (2000 sequences per seed)": pd.DataFrame(vrows).round(4),
        "Exactness tests (a)-(c) on the trained CASTLE models (float64, L = 16)":
            pd.DataFrame(erows),
    }
