"""The navigation task of the spec, built on the shared batched point mass (icml26.rl.envs).

- Maps: a vertical wall x in [0.45, 0.55] with gaps (``two_gap`` is the spec's default map;
  ``three_gap`` and ``moving_obstacle`` are the full profile's extra maps, INFERRED geometry).
- ``TaskEnv``: PointMass2D with those walls (norm-clipped actions, dynamics noise, goal disc) and,
  for ``moving_obstacle``, a disc that moves with time.
- ``TapeRNG``: dynamics noise read from a pre-drawn tape, so a block of environments gets the
  same noise whatever else is stepped in the same batch (results do not depend on sharding).
- Start distributions (task, novice, shift) and the scripted waypoint teacher.
- Per-rollout diagnostics: gap used, failing step (collision or loss of progress).
"""

from __future__ import annotations

import numpy as np

from icml26.rl.envs import PointMass2D
from icml26.rl.rollout import run_episodes

WALL_X = (0.45, 0.55)
GOAL = (0.9, 0.5)
GOAL_RADIUS = 0.05
MAX_STEP = 0.05

# gaps (y ranges) and the teacher's route split: start y >= split[i] -> gap i + 1
MAPS = {
    "two_gap": {"gaps": ((0.10, 0.30), (0.70, 0.80)), "splits": (0.5,), "obstacle": None},
    # INFERRED (full profile): a third, very narrow gap at the top; failures happen far from
    # the starts (at the narrow gaps), where localisation should matter most.
    "three_gap": {"gaps": ((0.10, 0.30), (0.70, 0.78), (0.88, 0.95)), "splits": (0.5, 0.84),
                  "obstacle": None},
    # INFERRED (full profile): the two-gap map plus a disc (radius 0.04) at x = 0.70 whose
    # centre oscillates y = 0.50 + 0.07 sin(2 pi t / 20) between the two teacher routes; the
    # teacher never touches it, a learner that drifts off the routes can.
    "moving_obstacle": {"gaps": ((0.10, 0.30), (0.70, 0.80)), "splits": (0.5,),
                        "obstacle": (0.70, 0.50, 0.07, 20.0, 0.04)},
}


def get_map(name: str) -> dict:
    if name not in MAPS:
        raise ValueError(f"map {name!r} is not known; known: {', '.join(MAPS)}")
    return MAPS[name]


def wall_rects(gaps) -> list[tuple]:
    """Rectangles (x0, y0, x1, y1) of the wall: x in WALL_X, y outside every gap."""
    rects, y = [], 0.0
    for lo, hi in sorted(gaps):
        rects.append((WALL_X[0], y, WALL_X[1], lo))
        y = hi
    rects.append((WALL_X[0], y, WALL_X[1], 1.0))
    return rects


class TaskEnv(PointMass2D):
    """PointMass2D on a map; touching the wall (or the moving disc) ends the episode."""

    def __init__(self, n_envs: int, map_name: str, noise_sd: float, horizon: int = 60):
        m = get_map(map_name)
        super().__init__(n_envs=n_envs, max_step=MAX_STEP, noise_sd=noise_sd, goal=GOAL,
                         goal_radius=GOAL_RADIUS, walls=wall_rects(m["gaps"]), horizon=horizon)
        self.obstacle = m["obstacle"]

    def obstacle_centre(self, t):
        cx, cy, amp, period, _ = self.obstacle
        return cx, cy + amp * np.sin(2 * np.pi * np.asarray(t, float) / period)

    def collides(self, s: np.ndarray) -> np.ndarray:
        hit = super().collides(s)
        if self.obstacle is not None:
            cx, cy = self.obstacle_centre(self.t)  # self.t is already the post-step time
            hit |= (s[:, 0] - cx) ** 2 + (s[:, 1] - cy) ** 2 <= self.obstacle[4] ** 2
        return hit


class TapeRNG:
    """Stands in for a Generator in PointMass2D.step: normal() returns the next tape slice."""

    def __init__(self, tape: np.ndarray):
        self.tape, self.k = tape, 0

    def normal(self, loc, scale, size):
        out = loc + scale * self.tape[self.k]
        if out.shape != tuple(size):
            raise ValueError(f"tape slice {out.shape} does not match {size}")
        self.k += 1
        return out


