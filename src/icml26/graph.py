"""Graph utilities on scipy.sparse: generators, propagation, partitions, certificates.

- ``edges_to_adj``, ``sym_norm_adj`` (GCN/SGC propagation D^-1/2 (A + I) D^-1/2),
  ``lazy_walk`` (diffusion-wavelet operator (I + D^-1/2 W D^-1/2) / 2), ``knn_graph``.
- ``contextual_sbm``: homophilous stochastic block model with clustered node features.
- ``hash_partition``: a seeded stand-in for "hash(item) mod P".
- ``dpa_certificate`` / ``certified_accuracy``: Deep Partition Aggregation (Levine & Feizi
  2021): majority vote over P base models with ties to the smaller class, and the number of
  poisoned partitions the vote provably survives.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def edges_to_adj(edges: np.ndarray, n: int) -> sp.csr_matrix:
    """Symmetric 0/1 adjacency from undirected edges (m, 2); duplicates and loops dropped."""
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    edges = edges[edges[:, 0] != edges[:, 1]]
    rows = np.concatenate([edges[:, 0], edges[:, 1]])
    cols = np.concatenate([edges[:, 1], edges[:, 0]])
    adj = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, n))
    adj.data[:] = 1.0
    return adj


def sym_norm_adj(adj: sp.spmatrix, self_loops: bool = True) -> sp.csr_matrix:
    """D^-1/2 (A + I) D^-1/2 (or D^-1/2 A D^-1/2); isolated nodes get a zero row."""
    a = sp.csr_matrix(adj, dtype=np.float64)
    if self_loops:
        a = a + sp.eye(a.shape[0], format="csr")
    deg = np.asarray(a.sum(axis=1)).ravel()
    inv = np.zeros_like(deg)
    inv[deg > 0] = deg[deg > 0] ** -0.5
    d = sp.diags(inv)
    return sp.csr_matrix(d @ a @ d)


def lazy_walk(weights: sp.spmatrix) -> sp.csr_matrix:
    """(I + D^-1/2 W D^-1/2) / 2: symmetric, spectrum in [0, 1] for a nonnegative W."""
    n = weights.shape[0]
    return sp.csr_matrix((sp.eye(n) + sym_norm_adj(weights, self_loops=False)) / 2.0)


def knn_graph(x: np.ndarray, k: int, metric: str = "cosine") -> sp.csr_matrix:
    """Symmetrised k-nearest-neighbour graph (0/1), exact, by ``metric`` in {cosine, euclidean}."""
    if metric == "cosine":
        z = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
        dist = -(z @ z.T)
    elif metric == "euclidean":
        sq = (x ** 2).sum(axis=1)
        dist = sq[:, None] + sq[None, :] - 2 * x @ x.T
    else:
        raise ValueError(f"metric {metric!r} is unknown; allowed: cosine, euclidean")
    np.fill_diagonal(dist, np.inf)
    nbrs = np.argsort(dist, axis=1, kind="stable")[:, :k]
    rows = np.repeat(np.arange(len(x)), k)
    return edges_to_adj(np.stack([rows, nbrs.ravel()], axis=1), len(x))


def contextual_sbm(n: int, n_classes: int, rng: np.random.Generator, *, subclusters: int = 3,
                   mean_degree: float = 6.0, homophily: float = 0.8, d_informative: int = 8,
                   d_noise: int = 16, feature_noise: float = 0.7):
    """Homophilous SBM with clustered features (the st-gpa spec's generator).

    Labels uniform over classes; each class has ``subclusters`` centres ~ N(0, I); latent
    z = centre + feature_noise · N(0, I); features x = Q [z ; N(0, I_noise)] with Q a random
    rotation. m = n · mean_degree / 2 undirected edges, a fraction ``homophily`` intra-class
    (pick a class, then two distinct nodes of it), the rest between uniformly chosen nodes of
    different classes. Returns (x, y, edges) with edges unique and loop-free.
    """
    y = rng.integers(0, n_classes, n)
    sub = rng.integers(0, subclusters, n)
    centres = rng.normal(size=(n_classes, subclusters, d_informative))
    z = centres[y, sub] + feature_noise * rng.normal(size=(n, d_informative))
    raw = np.concatenate([z, rng.normal(size=(n, d_noise))], axis=1)
    q, r = np.linalg.qr(rng.normal(size=(raw.shape[1],) * 2))
    q = q * np.sign(np.diag(r))
    x = raw @ q.T
    members = [np.flatnonzero(y == c) for c in range(n_classes)]
    m = int(round(n * mean_degree / 2))
    edges: set[tuple[int, int]] = set()
    while len(edges) < m:
        if rng.random() < homophily:
            c = int(rng.integers(n_classes))
            if len(members[c]) < 2:
                continue
            u, v = rng.choice(members[c], 2, replace=False)
        else:
            u, v = rng.integers(0, n, 2)
            if y[u] == y[v]:
                continue
        edges.add((int(min(u, v)), int(max(u, v))))
    return x, y, np.array(sorted(edges), dtype=np.int64)


def hash_partition(n_items: int, n_parts: int, rng: np.random.Generator) -> np.ndarray:
    """Partition id of each item: a seeded uniform assignment standing in for hash mod P."""
    return rng.integers(0, n_parts, n_items)


def dpa_certificate(votes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Prediction and certified radius from vote counts (n_nodes, C).

    y_hat = argmax n_c (ties to the smaller class); r = floor((n_yhat - max_{c != yhat}
    (n_c + 1[c < yhat])) / 2): each poisoned item changes one partition's vote, i.e. moves at
    most one vote from y_hat to a rival, so the prediction survives r poisoned items.
    """
    votes = np.asarray(votes, dtype=np.int64)
    pred = votes.argmax(axis=1)                           # first maximum = smallest class
    n, c = votes.shape
    rival = votes + (np.arange(c)[None, :] < pred[:, None])
    rival[np.arange(n), pred] = np.iinfo(np.int64).min
    radius = (votes[np.arange(n), pred] - rival.max(axis=1)) // 2
    return pred, radius


def certified_accuracy(pred: np.ndarray, radius: np.ndarray, y: np.ndarray,
                       r_max: int) -> np.ndarray:
    """Fraction of nodes correctly predicted with radius >= r, for r = 0..r_max."""
    ok = pred == y
    return np.array([np.mean(ok & (radius >= r)) for r in range(r_max + 1)])
