"""Episodic tabular Q-learning (the stand-in for SAC) with LaGEA / baseline shaping.

One learner per (run, task): its own Q-table (size x size x 2 x 4 states x 4 actions; times
2 phases in the 2-object variant), its own epsilon and its own success EMA. All learners of
a batch play one episode in lock-step (tasks interleaved round-robin, as in the spec's
pseudo-code; the tasks do not share anything, so the interleaving order does not change any
learner). Per episode:
  1. roll out an epsilon-greedy episode (ties between equal Q-values broken at random);
  2. failed episodes of feedback methods get a reflection (reflector.py), checked by schema;
  3. shaping rewards of the whole episode (shaping.py), with rho from the SR_ema before it;
  4. a backward sweep over the episode's transitions, target
     r_env + r_shape + gamma * max_a' Q(s', a'), no bootstrap after a success (termination;
     a horizon cut-off is a truncation and does bootstrap -- INFERRED);
  5. SR_ema <- 0.95 SR_ema + 0.05 success; epsilon <- max(0.05, 0.995 epsilon), per learner
     (INFERRED: "after each episode" read per task, every task has its own learner).
Every ``eval_every`` episodes per task (and at the end): greedy evaluation, ``eval_episodes``
episodes per task.

Randomness: start cells / goals come from ``env`` (shared by all methods of a (setting,
seed): paired comparisons); exploration, reflector and similarity noise from one Generator
per run, drawn in fixed-size blocks per episode, so a run's numbers do not depend on the other
runs of the batch.
"""

from __future__ import annotations

import numpy as np

from . import reflector, shaping
from . import tasks as T


def env_stream(task_list, goals_mode, n_episodes, eval_points, eval_episodes, rng):
    """Start cells and goal indices of every training and evaluation episode of one run."""
    K, E, P, M = len(task_list), n_episodes, len(eval_points), eval_episodes
    out = {"train_start": np.zeros((K, E, 2), np.int64), "train_goal": np.zeros((K, E), np.int64),
           "eval_start": np.zeros((P, K, M, 2), np.int64),
           "eval_goal": np.zeros((P, K, M), np.int64)}
    for k, task in enumerate(task_list):
        free = task.free_cells()
        out["train_start"][k] = free[rng.integers(len(free), size=E)]
        out["train_goal"][k] = rng.integers(T.N_GOALS, size=E)
        out["eval_start"][:, k] = free[rng.integers(len(free), size=(P, M))]
        out["eval_goal"][:, k] = rng.integers(T.N_GOALS, size=(P, M))
    if goals_mode == "fixed":  # always candidate 0 (same stream layout as "random")
        out["train_goal"][:] = 0
        out["eval_goal"][:] = 0
    elif goals_mode != "random":
        raise ValueError(f"goals {goals_mode!r} is not allowed; allowed: fixed, random")
    return out


def eval_points(n_episodes, every):
    return sorted(set(range(every, n_episodes + 1, every)) | {n_episodes})


def _greedy(q, tie_u):
    """Greedy actions, ties broken uniformly at random by the uniforms tie_u (B, 4)."""
    best = q == q.max(axis=1, keepdims=True)
    return np.argmax(best * (1.0 + tie_u), axis=1)


