"""FLowDUP: a set-encoder hypernetwork maps a client's unlabeled data to v in R^k, and the
client's model is theta = theta_0 + P v (fixed base point theta_0, fixed random P, k << d).

Read top to bottom: init -> forward (hypernetwork, then the personalized models) ->
objective and its hand-written gradient -> training loop -> inference at new clients.

Every array has a leading *run* axis R, so several runs (seeds) of the same shape train in one
set of batched matmuls; clients are a second axis, so all clients of a run are one tensor op
(the per-client parameters theta_0 + P v are one batched matmul, never a Python loop).

Hypernetwork (spec): h(X) = h_2(mean_{x in X} h_1(x)); h_1 = MLP 16 -> 64 -> 64 (ReLU) applied
to every point and mean-pooled (Deep Sets); h_2 = MLP 64 -> 64 -> k (ReLU, linear output) with
a zero-initialised last layer, so that every client starts at theta = theta_0 exactly.

Objective (INFERRED: the exact penalty form and weights are reconstructed, not the paper's):
  J(psi, mu) = (1/|L|) sum_{i in L} CE_i(f(.; theta_0 + P h(X_i)))
             + lambda (1/|A|) sum_{j in A} ||h(X_j) - mu||^2 / (2 sigma^2)
over labeled clients L and all training clients A = L u U; mu in R^k is a learnable prior
mean. The second term is KL(N(h(X_j), sigma^2 I) || N(mu, sigma^2 I)) in the subspace, the
PAC-Bayes complexity term through which unlabeled clients shape the hypernetwork's outputs.
Federated training is simulated with full participation: the gradient of J is the average of
per-client gradients each client can compute on its own data (plus the server's gradient for
mu), and one round is one Adam step on it.
"""

from __future__ import annotations

import numpy as np

from icml26 import fed
from icml26.npoptim import Adam

from .model import ce_and_grad, with_ones

HIDDEN = 64


def init_hypernet(rngs: list[np.random.Generator], k: int, dim: int = 16,
                  dtype=np.float32) -> list[np.ndarray]:
    """[W1, b1, W2, b2 | W3, b3, W4, b4 | mu] stacked over runs (one generator per run).

    h_1 and the first layer of h_2 use PyTorch's default init; the last layer of h_2 and the
    prior mean mu are zero (training starts at theta_0 for every client, mu at the origin).
    """
    per_run = []
    for rng in rngs:
        h1 = fed.mlp_init([dim, HIDDEN, HIDDEN], rng)
        h2a = fed.mlp_init([HIDDEN, HIDDEN], rng)
        per_run.append(h1 + h2a + [np.zeros((HIDDEN, k)), np.zeros(k), np.zeros(k)])
    return [np.stack(p).astype(dtype) for p in zip(*per_run, strict=True)]


