"""Full success per method (headline), the data-scale curve, direct leaks by record length;
tables: the main comparison and the benchmark's data card."""

from __future__ import annotations

import textwrap

import numpy as np

from icml26.plotting import (
    legend_outside,
    method_colors,
    method_label,
    method_style,
    method_zorder,
    subplots,
)

from . import PROPOSED
from . import generator as gen


def _methods(cfg, metrics):
    return [m for m in cfg["methods"] if (metrics["method"] == m).any()]


def full_success(cfg, metrics):
    methods = _methods(cfg, metrics)
    colors = method_colors(methods, PROPOSED)
    fig, ax = subplots(figsize=(8.0, 3.8))
    width = 0.38
    for k, m in enumerate(methods):
        part = metrics[metrics["method"] == m]
        for off, col, alpha, hatch in ((-width / 2, "success_vanilla", 1.0, None),
                                       (width / 2, "success_hard", 0.55, "//")):
            v = part[col].to_numpy(float)
            v = v[np.isfinite(v)]
            if not len(v):
                continue
            ax.bar(k + off, v.mean(), width, yerr=v.std() if len(v) > 1 else None,
                   color=colors[m], alpha=alpha, hatch=hatch, edgecolor="black",
                   linewidth=0.5, capsize=2, zorder=method_zorder(m, PROPOSED))
    ax.set_xticks(range(len(methods)), [textwrap.fill(method_label(cfg, m), 14)
                                        for m in methods])
    ax.set_ylabel("full success rate (records)")
    ax.set_ylim(0, 1.05)
    ax.bar(0, 0, color="white", edgecolor="black", label="vanilla test (solid)")
    ax.bar(0, 0, color="white", edgecolor="black", hatch="//", label="hard test (hatched)")
    legend_outside(fig)
    ax.set_title("Full success: no leak of any target, every keep attribute kept "
                 "(mean ± std over seeds)")
    return fig


def scale_curve(cfg, metrics, curves):
    fig, ax = subplots(figsize=(7.2, 3.6))
    xs, ys = [], []
    part = curves[(curves["method"] == "proposed")
                  & (curves["metric"] == "scale_success_vanilla")] if len(curves) else []
    if len(part):
        g = part.groupby("step")["value"]
        xs += list(g.mean().index.astype(float))
        ys += [(float(a), float(b)) for a, b in zip(g.mean(), g.std().fillna(0.0),
                                                      strict=True)]
    for m in ("small-data", "proposed"):
        p = metrics[metrics["method"] == m]
        if len(p):
            xs.append(float(p["n_train_records"].iloc[0]))
            ys.append((float(p["success_vanilla"].mean()), float(p["success_vanilla"].std())))
    if xs:
        order = np.argsort(xs)
        x = np.array(xs)[order]
        y = np.array([ys[i][0] for i in order])
        e = np.array([ys[i][1] for i in order])
        st = method_style("proposed", cfg["methods"], PROPOSED)
        st["label"] = "proposed model, decomposed corpus"
        ax.errorbar(x, y, yerr=e, marker="o", capsize=3, **st)
        for m in ("small-data", "proposed"):   # name the two default points
            p = metrics[metrics["method"] == m]
            if len(p):
                ax.annotate(method_label(cfg, m), (float(p["n_train_records"].iloc[0]),
                                                   float(p["success_vanilla"].mean())),
                            xytext=(6, 8), textcoords="offset points", fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("training records (log scale)")
    ax.set_ylabel("vanilla full success")
    ax.set_ylim(0, 1.05)
    legend_outside(fig, below=True)
    return fig


def leak_by_length(cfg, metrics):
    fig, ax = subplots(figsize=(7.2, 3.6))
    for m in ("one-pass", "proposed"):
        part = metrics[metrics["method"] == m]
        if not len(part):
            continue
        st = method_style(m, cfg["methods"], PROPOSED)
        st["label"] = method_label(cfg, m)
        v = part[["direct_t1", "direct_t2", "direct_t3"]].to_numpy(float)
        ax.errorbar([1, 2, 3], v.mean(0), yerr=v.std(0), marker="o", capsize=3, **st)
    ax.set_xticks([1, 2, 3], ["shortest", "middle", "longest"])
    ax.set_xlabel("record-length tercile (sentences, vanilla test)")
    ax.set_ylabel("direct-leak rate (records)")
    legend_outside(fig, below=True)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"full_success": full_success(cfg, metrics),
            "scale_curve": scale_curve(cfg, metrics, curves),
            "leak_by_length": leak_by_length(cfg, metrics)}


