"""Fig. 1 (M0: margin gap vs ASR per language and seed), Fig. 2 (ASR per language for M0,
ML-SFT, SMO) and Table 1 (per-method results)."""

from __future__ import annotations

import numpy as np

from icml26.plotting import legend_outside, method_colors, method_label, method_zorder, subplots

from . import PROPOSED
from .claims import MAIN, n_languages, per_seed_spearman


def _lang_names(L):
    return ["EN"] + [f"L{l}" for l in range(1, L)]


def margin_gap_vs_asr(cfg, metrics):
    L = n_languages(metrics)
    part = metrics[(metrics["method"] == "m0") & (metrics["setting"] == MAIN)]
    fig, ax = subplots(figsize=(7.2, 3.8))
    from matplotlib import colormaps

    cmap = colormaps["viridis"]
    for l, name in enumerate(_lang_names(L)):
        ax.scatter(part[f"gap_{l}"], part[f"asr_{l}"], s=28, color=cmap(l / max(L - 1, 1)),
                   edgecolor="black", linewidth=0.4, label=name, zorder=3)
    rho = per_seed_spearman(metrics)
    ax.set_xlabel("spatial margin gap of M0 (m_EN - m_l, held-out harmful pairs)")
    ax.set_ylabel("ASR of M0")
    ax.set_ylim(-0.03, 1.03)
    ax.set_title(f"M0: margin gap vs ASR; mean per-seed Spearman rho = "
                 f"{np.nanmean(rho) if len(rho) and np.isfinite(rho).any() else float('nan'):.2f}"
                 f" ({len(rho)} seeds)")
    legend_outside(ax)
    return fig


def asr_per_language(cfg, metrics):
    """ASR (left) and, to tell refusal from refuse-everything, over-refusal (right)."""
    L = n_languages(metrics)
    methods = [m for m in ("m0", "ml-sft", "smo") if ((metrics["method"] == m)
                                                       & (metrics["setting"] == MAIN)).any()]
    colors = method_colors(methods, PROPOSED)
    fig, axes = subplots(1, 2, figsize=(10.0, 3.6), sharey=True)
    width = 0.8 / max(len(methods), 1)
    for ax, stem, title in ((axes[0], "asr", "attack success rate (harmful prompts)"),
                            (axes[1], "overref", "over-refusal (harmless prompts)")):
        for k, m in enumerate(methods):
            part = metrics[(metrics["method"] == m) & (metrics["setting"] == MAIN)]
            v = part[[f"{stem}_{l}" for l in range(L)]].to_numpy(float)
            x = np.arange(L) + (k - (len(methods) - 1) / 2) * width
            ax.bar(x, v.mean(0), width, yerr=v.std(0) if len(v) > 1 else None, capsize=2,
                   color=colors[m], edgecolor="black", linewidth=0.5,
                   zorder=method_zorder(m, PROPOSED), label=method_label(cfg, m))
        ax.set_xticks(range(L), _lang_names(L))
        ax.set_xlabel("language (high -> low resource)")
        ax.set_title(title)
        ax.set_ylim(0, 1.05)
    axes[0].set_ylabel("share of held-out prompts")
    legend_outside(axes[1])
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"margin_gap_vs_asr": margin_gap_vs_asr(cfg, metrics),
            "asr_per_language": asr_per_language(cfg, metrics)}


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    L = n_languages(metrics)
    low = list(cfg["params"]["low_resource"])
    names = _lang_names(L)

    def ms(v):
        v = np.asarray(v, float)
        return f"{v.mean():.3f} ± {v.std():.3f}" if v.size else "—"

    rows = []
    for m in cfg["methods"]:
        part = metrics[(metrics["method"] == m) & (metrics["setting"] == MAIN)]
        if not len(part):
            continue
        row = {"method": method_label(cfg, m)}
        for l in range(L):
            row[f"ASR {names[l]}"] = ms(part[f"asr_{l}"])
        row[f"ASR low ({', '.join(names[l] for l in low)})"] = ms(part["asr_low"])
        row["over-refusal EN"] = ms(part["overref_0"])
        row["over-refusal low"] = ms(part[[f"overref_{l}" for l in low]].mean(axis=1))
        row["over-refusal (all langs)"] = ms(part["overref_mean"])
        row["topic acc (all langs)"] = ms(part["topic_acc"])
        row["margin gap L1..L_last"] = ms(part["gap_mean"])
        row["English drift"] = ms(part["english_drift"])
        row["seeds"] = len(part)
        rows.append(row)
    out = {"Table 1: ASR per language, mean low-resource ASR, over-refusal, topic accuracy, "
           "margin gap and English drift per method (mean ± std over seeds)": pd.DataFrame(rows)}
    lit = metrics[(metrics["method"] == "m0") & (metrics["setting"] != MAIN)]
    if len(lit):
        rows = []
        for setting in (MAIN, *sorted(set(lit["setting"]))):
            part = metrics[(metrics["method"] == "m0") & (metrics["setting"] == setting)]
            row = {"M0 stage-2 replay": setting}
            for l in range(L):
                row[f"ASR {names[l]}"] = ms(part[f"asr_{l}"])
            for l in range(L):
                row[f"retrieval {names[l]}"] = ms(part[f"retrieval_m0_{l}"])
            row["English epochs"] = ms(part["align_epochs"])
            rows.append(row)
        out["Table 2: M0 with the InfoNCE replay in stage 2 (synthetic, main) vs the literal "
            "topic-only replay (topic-replay-only): ASR and cross-lingual retrieval accuracy "
            "per language (mean ± std over seeds)"] = pd.DataFrame(rows)
    return out
