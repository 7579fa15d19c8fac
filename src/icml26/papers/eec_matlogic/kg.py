"""The synthetic knowledge graph: one sparse boolean matrix per relation, classes as a boolean
membership table, and a sorted edge code array for exact edge look-ups (witness checks).

Spec generator: N entities, R relations; each head draws Poisson(degree) tails per relation
from a Zipf-like popularity p_i ~ rank^-zipf over a random permutation (popular hubs make
multi-path support common); every entity is in each class independently with p_class.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass
class KG:
    n: int
    A: list        # A[r]: CSR (head x tail), int8 ones
    AT: list       # AT[r]: CSR (tail x head), sorted indices (projection and parent pointers)
    member: np.ndarray   # (n, n_classes) bool
    codes: np.ndarray    # sorted int64 codes (r * n + h) * n + t of every edge

    @property
    def n_relations(self) -> int:
        return len(self.A)

    def has_edge(self, h, r, t) -> np.ndarray:
        """Whether each (h, r, t) is an edge (vectorised over equal-length arrays)."""
        code = (np.asarray(r, dtype=np.int64) * self.n + np.asarray(h, dtype=np.int64)) \
            * self.n + np.asarray(t, dtype=np.int64)
        pos = np.searchsorted(self.codes, code)
        pos = np.minimum(pos, len(self.codes) - 1)
        return self.codes[pos] == code


def from_edges(n: int, edges: list, member: np.ndarray) -> KG:
    """A KG from per-relation (heads, tails) arrays (duplicates collapse to one edge)."""
    A, AT, codes = [], [], []
    for r, (heads, tails) in enumerate(edges):
        heads = np.asarray(heads, dtype=np.int64)
        tails = np.asarray(tails, dtype=np.int64)
        m = sp.csr_matrix((np.ones(len(heads), dtype=np.int8), (heads, tails)), shape=(n, n))
        m.sum_duplicates()
        m.data[:] = 1
        m.sort_indices()
        t = m.T.tocsr()
        t.sort_indices()
        A.append(m)
        AT.append(t)
        coo = m.tocoo()
        codes.append((r * n + coo.row.astype(np.int64)) * n + coo.col.astype(np.int64))
    allc = np.unique(np.concatenate(codes)) if codes else np.zeros(0, dtype=np.int64)
    return KG(n, A, AT, np.asarray(member, dtype=bool), allc)


def generate(p: dict, rng: np.random.Generator) -> KG:
    n, n_rel = int(p["n_entities"]), int(p["n_relations"])
    # popularity by rank over a random permutation; one permutation for all relations, so a
    # hub is popular under every relation (INFERRED: the spec does not say)
    rank_p = np.arange(1, n + 1, dtype=float) ** -float(p["zipf"])
    pop = np.empty(n)
    pop[rng.permutation(n)] = rank_p / rank_p.sum()
    edges = []
    for _ in range(n_rel):
        counts = rng.poisson(float(p["degree"]), n)
        heads = np.repeat(np.arange(n), counts)
        tails = rng.choice(n, size=int(counts.sum()), p=pop)
        edges.append((heads, tails))
    member = rng.random((n, int(p["n_classes"]))) < float(p["p_class"])
    return from_edges(n, edges, member)
