"""Graph partition aggregation (GPA) and ST-GPA, with the Deep Partition Aggregation certificate.

Read top to bottom:
1. ``partition_items``: which partition owns each poisonable item. Label threat: a labelled
   node goes to hash(node) mod P. Structure threat: an undirected edge {u, v} goes to
   hash(min, max) mod P, a keyed hash of the pair, so an edge an attacker inserts also lands in
   exactly one partition.
2. ``partition_data``: partition p's view. Label threat: its own labelled nodes, all edges.
   Structure threat: all labelled nodes, its own edges.
3. ``base_predictions``: the P base models, each trained on its partition's view plus clean
   features, optionally strengthened (ST-GPA):
   - synthetic edges: the symmetric feature-kNN graph (k_s = 5, cosine, computed once from
     the clean features) is added to each partition's edge set;
   - self-training: R rounds; each round the partition's current model predicts every node,
     and for each class the tau unlabelled nodes with the largest margin (top score minus
     second) predicted as that class join the partition's training set with their predicted
     label; the model is refitted on true + pseudo labels.
   Everything a partition adds is a function of its own labels/edges and the clean features
   only, so the certificate stays valid.
4. ``votes`` and icml26.graph.dpa_certificate: n_c(v) = #{p : f_p(v) = c}, the majority with
   ties to the smaller class, and r(v) = floor((n_yhat - max_{c != yhat}(n_c + 1[c < yhat]))/2).

Methods: GPA (no pseudo-labels, no synthetic edges), ST-GPA (pseudo-labels everywhere,
synthetic edges in the structure threat only, as the spec fixes it), ST-only (pseudo-labels
only), edges-only (synthetic edges only, in both threats).
"""

from __future__ import annotations

import numpy as np

from icml26.graph import hash_partition

from .models import Propagation, base_model

METHODS = ("gpa", "st-gpa", "st-only", "edges-only")
THREATS = ("label", "structure")
_MASK64 = (1 << 64) - 1


def method_flags(method: str, threat: str) -> tuple[bool, bool]:
    """(pseudo-labels, synthetic edges) of a method under a threat model."""
    if method not in METHODS:
        raise ValueError(f"method {method!r} is unknown; allowed: {', '.join(METHODS)}")
    if threat not in THREATS:
        raise ValueError(f"threat {threat!r} is unknown; allowed: {', '.join(THREATS)}")
    pseudo = method in ("st-gpa", "st-only")
    # ST-GPA adds kNN edges only where the partition's structure is sparse (structure threat):
    # with the full true graph available (label threat) the kNN edges hurt (spec, pilot)
    synth = method == "edges-only" or (method == "st-gpa" and threat == "structure")
    return pseudo, synth


# ---------------------------------------------------------------------------------------------
# 1. hashing items to partitions
# ---------------------------------------------------------------------------------------------
def _splitmix64(z: np.ndarray) -> np.ndarray:
    z = z.astype(np.uint64)
    with np.errstate(over="ignore"):
        z = z + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def pair_partition(edges: np.ndarray, n_parts: int, key: int) -> np.ndarray:
    """hash(min(u, v), max(u, v)) mod P with a seeded (keyed) splitmix64 hash of the pair.

    A function of the pair alone: inserting or deleting an edge touches one partition only.
    """
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    lo, hi = np.minimum(e[:, 0], e[:, 1]), np.maximum(e[:, 0], e[:, 1])
    pair = (lo.astype(np.uint64) << np.uint64(32)) | hi.astype(np.uint64)
    h = _splitmix64(pair ^ np.uint64(key & _MASK64))
    return (h % np.uint64(n_parts)).astype(np.int64)


def node_partition(n: int, n_parts: int, key: int) -> np.ndarray:
    """Partition of every node id: a seeded uniform assignment standing in for hash mod P."""
    return hash_partition(n, n_parts, np.random.default_rng(key))


