"""Run-batched copies of the shared icml26.rl.nets networks (imports torch).

Every run of a train job has its own actor and twin critics. To vectorise over runs, each
network of the shared module (TanhGaussianPolicy, QNetwork, built per run under that run's
torch seed, so initialisation does not depend on sharding) is converted to stacked weights
(the shared ``icml26.stacked`` block: W (R, in, out), b (R, 1, out)) and evaluated with one
batched matmul per layer. Losses are sums over runs
of per-run losses, and Adam is elementwise, so the R runs train exactly as R separate models.

Device: each network is built on the CPU under its run's seed (the same initial weights on every
device) and its stacked weights are moved to ``device`` (None: the CPU); every later tensor
(targets, interpolations, merged agents) derives from them and stays there.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from icml26 import stacked
from icml26.rl.nets import QNetwork, TanhGaussianPolicy

LOG_STD_MIN, LOG_STD_MAX = -5.0, 2.0
LOG2 = math.log(2.0)
HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _linears(module: nn.Module) -> list[nn.Linear]:
    return [m for m in module.modules() if isinstance(m, nn.Linear)]


def forward(layers, x: torch.Tensor) -> torch.Tensor:
    """ReLU MLP over a run axis: x (R, B, in) -> (R, B, out)."""
    return stacked.forward(layers, x, torch.relu)


class Actors:
    """R tanh-Gaussian actors (2 -> 64 -> 64 -> (mu, log_std)); mu and log_std heads are
    evaluated as one 2*act_dim output layer."""

    def __init__(self, seeds: list[int], hidden=(64, 64), obs_dim=2, act_dim=2, device=None):
        mods = []
        for s in seeds:
            torch.manual_seed(s % (2**63))
            mods.append(TanhGaussianPolicy(obs_dim, act_dim, hidden))
        self.act_dim = act_dim
        self.hidden = tuple(hidden)
        self.device = torch.device("cpu") if device is None else torch.device(device)
        self.layers = stacked.from_linears([_linears(m.body) for m in mods], self.device)
        head = stacked.from_linears([[m.mu] for m in mods], self.device)[0]
        head_s = stacked.from_linears([[m.log_std] for m in mods], self.device)[0]
        w = torch.cat([head[0].detach(), head_s[0].detach()], 2).requires_grad_(True)
        b = torch.cat([head[1].detach(), head_s[1].detach()], 2).requires_grad_(True)
        self.layers.append([w, b])

    def parameters(self):
        return stacked.parameters(self.layers)

    def dist(self, obs, layers=None):
        """mu, log_std (clamped to [-5, 2]) of the pre-tanh Gaussian; obs (R, B, 2)."""
        h = forward(self.layers if layers is None else layers, obs)
        mu, log_std = h[..., : self.act_dim], h[..., self.act_dim:]
        return mu, log_std.clamp(LOG_STD_MIN, LOG_STD_MAX)

    def sample(self, obs, eps):
        """Reparameterised a = tanh(mu + std eps) and log pi(a|s) (with the tanh log-det)."""
        mu, log_std = self.dist(obs)
        pre = mu + log_std.exp() * eps
        return torch.tanh(pre), squashed_logp(pre, mu, log_std)

    def mean_action(self, obs, layers=None):
        return torch.tanh(self.dist(obs, layers)[0])

    def log_prob(self, obs, act, clip: float = 0.999):
        """log pi(a|s) at given (dataset) actions: invert tanh on clip(a, -0.999, 0.999)."""
        a = act.clamp(-clip, clip)
        mu, log_std = self.dist(obs)
        return squashed_logp(torch.atanh(a), mu, log_std)

    def score(self, obs, act, clip: float = 0.999):
        """grad_a log pi(a|s) at a = clip(a), in closed form (detached).

        With u = atanh(a): log pi(a) = log N(u; mu, std) - sum log(1 - a^2), so
        d/da = -(u - mu)/std^2 * 1/(1 - a^2) + 2a/(1 - a^2).
        """
        with torch.no_grad():
            a = act.clamp(-clip, clip)
            mu, log_std = self.dist(obs)
            u = torch.atanh(a)
            inv = 1.0 / (1.0 - a * a)
            return -(u - mu) * torch.exp(-2 * log_std) * inv + 2 * a * inv

    def state_dicts(self, layers=None) -> list[dict]:
        """One TanhGaussianPolicy state_dict (numpy arrays) per run."""
        layers = self.layers if layers is None else layers
        out = []
        for r in range(layers[0][0].shape[0]):
            d = {}
            # stacked W (R, in, out), b (R, 1, out); nn.Linear's are (out, in), (out,)
            for i, (w, b) in enumerate(layers[:-1]):
                d[f"body.{2 * i}.weight"] = w[r].detach().T.cpu().numpy().copy()
                d[f"body.{2 * i}.bias"] = b[r, 0].detach().cpu().numpy().copy()
            w, b = layers[-1]
            k = self.act_dim
            d["mu.weight"] = w[r, :, :k].detach().T.cpu().numpy().copy()
            d["mu.bias"] = b[r, 0, :k].detach().cpu().numpy().copy()
            d["log_std.weight"] = w[r, :, k:].detach().T.cpu().numpy().copy()
            d["log_std.bias"] = b[r, 0, k:].detach().cpu().numpy().copy()
            out.append(d)
        return out


def squashed_logp(pre, mu, log_std):
    """log-density of tanh(pre) for pre ~ N(mu, std^2), summed over action dimensions."""
    logp = (-0.5 * ((pre - mu) * torch.exp(-log_std)) ** 2 - log_std - HALF_LOG_2PI).sum(-1)
    return logp - (2 * (LOG2 - pre - nn.functional.softplus(-2 * pre))).sum(-1)


class Critics:
    """Twin Q-networks (4 -> 64 -> 64 -> 1) for R runs, stored as 2R stacked networks
    (run-major), with Polyak-averaged target copies."""

    def __init__(self, seeds: list[int], hidden=(64, 64), obs_dim=2, act_dim=2, n_q: int = 2,
                 device=None):
        mods = []
        for s in seeds:
            torch.manual_seed(s % (2**63))
            mods.extend(QNetwork(obs_dim, act_dim, hidden) for _ in range(n_q))
        self.n_q = n_q
        self.layers = stacked.from_linears([_linears(m) for m in mods], device)
        self.target = [[t.detach().clone() for t in layer] for layer in self.layers]

    def parameters(self):
        return stacked.parameters(self.layers)

    def __call__(self, obs, act, target: bool = False):
        """Q_k(s, a) for every run and critic: obs, act (R, B, d) -> (R, n_q, B)."""
        R, B = obs.shape[:2]
        x = torch.cat([obs, act], -1).unsqueeze(1).expand(R, self.n_q, B, -1)
        q = forward(self.target if target else self.layers, x.reshape(R * self.n_q, B, -1))
        return q.reshape(R, self.n_q, B)

    def per_q(self, obs, act_k):
        """Q_k(s, a_k) with a separate action tensor per critic: act_k (R, n_q, B, d)."""
        R, K, B = act_k.shape[:3]
        x = torch.cat([obs.unsqueeze(1).expand(R, K, B, -1), act_k], -1)
        return forward(self.layers, x.reshape(R * K, B, -1)).reshape(R, K, B)

    @torch.no_grad()
    def polyak(self, tau: float) -> None:
        """target <- (1 - tau) target + tau online (one fused call over all tensors)."""
        targets = [t for layer in self.target for t in layer]
        torch._foreach_lerp_(targets, [p.detach() for p in self.parameters()], tau)


class ValueNets:
    """IQL's state-value V(s) (2 -> 64 -> 64 -> 1) for R runs."""

    def __init__(self, seeds: list[int], hidden=(64, 64), obs_dim=2, device=None):
        mods = []
        for s in seeds:
            torch.manual_seed(s % (2**63))
            mods.append(nn.Sequential(nn.Linear(obs_dim, hidden[0]), nn.ReLU(),
                                      nn.Linear(hidden[0], hidden[1]), nn.ReLU(),
                                      nn.Linear(hidden[1], 1)))
        self.layers = stacked.from_linears([_linears(m) for m in mods], device)

    def parameters(self):
        return stacked.parameters(self.layers)

    def __call__(self, obs):
        return forward(self.layers, obs).squeeze(-1)


def interpolate(a_layers, b_layers, lam: float):
    """theta(lam) = (1 - lam) theta_a + lam theta_b, layer by layer (detached)."""
    return [[((1 - lam) * x + lam * y).detach() for x, y in zip(la, lb, strict=True)]
            for la, lb in zip(a_layers, b_layers, strict=True)]
