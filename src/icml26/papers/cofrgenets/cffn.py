"""CoFrGeNet components (Cffn, CAttn-lite), the Cffn-no-ladder ablation and the model zoo (torch).

Cffn replaces a transformer block's feed-forward network (width p = d_model). INFERRED
parameterisation (a public reading of the paper whose parameter count matches its savings):

    x_hat   = sigmoid(G x) * x                        gating, G in R^{p x p} (+ bias)
    a_{j,k} = w_{j,k} * x_hat + b_{j,k}               elementwise, ladder j = 1..L, depth k = 1..D
    y       = U x + sum_j v_j * f(a_{j,1}, ..., a_{j,D})     U in R^{p x p} (+ bias); w, b, v in R^p

with f the continued fraction computed by continuants (one division, custom backward; see
continued_fraction.py). Parameters 2p^2 + 2p + (2LD + L)p, about a quarter of a 4x GELU FFN.
Init (INFERRED): w ~ N(0, 0.1^2), b = 1 (coefficients near 1, far from the poles), v = 0.1;
U and G are nn.Linear and get the model's default init (GPT-2: N(0, 0.02^2), bias 0; U, the
output of the residual branch, uses the scaled residual std like the MLP's output projection).

The models of the paper's comparison differ only in the FFN factory passed to icml26.lm GPT:
- transformer-full:    GELU MLP, hidden 4 d_model
- transformer-matched: GELU MLP, hidden ``matched_hidden`` (64 at d_model 48: equal parameters)
- cofrgenet-f:         Cffn (L, D from the config; ``cofrgenet-f-L<L>-D<D>`` for the sweep)
- cffn-no-ladder:      y = U x_hat (the gated linear path alone: do the ladders contribute?)
- cofrgenet-fa:        Cffn + CAttn-lite attention (exploratory, full profile only)
"""

from __future__ import annotations

import re

import torch
import torch.nn.functional as F
from torch import nn

from icml26.lm.model import GPT, MLP, CausalSelfAttention, GPTConfig

from .continued_fraction import POLE_EPS, cf_continuant, cf_nested


class Ladders(nn.Module):
    """L elementwise continued-fraction ladders of depth D on a (..., p) input.

    Returns sum_j v_j * f(w_{j,1} z + b_{j,1}, ..., w_{j,D} z + b_{j,D}), shape (..., p).
    The L ladders sit side by side in one (D, N, L p) coefficient tensor (N = tokens) so that
    every elementwise op runs on contiguous memory. ``naive=True`` differentiates the nested
    divisions with autograd instead (the gradient baseline; not used by the trained models).
    """

    def __init__(self, width: int, ladders: int, depth: int, w_std: float = 0.1,
                 b_init: float = 1.0, v_init: float = 0.1, naive: bool = False):
        super().__init__()
        self.width, self.ladders, self.depth, self.naive = width, ladders, depth, naive
        self.w = nn.Parameter(torch.randn(depth, ladders, width) * w_std)   # w_{j,k}
        self.b = nn.Parameter(torch.full((depth, ladders, width), float(b_init)))  # b_{j,k}
        self.v = nn.Parameter(torch.full((ladders, width), float(v_init)))  # v_j

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        shape, q = z.shape, self.ladders * self.width
        zq = z.reshape(-1, self.width).repeat(1, self.ladders)            # (N, L p)
        a = torch.addcmul(self.b.reshape(self.depth, 1, q), self.w.reshape(self.depth, 1, q),
                          zq.unsqueeze(0))                                 # (D, N, L p)
        f = cf_nested(a) if self.naive else cf_continuant(a, POLE_EPS)     # (N, L p)
        out = (f * self.v.reshape(1, q)).reshape(-1, self.ladders, self.width).sum(dim=1)
        return out.reshape(shape)


class Cffn(nn.Module):
    """y = U x + Ladders(sigmoid(G x) * x): the CoFrGeNet feed-forward replacement."""

    def __init__(self, config: GPTConfig, layer: int = 0, ladders: int = 3, depth: int = 5,
                 naive: bool = False):
        super().__init__()
        p = config.d_model
        self.gate = nn.Linear(p, p)       # G
        self.lin = nn.Linear(p, p)        # U
        self.lin.residual_proj = True
        self.ladder = Ladders(p, ladders, depth, naive=naive)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x_hat = torch.sigmoid(self.gate(x)) * x
        return self.lin(x) + self.ladder(x_hat)


