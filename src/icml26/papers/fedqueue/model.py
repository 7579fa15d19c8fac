"""The models trained by the facilities, as one flat parameter vector each.

Every server rule of this paper (averaging, deltas, mixing, buffers) is arithmetic on whole
models, so a model is a flat float64 vector and the layers are views into it. That keeps the
server side to one vector operation per rule.

- ``MLP`` 64-32-10 (ReLU), the spec's model. Initialised with ``icml26.fed.mlp_init``
  (PyTorch's default Linear init). Its SGD step is written out for one model without a
  client axis: the batched ``fed.local_sgd`` costs ~240 us per step on a single client and
  this one ~75 us, and the budget holds ~10^6 local steps at default. The test checks that
  its gradient equals ``fed.softmax_xent`` + ``fed.mlp_grads``.
- ``CNN`` (full profile only, INFERRED architecture: the spec says "a small CNN on the 8x8
  digits"): 3x3 valid convolution with 8 filters (6x6x8), ReLU, a dense layer to the classes.
  The convolution is a matmul over the 36 image patches (im2col), gradients by hand.
"""

from __future__ import annotations

import numpy as np

from icml26 import fed


class FlatModel:
    """Layer shapes, views into a flat vector, and an SGD step on one mini-batch."""

    shapes: list[tuple[int, ...]]

    def __init__(self, shapes):
        self.shapes = [tuple(s) for s in shapes]
        sizes = [int(np.prod(s)) for s in self.shapes]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        self.size = int(self.offsets[-1])

    def views(self, theta: np.ndarray) -> list[np.ndarray]:
        """Views (not copies) of the layers: writing into them writes into theta."""
        return [theta[a:b].reshape(s) for a, b, s in
                zip(self.offsets[:-1], self.offsets[1:], self.shapes, strict=True)]

    def flatten(self, params) -> np.ndarray:
        return np.concatenate([np.asarray(p, dtype=np.float64).ravel() for p in params])

    def local_sgd(self, theta: np.ndarray, x: np.ndarray, y: np.ndarray, batches, lr: float):
        """Plain mini-batch SGD from theta over the given index batches; returns a new vector."""
        out = theta.copy()
        layers = self.views(out)
        for idx in batches:
            grads = self.grads(layers, x[idx], y[idx])
            for p, g in zip(layers, grads, strict=True):
                p -= lr * g
        return out

    def accuracy(self, theta: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
        return float(np.mean(self.logits(self.views(theta), x).argmax(axis=1) == y))


def _xent_dlogits(z: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Gradient of the mean softmax cross-entropy w.r.t. the logits z (overwrites z)."""
    z -= z.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=1, keepdims=True)
    z[np.arange(len(y)), y] -= 1.0
    z /= len(y)
    return z


class MLP(FlatModel):
    """ReLU MLP d_in-hidden-classes (the spec's 64-32-10)."""

    def __init__(self, d_in: int, hidden: int, n_classes: int):
        self.sizes = (d_in, hidden, n_classes)
        super().__init__([(d_in, hidden), (hidden,), (hidden, n_classes), (n_classes,)])

    def init(self, rng: np.random.Generator) -> np.ndarray:
        return self.flatten(fed.mlp_init(list(self.sizes), rng))

    def logits(self, layers, x):
        return fed.mlp_forward(layers, x)[0]

    def grads(self, layers, xb, yb):
        w1, b1, w2, b2 = layers
        h = xb @ w1
        h += b1
        np.maximum(h, 0.0, out=h)
        dz = _xent_dlogits(h @ w2 + b2, yb)
        dh = dz @ w2.T
        dh *= h > 0
        return [xb.T @ dh, dh.sum(axis=0), h.T @ dz, dz.sum(axis=0)]


class CNN(FlatModel):
    """conv3x3 (8 filters, valid) -> ReLU -> dense, on side x side single-channel images."""

    def __init__(self, side: int = 8, filters: int = 8, n_classes: int = 10, kernel: int = 3):
        out = side - kernel + 1
        r, c = np.meshgrid(np.arange(out), np.arange(out), indexing="ij")
        kr, kc = np.meshgrid(np.arange(kernel), np.arange(kernel), indexing="ij")
        # patch index (position, tap) into the flattened image
        self.patch = ((r.reshape(-1, 1) + kr.reshape(1, -1)) * side
                      + c.reshape(-1, 1) + kc.reshape(1, -1))
        self.taps, self.filters, self.positions = kernel * kernel, filters, out * out
        self.n_classes = n_classes
        super().__init__([(self.taps, filters), (filters,),
                          (self.positions * filters, n_classes), (n_classes,)])

    def init(self, rng: np.random.Generator) -> np.ndarray:
        # PyTorch default init bounds 1/sqrt(fan_in) for Conv2d (fan_in = taps) and Linear
        out = []
        for shape, fan_in in zip(self.shapes, (self.taps, self.taps,
                                               self.positions * self.filters,
                                               self.positions * self.filters), strict=True):
            bound = 1.0 / np.sqrt(fan_in)
            out.append(rng.uniform(-bound, bound, shape))
        return self.flatten(out)

    def _hidden(self, layers, x):
        wc, bc = layers[0], layers[1]
        patches = x[:, self.patch]                              # (B, positions, taps)
        h = patches @ wc + bc                                   # (B, positions, filters)
        np.maximum(h, 0.0, out=h)
        return patches, h

    def logits(self, layers, x):
        _, h = self._hidden(layers, x)
        return h.reshape(len(x), -1) @ layers[2] + layers[3]

    def grads(self, layers, xb, yb):
        wd = layers[2]
        patches, h = self._hidden(layers, xb)
        flat = h.reshape(len(xb), -1)
        dz = _xent_dlogits(flat @ wd + layers[3], yb)
        dh = (dz @ wd.T).reshape(h.shape) * (h > 0)
        gwc = patches.reshape(-1, self.taps).T @ dh.reshape(-1, self.filters)
        return [gwc, dh.sum(axis=(0, 1)), flat.T @ dz, dz.sum(axis=0)]


def build(kind: str, d_in: int, n_classes: int, hidden: int = 32) -> FlatModel:
    if kind == "mlp":
        return MLP(d_in, hidden, n_classes)
    if kind == "cnn":
        side = int(round(np.sqrt(d_in)))
        if side * side != d_in:
            raise ValueError(f"cnn needs square images; d_in={d_in}")
        return CNN(side=side, n_classes=n_classes)
    raise ValueError(f"unknown model {kind!r}; allowed: mlp, cnn")