def evaluate_greedy(Q, suite, starts, goals, tie_u):
    """Greedy success per agent of ``suite`` (tie-breaking uniforms tie_u: (B, H, 4))."""
    bidx = np.repeat(np.arange(Q.shape[0]), len(starts) // Q.shape[0])
    suite.reset(starts, goals)
    success = np.zeros(len(starts), bool)
    for t in range(suite.horizon):
        a = _greedy(Q[bidx, suite.state()], tie_u[:, t])
        _, _, succ = suite.step(a)
        success |= succ
        if not suite.active.any():
            break
    return success


def backward_sweep(Q, S, A, R, length, success, alpha, gamma):
    """In place: Q(s_t,a_t) += alpha (R_t + gamma max_a' Q(s_{t+1}, a') - Q(s_t,a_t)) for
    t = n-1 .. 0 per learner (Q: (B, S, 4); S: (B, H+1) states; A, R: (B, H)); no bootstrap on
    the last transition of a successful episode (termination)."""
    for t in range(int(length.max()) - 1, -1, -1):
        m = np.flatnonzero(t < length)
        s, a, s2 = S[m, t], A[m, t], S[m, t + 1]
        terminal = success[m] & (t == length[m] - 1)
        boot = np.where(terminal, 0.0, Q[m, s2].max(axis=1))
        target = R[m, t] + gamma * boot
        Q[m, s, a] += alpha * (target - Q[m, s, a])


def train_runs(task_list, runs, prm, W):
    """Train every (run, task) learner; runs: list of dicts with keys
    flags (shaping.Shaping), accuracy, env (env_stream), rng, eval_rng.
    Returns per-learner arrays, first axis b = run * K + task."""
    K, R = len(task_list), len(runs)
    B, H, E = R * K, prm["horizon"], prm["episodes"]
    size = task_list[0].size
    points = eval_points(E, prm["eval_every"])
    M = prm["eval_episodes"]
    task_of = np.tile(np.arange(K), R)
    suite = T.Suite(task_list, task_of, H)
    n_obj = suite.n_objects
    eval_suite = T.Suite(task_list, np.repeat(task_of, M), H)
    flags = {f: np.repeat([getattr(r["flags"], f) for r in runs], K)
             for f in ("shaped", "feedback", "keyframe", "adaptive")}
    accuracy = np.repeat([r["accuracy"] for r in runs], K)
    bidx = np.arange(B)

    Q = np.zeros((B, T.n_states(size, n_obj), T.N_ACTIONS))
    eps = np.full(B, prm["eps_start"])
    sr_ema = np.zeros(B)
    log = {name: np.zeros((B, E)) for name in ("success", "rho", "abs_shape")}
    ev = {name: np.zeros((B, len(points))) for name in ("success", "sr_ema")}
    n_refl, n_refl_correct, n_rejected = np.zeros(B), np.zeros(B), np.zeros(B)
    S = np.zeros((B, H + 1), np.int64)
    A = np.zeros((B, H), np.int64)
    POS = np.zeros((B, H + 1, 2), np.int64)
    HOLD = np.zeros((B, H + 1), np.int64)
    OBJ = np.zeros((B, H + 1, 2), np.int64)    # current object cell per step
    PHASE = np.zeros((B, H + 1), np.int64)     # objects placed so far (2-object variant)

    for e in range(E):
        # per-run random blocks of this episode (fixed sizes: independent of outcomes)
        U = np.concatenate([r["rng"].random((K, H, 6)) for r in runs])
        N = np.concatenate([r["rng"].standard_normal((K, 2, H + 1)) for r in runs])
        flip = np.concatenate([r["rng"].random(K) for r in runs])
        jitter = np.concatenate([r["rng"].integers(-prm["jitter"], prm["jitter"] + 1, K)
                                 for r in runs])
        starts = np.concatenate([r["env"]["train_start"][:, e] for r in runs])
        goal_idx = np.concatenate([r["env"]["train_goal"][:, e] for r in runs])

        # 1. epsilon-greedy roll-out
        POS[:, 0], HOLD[:, 0] = suite.reset(starts, goal_idx)
        OBJ[:], PHASE[:] = suite.current_obj()[:, None], 0
        S[:, 0] = suite.state()
        R_env = np.zeros((B, H))
        length = np.zeros(B, np.int64)
        success = np.zeros(B, bool)
        for t in range(H):
            live = suite.active.copy()
            greedy = _greedy(Q[bidx, S[:, t]], U[:, t, 2:6])
            explore = (U[:, t, 1] * T.N_ACTIONS).astype(np.int64)
            A[:, t] = np.where(U[:, t, 0] < eps, explore, greedy)
            R_env[:, t], _, succ = suite.step(A[:, t])
            success |= succ
            length += live
            S[:, t + 1], POS[:, t + 1], HOLD[:, t + 1] = suite.state(), suite.pos, suite.hold
            OBJ[:, t + 1], PHASE[:, t + 1] = suite.current_obj(), suite.phase
            if not suite.active.any():
                break
        failed = ~success

        # 2. reflections of failed episodes (feedback methods only)
        goal = suite.goal
        obj_pos = np.where(HOLD[..., None].astype(bool), POS, OBJ)
        d_ao = np.abs(POS - obj_pos).sum(-1)
        d_og = np.abs(obj_pos - goal[:, None]).sum(-1)
        phase = PHASE if n_obj > 1 else None
        err_true, key_true = reflector.true_diagnosis(d_ao, d_og, HOLD, length, phase)
        ask = np.flatnonzero(failed & flags["feedback"])
        records = reflector.reflect(err_true[ask], key_true[ask], length[ask], flip[ask],
                                    jitter[ask], accuracy[ask])
        err, key, valid = (np.zeros(B, np.int64), np.zeros(B, np.int64), np.zeros(B, bool))
        err[ask], key[ask], valid[ask] = reflector.parse(records, length[ask])
        n_refl[ask] += 1
        n_refl_correct[ask] += valid[ask] & (err[ask] == err_true[ask])
        n_rejected[ask] += ~valid[ask]

        # 3. shaping rewards of the episode
        phi = T.features(POS, HOLD, OBJ, goal[:, None], size)
        r_shape = shaping.episode_shaping(flags, phi, length, failed, err, key, valid, W, N,
                                          sr_ema, prm, phase, n_obj)

        # 4. backward Q-learning sweep
        backward_sweep(Q, S, A, R_env + r_shape, length, success, prm["alpha"], prm["gamma"])

        # 5. logs, success EMA, exploration decay
        coef = np.where(flags["adaptive"], shaping.rho(sr_ema, prm), prm["rho_scale"])
        log["rho"][:, e] = np.where(flags["shaped"], coef, 0.0)
        log["abs_shape"][:, e] = np.abs(r_shape).sum(1) / np.maximum(length, 1)
        log["success"][:, e] = success
        sr_ema = prm["sr_decay"] * sr_ema + (1 - prm["sr_decay"]) * success
        eps = np.maximum(prm["eps_min"], eps * prm["eps_decay"])

        if e + 1 in points:
            j = points.index(e + 1)
            tie = np.concatenate([r["eval_rng"].random((K * M, H, 4)) for r in runs])
            st = np.concatenate([r["env"]["eval_start"][j].reshape(K * M, 2) for r in runs])
            gl = np.concatenate([r["env"]["eval_goal"][j].reshape(K * M) for r in runs])
            ok = evaluate_greedy(Q, eval_suite, st, gl, tie)
            ev["success"][:, j] = ok.reshape(B, M).mean(1)
            ev["sr_ema"][:, j] = sr_ema

    return {"Q": Q, "eval_points": np.array(points), "eval_success": ev["success"],
            "eval_sr_ema": ev["sr_ema"], "ep_success": log["success"], "ep_rho": log["rho"],
            "ep_abs_shape": log["abs_shape"], "n_reflections": n_refl,
            "n_type_correct": n_refl_correct, "n_rejected": n_rejected}
