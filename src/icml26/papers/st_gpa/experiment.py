"""Stages of the st-gpa paper: prepare (graphs), train (P base models + votes), evaluate.

A setting is one (threat, P) cell (and, in the full profile, a graph size n). A run is
(method, setting, seed): it trains the P base models of its method on the seed's graph with
the setting's partition hash and writes the vote-count matrix over the test nodes (test x C)
plus the P = 1 reference prediction. The graph and split depend on (n, seed) only, the
partition hash on (setting, seed) only: every method of a cell sees the same data and the
same partitions (paired comparisons).
"""

from __future__ import annotations

import numpy as np

from icml26.graph import certified_accuracy, dpa_certificate
from icml26.seeding import derive_seed

from .data import graph_key, make_graph
from .stgpa import (
    base_predictions,
    node_partition,
    pair_partition,
    reference_predictions,
    votes,
)

GRAPH_FIELDS = ("x", "y", "edges", "labelled", "test", "knn_edges")


def setting_params(cfg: dict, setting: str) -> dict:
    """The paper's params overridden by the setting's own (threat, P, r_head, n)."""
    return {**cfg["params"], **(cfg["settings"][setting] or {})}


def cell(cfg: dict, setting: str) -> tuple[str, int]:
    p = setting_params(cfg, setting)
    return str(p["threat"]), int(p["P"])


def graphs_needed(cfg: dict) -> list[tuple[int, int]]:
    sizes = sorted({int(setting_params(cfg, s)["n"]) for s in cfg["settings"]})
    return [(n, seed) for n in sizes for seed in cfg["seeds"]]


def load_graph(data: dict, n: int, seed: int) -> dict:
    k = graph_key(n, seed)
    return {f: data[f"{k}/{f}"] for f in GRAPH_FIELDS}


# ---------------------------------------------------------------------------------------------
def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Every graph of the grid (one per (n, seed)) with its split and feature-kNN edges."""
    out: dict[str, np.ndarray] = {"settings": np.array(list(cfg["settings"]))}
    for n, seed in graphs_needed(cfg):
        g = make_graph(cfg["paper"], n, seed, cfg["params"])
        for f in GRAPH_FIELDS:
            out[f"{graph_key(n, seed)}/{f}"] = g[f]
    return out


def run_votes(cfg: dict, method: str, setting: str, seed: int, g: dict) -> dict:
    """Vote counts over the test nodes and diagnostics for one run."""
    p = setting_params(cfg, setting)
    threat, P = cell(cfg, setting)
    C = int(p["n_classes"])
    key = derive_seed(cfg["paper"], setting, seed, "partition")
    if threat == "label":
        part = node_partition(len(g["x"]), P, key)[g["labelled"]]
    else:
        part = pair_partition(g["edges"], P, key)
    init = derive_seed(cfg["paper"], setting, seed, "init") % (2**63)
    out = base_predictions(method, threat, g["x"], g["edges"], g["knn_edges"], g["labelled"],
                           g["y"], part, P, C, p, init)
    pred, test, y = out["pred"], g["test"], g["y"]
    pm = out["pseudo_mask"]
    pseudo_acc = (float(np.mean(out["pseudo_targets"][pm] == np.broadcast_to(y, pm.shape)[pm]))
                  if pm.any() else np.nan)
    return {"votes": votes(pred, test, C), "base_acc": (pred[:, test] == y[test]).mean(axis=1),
            "pseudo_acc": np.array([pseudo_acc]), "pseudo_count": np.array([pm.sum() / P])}


def train(cfg: dict, data: dict, runs: list) -> tuple[dict[str, np.ndarray], list[dict]]:
    state: dict[str, np.ndarray] = {}
    curves: list[dict] = []
    refs: dict[tuple[int, int], np.ndarray] = {}
    for run in sorted(runs, key=lambda r: (r.seed, r.setting, r.method)):
        p = setting_params(cfg, run.setting)
        n = int(p["n"])
        g = load_graph(data, n, run.seed)
        if (n, run.seed) not in refs:
            init = derive_seed(cfg["paper"], "reference", n, run.seed) % (2**63)
            refs[(n, run.seed)] = reference_predictions(
                g["x"], g["edges"], g["labelled"], g["y"], int(p["n_classes"]), p, init)
        out = run_votes(cfg, run.method, run.setting, run.seed, g)
        for name, arr in out.items():
            state[f"{run.key}/{name}"] = arr
        state[f"{run.key}/ref_pred"] = refs[(n, run.seed)][g["test"]]
        state[f"{run.key}/y_test"] = g["y"][g["test"]]
        P = cell(cfg, run.setting)[1]
        pred, radius = dpa_certificate(out["votes"])
        acc = certified_accuracy(pred, radius, g["y"][g["test"]], P // 2)
        for r, a in enumerate(acc):
            curves.append({**run.as_dict(), "step": r, "metric": "cert_acc", "value": float(a)})
    return state, curves


def evaluate(cfg: dict, data: dict, runs: list, state: dict, curves) -> list[dict]:
    """Per run: clean accuracy, certified accuracy at the headline radius, AUC, mean radius.

    clean_acc: correct aggregated prediction (radius >= 0); cert_acc_head: correct with
    r(v) >= r_head of the setting; cert_auc: mean certified accuracy over r = 0..floor(P/2);
    mean_radius: mean r(v) over correctly predicted test nodes; ref_clean_acc: the P = 1
    reference; base_acc: mean test accuracy of a single base model; pseudo_acc: accuracy of
    the pseudo-labels (ST methods), pseudo_count: pseudo-labels per partition.
    """
    out = []
    for run in runs:
        p = setting_params(cfg, run.setting)
        P = cell(cfg, run.setting)[1]
        y = state[f"{run.key}/y_test"]
        pred, radius = dpa_certificate(state[f"{run.key}/votes"])
        acc = certified_accuracy(pred, radius, y, P // 2)
        ok = pred == y
        r_head = int(p["r_head"])
        out.append({
            "P": float(P),
            "clean_acc": float(acc[0]),
            "cert_acc_head": float(np.mean(ok & (radius >= r_head))),
            "r_head": float(r_head),
            "cert_auc": float(acc.mean()),
            "mean_radius": float(radius[ok].mean()) if ok.any() else np.nan,
            "ref_clean_acc": float(np.mean(state[f"{run.key}/ref_pred"] == y)),
            "base_acc": float(state[f"{run.key}/base_acc"].mean()),
            "pseudo_acc": float(state[f"{run.key}/pseudo_acc"][0]),
            "pseudo_count": float(state[f"{run.key}/pseudo_count"][0]),
        })
    return out
