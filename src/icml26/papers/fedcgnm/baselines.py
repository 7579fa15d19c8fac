"""Baseline client optimizers: FedAvg, FedAvgM, FedAvg-CB, FedAvg-LA (one step, many clients).

All four are local mini-batch SGD with torch.optim.SGD's heavy-ball form v <- mu v + g,
w <- w - lr v (mu = 0: FedAvg and its loss variants; mu = 0.9 persisted across rounds:
FedAvgM, Hsu et al. 2019). They differ only in the loss:
- plain cross-entropy (FedAvg, FedAvgM);
- class-balanced cross-entropy (FedAvg-CB, Cui et al. 2019): each row weighted by
  w_c propto 1/n_c of its label (global counts, normalised to mean 1), averaged over the rows;
- logit adjustment / balanced softmax (FedAvg-LA; Menon et al. 2021, Ren et al. 2020, the idea
  behind FedLC): training logits + tau log pi_c with the global prior pi, tau = 1; prediction
  uses the raw logits.
Class weights and logit shifts are per client model (n, C), since the global counts differ per
(setting, seed).
"""

from __future__ import annotations

import numpy as np

from icml26 import fed


def class_balanced_weights(counts: np.ndarray) -> np.ndarray:
    w = 1.0 / np.maximum(np.asarray(counts, dtype=float), 1.0)
    return w / w.mean()


def logit_adjustment(counts: np.ndarray, tau: float = 1.0) -> np.ndarray:
    prior = np.asarray(counts, dtype=float) / np.sum(counts)
    return tau * np.log(np.maximum(prior, 1e-12))


def sgd_step(params, velocity, x, y, mask, lr, momentum, class_weight, logit_shift):
    """One local step for n clients in place. lr, momentum: (n,); class_weight and
    logit_shift: (n, C) (ones / zeros for plain cross-entropy)."""
    logits, acts = fed.mlp_forward(params, x)
    _, dlogits = fed.softmax_xent(logits, y, mask, logit_shift=logit_shift[:, None, :])
    # class-balanced loss: the row's gradient times its label's weight (rows still counted 1)
    dlogits = dlogits * np.take_along_axis(class_weight, y, axis=1)[..., None]
    grads = fed.mlp_grads(params, acts, dlogits)
    for p, v, g in zip(params, velocity, grads, strict=True):
        shape = (-1,) + (1,) * (p.ndim - 1)
        v *= momentum.reshape(shape)
        v += g
        p -= lr.reshape(shape) * v