def noise_tape(seed: int, horizon: int, n: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((horizon, n, 2))


# ---------------------------------------------------------------------------------------------
# start distributions
# ---------------------------------------------------------------------------------------------
def task_starts(rng: np.random.Generator, n: int) -> np.ndarray:
    """x ~ U[0.05, 0.35], y ~ U[0.05, 0.95]."""
    return np.column_stack([rng.uniform(0.05, 0.35, n), rng.uniform(0.05, 0.95, n)])


def novice_starts(rng: np.random.Generator, n: int) -> np.ndarray:
    """The novice's comfortable starts: y ~ Beta(2, 5) rescaled to [0.05, 0.95]."""
    return np.column_stack([rng.uniform(0.05, 0.35, n), 0.05 + 0.9 * rng.beta(2.0, 5.0, n)])


def shift_starts(rng: np.random.Generator, n: int) -> np.ndarray:
    """The under-demonstrated half: y ~ U[0.55, 0.95] (x as in the task distribution)."""
    return np.column_stack([rng.uniform(0.05, 0.35, n), rng.uniform(0.55, 0.95, n)])


# ---------------------------------------------------------------------------------------------
# the scripted teacher
# ---------------------------------------------------------------------------------------------
def route(map_name: str, y: np.ndarray) -> np.ndarray:
    """Gap the teacher uses from height y (spec: y >= 0.5 -> gap B on the two-gap map)."""
    return np.searchsorted(np.asarray(get_map(map_name)["splits"]), y, side="right")


def waypoints(map_name: str, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n, 3, 2) waypoints and the index of the first one to use, per start.

    Left of the wall: (0.40, y_gap) -> (0.60, y_gap) -> goal. Already in the gap (x >= 0.40 and
    y inside the gap's range): skip the first. Right of the wall: straight to the goal.
    """
    gaps = np.asarray(get_map(map_name)["gaps"])
    g = route(map_name, starts[:, 1])
    y_gap = gaps[g].mean(axis=1)
    wp = np.stack([np.column_stack([np.full(len(g), 0.40), y_gap]),
                   np.column_stack([np.full(len(g), 0.60), y_gap]),
                   np.tile(np.asarray(GOAL), (len(g), 1))], axis=1)
    in_gap = (starts[:, 1] > gaps[g, 0]) & (starts[:, 1] < gaps[g, 1])
    first = np.where(starts[:, 0] > WALL_X[1], 2, np.where((starts[:, 0] >= 0.40) & in_gap, 1, 0))
    return wp, first


def teacher_policy(map_name: str, starts: np.ndarray, act_noise: np.ndarray,
                   act_sd: float = 0.003, switch_radius: float = 0.025):
    """Waypoint controller: step min(0.05, distance) towards the current waypoint, plus noise.

    INFERRED: a waypoint counts as reached within 0.025 (the spec does not say).
    """
    wp, idx = waypoints(map_name, starts)
    idx = idx.copy()
    rows = np.arange(len(starts))

    def policy(obs, t):
        for _ in range(2):  # at most two waypoints can be passed in one step
            d = np.linalg.norm(wp[rows, idx] - obs, axis=1)
            idx[:] = np.where((d < switch_radius) & (idx < 2), idx + 1, idx)
        delta = wp[rows, idx] - obs
        dist = np.linalg.norm(delta, axis=1, keepdims=True)
        step = delta / np.maximum(dist, 1e-12) * np.minimum(MAX_STEP, dist)
        return step + act_sd * act_noise[t]

    return policy


def teacher_demos(map_name: str, starts: np.ndarray, seed: int, noise_sd: float,
                  horizon: int, cap: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """One teacher episode per start -> list of (states, executed actions), at most ``cap`` pairs.

    INFERRED: pairs beyond ``cap`` are dropped (the teacher needs about 15-25 steps, so this
    only bounds the padded batch of the learner).
    """
    n = len(starts)
    if n == 0:
        return []
    rng = np.random.default_rng(seed)
    tape = rng.standard_normal((horizon, n, 2))
    act_noise = rng.standard_normal((horizon, n, 2))
    env = TaskEnv(n, map_name, noise_sd, horizon)
    ep = run_episodes(env, teacher_policy(map_name, starts, act_noise), starts, TapeRNG(tape))
    out = []
    for i in range(n):
        L = int(min(ep.length[i], cap))
        acts = env.clip_action(ep.actions[:L, i])
        out.append((ep.states[:L, i].copy(), acts))
    return out


def teacher_eval(map_name: str, starts: np.ndarray, tape: np.ndarray, act_seed: int,
                 horizon: int, noise_sd: float):
    """Teacher rollouts on an evaluation set (the reference for success and diversity)."""
    act_noise = np.random.default_rng(act_seed).standard_normal((horizon, len(starts), 2))
    env = TaskEnv(len(starts), map_name, noise_sd, horizon)
    return run_episodes(env, teacher_policy(map_name, starts, act_noise), starts, TapeRNG(tape))


# ---------------------------------------------------------------------------------------------
# rollout diagnostics
# ---------------------------------------------------------------------------------------------
def gap_used(map_name: str, states: np.ndarray) -> np.ndarray:
    """Index of the gap a rollout crossed (nearest gap centre at its first x >= 0.5), -1: none."""
    centres = np.asarray(get_map(map_name)["gaps"]).mean(axis=1)
    crossed = states[:, :, 0] >= 0.5                      # (T+1, n)
    any_cross = crossed.any(axis=0)
    first = crossed.argmax(axis=0)
    y = states[first, np.arange(states.shape[1]), 1]
    g = np.abs(y[:, None] - centres[None, :]).argmin(axis=1)
    return np.where(any_cross, g, -1)


def failing_step(states: np.ndarray, length: np.ndarray, collided: np.ndarray,
                 window: int = 10, progress: float = 0.01) -> np.ndarray:
    """State index where a failed rollout went wrong.

    Collision: the state at the collision step (index = length). Time-out: the first step t
    after which distance-to-goal does not decrease by more than ``progress`` over the next
    ``window`` steps (INFERRED reading: d_t - min(d_{t+1..t+window}) <= progress, t + window
    <= length); if there is none, the final state.
    """
    d = np.linalg.norm(states - np.asarray(GOAL), axis=2)  # (T+1, n)
    T1, n = d.shape
    out = length.astype(np.int64).copy()
    if T1 <= window:
        return out
    ahead = np.lib.stride_tricks.sliding_window_view(d[1:], window, axis=0).min(axis=-1)
    t = np.arange(T1 - window)[:, None]                    # ahead[t] = min d[t+1 .. t+window]
    stalled = (d[:T1 - window] - ahead <= progress) & (t + window <= length[None, :])
    has = stalled.any(axis=0) & ~collided
    return np.where(has, stalled.argmax(axis=0), out)


def entropy_bits(counts: np.ndarray) -> float:
    """Shannon entropy (bits) of a count vector; 0 when empty."""
    counts = np.asarray(counts, float)
    total = counts.sum()
    if total <= 0:
        return 0.0
    p = counts[counts > 0] / total
    return float(-(p * np.log2(p)).sum())
