"""Continued fractions f(a_1..a_D) = 1/(a_1 + 1/(a_2 + ... + 1/a_D)) and their gradients (torch).

Two ways to compute the same function of coefficients stacked along dim 0 (shape (D, ...)):

- ``cf_continuant``: the paper's form. Suffix continuants
      K_{D+1:D} = 1,  K_{D:D} = a_D,  K_{k:D} = a_k K_{k+1:D} + K_{k+2:D}   (k = D-1 .. 1)
  are multiply-adds only; then r = 1 / K_{1:D} is the ONE division, f = K_{2:D} r.
  The backward pass (a custom ``torch.autograd.Function``) reuses r:
      df/da_k = (-1)^k (K_{k+1:D} r)^2,     k = 1..D
  (Dhurandhar et al. 2026 / continuant identities, Knuth TAOCP 4.5.3).
- ``cf_nested``: the textbook nested divisions v_D = a_D, v_k = a_k + 1/v_{k+1}, f = 1/v_1,
  differentiated by PyTorch autograd (D divisions; the "naive-autograd CF" baseline).

Pole handling (INFERRED, after CoFrNets): K_{1:D} is replaced by sign(K) max(|K|, eps) with
sign(0) := 1 and eps = 0.05, in the forward AND the backward pass (the backward uses the
clamped r in the formula above, so the gradient stays bounded by K_{k+1:D}^2 / eps^2).
The nested form has no clamp: an exact zero inside (v_k = 0 for some k > 1) makes its
autograd backward produce 0 * inf = NaN even though f itself is finite.
"""

from __future__ import annotations

import numpy as np
import torch

POLE_EPS = 0.05  # INFERRED: |K_{1:D}| is kept >= 0.05


def clamp_pole(k1: torch.Tensor, eps: float = POLE_EPS) -> torch.Tensor:
    """sign(K) max(|K|, eps) with sign(0) := 1 (keeps the one division away from zero)."""
    sign = torch.where(k1 >= 0, torch.ones_like(k1), -torch.ones_like(k1))
    return sign * k1.abs().clamp_min(eps)


class ContinuantCF(torch.autograd.Function):
    """f = K_{2:D} / K_{1:D} with the continuant gradient (one division, reused in backward)."""

    @staticmethod
    def forward(ctx, a: torch.Tensor, eps: float = POLE_EPS) -> torch.Tensor:
        depth = a.shape[0]
        # buf[i] = K_{i+1:D} for i = 0..D (buf[D] = K_{D+1:D} = 1), written in place: the
        # suffix continuants K_{2:D}..K_{D+1:D} are exactly what the backward pass needs
        buf = torch.empty((depth + 1,) + a.shape[1:], dtype=a.dtype, device=a.device)
        buf[depth].fill_(1.0)
        buf[depth - 1].copy_(a[depth - 1])
        for i in range(depth - 2, -1, -1):          # K_{k:D} = a_k K_{k+1:D} + K_{k+2:D}
            torch.addcmul(buf[i + 2], a[i], buf[i + 1], out=buf[i])
        r = torch.reciprocal(clamp_pole(buf[0], eps))   # the only division
        f = buf[1] * r
        ctx.save_for_backward(buf, r)
        return f

    @staticmethod
    def backward(ctx, grad_f: torch.Tensor):
        buf, r = ctx.saved_tensors
        tail = buf[1:]                              # tail[k-1] = K_{k+1:D}, k = 1..D
        # grad_a_k = grad_f (-1)^k (K_{k+1:D} r)^2 = (-1)^k K_{k+1:D}^2 (grad_f r^2)
        g = grad_f * r * r
        grad_a = tail * tail
        grad_a.mul_(g)
        grad_a[0::2].neg_()                         # (-1)^k: k = 1, 3, 5, ... are negative
        return grad_a, None


def cf_continuant(a: torch.Tensor, eps: float = POLE_EPS) -> torch.Tensor:
    """The continued fraction of a (D, ...) coefficient tensor, continuant forward/backward."""
    return ContinuantCF.apply(a, eps)


def cf_nested(a: torch.Tensor) -> torch.Tensor:
    """Nested divisions v_D = a_D, v_k = a_k + 1/v_{k+1}, f = 1/v_1 (autograd baseline)."""
    v = a[-1]
    for i in range(a.shape[0] - 2, -1, -1):
        v = a[i] + 1.0 / v
    return 1.0 / v


def analytic_grad_np(a: np.ndarray) -> np.ndarray:
    """df/da_k = (-1)^k (K_{k+1:D} / K_{1:D})^2 in numpy float64 (no clamp), a of shape (D, ...).

    The reference of the gradient tests, written independently of the torch code.
    """
    a = np.asarray(a, dtype=np.float64)
    depth = a.shape[0]
    k = np.empty((depth + 2,) + a.shape[1:])
    k[depth + 1] = 0.0          # K_{D+2:D} = 0 so that the recursion also gives K_{D:D} = a_D
    k[depth] = 1.0              # K_{D+1:D}
    for i in range(depth - 1, -1, -1):
        k[i] = a[i] * k[i + 1] + k[i + 2]
    signs = np.array([(-1.0) ** j for j in range(1, depth + 1)])
    signs = signs.reshape((depth,) + (1,) * (a.ndim - 1))
    return signs * (k[1 : depth + 1] / k[0]) ** 2
