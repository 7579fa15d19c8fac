"""The small ReLU MLP ("the model being post-trained"), trained many at a time.

Every model is one slice of stacked weights (leading model axis), built from the shared numpy
blocks: ``icml26.fed`` (ReLU MLP forward / hand-written backward / softmax cross-entropy) and
``icml26.npoptim.Adam`` (torch's Adam with coupled L2 weight decay). A model trains on a
*mixture of sources*: a source is a contiguous block of one example pool (the target train
set, one auxiliary dataset, its preview), and each example of a mini-batch first draws its
source from the model's mixture weights, then an example of that source uniformly (with
replacement). This is the official code's multitask sampler: target weight 0.7, the selected
datasets sharing 0.3 (trainer/multitask_trainer/allocate_tokens.py).

A model's random stream is its own (``seeds``), and every model's arithmetic is its own slice
of a batched matmul, so a model's result does not depend on which others share the call.
"""

from __future__ import annotations

import numpy as np

from icml26 import fed
from icml26.npoptim import Adam

CHUNK = 50  # steps of mini-batch draws made at once per model (bounded memory)


def init(sizes, rng: np.random.Generator) -> list[np.ndarray]:
    """One model: [W1, b1, W2, b2] with torch's default Linear init (icml26.fed.mlp_init)."""
    return fed.mlp_init(sizes, rng)


def stack(models: list[list[np.ndarray]]) -> list[np.ndarray]:
    return [np.stack([m[i] for m in models]) for i in range(len(models[0]))]


def flat(params: list[np.ndarray]) -> np.ndarray:
    """Parameters (or gradients) of one model as one vector, layer order W1, b1, W2, b2."""
    return np.concatenate([p.ravel() for p in params])


def loss_grad(params: list[np.ndarray], x: np.ndarray, y: np.ndarray):
    """Mean cross-entropy of one model (or stacked models) and its gradient (exact)."""
    logits, acts = fed.mlp_forward(params, x)
    loss, dlogits = fed.softmax_xent(logits, y)
    return loss, fed.mlp_grads(params, acts, dlogits)


def accuracy(params: list[np.ndarray], x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-example correctness of one model (bool array)."""
    return fed.predict(params, x) == y


def _draws(gens, steps: int, batch: int) -> np.ndarray:
    """(R, steps, batch, 2) uniforms, model r's from its own generator, chunk by chunk."""
    return np.stack([g.random((steps, batch, 2)) for g in gens])


def train_mixtures(init_params: list[np.ndarray], x_pool: np.ndarray, y_pool: np.ndarray,
                   src_start: np.ndarray, src_len: np.ndarray, probs: np.ndarray,
                   steps, seeds, *, lr: float, batch: int, weight_decay: float,
                   ) -> list[np.ndarray]:
    """Adam on R models at once. Model r samples its mini-batches from mixture ``probs[r]``
    over its sources, source s being the pool rows ``src_start[r, s] .. + src_len[r, s]``
    (arrays (R, S)), and takes ``steps[r]`` steps (a model that is done is frozen while the
    others go on). Returns the trained stacked parameters."""
    params = [p.copy() for p in init_params]
    R = params[0].shape[0]
    steps = np.broadcast_to(np.asarray(steps, dtype=np.int64), (R,))
    probs = np.asarray(probs, dtype=float)
    probs = probs / probs.sum(axis=1, keepdims=True)
    cum = np.cumsum(probs, axis=1)
    src_start = np.asarray(src_start, dtype=np.int64)
    src_len = np.asarray(src_len, dtype=np.int64)
    # a draw above the last cumulative weight (rounding) goes to the last used source
    last = (probs.shape[1] - 1 - np.argmax(probs[:, ::-1] > 0, axis=1))[:, None, None]
    gens = [np.random.default_rng(int(s)) for s in seeds]
    opt = Adam(params, lr=lr, weight_decay=weight_decay)
    total = int(steps.max()) if R else 0
    rows = np.arange(R)[:, None, None]
    for c0 in range(0, total, CHUNK):
        n = min(CHUNK, total - c0)
        u = _draws(gens, n, batch)                                  # (R, n, batch, 2)
        # source of each example: the first cumulative weight above the uniform draw
        src = np.minimum((u[..., 0, None] >= cum[:, None, None, :]).sum(-1), last)
        length = src_len[rows, src]
        idx = src_start[rows, src] + np.minimum((u[..., 1] * length).astype(np.int64),
                                                length - 1)
        for t in range(n):
            xb, yb = x_pool[idx[:, t]], y_pool[idx[:, t]]
            _, grads = loss_grad(params, xb, yb)
            active = (c0 + t) < steps
            opt.step(grads, active=None if active.all() else active)
    return params
