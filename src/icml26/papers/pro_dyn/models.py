"""The five forecasters and their PRO-DYN description (torch; imported only by train).

Shapes follow icml26.timeseries.models: a batch of lookbacks is (B, C, L), a forecast (B, C, H).
Every model normalises each window per channel (RevIN without affine, the shared
``revin_normalise``) and undoes it at the output, so differences come from the architecture.

    LINEAR               DYN only        one Linear(L -> H) along time, shared by the channels
    INFORMER-LITE        PRO only        encoder over time-step tokens + a start-token decoder
                                         (masked self-attention, cross-attention): the future
                                         comes only from attention-weighted mixtures
    INFORMER-LITE+DYN    PRO -> DYN      the same encoder; z = x + proj(enc(x)) (L x C), then a
                                         Linear(L -> H) along time (the paper's plug-in fix)
    PATCH-LITE           PRO -> DYN      the shared PatchTransformer: its flatten head is the DYN
    PATCH-LITE-DYNFIRST  DYN -> PRO      Linear(L -> H) first, then the patch encoder on the
                                         H-long sequence and a per-patch output (no residual)

Encoders use the shared pre-norm ``EncoderLayer`` everywhere (PatchTST uses BatchNorm and
Informer post-norm LayerNorm; one block for all keeps the comparison about where DYN sits).

Every model also runs stacked (``stacking.stack``: R members' weights in one module, inputs
with a member-major leading axis); the two learned patch positions are the only parameters the
forward code touches directly, and both are added member by member when stacked.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.func import functional_call
from torch.nn import functional as F

from icml26.timeseries.models import (
    EncoderLayer,
    PatchTransformer,
    revin_denormalise,
    revin_normalise,
)

LINEAR, INFORMER, INFORMER_DYN, PATCH, DYNFIRST = (
    "linear", "informer-lite", "informer-lite+dyn", "patch-lite", "patch-lite-dynfirst")
METHODS = (LINEAR, INFORMER, INFORMER_DYN, PATCH, DYNFIRST)
# the paper's PRO-DYN configuration of each model (the grouping of the main table)
CONFIGURATION = {LINEAR: "DYN only", INFORMER: "PRO only", INFORMER_DYN: "PRO -> DYN",
                 PATCH: "PRO -> DYN", DYNFIRST: "DYN -> PRO"}


def sinusoidal_position(positions: torch.Tensor, d_model: int) -> torch.Tensor:
    """The Transformer's fixed encoding (Vaswani et al. 2017), at the given integer positions:
    PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(p / 10000^(2i/d))."""
    p = positions.to(torch.float32)[:, None]
    freq = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32)
                     * (-math.log(10000.0) / d_model))
    pe = torch.zeros(len(positions), d_model)
    pe[:, 0::2] = torch.sin(p * freq)
    pe[:, 1::2] = torch.cos(p * freq)
    return pe


def add_position(h: torch.Tensor, position: torch.Tensor) -> torch.Tensor:
    """Tokens h (M, n, d) plus a learned position (n, d); for R stacked members, h (R * M, n, d)
    member-major and position (R, n, d): each member's tokens get its own position."""
    if position.dim() == h.dim() - 1:
        return h + position
    members = position.shape[0]
    return (h.reshape(members, -1, *h.shape[1:]) + position[:, None]).reshape(h.shape)


