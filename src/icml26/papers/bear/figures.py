"""Fig. 1 (hierarchical diagnosis), Fig. 2 (flip rate), Fig. 3 (agent gain) and the spec's
Table 1 (leaderboard), Table 2 (BEAR-Agent table) and the tool-call accounting."""

from __future__ import annotations

import numpy as np

from icml26.plotting import (
    BASELINE_COLORS,
    PROPOSED_COLOR,
    REFERENCE_COLOR,
    legend_outside,
    method_label,
    method_zorder,
    subplots,
)

from . import PROPOSED
from .claims import zoo

CATS = ("P", "B", "T", "S", "K", "L")
CAT_NAMES = {"P": "pointing", "B": "box", "T": "trajectory", "S": "spatial", "K": "planning",
             "L": "long-horizon"}


def _ms(metrics, method, setting, col):
    v = metrics[(metrics["method"] == method) & (metrics["setting"] == setting)][col]
    v = v.to_numpy(float)
    v = v[np.isfinite(v)]
    return (float(v.mean()), float(v.std())) if len(v) else (np.nan, 0.0)


def diagnosis(cfg, metrics):
    models = zoo(cfg, metrics)
    fig, (a1, a2) = subplots(1, 2, figsize=(10.0, 3.8))
    x = np.arange(len(models))
    for off, col, name, c in ((-0.2, "acc_given_perception_right", "perception right",
                               BASELINE_COLORS[2]),
                              (0.2, "acc_given_perception_wrong", "perception wrong",
                               BASELINE_COLORS[1])):
        ms = [_ms(metrics, "plain", z, col) for z in models]
        a1.bar(x + off, [m for m, _ in ms], 0.38, yerr=[s for _, s in ms], color=c,
               capsize=2, label=name)
    a1.axhline(0.25, color=REFERENCE_COLOR, ls=":", lw=1, label="chance")
    a1.set_xticks(x, models)
    a1.set_ylabel("reasoning accuracy (T, S, K, L)")
    a1.set_title("acc(reasoning | perception sub-questions)")
    cats = ("T", "S", "K", "L")
    width = 0.8 / max(len(models), 1)
    for j, z in enumerate(models):
        gaps = []
        for c in cats:
            o = metrics[(metrics["method"] == "oracle") & (metrics["setting"] == z)]
            p = metrics[(metrics["method"] == "plain") & (metrics["setting"] == z)]
            d = (o.set_index("seed")[f"acc_{c}"] - p.set_index("seed")[f"acc_{c}"]).to_numpy()
            gaps.append((np.nanmean(d), np.nanstd(d)) if len(d) else (np.nan, 0.0))
        a2.bar(np.arange(len(cats)) + (j - (len(models) - 1) / 2) * width,
               [g for g, _ in gaps], width, yerr=[s for _, s in gaps], capsize=2,
               color=BASELINE_COLORS[(j + 3) % len(BASELINE_COLORS)], label=f"{z}")
    a2.axhline(0.0, color="black", lw=0.8)
    a2.set_xticks(range(len(cats)), [CAT_NAMES[c] for c in cats])
    a2.set_ylabel("oracle perception - image model (acc.)")
    a2.set_title("perception gap per reasoning category")
    legend_outside(fig)
    return fig


def flip_rate(cfg, metrics):
    models = zoo(cfg, metrics)
    entries = [("plain", z) for z in models] + [(m, models[0]) for m in ("oracle", "prior")
                                                 if models and (metrics["method"] == m).any()]
    fig, ax = subplots(figsize=(8.4, 3.6))
    width = 0.8 / max(len(entries), 1)
    for j, (m, z) in enumerate(entries):
        ms = [_ms(metrics, m, z, f"flip_{c}") for c in CATS]
        label = f"{method_label(cfg, m)} {z}" if m == "plain" else \
            f"{method_label(cfg, m)} ({z} budget)"
        ax.bar(np.arange(len(CATS)) + (j - (len(entries) - 1) / 2) * width,
               [a for a, _ in ms], width, yerr=[s for _, s in ms], capsize=2,
               color=BASELINE_COLORS[j % len(BASELINE_COLORS)], label=label)
    ax.set_xticks(range(len(CATS)), [CAT_NAMES[c] for c in CATS])
    ax.set_ylabel("answer flips under 1-px translation")
    legend_outside(ax)
    return fig


def agent_gain(cfg, metrics):
    models = zoo(cfg, metrics)
    fig, axes = subplots(1, max(len(models), 1), figsize=(4.2 * max(len(models), 1) + 1.5, 3.6),
                         squeeze=False)
    cols = [f"score_{c}" for c in CATS] + ["overall"]
    names = [CAT_NAMES[c] for c in CATS] + ["overall"]
    styles = (("plain", BASELINE_COLORS[0], None), ("agent", PROPOSED_COLOR, None),
              ("agent-all", PROPOSED_COLOR, "//"))
    for ax, z in zip(axes[0], models, strict=False):
        for j, (m, color, hatch) in enumerate(styles):
            if not ((metrics["method"] == m) & (metrics["setting"] == z)).any():
                continue
            ms = [_ms(metrics, m, z, c) for c in cols]
            ax.bar(np.arange(len(cols)) + (j - 1) * 0.27, [a for a, _ in ms], 0.27,
                   yerr=[s for _, s in ms], capsize=2, color=color, hatch=hatch,
                   alpha=1.0 if hatch is None else 0.6, edgecolor="black", linewidth=0.4,
                   label=method_label(cfg, m), zorder=method_zorder(m, PROPOSED))
        ch = _ms(metrics, "plain", z, "chance_overall")[0]
        ax.axhline(ch, color=REFERENCE_COLOR, ls=":", lw=1, label="chance (overall)")
        ax.set_xticks(range(len(cols)), names, rotation=35, ha="right")
        ax.set_title(f"zoo model {z}")
        ax.set_ylabel("score")
    legend_outside(fig)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"diagnosis": diagnosis(cfg, metrics), "flip_rate": flip_rate(cfg, metrics),
            "agent_gain": agent_gain(cfg, metrics)}


