"""BoVW baseline: a static training codebook (numpy + scikit-learn; no torch).

k-means on the training tokens, a soft-assignment histogram per image against that fixed
codebook (the same per-image smoothing rule as STD-Former: s = the image's mean squared
token-codeword distance), standardised, then multinomial logistic regression.
"""

from __future__ import annotations

import numpy as np
from sklearn.cluster import KMeans
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler


def soft_histogram(V: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """V (n, N, D) tokens, centres (K, D) -> (n, K) mean soft assignments
    a_nk = softmax_k(-||v_n - c_k||^2 / s), s = mean_{n,k} ||v_n - c_k||^2 of the image."""
    V = np.asarray(V, dtype=float)
    d = ((V**2).sum(-1)[..., None] + (centres**2).sum(-1) - 2.0 * V @ centres.T).clip(0.0)
    z = -d / np.maximum(d.mean(axis=(1, 2), keepdims=True), 1e-12)
    z -= z.max(axis=-1, keepdims=True)
    a = np.exp(z)
    a /= a.sum(axis=-1, keepdims=True)
    return a.mean(axis=1)


class BoVW:
    """k-means codebook (K words) + soft histogram + standardisation + logistic regression."""

    def __init__(self, n_words: int = 32, C: float = 1.0, max_iter: int = 1000,
                 n_init: int = 1, seed: int = 0):
        self.n_words, self.C, self.max_iter = n_words, C, max_iter
        self.n_init, self.seed = n_init, seed

    def fit(self, V: np.ndarray, y: np.ndarray) -> BoVW:
        V = np.asarray(V, dtype=float)
        km = KMeans(n_clusters=self.n_words, n_init=self.n_init,
                    random_state=int(self.seed) % 2**32).fit(V.reshape(-1, V.shape[-1]))
        self.centres_ = km.cluster_centers_
        h = soft_histogram(V, self.centres_)
        self.scaler_ = StandardScaler().fit(h)
        self.clf_ = LogisticRegression(C=self.C, max_iter=self.max_iter).fit(
            self.scaler_.transform(h), y)
        return self

    def features(self, V: np.ndarray) -> np.ndarray:
        return self.scaler_.transform(soft_histogram(V, self.centres_))

    def predict(self, V: np.ndarray) -> np.ndarray:
        return self.clf_.predict(self.features(V))