class RevIN(nn.Module):
    """Wraps a map of normalised windows: z = (x - mean) / (sd + eps) per window and channel,
    y = inner(z) * (sd + eps) + mean."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z, mean, sd = revin_normalise(x)
        return revin_denormalise(self.inner(z), mean, sd)


class Linear(RevIN):
    """DYN only (NLinear/DLinear-style): one Linear(L -> H) along time, the same for every
    channel."""

    def __init__(self, lookback: int, horizon: int):
        super().__init__()
        self.dyn = nn.Linear(lookback, horizon)

    def inner(self, z):
        return self.dyn(z)


class Attention(nn.Module):
    """Multi-head attention of query tokens over key/value tokens (self-attention when they
    are the same tokens); `mask` (True = hidden) is broadcast over batch and heads."""

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
        self.n_heads = n_heads
        self.q, self.k, self.v, self.o = (nn.Linear(d_model, d_model) for _ in range(4))

    def forward(self, h: torch.Tensor, memory: torch.Tensor, mask=None) -> torch.Tensor:
        b, n, d = h.shape
        m, dh = memory.shape[1], d // self.n_heads
        q = self.q(h).view(b, n, self.n_heads, dh).transpose(1, 2)
        k = self.k(memory).view(b, m, self.n_heads, dh).transpose(1, 2)
        v = self.v(memory).view(b, m, self.n_heads, dh).transpose(1, 2)
        # softmax(q k^T / sqrt(dh) + mask) v in torch's fused kernel (half the CPU time of
        # the composed ops); `mask` True = hidden, SDPA's boolean mask is True = kept
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=None if mask is None else ~mask)
        return self.o(out.transpose(1, 2).reshape(b, n, d))


class DecoderLayer(nn.Module):
    """Pre-norm Informer-style decoder layer: masked (causal) self-attention, cross-attention
    to the encoder output, position-wise FFN, each with a residual."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int):
        super().__init__()
        self.self_att, self.cross = Attention(d_model, n_heads), Attention(d_model, n_heads)
        self.ff1, self.ff2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))

    def forward(self, h: torch.Tensor, memory: torch.Tensor) -> torch.Tensor:
        n = h.shape[1]
        causal = torch.triu(torch.ones(n, n, dtype=torch.bool, device=h.device), diagonal=1)
        a = self.norm1(h)
        h = h + self.self_att(a, a, causal)
        h = h + self.cross(self.norm2(h), memory)
        return h + self.ff2(F.gelu(self.ff1(self.norm3(h))))


