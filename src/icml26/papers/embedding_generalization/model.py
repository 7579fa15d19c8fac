"""The model zoo: data splits, a ReLU MLP with hand-written gradients (optional dropout), a
numpy Adam, and full-batch training of many models at once (a leading model axis).

Data. Digits (scikit-learn's shipped 8x8 set, pixels / 16) or, at full scale, a synthetic
teacher task. Per seed the points are shuffled once and split into a train pool (1000), a
validation set (300, held-out empirical risk) and a test set (497, population proxy); a model
uses the first n_tr points of the train pool, so the pool's tail (points n_tr_max..1000) is
never trained on by any model and joins the held-out pool of the diagnostics.

Label noise: each train-pool point carries one uniform draw u_i and one random label r_i per
seed; at noise level q its training label is r_i where u_i < q (nested across q, identical for
every configuration of the seed). Validation and test labels are always clean.

Training: every model of a stack has the same layer sizes; training labels, masks (n_tr) and
inputs may differ per model. Batched matmuls act slice by slice, so a model's numbers do not
depend on which other models share its stack (tested).
"""

from __future__ import annotations

import numpy as np

from icml26.fed import load_digits_scaled, mlp_forward, mlp_grads, mlp_init, softmax_xent
from icml26.seeding import derive_seed

N_CLASSES = 10


# --- data -------------------------------------------------------------------------------------
def teacher_task(n: int, dim: int, hidden: int, rng: np.random.Generator):
    """x ~ N(0, I_dim); labels = argmax of a random 2-layer ReLU teacher with 10 outputs.

    The teacher's output biases are centred so that all 10 classes occur (median-centred
    logits); unlimited population samples, here n of them."""
    w1 = rng.normal(size=(dim, hidden)) / np.sqrt(dim)
    w2 = rng.normal(size=(hidden, N_CLASSES)) / np.sqrt(hidden)
    x = rng.normal(size=(n, dim))
    z = np.maximum(x @ w1, 0.0) @ w2
    z -= np.median(z, axis=0)
    return x, z.argmax(axis=1).astype(np.int64)


def make_split(paper: str, dataset: str, seed: int, sizes: dict, digits=None) -> dict:
    """The per-seed split of one dataset: train pool, validation, test, noise draws.

    Identical for every configuration (and method) of the seed: derived from
    (paper, dataset, seed) only."""
    rng = np.random.default_rng(derive_seed(paper, dataset, seed, "split"))
    n_pool, n_val, n_test = int(sizes["n_pool"]), int(sizes["n_val"]), int(sizes["n_test"])
    n = n_pool + n_val + n_test
    if dataset == "digits":
        x, y = digits
        if n > len(y):
            raise ValueError(f"digits has {len(y)} points, the split needs {n}")
        perm = rng.permutation(len(y))[:n]
        x, y = x[perm], y[perm]
    elif dataset == "teacher":
        x, y = teacher_task(n, int(sizes["teacher_dim"]), int(sizes["teacher_hidden"]), rng)
    else:
        raise ValueError(f"unknown dataset {dataset!r}; allowed: digits, teacher")
    noise_u = rng.uniform(size=n_pool)
    noise_label = rng.integers(N_CLASSES, size=n_pool)
    return {
        "x_pool": x[:n_pool], "y_pool": y[:n_pool],
        "x_val": x[n_pool:n_pool + n_val], "y_val": y[n_pool:n_pool + n_val],
        "x_test": x[n_pool + n_val:], "y_test": y[n_pool + n_val:],
        "noise_u": noise_u, "noise_label": noise_label,
    }


def train_labels(split: dict, n_tr: int, noise: float) -> np.ndarray:
    """Training labels of the first n_tr pool points with a fraction ~noise replaced by uniform
    random labels (the same replaced points and labels for every configuration of the seed)."""
    y = split["y_pool"][:n_tr].copy()
    flip = split["noise_u"][:n_tr] < noise
    y[flip] = split["noise_label"][:n_tr][flip]
    return y


def load_digits() -> tuple[np.ndarray, np.ndarray]:
    return load_digits_scaled()


# --- model ------------------------------------------------------------------------------------
def sizes_of(d_in: int, width: int, depth: int) -> list[int]:
    return [d_in] + [width] * depth + [N_CLASSES]


def init(d_in: int, width: int, depth: int, rng: np.random.Generator) -> list[np.ndarray]:
    """PyTorch-default Linear init (fed.mlp_init) of one model: [W1, b1, ..., W_head, b_head]."""
    return mlp_init(sizes_of(d_in, width, depth), rng)


def forward(params, x, drop_masks=None):
    """Logits and the hidden embeddings h_1..h_L (after ReLU and dropout; h_L is the head's
    input): icml26.fed's MLP, whose ``drop_masks`` (one per hidden layer, scaled by 1/(1-p))
    apply inverted dropout during training."""
    return mlp_forward(params, x, drop_masks)