def _aug(W: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.concatenate([W, b[:, None, :]], axis=1)


def hypernet_forward(psi: list[np.ndarray], X: np.ndarray, X1: np.ndarray | None = None):
    """X (R, C, n, 16) -> v (R, C, k), pooled embedding e (R, C, 64) and the activations.

    ``X1`` = with_ones(X) flattened to (R, C n, 17) may be passed in (it is fixed data); the
    ones column folds each layer's bias into its matmul and its gradient into the weight
    gradient, saving passes over the (R, C n, 64) activations.
    """
    W1, b1, W2, b2, W3, b3, W4, b4 = psi[:8]
    R, C, n, dim = X.shape
    if X1 is None:
        X1 = with_ones(X.reshape(R, C * n, dim))
    a1 = np.empty(X1.shape[:-1] + (HIDDEN + 1,), dtype=X1.dtype)   # [relu(.), 1]
    a1[..., -1] = 1.0
    np.maximum(X1 @ _aug(W1, b1), 0.0, out=a1[..., :-1])  # h_1, layer 1 (per point)
    a2 = a1 @ _aug(W2, b2)                            # h_1, layer 2
    np.maximum(a2, 0.0, out=a2)
    e = a2.reshape(R, C, n, -1).mean(axis=2)          # mean-pooling over the client's set
    a3 = np.maximum(e @ W3 + b3[:, None], 0.0)        # h_2
    v = a3 @ W4 + b4[:, None]
    return v, e, (X1, a1, a2, e, a3, n)


def hypernet_backward(psi: list[np.ndarray], cache, dv: np.ndarray) -> list[np.ndarray]:
    """Gradients of a loss with gradient ``dv`` w.r.t. v, for [W1, b1, W2, b2, W3, b3, W4, b4]."""
    W1, b1, W2, b2, W3, b3, W4, b4 = psi[:8]
    X1, a1, a2, e, a3, n = cache
    R, C = e.shape[:2]
    T = np.swapaxes
    dW4, db4 = T(a3, 1, 2) @ dv, dv.sum(1)
    da3 = (dv @ T(W4, 1, 2)) * (a3 > 0)
    dW3, db3 = T(e, 1, 2) @ da3, da3.sum(1)
    de = da3 @ T(W3, 1, 2)                            # (R, C, 64)
    # the mean over n points spreads de / n back to every point of the client
    da2 = (a2.reshape(R, C, n, -1) > 0) * (de / n)[:, :, None, :]
    da2 = da2.reshape(R, C * n, -1)
    g2 = T(a1, 1, 2) @ da2                            # [dW2; db2]
    da1 = da2 @ T(W2, 1, 2)
    da1 *= a1[..., :-1] > 0
    g1 = T(X1, 1, 2) @ da1                            # [dW1; db1]
    return [g1[:, :-1], g1[:, -1], g2[:, :-1], g2[:, -1], dW3, db3, dW4, db4]


def personalize(theta0: np.ndarray, P: np.ndarray, v: np.ndarray) -> np.ndarray:
    """theta = theta_0 + P v for every client: theta0 (R, d), P (R, d, k), v (R, C, k)."""
    return theta0[:, None, :] + v @ np.swapaxes(P, 1, 2)


def objective(psi, X, Y, n_labeled: int, theta0, P, lam: float, sigma: float, X1=None):
    """J and its gradient w.r.t. psi (hypernetwork weights and mu), per run.

    X (R, C, n, 16) holds the labeled clients first (one-hot labels Y (R, L, n, 4)) and then the
    clients that only enter through the penalty. Returns (J (R,), CE (R,), grads).
    """
    mu = psi[8]
    v, _, cache = hypernet_forward(psi, X, X1)
    R, C, n, dim = X.shape
    L = n_labeled
    theta = personalize(theta0, P, v[:, :L])
    X1 = cache[0].reshape(R, C, n, dim + 1)
    ce, dtheta = ce_and_grad(theta, X1[:, :L], Y)     # (R, L), (R, L, d)
    diff = (v - mu[:, None]) / sigma**2
    J = ce.mean(1) + lam * 0.5 * (diff * (v - mu[:, None])).sum(-1).mean(1)
    dv = lam / C * diff
    dv[:, :L] += (dtheta @ P) / L                     # chain rule through theta_0 + P v
    grads = hypernet_backward(psi, cache, dv.astype(X.dtype, copy=False))
    grads.append(-lam / C * diff.sum(1))              # d penalty / d mu (server side)
    return J, ce.mean(1), grads


def train(X, Y, n_labeled, theta0, P, psi, rounds: int, lr: float, lam: float, sigma: float,
          log_every: int = 50):
    """``rounds`` full-participation rounds, one Adam step each. Returns psi and a log
    [(round, J (R,), CE (R,))] every ``log_every`` rounds and at the end."""
    opt = Adam(psi, lr)
    log = []
    X1 = with_ones(X.reshape(X.shape[0], -1, X.shape[-1]))
    for t in range(rounds):
        J, ce, grads = objective(psi, X, Y, n_labeled, theta0, P, lam, sigma, X1)
        if t % log_every == 0:
            log.append((t, J, ce))
        opt.step([g.astype(p.dtype, copy=False) for p, g in zip(psi, grads, strict=True)])
    J, ce, _ = objective(psi, X, Y, n_labeled, theta0, P, lam, sigma, X1)
    log.append((rounds, J, ce))
    return psi, log


def infer(psi, X, theta0, P):
    """Inference at (new or training) clients from unlabeled data only: one forward pass.
    Returns the personalized parameters theta (R, C, d), v (R, C, k) and embeddings e."""
    v, e, _ = hypernet_forward(psi, X)
    return personalize(theta0, P, v), v, e
