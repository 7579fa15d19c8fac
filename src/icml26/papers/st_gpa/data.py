"""The synthetic contextual SBM graphs, their label/test split and the feature-kNN graph."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from icml26.graph import contextual_sbm, knn_graph
from icml26.seeding import derive_seed


def make_graph(paper: str, n: int, seed: int, params: dict) -> dict[str, np.ndarray]:
    """One graph of n nodes for a seed: x, y, edges, labelled nodes, test nodes, kNN edges.

    The graph depends on (paper, n, seed) only: every method, threat and P of a seed sees the
    same graph and split (paired comparisons). Labels: ``labels_per_class`` per class; test:
    ``n_test`` drawn uniformly from the other nodes. kNN: symmetric k_s-nearest-neighbour graph
    by cosine similarity of the raw (clean) features.
    """
    rng = np.random.default_rng(derive_seed(paper, "graph", n, seed))
    C = int(params["n_classes"])
    x, y, edges = contextual_sbm(
        n, C, rng, subclusters=int(params["subclusters"]), mean_degree=float(params["mean_degree"]),
        homophily=float(params["homophily"]), d_informative=int(params["d_informative"]),
        d_noise=int(params["d_noise"]), feature_noise=float(params["feature_noise"]))
    split = np.random.default_rng(derive_seed(paper, "split", n, seed))
    per = int(params["labels_per_class"])
    labelled = np.sort(np.concatenate(
        [split.choice(np.flatnonzero(y == c), per, replace=False) for c in range(C)]))
    rest = np.setdiff1d(np.arange(n), labelled)
    test = np.sort(split.choice(rest, min(int(params["n_test"]), len(rest)), replace=False))
    knn = sp.triu(knn_graph(x, int(params["knn_k"]), metric="cosine"), k=1).tocoo()
    return {"x": x, "y": y.astype(np.int64), "edges": edges, "labelled": labelled,
            "test": test, "knn_edges": np.stack([knn.row, knn.col], axis=1).astype(np.int64)}


def graph_key(n: int, seed: int) -> str:
    return f"n{n}~s{seed}"
