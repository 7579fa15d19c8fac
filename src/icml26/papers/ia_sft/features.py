"""Per-pixel change features: the "foundation model" stand-in (a spectral autoencoder,
pretrained without labels), the raw-spectra framework of the plug-and-play analysis, and the
random Fourier feature map of the head.

The autoencoder B -> 64 -> 16 -> 64 -> B (ReLU on the 64-unit layers, linear code and output;
INFERRED: where the ReLUs sit) is written in numpy with icml26.npoptim.Adam (the spec: 150 Adam
steps, lr 3e-3, batch 512, reconstruction MSE, all pixels of both dates).
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from icml26.npoptim import Adam


def standardise(x: np.ndarray, axis=0) -> np.ndarray:
    mu = x.mean(axis=axis, keepdims=True)
    sd = x.std(axis=axis, keepdims=True)
    return (x - mu) / np.where(sd > 0, sd, 1.0)


def _init_linear(rng, fan_in, fan_out):
    """PyTorch's default Linear init U(-1/sqrt(fan_in), +)."""
    bound = 1.0 / np.sqrt(fan_in)
    return [rng.uniform(-bound, bound, (fan_in, fan_out)), rng.uniform(-bound, bound, fan_out)]


class SpectralAutoencoder:
    """x -> ReLU(x W1 + b1) W2 + b2 = code -> ReLU(code W3 + b3) W4 + b4 = reconstruction."""

    def __init__(self, hidden=64, code=16, steps=150, lr=3e-3, batch=512):
        self.hidden, self.code, self.steps, self.lr, self.batch = hidden, code, steps, lr, batch

    def _forward(self, x):
        w1, b1, w2, b2, w3, b3, w4, b4 = self.params_
        h1 = np.maximum(x @ w1 + b1, 0.0)
        c = h1 @ w2 + b2
        h2 = np.maximum(c @ w3 + b3, 0.0)
        return (h1, c, h2), h2 @ w4 + b4

    def loss_and_grads(self, xb: np.ndarray):
        """Reconstruction MSE of the minibatch xb and its gradients (hand-written backward)."""
        (h1, c, h2), r = self._forward(xb)
        w1, b1, w2, b2, w3, b3, w4, b4 = self.params_
        d = r - xb
        dr = 2.0 * d / d.size
        gw4, gb4 = h2.T @ dr, dr.sum(0)
        dh2 = (dr @ w4.T) * (h2 > 0)
        gw3, gb3 = c.T @ dh2, dh2.sum(0)
        dc = dh2 @ w3.T
        gw2, gb2 = h1.T @ dc, dc.sum(0)
        dh1 = (dc @ w2.T) * (h1 > 0)
        gw1, gb1 = xb.T @ dh1, dh1.sum(0)
        return float(np.mean(d * d)), [gw1, gb1, gw2, gb2, gw3, gb3, gw4, gb4]

    def init(self, bands: int, rng: np.random.Generator):
        self.params_ = (_init_linear(rng, bands, self.hidden)
                        + _init_linear(rng, self.hidden, self.code)
                        + _init_linear(rng, self.code, self.hidden)
                        + _init_linear(rng, self.hidden, bands))
        return self

    def fit(self, x: np.ndarray, rng: np.random.Generator):
        """x (n, B), already standardised. Keeps ``loss_`` (per-step minibatch MSE)."""
        n, bands = x.shape
        self.init(bands, rng)
        opt = Adam(self.params_, self.lr)
        losses = []
        for _ in range(int(self.steps)):
            loss, grads = self.loss_and_grads(x[rng.integers(0, n, int(self.batch))])
            losses.append(loss)
            opt.step(grads)
        self.loss_ = np.array(losses)
        return self

    def encode(self, x: np.ndarray) -> np.ndarray:
        return self._forward(x)[0][1]

    def mse(self, x: np.ndarray) -> float:
        r = self._forward(x)[1]
        return float(np.mean((r - x) ** 2))


def ae_change_features(e1: np.ndarray, e2: np.ndarray, size: int, window: int = 3) -> np.ndarray:
    """z = [E(x1), E(x2), |E(x1) - E(x2)|, mean over the window x window neighbourhood of
    |E(x1) - E(x2)|] (spec), standardised with the statistics of all pixels (labelled and
    unlabelled). e1, e2: (size*size, code)."""
    d = np.abs(e1 - e2)
    dbar = ndimage.uniform_filter(d.reshape(size, size, -1), size=(window, window, 1),
                                  mode="nearest").reshape(d.shape)
    return standardise(np.concatenate([e1, e2, d, dbar], axis=1))


def raw_change_features(x1: np.ndarray, x2: np.ndarray, n_components: int) -> np.ndarray:
    """The plug-and-play framework: z = PCA_k([x1, x2, |x1 - x2|]) (spec), on standardised
    columns, each component's sign fixed so that its largest loading is positive (the same on
    every LAPACK), then standardised (INFERRED: as the autoencoder features are)."""
    f = standardise(np.concatenate([x1, x2, np.abs(x1 - x2)], axis=1))
    _, _, vt = np.linalg.svd(f, full_matrices=False)
    comps = vt[:n_components]
    big = comps[np.arange(len(comps)), np.argmax(np.abs(comps), axis=1)]
    comps = comps * np.sign(big)[:, None]
    return standardise(f @ comps.T)


def window_mean(z: np.ndarray, size: int, window: int) -> np.ndarray:
    """zbar: mean of z over a window x window spatial neighbourhood (AFCD's global branch)."""
    return ndimage.uniform_filter(z.reshape(size, size, -1), size=(window, window, 1),
                                  mode="nearest").reshape(z.shape)


def median_distance(z: np.ndarray, rng: np.random.Generator, n_pixels: int) -> float:
    """Bandwidth of the RBF kernel: median pairwise distance of z on n random pixels (spec)."""
    idx = rng.choice(len(z), size=min(int(n_pixels), len(z)), replace=False)
    s = z[idx]
    sq = (s * s).sum(1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2 * s @ s.T, 0.0)
    iu = np.triu_indices(len(s), 1)
    return float(np.median(np.sqrt(d2[iu])))


class RandomFourierFeatures:
    """phi(z) = sqrt(2 / D) cos(z Omega + b), Omega ~ N(0, I / bandwidth^2), b ~ U(0, 2 pi):
    phi(z) . phi(z') approximates the RBF kernel exp(-|z - z'|^2 / (2 bandwidth^2))."""

    def __init__(self, n_features: int, bandwidth: float):
        self.n_features, self.bandwidth = int(n_features), float(bandwidth)

    def fit(self, dim: int, rng: np.random.Generator):
        self.omega_ = rng.standard_normal((dim, self.n_features)) / self.bandwidth
        self.phase_ = rng.uniform(0, 2 * np.pi, self.n_features)
        return self

    def transform(self, z: np.ndarray) -> np.ndarray:
        return np.sqrt(2.0 / self.n_features) * np.cos(z @ self.omega_ + self.phase_)
