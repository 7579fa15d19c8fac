"""Batched numpy environments. Every environment of a batch steps in one call; randomness comes
from the Generator passed in, so a run is reproducible from its seed."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class StepResult:
    obs: np.ndarray        # (n, obs_dim) observation after the step
    reward: np.ndarray     # (n,)
    done: np.ndarray       # (n,) bool: episode over (goal, collision or horizon)
    success: np.ndarray    # (n,) bool: reached the goal this step
    collision: np.ndarray  # (n,) bool: touched a wall or an obstacle this step


@dataclass
class PointMass2D:
    """A batch of 2-D point masses: s' = clip(s + clip(a) + noise, low, high).

    Actions are clipped to a Euclidean norm <= ``max_step`` (or, when ``box`` is set, each
    coordinate to [-box, box] and then scaled by ``gain``). Walls are axis-aligned rectangles
    (x0, y0, x1, y1); circles are (cx, cy, r). Touching either is a collision; with
    ``end_on_collision`` the episode ends there. Reaching the goal disc is a success; with
    ``end_on_goal`` the episode ends there. Reward: ``"sparse"`` (1 on success),
    ``"neg_dist"`` (-||s' - goal||, plus ``goal_bonus`` inside the disc).
    """

    n_envs: int
    low: tuple = (0.0, 0.0)
    high: tuple = (1.0, 1.0)
    max_step: float | None = 0.05
    box: float | None = None
    gain: float = 1.0
    noise_sd: float = 0.0
    goal: tuple = (0.9, 0.5)
    goal_radius: float = 0.05
    walls: list = field(default_factory=list)
    circles: list = field(default_factory=list)
    horizon: int = 60
    reward: str = "sparse"
    goal_bonus: float = 1.0
    end_on_goal: bool = True
    end_on_collision: bool = True

    def __post_init__(self):
        self.low_ = np.asarray(self.low, float)
        self.high_ = np.asarray(self.high, float)
        self.goal_ = np.asarray(self.goal, float)
        self.state = np.zeros((self.n_envs, 2))
        self.t = np.zeros(self.n_envs, dtype=np.int64)
        self.active = np.zeros(self.n_envs, dtype=bool)

    def reset(self, starts: np.ndarray) -> np.ndarray:
        starts = np.asarray(starts, float)
        if starts.shape != (self.n_envs, 2):
            raise ValueError(f"starts must have shape ({self.n_envs}, 2), got {starts.shape}")
        self.state = starts.copy()
        self.t[:] = 0
        self.active[:] = True
        return self.state.copy()

    def clip_action(self, a: np.ndarray) -> np.ndarray:
        a = np.asarray(a, float)
        if self.box is not None:
            return np.clip(a, -self.box, self.box) * self.gain
        if self.max_step is not None:
            norm = np.linalg.norm(a, axis=1, keepdims=True)
            a = a * np.minimum(1.0, self.max_step / np.maximum(norm, 1e-12))
        return a * self.gain

    def collides(self, s: np.ndarray) -> np.ndarray:
        hit = np.zeros(len(s), dtype=bool)
        for x0, y0, x1, y1 in self.walls:
            hit |= (s[:, 0] >= x0) & (s[:, 0] <= x1) & (s[:, 1] >= y0) & (s[:, 1] <= y1)
        for cx, cy, r in self.circles:
            hit |= (s[:, 0] - cx) ** 2 + (s[:, 1] - cy) ** 2 <= r ** 2
        return hit

    def step(self, actions: np.ndarray, rng: np.random.Generator) -> StepResult:
        """Advance the active environments; finished ones keep their state until reset."""
        move = self.clip_action(actions)
        noise = rng.normal(0.0, self.noise_sd, size=self.state.shape) if self.noise_sd else 0.0
        nxt = np.clip(self.state + move + noise, self.low_, self.high_)
        live = self.active
        self.state = np.where(live[:, None], nxt, self.state)
        self.t = self.t + live
        dist = np.linalg.norm(self.state - self.goal_, axis=1)
        success = live & (dist <= self.goal_radius)
        collision = live & self.collides(self.state)
        if self.reward == "sparse":
            reward = success.astype(float)
        elif self.reward == "neg_dist":
            reward = np.where(live, -dist + self.goal_bonus * (dist <= self.goal_radius), 0.0)
        else:
            raise ValueError(f"reward {self.reward!r} is not allowed; allowed: sparse, neg_dist")
        done = live & (self.t >= self.horizon)
        if self.end_on_goal:
            done |= success
        if self.end_on_collision:
            done |= collision
        self.active = live & ~done
        return StepResult(self.state.copy(), reward, done, success, collision)


ACTIONS_4 = np.array([[-1, 0], [1, 0], [0, -1], [0, 1]])  # up, down, left, right (row, col)


@dataclass
class GridWorld:
    """A batch of agents on an H x W grid with walls; 4 actions (up, down, left, right).

    ``walls`` is a boolean (H, W) array; moving into a wall or off the grid keeps the agent in
    place. Reaching ``goal`` gives reward 1 and ends the episode; so does the horizon.
    Papers with richer tasks (objects, keys) build on ``move``.
    """

    n_envs: int
    walls: np.ndarray
    goal: tuple
    horizon: int = 40

    def __post_init__(self):
        self.walls = np.asarray(self.walls, dtype=bool)
        self.pos = np.zeros((self.n_envs, 2), dtype=np.int64)
        self.t = np.zeros(self.n_envs, dtype=np.int64)
        self.active = np.zeros(self.n_envs, dtype=bool)

    @property
    def shape(self) -> tuple[int, int]:
        return self.walls.shape

    def reset(self, starts: np.ndarray) -> np.ndarray:
        starts = np.asarray(starts, dtype=np.int64)
        if self.walls[starts[:, 0], starts[:, 1]].any():
            raise ValueError("a start position lies in a wall")
        self.pos = starts.copy()
        self.t[:] = 0
        self.active[:] = True
        return self.pos.copy()

    def move(self, pos: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Positions after the actions (blocked moves stay put); pure, for planners too."""
        nxt = pos + ACTIONS_4[np.asarray(actions)]
        h, w = self.shape
        inside = (nxt[:, 0] >= 0) & (nxt[:, 0] < h) & (nxt[:, 1] >= 0) & (nxt[:, 1] < w)
        nxt = np.where(inside[:, None], nxt, pos)
        blocked = self.walls[nxt[:, 0], nxt[:, 1]]
        return np.where(blocked[:, None], pos, nxt)

    def step(self, actions: np.ndarray) -> StepResult:
        live = self.active
        self.pos = np.where(live[:, None], self.move(self.pos, actions), self.pos)
        self.t = self.t + live
        success = live & np.all(self.pos == np.asarray(self.goal), axis=1)
        done = success | (live & (self.t >= self.horizon))
        self.active = live & ~done
        return StepResult(self.pos.copy(), success.astype(float), done, success,
                          np.zeros(self.n_envs, dtype=bool))
