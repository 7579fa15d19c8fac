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
- Full scale also adds the spec's "2-object variant" (INFERRED; the spec names it only): a
  setting with ``objects: 2`` gives every task a second object cell (SECOND_OBJECTS) and the
  task becomes "place object 1 on the goal, then object 2". Only the next object in the order
  can be grasped (the agent stepping on object 2 first does not pick it up); object 1 reaching
  the goal is put down there (reward 0, the episode goes on) and object 2 becomes the current
  object; success = object 2 held on the goal, after object 1 (reward 1, the episode ends).
  The tabular state gains the phase (index of the current object): a Q-table of shape
  2 x size x size x 2 x 4 x 4. With one object the phase is always 0 and nothing changes.

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
# INFERRED second object cells of the 2-object variant, on the 9 x 9 grid: off the walls of the
# blocker tasks, the first object and every goal cell (also after scaling to 13 x 13)
SECOND_OBJECTS = ((6, 3), (2, 2), (4, 1), (2, 5))
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
    later_objs: tuple = ()  # objects 2.. of a multi-object task (placed after ``obj``, in order)

    @property
    def size(self) -> int:
        return self.walls.shape[0]

    @property
    def objects(self) -> tuple:
        """Object cells in the order they must be placed on the goal."""
        return (self.obj, *self.later_objs)

    def free_cells(self) -> np.ndarray:
        """(n_free, 2) cells that are not walls, in row-major order (start-cell support)."""
        return np.argwhere(~self.walls)


def _scale(c: int, size: int) -> int:
    return int(round(c * (size - 1) / 8))


def make_task(task_id: int, size: int = 9, objects: int = 1) -> Task:
    """Task 0-3: the spec's tasks; 4-7: the same with blocker walls (INFERRED layouts).
    objects = 2: the 2-object variant (second object SECOND_OBJECTS[task_id % 4]; INFERRED)."""
    if not 0 <= task_id < 2 * len(BASE_TASKS):
        raise ValueError(f"task {task_id} is not allowed; allowed: 0..{2 * len(BASE_TASKS) - 1}")
    if objects not in (1, 2):
        raise ValueError(f"objects {objects} is not allowed; allowed: 1, 2")
    obj, goals = BASE_TASKS[task_id % 4]
    obj = tuple(_scale(c, size) for c in obj)
    goals = tuple(tuple(_scale(c, size) for c in g) for g in goals)
    walls = np.zeros((size, size), dtype=bool)
    if task_id >= 4:
        for r0, c0, r1, c1 in BLOCKERS[task_id - 4]:
            walls[_scale(r0, size):_scale(r1, size) + 1, _scale(c0, size):_scale(c1, size) + 1] = 1
    later = tuple(tuple(_scale(c, size) for c in SECOND_OBJECTS[task_id % 4])
                  for _ in range(objects - 1))
    for cell in (obj, *later, *goals):
        if walls[cell]:
            raise ValueError(f"task {task_id}: a wall covers the object or a goal at {cell}")
    if len({obj, *later, *goals}) != 1 + len(later) + len(goals):
        raise ValueError(f"task {task_id}: object and goal cells must be distinct")
    return Task(obj, goals, walls, later)


def max_distance(size: int) -> int:
    """D: the largest Manhattan distance on the grid (16 on 9 x 9)."""
    return 2 * (size - 1)


def n_states(size: int, objects: int = 1) -> int:
    return objects * size * size * 2 * N_GOALS


def state_index(pos: np.ndarray, hold: np.ndarray, goal_idx: np.ndarray, size: int,
                phase=0):
    """Flat index of (phase, row, col, holding, goal_idx) into a (phases*size*size*2*4,) table
    axis; phase = index of the current object (always 0 with one object)."""
    return (((phase * size + pos[..., 0]) * size + pos[..., 1]) * 2 + hold) * N_GOALS + goal_idx


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
        self.n_objects = len(tasks[0].objects)
        if any(len(task.objects) != self.n_objects for task in tasks):
            raise ValueError("all tasks of a suite must have the same number of objects")
        # (B, n_objects, 2): object cells in placing order
        self.objs = np.array([tasks[k].objects for k in self.task_of], dtype=np.int64)
        self.goal_cells = np.array([tasks[k].goals for k in self.task_of], dtype=np.int64)

    def reset(self, starts: np.ndarray, goal_idx: np.ndarray):
        self.pos = np.asarray(starts, dtype=np.int64).copy()
        self.goal_idx = np.asarray(goal_idx, dtype=np.int64)
        self.goal = self.goal_cells[np.arange(len(self.pos)), self.goal_idx]
        self.hold = np.all(self.pos == self.obj, axis=1).astype(np.int64)
        self.phase = np.zeros(len(self.pos), dtype=np.int64)  # index of the current object
        self.t = 0
        self.active = np.ones(len(self.pos), dtype=bool)
        return self.pos.copy(), self.hold.copy()

    def current_obj(self) -> np.ndarray:
        """(B, 2) cell of each agent's current object (the next one to place; held: its
        start cell, the features then read the object's position from the agent)."""
        return self.objs[np.arange(len(self.pos)), self.phase]

    def state(self) -> np.ndarray:
        return state_index(self.pos, self.hold, self.goal_idx, self.size, self.phase)

    def step(self, actions: np.ndarray):
        """Move the active agents; returns (reward, done, success) for this step."""
        live = self.active
        moved = self.grid.move(self.pos + self.row_offset, actions) - self.row_offset
        self.pos = np.where(live[:, None], moved, self.pos)
        # only the current object can be grasped (objects are picked in order)
        self.hold = self.hold | (live & np.all(self.pos == self.current_obj(), axis=1))
        at_goal = live & self.hold.astype(bool) & np.all(self.pos == self.goal, axis=1)
        last = self.phase == self.n_objects - 1
        success = at_goal & last
        # a non-last object reaching the goal is put down there; the next one becomes current
        placed = at_goal & ~last
        self.phase = self.phase + placed
        self.hold = np.where(placed, 0, self.hold)
        self.t += 1
        done = success | (live & (self.t >= self.horizon))
        self.active = live & ~done
        return success.astype(float), done, success
