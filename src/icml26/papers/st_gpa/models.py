"""Base models of the partition aggregation, batched over the P partitions.

Every base model here is trained on one partition's data only, but the P models of a run are
fitted together: arrays carry a leading partition axis (P, n, ...). Partition p's numbers are
computed from slice p alone (masks, per-slice solves, a block-diagonal propagation), so
poisoning partition q cannot move the output of any other partition (tests check this
bit-for-bit).

- ``Propagation``: the normalised adjacency D^-1/2 (A + I) D^-1/2, either one graph shared by
  all partitions (label threat) or one graph per partition stacked block-diagonally
  (structure threat).
- SGC (Wu et al. 2019): H = A_norm^2 X, then a closed-form ridge one-vs-rest least-squares
  head on one-hot targets with an unpenalised bias (= scikit-learn ``Ridge(alpha=lam)``).
- 2-layer GCN (Kipf & Welling; full profile): logits = A relu(A X W1 + b1) W2 + b2, softmax
  cross-entropy on the partition's training nodes, Adam, weight decay on W1; gradients are
  written out by hand (numpy only).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from icml26.graph import edges_to_adj, sym_norm_adj


# ---------------------------------------------------------------------------------------------
# propagation
# ---------------------------------------------------------------------------------------------
class Propagation:
    """A_norm applied to a stack (P', n, k) of node signals, partition by partition.

    ``shared=True``: one (n, n) operator for every partition (P' may be 1 or P).
    ``shared=False``: a block-diagonal (P n, P n) operator, block p = partition p's graph.
    """

    def __init__(self, adj_norm: sp.csr_matrix, n: int, shared: bool):
        self.adj, self.n, self.shared = sp.csr_matrix(adj_norm), n, shared
        self.parts = 1 if shared else adj_norm.shape[0] // n

    @classmethod
    def from_edges(cls, edge_lists: list[np.ndarray], n: int) -> Propagation:
        """One graph per edge list; a single list gives a shared operator."""
        if len(edge_lists) == 1:
            return cls(sym_norm_adj(edges_to_adj(edge_lists[0], n)), n, shared=True)
        blocks = [np.asarray(e, dtype=np.int64).reshape(-1, 2) + p * n
                  for p, e in enumerate(edge_lists)]
        big = edges_to_adj(np.concatenate(blocks), n * len(edge_lists))
        return cls(sym_norm_adj(big), n, shared=False)

    def __call__(self, m: np.ndarray) -> np.ndarray:
        P, n, k = m.shape
        if self.shared:
            flat = m.transpose(1, 0, 2).reshape(n, P * k)
            return np.asarray(self.adj @ flat).reshape(n, P, k).transpose(1, 0, 2)
        if P != self.parts:
            m = np.broadcast_to(m, (self.parts, n, k))
        out = self.adj @ np.ascontiguousarray(m).reshape(self.parts * n, k)
        return np.asarray(out).reshape(self.parts, n, k)


def sgc_features(prop: Propagation, x: np.ndarray, hops: int = 2) -> np.ndarray:
    """H = A_norm^hops X, shape (1, n, d) for a shared graph, (P, n, d) per partition."""
    h = x[None].astype(np.float64)
    for _ in range(hops):
        h = prop(h)
    return h


# ---------------------------------------------------------------------------------------------
# SGC head: batched closed-form ridge, one-vs-rest
# ---------------------------------------------------------------------------------------------
def ridge_fit(h: np.ndarray, mask: np.ndarray, targets: np.ndarray, n_classes: int,
              lam: float) -> np.ndarray:
    """Weights (P, d + 1, C) minimising ||[H 1] W - Y||^2 over the masked nodes + lam ||W_x||^2.

    h: (1 or P, n, d) features; mask: (P, n) bool training nodes; targets: (P, n) class ids
    (ignored off the mask). The bias row is unpenalised (as scikit-learn's Ridge with
    fit_intercept). A partition without training nodes gets W = 0 (all scores 0).
    """
    P, n = mask.shape
    ha = np.concatenate([h, np.ones(h.shape[:2] + (1,))], axis=2)          # (P', n, d+1)
    w = mask.astype(np.float64)
    y = (targets[..., None] == np.arange(n_classes)) * w[..., None]        # (P, n, C)
    hw = ha * w[..., None]                                                  # (P, n, d+1)
    gram = hw.transpose(0, 2, 1) @ ha                                       # (P, d+1, d+1)
    rhs = ha.transpose(0, 2, 1) @ y                                         # (P, d+1, C)
    d1 = ha.shape[2]
    pen = np.full((P, d1), lam)
    pen[:, -1] = np.where(w.sum(axis=1) > 0, 0.0, 1.0)   # empty partition: b = 0, not singular
    gram = gram + pen[:, :, None] * np.eye(d1)[None]
    return np.linalg.solve(gram, rhs)


def ridge_scores(h: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Scores (P, n, C) = [H 1] W per partition."""
    return h @ weights[:, :-1] + weights[:, None, -1]


class SGC:
    """SGC base model: fixed propagated features, closed-form ridge head."""

    def __init__(self, prop: Propagation, x: np.ndarray, params: dict):
        self.h = sgc_features(prop, x, int(params.get("hops", 2)))
        self.lam = float(params.get("ridge_lambda", 0.1))

    def fit_scores(self, mask: np.ndarray, targets: np.ndarray, n_classes: int) -> np.ndarray:
        weights = ridge_fit(self.h, mask, targets, n_classes, self.lam)
        return ridge_scores(np.broadcast_to(self.h, (mask.shape[0],) + self.h.shape[1:]),
                            weights)


# ---------------------------------------------------------------------------------------------
# 2-layer GCN (full profile), hand-written gradients, Adam
# ---------------------------------------------------------------------------------------------
def gcn_forward(prop: Propagation, ax: np.ndarray, params: dict) -> dict:
    """Forward pass; ax = A X (1 or P, n, d) is precomputed (the first layer's propagation)."""
    z1 = ax @ params["w1"] + params["b1"][:, None]                      # (P, n, h)
    h1 = np.maximum(z1, 0.0)
    ah = prop(h1)
    logits = ah @ params["w2"] + params["b2"][:, None]
    return {"z1": z1, "ah": ah, "logits": logits}


def gcn_loss_grads(prop: Propagation, ax: np.ndarray, params: dict, mask: np.ndarray,
                   targets: np.ndarray, weight_decay: float) -> tuple[np.ndarray, dict]:
    """Per-partition loss (P,) = mean masked cross-entropy + wd/2 ||W1||^2, and its gradients."""
    P, n = mask.shape
    f = gcn_forward(prop, ax, params)
    logits = f["logits"]
    C = logits.shape[2]
    shift = logits - logits.max(axis=2, keepdims=True)
    logp = shift - np.log(np.exp(shift).sum(axis=2, keepdims=True))
    onehot = targets[..., None] == np.arange(C)
    w = mask / np.maximum(mask.sum(axis=1, keepdims=True), 1)                   # (P, n)
    loss = -(w * (logp * onehot).sum(axis=2)).sum(axis=1)
    loss = loss + 0.5 * weight_decay * (params["w1"] ** 2).sum(axis=(1, 2))
    dlogits = (np.exp(logp) - onehot) * w[..., None]
    grads = {
        "w2": f["ah"].transpose(0, 2, 1) @ dlogits,
        "b2": dlogits.sum(axis=1),
    }
    dah = dlogits @ params["w2"].transpose(0, 2, 1)
    dz1 = prop(dah) * (f["z1"] > 0)                         # A_norm is symmetric: A^T = A
    grads["w1"] = ax.transpose(0, 2, 1) @ dz1 + weight_decay * params["w1"]
    grads["b1"] = dz1.sum(axis=1)
    return loss, grads


def gcn_init(P: int, d: int, hidden: int, n_classes: int, rng: np.random.Generator) -> dict:
    """Glorot-uniform weights, zero biases (Kipf & Welling); independent of any data."""
    def glorot(a, b):
        lim = np.sqrt(6.0 / (a + b))
        return rng.uniform(-lim, lim, size=(P, a, b))
    return {"w1": glorot(d, hidden), "b1": np.zeros((P, hidden)),
            "w2": glorot(hidden, n_classes), "b2": np.zeros((P, n_classes))}


class GCN:
    """2-layer GCN base model trained from the same data-independent initialisation each fit."""

    def __init__(self, prop: Propagation, x: np.ndarray, params: dict, init_seed: int):
        self.prop = prop
        self.ax = prop(x[None].astype(np.float64))
        self.hidden = int(params.get("gcn_hidden", 16))
        self.epochs = int(params.get("gcn_epochs", 200))
        self.lr = float(params.get("gcn_lr", 0.01))
        self.wd = float(params.get("gcn_weight_decay", 5e-4))
        self.init_seed = init_seed

    def fit_scores(self, mask: np.ndarray, targets: np.ndarray, n_classes: int) -> np.ndarray:
        P = mask.shape[0]
        # the same seeded initialisation for every fit: partition p's init is drawn before and
        # independently of any data, so it carries no information about other partitions
        params = gcn_init(P, self.ax.shape[2], self.hidden, n_classes,
                          np.random.default_rng(self.init_seed))
        m = {k: np.zeros_like(v) for k, v in params.items()}
        v2 = {k: np.zeros_like(v) for k, v in params.items()}
        b1, b2, eps = 0.9, 0.999, 1e-8
        for t in range(1, self.epochs + 1):
            _, grads = gcn_loss_grads(self.prop, self.ax, params, mask, targets, self.wd)
            for k in params:
                m[k] = b1 * m[k] + (1 - b1) * grads[k]
                v2[k] = b2 * v2[k] + (1 - b2) * grads[k] ** 2
                step = self.lr * (m[k] / (1 - b1 ** t)) / (np.sqrt(v2[k] / (1 - b2 ** t)) + eps)
                params[k] = params[k] - step
        return gcn_forward(self.prop, self.ax, params)["logits"]


def base_model(name: str, prop: Propagation, x: np.ndarray, params: dict, init_seed: int):
    if name == "sgc":
        return SGC(prop, x, params)
    if name == "gcn":
        return GCN(prop, x, params, init_seed)
    raise ValueError(f"base model {name!r} is unknown; allowed: sgc, gcn")
