"""Behaviour of the graph utilities (icml26.graph)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from icml26 import graph


def test_sym_norm_adj_by_hand():
    adj = graph.edges_to_adj(np.array([[0, 1], [1, 0], [1, 2], [2, 2]]), 3)   # path 0-1-2
    assert adj.toarray().tolist() == [[0, 1, 0], [1, 0, 1], [0, 1, 0]]
    a = graph.sym_norm_adj(adj).toarray()
    deg = np.array([2, 3, 2])                               # with self loops
    ref = (np.eye(3) + adj.toarray()) / np.sqrt(np.outer(deg, deg))
    assert np.allclose(a, ref)


def test_lazy_walk_spectrum_in_unit_interval():
    w = sp.random(30, 30, density=0.2, random_state=1)
    w = w + w.T
    eig = np.linalg.eigvalsh(graph.lazy_walk(w).toarray())
    assert eig.min() >= -1e-12 and eig.max() <= 1 + 1e-12


def test_knn_graph_symmetric_and_nearest():
    x = np.array([[0.0, 0], [0.1, 0], [5, 5], [5.1, 5]])
    g = graph.knn_graph(x, 1, metric="euclidean").toarray()
    assert g.tolist() == [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]]
    with pytest.raises(ValueError, match="allowed: cosine, euclidean"):
        graph.knn_graph(x, 1, metric="l1")


def test_contextual_sbm_homophily_and_size():
    x, y, edges = graph.contextual_sbm(600, 4, np.random.default_rng(0))
    assert x.shape == (600, 24) and len(edges) == 1800
    assert len({tuple(e) for e in edges}) == 1800 and np.all(edges[:, 0] < edges[:, 1])
    h = np.mean(y[edges[:, 0]] == y[edges[:, 1]])
    assert 0.75 < h < 0.85


def test_dpa_certificate_hand_cases():
    votes = np.array([
        [7, 3, 0],   # pred 0; rival class 1 (no tie bonus: 1 > 0): (7 - 3) // 2 = 2
        [3, 7, 0],   # pred 1; rival class 0 gets +1 (it wins ties): (7 - 4) // 2 = 1
        [5, 5, 0],   # tie -> class 0; rival 5: 0
        [4, 5, 1],   # pred 1; rival 4 + 1 = 5: 0
        [0, 0, 10],  # pred 2; rivals 0 + 1: (10 - 1) // 2 = 4
    ])
    pred, radius = graph.dpa_certificate(votes)
    assert pred.tolist() == [0, 1, 0, 1, 2]
    assert radius.tolist() == [2, 1, 0, 0, 4]
    # the radius is tight: moving r+1 votes from the winner to the rival flips the prediction
    v = votes[0].copy()
    v[0] -= 3
    v[1] += 3
    assert graph.dpa_certificate(v[None])[0][0] == 1
    acc = graph.certified_accuracy(pred, radius, np.array([0, 1, 1, 1, 2]), 3)
    assert acc.tolist() == [0.8, 0.6, 0.4, 0.2]
