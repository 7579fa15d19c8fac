"""The network and its training recipe, batched over models (a leading model axis).

Network (spec): MLP 8 -> 32 -> 32 -> T(K+1), ReLU, output reshaped to (T, K+1); the MLP,
its init and hand-written backward pass are icml26.fed's. Training (spec): Adam lr 3e-3,
full batch, weight decay 1e-4 (L2 added to the gradient, as torch's Adam does), at most
``epochs`` epochs, early stopping on the validation NLL with patience 50 (the parameters of
the best validation epoch are kept, and a model whose patience has run out takes no more
steps). Every model of a batch has its own data and its own loss weights.

Early stopping chooses the epoch on validation data from 1..cap. The project's grid-edge rule
(a choice on its grid's edge extends the grid in that direction, at most twice) applies to it
through ``extensions``: a model whose best epoch is the last epoch of its cap (validation NLL
still falling there) gets the cap doubled and trains on, at most ``extensions`` times; a model
whose best epoch lies inside its cap stops exactly as it would without the rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26.fed import mlp_forward, mlp_grads, mlp_init

from .survival import kl_joint, nll


def init(n_in: int, hidden: int, T: int, C: int, rng: np.random.Generator, n_models: int):
    return mlp_init([n_in, hidden, hidden, T * C], rng, n_models=n_models)


def logits(params, x: np.ndarray, T: int):
    """(..., n, T, C) logits and the activations for the backward pass."""
    out, acts = mlp_forward(params, x)
    return out.reshape(out.shape[:-1] + (T, -1)), acts


@dataclass
class Teacher:
    """What a teacher shares: its per-interval distribution on the local subjects."""

    h_train: np.ndarray     # (M, n, T, C_T) teacher hazards on the local training subjects
    cause_map: np.ndarray   # student class -> teacher class
    weight: np.ndarray      # (M,) KD weight per model (lambda * w_j; 0: no distillation)


def train(params, x, time, status, x_val, time_val, status_val, T: int, *, epochs: int,
          lr: float = 3e-3, weight_decay: float = 1e-4, patience: int = 50,
          teachers: tuple[Teacher, ...] = (), survival_weighted: bool = True,
          batch: int | None = None, rngs=None, extensions: int = 0):
    """Adam on NLL + sum_j weight_j KL_joint_j for a stack of models; returns (best params,
    history dict with per-epoch train loss and validation NLL, shape (epochs_run, M)).

    x: (M, n, d); time/status: (M, n). ``batch`` (None = full batch, the spec's recipe) cuts
    each epoch into mini-batches (used only for the 20000-subject teachers to fit the budget),
    each model shuffling with its own generator of ``rngs`` (so a model's result does not
    depend on which models share its batch). ``extensions``: how many times a model's epoch
    cap may double under the grid-edge rule (see ``extend_caps``); the history adds per model
    ``best_epoch`` (1-based, the first minimum: ties go to the earlier epoch), ``epoch_cap``
    (the final cap) and ``extended`` (how many doublings it got).
    """
    from icml26.npoptim import Adam

    M = x.shape[0]
    params = [p.copy() for p in params]
    opt = Adam(params, lr, weight_decay=weight_decay)  # torch.optim.Adam's update, coupled L2
    best = [p.copy() for p in params]
    best_val = np.full(M, np.inf)
    since = np.zeros(M, dtype=np.int64)
    active = np.ones(M, dtype=bool)
    stopped_at = np.zeros(M, dtype=np.int64)
    best_epoch = np.zeros(M, dtype=np.int64)
    cap = np.full(M, int(epochs), dtype=np.int64)
    extended = np.zeros(M, dtype=np.int64)
    hist_train, hist_val = [], []
    n = x.shape[1]
    for _epoch in range(int(epochs) * 2 ** int(extensions)):
        if batch is None or batch >= n:
            chunks = [None]
        else:
            order = np.stack([r.permutation(n) for r in rngs])
            chunks = [order[:, i:i + batch] for i in range(0, n, batch)]
        for idx in chunks:
            xb, tb, sb = (x, time, status) if idx is None else (
                np.take_along_axis(x, idx[..., None], 1), np.take_along_axis(time, idx, 1),
                np.take_along_axis(status, idx, 1))
            z, acts = logits(params, xb, T)
            loss, dz = nll(z, tb, sb)
            for t in teachers:
                if not np.any(t.weight):
                    continue
                hb = t.h_train if idx is None else np.take_along_axis(
                    t.h_train, idx[..., None, None], 1)
                kl, dkl = kl_joint(hb, z, t.cause_map, survival_weighted)
                wj = t.weight[:, None, None, None]
                loss = loss + t.weight * kl
                dz = dz + wj * dkl
            grads = mlp_grads(params, acts, dz.reshape(dz.shape[:-2] + (-1,)))
            opt.step(grads, active=active)  # stopped models keep their parameters
        val = nll(logits(params, x_val, T)[0], time_val, status_val, grad=False)[0]
        hist_train.append(loss)
        hist_val.append(val)
        better = active & (val < best_val)
        for i in range(len(params)):
            best[i][better] = params[i][better]
        best_val = np.where(better, val, best_val)
        best_epoch = np.where(better, _epoch + 1, best_epoch)
        since = np.where(better, 0, since + 1)
        active &= since < patience
        stopped_at = np.where(active, _epoch + 1, stopped_at)
        active, cap, extended = extend_caps(_epoch + 1, active, best_epoch, cap, extended,
                                            int(extensions))
        if not active.any():
            break
    return best, {"train_loss": np.array(hist_train), "val_nll": np.array(hist_val),
                  "epochs_run": np.maximum(stopped_at, 1), "best_epoch": best_epoch,
                  "epoch_cap": cap, "extended": extended}


def extend_caps(epoch: int, active, best_epoch, cap, extended, max_extensions: int):
    """The grid-edge rule on the epoch chosen by early stopping, at the end of ``epoch``.

    A model still training whose cap ends here stops, unless its best validation epoch is this
    last one (the choice sits on the edge of 1..cap) and it has been extended fewer than
    ``max_extensions`` times: then its cap doubles (the next step of the ratio 2) and it trains
    on. Returns (active, cap, extended), new arrays.
    """
    at_cap = active & (cap == epoch)
    grow = at_cap & (best_epoch == epoch) & (extended < max_extensions)
    return (active & ~(at_cap & ~grow), np.where(grow, 2 * cap, cap),
            extended + grow.astype(np.int64))
