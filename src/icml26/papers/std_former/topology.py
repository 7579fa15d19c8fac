"""0-D persistent homology of a point cloud through its minimum spanning tree (numpy + scipy).

The B - 1 edge lengths of the Euclidean MST of B points are exactly the death times of the
0-D classes of the Vietoris-Rips filtration (the merge heights of single linkage), so the
Sparse Topological Loss needs only the MST's edges (scipy.sparse.csgraph, on detached
distances); the loss then differentiates the lengths of those edges.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse.csgraph import minimum_spanning_tree
from scipy.spatial.distance import cdist


def mst_edges(D: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Edges (i, j) and lengths of the MST of a dense symmetric distance matrix (B, B).

    scipy reads a zero (or near-zero) entry of a dense matrix as "no edge", which would drop
    coincident points. Adding one constant c > 0 to every off-diagonal weight changes every
    spanning tree's total by (B - 1) c, so the minimum tree is the same; the tree is found on
    D + c and the true lengths are returned. Edges are in scipy's order, i < j."""
    D = np.asarray(D, dtype=float)
    B = len(D)
    W = D + (1.0 + float(np.max(D, initial=0.0)))
    np.fill_diagonal(W, 0.0)
    tree = minimum_spanning_tree(W).tocoo()
    i, j = np.minimum(tree.row, tree.col), np.maximum(tree.row, tree.col)
    if len(i) != B - 1:
        raise ValueError(f"MST of {B} points has {len(i)} edges (non-finite distances?)")
    return i.astype(np.int64), j.astype(np.int64), D[i, j]


def persistence_deaths(X: np.ndarray) -> np.ndarray:
    """0-D persistence death times of the Rips filtration of points X (B, d): sorted MST
    edge lengths."""
    return np.sort(mst_edges(cdist(X, X))[2])


def separation_ratio(X: np.ndarray, labels: np.ndarray) -> float:
    """Mean length of MST edges joining different classes over the mean length of MST edges
    joining the same class (MST over all points); NaN when one kind of edge is absent or the
    embeddings are not finite."""
    X = np.asarray(X, dtype=float)
    if not np.isfinite(X).all():
        return float("nan")
    i, j, d = mst_edges(cdist(X, X))
    same = labels[i] == labels[j]
    if same.all() or (~same).all():
        return float("nan")
    intra = d[same].mean()
    return float(d[~same].mean() / intra) if intra > 0 else float("inf")