class TimeEncoder(nn.Module):
    """Informer-style token embedding (time steps are tokens, channels the features):
    Linear(C -> d) plus the sinusoidal position, then pre-norm encoder layers."""

    def __init__(self, channels: int, d_model: int, n_heads: int, d_ff: int, n_layers: int):
        super().__init__()
        self.d_model = d_model
        self.embed = nn.Linear(channels, d_model)
        self.layers = nn.ModuleList(EncoderLayer(d_model, n_heads, d_ff)
                                    for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)

    def tokens(self, z: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """(B, C, T) -> embedded tokens (B, T, d)."""
        pe = sinusoidal_position(positions, self.d_model).to(z.device)
        return self.embed(z.transpose(1, 2)) + pe

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        h = self.tokens(z, torch.arange(z.shape[-1]))
        for layer in self.layers:
            h = layer(h)
        return self.norm(h)


class InformerLite(RevIN):
    """PRO only. The decoder reads [last `label_len` lookback steps, H zero placeholders]
    (Informer's start token), embedded like the encoder tokens, through masked self-attention
    and cross-attention; a per-token Linear(d -> C) on the last H positions is the forecast.

    Decoder positions continue the encoder's (L - label_len, ..., L + H - 1). INFERRED:
    Informer numbers the decoder tokens from 0 and tells them apart by a calendar embedding
    that these series do not have; continuing the positions gives the decoder that offset."""

    def __init__(self, lookback: int, horizon: int, channels: int, d_model: int, n_heads: int,
                 d_ff: int, n_layers: int, dec_layers: int, label_len: int):
        super().__init__()
        if not 1 <= label_len <= lookback:
            raise ValueError(f"label_len={label_len} must be in 1..lookback={lookback}")
        self.lookback, self.horizon, self.label_len = lookback, horizon, label_len
        self.encoder = TimeEncoder(channels, d_model, n_heads, d_ff, n_layers)
        self.decoder = nn.ModuleList(DecoderLayer(d_model, n_heads, d_ff)
                                     for _ in range(dec_layers))
        self.dec_norm = nn.LayerNorm(d_model)
        self.out = nn.Linear(d_model, channels)

    def inner(self, z):
        memory = self.encoder(z)
        start = z[..., -self.label_len:]
        dec_in = torch.cat([start, torch.zeros(*z.shape[:2], self.horizon, device=z.device,
                                               dtype=z.dtype)], dim=-1)
        pos = torch.arange(self.lookback - self.label_len, self.lookback + self.horizon)
        h = self.encoder.tokens(dec_in, pos)
        for layer in self.decoder:
            h = layer(h, memory)
        y = self.out(self.dec_norm(h))[:, -self.horizon:]  # (B, H, C)
        return y.transpose(1, 2)


class InformerLiteDyn(RevIN):
    """PRO -> DYN. The same encoder; a per-token Linear(d -> C) gives the processed past
    z' = z + proj(enc(z)) (L x C), and DYN, a Linear(L -> H) along time shared by the
    channels, maps it to the horizon. The decoder is dropped."""

    def __init__(self, lookback: int, horizon: int, channels: int, d_model: int, n_heads: int,
                 d_ff: int, n_layers: int):
        super().__init__()
        self.encoder = TimeEncoder(channels, d_model, n_heads, d_ff, n_layers)
        self.proj = nn.Linear(d_model, channels)
        self.dyn = nn.Linear(lookback, horizon)

    def inner(self, z):
        processed = z + self.proj(self.encoder(z)).transpose(1, 2)  # (B, C, L)
        return self.dyn(processed)


class PatchLite(nn.Module):
    """PRO -> DYN by construction: the shared channel-independent PatchTransformer (RevIN,
    patches of 16 with stride 8, flatten head Linear(n_patches * d -> H))."""

    def __init__(self, lookback: int, horizon: int, d_model: int, n_heads: int, d_ff: int,
                 n_layers: int, patch_len: int, patch_stride: int):
        super().__init__()
        self.net = PatchTransformer(lookback, horizon, patch_len, patch_stride, d_model, n_heads,
                                    d_ff, n_layers, revin=True)

    def forward(self, x):
        position = self.net.position
        if position.dim() == 2:
            return self.net(x)
        # R stacked members: the shared forward adds `position` (n_patches, d) to the tokens of
        # all (window, channel) series; give it each member's position repeated over the
        # member's own series (rows are member-major)
        series = x.shape[0] // position.shape[0] * x.shape[1]
        return functional_call(self.net, {"position": position.repeat_interleave(series, 0)},
                               (x,))


class PatchLiteDynFirst(RevIN):
    """DYN -> PRO (the paper's "move DYN to the front"): Linear(L -> H) on each channel's
    normalised lookback, the H-long result cut into H / p patches of p, embedded with a learned
    position, the same encoder, and a per-patch Linear(d -> p) reassembled into H values. No
    residual from the linear output, so the processing comes after the dynamics."""

    def __init__(self, lookback: int, horizon: int, d_model: int, n_heads: int, d_ff: int,
                 n_layers: int, out_patch: int):
        super().__init__()
        if horizon % out_patch:
            raise ValueError(f"horizon={horizon} is not a multiple of dynfirst_patch={out_patch}")
        self.out_patch, self.n_patches = out_patch, horizon // out_patch
        self.dyn = nn.Linear(lookback, horizon)
        self.embed = nn.Linear(out_patch, d_model)
        self.position = nn.Parameter(torch.randn(self.n_patches, d_model) * 0.02)
        self.layers = nn.ModuleList(EncoderLayer(d_model, n_heads, d_ff)
                                    for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, out_patch)

    def inner(self, z):
        b, c, _ = z.shape
        u = self.dyn(z).reshape(b * c, self.n_patches, self.out_patch)
        h = add_position(self.embed(u), self.position)
        for layer in self.layers:
            h = layer(h)
        return self.head(self.norm(h)).reshape(b, c, -1)


def build(method: str, lookback: int, horizon: int, channels: int, p: dict) -> nn.Module:
    """A model of the grid from the paper's params (d_model, n_heads, d_ff, n_layers, ...)."""
    enc = {"d_model": int(p["d_model"]), "n_heads": int(p["n_heads"]), "d_ff": int(p["d_ff"]),
           "n_layers": int(p["n_layers"])}
    if method == LINEAR:
        return Linear(lookback, horizon)
    if method == INFORMER:
        return InformerLite(lookback, horizon, channels, **enc, dec_layers=int(p["dec_layers"]),
                            label_len=int(p["label_len"]))
    if method == INFORMER_DYN:
        return InformerLiteDyn(lookback, horizon, channels, **enc)
    if method == PATCH:
        return PatchLite(lookback, horizon, **enc, patch_len=int(p["patch_len"]),
                         patch_stride=int(p["patch_stride"]))
    if method == DYNFIRST:
        return PatchLiteDynFirst(lookback, horizon, **enc, out_patch=int(p["dynfirst_patch"]))
    raise ValueError(f"unknown method {method!r}; allowed: {', '.join(METHODS)}")