def _fmt(metrics, m, z, col):
    v = metrics[(metrics["method"] == m) & (metrics["setting"] == z)][col].to_numpy(float)
    return f"{v.mean():.3f} ± {v.std():.3f}" if len(v) else "—"


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    from icml26.stats import spearman

    models = zoo(cfg, metrics)
    t1 = []
    for z in models:
        for m in cfg["methods"]:
            if not ((metrics["method"] == m) & (metrics["setting"] == z)).any():
                continue
            row = {"model": z, "variant": method_label(cfg, m)}
            row.update({CAT_NAMES[c]: _fmt(metrics, m, z, f"score_{c}") for c in CATS})
            row["overall"] = _fmt(metrics, m, z, "overall")
            row["overall accuracy"] = _fmt(metrics, m, z, "overall_acc")
            t1.append(row)
    if models:
        row = {"model": "—", "variant": "chance"}
        row.update({CAT_NAMES[c]: "0.250" if c != "B" else "" for c in CATS})
        row["box"] = _fmt(metrics, "plain", models[0], "chance_overall").split(" ")[0] \
            + " (overall)"
        row["overall"] = _fmt(metrics, "plain", models[0], "chance_overall")
        row["overall accuracy"] = "0.250"
        t1.append(row)
    t2 = []
    for z in models:
        for agent in ("agent", "agent-all"):
            a = metrics[(metrics["method"] == agent) & (metrics["setting"] == z)].set_index("seed")
            p = metrics[(metrics["method"] == "plain")
                        & (metrics["setting"] == z)].set_index("seed")
            if not len(a):
                continue
            row = {"model": z, "agent": method_label(cfg, agent)}
            for c in [f"score_{c}" for c in CATS] + ["overall"]:
                name = CAT_NAMES.get(c[-1], "overall") if c != "overall" else "overall"
                row[name] = (f"{p[c].mean():.3f} -> {a[c].mean():.3f} "
                             f"({(a[c] - p[c]).mean() / p[c].mean():+.1%})")
            t2.append(row)
    t3 = []
    for z in models:
        for m in cfg["methods"]:
            part = metrics[(metrics["method"] == m) & (metrics["setting"] == z)]
            if not len(part):
                continue
            row = {"model": z, "variant": method_label(cfg, m)}
            row.update({CAT_NAMES[c]: f"{part[f'tool_calls_{c}'].mean():.2f}" for c in CATS})
            row["calls / item (incl. answer)"] = f"{part['calls'].mean():.2f}"
            row["tokens / item"] = f"{part['tokens'].mean():.1f}"
            row["unanswered"] = f"{part['unanswered'].mean():.3f}"
            t3.append(row)
    t5 = skill_table(cfg, metrics, curves, models)
    plain = metrics[metrics["method"] == "plain"]
    rho = spearman(plain["perception_score"].to_numpy(float),
                   plain["reasoning_acc"].to_numpy(float)) if len(plain) > 2 else np.nan
    t4 = pd.DataFrame([{"units (zoo model x seed)": len(plain),
                        "Spearman(perception score, reasoning accuracy)": f"{rho:.3f}"}])
    return {"Table 1: per-category score (P: hit in mask, B: IoU with mask, others: accuracy), "
            "mean ± s.d. over seeds": pd.DataFrame(t1),
            "Table 2: plain -> agent per category and overall (relative improvement)":
                pd.DataFrame(t2),
            "Table 3: tool calls per item by category (shared agent loop, budget max_turns)":
                pd.DataFrame(t3),
            "Across-model correlation of perception and reasoning (plain zoo models)": t4,
            "Per-skill accuracy, validation (best epoch) / test, mean over seeds": t5}


def skill_table(cfg, metrics, curves, models):
    """Per (zoo model, variant): each skill's validation accuracy at the best epoch (curves
    ``val_acc_<skill>``) and test accuracy (answer key), mean over seeds, plus the best epoch."""
    import pandas as pd

    from icml26.agents.worlds.scenes import SKILLS

    rows = []
    for z in models:
        for m in cfg["methods"]:
            part = metrics[(metrics["method"] == m) & (metrics["setting"] == z)]
            if not len(part):
                continue
            cv = curves[(curves["method"] == m) & (curves["setting"] == z)] \
                if curves is not None and len(curves) else None
            row = {"model": z, "variant": method_label(cfg, m)}
            for sk in SKILLS:
                te = part[f"acc_{sk}"].to_numpy(float).mean()
                va = np.nan
                if cv is not None:
                    v = cv.loc[cv["metric"] == f"val_acc_{sk}", "value"].to_numpy(float)
                    va = float(np.nanmean(v)) if len(v) else np.nan
                row[sk] = f"{va:.2f} / {te:.2f}"
            if cv is not None:
                be = cv.loc[cv["metric"] == "best_epoch", "value"].to_numpy(float)
                row["best epoch"] = f"{be.mean():.1f}" if len(be) else "—"
            rows.append(row)
    return pd.DataFrame(rows)
