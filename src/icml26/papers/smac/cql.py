"""CQL and Cal-QL (offline phase) on the same SAC backbone.

CQL's critic adds, per critic k, alpha_cql * mean_batch(logsumexp_j Q_k(s, a_j) - Q_k(s, a_data))
over 10 uniform actions and 10 actions sampled from the current policy (the spec's form; CORL's
importance weights are not used). It pushes Q down on out-of-distribution actions and up on
dataset actions: a pessimistic Q-level that online SAC must unlearn.

Cal-QL (``calibrated``) lower-bounds the pushed-down policy values by the Monte-Carlo
return-to-go of the behaviour policy: Q(s, a_pi) -> max(Q(s, a_pi), G_mu(s)), so the learned Q
is never pushed below the value of the data's policy (its fix for the initial dip).
The actor is the plain SAC actor.
"""

from __future__ import annotations

import torch

from .sac import Agent, sac_actor_loss, soft_td_target, step, td_loss


def cql_penalty(agent: Agent, batch: dict, eps_pi, uniform, calibrated) -> torch.Tensor:
    """Per-run sum_k mean_batch (logsumexp over the 20 actions of Q_k - Q_k(s, a_data)).

    eps_pi, uniform: (R, n, B, act); calibrated: bool tensor (R,) (Cal-QL runs).
    """
    obs, act = batch["obs"], batch["act"]
    R, n, B, d = uniform.shape
    with torch.no_grad():
        obs_n = obs.unsqueeze(1).expand(R, n, B, 2).reshape(R, n * B, 2)
        a_pi = agent.actors.sample(obs_n, eps_pi.reshape(R, n * B, d))[0]
    k = agent.critics.n_q
    # one critic call for both action sets: [uniform | policy] along the batch axis
    acts = torch.cat([uniform.reshape(R, n * B, d), a_pi], 1)
    q_all = agent.critics(torch.cat([obs_n, obs_n], 1), acts).reshape(R, k, 2, n, B)
    q_unif, q_pi = q_all[:, :, 0], q_all[:, :, 1]
    g = batch["rtg"].reshape(R, 1, 1, B)
    q_pi = torch.where(calibrated.reshape(R, 1, 1, 1), torch.maximum(q_pi, g), q_pi)
    lse = torch.logsumexp(torch.cat([q_unif, q_pi], 2), dim=2)   # (R, K, B)
    q_data = agent.critics(obs, act)
    return (lse - q_data).mean(-1).sum(-1), q_data


def offline_update(agent: Agent, batch: dict, noise: torch.Tensor, uniform: torch.Tensor,
                   calibrated: torch.Tensor, p: dict) -> None:
    """One CQL / Cal-QL step; noise (R, 2 + n, B, act): next actions, actor actions, CQL actions."""
    y = soft_td_target(agent, batch, noise[:, 0])
    penalty, q_data = cql_penalty(agent, batch, noise[:, 2:], uniform, calibrated)
    loss_c = td_loss(q_data, y) + float(p["alpha_cql"]) * penalty
    step(agent.critic_opt, agent.critics.parameters(), loss_c.sum())
    step(agent.actor_opt, agent.actors.parameters(),
         sac_actor_loss(agent, batch["obs"], noise[:, 1]).sum())
    agent.critics.polyak(agent.tau)
