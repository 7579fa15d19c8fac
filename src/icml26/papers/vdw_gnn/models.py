"""The four networks (torch; imported only by the train stage).

Parameters are plain tensors in a dict so that the same forward runs in float32 (training) and
float64 (predictions for the equivariance checks). Initialisation follows torch.nn.Linear's
default (uniform +-1/sqrt(fan_in)) from a per-run torch.Generator.
"""

from __future__ import annotations

import torch


def linear_init(gen, fan_in: int, fan_out: int, dtype):
    bound = 1.0 / fan_in**0.5
    w = (torch.rand(fan_in, fan_out, generator=gen, dtype=dtype) * 2 - 1) * bound
    b = (torch.rand(fan_out, generator=gen, dtype=dtype) * 2 - 1) * bound
    return w, b


def silu(x):
    """x sigmoid(x), torch's fused kernel (about 3x cheaper than the composed ops on CPU)."""
    return torch.nn.functional.silu(x)


# ------------------------------------------------------------------------------------------
# VDW-GNN / Scalar-DW readout: y(i) = sum_c alpha_c(i) U_c(i), alpha = MLP(invariants(i))
# ------------------------------------------------------------------------------------------
def readout_init(gen, d_in: int, n_coef: int, hidden: int, dtype):
    p = {}
    p["w1"], p["b1"] = linear_init(gen, d_in, hidden, dtype)
    p["w2"], p["b2"] = linear_init(gen, hidden, n_coef, dtype)
    return p


def readout_forward(p, inp):
    """inp: Z (B, N, D) invariants (standardised), U (B, N, 3, C) vector coefficients.

    Only invariant scalars multiply vectors that rotate with the cloud, so the output is exactly
    rotation-equivariant; the coefficients are built from centred data (translation-invariant).
    """
    alpha = silu(inp["Z"] @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]   # 2 layers, SiLU
    return torch.einsum("bnkc,bnc->bnk", inp["U"], alpha)


# ------------------------------------------------------------------------------------------
# GCN-xyz: 3 GCN layers (hidden 64) on coordinates as independent scalars, linear 3-D output
# ------------------------------------------------------------------------------------------
def gcn_init(gen, d_in: int, hidden: int, dtype):
    p = {}
    dims = [d_in, hidden, hidden, hidden]
    for layer in range(3):
        p[f"w{layer}"], p[f"b{layer}"] = linear_init(gen, dims[layer], dims[layer + 1], dtype)
    p["wo"], p["bo"] = linear_init(gen, hidden, 3, dtype)
    return p


def gcn_forward(p, inp):
    """inp: H (B, N, d) node features, A (B, N, N) = D~^-1/2 (A + I) D~^-1/2 (dense per cloud:
    on CPU a batched matmul beats gather/scatter message passing at N = 64)."""
    h, A = inp["H"], inp["A"]
    for layer in range(3):
        w, b = p[f"w{layer}"], p[f"b{layer}"]
        # (A h) W when the input is narrower than the output: same result, fewer flops
        h = (A @ h) @ w if w.shape[0] < w.shape[1] else A @ (h @ w)
        h = torch.relu(h + b)
    return h @ p["wo"] + p["bo"]


# ------------------------------------------------------------------------------------------
# EGNN (Satorras et al. 2021) with a vector output from the coordinate-update branch
# ------------------------------------------------------------------------------------------
def egnn_init(gen, d_in: int, n_vec: int, hidden: int, dtype, n_layers: int = 3):
    p = {}
    p["we"], p["be"] = linear_init(gen, d_in, hidden, dtype)
    for layer in range(n_layers):
        # phi_e on [h_i, h_j, ||x_i - x_j||^2, <v_i^f, v_j^f>_f] (one linear layer + SiLU)
        w, p[f"e{layer}_b"] = linear_init(gen, 2 * hidden + 1 + n_vec, hidden, dtype)
        p[f"e{layer}_w"] = w
        if layer < n_layers - 1:  # the last layer's messages feed the output head only
            # phi_h on [h_i, mean_j m_ij]: Linear-SiLU-Linear, residual
            p[f"h{layer}_w1"], p[f"h{layer}_b1"] = linear_init(gen, 2 * hidden, hidden, dtype)
            p[f"h{layer}_w2"], p[f"h{layer}_b2"] = linear_init(gen, hidden, hidden, dtype)
    p["wx"], _ = linear_init(gen, hidden, 1, dtype)       # phi: weight of (x_i - x_j)
    p["wv"], _ = linear_init(gen, hidden, n_vec, dtype)   # psi: weight of v_j^f
    p["n_layers"] = n_layers
    return p


def egnn_forward(p, inp):
    """inp: rel (E, 3) = x_i - x_j, vdst (E, 3, F) = v_j, einv (E, 1 + F) = [|x_i - x_j|^2,
    <v_i^f, v_j^f>] (constant per graph, precomputed), s (N_all, Fs) scalar inputs, src/dst (E,)
    edge indices (message j=dst -> i=src), deg (N_all, 1).

    y(i) = mean_j (x_i - x_j) phi(m_ij) + mean_j sum_f v_j^f psi_f(m_ij), m_ij from the last
    layer; messages see only invariants (distances, inner products), hence E(3)-equivariance.
    """
    src, dst, deg = inp["src"], inp["dst"], inp["deg"]
    rel, vdst, edge_inv = inp["rel"], inp["vdst"], inp["einv"]
    hidden = p["be"].shape[0]

    def at(t, idx):  # index_select: its backward (index_add) is far cheaper than t[idx]'s
        return torch.index_select(t, 0, idx)

    h = inp["s"] @ p["we"] + p["be"]
    m = None
    for layer in range(p["n_layers"]):
        w = p[f"e{layer}_w"]
        # W [h_i, h_j, e_ij] = W_a h_i + W_b h_j + W_e e_ij: node projections then gathers
        a, c = h @ w[:hidden], h @ w[hidden:2 * hidden]
        m = silu(at(a, src) + at(c, dst) + edge_inv @ w[2 * hidden:] + p[f"e{layer}_b"])
        if layer == p["n_layers"] - 1:
            break
        agg = torch.zeros_like(h).index_add_(0, src, m) / deg
        upd = silu(torch.cat([h, agg], 1) @ p[f"h{layer}_w1"] + p[f"h{layer}_b1"])
        h = h + upd @ p[f"h{layer}_w2"] + p[f"h{layer}_b2"]
    phi = m @ p["wx"]                                     # (E, 1)
    psi = m @ p["wv"]                                     # (E, F)
    msg = rel * phi + torch.einsum("ekf,ef->ek", vdst, psi)
    return torch.zeros(deg.shape[0], 3, dtype=msg.dtype, device=msg.device).index_add_(
        0, src, msg) / deg
