"""Federated-learning building blocks in numpy, batched over clients.

Every client's model is one slice of stacked weight arrays with a leading client axis, so a
round of local training for all clients is a handful of batched matmuls, not a Python loop
over clients. Clients hold different numbers of samples: their mini-batches are padded to a
common shape and a mask zeroes the padded rows (a client with no batch left takes no step).

- data: ``load_digits_scaled`` (scikit-learn's shipped digits, features in [0, 1]),
  ``long_tail_counts``, ``dirichlet_partition`` (label skew, minimum client size).
- model: a ReLU MLP with hand-written gradients (``mlp_init``, ``mlp_forward``, ``mlp_grads``)
  and a masked, optionally weighted / logit-adjusted softmax cross-entropy.
- local training: ``epoch_batches`` (one shuffled epoch per client, padded) and ``local_sgd``
  (plain or heavy-ball momentum, per-client persistent state).
- server: ``weighted_average`` (FedAvg aggregation) and ``broadcast``.

With one client, FedAvg (``local_sgd`` then ``weighted_average``) is plain mini-batch SGD and
FedAvgM with client momentum is momentum SGD (tested).
"""

from __future__ import annotations

import numpy as np

from .errors import ConfigError

# --- data -------------------------------------------------------------------------------


def load_digits_scaled() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's shipped 8x8 digits (1,797 x 64), pixel values scaled from 0..16 to [0, 1].

    Read straight from the package's ``datasets/data/digits.csv.gz`` (the file
    ``sklearn.datasets.load_digits`` reads), which skips importing scikit-learn (about a
    CPU-second per job); falls back to ``load_digits`` if the file is not where expected.
    """
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("sklearn")
    roots = list(spec.submodule_search_locations or []) if spec else []
    path = Path(roots[0]) / "datasets" / "data" / "digits.csv.gz" if roots else None
    if path is not None and path.exists():
        raw = np.loadtxt(path, delimiter=",")
        return raw[:, :-1] / 16.0, raw[:, -1].astype(np.int64)
    from sklearn.datasets import load_digits

    d = load_digits()
    return d.data.astype(np.float64) / 16.0, d.target.astype(np.int64)


def long_tail_counts(n_max: int, imbalance: float, n_classes: int) -> np.ndarray:
    """n_c = floor(n_max * imbalance^(-c / (C - 1))), c = 0..C-1 (head n_max, tail n_max/IR)."""
    c = np.arange(n_classes)
    return np.floor(n_max * float(imbalance) ** (-c / (n_classes - 1)) + 1e-9).astype(np.int64)


def dirichlet_partition(labels: np.ndarray, n_clients: int, alpha: float,
                        rng: np.random.Generator, min_size: int = 1,
                        max_tries: int = 1000) -> list[np.ndarray]:
    """Label-skewed split: each class's samples are divided among clients by Dir(alpha · 1).

    Redrawn until every client has at least ``min_size`` samples. Returns sorted index arrays.
    """
    labels = np.asarray(labels)
    if min_size * n_clients > len(labels):
        raise ConfigError(
            f"cannot give {n_clients} clients {min_size} samples each from {len(labels)} samples"
        )
    for _ in range(max_tries):
        parts: list[list[int]] = [[] for _ in range(n_clients)]
        for c in np.unique(labels):
            idx = rng.permutation(np.flatnonzero(labels == c))
            share = rng.dirichlet(np.full(n_clients, float(alpha)))
            cuts = (np.cumsum(share)[:-1] * len(idx)).astype(int)
            for k, chunk in enumerate(np.split(idx, cuts)):
                parts[k].extend(chunk.tolist())
        if min(len(p) for p in parts) >= min_size:
            return [np.sort(np.array(p, dtype=np.int64)) for p in parts]
    raise ConfigError(
        f"no Dirichlet({alpha}) partition into {n_clients} clients with >= {min_size} samples "
        f"each after {max_tries} draws; raise alpha or lower min_size"
    )


# --- model: ReLU MLP with a leading client axis ----------------------------------------


def mlp_init(sizes, rng: np.random.Generator, n_models: int | None = None) -> list[np.ndarray]:
    """[W1, b1, W2, b2, ...] with PyTorch's default Linear init U(-1/sqrt(fan_in), +).

    With ``n_models`` every array gets a leading axis and each model its own draw.
    """
    params = []
    lead = () if n_models is None else (n_models,)
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
        bound = 1.0 / np.sqrt(fan_in)
        params.append(rng.uniform(-bound, bound, lead + (fan_in, fan_out)))
        params.append(rng.uniform(-bound, bound, lead + (fan_out,)))
    return params


def broadcast(params: list[np.ndarray], n_models: int) -> list[np.ndarray]:
    """Copies of one model for ``n_models`` clients (a leading client axis)."""
    return [np.repeat(p[None], n_models, axis=0) for p in params]


def mlp_forward(params: list[np.ndarray], x: np.ndarray, drop_masks=None):
    """Logits and the activations the backward pass needs. x: (..., batch, d_in).

    ``drop_masks`` (one per hidden layer, already scaled by 1/(1-p)) applies inverted dropout;
    the stored activations are the dropped ones, which ``mlp_grads`` uses.
    """
    acts = [x]
    h = x
    n_layers = len(params) // 2
    for i in range(n_layers):
        w, b = params[2 * i], params[2 * i + 1]
        h = h @ w + b[..., None, :]
        if i < n_layers - 1:
            h = np.maximum(h, 0.0)
            if drop_masks is not None:
                h = h * drop_masks[i]
            acts.append(h)
    return h, acts


def mlp_grads(params: list[np.ndarray], acts: list[np.ndarray], dlogits: np.ndarray,
              drop_masks=None):
    """Gradients of a loss whose gradient w.r.t. the logits is ``dlogits`` (same layout).

    Through ReLU and dropout: d h_i / d pre_i = 1[pre_i > 0] * mask_i, and a kept active unit
    has acts > 0, so the factor is 1[acts_i > 0] * mask_i (the same masks as the forward).
    """
    grads: list[np.ndarray] = [None] * len(params)  # type: ignore[list-item]
    delta = dlogits
    for i in reversed(range(len(params) // 2)):
        a = acts[i]
        grads[2 * i] = np.swapaxes(a, -1, -2) @ delta
        grads[2 * i + 1] = delta.sum(axis=-2)
        if i > 0:
            delta = (delta @ np.swapaxes(params[2 * i], -1, -2)) * (a > 0)
            if drop_masks is not None:
                delta = delta * drop_masks[i - 1]
    return grads


def softmax_xent(logits: np.ndarray, y: np.ndarray, mask: np.ndarray | None = None,
                 class_weight: np.ndarray | None = None, logit_shift: np.ndarray | None = None):
    """Mean cross-entropy over unmasked rows and its gradient w.r.t. the logits.

    ``class_weight`` (C,) reweights each row by the weight of its label (class-balanced loss,
    normalised by the number of rows); ``logit_shift`` (C,) is added to the logits before the
    softmax (logit adjustment / balanced softmax). Shapes: logits (..., B, C), y and mask
    (..., B). Rows of a batch with no unmasked row contribute nothing.
    """
    z = logits if logit_shift is None else logits + logit_shift
    z = z - z.max(axis=-1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=-1, keepdims=True)
    m = np.ones(y.shape) if mask is None else mask.astype(np.float64)
    w = m if class_weight is None else m * class_weight[y]
    count = np.maximum(m.sum(axis=-1, keepdims=True), 1.0)
    logp_y = np.log(np.take_along_axis(p, y[..., None], axis=-1)[..., 0] + 1e-300)
    loss = -(w * logp_y).sum(axis=-1) / count[..., 0]
    onehot = np.zeros_like(p)
    np.put_along_axis(onehot, y[..., None], 1.0, axis=-1)
    dlogits = (p - onehot) * (w / count)[..., None]
    return loss, dlogits


def predict(params: list[np.ndarray], x: np.ndarray) -> np.ndarray:
    return mlp_forward(params, x)[0].argmax(axis=-1)


# --- local training -----------------------------------------------------------------------


def epoch_batches(client_idx: list[np.ndarray], batch: int, rng: np.random.Generator,
                  sample_prob: list[np.ndarray] | None = None):
    """One local epoch for every client: padded index array (K, steps, batch) and mask.

    Each client shuffles its own samples (or, with ``sample_prob``, draws len(client) samples
    with replacement with those per-sample probabilities, for resampling) and cuts them into
    ceil(n_k / batch) mini-batches; shorter clients are padded with masked rows/steps.
    """
    orders = []
    for k, idx in enumerate(client_idx):
        if sample_prob is None:
            orders.append(rng.permutation(idx))
        else:
            orders.append(rng.choice(idx, size=len(idx), replace=True, p=sample_prob[k]))
    steps = max(-(-len(o) // batch) for o in orders)
    out = np.zeros((len(orders), steps, batch), dtype=np.int64)
    mask = np.zeros((len(orders), steps, batch), dtype=bool)
    for k, o in enumerate(orders):
        flat = np.zeros(steps * batch, dtype=np.int64)
        flat[: len(o)] = o
        out[k] = flat.reshape(steps, batch)
        mask[k].reshape(-1)[: len(o)] = True
    return out, mask


def local_sgd(params, x, y, batches, mask, lr: float, momentum: float = 0.0,
              velocity=None, loss_kwargs: dict | None = None):
    """Local mini-batch SGD for all clients at once (params have a leading client axis).

    Heavy-ball momentum (torch.optim.SGD's form): v <- mu v + g; w <- w - lr v, with the
    velocity ``velocity`` persisted by the caller across rounds (FedAvgM's client-side
    momentum). A client whose batch is fully masked takes no step and keeps its velocity.
    Returns (params, velocity).
    """
    params = [p.copy() for p in params]
    if momentum and velocity is None:
        velocity = [np.zeros_like(p) for p in params]
    loss_kwargs = loss_kwargs or {}
    for s in range(batches.shape[1]):
        idx, m = batches[:, s], mask[:, s]
        active = m.any(axis=1).astype(np.float64)               # (K,)
        logits, acts = mlp_forward(params, x[idx])
        _, dlogits = softmax_xent(logits, y[idx], m, **loss_kwargs)
        grads = mlp_grads(params, acts, dlogits)
        for i, g in enumerate(grads):
            a = active.reshape((-1,) + (1,) * (g.ndim - 1))
            if momentum:
                velocity[i] = a * (momentum * velocity[i] + g) + (1 - a) * velocity[i]
                params[i] -= lr * a * velocity[i]
            else:
                params[i] -= lr * a * g
    return params, velocity


def weighted_average(client_params: list[np.ndarray], weights) -> list[np.ndarray]:
    """FedAvg aggregation: sum_k w_k theta_k / sum_k w_k over the leading client axis."""
    w = np.asarray(weights, dtype=np.float64)
    w = w / w.sum()
    return [np.tensordot(w, p, axes=(0, 0)) for p in client_params]


def balanced_accuracy(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int) -> float:
    """Mean per-class recall over the classes present in ``y_true``."""
    recalls = [np.mean(y_pred[y_true == c] == c) for c in range(n_classes) if np.any(y_true == c)]
    return float(np.mean(recalls))


def per_class_recall(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int) -> np.ndarray:
    return np.array([np.mean(y_pred[y_true == c] == c) if np.any(y_true == c) else np.nan
                     for c in range(n_classes)])
