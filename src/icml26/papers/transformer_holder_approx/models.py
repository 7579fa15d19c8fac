"""The standard Transformer of the paper and the ReLU-MLP baseline, stacked over models.

M independent networks train side by side: every parameter has a leading model axis, a loss
summed over models gives each model exactly its own gradient, and the written-out Adam is
elementwise, so a model's numbers do not depend on which others share the job. Gradient
clipping is per model (each model's own global gradient norm).

Transformer (spec, "Method to implement"): x in [0,1]^d0 becomes d0 + 1 tokens, e_j = x_j w_val
+ p_j (a learned value direction and a learned position embedding) plus a learned read-out
token. N blocks of  h <- h + MHA(h)  (softmax attention, 2 heads, no LayerNorm) and
h <- h + W2 ReLU(W1 h + b1) + b2  (width 4D); output f(x) = w^T h_readout + b.
Initialisation: PyTorch's defaults (nn.Embedding N(0, 1) for w_val, p_j and the read-out
token; nn.MultiheadAttention's xavier-uniform in-projection with zero biases and default
out-projection; nn.Linear's U(+-1/sqrt(fan_in)) elsewhere), the FFN output layer (W2, b2)
scaled by 1/sqrt(N).
"""

from __future__ import annotations

import math

import torch

from icml26 import stacked


def _uniform(g, shape, bound):
    return (torch.rand(*shape, generator=g) * 2 - 1) * bound


def transformer_init(seeds, d0s, n_blocks: int, width: int, heads: int, device,
                     tokens: int | None = None) -> dict:
    """Stacked parameters of len(seeds) Transformers, model r with input dimension d0s[r]
    drawn from its own generator. Models with fewer coordinates than tokens - 1 get zero
    position rows for the missing ones, and the attention masks those keys out, so such a
    model computes exactly its own (d0 + 1)-token network (a stack may mix d0)."""
    D, F = width, 4 * width
    if D % heads:
        raise ValueError(f"width {D} is not divisible by heads {heads}")
    d0s = [int(d) for d in d0s]
    T = tokens if tokens is not None else max(d0s) + 1
    per = []
    for seed, d0 in zip(seeds, d0s, strict=True):
        g = torch.Generator().manual_seed(int(seed) % (2**63))
        pos = torch.zeros(T - 1, D)
        p = {"w_val": torch.randn(D, generator=g), "pos": pos,
             "readout": torch.randn(D, generator=g)}
        pos[:d0] = torch.randn(d0, D, generator=g)
        scale = 1.0 / math.sqrt(n_blocks)
        for k in range(n_blocks):
            p[f"{k}.qkv"] = _uniform(g, (D, 3 * D), math.sqrt(6.0 / (D + 3 * D)))
            p[f"{k}.qkv_b"] = torch.zeros(3 * D)
            p[f"{k}.o"] = _uniform(g, (D, D), 1 / math.sqrt(D))
            p[f"{k}.o_b"] = torch.zeros(D)
            p[f"{k}.w1"] = _uniform(g, (D, F), 1 / math.sqrt(D))
            p[f"{k}.b1"] = _uniform(g, (F,), 1 / math.sqrt(D))
            p[f"{k}.w2"] = _uniform(g, (F, D), 1 / math.sqrt(F)) * scale
            p[f"{k}.b2"] = _uniform(g, (D,), 1 / math.sqrt(F)) * scale
        p["out_w"] = _uniform(g, (D,), 1 / math.sqrt(D))
        p["out_b"] = _uniform(g, (1,), 1 / math.sqrt(D))
        per.append(p)
    out = {k: torch.stack([p[k] for p in per]).to(device).requires_grad_(True) for k in per[0]}
    valid = torch.ones(len(d0s), T, dtype=torch.bool)
    for r, d0 in enumerate(d0s):
        valid[r, d0:T - 1] = False
    # additive key mask: 0 for a model's own tokens, -inf for its padding tokens
    out["_mask"] = torch.zeros(len(d0s), T).masked_fill(~valid, float("-inf")).to(device)
    out["_meta"] = (T - 1, n_blocks, D, heads)
    return out


def params_of(model: dict) -> list[torch.Tensor]:
    return [v for k, v in model.items() if not k.startswith("_")]


