"""Synthetic data of the three experiments: point clouds to match, graph classes, random clouds.

Every generator takes a numpy Generator, so an instance is a function of the seed it is given.
"""

from __future__ import annotations

import networkx as nx
import numpy as np
from scipy.sparse.csgraph import shortest_path
from scipy.spatial.distance import cdist

# ---------------------------------------------------------------------------------------------
# 1. Point-cloud matching: a noisy 2-D spiral and a rotated, perturbed, permuted copy
# ---------------------------------------------------------------------------------------------


def spiral(n: int, rng: np.random.Generator):
    """n points on a noisy spiral: t ~ U(0, 3 pi), x = (t cos t, t sin t) / 10 + N(0, 0.05^2)."""
    t = rng.uniform(0.0, 3.0 * np.pi, n)
    return np.c_[t * np.cos(t), t * np.sin(t)] / 10.0 + rng.normal(0.0, 0.05, (n, 2))


def matching_instance(n: int, setting: dict, rng: np.random.Generator) -> dict:
    """Source (x, f) and target (y, g) with y[truth[i]] the partner of x[i].

    The target is a random rotation of the source plus global noise N(0, global_sd^2); a
    fraction ``local_frac`` of target points is displaced by N(0, local_sd^2) (local
    perturbation); target features are the source features plus N(0, feature_sd^2) (a weak
    hint). Finally the target is shuffled, so the correspondence must be recovered.
    """
    x = spiral(n, rng)
    theta = rng.uniform(0.0, 2.0 * np.pi)
    rot = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    y = x @ rot.T + rng.normal(0.0, setting.get("global_sd", 0.0), (n, 2))
    k = int(round(setting.get("local_frac", 0.0) * n))
    if k > 0:
        moved = rng.choice(n, size=k, replace=False)
        y[moved] += rng.normal(0.0, setting.get("local_sd", 0.0), (k, 2))
    f = rng.normal(0.0, 1.0, (n, 2))
    g = f + rng.normal(0.0, setting.get("feature_sd", 1.0), (n, 2))
    order = rng.permutation(n)  # target j is the unshuffled target order[j]
    truth = np.argsort(order)  # so source i sits at target position truth[i]
    return {"x": x, "y": y[order], "f": f, "g": g[order], "truth": truth}


# ---------------------------------------------------------------------------------------------
# 2. Graph classification: networkx graph classes (stand-in for TUDatasets)
# ---------------------------------------------------------------------------------------------


def _block_sizes(n: int, k: int) -> list[int]:
    return [n // k + (i < n % k) for i in range(k)]


def _sbm(n, blocks, p_in, p_out, seed):
    probs = [[p_in if a == b else p_out for b in range(blocks)] for a in range(blocks)]
    return nx.stochastic_block_model(_block_sizes(n, blocks), probs, seed=seed)


def _connected(make, rng: np.random.Generator, tries: int = 1000):
    """Redraw until connected (shortest-path distances must be finite)."""
    for _ in range(tries):
        graph = make(int(rng.integers(2**31 - 1)))
        if nx.is_connected(graph):
            return graph
    raise RuntimeError("could not draw a connected graph; the class parameters are too sparse")


def graph_classes(per_class: int, n_classes: int, n_min: int, n_max: int,
                  rng: np.random.Generator) -> tuple[list, np.ndarray]:
    """Connected graphs of ``n_classes`` classes (3 in the spec, 5 at full scale).

    c1 2-block SBM (0.5, 0.05); c2 3-block SBM (0.6, 0.05); c3 Erdos-Renyi with p matched to
    c1's average density; (full scale, INFERRED) c4 Watts-Strogatz (k = 4, p = 0.1),
    c5 Barabasi-Albert (m = 2).
    """
    sizes = rng.integers(n_min, n_max + 1, size=(n_classes, per_class))
    graphs: list = []
    c1 = [_connected(lambda s, n=n: _sbm(n, 2, 0.5, 0.05, s), rng) for n in sizes[0]]
    graphs.append(c1)
    graphs.append([_connected(lambda s, n=n: _sbm(n, 3, 0.6, 0.05, s), rng) for n in sizes[1]])
    p_er = float(np.mean([nx.density(g) for g in c1]))
    graphs.append([_connected(lambda s, n=n: nx.gnp_random_graph(n, p_er, seed=s), rng)
                   for n in sizes[2]])
    if n_classes > 3:
        graphs.append([_connected(lambda s, n=n: nx.watts_strogatz_graph(n, 4, 0.1, seed=s), rng)
                       for n in sizes[3]])
    if n_classes > 4:
        graphs.append([_connected(lambda s, n=n: nx.barabasi_albert_graph(n, 2, seed=s), rng)
                       for n in sizes[4]])
    if n_classes > 5:
        raise ValueError(f"at most 5 graph classes are defined, not {n_classes}")
    labels = np.repeat(np.arange(n_classes), per_class)
    return [g for cls in graphs for g in cls], labels


def graph_space(graph, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Shortest-path distances and node features [degree / n, clustering] + N(0, 0.05^2)."""
    adj = nx.to_numpy_array(graph, nodelist=sorted(graph.nodes))
    n = adj.shape[0]
    dist = shortest_path(adj, unweighted=True, directed=False)
    clustering = nx.clustering(graph)
    feat = np.c_[adj.sum(1) / n, [clustering[v] for v in sorted(graph.nodes)]]
    return dist, feat + rng.normal(0.0, 0.05, feat.shape)


# ---------------------------------------------------------------------------------------------
# 3. Pseudometric check: random attributed Gaussian-mixture clouds
# ---------------------------------------------------------------------------------------------


def mixture_cloud(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """n points of a 2- or 3-component Gaussian mixture; features follow the component.

    Component centres ~ N(0, 2^2 I), points ~ centre + N(0, 0.5^2 I); 2-D features ~
    component feature mean (N(0, I)) + N(0, 0.3^2 I). (Mixture parameters INFERRED.)
    """
    k = int(rng.integers(2, 4))
    centres = rng.normal(0.0, 2.0, (k, 2))
    feat_means = rng.normal(0.0, 1.0, (k, 2))
    comp = rng.integers(0, k, n)
    pos = centres[comp] + rng.normal(0.0, 0.5, (n, 2))
    feat = feat_means[comp] + rng.normal(0.0, 0.3, (n, 2))
    return pos, feat


# ---------------------------------------------------------------------------------------------
# Costs
# ---------------------------------------------------------------------------------------------


def scaled(a: np.ndarray, scale: float | None = None) -> np.ndarray:
    """Divide by ``scale`` (default: the array's own maximum, the per-pair normalisation)."""
    scale = float(np.max(a)) if scale is None else float(scale)
    return a / scale if scale > 0 else a


def euclidean(x: np.ndarray) -> np.ndarray:
    return cdist(x, x)


def feature_cost(f: np.ndarray, g: np.ndarray) -> np.ndarray:
    """M_ij = ||f_i - g_j||^2."""
    return cdist(f, g, "sqeuclidean")