class CffnNoLadder(nn.Module):
    """Ablation: the ladders removed, y = U x_hat with x_hat = sigmoid(G x) * x."""

    def __init__(self, config: GPTConfig, layer: int = 0):
        super().__init__()
        p = config.d_model
        self.gate = nn.Linear(p, p)
        self.lin = nn.Linear(p, p)
        self.lin.residual_proj = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(torch.sigmoid(self.gate(x)) * x)


class CAttnLite(nn.Module):
    """Exploratory attention replacement (INFERRED, our own design; full profile only).

    Keeps the softmax(Q K^T / sqrt(d_head)) causal mixing per head, drops W_V and W_O (-2p^2
    parameters per block) and applies a Cffn-style elementwise ladder (no U, no G) to the
    attention-mixed inputs before the residual add.
    """

    def __init__(self, config: GPTConfig, layer: int = 0, ladders: int = 3, depth: int = 5):
        super().__init__()
        if config.d_model % config.n_heads:
            raise ValueError(
                f"d_model {config.d_model} is not divisible by n_heads {config.n_heads}"
            )
        self.n_heads = config.n_heads
        self.qk = nn.Linear(config.d_model, 2 * config.d_model)
        self.ladder = Ladders(config.d_model, ladders, depth)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k = self.qk(x).split(d, dim=2)
        h = self.n_heads
        q, k, v = (z.view(b, t, h, d // h).transpose(1, 2) for z in (q, k, x))
        mixed = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.ladder(mixed.transpose(1, 2).reshape(b, t, d))


# ---------------------------------------------------------------------------------------------
# the model zoo
# ---------------------------------------------------------------------------------------------
LM_METHODS = ("transformer-full", "cofrgenet-f", "transformer-matched", "cffn-no-ladder")
SWEEP_RE = re.compile(r"^cofrgenet-f-L(\d+)-D(\d+)$")


def ladder_shape(method: str, params: dict) -> tuple[int, int] | None:
    """(L, D) of a CoFrGeNet method id, None for the others."""
    m = SWEEP_RE.match(method)
    if m:
        return int(m.group(1)), int(m.group(2))
    if method in ("cofrgenet-f", "cofrgenet-fa"):
        return int(params["ladders"]), int(params["depth"])
    return None


def gpt_config(params: dict, vocab_size: int, method: str) -> GPTConfig:
    hidden = int(params["matched_hidden"]) if method == "transformer-matched" else None
    return GPTConfig(vocab_size=vocab_size, context=int(params["context"]),
                     d_model=int(params["d_model"]), n_heads=int(params["n_heads"]),
                     n_layers=int(params["n_layers"]), mlp_hidden=hidden)


def build_model(method: str, params: dict, vocab_size: int) -> GPT:
    """The GPT of one method (initialised from torch's global RNG; seed it first)."""
    config = gpt_config(params, vocab_size, method)
    shape = ladder_shape(method, params)
    attention = CausalSelfAttention
    if method in ("transformer-full", "transformer-matched"):
        ffn = MLP
    elif method == "cffn-no-ladder":
        ffn = CffnNoLadder
    elif shape is not None:
        def ffn(cfg, layer, shape=shape):
            return Cffn(cfg, layer, ladders=shape[0], depth=shape[1])
        if method == "cofrgenet-fa":
            def attention(cfg, layer, shape=shape):
                return CAttnLite(cfg, layer, ladders=shape[0], depth=shape[1])
    else:
        raise ValueError(f"unknown model {method!r}")
    return GPT(config, attention=attention, ffn=ffn)


def cffn_param_formula(p: int, ladders: int, depth: int) -> int:
    """2p^2 + 2p + (2LD + L)p, the spec's parameter count of one Cffn."""
    return 2 * p * p + 2 * p + (2 * ladders * depth + ladders) * p
