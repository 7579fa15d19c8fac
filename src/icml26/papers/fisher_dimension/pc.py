"""PC-stable with Fisher-z tests, vectorised over independent trials, and the MEC check.

Skeleton (PC-stable, Colombo & Maathuis): start from the complete graph; at level l = 0, 1, ...
freeze every node's adjacency set, and test each still-present edge i - j against every S of
size l inside the frozen adj(i) \\ {j} or adj(j) \\ {i}. The edge is removed if some S makes
i and j independent; the first such S (subsets in lexicographic order) is its sepset. The
search stops when no present edge has an endpoint with |adj \\ {other}| >= l. Because the
adjacency sets are frozen per level, the result does not depend on the order of the edges.

Vectorisation: T trials (data sets) run in lockstep. Adjacency is a (T, p, p) boolean array and
each node's frozen neighbourhood a bitmask, so "S is inside adj(i) \\ {j}" is one integer test.
At each level only the (pair, S) queries eligible in at least one trial are tested, all in one
batched matrix inversion; a query's verdict only counts in the trials where it is eligible.

Orientation: an unshielded triple a - k - b (a, b not adjacent) is a collider iff k is not in
sepset(a, b). The MEC is recovered iff the skeleton and the set of unshielded colliders equal
the true ones (Verma & Pearl 1990), so Meek's rules are not needed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from itertools import combinations
from statistics import NormalDist

import numpy as np

from .sem import partial_corrs, sample_sem_covariances

# a test gets (pairs (m, 2), conds (m, l)) and returns "independent" verdicts (T, m)
IndepTest = Callable[[np.ndarray, np.ndarray], np.ndarray]


def fisher_z_test(C: np.ndarray, n: int, alpha: float) -> IndepTest:
    """Fisher-z CI test on sample covariances C (T, p, p) from n rows each.

    z = sqrt(n - |S| - 3) |atanh(rho_hat)|; independent iff z < Phi^-1(1 - alpha / 2).
    """
    crit = NormalDist().inv_cdf(1.0 - alpha / 2.0)

    def test(pairs, conds):
        rho = np.clip(partial_corrs(C, pairs, conds), -1 + 1e-15, 1 - 1e-15)
        dof = n - conds.shape[1] - 3
        if dof <= 0:                          # too few rows to test: accept independence
            return np.ones(rho.shape, dtype=bool)
        return math.sqrt(dof) * np.abs(np.arctanh(rho)) < crit

    return test


def oracle_test(Sigma: np.ndarray, tol: float = 1e-9) -> IndepTest:
    """Population (oracle) CI test: independent iff rho(i, j | S) = 0 under Sigma (one trial)."""

    def test(pairs, conds):
        return np.abs(partial_corrs(Sigma[None], pairs, conds)) < tol

    return test


@lru_cache(maxsize=64)
def level_queries(p: int, level: int):
    """Every (pair, S) query of one level, in (pair, lexicographic S) order: pair index, S as
    node indices (m, level), S as a bitmask, and the pair's nodes i < j. Cached per (p, level)
    because the enumeration is pure Python and the same for every call."""
    q_pair, q_cond, q_mask, pi, pj = [], [], [], [], []
    for k, (i, j) in enumerate(combinations(range(p), 2)):
        others = [v for v in range(p) if v != i and v != j]
        for S in combinations(others, level):
            q_pair.append(k)
            q_cond.append(S)
            q_mask.append(int(sum(1 << v for v in S)))
            pi.append(i)
            pj.append(j)
    out = (np.array(q_pair, dtype=np.int64),
           np.array(q_cond, dtype=np.int64).reshape(len(q_pair), level),
           np.array(q_mask, dtype=np.int64), np.array(pi, dtype=np.int64),
           np.array(pj, dtype=np.int64))
    for arr in out:
        arr.setflags(write=False)
    return out


def pc_skeleton(test: IndepTest, p: int, trials: int) -> tuple[np.ndarray, np.ndarray]:
    """PC-stable skeleton for ``trials`` lockstep runs.

    Returns (adj (T, p, p) bool, sepset (T, p, p) int64 bitmask; bit k set iff k in the sepset
    of the removed edge, symmetric).
    """
    adj = np.ones((trials, p, p), dtype=bool)
    adj[:, np.arange(p), np.arange(p)] = False
    sep = np.zeros((trials, p, p), dtype=np.int64)
    pair_i, pair_j = np.triu_indices(p, k=1)          # same order as combinations(range(p), 2)
    bits = np.int64(1) << np.arange(p, dtype=np.int64)
    for level in range(p - 1):
        frozen = adj.copy()
        deg = frozen.sum(axis=2)                                       # (T, p)
        present = frozen[:, pair_i, pair_j]
        big = np.maximum(deg[:, pair_i], deg[:, pair_j])
        if not np.any(present & (big - 1 >= level)):
            break
        nbr = (frozen * bits).sum(axis=2)                              # (T, p) bitmask
        q_pair, q_cond, q_mask, pi, pj = level_queries(p, level)
        in_i = (q_mask[None, :] & ~nbr[:, pi]) == 0                    # S inside adj(i)
        in_j = (q_mask[None, :] & ~nbr[:, pj]) == 0                    # S inside adj(j)
        # S never contains i or j, so "inside adj(i) \ {j}" is "inside adj(i)"
        eligible = frozen[:, pi, pj] & (in_i | in_j)                   # (T, m)
        keep = eligible.any(axis=0)
        if not keep.any():
            continue
        q_pair, q_cond, q_mask = q_pair[keep], q_cond[keep], q_mask[keep]
        pi, pj, eligible = pi[keep], pj[keep], eligible[:, keep]
        indep = test(np.stack([pi, pj], axis=1), q_cond) & eligible    # (T, m)
        # first independent query per (trial, pair): its S is the sepset
        order = np.arange(len(q_pair))
        first = np.full((trials, len(pair_i)), len(q_pair), dtype=np.int64)
        tt, qq = np.nonzero(indep)
        np.minimum.at(first, (tt, q_pair[qq]), order[qq])
        t_rm, k_rm = np.nonzero(first < len(q_pair))
        i_rm, j_rm = pair_i[k_rm], pair_j[k_rm]
        adj[t_rm, i_rm, j_rm] = adj[t_rm, j_rm, i_rm] = False
        masks = q_mask[first[t_rm, k_rm]]
        sep[t_rm, i_rm, j_rm] = sep[t_rm, j_rm, i_rm] = masks
    return adj, sep


def estimated_colliders(adj: np.ndarray, sep: np.ndarray) -> np.ndarray:
    """Unshielded colliders a -> k <- b (a < b) as a (T, p, p, p) boolean array [t, a, k, b]:
    a - k - b with a, b not adjacent and k not in sepset(a, b)."""
    p = adj.shape[1]
    k_bit = (sep[:, :, None, :] >> np.arange(p)[None, None, :, None]) & 1   # [t, a, k, b]
    triple = adj[:, :, :, None] & adj[:, None, :, :]                   # a - k and k - b
    unshielded = triple & ~adj[:, :, None, :]
    a_lt_b = np.arange(p)[:, None, None] < np.arange(p)[None, None, :]
    return unshielded & (k_bit == 0) & a_lt_b[None]


def true_skeleton(A: np.ndarray) -> np.ndarray:
    A = np.asarray(A, dtype=bool)
    return A | A.T


def true_colliders(A: np.ndarray) -> np.ndarray:
    """v-structures a -> k <- b (a < b, a and b not adjacent) of a DAG, [a, k, b]."""
    A = np.asarray(A, dtype=bool)
    p = A.shape[0]
    skel = true_skeleton(A)
    v = A[:, :, None] & A.T[None, :, :]                                # a -> k and b -> k
    a_lt_b = np.arange(p)[:, None, None] < np.arange(p)[None, None, :]
    return v & ~skel[:, None, :] & a_lt_b


def same_mec(A1: np.ndarray, A2: np.ndarray) -> bool:
    """Verma-Pearl: two DAGs are Markov equivalent iff same skeleton and same v-structures."""
    return bool(np.array_equal(true_skeleton(A1), true_skeleton(A2))
                and np.array_equal(true_colliders(A1), true_colliders(A2)))


def mec_recovered(A: np.ndarray, adj: np.ndarray, sep: np.ndarray) -> np.ndarray:
    """Per trial: estimated skeleton == true skeleton and estimated colliders == true ones."""
    skel_ok = (adj == true_skeleton(A)[None]).all(axis=(1, 2))
    coll_ok = (estimated_colliders(adj, sep) == true_colliders(A)[None]).all(axis=(1, 2, 3))
    return skel_ok & coll_ok


def success_rate(A: np.ndarray, B: np.ndarray, D: np.ndarray, n: int, trials: int,
                 alpha: float, rng: np.random.Generator) -> float:
    """Fraction of ``trials`` independent data sets of n rows on which PC recovers the MEC."""
    C = sample_sem_covariances(B, D, n, trials, rng)
    adj, sep = pc_skeleton(fisher_z_test(C, n, alpha), A.shape[0], trials)
    return float(mec_recovered(A, adj, sep).mean())
