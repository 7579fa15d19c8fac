"""The frozen stand-in TSFM (torch): pre-trained once on a univariate synthetic corpus with a
fixed seed (like a public checkpoint; `seed_offset` does not change it), then only queried.

Backbones: the shared `MLPForecaster` (96 -> 256 -> 256 -> 24, GELU; default) and, at full
scale, the shared `PatchTransformer` as a second "TSFM". Both see the instance-normalised
lookback and predict the normalised future; the loss is the MSE there.
"""

from __future__ import annotations

import numpy as np
import torch

from icml26.rl.optim import Adam
from icml26.seeding import derive_seed
from icml26.timeseries.models import MLPForecaster, PatchTransformer, revin_normalise

from . import data as D


def build(backbone: str, p) -> torch.nn.Module:
    L, H = int(p["lookback"]), int(p["horizon"])
    if backbone == "mlp":
        return MLPForecaster(L, H, hidden=tuple(p["tsfm_hidden"]), revin=False)
    q = p["patch"]
    return PatchTransformer(L, H, int(q["patch_len"]), int(q["stride"]), int(q["d_model"]),
                            int(q["n_heads"]), int(q["d_ff"]), int(q["n_layers"]), revin=False)


def net_forward(model, backbone: str, z: torch.Tensor) -> torch.Tensor:
    """Normalised lookbacks (N, L) -> normalised forecasts (N, H)."""
    if backbone == "mlp":
        return model(z)
    return model(z[:, None, :])[:, 0, :]


def pretrain(paper: str, backbone: str, p, dev) -> tuple[torch.nn.Module, list[tuple]]:
    """Pre-train on params.tsfm_windows corpus windows (Adam, params.tsfm_lr, batch
    params.tsfm_batch, params.tsfm_steps steps); every stream from the paper name and the
    backbone only. Returns the frozen model and (step, train MSE, held-out corpus MSE)."""
    L, H = int(p["lookback"]), int(p["horizon"])
    rng = np.random.default_rng(derive_seed(paper, "tsfm", backbone, "corpus"))
    corpus = D.tsfm_corpus(rng, int(p["tsfm_windows"]) + 1000, L + H)
    x = torch.as_tensor(corpus, dtype=torch.float32)
    z, mu, sd = revin_normalise(x[:, :L])
    target = (x[:, L:] - mu) / (sd + 1e-5)
    zv, tv = z[-1000:].to(dev), target[-1000:].to(dev)      # a held-out slice, for the record
    z, target = z[:-1000].to(dev), target[:-1000].to(dev)
    torch.manual_seed(derive_seed(paper, "tsfm", backbone, "init") % 2**63)
    model = build(backbone, p).to(dev)
    params = [q for q in model.parameters()]
    opt = Adam(params, lr=float(p["tsfm_lr"]))
    order = np.random.default_rng(derive_seed(paper, "tsfm", backbone, "batches"))
    B, n = int(p["tsfm_batch"]), len(z)
    hist, acc = [], []
    steps = int(p["tsfm_steps"])
    every = max(1, steps // 20)
    for step in range(1, steps + 1):
        idx = torch.as_tensor(order.integers(0, n, B), device=dev)
        loss = torch.mean((net_forward(model, backbone, z[idx]) - target[idx]) ** 2)
        opt.step(torch.autograd.grad(loss, params))
        acc.append(float(loss.detach()))
        if step % every == 0 or step == steps:
            with torch.no_grad():
                val = float(torch.mean((net_forward(model, backbone, zv) - tv) ** 2))
            hist.append((step, float(np.mean(acc)), val))
            acc = []
    for q in params:
        q.requires_grad_(False)
    return model.eval(), hist


@torch.no_grad()
def forecast_origins(model, backbone: str, series: np.ndarray, origins: np.ndarray, L: int,
                     dev, batch: int = 8192) -> np.ndarray:
    """TSFM forecasts of every channel at every origin o (lookback series[:, o-L:o]), on the
    series' own scale: (C, n_origins, H)."""
    C = series.shape[0]
    idx = origins[:, None] + np.arange(-L, 0)[None, :]
    look = series[:, idx].reshape(C * len(origins), L)
    x = torch.as_tensor(look, dtype=torch.float32, device=dev)
    outs = []
    for s in range(0, len(x), batch):
        z, mu, sd = revin_normalise(x[s:s + batch])
        outs.append(net_forward(model, backbone, z) * (sd + 1e-5) + mu)
    out = torch.cat(outs).cpu().numpy().astype(np.float64)
    return out.reshape(C, len(origins), -1)
