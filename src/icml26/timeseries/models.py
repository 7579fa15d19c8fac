"""Small forecasters and adapter hooks (torch).

Shapes follow one convention: a batch of multichannel windows is (B, C, L) (channels before
time) and a forecast is (B, C, H). Forecasters are channel-independent unless said otherwise.

- RevIN (Kim et al., ICLR 2022) without affine: `revin_normalise` / `revin_denormalise`.
- `PatchTransformer`: PatchTST-style (Nie et al., ICLR 2023) channel-independent encoder over
  patches with a flatten head; its linear layers are named q, k, v, o, ff1, ff2 and head so that
  `add_lora` can target them.
- `MLPForecaster`: instance-normalised univariate MLP (a stand-in frozen foundation model).
- Adapters, each an exact no-op when initialised: `LoRALinear` (Hu et al., ICLR 2022; B = 0),
  `FrequencyAdapter` (top-k FFT filter and harmonic extrapolation; gates start at 0),
  `ChannelAdapter` (attention across channels; output layer starts at 0).
- `fit`: Adam (written out, as torch.optim.Adam) on random minibatches with optional early
  stopping on a validation set.
"""
from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from icml26.rl.optim import Adam


def revin_normalise(x: torch.Tensor, eps: float = 1e-5):
    """Per-window, per-channel z-score along the last axis: returns (z, mean, sd)."""
    mean = x.mean(dim=-1, keepdim=True)
    sd = x.std(dim=-1, keepdim=True, unbiased=False)
    return (x - mean) / (sd + eps), mean, sd


def revin_denormalise(y: torch.Tensor, mean: torch.Tensor, sd: torch.Tensor, eps: float = 1e-5):
    return y * (sd + eps) + mean


class EncoderLayer(nn.Module):
    """Pre-norm transformer encoder layer with explicitly named projections."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, pre_norm: bool = True):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} must be divisible by n_heads={n_heads}")
        self.n_heads, self.pre_norm = n_heads, pre_norm
        self.q, self.k, self.v, self.o = (nn.Linear(d_model, d_model) for _ in range(4))
        self.ff1, self.ff2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)

    def attention(self, h: torch.Tensor, mask=None) -> torch.Tensor:
        """Multi-head self-attention; `mask` (N, N) is True where a query may NOT attend."""
        b, n, d = h.shape

        def split(t):
            return t.view(b, n, self.n_heads, d // self.n_heads).transpose(1, 2)

        q, k, v = split(self.q(h)), split(self.k(h)), split(self.v(h))
        # softmax(q k^T / sqrt(d_head)) v, fused (about twice as fast on the CPU as written out)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=None if mask is None else ~mask)
        return self.o(out.transpose(1, 2).reshape(b, n, d))

    def forward(self, h: torch.Tensor, mask=None) -> torch.Tensor:
        if self.pre_norm:
            h = h + self.attention(self.norm1(h), mask)
            return h + self.ff2(F.gelu(self.ff1(self.norm2(h))))
        h = self.norm1(h + self.attention(h, mask))
        return self.norm2(h + self.ff2(F.gelu(self.ff1(h))))


class PatchTransformer(nn.Module):
    """Channel-independent patch transformer: every channel's lookback is cut into patches
    (length `patch_len`, step `stride`), embedded linearly with a learned position, encoded, and
    the flattened tokens are mapped to the horizon (a complete past-to-future map)."""

    def __init__(self, lookback: int, horizon: int, patch_len: int, stride: int, d_model: int,
                 n_heads: int, d_ff: int, n_layers: int, revin: bool = True, pre_norm: bool = True):
        super().__init__()
        if lookback < patch_len:
            raise ValueError(f"lookback={lookback} is shorter than patch_len={patch_len}")
        self.lookback, self.horizon, self.revin = lookback, horizon, revin
        self.patch_len, self.stride = patch_len, stride
        self.n_patches = (lookback - patch_len) // stride + 1
        self.embed = nn.Linear(patch_len, d_model)
        self.position = nn.Parameter(torch.randn(self.n_patches, d_model) * 0.02)
        self.layers = nn.ModuleList(EncoderLayer(d_model, n_heads, d_ff, pre_norm)
                                    for _ in range(n_layers))
        self.norm = nn.LayerNorm(d_model) if pre_norm else nn.Identity()
        self.head = nn.Linear(self.n_patches * d_model, horizon)

    def encode(self, z: torch.Tensor) -> torch.Tensor:
        """Normalised lookbacks (B, C, L) -> tokens (B, C, n_patches, d_model)."""
        b, c, _ = z.shape
        patches = z.reshape(b * c, -1).unfold(-1, self.patch_len, self.stride)
        h = self.embed(patches) + self.position
        for layer in self.layers:
            h = layer(h)
        return self.norm(h).reshape(b, c, self.n_patches, -1)

    def decode(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(tokens.flatten(-2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.revin:
            return self.decode(self.encode(x))
        z, mean, sd = revin_normalise(x)
        return revin_denormalise(self.decode(self.encode(z)), mean, sd)


class MLPForecaster(nn.Module):
    """Instance-normalised univariate MLP: each channel's lookback -> its horizon."""

    def __init__(self, lookback: int, horizon: int, hidden=(256, 256), revin: bool = True):
        super().__init__()
        sizes = (lookback, *hidden)
        layers: list[nn.Module] = []
        for a, b in zip(sizes[:-1], sizes[1:], strict=False):
            layers += [nn.Linear(a, b), nn.GELU()]
        self.net = nn.Sequential(*layers, nn.Linear(sizes[-1], horizon))
        self.revin = revin

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.revin:
            return self.net(x)
        z, mean, sd = revin_normalise(x)
        return revin_denormalise(self.net(z), mean, sd)


