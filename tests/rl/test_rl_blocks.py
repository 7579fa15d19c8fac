"""Shared RL building blocks: environments, replay buffer, rollouts, networks."""
import numpy as np
import pytest

from icml26.rl.buffer import ReplayBuffer
from icml26.rl.envs import GridWorld, PointMass2D
from icml26.rl.rollout import run_episodes


def wall_env(n=3):
    # the spec's CLASP map: a wall x in [0.45, 0.55] with two gaps
    walls = [(0.45, 0.0, 0.55, 0.10), (0.45, 0.30, 0.55, 0.70), (0.45, 0.80, 0.55, 1.0)]
    return PointMass2D(n, walls=walls, goal=(0.9, 0.5), goal_radius=0.05, max_step=0.05)


def test_point_mass_clips_steps_and_detects_walls_and_goal():
    env = wall_env()
    env.reset(np.array([[0.40, 0.5], [0.40, 0.2], [0.86, 0.5]]))
    res = env.step(np.array([[1.0, 0.0], [0.1, 0.0], [0.02, 0.0]]), np.random.default_rng(0))
    assert np.allclose(res.obs[0], [0.45, 0.5])          # norm clipped to 0.05: hits the wall
    assert res.collision.tolist() == [True, False, False]
    assert np.allclose(res.obs[1], [0.45, 0.2])          # inside gap A: no collision
    assert res.success.tolist() == [False, False, True]
    assert res.done.tolist() == [True, False, True]
    before = env.state.copy()
    env.step(np.ones((3, 2)), np.random.default_rng(0))
    assert np.allclose(env.state[[0, 2]], before[[0, 2]])  # finished episodes stay put


def test_point_mass_neg_dist_reward_and_horizon():
    env = PointMass2D(2, low=(-1, -1), high=(1, 1), max_step=None, box=1.0, gain=0.1,
                      goal=(0.7, 0.7), goal_radius=0.1, reward="neg_dist", horizon=3,
                      end_on_goal=False)
    env.reset(np.array([[0.7, 0.6], [-1.0, -1.0]]))
    res = env.step(np.array([[0.0, 5.0], [0.0, 0.0]]), np.random.default_rng(0))
    assert res.reward[0] == pytest.approx(1.0)            # at the goal: -0 + bonus 1
    assert res.reward[1] == pytest.approx(-np.hypot(1.7, 1.7))
    for _ in range(2):
        res = env.step(np.zeros((2, 2)), np.random.default_rng(0))
    assert res.done.all() and not env.active.any()


def test_grid_world_blocks_walls_and_edges():
    walls = np.zeros((3, 3), bool)
    walls[1, 1] = True
    env = GridWorld(2, walls, goal=(2, 2), horizon=10)
    env.reset(np.array([[0, 1], [0, 0]]))
    res = env.step(np.array([1, 0]))   # down into the wall; up off the grid
    assert res.obs.tolist() == [[0, 1], [0, 0]]
    with pytest.raises(ValueError):
        env.reset(np.array([[1, 1], [0, 0]]))


def test_rollout_scripted_policy_reaches_goal():
    env = wall_env(4)
    starts = np.array([[0.2, 0.2], [0.2, 0.5], [0.3, 0.9], [0.1, 0.1]])

    def through_gap_a(obs, t):  # down the left side, through gap A, then to the goal
        x = obs[:, :1]
        target = np.where(x < 0.40, [[0.40, 0.2]], np.where(x < 0.60, [[0.60, 0.2]],
                                                            [[0.9, 0.5]]))
        return target - obs

    ep = run_episodes(env, through_gap_a, starts, np.random.default_rng(1))
    assert ep.success.all() and ep.violations.sum() == 0
    assert ep.summary()["success"] == 1.0


def test_replay_buffer_ring_and_sampling():
    buf = ReplayBuffer(4, obs_dim=1, act_dim=0, act_dtype=np.int64)
    for i in range(6):
        buf.add(np.array([[i]]), np.array([i]), np.array([i]), np.array([[i + 1]]),
                np.array([0]))
    assert buf.size == 4 and sorted(buf.obs[:, 0].tolist()) == [2, 3, 4, 5]
    batch = buf.sample(100, np.random.default_rng(0))
    assert set(batch["act"].tolist()) <= {2, 3, 4, 5}
    assert np.all(batch["next_obs"][:, 0] == batch["obs"][:, 0] + 1)


def test_tanh_gaussian_log_prob_matches_torch_distributions():
    torch = pytest.importorskip("torch")
    from torch.distributions import Normal, TransformedDistribution
    from torch.distributions.transforms import TanhTransform

    from icml26.rl.nets import QNetwork, TanhGaussianPolicy

    torch.manual_seed(0)
    pi = TanhGaussianPolicy(3, 2)
    obs = torch.randn(5, 3)
    act, logp = pi(obs, generator=torch.Generator().manual_seed(1))
    h = pi.body(obs)
    dist = TransformedDistribution(Normal(pi.mu(h), pi.log_std(h).clamp(-5, 2).exp()),
                                   [TanhTransform()])
    ref = dist.log_prob(act.clamp(-1 + 1e-6, 1 - 1e-6)).sum(-1)
    assert torch.allclose(logp, ref, atol=1e-3)
    assert QNetwork(3, 2)(obs, act).shape == (5,)
    assert QNetwork(3, 4, discrete=True)(obs).shape == (5, 4)


def test_adam_matches_torch_optim_adam():
    torch = pytest.importorskip("torch")
    from icml26.rl.optim import Adam

    torch.manual_seed(0)
    w0 = torch.randn(4, 3)
    ours, ref = w0.clone().requires_grad_(), w0.clone().requires_grad_()
    opt_ours, opt_ref = Adam([ours], lr=0.01), torch.optim.Adam([ref], lr=0.01)
    target = torch.randn(4, 3)
    for _ in range(50):
        for w, opt in ((ours, opt_ours), (ref, opt_ref)):
            opt.zero_grad()
            ((w - target) ** 4).sum().backward()
            opt.step()
    assert torch.allclose(ours, ref, atol=1e-6)
    explicit = w0.clone().requires_grad_()
    opt = Adam([explicit], lr=0.01)
    opt.step([torch.ones(4, 3)])  # grads passed explicitly: first step moves every weight by lr
    assert torch.allclose(explicit, w0 - 0.01, atol=1e-6)
