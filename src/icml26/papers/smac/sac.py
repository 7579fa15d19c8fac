"""The SAC backbone shared by every method, and the online fine-tuning phase ("fine-tune with
SAC"), identical for all methods: no BC, no score matching, no CQL term; fixed alpha.

An ``Agent`` holds R runs (actors, twin critics, optimisers). All losses below return one
value per run (shape (R,)); the optimiser minimises their sum, which trains the runs
independently (their parameters never mix).
"""

from __future__ import annotations

import torch

from icml26.rl.optim import Adam

from .nets import Actors, Critics


class Agent:
    def __init__(self, actors: Actors, critics: Critics, p: dict):
        self.actors, self.critics = actors, critics
        self.alpha = float(p["alpha"])
        self.gamma = float(p["gamma"])
        self.tau = float(p["tau"])
        self.lr = float(p["lr"])
        self.reset_optimisers()

    def reset_optimisers(self) -> None:
        self.actor_opt = adam(self.actors.parameters(), self.lr)
        self.critic_opt = adam(self.critics.parameters(), self.lr)


def adam(params, lr: float) -> Adam:
    return Adam(params, lr)


def step(opt: Adam, params: list, loss: torch.Tensor) -> None:
    """One optimiser step on ``params`` only (gradients of other tensors are not computed)."""
    grads = torch.autograd.grad(loss, params)
    for p, g in zip(params, grads, strict=True):
        p.grad = g
    opt.step()


def soft_td_target(agent: Agent, batch: dict, eps_next: torch.Tensor) -> torch.Tensor:
    """y = r + gamma (min_k Qtarg_k(s', a') - alpha log pi(a'|s')), a' ~ pi(.|s').

    Episodes end only by the time limit, which is not a terminal state: always bootstrap.
    """
    with torch.no_grad():
        a2, logp2 = agent.actors.sample(batch["next_obs"], eps_next)
        q2 = agent.critics(batch["next_obs"], a2, target=True).min(1).values
        return batch["rew"] + agent.gamma * (q2 - agent.alpha * logp2)


def td_loss(q: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """sum_k mean_batch (Q_k(s, a) - y)^2 per run; q (R, K, B), y (R, B)."""
    return ((q - y.unsqueeze(1)) ** 2).mean(-1).sum(-1)


def sac_actor_loss(agent: Agent, obs: torch.Tensor, eps: torch.Tensor) -> torch.Tensor:
    """mean(alpha log pi(a~|s) - min_k Q_k(s, a~)) per run, a~ reparameterised."""
    a, logp = agent.actors.sample(obs, eps)
    q = agent.critics(obs, a).min(1).values
    return (agent.alpha * logp - q).mean(-1)


def sac_update(agent: Agent, batch: dict, noise: torch.Tensor) -> None:
    """One plain SAC gradient step (critic, then actor, then Polyak); noise (R, 2, B, act)."""
    y = soft_td_target(agent, batch, noise[:, 0])
    loss_c = td_loss(agent.critics(batch["obs"], batch["act"]), y).sum()
    step(agent.critic_opt, agent.critics.parameters(), loss_c)
    loss_a = sac_actor_loss(agent, batch["obs"], noise[:, 1]).sum()
    step(agent.actor_opt, agent.actors.parameters(), loss_a)
    agent.critics.polyak(agent.tau)