# ---------------------------------------------------------------- adapter hooks


class LoRALinear(nn.Module):
    """Frozen base linear layer plus a low-rank update (alpha / rank) B A; B starts at zero, so the
    wrapped layer computes exactly what the base did until B is trained."""

    def __init__(self, base: nn.Linear, rank: int, alpha: float,
                 generator: torch.Generator | None = None):
        super().__init__()
        self.base, self.scaling = base, alpha / rank
        for p in base.parameters():
            p.requires_grad_(False)
        bound = 1.0 / math.sqrt(base.in_features)  # kaiming-uniform(a=sqrt(5)) bound, as peft
        a = (torch.rand(rank, base.in_features, generator=generator) * 2 - 1) * bound
        self.lora_A = nn.Parameter(a.to(base.weight.device))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, rank, device=base.weight.device))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + (x @ self.lora_A.T @ self.lora_B.T) * self.scaling


def freeze(module: nn.Module) -> nn.Module:
    for p in module.parameters():
        p.requires_grad_(False)
    return module


def add_lora(module: nn.Module, rank: int, alpha: float, targets=("q", "k", "v", "o", "ff1", "ff2"),
             generator: torch.Generator | None = None) -> list[nn.Parameter]:
    """Wrap every nn.Linear child whose attribute name is in `targets` (anywhere in `module`) in a
    LoRALinear, in place; returns the new trainable parameters."""
    params: list[nn.Parameter] = []
    for parent in list(module.modules()):
        for name, child in list(parent.named_children()):
            if name in targets and isinstance(child, nn.Linear):
                wrapped = LoRALinear(child, rank, alpha, generator)
                setattr(parent, name, wrapped)
                params += [wrapped.lora_A, wrapped.lora_B]
    if not params:
        raise ValueError(f"add_lora found no nn.Linear named any of {tuple(targets)}")
    return params


