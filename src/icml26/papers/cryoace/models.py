"""CryoACE-mini and the Voxel-CNN (torch). INFERRED throughout: the paper gives only the
abstract; this is the spec's 2-D reading.

CryoACE-mini is stacked over seeds (weights with a leading seed axis, icml26.stacked layout):
every seed keeps its own parameters, batches and noise, and the loss summed over seeds gives
each seed exactly its own gradient, so S seeds train as S separate models would.

Coordinates are (y, x) pixels of 1 Angstrom, as in data.py.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch.nn import functional as F

from icml26 import stacked
from icml26.seeding import derive_seed

from .data import BOND

N_RING = 8
RADII = (1.5, 3.0)
FD_STEP = 1.0       # finite-difference step of the map gradient (px), INFERRED
N_INDEX = 8         # dims of the chain-index features, INFERRED: sin/cos of pi f i/L, f in 1,2,4,8
N_FEATURES = 1 + N_RING * len(RADII) + 2 + 4   # 17 samples + gradient + neighbour vectors = 23


def sample_offsets() -> torch.Tensor:
    """The 17 read-out points around an atom (centre, two rings of 8 directions) followed by
    the 4 finite-difference points (+-y, +-x) of the gradient: (21, 2) in (y, x)."""
    ang = 2 * math.pi * torch.arange(N_RING, dtype=torch.float64) / N_RING
    pts = [torch.zeros(1, 2, dtype=torch.float64)]
    for r in RADII:
        pts.append(torch.stack([r * torch.sin(ang), r * torch.cos(ang)], dim=-1))
    h = FD_STEP
    pts.append(torch.tensor([[h, 0.0], [-h, 0.0], [0.0, h], [0.0, -h]], dtype=torch.float64))
    return torch.cat(pts)


def sample_map(maps, pts) -> torch.Tensor:
    """Bilinear samples of maps (N, H, W) at pts (N, P, 2) in (y, x) pixels (zero outside):
    grid_sample with align_corners=True, so pixel centres 0 .. H-1 map to -1 .. 1."""
    N, H, W = maps.shape
    g = torch.stack([2 * pts[..., 1] / (W - 1) - 1, 2 * pts[..., 0] / (H - 1) - 1], dim=-1)
    out = F.grid_sample(maps[:, None], g[:, None].to(maps.dtype), mode="bilinear",
                        padding_mode="zeros", align_corners=True)
    return out[:, 0, 0]


def atom_features(maps, X, offsets) -> torch.Tensor:
    """The 23 atom-centric features. maps (S*B, H, W), X (S, B, L, 2) -> (S, B, L, 23)."""
    S, B, L, _ = X.shape
    pts = (X[..., None, :] + offsets.to(X.dtype)).reshape(S * B, L * len(offsets), 2)
    v = sample_map(maps, pts).reshape(S, B, L, len(offsets)).to(X.dtype)
    n = 1 + N_RING * len(RADII)
    grad = torch.stack([(v[..., n] - v[..., n + 1]) / (2 * FD_STEP),
                        (v[..., n + 2] - v[..., n + 3]) / (2 * FD_STEP)], dim=-1)
    zero = torch.zeros_like(X[:, :, :1])
    prev = torch.cat([zero, X[:, :, :-1] - X[:, :, 1:]], dim=2) / BOND
    nxt = torch.cat([X[:, :, 1:] - X[:, :, :-1], zero], dim=2) / BOND
    return torch.cat([v[..., :n], grad, prev, nxt], dim=-1)


def index_features(L: int, dtype=torch.float32) -> torch.Tensor:
    t = torch.arange(L, dtype=torch.float64) / L
    f = torch.tensor([1.0, 2.0, 4.0, 8.0], dtype=torch.float64)
    return torch.cat([torch.sin(math.pi * t[:, None] * f), torch.cos(math.pi * t[:, None] * f)],
                     dim=1).to(dtype)


class CryoACEMini:
    """Stacked CryoACE-mini: params is a dict name -> list of [W (S, in, out), b (S, 1, out)]."""

    def __init__(self, hidden: int = 64, kernel: int = 5, rounds: int = 2, max_step: float = 3.0,
                 res_floor: float = 1.5):
        self.hidden, self.kernel, self.rounds = int(hidden), int(kernel), int(rounds)
        self.max_step, self.res_floor = float(max_step), float(res_floor)

    def init(self, seeds, device) -> dict:
        """nn.Linear's default init per seed and block (icml26.stacked.uniform_init)."""
        h, k = self.hidden, self.kernel

        def block(name, sizes):
            return stacked.uniform_init(sizes, [derive_seed(s, name) for s in seeds], device)

        p = {"enc": block("enc", [N_FEATURES, h, h]), "idx": block("idx", [N_INDEX, h]),
             "head": block("head", [h, 3])}
        for r in range(self.rounds):
            p[f"conv{r}"] = block(f"conv{r}", [h * k, h])
        return p

    @staticmethod
    def leaves(params) -> list:
        return [t for name in sorted(params) for t in stacked.parameters(params[name])]

    def step(self, params, maps, X, offsets):
        """One pass: features at the current X (S, B, L, 2) -> displacement, predicted R."""
        S, B, L, _ = X.shape
        f = atom_features(maps, X, offsets).reshape(S, B * L, N_FEATURES)
        h = stacked.forward(params["enc"], f, activation=F.silu, last=F.silu)
        emb = stacked.forward(params["idx"], index_features(L, X.dtype).expand(S, L, N_INDEX))
        h = (h.reshape(S, B, L, self.hidden) + emb[:, None])
        pad = self.kernel // 2
        for r in range(self.rounds):
            # 1-D convolution over the chain axis (the "atomic graph" is the chain), residual
            win = F.pad(h, (0, 0, pad, pad)).unfold(2, self.kernel, 1)       # (S, B, L, C, k)
            win = win.reshape(S, B * L, self.hidden * self.kernel)
            h = h + F.silu(stacked.forward(params[f"conv{r}"], win)).reshape(S, B, L, self.hidden)
        out = stacked.forward(params["head"], h.reshape(S, B * L, self.hidden))
        out = out.reshape(S, B, L, 3)
        delta = self.max_step * torch.tanh(out[..., :2])
        res = F.softplus(out[..., 2]) + self.res_floor
        return delta, res

    def recycle(self, params, maps, X0, K, offsets, noise=None):
        """K recycles X <- X + Delta(X) with stop-gradient between them. Returns the list of
        X^(0) .. X^(K) and of R_hat per pass. ``noise(k, X)`` (k = 1 .. K), when given, is
        added after recycle k (guided sampling)."""
        X, xs, rs = X0, [X0], []
        for k in range(1, int(K) + 1):
            delta, res = self.step(params, maps, X.detach(), offsets)
            X = X.detach() + delta
            if noise is not None:
                X = X + noise(k, X)
            xs.append(X)
            rs.append(res)
        return xs, rs


