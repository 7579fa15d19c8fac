"""PPO (clipped objective, GAE(lambda)) for discrete actions, CleanRL-style (imports torch).

One call trains ``A`` independent agents in lock-step, each on its own batch of ``E``
environments; with ``A = 1`` this is plain single-agent PPO. The agents share nothing except
the Python loop: every tensor carries a leading agent axis, each agent has its own parameters,
random streams, minibatches, advantage normalisation and gradient-norm clipping, and the summed
loss gives each agent exactly its own gradient. Batching agents only saves interpreter time
(one small matmul for all agents), so an agent's numbers do not depend on which others share
the call.

Environment interface (numpy, auto-resetting, like a gym vector env)::

    env.n_agents, env.n_envs, env.obs_dim, env.n_actions
    env.reset() -> obs                         float array (A, E, obs_dim)
    env.step(actions) -> (obs, reward, done)   actions int (A, E); reward float (A, E);
                                               done bool (A, E); obs already reset where done

Usage::

    agents = ppo.train(env, total_steps=40_000, seeds=[1, 2], cfg=PPOConfig())
    actions = agents.greedy(obs)               # (A, B) argmax actions for obs (A, B, obs_dim)

``total_steps`` counts environment steps per agent (``n_envs`` per vector step). Episodes that
end by the horizon are treated as terminal, as in CleanRL's PPO (put the time in the
observation). No reward or observation normalisation. Value loss is unclipped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ..stacked import StackedMLP, orthogonal_init
from .optim import Adam


@dataclass
class PPOConfig:
    n_envs: int = 8            # environments per agent
    n_steps: int = 128         # rollout length per environment and iteration
    epochs: int = 4            # passes over each rollout
    minibatches: int = 4       # minibatches per pass
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip: float = 0.2          # ratio clip of the surrogate objective
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    lr: float = 3e-4
    anneal_lr: bool = True     # linear decay of the learning rate to 0
    max_grad_norm: float = 0.5
    hidden: tuple = (64, 64)


def clip_grad_norm_per_agent(params, max_norm: float) -> None:
    """torch.nn.utils.clip_grad_norm_ applied to each agent's slice (axis 0) separately."""
    grads = [p.grad for p in params if p.grad is not None]
    sq = sum(g.pow(2).flatten(1).sum(1) for g in grads)
    scale = (max_norm / (sq.sqrt() + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(scale.view(-1, *([1] * (g.dim() - 1))))


class ActorCritic(nn.Module):
    """Separate actor (logits) and critic (value) MLPs with tanh, one per agent."""

    def __init__(self, obs_dim, n_actions, hidden, generators):
        super().__init__()
        self.actor = StackedMLP(orthogonal_init([obs_dim, *hidden, n_actions], generators,
                                                out_gain=0.01))
        self.critic = StackedMLP(orthogonal_init([obs_dim, *hidden, 1], generators, out_gain=1.0))

    def value(self, obs):
        return self.critic(obs).squeeze(-1)

    @torch.no_grad()
    def greedy(self, obs: np.ndarray) -> np.ndarray:
        """Argmax actions (A, B) for observations (A, B, obs_dim) (numpy in, numpy out)."""
        dev = self.actor.weights[0].device
        return self.actor(torch.as_tensor(obs, dtype=torch.float32, device=dev)).argmax(
            -1).cpu().numpy()


def log_softmax(logits):
    """logits - logsumexp(logits): same values as torch.log_softmax, faster for few actions."""
    return logits - logits.logsumexp(-1, keepdim=True)


def sample_categorical(logits, u: np.ndarray):
    """Inverse-CDF draw from softmax(logits) with given uniforms u (same shape as the batch)."""
    cdf = torch.softmax(logits, -1).cumsum(-1)
    a = (torch.as_tensor(u, dtype=cdf.dtype, device=cdf.device).unsqueeze(-1) > cdf).sum(-1)
    return a.clamp(max=logits.shape[-1] - 1)


def train(env, total_steps: int, seeds, cfg: PPOConfig | None = None, callback=None,
          device=None):
    """Train ``len(seeds)`` PPO agents on ``env`` for ``total_steps`` env steps each.

    ``callback(steps_done, agents)`` runs after every iteration (steps per agent so far).
    ``device`` (a torch device; None: CPU) holds the networks, the rollout storage and the
    updates; the environment stays numpy on the CPU, and every random number (initial weights,
    action uniforms, minibatch permutations) is drawn on the CPU and then moved, so a run's
    draws are the same on every device. Returns the ActorCritic ensemble (on ``device``).
    """
    cfg = cfg or PPOConfig()
    dev = torch.device("cpu") if device is None else torch.device(device)
    A, E, T = len(seeds), cfg.n_envs, cfg.n_steps
    # tiny Adam second moments and gradients go denormal, and denormal arithmetic is ~10x slower
    # on x86 CPUs: flush them to zero (process-wide; deterministic)
    torch.set_flush_denormal(True)
    assert env.n_agents == A and env.n_envs == E, "env batch must be (len(seeds), cfg.n_envs)"
    rngs = [np.random.default_rng(s) for s in seeds]                 # action draws, minibatches
    gens = [torch.Generator().manual_seed(int(s) % 2**63) for s in seeds]  # initial weights
    agents = ActorCritic(env.obs_dim, env.n_actions, cfg.hidden, gens).to(dev)  # init on CPU
    opt = Adam(agents.parameters(), lr=cfg.lr, eps=1e-5)  # torch.optim.Adam's update
    batch = T * E
    mb = batch // cfg.minibatches
    n_iter = total_steps // batch
    arange_a = torch.arange(A, device=dev).unsqueeze(1)

    obs = torch.as_tensor(env.reset(), dtype=torch.float32, device=dev)
    done = torch.zeros(A, E, device=dev)
    for it in range(n_iter):
        if n_iter >= 8 and it % (n_iter // 4) == 0:  # progress in the job's log
            print(f"  ppo iteration {it}/{n_iter}", flush=True)
        if cfg.anneal_lr:
            opt.lr = cfg.lr * (1.0 - it / n_iter)
        # ---- rollout: T vector steps, storing what the update needs
        b_obs = torch.zeros(T, A, E, env.obs_dim, device=dev)
        b_act = torch.zeros(T, A, E, dtype=torch.long, device=dev)
        b_logp, b_rew, b_done, b_val = (torch.zeros(T, A, E, device=dev) for _ in range(4))
        for t in range(T):
            b_obs[t], b_done[t] = obs, done
            with torch.no_grad():
                logits = agents.actor(obs)
                act = sample_categorical(logits, np.stack([r.random(E) for r in rngs]))
                b_logp[t] = log_softmax(logits).gather(-1, act.unsqueeze(-1))[..., 0]
                b_val[t] = agents.value(obs)
            b_act[t] = act
            o, r, d = env.step(act.cpu().numpy())  # numpy environment, on the CPU
            obs = torch.as_tensor(o, dtype=torch.float32, device=dev)
            b_rew[t] = torch.as_tensor(r, dtype=torch.float32, device=dev)
            done = torch.as_tensor(d, dtype=torch.float32, device=dev)
        # ---- GAE(lambda): delta_t = r_t + gamma V(s_t+1)(1 - done_t+1) - V(s_t)
        with torch.no_grad():
            next_val = agents.value(obs)
            adv = torch.zeros(T, A, E, device=dev)
            last = torch.zeros(A, E, device=dev)
            for t in reversed(range(T)):
                nonterm = 1.0 - (done if t == T - 1 else b_done[t + 1])
                nv = next_val if t == T - 1 else b_val[t + 1]
                delta = b_rew[t] + cfg.gamma * nv * nonterm - b_val[t]
                last = delta + cfg.gamma * cfg.gae_lambda * nonterm * last
                adv[t] = last
            ret = adv + b_val

        # flatten time x env into one batch axis per agent: (A, T*E, ...)
        def flat(x):
            return x.transpose(0, 1).reshape(A, batch, *x.shape[3:])

        f_obs, f_act, f_logp, f_adv, f_ret = map(flat, (b_obs, b_act, b_logp, adv, ret))
        # ---- update: epochs x minibatches, each agent with its own permutation
        for _ in range(cfg.epochs):
            perm = torch.as_tensor(np.stack([r.permutation(batch) for r in rngs]), device=dev)
            for k in range(cfg.minibatches):
                idx = perm[:, k * mb:(k + 1) * mb]
                o_, a_ = f_obs[arange_a, idx], f_act[arange_a, idx]
                logits = agents.actor(o_)
                logp_all = log_softmax(logits)
                logp = logp_all.gather(-1, a_.unsqueeze(-1))[..., 0]
                entropy = -(logp_all.exp() * logp_all).sum(-1)
                ratio = (logp - f_logp[arange_a, idx]).exp()
                adv_mb = f_adv[arange_a, idx]
                adv_mb = (adv_mb - adv_mb.mean(1, keepdim=True)) / (
                    adv_mb.std(1, keepdim=True) + 1e-8)
                pg = torch.max(-adv_mb * ratio,
                               -adv_mb * ratio.clamp(1 - cfg.clip, 1 + cfg.clip)).mean(1)
                v_loss = 0.5 * (agents.value(o_) - f_ret[arange_a, idx]).pow(2).mean(1)
                loss_per_agent = pg - cfg.ent_coef * entropy.mean(1) + cfg.vf_coef * v_loss
                opt.zero_grad()
                loss_per_agent.sum().backward()  # agents' parameters are disjoint slices
                clip_grad_norm_per_agent(list(agents.parameters()), cfg.max_grad_norm)
                opt.step()
        if callback is not None:
            callback((it + 1) * batch, agents)
    return agents
