"""CASTLE: causal attention with lookahead keys (torch), in three equivalent forms.

Per head (head dim d_h, tau = d_h^-1/2) the layer input X gives six projections: causal
Q^C, K^C, V^C and lookahead Q^U, K^U, V^U. The key of an earlier position s is updated as later
tokens arrive (recurrent definition; formula details INFERRED from the public reference
implementation, lucidrains/lookahead-keys-attention, class ParallelSlowCastle):

    u_s^(t) = sum_{j=s+1..t} sigmoid(tau q^U_s . k^U_j) v^U_j ,      u_t^(t) = 0
    a_{t,s} = tau q^C_t . k^C_s - SiLU(tau q^C_t . u_s^(t))          (s <= t)
    o_t     = sum_{s<=t} softmax_s(a_{t,.}) v^C_s

Only tokens <= t enter the output at t (autoregressive). Three implementations follow:
``castle_recurrent`` (the definition, one step at a time, O(L^3 d)), ``castle_decode`` (the
decoding form with a cache of lookahead keys U, the Q^U cache, K^C and V^C) and
``castle_parallel`` (the training form, no per-step keys; the one the model uses). The unit
tests check that they agree to < 1e-5 in float64.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from icml26.lm.model import GPTConfig

NEG_INF = float("-inf")


def castle_parallel(qc, kc, vc, qu, ku, vu):
    """Parallel (training) form. Every argument is (..., L, d_h); returns (..., L, d_h).

    T   = tau Q^C V^U^T, kept where j <= i             (row i = query, column j = later token)
    G   = sigmoid(tau Q^U K^U^T), kept where j > s     (row s = key position, column j)
    S^U = T G^T,  i.e.  S^U_{i,s} = sum_{s<j<=i} T_{i,j} G_{s,j} = tau q^C_i . u_s^(i)
    S   = tau Q^C K^C^T - SiLU(S^U), causal mask, softmax over s, times V^C.
    The L x L x L product costs O(L^3) per head, negligible for L <= 64.
    """
    L, dh = qc.shape[-2], qc.shape[-1]
    tau = dh ** -0.5
    pos = torch.arange(L, device=qc.device)
    causal = pos[None, :] <= pos[:, None]          # [i, j]: j <= i
    later = pos[None, :] > pos[:, None]            # [s, j]: j > s (strictly later)
    t_mat = (tau * qc @ vu.transpose(-1, -2)).masked_fill(~causal, 0.0)
    g_mat = torch.sigmoid(tau * qu @ ku.transpose(-1, -2)).masked_fill(~later, 0.0)
    s_u = t_mat @ g_mat.transpose(-1, -2)
    scores = tau * qc @ kc.transpose(-1, -2) - F.silu(s_u)
    scores = scores.masked_fill(~causal, NEG_INF)
    return torch.softmax(scores, dim=-1) @ vc


def castle_recurrent(qc, kc, vc, qu, ku, vu):
    """The recurrent definition, literally: at each step t build u_s^(t) for every s <= t.

    O(L^3 d_h); for tests only. Arguments as in ``castle_parallel``.
    """
    L, dh = qc.shape[-2], qc.shape[-1]
    tau = dh ** -0.5
    outs = []
    for t in range(L):
        # u_s^(t) = sum_{j=s+1..t} sigmoid(tau q^U_s . k^U_j) v^U_j  for s = 0..t
        us = []
        for s in range(t + 1):
            u = torch.zeros_like(vu[..., 0, :])
            for j in range(s + 1, t + 1):
                gate = torch.sigmoid(tau * (qu[..., s, :] * ku[..., j, :]).sum(-1, keepdim=True))
                u = u + gate * vu[..., j, :]
            us.append(u)
        u_t = torch.stack(us, dim=-2)                                 # (..., t+1, d_h)
        q = qc[..., t : t + 1, :]                                     # (..., 1, d_h)
        a = tau * q @ kc[..., : t + 1, :].transpose(-1, -2) - F.silu(
            tau * q @ u_t.transpose(-1, -2))
        outs.append(torch.softmax(a, dim=-1) @ vc[..., : t + 1, :])
    return torch.cat(outs, dim=-2)


def castle_decode(qc, kc, vc, qu, ku, vu):
    """Decoding form: tokens arrive one at a time and a compact cache is updated.

    Cache: U (lookahead keys of all past positions), the Q^U cache, K^C and V^C. When token t
    arrives: U_s += sigmoid(tau q^U_s . k^U_t) v^U_t for every s < t, then u_t = 0 is appended.
    """
    L, dh = qc.shape[-2], qc.shape[-1]
    tau = dh ** -0.5
    lead = qc.shape[:-2]
    U = qc.new_zeros(*lead, 0, dh)
    qu_cache, kc_cache, vc_cache = (qc.new_zeros(*lead, 0, dh) for _ in range(3))
    outs = []
    for t in range(L):
        k_u, v_u = ku[..., t : t + 1, :], vu[..., t : t + 1, :]
        gates = torch.sigmoid(tau * qu_cache @ k_u.transpose(-1, -2))   # (..., t, 1)
        U = torch.cat([U + gates * v_u, torch.zeros_like(v_u)], dim=-2)
        qu_cache = torch.cat([qu_cache, qu[..., t : t + 1, :]], dim=-2)
        kc_cache = torch.cat([kc_cache, kc[..., t : t + 1, :]], dim=-2)
        vc_cache = torch.cat([vc_cache, vc[..., t : t + 1, :]], dim=-2)
        q = qc[..., t : t + 1, :]
        a = tau * q @ kc_cache.transpose(-1, -2) - F.silu(tau * q @ U.transpose(-1, -2))
        outs.append(torch.softmax(a, dim=-1) @ vc_cache)
    return torch.cat(outs, dim=-2)


FORMS = {"parallel": castle_parallel, "recurrent": castle_recurrent, "decode": castle_decode}


class CastleAttention(nn.Module):
    """Multi-head CASTLE attention, a drop-in for icml26.lm.model.CausalSelfAttention.

    Six projections of width H * d_h = d (one Linear of 6d outputs; biases as in the baseline's
    qkv Linear, an INFERRED choice: the reference has none), all H heads carrying both the causal
    and the lookahead part (INFERRED: the paper's head split may differ), output projection W_O.
    Compared with the baseline it has 3 d (d + 1) more parameters per layer.
    """

    def __init__(self, config: GPTConfig, layer: int = 0, form: str = "parallel"):
        super().__init__()
        if config.d_model % config.n_heads:
            raise ValueError(
                f"d_model {config.d_model} is not divisible by n_heads {config.n_heads}")
        if form not in FORMS:
            raise ValueError(f"form {form!r} is unknown; allowed: {', '.join(FORMS)}")
        self.n_heads, self.form = config.n_heads, form
        self.proj_in = nn.Linear(config.d_model, 6 * config.d_model)
        self.proj = nn.Linear(config.d_model, config.d_model)
        self.proj.residual_proj = True      # GPT-2 init: scaled by 1/sqrt(2 layers)

    def heads(self, x: torch.Tensor):
        """(B, L, d) -> qc, kc, vc, qu, ku, vu, each (B, H, L, d_h)."""
        b, t, d = x.shape
        parts = self.proj_in(x).split(d, dim=2)
        return tuple(z.view(b, t, self.n_heads, d // self.n_heads).transpose(1, 2)
                     for z in parts)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        y = FORMS[self.form](*self.heads(x))
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


def castle_factory(config: GPTConfig, layer: int) -> CastleAttention:
    return CastleAttention(config, layer)


def wide_hidden(d_model: int) -> int:
    """Parameter-matched MLP width of causal-wide: 4d -> 5.5d adds 2 * 1.5d * d = 3d^2, the
    weights CASTLE's three extra projections add (H d_h = d)."""
    return int(math.ceil(5.5 * d_model))
