"""PPO and DQN solve a 1-D chain whose optimal action is known, deterministically per seed,
and an agent's numbers do not depend on which other agents share the batched call."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from icml26.rl import dqn, ppo  # noqa: E402


class Chain:
    """Auto-resetting batch of 1-D chains 0..L-1, start at 0; action 1 = right, 0 = left.

    Reaching L-1 pays 1 and ends the episode; horizon H ends it too. Observation: one-hot
    position plus t/H. Optimal policy: always right (return 1 after L-1 steps)."""

    def __init__(self, n_agents, n_envs, length=5, horizon=12):
        self.n_agents, self.n_envs, self.L, self.H = n_agents, n_envs, length, horizon
        self.obs_dim, self.n_actions = length + 1, 2

    def _obs(self):
        o = np.zeros((self.n_agents, self.n_envs, self.obs_dim), np.float32)
        np.put_along_axis(o, self.pos[..., None], 1.0, axis=-1)
        o[..., -1] = self.t / self.H
        return o

    def reset(self):
        self.pos = np.zeros((self.n_agents, self.n_envs), np.int64)
        self.t = np.zeros_like(self.pos)
        return self._obs()

    def step(self, act):
        self.pos = np.clip(self.pos + np.where(act == 1, 1, -1), 0, self.L - 1)
        self.t += 1
        goal = self.pos == self.L - 1
        done = goal | (self.t >= self.H)
        self.pos[done], self.t[done] = 0, 0
        return self._obs(), goal.astype(np.float32), done


def _states():
    o = np.zeros((1, 4, 6), np.float32)
    o[0, np.arange(4), np.arange(4)] = 1.0
    return o


def test_ppo_learns_to_go_right_and_is_deterministic():
    cfg = ppo.PPOConfig(n_envs=4, n_steps=32, lr=3e-3)
    a1 = ppo.train(Chain(1, 4), 1536, [7], cfg)
    a2 = ppo.train(Chain(1, 4), 1536, [7], cfg)
    assert (a1.greedy(_states()) == 1).all()
    for p, q in zip(a1.parameters(), a2.parameters(), strict=True):
        assert torch.equal(p, q)


def test_ppo_agents_are_independent_of_batching():
    cfg = ppo.PPOConfig(n_envs=2, n_steps=16)
    alone = ppo.train(Chain(1, 2), 96, [3], cfg)
    pair = ppo.train(Chain(2, 2), 96, [5, 3], cfg)
    for p, q in zip(alone.parameters(), pair.parameters(), strict=True):
        assert torch.allclose(p[0], q[1], atol=1e-6)


def test_ppo_clip_grad_per_agent():
    w = torch.nn.Parameter(torch.zeros(2, 3))
    w.grad = torch.tensor([[3.0, 4.0, 0.0], [0.1, 0.0, 0.0]])
    ppo.clip_grad_norm_per_agent([w], 1.0)
    assert torch.allclose(w.grad[0].norm(), torch.tensor(1.0), atol=1e-5)
    assert torch.allclose(w.grad[1], torch.tensor([0.1, 0.0, 0.0]))


def test_dqn_learns_to_go_right_and_is_deterministic():
    cfg = dqn.DQNConfig(n_envs=4, learning_starts=200, target_update=200, lr=1e-3,
                        buffer_size=5000, gamma=0.9)
    q1 = dqn.train(Chain(1, 4), 1600, [11], cfg)
    q2 = dqn.train(Chain(1, 4), 1600, [11], cfg)
    assert (q1.greedy(_states()) == 1).all()
    for p, q in zip(q1.parameters(), q2.parameters(), strict=True):
        assert torch.equal(p, q)


def test_dqn_epsilon_schedule_and_independence():
    cfg = dqn.DQNConfig(n_envs=2, learning_starts=20, target_update=40, batch_size=8)
    assert dqn.epsilon(0, 100, cfg) == 1.0
    assert dqn.epsilon(20, 100, cfg) == pytest.approx(0.525)
    assert dqn.epsilon(90, 100, cfg) == pytest.approx(0.05)
    alone = dqn.train(Chain(1, 2), 100, [3], cfg)
    pair = dqn.train(Chain(2, 2), 100, [5, 3], cfg)
    for p, q in zip(alone.parameters(), pair.parameters(), strict=True):
        assert torch.allclose(p[0], q[1], atol=1e-6)


def test_training_does_not_import_torch_dynamo():
    """Issue 14: torch.optim optimisers and torch.use_deterministic_algorithms import
    torch._dynamo (~2 CPU-s a job); PPO, DQN and seed_torch use neither on the CPU."""
    import subprocess
    import sys
    from pathlib import Path

    here = Path(__file__).parent
    code = (
        "import sys; sys.path.insert(0, %r)\n"
        "from test_ppo_dqn import Chain\n"
        "from icml26.rl import dqn, ppo\n"
        "from icml26.seeding import seed_torch, torch_device\n"
        "seed_torch(0); torch_device('cpu')\n"
        "ppo.train(Chain(1, 2), 64, [3], ppo.PPOConfig(n_envs=2, n_steps=16))\n"
        "dqn.train(Chain(1, 2), 64, [3], dqn.DQNConfig(n_envs=2, learning_starts=8,"
        " batch_size=8))\n"
        "print('torch._dynamo' in sys.modules)\n" % str(here))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[-1] == "False"


def test_stacked_mlps_are_independent_models():
    """The shared stacked block: each model's output and gradient are its own, and each
    initialisation matches the per-model reference it claims to reproduce."""
    import torch
    from torch import nn

    from icml26 import stacked

    gens = [torch.Generator().manual_seed(s) for s in (1, 2, 3)]
    layers = stacked.orthogonal_init([3, 5, 2], gens, out_gain=0.5)
    w0 = layers[0][0][1].detach().T                  # model 1, first layer, as (out, in)
    assert torch.allclose(w0.T @ w0, 2.0 * torch.eye(3), atol=1e-5)   # gain sqrt(2)
    ref = torch.empty(5, 3)
    nn.init.orthogonal_(ref, gain=float(np.sqrt(2.0)), generator=torch.Generator().manual_seed(2))
    assert torch.equal(ref, w0)
    # from_linears: the stacked forward is each nn.Linear MLP's forward
    torch.manual_seed(0)
    nets = [nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)) for _ in range(3)]
    lin = stacked.from_linears([[m[0], m[2]] for m in nets])
    x = torch.randn(3, 7, 3)
    out = stacked.forward(lin, x, torch.relu)
    for r, m in enumerate(nets):
        assert torch.allclose(out[r], m(x[r]), atol=1e-6)
    # a summed loss gives model r exactly its own gradient
    out[1].sum().backward()
    assert lin[0][0].grad[0].abs().sum() == 0 and lin[0][0].grad[2].abs().sum() == 0
    ref_grad = torch.autograd.grad(nets[1](x[1]).sum(), nets[1][0].weight)[0]
    assert torch.allclose(lin[0][0].grad[1], ref_grad.T, atol=1e-6)
    # uniform_init draws nn.Linear's bounds per model from the model's own generator
    u = stacked.uniform_init([4, 6, 1], [7, 8])
    alone = stacked.uniform_init([4, 6, 1], [8])
    assert all(torch.equal(a[1], b[0]) for a, b in zip(stacked.parameters(u),
                                                         stacked.parameters(alone), strict=True))
    assert u[0][0].abs().max() <= 0.5 and u[1][0].abs().max() <= 1 / np.sqrt(6)
    net = stacked.StackedMLP(u, activation=torch.tanh)
    assert [p.shape for p in net.parameters()] == [(2, 4, 6), (2, 6, 1), (2, 1, 6), (2, 1, 1)]
    assert stacked.model(u, 1)[0].shape == (4, 6)
