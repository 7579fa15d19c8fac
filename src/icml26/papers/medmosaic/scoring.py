"""Metrics of one system's answers on a test split (spec 39, "Metrics")."""

from __future__ import annotations

import numpy as np

from .audio import ARTIFACTS
from .bench import TYPES


def token_f1(pred: str, gold: str) -> float:
    """SQuAD-style token F1 after lower-casing."""
    p, g = pred.lower().split(), gold.lower().split()
    common = sum(min(p.count(w), g.count(w)) for w in set(p))
    if not p or not g or common == 0:
        return 0.0
    prec, rec = common / len(p), common / len(g)
    return 2 * prec * rec / (prec + rec)


def score(split, pred) -> dict[str, float]:
    """Accuracy per type (T4: each turn an item; T5: exact match after lower-casing),
    weighted accuracy (all items pooled), T4 per turn and chain, T3 by context, T5 by
    artifact and token F1, and the per-type spread (max - min over T1..T5)."""
    pred = np.char.lower(np.asarray(pred).astype(str))
    gold = np.char.lower(split["item_answer"].astype(str))
    right = pred == gold
    types = split["item_type"].astype(str)
    out = {"weighted_acc": float(right.mean())}
    for t in TYPES:
        out[f"acc_{t}"] = float(right[types == t].mean())
    t4 = types == "T4"
    turn = split["item_turn"]
    for k in range(3):
        out[f"acc_T4_turn{k}"] = float(right[t4 & (turn == k)].mean())
    chains = split["item_chain"][t4]
    ok4 = right[t4]
    out["chain_T4"] = float(np.mean([ok4[chains == c].all() for c in np.unique(chains)]))
    out["turn_mean_T4"] = float(np.mean([out[f"acc_T4_turn{k}"] for k in range(3)]))
    out["turn_min_T4"] = float(np.min([out[f"acc_T4_turn{k}"] for k in range(3)]))
    ctx = split["item_context"].astype(str)
    for c in ("short", "long"):
        out[f"acc_T3_{c}"] = float(right[(types == "T3") & (ctx == c)].mean())
    art = split["item_artifact"].astype(str)
    for a in ARTIFACTS:
        out[f"em_T5_{a}"] = float(right[(types == "T5") & (art == a)].mean())
    t5 = np.flatnonzero(types == "T5")
    out["f1_T5"] = float(np.mean([token_f1(pred[i], gold[i]) for i in t5]))
    accs = [out[f"acc_{t}"] for t in TYPES]
    out["type_range"] = float(np.max(accs) - np.min(accs))
    return out