def count_transformer(d0: int, n_blocks: int, width: int) -> int:
    """Parameters of one Transformer (per-block and embedding/output terms)."""
    D = width
    block = 3 * D * D + 3 * D + D * D + D + D * 4 * D + 4 * D + 4 * D * D + D
    return n_blocks * block + D + d0 * D + D + D + 1


def count_mlp(d0: int, depth: int, width: int) -> int:
    sizes = [d0] + [width] * depth + [1]
    return sum(a * b + b for a, b in zip(sizes[:-1], sizes[1:], strict=True))


def matched_mlp_width(d0: int, n_blocks: int, width: int) -> int:
    """Width of the 2N-hidden-layer ReLU MLP whose parameter count is closest to the
    Transformer's with N blocks (the spec's 'same parameter count per block')."""
    target = count_transformer(d0, n_blocks, width)
    return min(range(2, 8 * width), key=lambda w: (abs(count_mlp(d0, 2 * n_blocks, w) - target), w))


def _linear(h, w, b):
    """h (M, R, i) @ w (M, i, o) + b (M, o)."""
    return torch.baddbmm(b[:, None, :], h, w)


def transformer_forward(model: dict, x: torch.Tensor) -> torch.Tensor:
    """x (M, B, d0) -> f(x) (M, B) (x zero-padded to the stack's largest d0)."""
    d0, n_blocks, D, heads = model["_meta"]
    M, B, _ = x.shape
    mask = model["_mask"][:, None, None, None, :].expand(M, B, 1, 1, d0 + 1).reshape(
        M * B, 1, 1, d0 + 1)
    T, hd = d0 + 1, D // heads
    tok = x[..., None] * model["w_val"][:, None, None, :] + model["pos"][:, None, :, :]
    ro = model["readout"][:, None, None, :].expand(M, B, 1, D)
    h = torch.cat([tok, ro], dim=2).reshape(M, B * T, D)
    for k in range(n_blocks):
        qkv = _linear(h, model[f"{k}.qkv"], model[f"{k}.qkv_b"]).reshape(M * B, T, 3, heads, hd)
        q, kk, v = qkv.unbind(2)                                    # (MB, T, H, hd)
        att = torch.einsum("nthd,nshd->nhts", q, kk) / math.sqrt(hd) + mask
        z = torch.einsum("nhts,nshd->nthd", att.softmax(-1), v).reshape(M, B * T, D)
        h = h + _linear(z, model[f"{k}.o"], model[f"{k}.o_b"])
        u = torch.relu(_linear(h, model[f"{k}.w1"], model[f"{k}.b1"]))
        h = h + _linear(u, model[f"{k}.w2"], model[f"{k}.b2"])
    hr = h.reshape(M, B, T, D)[:, :, -1, :]
    return (hr * model["out_w"][:, None, :]).sum(-1) + model["out_b"]


def mlp_init(seeds, d0: int, depth: int, width: int, device) -> dict:
    """ReLU MLP d0 -> width (depth hidden layers) -> 1, nn.Linear's default init per model."""
    layers = stacked.uniform_init([d0] + [width] * depth + [1], seeds, device)
    out = {f"{i}.{j}": t for i, layer in enumerate(layers) for j, t in enumerate(layer)}
    out["_layers"] = layers
    return out


def mlp_forward(model: dict, x: torch.Tensor) -> torch.Tensor:
    return stacked.forward(model["_layers"], x, activation=torch.relu)[..., 0]


def forward(model: dict, x: torch.Tensor) -> torch.Tensor:
    return mlp_forward(model, x) if "_layers" in model else transformer_forward(model, x)


def parameters(model: dict) -> list[torch.Tensor]:
    return [v for k, v in model.items() if not k.startswith("_")]


def clip_per_model(grads: list[torch.Tensor], max_norm: float) -> torch.Tensor:
    """Scale each model's gradients so that its global norm is at most max_norm
    (torch.nn.utils.clip_grad_norm_ per model); returns the pre-clip norms (M,)."""
    sq = sum(g.reshape(g.shape[0], -1).square().sum(1) for g in grads)
    norm = sq.sqrt()
    coef = (max_norm / (norm + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(coef.reshape((-1,) + (1,) * (g.dim() - 1)))
    return norm
