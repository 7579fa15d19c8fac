"""IQL (offline phase): expectile value, in-sample Q, advantage-weighted actor.

- V(s) is fitted by expectile regression (tau = 0.7) to min_k Qtarg_k(s, a) at dataset actions;
- Q_k(s, a) is fitted to r + gamma V(s') (no policy actions in the target: no OOD queries);
- the actor maximises exp(beta (Qtarg(s,a) - V(s))) log pi(a|s), weights clipped at 100 (AWR).
Online, the Q networks and the actor are handed to plain SAC (V is dropped), as in the paper.
"""

from __future__ import annotations

import torch

from .nets import ValueNets
from .sac import Agent, step, td_loss
from .smac import CLIP


def expectile_loss(diff: torch.Tensor, tau: float) -> torch.Tensor:
    """mean |tau - 1(diff < 0)| diff^2 over the batch, per run."""
    w = torch.where(diff < 0, 1.0 - tau, tau)
    return (w * diff ** 2).mean(-1)


def offline_update(agent: Agent, value: ValueNets, value_opt, batch: dict, p: dict) -> None:
    obs, act = batch["obs"], batch["act"]
    with torch.no_grad():
        q_t = agent.critics(obs, act, target=True).min(1).values
    v = value(obs)
    step(value_opt, value.parameters(), expectile_loss(q_t - v, float(p["iql_tau"])).sum())
    with torch.no_grad():
        y = batch["rew"] + agent.gamma * value(batch["next_obs"])
        adv = q_t - v.detach()
        w = torch.exp(float(p["iql_beta"]) * adv).clamp(max=float(p["iql_clip"]))
    step(agent.critic_opt, agent.critics.parameters(),
         td_loss(agent.critics(obs, act), y).sum())
    logp = agent.actors.log_prob(obs, act, CLIP)
    step(agent.actor_opt, agent.actors.parameters(), (-(w * logp).mean(-1)).sum())
    agent.critics.polyak(agent.tau)