class FrequencyAdapter(nn.Module):
    """Top-k frequency filter and harmonic extrapolation of each channel's (normalised) lookback.

    With X = rFFT(z) over L steps and the k largest non-DC bins b (rank r = 0..k-1 by |X_b|):
      filtered(z) = irFFT(X masked to those bins)
      y_freq[h]   = sum_r g_r c_b |X_b| cos(2 pi b (L + h) / L + angle X_b) / L,  h = 0..H-1
    (c_b = 2, or 1 at the Nyquist bin) continues the kept harmonics past the window: exact for a
    sum of at most k sinusoids on bin frequencies. Returned: the backbone input
    z + lam_c (filtered - z) and the forecast term w_c y_freq; lam and w start at 0 and the
    gains g at 1, so the adapter is a no-op until trained."""

    def __init__(self, n_channels: int, lookback: int, horizon: int, k: int):
        super().__init__()
        if not 1 <= k <= lookback // 2:
            raise ValueError(f"k={k} must be in 1..lookback//2={lookback // 2}")
        self.lookback, self.horizon, self.k = lookback, horizon, k
        self.gains = nn.Parameter(torch.ones(k))
        self.lam = nn.Parameter(torch.zeros(n_channels))
        self.w = nn.Parameter(torch.zeros(n_channels))

    def harmonics(self, z: torch.Tensor):
        L = self.lookback
        spec = torch.fft.rfft(z, dim=-1)
        power = spec.abs()
        power[..., 0] = -1.0  # never keep DC
        top = torch.topk(power, self.k, dim=-1).indices  # (B, C, k), largest first
        mask = torch.zeros_like(power).scatter_(-1, top, 1.0)
        filtered = torch.fft.irfft(spec * mask, n=L, dim=-1)
        chosen = torch.gather(spec, -1, top)
        nyquist = (top == L // 2) if L % 2 == 0 else torch.zeros_like(top, dtype=torch.bool)
        weight = torch.where(nyquist, 1.0, 2.0).to(z.dtype)
        t = torch.arange(L, L + self.horizon, dtype=z.dtype, device=z.device)
        arg = 2 * math.pi * top.to(z.dtype)[..., None] * t / L + torch.angle(chosen)[..., None]
        waves = weight[..., None] * chosen.abs()[..., None] * torch.cos(arg) / L  # (B, C, k, H)
        return filtered, waves

    def forward(self, z: torch.Tensor):
        filtered, waves = self.harmonics(z)
        y_freq = torch.einsum("r,bcrh->bch", self.gains.to(z.dtype), waves)
        z_in = z + self.lam.to(z.dtype)[:, None] * (filtered - z)
        return z_in, self.w.to(z.dtype)[:, None] * y_freq


class ChannelAdapter(nn.Module):
    """Cross-channel residual forecast: u_c = W_u [token_c; recent_c], u' = u + Attn_channels(u),
    y_c = W_o u'_c. W_o starts at zero, so the adapter adds nothing until trained."""

    def __init__(self, d_token: int, n_recent: int, horizon: int, d_adapter: int = 32):
        super().__init__()
        self.n_recent = n_recent
        self.inp = nn.Linear(d_token + n_recent, d_adapter)
        self.q, self.k, self.v = (nn.Linear(d_adapter, d_adapter) for _ in range(3))
        self.out = nn.Linear(d_adapter, horizon)
        nn.init.zeros_(self.out.weight)
        nn.init.zeros_(self.out.bias)

    def forward(self, tokens: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        """tokens (B, C, d_token) pooled per channel, z (B, C, L) normalised lookbacks
        -> (B, C, H)."""
        u = self.inp(torch.cat([tokens, z[..., -self.n_recent:]], dim=-1))
        att = self.q(u) @ self.k(u).transpose(-2, -1) / math.sqrt(u.shape[-1])
        u = u + torch.softmax(att, dim=-1) @ self.v(u)
        return self.out(u)


# ---------------------------------------------------------------- training


@torch.no_grad()
def predict(forward, X: torch.Tensor, batch: int = 1024) -> torch.Tensor:
    if not len(X):
        return X[:0]
    return torch.cat([forward(X[i: i + batch]) for i in range(0, len(X), batch)])


def fit(forward, param_groups, X: torch.Tensor, Y: torch.Tensor, *, steps: int, batch: int,
        generator: torch.Generator, lr: float = 1e-3, val=None, eval_every: int | None = None,
        clip: float | None = None, eval_at_start: bool = False) -> dict:
    """Adam (learning rate `lr`, or each param group's own "lr") on random minibatches (indices
    drawn from `generator` on the CPU) minimising the MSE of forward(X[idx]) against Y[idx].
    With val = (Xv, Yv) and `eval_every`, the validation MSE is measured every `eval_every` steps,
    at the last step (and at step 0 when `eval_at_start`), and the trained tensors are restored to
    their values at the lowest one (ties keep the earliest).
    Returns {"train_loss": [...], "val_steps": [...], "val_mse": [...], "best_step": int}."""
    param_groups = list(param_groups)
    if isinstance(param_groups[0], dict):
        groups = [dict(g, params=list(g["params"])) for g in param_groups]
    else:
        groups = [{"params": param_groups}]
    tensors = [p for g in groups for p in g["params"]]
    # written-out Adam, one per group: torch.optim would import torch._dynamo (~2 CPU-s a job)
    opts = [Adam(g["params"], lr=g.get("lr", lr)) for g in groups]
    history = {"train_loss": [], "val_steps": [], "val_mse": [], "best_step": steps}
    best, best_state = math.inf, None

    def validate(step):
        nonlocal best, best_state
        mse = F.mse_loss(predict(forward, val[0]), val[1]).item()
        history["val_steps"].append(step)
        history["val_mse"].append(mse)
        if mse < best:
            best, history["best_step"] = mse, step
            best_state = [p.detach().clone() for p in tensors]

    checking = val is not None and eval_every
    if checking and eval_at_start:
        validate(0)
    n = len(X)
    for step in range(1, steps + 1):
        idx = torch.randint(0, n, (batch,), generator=generator).to(X.device)
        loss = F.mse_loss(forward(X[idx]), Y[idx])
        for opt in opts:
            opt.zero_grad()
        loss.backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(tensors, clip)
        for opt in opts:
            opt.step()
        history["train_loss"].append(loss.item())
        if checking and (step % eval_every == 0 or step == steps):
            validate(step)
    if best_state is not None:
        with torch.no_grad():
            for p, saved in zip(tensors, best_state, strict=False):
                p.copy_(saved)
    return history


def count_parameters(params) -> int:
    return int(sum(np.prod(p.shape) for p in params))
