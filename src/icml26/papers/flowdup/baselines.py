"""Baselines (spec "Baselines"), all trained like FLowDUP: full participation, one round = the
average of the clients' gradients on their own data = one Adam step (same lr and step
budget). Arrays carry a leading run axis R (the seeds of a shard train together) and a client
axis: x1 = model.with_ones(x) (R, C, n, 17), one-hot labels Y (R, C, n, 4), flat
parameters (R, ..., d).

- FedAvg: one global model in the full d-dim space from the labeled clients. With one local
  gradient per round and full participation, FedAvg's aggregation is the average of client
  gradients (FedSGD) followed by a server-side Adam step (INFERRED: the server optimiser).
- Global subspace: one shared v for all clients, theta = theta_0 + P v.
- Cluster (IFCA-style without labels): k-means (scikit-learn) on the client summary statistics
  (mean and per-dimension variance of x) of all training clients; one FedAvg model per
  cluster from its labeled clients; a new client uses its nearest centroid's model.
- Oracle local (full profile): each client trains its own model on its labeled training
  points (upper bound).
"""

from __future__ import annotations

import numpy as np

from icml26.npoptim import Adam

from .model import ce_and_grad


def fedavg(theta0, x1, Y, rounds: int, lr: float, log_every: int = 50):
    """Global model per run: theta <- Adam(mean_i grad CE_i(theta)); theta0 (R, d)."""
    theta = theta0.copy()
    opt = Adam([theta], lr)
    log = []
    for t in range(rounds):
        ce, g = ce_and_grad(theta, x1, Y)             # one gradient per client (R, L, d)
        if t % log_every == 0:
            log.append((t, ce.mean(1)))
        opt.step([g.mean(1)])                         # FedAvg aggregation (equal client sizes)
    log.append((rounds, ce_and_grad(theta, x1, Y)[0].mean(1)))
    return theta, log


def global_subspace(theta0, P, x1, Y, rounds: int, lr: float, log_every: int = 50):
    """One shared v per run: theta = theta_0 + P v, v <- Adam(P^T mean_i grad CE_i)."""
    v = np.zeros(P.shape[::2], dtype=P.dtype)         # (R, k)
    opt = Adam([v], lr)
    log = []

    def theta():
        return theta0 + (P @ v[..., None])[..., 0]

    for t in range(rounds):
        ce, g = ce_and_grad(theta(), x1, Y)
        if t % log_every == 0:
            log.append((t, ce.mean(1)))
        opt.step([(g.mean(1)[:, None, :] @ P)[:, 0]])  # chain rule: P^T grad
    log.append((rounds, ce_and_grad(theta(), x1, Y)[0].mean(1)))
    return theta(), v, log


def summary_stats(x: np.ndarray) -> np.ndarray:
    """Client descriptors for clustering: per-dimension mean and variance of x, (C, 32)."""
    return np.concatenate([x.mean(-2), x.var(-2)], axis=-1)


def cluster_fit(x_train_all, n_clusters: int, seed: int):
    """k-means on the summary statistics of all training clients (labeled and unlabeled) of
    one run; x_train_all (C, n, 16)."""
    from sklearn.cluster import KMeans

    km = KMeans(n_clusters=n_clusters, n_init=10, random_state=seed % (2**32))
    labels = km.fit_predict(summary_stats(x_train_all))
    return km, labels


def cluster_models(theta0, x1, Y, assign: np.ndarray, n_clusters: int, rounds: int, lr: float,
                   log_every: int = 50):
    """One FedAvg model per cluster from its labeled clients, all clusters and runs at once.

    theta0 (R, d); x1, Y: labeled clients; assign (R, L) their clusters. A cluster without
    labeled clients keeps the FedAvg model of all labeled clients (INFERRED fallback; the spec
    does not say). Returns models (R, K, d) and the log.
    """
    onehot = (assign[:, None, :] == np.arange(n_clusters)[None, :, None]).astype(x1.dtype)
    counts = onehot.sum(2)                            # (R, K)
    agg = onehot / np.maximum(counts, 1)[..., None]   # per-cluster average of client grads
    thetas = np.repeat(theta0[:, None], n_clusters, axis=1)
    rows = np.arange(len(assign))[:, None]
    opt = Adam([thetas], lr)
    log = []
    for t in range(rounds):
        ce, g = ce_and_grad(thetas[rows, assign], x1, Y)   # each client runs its cluster's model
        if t % log_every == 0:
            log.append((t, ce.mean(1)))
        opt.step([agg @ g])
    log.append((rounds, ce_and_grad(thetas[rows, assign], x1, Y)[0].mean(1)))
    empty = counts == 0
    if empty.any():
        glob = fedavg(theta0, x1, Y, rounds, lr)[0]
        thetas = np.where(empty[..., None], glob[:, None], thetas)
    return thetas, log


def oracle_local(theta0, x1, Y, rounds: int, lr: float):
    """Every client trains its own model from theta_0 on its own labeled points (batched)."""
    thetas = np.repeat(theta0[:, None], x1.shape[1], axis=1)
    opt = Adam([thetas], lr)
    for _ in range(rounds):
        opt.step([ce_and_grad(thetas, x1, Y)[1]])
    return thetas