def cryoace_loss(xs, rs, Xt, Rt, bond_w: float = 0.1, res_w: float = 0.1) -> torch.Tensor:
    """sum_k |X^(k+1) - X*|^2 / L + bond_w sum_i (|x_{i+1} - x_i| - 3.8)^2 / L (last recycle)
    + res_w MSE(R_hat, R) (mean over recycles), each averaged over the batch and summed over
    seeds (each seed gets its own gradient)."""
    L = Xt.shape[-2]
    coord = sum(((x - Xt) ** 2).sum((-1, -2)) / L for x in xs[1:])          # (S, B)
    d = torch.linalg.vector_norm(xs[-1][..., 1:, :] - xs[-1][..., :-1, :], dim=-1)
    bond = ((d - BOND) ** 2).sum(-1) / L
    res = sum(((r - Rt) ** 2).mean(-1) for r in rs) / len(rs)
    return (coord + bond_w * bond + res_w * res).mean(1).sum()


# ------------------------------------------------------------------------------------------
# Voxel-CNN
# ------------------------------------------------------------------------------------------
def voxel_cnn(channels: int, layers: int, generator: torch.Generator):
    """vision.nets.conv_stack (3x3, no pooling) to one logit map, ReLU (INFERRED), weights
    re-drawn from ``generator`` with nn.Conv2d's default bounds U(-1/sqrt(fan_in), ..)."""
    from torch import nn

    from icml26.vision.nets import conv_stack

    net = conv_stack(1, int(channels), int(layers), kernel=3, out_channels=1,
                     activation=nn.ReLU)
    with torch.no_grad():
        for m in net:
            if isinstance(m, nn.Conv2d):
                bound = 1.0 / math.sqrt(m.in_channels * 9)
                m.weight.copy_((torch.rand(m.weight.shape, generator=generator) * 2 - 1) * bound)
                m.bias.copy_((torch.rand(m.bias.shape, generator=generator) * 2 - 1) * bound)
    return net


def heat_targets(X, grid: int, sigma: float) -> np.ndarray:
    """Gaussian bumps (s.d. sigma) at the true atoms, clipped at 1: (n, grid, grid)."""
    from icml26.vision.images import gaussian_spots

    return np.stack([np.minimum(gaussian_spots((grid, grid), x, sigma, 1.0), 1.0)
                     for x in X]).astype(np.float32)


def voxel_logits(net, maps, chunk: int = 256) -> torch.Tensor:
    """maps (n, H, W) -> logits (n, H, W), in chunks."""
    outs = []
    with torch.no_grad():
        for s in range(0, len(maps), chunk):
            x = maps[s:s + chunk, None].contiguous(memory_format=torch.channels_last)
            outs.append(net(x)[:, 0])
    return torch.cat(outs)
