"""The mini prior-fitted network for outlier detection, stacked over runs (imports torch).

One network reads a task as a set of rows: the context (unlabelled inliers) and the queries
(test points). Each row is z-scored with the context's mean and s.d., clipped, multiplied by
D_max / d and zero-padded to D_max columns (FoMo-0D's dimension normalisation), then embedded
by a linear map. Each pre-LayerNorm block has one multi-head attention whose keys and values
are the context rows only: context rows attend to the context (self-attention), query rows
attend to the context and never to each other (the PFN mask; the official layer shares the
attention weights between the two in the same way), then a GELU feed-forward. A final
LayerNorm and a linear head give two logits per query; softmax(logits)[1] is the outlier
score.

R runs train side by side: every weight has a leading run axis (as icml26.stacked does for
MLPs), each run's loss is summed, so each run gets exactly its own gradient; AdamW is
elementwise and the gradient clipping is per run, so a run's numbers do not depend on which
other runs share the job.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

Z_CLIP = 20.0      # |z| cap after context z-scoring (INFERRED: keeps extreme outliers finite)


def param_shapes(width: int, layers: int, ffn: int, d_max: int) -> dict[str, tuple]:
    shapes = {"emb.w": (d_max, width), "emb.b": (1, width)}
    for i in range(layers):
        shapes.update({
            f"b{i}.ln1.g": (1, width), f"b{i}.ln1.b": (1, width),
            f"b{i}.qkv.w": (width, 3 * width), f"b{i}.out.w": (width, width),
            f"b{i}.ln2.g": (1, width), f"b{i}.ln2.b": (1, width),
            f"b{i}.ff1.w": (width, ffn), f"b{i}.ff1.b": (1, ffn),
            f"b{i}.ff2.w": (ffn, width), f"b{i}.ff2.b": (1, width),
        })
    shapes.update({"lnf.g": (1, width), "lnf.b": (1, width), "head.w": (width, 2),
                   "head.b": (1, 2)})
    return shapes


def init_params(seeds, width, layers, ffn, d_max, device) -> dict[str, torch.Tensor]:
    """Stacked parameters, run r drawn from ``torch.Generator().manual_seed(seeds[r])`` on the
    CPU: weights and biases of linear maps U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (nn.Linear's
    default), LayerNorm gains 1 and shifts 0; then moved to ``device``."""
    shapes = param_shapes(width, layers, ffn, d_max)
    per_run = []
    for seed in seeds:
        g = torch.Generator().manual_seed(int(seed) % (2**63))
        run = {}
        for name, shape in shapes.items():
            if ".ln" in name or name.startswith("lnf"):
                run[name] = torch.ones(shape) if name.endswith(".g") else torch.zeros(shape)
                continue
            fan_in = shapes[name[:-2] + ".w"][0]
            bound = 1.0 / math.sqrt(fan_in)
            run[name] = (torch.rand(shape, generator=g) * 2 - 1) * bound
        per_run.append(run)
    return {n: torch.stack([r[n] for r in per_run]).to(device).requires_grad_(True)
            for n in shapes}


def n_layers(params) -> int:
    return sum(1 for n in params if n.endswith(".qkv.w"))


def _ln(x, g, b):
    return F.layer_norm(x, (x.shape[-1],)) * g + b


def forward(params: dict, x: torch.Tensor, n_ctx: int, heads: int) -> torch.Tensor:
    """x (R, B, T, D_max) with the first ``n_ctx`` rows of each task its context -> query
    logits (R, B, T - n_ctx, 2)."""
    R, B, T, D = x.shape
    W = params["emb.w"].shape[-1]
    dh = W // heads
    h = torch.baddbmm(params["emb.b"], x.reshape(R, B * T, D), params["emb.w"])
    for i in range(n_layers(params)):
        p = f"b{i}."
        a = _ln(h, params[p + "ln1.g"], params[p + "ln1.b"])
        qkv = torch.bmm(a, params[p + "qkv.w"]).view(R * B, T, 3, heads, dh)
        qkv = qkv.permute(2, 0, 3, 1, 4).contiguous()             # (3, R B, H, T, dh)
        q = qkv[0] * (1.0 / math.sqrt(dh))
        k, v = qkv[1, :, :, :n_ctx], qkv[2, :, :, :n_ctx]        # keys, values: context only
        att = torch.softmax(torch.matmul(q, k.transpose(-1, -2)), dim=-1)   # (R B, H, T, n_ctx)
        o = torch.matmul(att, v).permute(0, 2, 1, 3).reshape(R, B * T, W)
        h = h + torch.bmm(o, params[p + "out.w"])
        a = _ln(h, params[p + "ln2.g"], params[p + "ln2.b"])
        f = F.gelu(torch.baddbmm(params[p + "ff1.b"], a, params[p + "ff1.w"]))
        h = h + torch.baddbmm(params[p + "ff2.b"], f, params[p + "ff2.w"])
    h = h.view(R, B, T, W)[:, :, n_ctx:].reshape(R, B * (T - n_ctx), W)
    h = _ln(h, params["lnf.g"], params["lnf.b"])
    out = torch.baddbmm(params["head.b"], h, params["head.w"])
    return out.view(R, B, T - n_ctx, 2)


def preprocess(ctx: np.ndarray, query: np.ndarray, d_max: int, perm=None) -> np.ndarray:
    """(n_ctx + n_q, d_max) float32 rows: z-score with the context's mean and s.d., clip at
    +-Z_CLIP, scale by d_max / d, optionally permute the d real columns, zero-pad."""
    d = ctx.shape[1]
    if d > d_max:
        raise ValueError(f"task has {d} features; the network takes at most d_max={d_max}")
    mu = ctx.mean(0)
    sd = ctx.std(0)
    sd = np.where(sd > 1e-8, sd, 1.0)
    X = np.concatenate([ctx, query]) - mu
    X = np.clip(X / sd, -Z_CLIP, Z_CLIP) * (d_max / d)
    if perm is not None:
        X = X[:, perm]
    out = np.zeros((len(X), d_max), dtype=np.float32)
    out[:, :d] = X
    return out


def per_point_loss(params, x, y, n_ctx, heads) -> torch.Tensor:
    """Cross-entropy of every query point: (R, B, n_q)."""
    logits = forward(params, x, n_ctx, heads)
    return F.cross_entropy(logits.reshape(-1, 2), y.reshape(-1),
                           reduction="none").view(y.shape)


@torch.no_grad()
def clip_per_run(params: dict, max_norm: float) -> torch.Tensor:
    """Scale run r's gradients so their global L2 norm is at most ``max_norm`` (per run, as
    each run's own clip_grad_norm_ would); returns the norms (R,)."""
    grads = [p.grad for p in params.values()]
    R = grads[0].shape[0]
    sq = sum(g.reshape(R, -1).pow(2).sum(1) for g in grads)
    norm = sq.sqrt()
    coef = torch.clamp(max_norm / (norm + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef.view(-1, *([1] * (g.ndim - 1))))
    return norm


@torch.no_grad()
def scores(params: dict, ctx: np.ndarray, test: np.ndarray, d_max: int, heads: int,
           perms, device) -> np.ndarray:
    """Outlier scores (R, n_test) of every stacked run: the mean outlier probability over the
    context ensemble (one member per column permutation in ``perms``)."""
    x = np.stack([preprocess(ctx, test, d_max, perm) for perm in perms])   # (E, T, D)
    R = params["emb.w"].shape[0]
    xt = torch.as_tensor(x, device=device).unsqueeze(0).expand(R, -1, -1, -1).contiguous()
    logits = forward(params, xt, len(ctx), heads)
    p = torch.softmax(logits, -1)[..., 1].mean(1)
    return p.cpu().numpy().astype(np.float64)
