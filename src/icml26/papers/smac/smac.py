"""SMAC (Score Matched Actor-Critic), offline phase, and its SAC+BC ablation (lambda_sm = 0).

INFERRED (spec): the paper's exact loss was not readable. Maximum-entropy optimality,
pi(a|s) proportional to exp(Q(s, a)/alpha), implies grad_a Q(s, a) = alpha grad_a log pi(a|s).
SMAC regularises the critic towards this first-order condition:

    L_critic = sum_k mean (Q_k(s,a) - y)^2 + lambda_sm * sum_k mean ||grad_a Q_k - alpha g_pi||^2

with y the soft TD target and g_pi the policy score (detached). The actor minimises the SAC
objective normalised by mean|Q| plus a behaviour-cloning anchor beta_bc (INFERRED: it stands in
for whatever keeps SMAC's offline actor in-distribution). Switches (all INFERRED, see FIDELITY):
- ``sm_actions``: "data" (default: match at dataset actions, the public summaries' reading) or
  "policy" (match at on-policy sampled actions, the spec's alternative reading);
- ``sm_space``: "pre_tanh" (default) or "action". At a dataset action clipped to +-0.999 the
  squashed-Gaussian score contains 1/(1 - a^2) ~ 500, so the literal action-space residual is
  dominated by the ~6-12% of action coordinates that sit at the box bound. "pre_tanh" measures
  the same condition in u = atanh(a) coordinates, where both sides are multiplied by the
  Jacobian (1 - a^2): (1 - a^2)(grad_a Q - alpha g_pi). The optimum (residual 0) is unchanged.
"""

from __future__ import annotations

import torch

from .sac import Agent, soft_td_target, step, td_loss

CLIP = 0.999


def score_matching_loss(agent: Agent, obs, act, space: str = "pre_tanh") -> torch.Tensor:
    """sum_k mean_batch ||grad_a Q_k(s, a) - alpha grad_a log pi(a|s)||^2 per run (R,).

    grad_a Q is taken by autograd with create_graph=True, so the loss is differentiated twice
    (through the critic's input gradient) when the critic is updated.
    """
    a = act.detach().clamp(-CLIP, CLIP)
    R, B, d = a.shape
    k = agent.critics.n_q
    a_k = a.unsqueeze(1).expand(R, k, B, d).clone().requires_grad_(True)
    q = agent.critics.per_q(obs, a_k)                              # (R, K, B)
    g_q = torch.autograd.grad(q.sum(), a_k, create_graph=True)[0]  # (R, K, B, d)
    g_pi = agent.actors.score(obs, a).unsqueeze(1)                 # detached policy score
    resid = g_q - agent.alpha * g_pi
    if space == "pre_tanh":
        resid = resid * (1.0 - a * a).unsqueeze(1)
    elif space != "action":
        raise ValueError(f"sm_space {space!r} is not allowed; allowed: pre_tanh, action")
    return (resid ** 2).sum(-1).mean(-1).sum(-1)


def offline_update(agent: Agent, batch: dict, noise: torch.Tensor, lam_sm: torch.Tensor,
                   p: dict) -> None:
    """One offline SMAC step for R runs; lam_sm (R,) is 0 for the SAC+BC ablation runs.

    noise (R, 3, B, act): next-state actions, actor actions, on-policy SM actions.
    """
    obs, act = batch["obs"], batch["act"]
    # critic: soft TD + score matching
    y = soft_td_target(agent, batch, noise[:, 0])
    loss_c = td_loss(agent.critics(obs, act), y)
    # computed for every run of the family, also SAC+BC's (times lambda_sm = 0): the graph is
    # then the same whether a run is trained alone or batched with others, so the numbers do
    # not depend on sharding (Adam amplifies even float-level gradient differences)
    if p.get("sm_actions", "data") == "data":
        at = act
    elif p["sm_actions"] == "policy":
        with torch.no_grad():
            at = agent.actors.sample(obs, noise[:, 2])[0]
    else:
        raise ValueError(f"sm_actions {p['sm_actions']!r}; allowed: data, policy")
    loss_c = loss_c + lam_sm * score_matching_loss(agent, obs, at, p.get("sm_space", "pre_tanh"))
    step(agent.critic_opt, agent.critics.parameters(), loss_c.sum())
    # actor: SAC objective normalised by mean|Q| (per run) + BC anchor
    a, logp = agent.actors.sample(obs, noise[:, 1])
    q = agent.critics(obs, a).min(1).values
    sac = (agent.alpha * logp - q).mean(-1) / q.abs().mean(-1).detach().clamp_min(1e-6)
    bc = agent.actors.log_prob(obs, act, CLIP).mean(-1)
    step(agent.actor_opt, agent.actors.parameters(), (sac - float(p["beta_bc"]) * bc).sum())
    agent.critics.polyak(agent.tau)