# ---------------------------------------------------------------------------------------------
# 2.-3. the P base models
# ---------------------------------------------------------------------------------------------
def self_train(model, mask: np.ndarray, targets: np.ndarray, n_classes: int, rounds: int,
               tau: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fit, then ``rounds`` times add tau most confident pseudo-labels per class and refit.

    mask/targets: (P, n) true training nodes of each partition. Pseudo-labels accumulate
    over rounds (INFERRED: the spec says "add them ... retrain on true + pseudo labels").
    Returns the final scores (P, n, C), the final training mask and targets.
    """
    mask, targets = mask.copy(), targets.copy()
    scores = model.fit_scores(mask, targets, n_classes)
    P, n = mask.shape
    rows = np.arange(P)[:, None]
    for _ in range(rounds):
        pred = scores.argmax(axis=2)
        top2 = np.sort(scores, axis=2)[:, :, -2:]
        margin = top2[:, :, 1] - top2[:, :, 0]
        candidate = ~mask                       # unlabelled for this partition (true or pseudo)
        for c in range(n_classes):
            key = np.where(candidate & (pred == c), margin, -np.inf)
            order = np.argsort(-key, axis=1, kind="stable")[:, :tau]       # largest margins
            chosen = np.take_along_axis(key, order, axis=1) > -np.inf
            idx_p, idx_n = np.broadcast_to(rows, order.shape)[chosen], order[chosen]
            mask[idx_p, idx_n] = True
            targets[idx_p, idx_n] = c
        scores = model.fit_scores(mask, targets, n_classes)
    return scores, mask, targets


def partition_views(threat: str, n: int, edges: np.ndarray, labelled: np.ndarray,
                    y: np.ndarray, part: np.ndarray, n_parts: int):
    """Edge lists (one shared, or one per partition) and the (P, n) training mask/targets.

    ``part``: partition of each labelled node (label threat, aligned with ``labelled``) or of
    each edge (structure threat, aligned with ``edges``).
    """
    mask = np.zeros((n_parts, n), dtype=bool)
    targets = np.full((n_parts, n), -1, dtype=np.int64)
    if threat == "label":
        mask[part, labelled] = True
        targets[part, labelled] = y[labelled]
        return [edges], mask, targets
    mask[:, labelled] = True
    targets[:, labelled] = y[labelled]
    return [edges[part == p] for p in range(n_parts)], mask, targets


def base_predictions(method: str, threat: str, x: np.ndarray, edges: np.ndarray,
                     knn_edges: np.ndarray, labelled: np.ndarray, y: np.ndarray,
                     part: np.ndarray, n_parts: int, n_classes: int, params: dict,
                     init_seed: int = 0) -> dict:
    """Predictions (P, n) of the P base models of one method, and diagnostics.

    Only ``y[labelled]`` is read. Returns {"pred": (P, n), "pseudo_mask": (P, n) pseudo-
    labelled nodes, "pseudo_targets": (P, n)}.
    """
    pseudo, synth = method_flags(method, threat)
    n = len(x)
    edge_lists, mask, targets = partition_views(threat, n, edges, labelled, y, part, n_parts)
    if synth:
        edge_lists = [np.concatenate([e.reshape(-1, 2), knn_edges]) for e in edge_lists]
    prop = Propagation.from_edges(edge_lists, n)
    model = base_model(params.get("base", "sgc"), prop, x, params, init_seed)
    if pseudo:
        scores, final_mask, final_targets = self_train(
            model, mask, targets, n_classes, int(params["st_rounds"]), int(params["st_tau"]))
    else:
        scores = model.fit_scores(mask, targets, n_classes)
        final_mask, final_targets = mask, targets
    return {"pred": scores.argmax(axis=2), "pseudo_mask": final_mask & ~mask,
            "pseudo_targets": final_targets}


def reference_predictions(x: np.ndarray, edges: np.ndarray, labelled: np.ndarray,
                          y: np.ndarray, n_classes: int, params: dict,
                          init_seed: int = 0) -> np.ndarray:
    """Non-certified reference: one base model on all labels and all edges (P = 1)."""
    out = base_predictions("gpa", "label", x, edges, np.zeros((0, 2), np.int64), labelled, y,
                           np.zeros(len(labelled), np.int64), 1, n_classes, params, init_seed)
    return out["pred"][0]


# ---------------------------------------------------------------------------------------------
# 4. aggregation
# ---------------------------------------------------------------------------------------------
def votes(pred: np.ndarray, nodes: np.ndarray, n_classes: int) -> np.ndarray:
    """Vote counts (len(nodes), C): n_c(v) = #{p : f_p(v) = c}."""
    p = pred[:, nodes]
    return (p[..., None] == np.arange(n_classes)).sum(axis=0).astype(np.int64)
