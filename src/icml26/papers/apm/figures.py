"""Figures of the spec (sensitivity curves, HM vs IP at s = 0.3) plus the mean curves of every
axis; tables: the spec's s = 0.3 table, the data card, the training loss and the premises."""

from __future__ import annotations

import numpy as np

from icml26.plotting import (
    band_style,
    legend_outside,
    method_label,
    method_style,
    subplots,
)

from . import PROPOSED
from .claims import hm_ratio, premises
from .experiment import MEDIATORS
from .noise import ACCESS, CLASSES
from .world import ACTIONS, N_VALUES, SLOT_TYPES


def _curve(curves, method, metric):
    """(severities, mean over seeds, std over seeds) of one curve metric."""
    cur = curves[(curves["method"] == method) & (curves["metric"] == metric)]
    if not len(cur):
        return np.zeros(0), np.zeros(0), np.zeros(0)
    piv = cur.pivot_table(index="seed", columns="step", values="value", aggfunc="mean")
    return (np.array(piv.columns, dtype=float) / 100, piv.mean(axis=0).to_numpy(),
            piv.std(axis=0, ddof=0).to_numpy())


def _access_curve(curves, method, axis):
    """Per-seed mean over the four accessibility classes, then mean and std over seeds."""
    cur = curves[(curves["method"] == method)
                 & curves["metric"].isin([f"{axis}/{c}" for c in ACCESS])]
    if not len(cur):
        return np.zeros(0), np.zeros(0), np.zeros(0)
    piv = cur.pivot_table(index="seed", columns="step", values="value", aggfunc="mean")
    return (np.array(piv.columns, dtype=float) / 100, piv.mean(axis=0).to_numpy(),
            piv.std(axis=0, ddof=0).to_numpy())


def _style(cfg, m):
    st = method_style(m, list(cfg["methods"]), PROPOSED)
    st["label"] = method_label(cfg, m)
    return st


def sensitivity_curves(cfg, curves):
    fig, axes = subplots(1, len(CLASSES), figsize=(13.0, 3.4), sharey=True)
    for ax, cls in zip(axes, CLASSES, strict=True):
        for m in cfg["methods"]:
            x, mu, sd = _curve(curves, m, f"ip/{cls}")
            if not x.size:
                continue
            st = _style(cfg, m)
            ax.plot(x, mu, marker="o", ms=3, **st)
            ax.fill_between(x, mu - sd, mu + sd, **band_style(st))
        ax.set_title(cls + (" (control)" if cls == "generic" else ""))
        ax.set_xlabel("severity s")
    axes[0].set_ylabel("intent preservation (IP)")
    axes[0].set_ylim(0, 1.02)
    legend_outside(fig)
    return fig


MARKERS = dict(zip(CLASSES, ("o", "s", "^", "D", "x"), strict=True))


def hm_vs_ip(cfg, metrics):
    fig, ax = subplots(figsize=(7.6, 4.2))
    for m in cfg["methods"]:
        part = metrics[metrics["method"] == m]
        if not len(part):
            continue
        st = _style(cfg, m)
        for cls in CLASSES:
            ip, hm, cb = (float(part[f"{a}_{cls}"].mean()) for a in ("ip", "hm", "cb"))
            ax.scatter(ip, hm, s=20 + 180 * cb, marker=MARKERS[cls], color=st["color"],
                       zorder=st["zorder"], alpha=0.85)
    ax.set_xlabel("intent preservation (IP) at s = 0.3")
    ax.set_ylabel("hallucinated mediation (HM) at s = 0.3")
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=_style(cfg, m)["color"], marker="o", ls="",
                      label=method_label(cfg, m)) for m in cfg["methods"]]
    handles += [Line2D([], [], color="#555555", marker=MARKERS[c], ls="", label=c)
                for c in CLASSES]
    handles += [Line2D([], [], color="#555555", marker="o", ls="", ms=np.sqrt(20 + 180 * b),
                       label=f"CB {b:g}") for b in (0.0, 0.5, 1.0)]
    legend_outside(ax, handles, [h.get_label() for h in handles])
    return fig


def burden_hallucination(cfg, curves):
    fig, axes = subplots(1, 3, figsize=(12.0, 3.4))
    for ax, axis, title in ((axes[0], "ip", "IP (solid) and task accuracy (dashed)"),
                            (axes[1], "hm", "hallucinated mediation (HM)"),
                            (axes[2], "cb", "cognitive burden (CB)")):
        for m in cfg["methods"]:
            x, mu, sd = _access_curve(curves, m, axis)
            if not x.size:
                continue
            st = _style(cfg, m)
            ax.plot(x, mu, **st)
            ax.fill_between(x, mu - sd, mu + sd, **band_style(st))
            if axis == "ip":
                xa, ma, _ = _access_curve(curves, m, "acc")
                ax.plot(xa, ma, ls="--", color=st["color"], lw=1.0, zorder=st["zorder"])
        ax.set_title(title)
        ax.set_xlabel("severity s (mean over accessibility classes)")
    legend_outside(fig)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"sensitivity_curves": sensitivity_curves(cfg, curves),
            "hm_vs_ip": hm_vs_ip(cfg, metrics),
            "burden_hallucination": burden_hallucination(cfg, curves)}


# tables -------------------------------------------------------------------------------------
TABLE_S03 = ("Severity 0.3, per mediator (seed means): task accuracy / IP / CB / HM per noise "
             "class, max/min HM across the accessibility classes, mean decision entropy over "
             "all (class, severity) cells")


