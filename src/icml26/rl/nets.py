"""Small torch networks shared by the RL papers (imports torch)."""

from __future__ import annotations

import math

import torch
from torch import nn


def mlp(sizes, activation=nn.Tanh, out_activation=None) -> nn.Sequential:
    """Linear layers of the given widths with ``activation`` between them."""
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        if i < len(sizes) - 2:
            layers.append(activation())
        elif out_activation is not None:
            layers.append(out_activation())
    return nn.Sequential(*layers)


class TanhGaussianPolicy(nn.Module):
    """a = tanh(mu + sigma * eps): the squashed Gaussian actor of SAC-style methods."""

    def __init__(self, obs_dim: int, act_dim: int, hidden=(64, 64)):
        super().__init__()
        self.body = mlp([obs_dim, *hidden], activation=nn.ReLU, out_activation=nn.ReLU)
        self.mu = nn.Linear(hidden[-1], act_dim)
        self.log_std = nn.Linear(hidden[-1], act_dim)

    def forward(self, obs, deterministic: bool = False, generator=None):
        h = self.body(obs)
        mu, log_std = self.mu(h), self.log_std(h).clamp(-5.0, 2.0)
        std = log_std.exp()
        if deterministic:
            pre = mu
        else:
            # drawn where the generator lives (the CPU by default), then moved: the same
            # numbers whichever device holds the network
            where = generator.device if generator is not None else torch.device("cpu")
            eps = torch.randn(mu.shape, generator=generator, dtype=mu.dtype, device=where)
            pre = mu + std * eps.to(mu.device)
        act = torch.tanh(pre)
        # log-density of the squashed sample (change of variables through tanh)
        logp = (-0.5 * ((pre - mu) / std) ** 2 - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)
        logp = logp - (2 * (math.log(2) - pre - nn.functional.softplus(-2 * pre))).sum(-1)
        return act, logp


class QNetwork(nn.Module):
    """Q(s, a) for continuous actions (input concat), or Q(s, .) over n discrete actions."""

    def __init__(self, obs_dim: int, act_dim: int, hidden=(64, 64), discrete: bool = False):
        super().__init__()
        self.discrete = discrete
        inp = obs_dim if discrete else obs_dim + act_dim
        self.net = mlp([inp, *hidden, act_dim if discrete else 1], activation=nn.ReLU)

    def forward(self, obs, act=None):
        if self.discrete:
            return self.net(obs)
        return self.net(torch.cat([obs, act], dim=-1)).squeeze(-1)
