"""Finite two-layer network trained online with spherical SGD (the spec's numerical validation).

f(x) = (1/N) sum_j a_j sigma(<w_j, x>), ||w_j|| = 1, all a_j = a0 at start, w_j uniform on the
sphere. Each step draws a fresh batch of B Gaussian inputs (online: no training set to overfit):

    a_j <- a_j - eta_a mean_batch[(f - y) sigma(<w_j, x>)]
    g_j  = mean_batch[(f - y) a_j sigma'(<w_j, x>) x], projected on the tangent space at w_j
    w_j <- normalise(w_j - (eta_a / eps) g_j)

(mean-field scaling: the per-unit rates are N times the plain gradient's, so that the average
over units follows the ODE's da/dt = -dL/da and eps dm/dt = -(1 - m^2) dL/dm; one step is
eta_a of ODE time). w* = e_1, so the overlap of unit j is W[j, 0].
"""

from __future__ import annotations

import numpy as np

from .model import target

F = np.float32  # training precision (the budget); records in float64


def _act(h, activation):
    if activation == "relu":
        return np.maximum(h, 0), (h > 0).astype(h.dtype)
    th = np.tanh(h)
    return th, 1 - th * th


class OnlineNetwork:
    """Constructor stores the hyper-parameters; ``fit`` trains and leaves the records in
    ``t_, m_, a_, loss_`` (times, mean overlap, mean second-layer weight, evaluation loss)."""

    def __init__(self, beta, a0, eps, *, d, width, batch, steps, eta_a, record_every, n_eval,
                 activation="relu"):
        self.beta, self.a0, self.eps = float(beta), float(a0), float(eps)
        self.d, self.width, self.batch, self.steps = int(d), int(width), int(batch), int(steps)
        self.eta_a, self.record_every, self.n_eval = float(eta_a), int(record_every), int(n_eval)
        self.activation = activation

    def init(self, rng: np.random.Generator):
        W = rng.standard_normal((self.width, self.d))
        W /= np.linalg.norm(W, axis=1, keepdims=True)
        return W.astype(F), np.full(self.width, self.a0, dtype=F)

    def forward(self, W, a, X):
        h = X @ W.T
        s, ds = _act(h, self.activation)
        return s @ a / F(self.width), h, s, ds

    def eval_loss(self, W, a, X, y) -> float:
        f = self.forward(W, a, X)[0]
        r = f.astype(np.float64) - y
        return float(0.5 * np.mean(r * r))

    def step(self, W, a, X):
        """One spherical SGD step on the batch X; returns the new (W, a)."""
        y = target(X[:, 0], F(self.beta)).astype(F)
        f, _, s, ds = self.forward(W, a, X)
        r = f - y
        B = F(X.shape[0])
        grad_a = s.T @ r / B
        G = ((r[:, None] * ds) * a[None, :]).T @ X / B
        G -= np.sum(G * W, axis=1, keepdims=True) * W          # tangent space of the sphere
        W = W - F(self.eta_a / self.eps) * G
        W /= np.linalg.norm(W, axis=1, keepdims=True)
        return W, a - F(self.eta_a) * grad_a

    def fit(self, rng: np.random.Generator, eval_rng: np.random.Generator, loss_every=None):
        """Train for ``steps`` steps. m and a are recorded every ``record_every`` steps; the
        evaluation-batch loss at every ``loss_every``-th step, at the last record and at the
        record where m peaks (from a snapshot of the weights), NaN at the other records."""
        loss_every = int(loss_every or self.record_every)
        W, a = self.init(rng)
        X_eval = eval_rng.standard_normal((self.n_eval, self.d), dtype=F)
        y_eval = target(X_eval[:, 0].astype(np.float64), self.beta)
        steps, snaps = [], []
        for k in range(self.steps + 1):
            if k % self.record_every == 0 or k == self.steps:
                steps.append(k)
                snaps.append((W.copy(), a.copy()))
            if k < self.steps:
                W, a = self.step(W, a, rng.standard_normal((self.batch, self.d), dtype=F))
        steps = np.asarray(steps)
        m = np.array([float(w[:, 0].astype(np.float64).mean()) for w, _ in snaps])
        peak = int(np.argmax(m))
        loss = np.full(len(steps), np.nan)
        for i, k in enumerate(steps):
            if k % loss_every == 0 or i == len(steps) - 1 or i == peak:
                loss[i] = self.eval_loss(*snaps[i], X_eval, y_eval)
        self.t_ = steps * self.eta_a
        self.m_ = m
        self.a_ = np.array([float(u.astype(np.float64).mean()) for _, u in snaps])
        self.loss_ = loss
        self.W_, self.a_units_ = W, a
        return self