def table_s03(cfg, metrics):
    import pandas as pd

    rows = []
    for m in cfg["methods"]:
        part = metrics[metrics["method"] == m]
        if not len(part):
            continue
        row = {"mediator": method_label(cfg, m),
               "thresholds": "/".join(f"{t:g}" for t in MEDIATORS[m][1])}
        for cls in CLASSES:
            row[cls] = " / ".join(f"{part[f'{a}_{cls}'].mean():.3f}"
                                  for a in ("acc", "ip", "cb", "hm"))
        row["HM max/min"] = hm_ratio([part[f"hm_{c}"].mean() for c in ACCESS])
        row["entropy"] = float(part["entropy_mean"].mean())
        rows.append(row)
    return pd.DataFrame(rows)


def _card(curves):
    card = curves[curves["metric"].str.startswith("card/")]
    return card.groupby(["seed", "metric"])["value"].first().groupby("metric")


def data_card(cfg, curves):
    """The benchmark's data card: sizes per split, items per class, what is built in by
    construction and what a model could exploit (counts from the run: mean over seeds)."""
    import pandas as pd

    g = _card(curves)
    mean, lo, hi = g.mean(), g.min(), g.max()
    p = cfg["params"]

    def val(name):
        k = f"card/{name}"
        if k not in mean:
            return "-"
        def fmt(x):
            return f"{int(x)}" if float(x).is_integer() else f"{x:.3f}"
        if lo[k] == hi[k]:
            return fmt(mean[k])
        return f"{fmt(mean[k])} (seeds {fmt(lo[k])}-{fmt(hi[k])})"

    rows = [
        ("size", "languages per seed (synthetic)", val("languages")),
        ("size", "train: clean utterances per language", val("train_clean_per_language")),
        ("size", "train rows, M1 (clean)", val("train_rows/clean")),
        ("size", f"train rows, M2 (clean + {p['n_aug']} generic copies, s ~ U[0, "
                 f"{p['generic_aug_max']}])", val("train_rows/generic")),
        ("size", f"train rows, M3 (clean + {p['n_aug']} accessibility copies, s ~ U[0, "
                 f"{p['access_aug_max']}])", val("train_rows/access")),
        ("size", "test: intents per language", val("test_intents_per_language")),
        ("size", "test conditions (clean + 5 classes x severities > 0)",
         val("test_conditions")),
        ("size", "test utterances per seed", val("test_utterances")),
        ("size", "validation split", "none: nothing is selected (thresholds, optimiser and "
                                     "steps are fixed in the config)"),
    ]
    for a in ACTIONS:
        rows.append(("items", f"action {a}: train / test utterances (all languages)",
                     f"{val(f'train_action/{a}')} / {val(f'test_action/{a}')}"))
    for t in SLOT_TYPES:
        rows.append(("items", f"slot type {t}: values (seen in train)",
                     f"{N_VALUES[t]} ({val(f'values_seen_in_train/{t}')})"))
    lex = [k for k in mean.index if k.startswith("card/lexicon_size/")]
    rows.append(("items", "lexicon words per language (verbs, function words, values)",
                 ", ".join(f"{k.rsplit('/', 1)[1]} {val(k[5:])}" for k in lex)))
    rows += [
        ("built in", "noise", "hand-written simulators; severity 0 is the clean utterance for "
                              "every class; each test intent keeps one template across "
                              "conditions (paired)"),
        ("built in", "speech errors", "replace a word by its nearest lexicon word: real words "
                                      "by construction (real-word rate at s = 0.3: "
                                      + ", ".join(f"{c} {val(f'real_word_rate/{c}')}"
                                                  for c in CLASSES) + ")"),
        ("built in", "M4, M5", "M2's predictor with other thresholds: identical task accuracy, "
                               "IP/HM/CB ordering set by the thresholds (claim 3)"),
        ("built in", "coverage", "every slot value and (action, template) pair occurs in "
                                 "each language's training set"),
        ("exploitable", "one word per role", "each action has one verb and each slot type one "
                                             "case marker per language, and values are unique "
                                             "words: clean utterances are linearly separable "
                                             "from word unigrams alone"),
        ("exploitable", "names", "contact names are shared real-world names across languages "
                                 "(no language-specific spelling to learn)"),
        ("exploitable", "cognitive noise", "deletes function words with prob min(1, 2s) but "
                                           "content words (verb, values: the intent) with "
                                           "prob s/3 only, so most of the intent survives"),
    ]
    return pd.DataFrame(rows, columns=["part", "item", "value"])


def loss_table(cfg, curves):
    import pandas as pd

    loss = curves[curves["metric"] == "train_loss"]
    rows = []
    for kind in dict.fromkeys(MEDIATORS[m][0] for m in cfg["methods"]):
        m = next(mm for mm in cfg["methods"] if MEDIATORS[mm][0] == kind)
        part = loss[loss["method"] == m]
        if not len(part):
            continue
        piv = part.pivot_table(index="step", columns="seed", values="value")
        rows.append({"predictor": kind, "used by": ", ".join(
            mm for mm in cfg["methods"] if MEDIATORS[mm][0] == kind),
            **{f"step {int(s)}": float(piv.loc[s].mean()) for s in piv.index}})
    return pd.DataFrame(rows)


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    return {TABLE_S03: table_s03(cfg, metrics),
            "data_card": data_card(cfg, curves),
            "Training loss of the intent predictors (sum of the six heads' mean cross-entropy, "
            "mean over each block of steps; mean over seeds). Steps, step size and penalty are "
            "fixed in the config: nothing is selected": loss_table(cfg, curves),
            "The spec's premises, checked against this run": pd.DataFrame(
                premises(cfg, metrics, curves),
                columns=["premise (spec)", "measured", "reading", "held"])}
