"""The ChaTSFM / Chada adapter and its two ablations, stacked over runs (torch).

Every weight has a leading run axis R, so CHADA, CHADA-NODESC and DENSE-NOGATE of every seed
train in one process as independent models (Adam is elementwise; the loss is a sum of the
runs' own losses). A run's variant is set by three flags:
  use_desc   descriptor delta enters MLP_s and MLP_g (CHADA-NODESC: off; its delta weights
             are zero and receive no gradient, i.e. the inputs are removed);
  sparse     top-k neighbours with a softmax over those k (DENSE-NOGATE: softmax over all j);
  gated      y' = y + g * r with g = sigmoid(MLP_g(...)) (DENSE-NOGATE: y' = y + r).

For one window with C channels (all in the TSFM's instance-normalised space):
  s_ij = MLP_s([f_ij, delta])                    32 hidden, GELU, scalar; s_ii excluded
  a_ij = softmax over the top-k s_ij (k = 3)
  m_i  = sum_j a_ij E_n([x_j[-48:], yhat_j]),   e_i = E_s([x_i[-48:], yhat_i])   (72 -> 64)
  r_i  = MLP_r([m_i, e_i])                      128 -> 64 -> 24
  g_i  = sigmoid(MLP_g([delta, max_j s_ij, mean top-k s_ij]))   output bias -2
  yhat'_i = yhat_i + g_i r_i
All sizes are the spec's and INFERRED (only the abstract is known); MLP_g's hidden width
(params.gate_hidden) is not in the spec at all (INFERRED).
"""

from __future__ import annotations

import math

import torch
from torch.nn import functional as F

from .features import N_DESC, N_PAIR


def _linear(gen, R, fan_in, fan_out, live_in=None):
    """torch.nn.Linear's default init U(-1/sqrt(fan), 1/sqrt(fan)), one draw per run, on the
    CPU generator. live_in (R, fan_in) zeroes the weights of removed inputs and sets each
    run's bound from its own number of live inputs."""
    if live_in is None:
        live_in = torch.ones(R, fan_in)
    bound = 1.0 / torch.sqrt(live_in.sum(1).clamp(min=1.0))
    W = (torch.rand(R, fan_in, fan_out, generator=gen) * 2 - 1) * bound[:, None, None]
    b = (torch.rand(R, fan_out, generator=gen) * 2 - 1) * bound[:, None]
    return W * live_in[:, :, None], b


def init_params(gen, flags, p) -> dict:
    """Stacked parameters of R adapters; flags: dict of bool tensors (R,) use_desc, sparse,
    gated."""
    R = len(flags["use_desc"])
    d = flags["use_desc"].float()[:, None]
    sim_live = torch.cat([torch.ones(R, N_PAIR), d.expand(R, N_DESC)], 1)
    gate_live = torch.cat([d.expand(R, N_DESC), torch.ones(R, 2)], 1)
    gate_live = gate_live * flags["gated"].float()[:, None]   # no gate in DENSE-NOGATE
    H, D, rec = int(p["horizon"]), int(p["code_dim"]), int(p["recent"])
    out = {}
    out["s_W1"], out["s_b1"] = _linear(gen, R, N_PAIR + N_DESC, int(p["sim_hidden"]), sim_live)
    out["s_W2"], out["s_b2"] = _linear(gen, R, int(p["sim_hidden"]), 1)
    out["n_W"], out["n_b"] = _linear(gen, R, rec + H, D)
    out["e_W"], out["e_b"] = _linear(gen, R, rec + H, D)
    out["r_W1"], out["r_b1"] = _linear(gen, R, 2 * D, int(p["refine_hidden"]))
    out["r_W2"], out["r_b2"] = _linear(gen, R, int(p["refine_hidden"]), H)
    out["g_W1"], out["g_b1"] = _linear(gen, R, N_DESC + 2, int(p["gate_hidden"]), gate_live)
    out["g_W2"], out["g_b2"] = _linear(gen, R, int(p["gate_hidden"]), 1)
    out["g_b2"] = torch.full_like(out["g_b2"], float(p["gate_bias"]))  # gate starts ~closed
    out["sim_live"], out["gate_live"] = sim_live, gate_live
    return out


