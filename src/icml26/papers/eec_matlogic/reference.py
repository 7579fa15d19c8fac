"""Reference semantics of a contract, computed independently of MatLogic: enumerate every
binding path of each branch over the edge lists (first-order reading: a path is a tuple of
bindings, one per hop var), drop the paths whose binding of a scoped var is excluded, project
onto the return var, combine branches, then apply answer-scoped exclusions. Gold answers,
per-branch support and the witness checks come from here.
"""

from __future__ import annotations

import numpy as np

from .contract import scoped_masks
from .executors import combine


def branch_paths(kg, c, br, masks) -> np.ndarray:
    """All binding paths (rows: anchor, e1, ..., e_k) of branch ``br`` that avoid every
    exclusion scoped to (br, var)."""
    paths = np.array([[c["anchors"][br["start"]]]], dtype=np.int64)
    for hop in br["hops"]:
        A = kg.A[hop["rel"]]
        last = paths[:, -1]
        deg = np.diff(A.indptr)[last]
        rep = np.repeat(np.arange(len(paths)), deg)
        starts = np.repeat(A.indptr[last], deg)
        offs = np.arange(int(deg.sum())) - np.repeat(np.cumsum(deg) - deg, deg)
        tails = A.indices[starts + offs].astype(np.int64)
        paths = np.column_stack([paths[rep], tails])
        m = masks.get((br["id"], hop["var"]))
        if m is not None:
            paths = paths[~m[paths[:, -1]]]
    return paths


def reference(kg, c):
    """(gold answers, per-branch supported answers) as boolean vectors."""
    masks = scoped_masks(kg, c)
    ret = c["return"]["var"]
    keep = ~masks[(None, ret)] if (None, ret) in masks else np.ones(kg.n, dtype=bool)
    per_branch = []
    for br in c["branches"]:
        Y = np.zeros(kg.n, dtype=bool)
        Y[branch_paths(kg, c, br, masks)[:, -1]] = True
        per_branch.append(Y & keep)
    Y = combine([p.copy() for p in per_branch], c["combine"]) & keep
    return Y, per_branch


def witness_valid(kg, c, answers: np.ndarray, wit, ref_branch: list) -> np.ndarray:
    """Per returned answer: its witness chains are real KG paths from the branch anchor along
    the branch's relations, avoid every exclusion scoped to the branch's vars (and the answer
    scope), and the reported supporting branches equal the reference support."""
    masks = scoped_masks(kg, c)
    ret = c["return"]["var"]
    ys = np.flatnonzero(answers)
    ok = np.ones(len(ys), dtype=bool)
    for i, y in enumerate(ys):
        support = wit.support(int(y))
        true = [b for b, s in enumerate(ref_branch) if s[y]]
        if support != true or not support:
            ok[i] = False
            continue
        for b in support:
            br = c["branches"][b]
            chain = wit.chain(b, int(y))
            if chain[0] != c["anchors"][br["start"]] or chain[-1] != y or min(chain) < 0:
                ok[i] = False
                break
            rels = [h["rel"] for h in br["hops"]]
            if not kg.has_edge(chain[:-1], rels, chain[1:]).all():
                ok[i] = False
                break
            for e, hop in zip(chain[1:], br["hops"], strict=True):
                for key in ((b, hop["var"]), (None, hop["var"]) if hop["var"] == ret else None):
                    if key is not None and key in masks and masks[key][e]:
                        ok[i] = False
            if not ok[i]:
                break
    return ok