def _cell(v):
    v = np.asarray(v, dtype=float)
    v = v[np.isfinite(v)]
    return f"{v.mean():.3f} ± {v.std():.3f}" if len(v) else "—"


def data_card(cfg, curves):
    import pandas as pd

    card = curves[curves["metric"].astype(str).str.startswith("card/")] if len(curves) \
        else curves
    vals = card.groupby("metric")["value"].mean() if len(card) else {}

    def get(k):
        return vals.get(f"card/{k}", np.nan) if len(card) else np.nan

    rows = []
    for split in ("train", "val", "vanilla", "hard"):
        rows.append({"item": f"{split}: records / tokens / mean sentences",
                     "value": f"{get(split + '/records'):.0f} / {get(split + '/tokens'):.0f} "
                              f"/ {get(split + '/mean_sentences'):.1f}"})
    rows.append({"item": "train: decomposed chunks (paragraphs, halved above "
                         f"{cfg['params']['max_chunk_tokens']} tokens)",
                 "value": f"{get('train/chunks'):.0f}"})
    rows.append({"item": "small-data: training records",
                 "value": f"{get('train/small_data_records'):.0f}"})
    rows.append({"item": "one-pass corpus: share of target occurrences missed",
                 "value": f"{get('train/onepass_missed_share'):.3f}"})
    rows.append({"item": "train: linked attributes removed with their parent (count)",
                 "value": f"{get('train/records_with_linked_removal'):.0f}"})
    for split in ("train", "vanilla", "hard"):
        per = ", ".join(f"{c} {get(f'{split}/mentions/{c}'):.0f}" for c in gen.CATEGORIES)
        rows.append({"item": f"{split}: subject mentions per category", "value": per})
        per = ", ".join(
            f"{c} {get(f'{split}/remove/{c}'):.0f}/{get(f'{split}/abstract/{c}'):.0f}/"
            f"{get(f'{split}/keep/{c}'):.0f}" for c in gen.CATEGORIES)
        rows.append({"item": f"{split}: records with the category as remove / abstract / "
                             "explicit keep target", "value": per})
        rows.append({"item": f"{split}: third-party / public entity spans",
                     "value": f"{get(f'{split}/third_party_spans'):.0f} / "
                              f"{get(f'{split}/public_spans'):.0f}"})
    rows += [
        {"item": "built in by construction",
         "value": f"{sum(len(t) for t in gen.TEMPLATES.values())} sentence templates over "
                  f"{len(gen.TEMPLATES)} document types, shared by every split; a vocabulary "
                  f"of {gen.V} tokens; one fixed value -> coarse lexicon (abstraction is a "
                  "lookup); the email spells the name and each street lies in one city (the "
                  "only links); distractors never share a value with the subject; whose "
                  "value it is shows only in context words next to it."},
        {"item": "what a model could exploit",
         "value": "the template context words (a window of a few tokens decides every tag), "
                  "value-list membership (a names list finds every name), the fixed "
                  "lexicon, and that instructions name categories rather than values; "
                  "test records reuse the training templates, so generalisation to unseen "
                  "phrasings is not measured."},
        {"item": "counts are means over seeds", "value": "each seed builds its own data"},
    ]
    return pd.DataFrame(rows)


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    cols = [("full success (vanilla)", "success_vanilla"), ("full success (hard)",
                                                            "success_hard"),
            ("direct leak", "direct_vanilla"), ("inference leak", "inference_vanilla"),
            ("proximity leak", "proximity_vanilla"), ("retention", "retention_vanilla"),
            ("keep-attribute retention", "keep_retention_vanilla"),
            ("success, spec rule (retention >= 0.9)", "success_spec_vanilla")]
    rows = []
    for m in _methods(cfg, metrics):
        part = metrics[metrics["method"] == m]
        row = {"method": method_label(cfg, m)}
        for name, col in cols:
            row[name] = _cell(part[col]) if col in part else "—"
        rows.append(row)
    return {"Table 1: main comparison (mean ± std over seeds; leaks and retention on the "
            "vanilla test)": pd.DataFrame(rows),
            "data_card": data_card(cfg, curves)}
