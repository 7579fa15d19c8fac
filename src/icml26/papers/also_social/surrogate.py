"""The reward surrogates, stacked over lanes (one independent model per lane), in numpy.

``MLPSurrogate``: the reference code's value network (experiments/also/core/bandits/
neural_adversarial_bandit.py, ValueNetwork, with base_bandit.py's defaults): Linear -> GELU ->
Linear -> GELU -> Linear, Xavier-uniform weights and zero biases, no LayerNorm (the default
``use_layer_norm=False``), retrained from scratch on all records of the episode with MSE,
Adam (icml26.npoptim, torch's update), coupled weight decay min(0.01, 0.01 / n_records),
gradient-norm clipping at 1 per model and a cosine learning-rate schedule down to 1% of the
initial rate. Our steps are full-batch (the reference: minibatches of 8 for 100 epochs; see
FIDELITY). ``grad_outputs`` gives the gradient of each prediction with respect to every
parameter, for the NeuralUCB baseline's gradient-diagonal bonus.

``RidgeSurrogate``: the linear special case (depth 0), ridge regression with an unpenalised
intercept, solved in closed form.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import erf

from icml26.npoptim import Adam

SQRT2 = math.sqrt(2.0)
INV_SQRT2PI = 1.0 / math.sqrt(2.0 * math.pi)


def gelu(x):
    """torch.nn.GELU (exact, erf form) and its derivative."""
    cdf = 0.5 * (1.0 + erf(x / SQRT2))
    return x * cdf, cdf + x * INV_SQRT2PI * np.exp(-0.5 * x * x)


def xavier(rng_draw, n_lanes: int, fan_in: int, fan_out: int, dtype) -> np.ndarray:
    """Xavier-uniform weights per lane from uniforms U(0,1) drawn per lane (shape (L, in, out))."""
    bound = math.sqrt(6.0 / (fan_in + fan_out))
    return ((rng_draw((fan_in, fan_out)) * 2.0 - 1.0) * bound).astype(dtype)


class MLPSurrogate:
    """L independent MLPs d -> H -> H -> 1 (GELU), refit from scratch by ``fit``."""

    def __init__(self, d: int, hidden: int, steps: int, lr: float, lr_floor: float = 0.01,
                 clip: float = 1.0, wd_scale: float = 0.01, dtype=np.float32):
        self.d, self.hidden, self.steps, self.lr = int(d), int(hidden), int(steps), float(lr)
        self.lr_floor, self.clip, self.wd_scale, self.dtype = lr_floor, clip, wd_scale, dtype

    def init(self, rng_draw, n_lanes: int) -> MLPSurrogate:
        """Fresh weights (the reference resets the network before every fit)."""
        d, H, dt = self.d, self.hidden, self.dtype
        self.params_ = [xavier(rng_draw, n_lanes, d, H, dt), np.zeros((n_lanes, 1, H), dt),
                        xavier(rng_draw, n_lanes, H, H, dt), np.zeros((n_lanes, 1, H), dt),
                        xavier(rng_draw, n_lanes, H, 1, dt), np.zeros((n_lanes, 1, 1), dt)]
        return self

    def _forward(self, X):
        W1, b1, W2, b2, W3, b3 = self.params_
        z1 = X @ W1 + b1
        a1, d1 = gelu(z1)
        z2 = a1 @ W2 + b2
        a2, d2 = gelu(z2)
        return (a2 @ W3 + b3)[..., 0], (a1, d1, a2, d2)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """X (L, m, d) -> predictions (L, m)."""
        return self._forward(X.astype(self.dtype))[0].astype(np.float64)

    def fit(self, rng_draw, X: np.ndarray, y: np.ndarray) -> MLPSurrogate:
        """Refit every lane's network from scratch on its records X (L, n, d), y (L, n)."""
        L, n, _ = X.shape
        self.init(rng_draw, L)
        X, y = X.astype(self.dtype), y.astype(self.dtype)
        wd = min(self.wd_scale, self.wd_scale / max(1, n))
        opt = Adam(self.params_, lr=self.lr, weight_decay=wd)
        floor = self.lr * self.lr_floor
        Xt = X.transpose(0, 2, 1)
        for step in range(self.steps):
            # torch's CosineAnnealingLR(T_max=steps, eta_min=1% lr), one step per epoch
            opt.lr = floor + (self.lr - floor) * 0.5 * (1.0 + math.cos(math.pi * step / self.steps))
            W1, b1, W2, b2, W3, b3 = self.params_
            out, (a1, d1, a2, d2) = self._forward(X)
            g = ((2.0 / n) * (out - y))[..., None]                  # dMSE/dout, (L, n, 1)
            gW3 = a2.transpose(0, 2, 1) @ g
            gb3 = g.sum(axis=1, keepdims=True)
            gz2 = (g @ W3.transpose(0, 2, 1)) * d2
            gW2 = a1.transpose(0, 2, 1) @ gz2
            gb2 = gz2.sum(axis=1, keepdims=True)
            gz1 = (gz2 @ W2.transpose(0, 2, 1)) * d1
            gW1 = Xt @ gz1
            gb1 = gz1.sum(axis=1, keepdims=True)
            grads = [gW1, gb1, gW2, gb2, gW3, gb3]
            # torch.nn.utils.clip_grad_norm_(max_norm=1) per model
            norm = np.sqrt(sum(np.einsum("lij,lij->l", gg, gg) for gg in grads))
            scale = np.minimum(1.0, self.clip / (norm + 1e-6)).astype(self.dtype)[:, None, None]
            opt.step([gg * scale for gg in grads])
        return self

    def grad_outputs(self, X: np.ndarray, lanes=slice(None)) -> tuple[np.ndarray, np.ndarray]:
        """Predictions (l, m) and d prediction / d parameters, flattened: (l, m, P), for the
        models ``lanes`` (a slice; X holds their inputs)."""
        full = self.params_
        self.params_ = [q[lanes] for q in full]
        try:
            W1, b1, W2, b2, W3, b3 = self.params_
            X = X.astype(self.dtype)
            out, (a1, d1, a2, d2) = self._forward(X)
        finally:
            self.params_ = full
        L, m, _ = X.shape
        gz2 = W3[:, None, :, 0] * d2                                 # (L, m, H)
        gz1 = (gz2 @ W2.transpose(0, 2, 1)) * d1                     # (L, m, H)
        parts = [(X[..., :, None] * gz1[..., None, :]).reshape(L, m, -1), gz1,
                 (a1[..., :, None] * gz2[..., None, :]).reshape(L, m, -1), gz2,
                 a2, np.ones((L, m, 1), self.dtype)]
        return out.astype(np.float64), np.concatenate(parts, axis=-1).astype(np.float64)


class RidgeSurrogate:
    """Per-lane ridge regression, penalty ``lam`` on the weights, free intercept."""

    def __init__(self, lam: float):
        self.lam = float(lam)

    def fit(self, X: np.ndarray, y: np.ndarray) -> RidgeSurrogate:
        L, n, d = X.shape
        Xc = X - X.mean(axis=1, keepdims=True)
        yc = y - y.mean(axis=1, keepdims=True)
        A = Xc.transpose(0, 2, 1) @ Xc + self.lam * np.eye(d)
        self.w_ = np.linalg.solve(A, (Xc.transpose(0, 2, 1) @ yc[..., None]))[..., 0]
        self.b_ = y.mean(axis=1) - np.einsum("lnd,ld->l", X, self.w_) / n
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        if not hasattr(self, "w_"):
            return np.zeros(X.shape[:2])
        return np.einsum("lmd,ld->lm", X, self.w_) + self.b_[:, None]
