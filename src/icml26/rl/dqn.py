"""DQN with a target network, uniform replay and linear epsilon-greedy, CleanRL-style (torch).

Like ``ppo.train``, one call trains ``A`` independent agents in lock-step (``A = 1`` is plain
DQN). Each agent has its own Q-network, target network, ``ReplayBuffer``, exploration and
replay-sampling random streams; batching agents only shares the matmul calls, so an agent's
numbers do not depend on which others share the call.

Environment interface: the same auto-resetting numpy batch as ``icml26.rl.ppo`` (``reset() ->
obs (A, E, D)``; ``step(actions (A, E)) -> obs, reward, done``). Terminal and horizon ends are
both treated as terminal (put the time in the observation).

Usage::

    agents = dqn.train(env, total_steps=24_000, seeds=[1, 2], cfg=DQNConfig())
    actions = agents.greedy(obs)                 # (A, B) for obs (A, B, obs_dim)

All step counts (``total_steps``, ``learning_starts``, ``target_update``) are environment
steps per agent; one gradient step is taken per vector step (``n_envs`` env steps).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ..stacked import StackedMLP, orthogonal_init
from .buffer import ReplayBuffer
from .optim import Adam
from .ppo import clip_grad_norm_per_agent


@dataclass
class DQNConfig:
    n_envs: int = 8
    buffer_size: int = 20_000
    batch_size: int = 64
    lr: float = 5e-4
    gamma: float = 0.99
    eps_start: float = 1.0
    eps_end: float = 0.05
    exploration_fraction: float = 0.4   # epsilon decays linearly over this fraction of steps
    target_update: int = 1000           # hard copy every this many env steps
    learning_starts: int = 1000         # env steps collected before the first update
    loss: str = "huber"                 # "huber" (smooth L1) or "mse"
    max_grad_norm: float | None = None  # optional per-agent gradient-norm clip
    hidden: tuple = (64, 64)


class QEnsemble(nn.Module):
    """Q(s, .) of A agents: ReLU MLPs, obs (A, B, D) -> (A, B, n_actions)."""

    def __init__(self, obs_dim, n_actions, hidden, generators):
        super().__init__()
        self.net = StackedMLP(orthogonal_init([obs_dim, *hidden, n_actions], generators),
                              activation=torch.relu)

    def forward(self, obs):
        return self.net(obs)

    @torch.no_grad()
    def greedy(self, obs: np.ndarray) -> np.ndarray:
        dev = self.net.weights[0].device
        return self(torch.as_tensor(obs, dtype=torch.float32, device=dev)).argmax(
            -1).cpu().numpy()


def epsilon(step: int, total_steps: int, cfg: DQNConfig) -> float:
    """Linear schedule from eps_start to eps_end over exploration_fraction * total_steps."""
    span = max(1.0, cfg.exploration_fraction * total_steps)
    return cfg.eps_start + min(1.0, step / span) * (cfg.eps_end - cfg.eps_start)


def train(env, total_steps: int, seeds, cfg: DQNConfig | None = None, callback=None,
          eval_every: int = 0, device=None):
    """Train ``len(seeds)`` DQN agents for ``total_steps`` env steps each.

    ``callback(steps_done, agents)`` runs every ``eval_every`` env steps (if > 0) and at the end.
    ``device`` (a torch device; None: CPU) holds the Q networks and the updates; the
    environment and the replay buffers stay numpy on the CPU (sampled batches are moved), and
    every random number is drawn on the CPU, so the draws are the same on every device.
    Returns the online Q ensemble (on ``device``).
    """
    cfg = cfg or DQNConfig()
    dev = torch.device("cpu") if device is None else torch.device(device)
    A, E = len(seeds), cfg.n_envs
    # tiny Adam second moments and gradients go denormal, and denormal arithmetic is ~10x slower
    # on x86 CPUs: flush them to zero (process-wide; deterministic)
    torch.set_flush_denormal(True)
    assert env.n_agents == A and env.n_envs == E, "env batch must be (len(seeds), cfg.n_envs)"
    rngs = [np.random.default_rng(s) for s in seeds]
    gens = [torch.Generator().manual_seed(int(s) % 2**63) for s in seeds]
    q = QEnsemble(env.obs_dim, env.n_actions, cfg.hidden, gens).to(dev)  # init on the CPU
    q_target = QEnsemble(env.obs_dim, env.n_actions, cfg.hidden, gens).to(dev)
    q_target.load_state_dict(q.state_dict())
    opt = Adam(q.parameters(), lr=cfg.lr)  # torch.optim.Adam's update
    buffers = [ReplayBuffer(cfg.buffer_size, env.obs_dim, 0, act_dtype=np.int64)
               for _ in range(A)]
    loss_fn = nn.functional.smooth_l1_loss if cfg.loss == "huber" else nn.functional.mse_loss

    obs = env.reset()
    n_vec = total_steps // E
    for i in range(n_vec):
        step = i * E
        if n_vec >= 8 and i % (n_vec // 4) == 0:  # progress in the job's log
            print(f"  dqn step {step}/{total_steps}", flush=True)
        # ---- act: epsilon-greedy, one uniform + one random action per env from each agent
        eps = epsilon(step, total_steps, cfg)
        u = np.stack([r.random(E) for r in rngs])
        rand_act = np.stack([r.integers(0, env.n_actions, E) for r in rngs])
        act = np.where(u < eps, rand_act, q.greedy(obs))
        next_obs, rew, done = env.step(act)
        for a in range(A):
            buffers[a].add(obs[a], act[a], rew[a], next_obs[a], done[a])
        obs = next_obs
        step = (i + 1) * E
        # ---- learn: one gradient step per vector step once learning has started
        if step > cfg.learning_starts:
            smp = [buffers[a].sample(cfg.batch_size, rngs[a]) for a in range(A)]
            b = {k: torch.as_tensor(np.stack([s[k] for s in smp]), device=dev) for k in smp[0]}
            with torch.no_grad():
                target_max = q_target(b["next_obs"]).max(-1).values
                y = b["rew"] + cfg.gamma * target_max * (1.0 - b["done"])
            q_sa = q(b["obs"]).gather(-1, b["act"].unsqueeze(-1))[..., 0]
            loss_per_agent = loss_fn(q_sa, y, reduction="none").mean(1)
            opt.zero_grad()
            loss_per_agent.sum().backward()  # disjoint parameter slices: per-agent gradients
            if cfg.max_grad_norm is not None:
                clip_grad_norm_per_agent(list(q.parameters()), cfg.max_grad_norm)
            opt.step()
        if step // cfg.target_update > (step - E) // cfg.target_update:
            q_target.load_state_dict(q.state_dict())
        if callback is not None and eval_every > 0 and (
                step // eval_every > (step - E) // eval_every):
            callback(step, q)
    if callback is not None and (eval_every <= 0 or (n_vec * E) % eval_every):
        callback(n_vec * E, q)
    return q