def backward(params, acts, dlogits, drop_masks=None):
    """Gradients of a loss with logit gradient ``dlogits`` through ReLU and dropout
    (icml26.fed.mlp_grads with the forward's masks)."""
    return mlp_grads(params, acts, dlogits, drop_masks)


def embeddings(params, x) -> list[np.ndarray]:
    """Hidden embeddings h_1..h_L of x (no dropout at evaluation)."""
    return forward(params, x)[1][1:]


def train_accuracy(params, x, y) -> np.ndarray:
    """Per-model training accuracy (K,) of stacked params on x (K, N, d), labels y (K, N),
    without dropout: the fraction of training labels the model predicts."""
    return np.mean(forward(params, x)[0].argmax(axis=-1) == y, axis=-1)


def train_stack(params, x, y, mask, epochs: int, lr: float, weight_decay=0.0, dropout=0.0,
                drop_rngs=None, log_every: int = 0, max_epochs: int | None = None):
    """Full-batch Adam on K stacked models (params with a leading model axis).

    x (K, N, d), y (K, N), mask (K, N) marks each model's training rows (None: all). The
    arithmetic runs in the dtype of params and x (float32 in the experiment: half the cost).
    Per-model dropout streams ``drop_rngs`` (K generators) keep each model's masks
    independent of the stack.

    Training to interpolation (``max_epochs`` > epochs): every model trains at least
    ``epochs`` epochs (the spec's budget). From there on, after each epoch, a model whose
    parameters fit every training label (train accuracy 1.0, no dropout, unmasked rows)
    stops; the others go on until they do or until ``max_epochs``, the cap. A stopped model
    leaves the stack (its Adam moments too), so the remaining ones run alone; the batched
    arithmetic acts slice by slice, so a model's numbers do not depend on when the others
    stopped.

    Returns the trained params, the logged train losses {step: (K,)} (NaN for a model that
    has stopped) and {"epochs": (K,) epochs trained, "interpolated": (K,) bool, whether the
    model fit its training labels when it stopped}.
    """
    from icml26.npoptim import Adam

    cap = int(epochs) if max_epochs is None else int(max_epochs)
    if cap < int(epochs):
        raise ValueError(f"max_epochs {cap} is below epochs {epochs}")
    k_all = len(y)
    final = [p.copy() for p in params]             # stopped models' params land here
    params = [p.copy() for p in params]
    opt = Adam(params, lr, weight_decay=weight_decay)  # torch.optim.Adam's update
    n_hidden = len(params) // 2 - 1
    n = y.shape[-1]
    live = np.arange(k_all)                         # stack row -> model index
    xs, ys, ms, rngs = x, y, mask, drop_rngs
    trained = np.zeros(k_all, dtype=np.int64)
    fitted = np.zeros(k_all, dtype=bool)
    log = {}

    def correct(logits):
        hit = logits.argmax(axis=-1) == ys
        return np.all(hit if ms is None else hit | ~ms.astype(bool), axis=-1)

    for t in range(1, cap + 1):
        masks = None
        if dropout > 0:
            widths = [params[2 * i].shape[-1] for i in range(n_hidden)]
            masks = [np.stack([(r.uniform(size=(n, w)) >= dropout) / (1.0 - dropout)
                               for r in rngs]) for w in widths]
        logits, acts = forward(params, xs, masks)
        if t - 1 >= epochs and cap > epochs:
            # the params after t - 1 epochs: the training forward is the evaluation forward
            # without dropout; with dropout, one more forward without it
            done = correct(logits if masks is None else forward(params, xs)[0])
            if done.any():
                for i, p in enumerate(params):
                    final[i][live[done]] = p[done]
                trained[live[done]] = t - 1
                fitted[live[done]] = True
                keep = ~done
                if not keep.any():
                    return final, log, {"epochs": trained, "interpolated": fitted}
                live = live[keep]
                params = [p[keep] for p in params]
                opt.params = params
                opt.m = [m[keep] for m in opt.m]
                opt.v = [v[keep] for v in opt.v]
                xs, ys = xs[keep], ys[keep]
                ms = None if ms is None else ms[keep]
                rngs = None if rngs is None else [r for r, k in zip(rngs, keep, strict=True) if k]
                if masks is not None:
                    masks = [mk[keep] for mk in masks]
                logits, acts = logits[keep], [a[keep] for a in acts]
        loss, dlogits = softmax_xent(logits, ys, ms)
        dlogits = dlogits.astype(logits.dtype, copy=False)  # keep float32 stacks in float32
        grads = backward(params, acts, dlogits, masks)
        opt.step(grads)
        if log_every and (t == 1 or t % log_every == 0 or t == cap):
            row = np.full(k_all, np.nan)
            row[live] = loss
            log[t] = row
    for i, p in enumerate(params):
        final[i][live] = p
    trained[live] = cap
    fitted[live] = correct(forward(params, xs)[0]) if len(live) else fitted[live]
    return final, log, {"epochs": trained, "interpolated": fitted}
