"""CLASP: Collaborative Learning with Anchored State-space Partitions (spec 25; numpy).

The abstract fixes the idea (a small map of behavioural regions anchored on the teacher's own
demonstration states, each with a failure statistic of the current learner, used to tell the
teacher where to demonstrate and to up-weight hard regions in training). Everything concrete
below is the spec's INFERRED concretisation:

1. Anchors: k-means (K = 8, 10 restarts, k-means++ starts) on all demonstration states so far;
   region of a state = its nearest anchor (Voronoi cell).
2. Failure attribution: each failed practice rollout has one failing state (``env.failing_step``);
   f_r = (n_fail_r + 1) / (n_visit_r + 2), n_visit_r = practice rollouts that ever entered r.
3. Feedback to the teacher: among the 3 regions with the largest f_r, pick r with probability
   proportional to f_r^2, pick a failing state in r uniformly, go back 5 steps along its rollout
   and let the teacher demonstrate from there.
4. Difficulty-aware training: w_i = 1 + lambda f_{r(s_i)} / mean_r f_r, renormalised to mean 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


# ---------------------------------------------------------------------------------------------
# 1. anchors
# ---------------------------------------------------------------------------------------------
def _sqdist(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    return ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)


def _kmeans_pp(X: np.ndarray, K: int, rng: np.random.Generator) -> np.ndarray:
    C = [X[rng.integers(len(X))]]
    d2 = ((X - C[0]) ** 2).sum(-1)
    for _ in range(1, K):
        p = d2 / d2.sum() if d2.sum() > 0 else np.full(len(X), 1.0 / len(X))
        C.append(X[rng.choice(len(X), p=p)])
        d2 = np.minimum(d2, ((X - C[-1]) ** 2).sum(-1))
    return np.array(C)


def kmeans(X: np.ndarray, K: int, restarts: int, rng: np.random.Generator,
           max_iter: int = 100) -> tuple[np.ndarray, float]:
    """Lloyd's k-means from k-means++ starts; the best of ``restarts`` (lowest inertia).

    Same algorithm as sklearn.cluster.KMeans(init="k-means++", n_init=restarts) (the tests
    compare inertias); written out here because it is ~100x cheaper on a few hundred points.
    """
    X = np.asarray(X, float)
    best, best_inertia = None, np.inf
    for _ in range(restarts):
        C = _kmeans_pp(X, K, rng)
        for _ in range(max_iter):
            lab = _sqdist(X, C).argmin(axis=1)
            counts = np.bincount(lab, minlength=K)
            sums = np.zeros_like(C)
            np.add.at(sums, lab, X)
            # an empty cluster keeps its centre (it cannot happen from k-means++ on distinct
            # points, only with duplicates)
            new = np.where(counts[:, None] > 0, sums / np.maximum(counts, 1)[:, None], C)
            if np.allclose(new, C, atol=1e-10, rtol=0.0):
                C = new
                break
            C = new
        inertia = float(_sqdist(X, C).min(axis=1).sum())
        if inertia < best_inertia:
            best, best_inertia = C, inertia
    return best, best_inertia


def regions(anchors: np.ndarray, states: np.ndarray) -> np.ndarray:
    """Index of the nearest anchor for each state (any leading shape)."""
    flat = states.reshape(-1, 2)
    return _sqdist(flat, anchors).argmin(axis=1).reshape(states.shape[:-1])


# ---------------------------------------------------------------------------------------------
# 2. failure attribution -> region statistics
# ---------------------------------------------------------------------------------------------
@dataclass
class Practice:
    """What the map needs from the practice rollouts of one learner."""

    states: np.ndarray      # (T+1, M, 2) visited states (frozen after the end)
    length: np.ndarray      # (M,) steps taken
    success: np.ndarray     # (M,) bool
    fail_idx: np.ndarray    # (M,) index of the failing state (meaningful where ~success)


@dataclass
class FailureMap:
    anchors: np.ndarray     # (K, 2)
    f: np.ndarray           # (K,) Laplace-smoothed failure rate per region
    n_fail: np.ndarray      # (K,)
    n_visit: np.ndarray     # (K,)
    fail_region: np.ndarray  # (M,) region of each rollout's failing state, -1 on success

    def candidates(self) -> np.ndarray:
        """Regions that hold at least one failing state, sorted by f (largest first).

        INFERRED: a region nobody visited has f = 1/2 but no failing state to start a demo
        from, so the teacher is pointed at regions with observed failures only.
        """
        idx = np.flatnonzero(self.n_fail > 0)
        return idx[np.argsort(-self.f[idx], kind="stable")]

    def top(self, k: int = 3) -> np.ndarray:
        return self.candidates()[:k]


def failure_map(anchors: np.ndarray, practice: Practice) -> FailureMap:
    K = len(anchors)
    T1, M, _ = practice.states.shape
    lab = regions(anchors, practice.states)                       # (T+1, M)
    live = np.arange(T1)[:, None] <= practice.length[None, :]     # states a rollout visited
    visited = np.zeros((M, K), bool)
    for k in range(K):
        visited[:, k] = ((lab == k) & live).any(axis=0)
    n_visit = visited.sum(axis=0)
    failed = ~practice.success
    fail_region = np.full(M, -1)
    fail_region[failed] = lab[practice.fail_idx[failed], np.flatnonzero(failed)]
    n_fail = np.bincount(fail_region[failed], minlength=K)
    f = (n_fail + 1.0) / (n_visit + 2.0)
    return FailureMap(anchors, f, n_fail, n_visit, fail_region)


# ---------------------------------------------------------------------------------------------
# 3. actionable feedback: where the next demonstrations start
# ---------------------------------------------------------------------------------------------
def map_starts(fmap: FailureMap, practice: Practice, b: int, rng: np.random.Generator,
               top_k: int = 3, back: int = 5) -> np.ndarray | None:
    """b demonstration starts chosen by the map, or None when no practice rollout failed."""
    top = fmap.top(top_k)
    if len(top) == 0:
        return None
    p = fmap.f[top] ** 2
    p = p / p.sum()
    out = []
    for _ in range(b):
        r = top[rng.choice(len(top), p=p)]
        rollouts = np.flatnonzero(fmap.fail_region == r)
        i = rollouts[rng.integers(len(rollouts))]
        # go back `back` steps along the rollout: the demo starts just before the error
        out.append(practice.states[max(int(practice.fail_idx[i]) - back, 0), i])
    return np.array(out)


def targeting(fmap: FailureMap, demo_states: np.ndarray, top_k: int = 3) -> float:
    """Diagnostic: fraction of new demonstration states in the top-k failing regions."""
    top = fmap.top(top_k)
    if len(top) == 0 or len(demo_states) == 0:
        return float("nan")
    return float(np.isin(regions(fmap.anchors, demo_states), top).mean())


# ---------------------------------------------------------------------------------------------
# 4. difficulty-aware training weights
# ---------------------------------------------------------------------------------------------
def difficulty_weights(fmap: FailureMap, states: np.ndarray, lam: float = 2.0) -> np.ndarray:
    """w_i = 1 + lam f_{r(s_i)} / mean_r f_r, renormalised to mean 1."""
    w = 1.0 + lam * fmap.f[regions(fmap.anchors, states)] / fmap.f.mean()
    return w / w.mean()
