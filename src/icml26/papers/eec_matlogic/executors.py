"""MatLogic (the proposed executor) and the scope-insensitive executors that run the same
contract. Sets are boolean entity vectors; a projection is one sparse mat-vec per hop.

MatLogic's schedule is Projection -> Negation -> Conjunction/Disjunction (spec): each hop
projects the branch's set, records one parent pointer per new entity (its witness), then
applies the mask of the exclusions scoped to (this branch, this hop's var) before the next
projection; branches are merged only after all their masks; answer-scoped exclusions last.
The baselines apply the same exclusions at the wrong level:
- GLOBAL-FILTER: every exclusion on the answer, whatever its scope (FILTER NOT EXISTS at the
  end of the query);
- LATE-SUBTRACT: per branch, the full positive answers minus the answers reachable through
  the excluded intermediates (set difference at the wrong level: loses an answer that has
  both an excluded and an allowed witness);
- POST-COMBINE: branches merged first, then every branch-scoped exclusion subtracted from the
  merged set (also entangles branches: under OR it deletes answers another branch supports);
- MATLOGIC-NOSCOPE: MatLogic with every scope replaced by the answer scope (equals
  GLOBAL-FILTER; the "necessity of scoped enforcement" ablation).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .contract import exclusion_mask, scoped_masks, with_answer_scope


def onehot(n: int, i: int) -> np.ndarray:
    v = np.zeros(n, dtype=bool)
    v[int(i)] = True
    return v


def project(kg, rel: int, S: np.ndarray) -> np.ndarray:
    """P: the entities with an edge ``rel`` from some entity of S: (A_rel^T @ S) > 0."""
    return (kg.AT[rel] @ S.astype(np.int32)) > 0


def parents(kg, rel: int, S: np.ndarray, S_new: np.ndarray) -> np.ndarray:
    """One parent pointer per entity of S_new: the lowest-indexed entity of S with an edge
    ``rel`` to it (the argmax of the boolean row of A_rel^T masked by S); -1 elsewhere."""
    M = kg.AT[rel].multiply(S[None, :].astype(np.int8)).tocsr()
    M.eliminate_zeros()
    M.sort_indices()
    out = np.full(kg.n, -1, dtype=np.int64)
    rows = np.flatnonzero(S_new)
    has = np.diff(M.indptr)[rows] > 0
    out[rows[has]] = M.indices[M.indptr[rows[has]]]
    return out


def combine(sets: list, how) -> np.ndarray:
    if len(sets) == 1:
        return sets[0].copy()
    if how == "AND":
        return np.logical_and.reduce(sets)
    if how == "OR":
        return np.logical_or.reduce(sets)
    raise ValueError(f"combine {how!r} with {len(sets)} branches")


@dataclass
class Witness:
    """Compact witness pointers: per branch its answer set and one parent array per hop."""

    branch_sets: list      # per branch: bool vector of the entities it supports at its end
    pointers: list         # per branch: list of parent arrays (one per hop)
    anchors: list          # per branch: the anchor entity

    def support(self, y: int) -> list:
        return [b for b, s in enumerate(self.branch_sets) if s[y]]

    def chain(self, b: int, y: int) -> list:
        """The witness path of answer y in branch b: [anchor, e1, ..., y]."""
        out = [int(y)]
        for ptr in reversed(self.pointers[b]):
            out.append(int(ptr[out[-1]]))
        return out[::-1]


def matlogic(kg, c, witness: bool = True):
    """MatLogic: scope-local masks under the P -> N -> C/D schedule. Returns (answers,
    Witness or None)."""
    masks = scoped_masks(kg, c)
    ret = c["return"]["var"]
    Ys, ptrs, anchors = [], [], []
    for br in c["branches"]:
        a = c["anchors"][br["start"]]
        S = onehot(kg.n, a)
        bp = []
        for hop in br["hops"]:
            S_new = project(kg, hop["rel"], S)                       # P
            if witness:
                bp.append(parents(kg, hop["rel"], S, S_new))
            m = masks.get((br["id"], hop["var"]))
            S = S_new & ~m if m is not None else S_new               # N (scope-local)
        Ys.append(S)
        ptrs.append(bp)
        anchors.append(a)
    Y = combine(Ys, c["combine"])                                     # C/D after all masks
    m = masks.get((None, ret))
    if m is not None:
        Y &= ~m                                                       # answer scope
    if not witness:
        return Y, None
    # a branch supports y only when y survives the answer-scope masks too
    keep = ~m if m is not None else np.ones(kg.n, dtype=bool)
    return Y, Witness([s & keep for s in Ys], ptrs, anchors)


def matlogic_noscope(kg, c):
    return matlogic(kg, with_answer_scope(c), witness=False)[0]


def positive_branch(kg, br, c, upto: str | None = None, mask_var=None, mask=None):
    """Propagate branch ``br`` with no exclusion (optionally stopping after var ``upto``, or
    keeping only the entities of ``mask`` at var ``mask_var``)."""
    S = onehot(kg.n, c["anchors"][br["start"]])
    for hop in br["hops"]:
        S = project(kg, hop["rel"], S)
        if hop["var"] == mask_var:
            S = S & mask
        if hop["var"] == upto:
            break
    return S


def positive_at(kg, c, b, v) -> np.ndarray:
    """The positive (exclusion-free) bindings of var v in branch b (b None: the answers)."""
    if b is None:
        return combine([positive_branch(kg, br, c) for br in c["branches"]], c["combine"])
    return positive_branch(kg, c["branches"][b], c, upto=v)


def _answer_mask(kg, c):
    ret = c["return"]["var"]
    m = np.zeros(kg.n, dtype=bool)
    for ex in c["exclusions"]:
        if ex["scope"]["branch"] is None and ex["scope"]["var"] == ret:
            m |= exclusion_mask(kg, ex["set"])
    return m


def _via_excluded(kg, c, ex) -> np.ndarray:
    """Y_bad of one branch-scoped exclusion: the branch's answers reachable through an
    excluded binding of its var."""
    br = c["branches"][ex["scope"]["branch"]]
    return positive_branch(kg, br, c, mask_var=ex["scope"]["var"],
                           mask=exclusion_mask(kg, ex["set"]))


def global_filter(kg, c) -> np.ndarray:
    Y = combine([positive_branch(kg, br, c) for br in c["branches"]], c["combine"])
    for ex in c["exclusions"]:
        Y &= ~exclusion_mask(kg, ex["set"])
    return Y


def late_subtract(kg, c) -> np.ndarray:
    Ys = []
    for br in c["branches"]:
        Y = positive_branch(kg, br, c)
        for ex in c["exclusions"]:
            if ex["scope"]["branch"] == br["id"]:
                Y &= ~_via_excluded(kg, c, ex)
        Ys.append(Y)
    return combine(Ys, c["combine"]) & ~_answer_mask(kg, c)


def post_combine(kg, c) -> np.ndarray:
    Y = combine([positive_branch(kg, br, c) for br in c["branches"]], c["combine"])
    for ex in c["exclusions"]:
        if ex["scope"]["branch"] is not None:
            Y &= ~_via_excluded(kg, c, ex)
    return Y & ~_answer_mask(kg, c)


EXECUTORS = {
    "matlogic": lambda kg, c: matlogic(kg, c, witness=False)[0],
    "global-filter": global_filter,
    "late-subtract": late_subtract,
    "post-combine": post_combine,
    "matlogic-noscope": matlogic_noscope,
}
