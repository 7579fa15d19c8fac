"""STD-Former, its ablations and the neural baselines, stacked over runs (imports torch).

Every tensor has a leading run axis R: run r owns its parameters (TDE, codewords, head) and
reads the images of its own seed, and the loss is summed over runs, so each run gets exactly
its own gradient and Adam (elementwise) trains R runs as R separate ones would.

Shapes: tokens V (R, B, N, D) (N patches of an image, D = 32), textons / codewords
T (R, B or 1, K, D), encodings x (R, B, K (1 + D)), penultimate embeddings e (R, B, H).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from icml26.vision.nets import mlp, patchify

from .topology import mst_edges


# ------------------------------------------------------------------------------------------
# frozen backbone: a fixed random 2-layer MLP on 4x4 patches (stand-in for a pretrained CNN)
# ------------------------------------------------------------------------------------------
def backbone(seed: int, patch: int, hidden: int, dim: int, device) -> nn.Sequential:
    """16 -> hidden (GELU) -> dim, weights N(0, 1/fan_in) from a CPU generator, zero biases
    (INFERRED: the spec gives the weights only)."""
    net = mlp([patch * patch, hidden, dim], activation=nn.GELU)
    g = torch.Generator().manual_seed(int(seed) % 2**63)
    with torch.no_grad():
        for layer in net:
            if isinstance(layer, nn.Linear):
                w = torch.randn(layer.weight.shape, generator=g) / math.sqrt(layer.in_features)
                layer.weight.copy_(w)
                layer.bias.zero_()
    return net.to(device).requires_grad_(False)


@torch.no_grad()
def tokens(net, images: torch.Tensor, patch: int, chunk: int = 2048) -> torch.Tensor:
    """(n, S, S) images -> (n, N, D) patch tokens v_n."""
    return torch.cat([net(patchify(images[s:s + chunk], patch))
                      for s in range(0, len(images), chunk)])


# ------------------------------------------------------------------------------------------
# Texture Dictionary Extractor and the residual encoding
# ------------------------------------------------------------------------------------------
def tde_init(gen: torch.Generator, K: int, D: int) -> dict:
    """Queries q_k ~ N(0, 1), W_k, W_v ~ N(0, 1/D) (INFERRED)."""
    return {"q": torch.randn(K, D, generator=gen),
            "Wk": torch.randn(D, D, generator=gen) / math.sqrt(D),
            "Wv": torch.randn(D, D, generator=gen) / math.sqrt(D)}


def project(V: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    """v_n W for every token of every run: (R, B, N, D) x (R, D, E) -> (R, B, N, E)."""
    R, B, N, D = V.shape
    return torch.bmm(V.reshape(R, B * N, D), W).reshape(R, B, N, W.shape[-1])


def tde(params: dict, V: torch.Tensor):
    """Projected tokens u_n = W_v v_n and textons t_k = sum_n A_kn u_n with
    A_kn = softmax_n(q_k . W_k v_n / sqrt(D)) (INFERRED single cross-attention layer).

    q_k . W_k v_n is computed as (W_k^T q_k) . v_n, which is cheaper than projecting every
    token (row-vector convention: the key of v_n is v_n W_k)."""
    D = V.shape[-1]
    qk = torch.bmm(params["q"], params["Wk"].transpose(1, 2))          # (R, K, D)
    A = torch.softmax(project(V, qk.transpose(1, 2)) / math.sqrt(D), dim=2)   # (R, B, N, K)
    U = project(V, params["Wv"])
    return U, A.transpose(-1, -2) @ U


def sqdist(U: torch.Tensor, T: torch.Tensor) -> torch.Tensor:
    """||u_n - t_k||^2: (R, B, N, D) x (R, B or 1, K, D) -> (R, B, N, K), clamped at 0
    (either argument may be broadcast over B)."""
    d = (U * U).sum(-1)[..., None] + (T * T).sum(-1)[..., None, :] \
        - 2.0 * U @ T.transpose(-1, -2)
    return d.clamp_min(0.0)


def coverage_loss(U: torch.Tensor, T: torch.Tensor, tau_frac: float, beta: float):
    """Texton Coverage Loss per run (INFERRED form of the spec):
    mean_n[-tau log sum_k exp(-||u_n - t_k||^2 / tau)] + beta mean_{k != l} exp(-||t_k - t_l||^2
    / tau), tau = tau_frac * mean_{n,k} ||u_n - t_k||^2 of the run's batch (detached).
    Returns (loss (R,), mean squared distance (R,))."""
    d = sqdist(U, T)
    mean_d = d.mean(dim=(1, 2, 3))
    tau = (tau_frac * mean_d).detach().clamp_min(1e-12)[:, None, None, None]
    cover = (-tau[..., 0] * torch.logsumexp(-d / tau, dim=-1)).mean(dim=(1, 2))
    K = T.shape[-2]
    dt = sqdist(T, T)
    off = ~torch.eye(K, dtype=torch.bool, device=T.device)
    rep = (torch.exp(-dt / tau) * off).sum(dim=(-1, -2)) / (K * (K - 1))
    return cover + beta * rep.mean(dim=1), mean_d


def encode(U: torch.Tensor, T: torch.Tensor, log_smooth: torch.Tensor | None = None):
    """Deep-TEN-style residual encoding against codewords T (INFERRED details).

    a_nk = softmax_k(-||u_n - t_k||^2 / s), s the image's mean squared distance (STD-Former),
    or softmax_k(-exp(log_smooth_k) ||u_n - c_k||^2) with learnable smoothing (Deep-TEN).
    x = L2-normalised [pi (K), r_1 / ||r_1||, ..., r_K / ||r_K||] with pi_k = mean_n a_nk and
    r_k = sum_n a_nk (u_n - t_k) / sum_n a_nk."""
    # (K, N) layout: softmax over k along dim 2 is much faster on the CPU than along a
    # short last axis
    d = sqdist(T, U)                                                    # (R, B, K, N)
    if log_smooth is None:
        logits = -d / d.mean(dim=(2, 3), keepdim=True).clamp_min(1e-12)
    else:
        logits = -d * torch.exp(log_smooth)[:, None, :, None]
    a = torch.softmax(logits, dim=2)
    mass = a.sum(dim=-1, keepdim=True).clamp_min(1e-12)                # (R, B, K, 1)
    r = (a @ U - mass * T) / mass
    r = r / (r.norm(dim=-1, keepdim=True) + 1e-6)
    x = torch.cat([a.mean(dim=-1), r.flatten(2)], dim=-1)
    return x / x.norm(dim=-1, keepdim=True).clamp_min(1e-12)


# ------------------------------------------------------------------------------------------
# the same STD-Former computations without projecting every token (what training runs)
# ------------------------------------------------------------------------------------------
# With u_n = v_n W_v and t_k = vbar_k W_v (vbar_k = sum_n A_kn v_n), every quantity above is a
# quadratic form in M = W_v W_v^T: u_n . t_k = v_n M vbar_k^T, ||t_k||^2 = vbar_k M vbar_k^T,
# and mean_n ||u_n||^2 = tr(M S_b) with S_b = mean_n v_n^T v_n of the (frozen) tokens of
# image b. ||u_n||^2 is constant over k, so it cancels in softmax_k; residuals are
# r_k = (abar_k - vbar_k) W_v. This is the same function (tests compare it with tde / encode /
# coverage_loss), about 2.5x cheaper: no (B, N, D) x (D, D) projection per step.
def second_moments(V: torch.Tensor) -> torch.Tensor:
    """S_b = mean_n v_n^T v_n per image: (n, N, D) -> (n, D, D)."""
    return V.transpose(-1, -2) @ V / V.shape[-2]


def _std_parts(params: dict, V: torch.Tensor, S2: torch.Tensor):
    D = V.shape[-1]
    qk = torch.bmm(params["q"], params["Wk"].transpose(1, 2))          # (R, K, D)
    logits = project(V, qk.transpose(1, 2)).transpose(-1, -2).contiguous()   # (R, B, K, N)
    A = torch.softmax(logits / math.sqrt(D), dim=-1)                   # softmax over n
    vbar = A @ V                                                        # (R, B, K, D)
    W = params["Wv"]
    Mw = W @ W.transpose(1, 2)                                          # (R, D, D)
    tw = vbar @ Mw[:, None]                                             # (R, B, K, D)
    tt = (vbar * tw).sum(-1)                                            # ||t_k||^2
    cross = tw @ V.transpose(-1, -2)                                    # u_n . t_k (R, B, K, N)
    R, B = S2.shape[:2]
    uu = torch.bmm(S2.reshape(R, B, D * D), Mw.reshape(R, D * D, 1))[..., 0]   # tr(M S_b)
    mean_d = uu + tt.mean(-1) - 2.0 * cross.mean(dim=(2, 3))            # (R, B)
    return vbar, tw, tt, cross, uu, mean_d


def std_encoding(params: dict, V: torch.Tensor, S2: torch.Tensor) -> torch.Tensor:
    """encode(*tde(params, V)) computed through M = W_v W_v^T (see above)."""
    vbar, _, tt, cross, _, mean_d = _std_parts(params, V, S2)
    s = mean_d.clamp_min(1e-12)[..., None, None]
    a = torch.softmax((2.0 * cross - tt[..., None]) / s, dim=2)        # (R, B, K, N)
    mass = a.sum(dim=-1, keepdim=True).clamp_min(1e-12)
    r = project(a @ V / mass - vbar, params["Wv"])
    r = r / (r.norm(dim=-1, keepdim=True) + 1e-6)
    x = torch.cat([a.mean(dim=-1), r.flatten(2)], dim=-1)
    return x / x.norm(dim=-1, keepdim=True).clamp_min(1e-12)


def std_coverage(params: dict, V: torch.Tensor, S2: torch.Tensor, tau_frac: float,
                 beta: float):
    """coverage_loss(*tde(params, V), tau_frac, beta) computed through M = W_v W_v^T."""
    vbar, tw, tt, cross, uu, mean_d = _std_parts(params, V, S2)
    md = mean_d.mean(dim=1)
    tau = (tau_frac * md).detach().clamp_min(1e-12)[:, None, None]
    cover = uu.mean(1) - (tau[..., 0] * torch.logsumexp(
        (2.0 * cross - tt[..., None]) / tau[..., None], dim=2).mean(dim=2)).mean(1)
    K = vbar.shape[-2]
    dt = (tt[..., :, None] + tt[..., None, :] - 2.0 * vbar @ tw.transpose(-1, -2)).clamp_min(0.0)
    off = ~torch.eye(K, dtype=torch.bool, device=V.device)
    rep = (torch.exp(-dt / tau[..., None]) * off).sum(dim=(-1, -2)) / (K * (K - 1))
    return cover + beta * rep.mean(dim=1), md


# ------------------------------------------------------------------------------------------
# the MLP head (stacked) and the Sparse Topological Loss
# ------------------------------------------------------------------------------------------
def head(layers, x: torch.Tensor, drop_mask: torch.Tensor | None = None):
    """(R, B, in) -> logits (R, B, C) and the penultimate embeddings e (R, B, H) (ReLU, before
    dropout); ``drop_mask`` (R, B, H) of kept units already divided by the keep rate."""
    (w1, b1), (w2, b2) = layers
    e = torch.relu(torch.baddbmm(b1, x, w1))
    h = e if drop_mask is None else e * drop_mask
    return torch.baddbmm(b2, h, w2), e


def topological_loss(e: torch.Tensor, y: torch.Tensor, margin: float):
    """Sparse Topological Loss of one batch: e (B, H), labels y (B,).

    The MST of the detached pairwise distances gives the B - 1 edges whose lengths are the
    0-D persistence deaths; on those edges (differentiable lengths d_ij) same-class pairs
    cost d_ij^2 and different-class pairs max(0, m - d_ij)^2, averaged over the edges."""
    with torch.no_grad():
        D = torch.cdist(e, e).double().cpu().numpy()
    i, j, _ = mst_edges(D)
    i = torch.as_tensor(i, device=e.device)
    j = torch.as_tensor(j, device=e.device)
    d = torch.sqrt(((e[i] - e[j]) ** 2).sum(-1) + 1e-12)
    same = y[i] == y[j]
    return torch.where(same, d**2, torch.relu(margin - d) ** 2).mean()


# ------------------------------------------------------------------------------------------
# batches, dropout and the stacked training loop
# ------------------------------------------------------------------------------------------
class EpochBatches:
    """Minibatch indices of one run: a fresh permutation each epoch from its own Generator;
    a batch that crosses an epoch end takes the rest from the next permutation."""

    def __init__(self, seed: int, n: int, batch: int):
        self.rng, self.n, self.batch = np.random.default_rng(seed), n, min(batch, n)
        self.queue = np.zeros(0, dtype=np.int64)

    def next(self) -> np.ndarray:
        while len(self.queue) < self.batch:
            self.queue = np.concatenate([self.queue, self.rng.permutation(self.n)])
        out, self.queue = self.queue[:self.batch], self.queue[self.batch:]
        return out


def batch_indices(streams) -> np.ndarray:
    return np.stack([s.next() for s in streams])


def gather(X: torch.Tensor, si: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """X[si[r], idx[r, b]] for X (S, n, ...), si (R,), idx (R, B) -> (R, B, ...)."""
    S, n = X.shape[:2]
    flat = (si[:, None] * n + idx).reshape(-1)
    return X.reshape(S * n, *X.shape[2:]).index_select(0, flat).reshape(
        *idx.shape, *X.shape[2:])


def dropout_masks(gens, shape, p: float, device) -> torch.Tensor | None:
    """Per-run dropout masks from each run's own CPU generator (kept units scaled 1/(1-p))."""
    if p <= 0:
        return None
    m = torch.stack([(torch.rand(shape, generator=g) >= p).float() for g in gens])
    return (m / (1.0 - p)).to(device)


def leaves(tensors: dict, device) -> dict:
    return {k: v.to(device).requires_grad_(True) for k, v in tensors.items()}


def stack_dicts(dicts: list[dict]) -> dict:
    return {k: torch.stack([d[k] for d in dicts]) for k in dicts[0]}


def all_finite(*tensors) -> torch.Tensor:
    """(R,) True where every listed per-run tensor is finite."""
    out = None
    for t in tensors:
        ok = torch.isfinite(t.reshape(t.shape[0], -1)).all(dim=1)
        out = ok if out is None else out & ok
    return out
