"""The grid pick-and-place suite ("MT4"/"MT8"), the miniature stand-in for Meta-World MT10.

Everything here is INFERRED by the spec (there is no grid task in the paper):
- size x size grid (9 at smoke/default), horizon T, actions {up, down, left, right}.
- Grasping is automatic: an agent on the object cell holds it (also at t = 0 if it starts
  there -- INFERRED detail) and from then on the object moves with the agent.
- Success = holding the object on the goal cell: reward 1, the episode ends. Else reward 0.
- Each task has one object cell and 4 candidate goals; setting "fixed" always uses goal 0,
  "random" draws the goal index per episode (it is part of the tabular state).
- Tabular state (row, col, holding, goal_idx); one Q-table per task of shape
  size x size x 2 x 4 x 4 (last axis: action).
- Full scale adds "blocker" variants (tasks 4-7 = tasks 0-3 plus wall segments; INFERRED
  layouts) and 13 x 13 grids (coordinates scaled by 12/8, rounded).

A batch of agents may mix tasks: their grids are stacked into one tall "atlas" GridWorld,
separated by wall rows, so the shared ``GridWorld.move`` handles edges and per-task walls
for the whole batch in one call.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26.rl.envs import GridWorld

N_ACTIONS = 4
N_GOALS = 4
# spec: (object cell, 4 candidate goal cells) on the 9 x 9 grid, (row, col)
BASE_TASKS = (
    ((1, 1), ((7, 7), (7, 1), (1, 7), (4, 8))),
    ((7, 2), ((1, 7), (3, 0), (8, 8), (0, 4))),
    ((4, 4), ((0, 0), (8, 8), (0, 8), (8, 0))),
    ((8, 0), ((0, 8), (4, 8), (8, 8), (0, 4))),
)
# INFERRED blocker layouts of tasks 4-7 (full scale): wall segments (r0, c0, r1, c1) inclusive,
# on the 9 x 9 grid; chosen to avoid object and goal cells and keep the grid connected.
BLOCKERS = (
    ((4, 2, 4, 6),),
    ((2, 5, 6, 5),),
    ((2, 3, 2, 5), (6, 3, 6, 5)),
    ((4, 3, 7, 3),),
)


@dataclass(frozen=True)
class Task:
    obj: tuple
    goals: tuple
    walls: np.ndarray  # (size, size) bool

    @property
    def size(self) -> int:
        return self.walls.shape[0]

    def free_cells(self) -> np.ndarray:
        """(n_free, 2) cells that are not walls, in row-major order (start-cell support)."""
        return np.argwhere(~self.walls)


def _scale(c: int, size: int) -> int:
    return int(round(c * (size - 1) / 8))


def make_task(task_id: int, size: int = 9) -> Task:
    """Task 0-3: the spec's tasks; 4-7: the same with blocker walls (INFERRED layouts)."""
    if not 0 <= task_id < 2 * len(BASE_TASKS):
        raise ValueError(f"task {task_id} is not allowed; allowed: 0..{2 * len(BASE_TASKS) - 1}")
    obj, goals = BASE_TASKS[task_id % 4]
    obj = tuple(_scale(c, size) for c in obj)
    goals = tuple(tuple(_scale(c, size) for c in g) for g in goals)
    walls = np.zeros((size, size), dtype=bool)
    if task_id >= 4:
        for r0, c0, r1, c1 in BLOCKERS[task_id - 4]:
            walls[_scale(r0, size):_scale(r1, size) + 1, _scale(c0, size):_scale(c1, size) + 1] = 1
    for cell in (obj, *goals):
        if walls[cell]:
            raise ValueError(f"task {task_id}: a wall covers the object or a goal at {cell}")
    return Task(obj, goals, walls)


def max_distance(size: int) -> int:
    """D: the largest Manhattan distance on the grid (16 on 9 x 9)."""
    return 2 * (size - 1)


def n_states(size: int) -> int:
    return size * size * 2 * N_GOALS


def state_index(pos: np.ndarray, hold: np.ndarray, goal_idx: np.ndarray, size: int):
    """Flat index of (row, col, holding, goal_idx) into a (size*size*2*4,) table axis."""
    return ((pos[..., 0] * size + pos[..., 1]) * 2 + hold) * N_GOALS + goal_idx


def features(pos, hold, obj, goal, size: int) -> np.ndarray:
    """phi(s) = [1, 1-d_ao/D, hold, 1-d_og/D, hold*(1-d_og/D), (1-hold)*(1-d_ao/D)].

    pos, obj, goal: (..., 2) cells; hold: (...) 0/1. A held object sits on the agent, so
    d_ao = 0 and the object-goal distance is measured from the agent.
    """
    D = float(max_distance(size))
    h = hold.astype(float)
    obj_pos = np.where(hold[..., None].astype(bool), pos, obj)
    d_ao = np.abs(pos - obj_pos).sum(-1)
    d_og = np.abs(obj_pos - goal).sum(-1)
    near_o, near_g = 1.0 - d_ao / D, 1.0 - d_og / D
    return np.stack([np.ones_like(h), near_o, h, near_g, h * near_g, (1 - h) * near_o], -1)


class Suite:
    """A batch of pick-and-place agents; agent b plays task ``task_of[b]``.

    ``reset`` and ``step`` work on local (row, col) cells; moves go through one atlas
    ``GridWorld`` whose blocks (one per distinct task) are separated by wall rows.
    """

    def __init__(self, tasks: list, task_of: np.ndarray, horizon: int):
        self.tasks = tasks
        self.size = tasks[0].size
        self.horizon = int(horizon)
        self.task_of = np.asarray(task_of, dtype=np.int64)
        n = self.size
        atlas = np.ones((len(tasks) * (n + 1) - 1, n), dtype=bool)
        for i, task in enumerate(tasks):
            atlas[i * (n + 1):i * (n + 1) + n] = task.walls
        self.grid = GridWorld(len(self.task_of), atlas, goal=(-1, -1), horizon=self.horizon)
        self.row_offset = np.stack([self.task_of * (n + 1), np.zeros_like(self.task_of)], 1)
        self.obj = np.array([tasks[k].obj for k in self.task_of], dtype=np.int64)
        self.goal_cells = np.array([tasks[k].goals for k in self.task_of], dtype=np.int64)

    def reset(self, starts: np.ndarray, goal_idx: np.ndarray):
        self.pos = np.asarray(starts, dtype=np.int64).copy()
        self.goal_idx = np.asarray(goal_idx, dtype=np.int64)
        self.goal = self.goal_cells[np.arange(len(self.pos)), self.goal_idx]
        self.hold = np.all(self.pos == self.obj, axis=1).astype(np.int64)
        self.t = 0
        self.active = np.ones(len(self.pos), dtype=bool)
        return self.pos.copy(), self.hold.copy()

    def state(self) -> np.ndarray:
        return state_index(self.pos, self.hold, self.goal_idx, self.size)

    def step(self, actions: np.ndarray):
        """Move the active agents; returns (reward, done, success) for this step."""
        live = self.active
        moved = self.grid.move(self.pos + self.row_offset, actions) - self.row_offset
        self.pos = np.where(live[:, None], moved, self.pos)
        self.hold = self.hold | (live & np.all(self.pos == self.obj, axis=1))
        success = live & self.hold.astype(bool) & np.all(self.pos == self.goal, axis=1)
        self.t += 1
        done = success | (live & (self.t >= self.horizon))
        self.active = live & ~done
        return success.astype(float), done, success
