"""LaGEA's shaping reward (and the GOALSIM / ablation variants), read top to bottom.

1. Shared representation (stand-in for aligned VLM embeddings; INFERRED). Each schema error
   type and the goal description get a read-out vector w_type over the state features phi(s)
   (tasks.features). It is fitted once, in the prepare stage, by ridge regression
   (lambda = 1e-3) on random states to a sub-goal completion score:
     GOAL: 1 - d_og/D;  MISSED_OBJECT: 1 if holding else 1 - d_ao/D;
     FAILED_PLACEMENT: hold * (1 - d_og/D),
   and frozen afterwards (the role of pretrained text/image projection heads). Every
   similarity read adds N(0, 0.03^2) noise (embedding noise).
   2-object variant (INFERRED): phi(s) describes the current object, and a read of an
   N-object task is (objects placed + w . phi(s)) / N -- a placed object scores 1 and a later
   one 0 -- so putting object 1 down on the goal is progress, not a drop to object 2's score.
2. Delta-based, bounded, keyframe-grounded shaping for an episode of n transitions (INFERRED):
     p_t  = w_GOAL . phi(s_t) + noise,  dp_t = p_{t+1} - p_t             (goal progress)
     if failed and the reflection is valid:
       g_t = w_type . phi(s_t) + noise, dg_t = g_{t+1} - g_t             (feedback agreement)
       w_t = exp(-0.5 ((t - k) / 4)^2), raised to >= 0.3 for t <= k     (keyframe window)
     else dg_t = 0
     r_shape_t = rho * clip(dp_t + w_t dg_t, -0.2, 0.2)
3. Failure-aware coefficient: rho = 0.5 * max(0.1, 1 - SR_ema), SR_ema an EMA (decay 0.95,
   start 0) of the task's episode success, so shaping is dense while the agent fails and
   recedes to 0.05 as it succeeds.

Variants (flags of ``METHODS``): SPARSE (no shaping), GOALSIM (0.5 * clip(dp): goal
similarity only, constant coefficient, no reflection), LAGEA-NOKEY (w_t = 0.35 everywhere),
LAGEA-CONST (rho = 0.5 always). A failed episode whose reflection is rejected by the schema
check gets no shaping at all (feedback methods only).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import tasks as T

READOUTS = ("GOAL", "MISSED_OBJECT", "FAILED_PLACEMENT")  # rows of the read-out matrix W


@dataclass(frozen=True)
class Shaping:
    shaped: bool      # any shaping term at all
    feedback: bool    # uses the reflection (feedback-agreement term)
    keyframe: bool    # keyframe window (else uniform weight)
    adaptive: bool    # failure-aware rho (else constant)


METHODS = {
    "SPARSE": Shaping(False, False, False, False),
    "GOALSIM": Shaping(True, False, False, False),
    "LAGEA": Shaping(True, True, True, True),
    "LAGEA-NOKEY": Shaping(True, True, False, True),
    "LAGEA-CONST": Shaping(True, True, True, False),
}


# ---- 1. the shared representation -----------------------------------------------------------
def subgoal_scores(pos, hold, obj, goal, size):
    """Targets of the read-outs, (..., 3) in READOUTS order."""
    D = float(T.max_distance(size))
    h = hold.astype(float)
    obj_pos = np.where(hold[..., None].astype(bool), pos, obj)
    d_ao = np.abs(pos - obj_pos).sum(-1)
    d_og = np.abs(obj_pos - goal).sum(-1)
    goal_score = 1.0 - d_og / D
    missed = np.where(h > 0, 1.0, 1.0 - d_ao / D)
    placed = h * (1.0 - d_og / D)
    return np.stack([goal_score, missed, placed], -1)


def random_states(task_list, n, rng):
    """n uniformly random (task, free cell, holding, goal) states: (pos, hold, obj, goal)."""
    k = rng.integers(len(task_list), size=n)
    pos, obj, goal = np.zeros((n, 2), int), np.zeros((n, 2), int), np.zeros((n, 2), int)
    for i, task in enumerate(task_list):
        sel = np.flatnonzero(k == i)
        free = task.free_cells()
        pos[sel] = free[rng.integers(len(free), size=len(sel))]
        obj[sel] = task.obj
        goal[sel] = np.asarray(task.goals)[rng.integers(T.N_GOALS, size=len(sel))]
    hold = rng.integers(2, size=n)
    return pos, hold, obj, goal


def fit_readouts(task_list, n_states, lam, rng):
    """Ridge read-outs W (3, 6): argmin ||Phi w - y||^2 + lam ||w||^2 per sub-goal score."""
    size = task_list[0].size
    pos, hold, obj, goal = random_states(task_list, n_states, rng)
    phi = T.features(pos, hold, obj, goal, size)
    y = subgoal_scores(pos, hold, obj, goal, size)
    A = phi.T @ phi + lam * np.eye(phi.shape[1])
    return np.linalg.solve(A, phi.T @ y).T


def similarity(phi, w, noise, phase=None, n_objects=1):
    """Noisy agreement read w . phi(s) (row-wise sum: identical whatever the batch size).
    With n_objects > 1: (phase + w . phi(s)) / n_objects + noise, phase = objects placed."""
    read = (phi * w).sum(-1)
    if n_objects > 1:
        read = (phase + read) / n_objects
    return read + noise


# ---- 2. + 3. the shaping reward --------------------------------------------------------------
def rho(sr_ema, prm):
    """Failure-aware coefficient 0.5 * max(0.1, 1 - SR_ema)."""
    return prm["rho_scale"] * np.maximum(prm["rho_floor"], 1.0 - sr_ema)


def keyframe_window(k, n_steps, prm):
    """w_t = exp(-0.5 ((t-k)/sd)^2), at least ``window_floor`` for t <= k: (B, n_steps)."""
    t = np.arange(n_steps)[None, :]
    w = np.exp(-0.5 * ((t - k[:, None]) / prm["window_sd"]) ** 2)
    return np.where(t <= k[:, None], np.maximum(w, prm["window_floor"]), w)


def episode_shaping(flags, phi, length, failed, refl_type, refl_key, refl_valid, W, noise,
                    sr_ema, prm, phase=None, n_objects=1):
    """Per-step shaping rewards (B, T) of a batch of episodes (0 beyond each episode's end).

    flags: dict of (B,) bools (fields of ``Shaping``); phi: (B, T+1, 6) state features (of
    the current object); length: (B,) transitions n; failed: (B,); refl_*: (B,) parsed
    reflections (ignored where not failed); W: (3, 6) read-outs; noise: (B, 2, T+1) N(0, 1)
    draws; sr_ema: (B,); phase: (B, T+1) objects placed (2-object variant only).
    """
    B, T1, _ = phi.shape
    sd = prm["sim_noise"]
    p = similarity(phi, W[0], sd * noise[:, 0], phase, n_objects)
    dp = p[:, 1:] - p[:, :-1]
    use_fb = flags["feedback"] & failed & refl_valid
    w_type = W[1 + refl_type][:, None, :]  # (B, 1, 6): read-out of the reported error type
    g = similarity(phi, w_type, sd * noise[:, 1], phase, n_objects)
    dg = np.where(use_fb[:, None], g[:, 1:] - g[:, :-1], 0.0)
    window = np.where(flags["keyframe"][:, None], keyframe_window(refl_key, T1 - 1, prm),
                      prm["nokey_weight"])
    coef = np.where(flags["adaptive"], rho(sr_ema, prm), prm["rho_scale"])
    r = coef[:, None] * np.clip(dp + window * dg, -prm["clip"], prm["clip"])
    # no shaping: SPARSE; or a feedback method whose reflection was rejected by the schema
    off = ~flags["shaped"] | (flags["feedback"] & failed & ~refl_valid)
    inside = np.arange(T1 - 1)[None, :] < length[:, None]
    return np.where(inside & ~off[:, None], r, 0.0)
