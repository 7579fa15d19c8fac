"""The personalized model f(x; theta) as a flat parameter vector (Adam: icml26.npoptim).

f is the ReLU MLP 16 -> 32 -> 4 (d = 676 parameters) of icml26.fed, stored flat so that a
client's parameters can be written theta = theta_0 + P v. ``unflatten`` turns a stack of flat
vectors (..., d) into fed's [W1, b1, W2, b2] with the same leading axes; ``ce_and_grad`` runs
every client's own model on its own data in one batched pass and returns the flat gradient.
"""

from __future__ import annotations

import numpy as np

from icml26 import fed

SIZES = (16, 32, 4)


def shapes(sizes=SIZES) -> list[tuple[int, ...]]:
    out: list[tuple[int, ...]] = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        out += [(a, b), (b,)]
    return out


def n_params(sizes=SIZES) -> int:
    return int(sum(np.prod(s) for s in shapes(sizes)))


def flatten(params: list[np.ndarray], lead: int = 0) -> np.ndarray:
    """[W1, b1, ...] (with ``lead`` leading axes) -> (..., d)."""
    return np.concatenate([p.reshape(p.shape[:lead] + (-1,)) for p in params], axis=-1)


def unflatten(theta: np.ndarray, sizes=SIZES) -> list[np.ndarray]:
    lead = theta.shape[:-1]
    out, i = [], 0
    for s in shapes(sizes):
        size = int(np.prod(s))
        out.append(theta[..., i:i + size].reshape(lead + s))
        i += size
    return out


def init_theta0(rng: np.random.Generator, sizes=SIZES) -> np.ndarray:
    """theta_0: PyTorch's default Linear init U(-1/sqrt(fan_in), +), flattened."""
    return flatten(fed.mlp_init(list(sizes), rng))


def one_hot(y: np.ndarray, dtype=np.float64) -> np.ndarray:
    return (y[..., None] == np.arange(SIZES[-1])).astype(dtype)


def with_ones(x: np.ndarray) -> np.ndarray:
    """[x, 1]: with it a layer's bias is the last row of its weight matrix."""
    out = np.empty(x.shape[:-1] + (x.shape[-1] + 1,), dtype=x.dtype)
    out[..., -1] = 1.0
    out[..., :-1] = x
    return out


def _sum_last(a: np.ndarray) -> np.ndarray:
    """Sum over a short last axis (4 classes) as column adds: much faster than a reduction."""
    out = a[..., 0].copy()
    for c in range(1, a.shape[-1]):
        out += a[..., c]
    return out[..., None]


def ce_and_grad(theta: np.ndarray, x1: np.ndarray, Y: np.ndarray):
    """Each client's mean cross-entropy and its gradient w.r.t. the client's flat theta.

    theta (..., C, d), or (..., d) shared by the clients; x1 = with_ones(x) (..., C, n, 17);
    Y one-hot labels (..., C, n, 4). Returns loss (..., C) and one gradient per client
    (..., C, d).

    The same computation as fed.mlp_forward + fed.softmax_xent + fed.mlp_grads (tested
    against them), fused for this case because it is every method's inner loop. The flat
    layout [W1, b1, W2, b2] is [W1; b1] (17 x 32) followed by [W2; b2] (33 x 4), so with a
    ones column on the inputs each layer is one matmul and its gradient one matmul.
    """
    extra = (x1.ndim - 1) - theta.ndim                # 1: one model shared by the clients
    theta = theta.reshape(theta.shape[:-1] + (1,) * extra + theta.shape[-1:])
    d_in, d_h, d_out = SIZES
    n1 = (d_in + 1) * d_h
    A1 = theta[..., :n1].reshape(theta.shape[:-1] + (d_in + 1, d_h))
    A2 = theta[..., n1:].reshape(theta.shape[:-1] + (d_h + 1, d_out))
    h1 = np.empty(x1.shape[:-1] + (d_h + 1,), dtype=np.result_type(x1, theta))
    h1[..., -1] = 1.0
    np.maximum(x1 @ A1, 0.0, out=h1[..., :-1])
    z = h1 @ A2
    zmax = z[..., :1].copy()
    for c in range(1, d_out):
        np.maximum(zmax, z[..., c:c + 1], out=zmax)
    z -= zmax
    p = np.exp(z)
    p /= _sum_last(p)
    n = x1.shape[-2]
    logp_y = np.log(_sum_last(p * Y)[..., 0] + 1e-30)
    loss = -logp_y.sum(-1) / n
    dz = (p - Y) / n
    T = np.swapaxes
    g2 = T(h1, -1, -2) @ dz                           # [gW2; gb2]
    dh = dz @ T(A2[..., :-1, :], -1, -2)
    dh *= h1[..., :-1] > 0
    g1 = T(x1, -1, -2) @ dh                           # [gW1; gb1]
    lead = x1.shape[:-2]
    g1 = np.broadcast_to(g1, lead + g1.shape[-2:]).reshape(lead + (-1,))
    g2 = np.broadcast_to(g2, lead + g2.shape[-2:]).reshape(lead + (-1,))
    return loss, np.concatenate([g1, g2], axis=-1)


def accuracy(theta: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-client accuracy (leading axes of x) of the clients' models on their points."""
    logits, _ = fed.mlp_forward(unflatten(theta), x)
    return (logits.argmax(-1) == y).mean(-1)

