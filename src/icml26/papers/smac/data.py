"""PointNav-2D (the spec's stand-in for D4RL) and the synthetic offline datasets (numpy only).

s in [-1, 1]^2, a in [-1, 1]^2, s' = clip(s + 0.1 a + N(0, 0.01^2 I)); r = -||s' - g|| plus 1
inside the goal disc (radius 0.1); horizon 30, no termination at the goal. This is exactly
icml26.rl.envs.PointMass2D with box actions, gain 0.1 and reward "neg_dist".

Full profile: a 3-room maze variant ("maze3", INFERRED layout, the spec gives none). Two
PointMass2D wall rectangles of thickness 0.2 split the square into three rooms:
W1 = [-0.4, -0.2] x [-1, -0.3] (door above it) and W2 = [0.2, 0.4] x [0.3, 1] (door below it).
Both cut the straight line from the start corner to the goal, so the goal can only be reached
by a route change (up over W1, across, then up past W2). Walls block: a step whose end point
lies in a wall leaves the state where it was (it is flagged as a collision); dynamics, reward,
start states and horizon are those of the open field. Walls are 0.2 thick and a step moves at
most 0.1 (+ noise sd 0.01) per coordinate, so no step can tunnel through a wall.
"""

from __future__ import annotations

import numpy as np

from icml26.rl.envs import PointMass2D, StepResult
from icml26.rl.rollout import run_episodes

GOAL = np.array([0.7, 0.7])
HORIZON = 30
START_LOW, START_HIGH = -1.0, -0.6


# INFERRED maze layout: wall rectangles (x0, y0, x1, y1)
WALLS = {"open": [], "maze3": [(-0.4, -1.0, -0.2, -0.3), (0.2, 0.3, 0.4, 1.0)]}

class BlockingPointMass2D(PointMass2D):
    """PointMass2D whose walls block motion: a step ending inside a wall is undone (the point
    stays at s; reported as a collision). Reward as in PointMass2D ("neg_dist")."""

    def step(self, actions: np.ndarray, rng: np.random.Generator) -> StepResult:
        move = self.clip_action(actions)
        noise = rng.normal(0.0, self.noise_sd, size=self.state.shape) if self.noise_sd else 0.0
        nxt = np.clip(self.state + move + noise, self.low_, self.high_)
        blocked = self.collides(nxt)
        nxt = np.where(blocked[:, None], self.state, nxt)
        live = self.active
        self.state = np.where(live[:, None], nxt, self.state)
        self.t = self.t + live
        dist = np.linalg.norm(self.state - self.goal_, axis=1)
        success = live & (dist <= self.goal_radius)
        reward = np.where(live, -dist + self.goal_bonus * (dist <= self.goal_radius), 0.0)
        done = live & (self.t >= self.horizon)
        self.active = live & ~done
        return StepResult(self.state.copy(), reward, done, success, live & blocked)


def make_env(n_envs: int, env: str = "open") -> PointMass2D:
    kw = dict(n_envs=n_envs, low=(-1.0, -1.0), high=(1.0, 1.0), max_step=None, box=1.0,
              gain=0.1, noise_sd=0.01, goal=tuple(GOAL), goal_radius=0.1, horizon=HORIZON,
              reward="neg_dist", goal_bonus=1.0, end_on_goal=False, end_on_collision=False)
    if env == "open":
        return PointMass2D(**kw)
    if env in WALLS:
        return BlockingPointMass2D(walls=list(WALLS[env]), **kw)
    raise ValueError(f"env {env!r} is not allowed; allowed: {', '.join(WALLS)}")


def waypoint(obs: np.ndarray, env: str = "open") -> np.ndarray:
    """Where the scripted route heads from each state: the goal in the open field. In the maze
    (INFERRED): in room 1 below W1's top, up to (-0.45, -0.15); then, left of x = 0.45, under
    W2 to (0.5, 0.2); then the goal. Each waypoint lies past its switching line, so the route
    never dithers, and every leg keeps >= 0.07 from the walls."""
    target = np.broadcast_to(GOAL, obs.shape).copy()
    if env == "maze3":
        x, y = obs[:, 0], obs[:, 1]
        target[x < 0.45] = (0.5, 0.2)
        target[(x < -0.4) & (y < -0.2)] = (-0.45, -0.15)
    elif env not in WALLS:
        raise ValueError(f"env {env!r} is not allowed; allowed: {', '.join(WALLS)}")
    return target

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


def behaviour_policy(rot_deg: float, noise_sd: float, rng: np.random.Generator,
                     env: str = "open"):
    """a = clip(0.7 Rot(rot) (g - s)/||g - s|| + N(0, sd^2 I), -1, 1): biased, noisy, slow.
    In the maze (INFERRED) g is replaced by the route's next waypoint."""
    rot = rotation(rot_deg)

    def act(obs, t):
        d = (GOAL if env == "open" else waypoint(obs, env)) - obs
        d = d / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-8)
        a = 0.7 * d @ rot.T + rng.normal(0.0, noise_sd, size=obs.shape)
        return np.clip(a, -1.0, 1.0)

    return act


def optimal_policy(obs, t):
    """Scripted full-speed straight line to the goal (slows down only inside the last step)."""
    d = GOAL - obs
    return d / np.maximum(np.abs(d).max(axis=1, keepdims=True), 0.1)


def route_policy(env: str):
    """The maze's R_opt policy (INFERRED): full speed in straight lines along the route."""
    def act(obs, t):
        d = waypoint(obs, env) - obs
        return d / np.maximum(np.abs(d).max(axis=1, keepdims=True), 0.1)

    return optimal_policy if env == "open" else act


def random_policy(rng: np.random.Generator):
    return lambda obs, t: rng.uniform(-1.0, 1.0, size=obs.shape)


def mean_return(policy, n: int, rng: np.random.Generator, env: str = "open") -> float:
    ep = run_episodes(make_env(n, env), policy, starts(n, rng), rng)
    return float(ep.returns.mean())


def collect(policy, n_episodes: int, gamma: float, rng: np.random.Generator,
            env: str = "open") -> dict:
    """n_episodes x 30 transitions with rewards and the discounted MC return-to-go G_mu."""
    ep = run_episodes(make_env(n_episodes, env), policy, starts(n_episodes, rng), rng)
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


def make_dataset(name: str, gamma: float, rng: np.random.Generator, scale: float = 1.0,
                 env: str = "open") -> dict:
    """The MEDIUM or MEDIUM-REPLAY dataset (``scale`` shrinks episode counts, for tests)."""
    parts = [collect(behaviour_policy(rot, sd, rng, env), max(1, int(round(n * scale))), gamma,
                     rng, env) for n, rot, sd in DATASETS[name]]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
