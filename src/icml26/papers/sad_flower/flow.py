"""The flow-matching planner (conditional flow matching, Lipman et al. 2023). Imports torch.

v_phi(Z_tau, tau, x0, g): MLP [D + 1 + sx + 2] -> 256 -> 256 -> 256 -> D (SiLU; D = (sx + 2) H,
120 for the unicycle with H = 24), trained on
standardised demonstrations with X_tau = (1 - tau) X_0 + tau X_1, X_0 ~ N(0, I), target X_1 - X_0;
sampling uses the exponential moving average of the weights (official: decay 0.995).

Device: the network, its Adam state and the training tensors live on ``device`` (config
``device`` through ``icml26.seeding.torch_device``); the initial weights and every minibatch draw
come from CPU generators and are moved, so the draws are the same on every device. The guided
sampler (QP / Gauss-Newton corrections, numpy) runs on the CPU: ``velocity_fn`` evaluates the
network on the device and returns numpy.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from icml26.rl.nets import mlp
from icml26.rl.optim import Adam


def make_net(plan_dim: int, hidden: int = 256, depth: int = 3, cond_dim: int = 3 + 2) -> nn.Module:
    return mlp([plan_dim + 1 + cond_dim, *([hidden] * depth), plan_dim], activation=nn.SiLU)


def train_fm(Z1, cond, seed: int, steps: int, batch: int = 256, lr: float = 1e-3, hidden=256,
             device=None, ema_decay: float = 0.0):
    """Conditional FM regression; returns the network (on ``device``, None: the CPU) and the
    loss every step (numpy) of the trained weights.

    ``ema_decay`` > 0: the returned network carries the exponential moving average of the
    weights, updated after every optimiser step (the first update copies the weights, then
    ema <- decay ema + (1 - decay) theta), as the official training (run/train_maze2d.py,
    ``AveragedModel`` with ema_decay 0.995) whose EMA weights are the ones sampled
    (gflower/utils/setup.py loads ``model_ema_<cp>.pth``)."""
    dev = torch.device("cpu") if device is None else torch.device(device)
    torch.set_num_threads(1)  # same bytes every run; no OpenMP spinning on a shared machine
    torch.manual_seed(seed % (2**63))
    gen = torch.Generator().manual_seed(seed % (2**63))
    Z1 = torch.as_tensor(Z1, dtype=torch.float32, device=dev)
    cond = torch.as_tensor(cond, dtype=torch.float32, device=dev)
    net = make_net(Z1.shape[1], hidden, cond_dim=cond.shape[1]).to(dev)  # init on the CPU
    opt = Adam(net.parameters(), lr=lr)
    losses = torch.empty(steps, device=dev)  # read back once at the end
    params = list(net.parameters())
    ema = [p.detach().clone() for p in params] if ema_decay > 0 else None
    n = Z1.shape[0]
    for i in range(steps):
        # drawn on the CPU generator, then moved (the same draws on every device)
        idx = torch.randint(0, n, (batch,), generator=gen).to(dev)
        x1, c = Z1[idx], cond[idx]
        x0 = torch.randn(x1.shape, generator=gen).to(dev)
        tau = torch.rand((batch, 1), generator=gen).to(dev)
        xt = (1 - tau) * x0 + tau * x1
        pred = net(torch.cat([xt, tau, c], 1))
        loss = ((pred - (x1 - x0)) ** 2).sum(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses[i] = loss.detach()
        if ema is not None:
            with torch.no_grad():
                if i == 0:
                    torch._foreach_copy_(ema, params)
                else:
                    torch._foreach_lerp_(ema, params, 1.0 - ema_decay)  # d ema + (1 - d) theta
    if ema is not None:
        with torch.no_grad():
            for p, e in zip(params, ema, strict=True):
                p.copy_(e)
    net.eval()
    return net, losses.cpu().numpy().astype(np.float64)


def velocity_fn(net: nn.Module, cond: np.ndarray):
    """numpy callable (Z, tau) -> v_phi(Z, tau, x0, g) for a fixed batch of conditions."""
    dev = next(net.parameters()).device
    c = torch.as_tensor(cond, dtype=torch.float32, device=dev)

    def velocity(Z, tau):
        with torch.no_grad():
            z = torch.as_tensor(Z, dtype=torch.float32, device=dev)
            t = torch.full((z.shape[0], 1), float(tau), device=dev)
            return net(torch.cat([z, t, c], 1)).double().cpu().numpy()

    return velocity


def net_to_arrays(net: nn.Module, prefix: str) -> dict:
    return {f"{prefix}/{k}": v.detach().cpu().numpy().copy() for k, v in net.state_dict().items()}
