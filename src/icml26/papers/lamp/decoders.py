"""SDF decoders (torch): stacked MLPs trained side by side, flattened weight vectors, decoding.

A decoder is an icml26.stacked network (layer l: W (R, in, out), b (R, 1, out)) with SiLU
between layers. R decoders train as one computation: the loss is the sum over decoders of each
one's mean clamped L1 loss, so each gets exactly its own gradient, and Adam is elementwise.
The flattened weight vector of a decoder is W1, b1, W2, b2, ... in that order; mixing is linear
in it, so any fixed order would do.
"""

from __future__ import annotations

import numpy as np
import torch
from torch.nn import functional as F

from icml26 import stacked


def sdf_sizes(dim: int, hidden: int, layers: int = 2) -> list[int]:
    """dim -> hidden x layers -> 1 (the spec's 2 -> 32 -> 32 -> 1: 1,185 parameters)."""
    return [dim] + [hidden] * layers + [1]


def n_params(sizes) -> int:
    return int(sum(a * b + b for a, b in zip(sizes[:-1], sizes[1:], strict=True)))


def init(sizes, seeds, device, out_scale: float = 0.1):
    """nn.Linear's default initialisation per decoder (icml26.stacked.uniform_init, one seed
    each) with the output layer scaled by ``out_scale`` and a zero output bias (our choice):
    the clamped loss has no gradient where a prediction starts beyond the clamp, so decoders
    start with outputs well inside it."""
    layers = stacked.uniform_init(sizes, seeds, device)
    with torch.no_grad():
        layers[-1][0].mul_(out_scale)
        layers[-1][1].zero_()
    return layers


def forward(layers, x: torch.Tensor) -> torch.Tensor:
    """x (R, B, in) -> (R, B)."""
    return stacked.forward(layers, x, F.silu)[..., 0]


def clamped_l1(pred: torch.Tensor, target: torch.Tensor, delta: float) -> torch.Tensor:
    """DeepSDF loss per decoder: mean over points of |clamp(f, +-d) - clamp(s, +-d)| (R,)."""
    return (pred.clamp(-delta, delta) - target.clamp(-delta, delta)).abs().mean(-1)


def flatten(layers) -> torch.Tensor:
    """(R, n_params) weight vectors of the stacked decoders."""
    return torch.cat([t.detach().reshape(t.shape[0], -1) for t in stacked.parameters(layers)], 1)


def unflatten(flat: torch.Tensor, sizes) -> list[list[torch.Tensor]]:
    """Stacked layers from weight vectors (R, n_params) (views, no gradient)."""
    out, k = [], 0
    R = flat.shape[0]
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        w = flat[:, k:k + a * b].reshape(R, a, b)
        k += a * b
        bias = flat[:, k:k + b].reshape(R, 1, b)
        k += b
        out.append([w, bias])
    return out


def _loss_and_grads(layers, x, s, delta: float, chunk: int):
    """Per-decoder loss (R,) and the gradients of their sum, ``chunk`` decoders at a time.

    Decoders are independent (each row of a batched matmul is its own product), so the
    chunks give the same numbers as one pass; chunks of a few dozen keep the activations
    in cache (300 decoders x 512 points x 32 units is ~20 MB per layer): 10-20% faster."""
    R = x.shape[0]
    if R <= chunk:
        params = stacked.parameters(layers)
        loss = clamped_l1(forward(layers, x), s, delta)
        return loss.detach(), torch.autograd.grad(loss.sum(), params)
    losses, grads = [], []
    cuts = np.linspace(0, R, -(-R // chunk) + 1).round().astype(int)   # near-equal chunks
    for i, j in zip(cuts[:-1], cuts[1:], strict=True):
        part = [[w[i:j].detach().requires_grad_(True),
                 b[i:j].detach().requires_grad_(True)] for w, b in layers]
        loss = clamped_l1(forward(part, x[i:j]), s[i:j], delta)
        grads.append(torch.autograd.grad(loss.sum(), stacked.parameters(part)))
        losses.append(loss.detach())
    return torch.cat(losses), [torch.cat(g) for g in zip(*grads, strict=True)]


def fit(layers, batch, steps: int, lr: float, delta: float, log_every: int, chunk: int = 32):
    """Adam (betas 0.9, 0.999; icml26.lm.optim's update with no weight decay, which avoids
    torch.optim's ~2 CPU-s import) on the stacked decoders for ``steps`` steps; ``batch(step)``
    gives the inputs (R, B, in) and target SDF values (R, B). Returns the per-decoder loss
    (n_logs, R) at steps 0, log_every, ... and the last step. Forward and backward run
    ``chunk`` decoders at a time (same numbers, better cache use)."""
    from icml26.lm.optim import AdamW

    params = stacked.parameters(layers)
    opt = AdamW(params, lr=lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)
    logs = []
    for step in range(steps):
        x, s = batch(step)
        loss, grads = _loss_and_grads(layers, x, s, delta, chunk)
        for p, g in zip(params, grads, strict=True):
            p.grad = g
        opt.step()
        if step % log_every == 0 or step == steps - 1:
            logs.append(loss.detach().cpu().numpy().copy())
    return np.array(logs)


@torch.no_grad()
def decode(flat: torch.Tensor, sizes, points: torch.Tensor, chunk: int = 8) -> np.ndarray:
    """f_w on shared points (G, d) for every weight vector (R, n_params) -> (R, G) numpy.
    Chunks of 8 decoders keep a layer's activations (8 x 9,216 x 32) in cache: 2x faster
    than 32 on the 2-D grid, same numbers (each decoder is its own matmul)."""
    out = []
    for i in range(0, flat.shape[0], chunk):
        part = flat[i:i + chunk]
        x = points.expand(part.shape[0], -1, -1)
        out.append(forward(unflatten(part, sizes), x).cpu().numpy())
    return np.concatenate(out) if out else np.zeros((0, points.shape[0]), np.float32)


@torch.no_grad()
def decode_conditional(layers, r: int, points: torch.Tensor, targets: torch.Tensor,
                       chunk: int = 8) -> np.ndarray:
    """Conditional decoder r at inputs (x, p*) for every target (T, n_params) -> (T, G)."""
    model = [[w[r], b[r]] for w, b in layers]
    out = []
    G = points.shape[0]
    for i in range(0, targets.shape[0], chunk):
        t = targets[i:i + chunk]
        x = torch.cat([points.expand(len(t), -1, -1),
                       t[:, None, :].expand(-1, G, -1)], -1).reshape(-1, points.shape[1] +
                                                                    targets.shape[1])
        for k, (w, b) in enumerate(model):
            x = torch.addmm(b, x, w)
            if k < len(model) - 1:
                x = F.silu(x)
        out.append(x.reshape(len(t), G).cpu().numpy())
    return np.concatenate(out)