TRAINABLE = ("s_W1", "s_b1", "s_W2", "s_b2", "n_W", "n_b", "e_W", "e_b", "r_W1", "r_b1",
             "r_W2", "r_b2", "g_W1", "g_b1", "g_W2", "g_b2")


def _mlp_in(x, W, b):
    """x (R, ..., in) @ W (R, in, out) + b (R, out)."""
    R = x.shape[0]
    shp = x.shape
    y = torch.bmm(x.reshape(R, -1, shp[-1]), W) + b[:, None, :]
    return y.reshape(*shp[:-1], W.shape[-1])


def forward(P, flags, feats, desc, recent, yhat, valid, k: int, gate_off: bool = False):
    """One batch per run. feats (R, B, C, C, 5), desc (R, B, 7), recent (R, B, C, 48),
    yhat (R, B, C, H) normalised, valid (R, B, C) bool (padding channels False).
    Returns (yhat' (R, B, C, H), gate (R, B, C), sim (R, B, C, C) with excluded pairs -inf,
    attention (R, B, C, C)). gate_off forces g = 0 (the exact TSFM, for tests)."""
    R, B, C = valid.shape
    d = desc[:, :, None, None, :].expand(R, B, C, C, desc.shape[-1])
    x = torch.cat([feats, d], -1) * P["sim_live"][:, None, None, None, :]
    s = _mlp_in(F.gelu(_mlp_in(x, P["s_W1"], P["s_b1"])), P["s_W2"], P["s_b2"])[..., 0]
    eye = torch.eye(C, dtype=torch.bool, device=s.device)
    allowed = valid[:, :, None, :] & valid[:, :, :, None] & ~eye
    s = s.masked_fill(~allowed, -math.inf)
    kk = min(k, C - 1)
    top = torch.topk(s, kk, dim=-1)
    keep = torch.zeros_like(allowed).scatter_(-1, top.indices, True) & allowed
    sparse = flags["sparse"][:, None, None, None]
    keep = torch.where(sparse, keep, allowed)
    logits = s.masked_fill(~keep, -math.inf)
    a = torch.softmax(logits, -1)
    a = torch.nan_to_num(a, nan=0.0)                 # rows of padding channels
    u = torch.cat([recent, yhat], -1)
    m = torch.einsum("rbij,rbjd->rbid", a, _mlp_in(u, P["n_W"], P["n_b"]))
    e = _mlp_in(u, P["e_W"], P["e_b"])
    r = _mlp_in(F.gelu(_mlp_in(torch.cat([m, e], -1), P["r_W1"], P["r_b1"])),
                P["r_W2"], P["r_b2"])
    smax = torch.where(allowed, s, torch.full_like(s, -1e9)).max(-1).values
    smax = torch.where(allowed.any(-1), smax, torch.zeros_like(smax))
    tops = torch.where(torch.isfinite(top.values), top.values, torch.zeros_like(top.values))
    smean = tops.mean(-1)
    dg = desc[:, :, None, :].expand(R, B, C, desc.shape[-1])
    gin = torch.cat([dg, smax[..., None], smean[..., None]], -1) * P["gate_live"][:, None,
                                                                                   None, :]
    g = torch.sigmoid(_mlp_in(F.gelu(_mlp_in(gin, P["g_W1"], P["g_b1"])),
                              P["g_W2"], P["g_b2"])[..., 0])
    g = torch.where(flags["gated"][:, None, None], g, torch.ones_like(g))
    if gate_off:
        g = torch.zeros_like(g)
    return yhat + g[..., None] * r, g, s, a


def n_parameters(P, r: int) -> int:
    """Live parameters of run r (removed inputs' weights and an unused gate not counted)."""
    total = 0
    for name in TRAINABLE:
        w = P[name][r]
        if name == "s_W1":
            total += int(P["sim_live"][r].sum()) * w.shape[-1]
        elif name == "g_W1":
            total += int(P["gate_live"][r].sum()) * w.shape[-1]
        elif name.startswith("g_") and not bool(P["gate_live"][r].any()):
            continue
        else:
            total += w.numel()
    return total
