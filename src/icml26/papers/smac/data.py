"""PointNav-2D (the spec's stand-in for D4RL) and the synthetic offline datasets (numpy only).

s in [-1, 1]^2, a in [-1, 1]^2, s' = clip(s + 0.1 a + N(0, 0.01^2 I)); r = -||s' - g|| plus 1
inside the goal disc (radius 0.1); horizon 30, no termination at the goal. This is exactly
icml26.rl.envs.PointMass2D with box actions, gain 0.1 and reward "neg_dist".
"""

from __future__ import annotations

import numpy as np

from icml26.rl.envs import PointMass2D
from icml26.rl.rollout import run_episodes

GOAL = np.array([0.7, 0.7])
HORIZON = 30
START_LOW, START_HIGH = -1.0, -0.6


def make_env(n_envs: int) -> PointMass2D:
    return PointMass2D(n_envs=n_envs, low=(-1.0, -1.0), high=(1.0, 1.0), max_step=None, box=1.0,
                       gain=0.1, noise_sd=0.01, goal=tuple(GOAL), goal_radius=0.1,
                       horizon=HORIZON, reward="neg_dist", goal_bonus=1.0, end_on_goal=False,
                       end_on_collision=False)


def starts(n: int, rng: np.random.Generator) -> np.ndarray:
    """Start states s0 ~ U([-1, -0.6]^2)."""
    return rng.uniform(START_LOW, START_HIGH, size=(n, 2))


def reward_of(next_states: np.ndarray) -> np.ndarray:
    """The env's reward as a function of s' (used to label dataset transitions)."""
    dist = np.linalg.norm(next_states - GOAL, axis=-1)
    return -dist + 1.0 * (dist <= 0.1)


def rotation(deg: float) -> np.ndarray:
    t = np.deg2rad(deg)
    return np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])


def behaviour_policy(rot_deg: float, noise_sd: float, rng: np.random.Generator):
    """a = clip(0.7 Rot(rot) (g - s)/||g - s|| + N(0, sd^2 I), -1, 1): biased, noisy, slow."""
    rot = rotation(rot_deg)

    def act(obs, t):
        d = GOAL - obs
        d = d / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-8)
        a = 0.7 * d @ rot.T + rng.normal(0.0, noise_sd, size=obs.shape)
        return np.clip(a, -1.0, 1.0)

    return act


def optimal_policy(obs, t):
    """Scripted full-speed straight line to the goal (slows down only inside the last step)."""
    d = GOAL - obs
    return d / np.maximum(np.abs(d).max(axis=1, keepdims=True), 0.1)


def random_policy(rng: np.random.Generator):
    return lambda obs, t: rng.uniform(-1.0, 1.0, size=obs.shape)


def mean_return(policy, n: int, rng: np.random.Generator) -> float:
    ep = run_episodes(make_env(n), policy, starts(n, rng), rng)
    return float(ep.returns.mean())


def collect(policy, n_episodes: int, gamma: float, rng: np.random.Generator) -> dict:
    """n_episodes x 30 transitions with rewards and the discounted MC return-to-go G_mu."""
    ep = run_episodes(make_env(n_episodes), policy, starts(n_episodes, rng), rng)
    s, a = ep.states[:-1], ep.actions           # (T, n, 2)
    s2 = ep.states[1:]
    r = reward_of(s2)                           # (T, n)
    g = np.zeros_like(r)
    acc = np.zeros(r.shape[1])
    for t in range(r.shape[0] - 1, -1, -1):     # return-to-go, truncated at the horizon
        acc = r[t] + gamma * acc
        g[t] = acc
    # episode-major order: transitions of one trajectory are contiguous
    flat = {"obs": s.transpose(1, 0, 2).reshape(-1, 2), "act": a.transpose(1, 0, 2).reshape(-1, 2),
            "rew": r.T.reshape(-1), "next_obs": s2.transpose(1, 0, 2).reshape(-1, 2),
            "rtg": g.T.reshape(-1)}
    return {k: v.astype(np.float32) for k, v in flat.items()}


DATASETS = {
    # name: list of (episodes, rotation in degrees, noise sd)
    "medium": [(500, 50.0, 0.3)],
    "medium-replay": [(100, 90.0, 0.6), (100, 70.0, 0.5), (100, 50.0, 0.4), (100, 30.0, 0.3),
                      (100, 15.0, 0.3)],
}


def make_dataset(name: str, gamma: float, rng: np.random.Generator, scale: float = 1.0) -> dict:
    """The MEDIUM or MEDIUM-REPLAY dataset (``scale`` shrinks episode counts, for tests)."""
    parts = [collect(behaviour_policy(rot, sd, rng), max(1, int(round(n * scale))), gamma, rng)
             for n, rot, sd in DATASETS[name]]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
