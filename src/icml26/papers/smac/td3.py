"""TD3 (Fujimoto et al. 2018) and TD3+BC (Fujimoto & Gu 2021) on the module's batched networks:
the full profile's TD3-transfer experiment (SMAC vs TD3+BC, both handed over to TD3 online).

The deterministic actor is pi(s) = tanh(mu(s)), the mean head of the batched Actors (the
log_std head is carried along but unused), so a SMAC actor hands over to TD3 as its mean
action, which is also what every method is evaluated with. TD3:
- twin critics; target y = r + gamma min_k Qtarg_k(s', a'), no entropy term;
- target policy smoothing: a' = clip(pi_targ(s') + clip(sigma eps, -c, c), -1, 1),
  sigma = 0.2, c = 0.5, eps ~ N(0, I);
- delayed updates: the actor (loss -mean Q_1(s, pi(s))) and both target networks (Polyak tau)
  are updated every ``policy_delay`` = 2 critic steps;
- exploration online: a = clip(pi(s) + N(0, 0.1^2 I), -1, 1).
TD3+BC (offline) changes only the actor loss:
  L_actor = -lambda mean Q_1(s, pi(s)) + mean (pi(s) - a)^2,  lambda = alpha_bc / mean|Q_1|
(detached), alpha_bc = 2.5; its state normalisation is not used (states already lie in
[-1, 1]^2). Hyperparameters are those of the two papers.
"""

from __future__ import annotations

import torch

from .sac import Agent, step, td_loss


def attach(agent: Agent, actor_target=None) -> Agent:
    """Give an Agent TD3's target actor (a copy of its actor unless given) and step counter."""
    agent.actor_target = actor_target if actor_target is not None else [
        [t.detach().clone() for t in layer] for layer in agent.actors.layers]
    agent.it = 0
    return agent


def smoothed_target_actions(agent: Agent, next_obs, eps, p: dict) -> torch.Tensor:
    """a' = clip(pi_targ(s') + clip(sigma eps, -c, c), -1, 1) (target policy smoothing)."""
    noise = (float(p["td3_noise"]) * eps).clamp(-float(p["td3_noise_clip"]),
                                                float(p["td3_noise_clip"]))
    return (agent.actors.mean_action(next_obs, agent.actor_target) + noise).clamp(-1.0, 1.0)


def td3_target(agent: Agent, batch: dict, eps, p: dict) -> torch.Tensor:
    """y = r + gamma min_k Qtarg_k(s', a') with smoothed target actions (always bootstrap: time
    limits are not terminal)."""
    with torch.no_grad():
        a2 = smoothed_target_actions(agent, batch["next_obs"], eps, p)
        q2 = agent.critics(batch["next_obs"], a2, target=True).min(1).values
        return batch["rew"] + agent.gamma * q2


def td3_actor_loss(agent: Agent, obs) -> torch.Tensor:
    """-mean Q_1(s, pi(s)) per run."""
    return -agent.critics(obs, agent.actors.mean_action(obs))[:, 0].mean(-1)


def td3bc_actor_loss(agent: Agent, obs, act, alpha_bc: float) -> torch.Tensor:
    """-lambda mean Q_1(s, pi(s)) + mean (pi(s) - a)^2 per run, lambda = alpha / mean|Q_1|."""
    pi = agent.actors.mean_action(obs)
    q = agent.critics(obs, pi)[:, 0]
    lam = alpha_bc / q.abs().mean(-1).detach()
    return -lam * q.mean(-1) + ((pi - act) ** 2).mean((-2, -1))


def polyak_targets(agent: Agent) -> None:
    agent.critics.polyak(agent.tau)
    with torch.no_grad():
        torch._foreach_lerp_([t for layer in agent.actor_target for t in layer],
                             [q.detach() for q in agent.actors.parameters()], agent.tau)


def update(agent: Agent, batch: dict, eps, p: dict, bc: bool = False) -> None:
    """One TD3 step (TD3+BC's when ``bc``): critic every call; actor and targets every
    ``policy_delay`` calls. eps (R, B, act): the smoothing noise."""
    y = td3_target(agent, batch, eps, p)
    step(agent.critic_opt, agent.critics.parameters(),
         td_loss(agent.critics(batch["obs"], batch["act"]), y).sum())
    agent.it += 1
    if agent.it % int(p["policy_delay"]) == 0:
        loss = (td3bc_actor_loss(agent, batch["obs"], batch["act"], float(p["alpha_bc"])) if bc
                else td3_actor_loss(agent, batch["obs"]))
        step(agent.actor_opt, agent.actors.parameters(), loss.sum())
        polyak_targets(agent)
