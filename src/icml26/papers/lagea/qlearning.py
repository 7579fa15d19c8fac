"""Episodic tabular Q-learning (the stand-in for SAC) with LaGEA / baseline shaping.

One learner per (run, task): its own Q-table (size x size x 2 x 4 states x 4 actions; times
2 phases in the 2-object variant), its own epsilon and its own success EMA. All learners of
a batch play one episode in lock-step (tasks interleaved round-robin, as in the spec's
pseudo-code; the tasks do not share anything, so the interleaving order does not change any
learner). Per episode:
  1. roll out an epsilon-greedy episode (ties between equal Q-values broken at random); the
     first ``random_fraction`` x E episodes take uniformly random actions (official:
     start_timesteps = 10 000 of 1e6 steps, configs/metaworld.py);
  2. the env reward is -1 on every step that is not in the success state and +1 on the
     success step (official: ``2 * success - 1``, experiments/train_lagea.py); a setting may
     keep the earlier reading, 0 per step and 1 on success (``env_reward: zero_one``);
  3. every episode of a feedback method gets a reflection (reflector.py), checked by schema;
  4. shaping rewards of the whole episode (shaping.py); the official coefficient reads the
     success EMA and the positive-progress share after this episode (official: the episode is
     in the buffer and the EMA updated before the updates that replay it);
  5. a backward sweep over the episode's transitions, target
     r_env + r_shape + gamma * max_a' Q(s', a'), no bootstrap after a success (termination;
     a horizon cut-off is a truncation and does bootstrap -- INFERRED);
  6. SR_ema <- 0.99 SR_ema + 0.01 success (official success_ema_beta; LAGEA-SPEC: 0.95 /
     0.05); epsilon <- max(0.05, 0.995 epsilon), per learner (INFERRED: "after each episode"
     read per task, every task has its own learner).
Every ``eval_every`` episodes per task (and at the end): greedy evaluation, ``eval_episodes``
episodes per task.

Q starts at the value of never succeeding, r_fail / (1 - gamma) (-100 under the +-1 reward
with gamma 0.99, 0 under the 0/1 reading; INFERRED: with -1 steps a zero start would make
every untried action look better than every tried one, an optimism SAC does not have). The
table holds Q minus that start value, so the update stays exact: untried and tried-but-failing
actions keep exactly equal values and their ties stay random.

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


def fail_value(r_fail, gamma):
    """Q0 = r_fail / (1 - gamma): the value of never succeeding (the initial Q)."""
    return r_fail / (1.0 - gamma)


def backward_sweep(U, S, A, R, length, success, alpha, gamma, r_fail=0.0):
    """In place: Q(s_t,a_t) += alpha (R_t + gamma max_a' Q(s_{t+1}, a') - Q(s_t,a_t)) for
    t = n-1 .. 0 per learner (S: (B, H+1) states; A, R: (B, H)); no bootstrap on the last
    transition of a successful episode (termination). U = Q - Q0 (B, S, 4), Q0 = fail_value:
    the same update written for U, target R - r_fail + gamma max U(s') (terminal: R - Q0)."""
    q0 = fail_value(r_fail, gamma)
    for t in range(int(length.max()) - 1, -1, -1):
        m = np.flatnonzero(t < length)
        s, a, s2 = S[m, t], A[m, t], S[m, t + 1]
        terminal = success[m] & (t == length[m] - 1)
        target = np.where(terminal, R[m, t] - q0, R[m, t] - r_fail + gamma * U[m, s2].max(axis=1))
        U[m, s, a] += alpha * (target - U[m, s, a])


def env_reward(success, live, kind):
    """Per-step env reward of the live agents: "pm1" 2 success - 1 (official), "zero_one"
    success (the earlier reading); 0 for agents whose episode is over."""
    r = 2.0 * success - 1.0 if kind == "pm1" else success.astype(float)
    return np.where(live, r, 0.0)


def fail_reward(kind):
    """The env reward of a step that is not a success (r_fail)."""
    return -1.0 if kind == "pm1" else 0.0


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
    c = {k: np.repeat(v, K) for k, v in shaping.codes([r["flags"] for r in runs]).items()}
    feedback = np.repeat([r["flags"].feedback for r in runs], K)
    accuracy = np.repeat([r["accuracy"] for r in runs], K)
    spec_rho = c["rho"] == shaping.RHOS.index("spec")
    sr_decay = np.where(spec_rho, prm["spec_sr_decay"], prm["sr_decay"])
    r_fail = fail_reward(prm["env_reward"])
    q0 = fail_value(r_fail, prm["gamma"])
    n_random = int(prm["random_fraction"] * E)
    window = max(1, int(np.ceil(prm["pos_frac_window"] * E)))
    bidx = np.arange(B)

    U = np.zeros((B, T.n_states(size, n_obj), T.N_ACTIONS))  # Q - Q0 (see backward_sweep)
    eps = np.full(B, prm["eps_start"])
    sr_ema = np.zeros(B)
    log = {name: np.zeros((B, E)) for name in ("success", "rho", "abs_shape", "pos_frac")}
    ev = {name: np.zeros((B, len(points))) for name in ("success", "sr_ema")}
    n_refl, n_fail_refl, n_refl_correct, n_rejected = (np.zeros(B) for _ in range(4))
    pos_cnt, len_cnt = np.zeros((B, E)), np.zeros((B, E))  # per episode: r_goal > 0, steps
    S = np.zeros((B, H + 1), np.int64)
    A = np.zeros((B, H), np.int64)
    POS = np.zeros((B, H + 1, 2), np.int64)
    HOLD = np.zeros((B, H + 1), np.int64)
    OBJ = np.zeros((B, H + 1, 2), np.int64)    # current object cell per step
    PHASE = np.zeros((B, H + 1), np.int64)     # objects placed so far (2-object variant)

    for e in range(E):
        # per-run random blocks of this episode (fixed sizes: independent of outcomes)
        Ur = np.concatenate([r["rng"].random((K, H, 6)) for r in runs])
        N = np.concatenate([r["rng"].standard_normal((K, 2, H + 1)) for r in runs])
        flip = np.concatenate([r["rng"].random(K) for r in runs])
        jitter = np.concatenate([r["rng"].integers(-prm["jitter"], prm["jitter"] + 1, K)
                                 for r in runs])
        starts = np.concatenate([r["env"]["train_start"][:, e] for r in runs])
        goal_idx = np.concatenate([r["env"]["train_goal"][:, e] for r in runs])

        # 1. epsilon-greedy roll-out (uniformly random during the start-up episodes)
        POS[:, 0], HOLD[:, 0] = suite.reset(starts, goal_idx)
        OBJ[:], PHASE[:] = suite.current_obj()[:, None], 0
        S[:, 0] = suite.state()
        R_env = np.zeros((B, H))
        length = np.zeros(B, np.int64)
        success = np.zeros(B, bool)
        eps_now = eps if e >= n_random else np.ones(B)
        for t in range(H):
            live = suite.active.copy()
            greedy = _greedy(U[bidx, S[:, t]], Ur[:, t, 2:6])
            explore = (Ur[:, t, 1] * T.N_ACTIONS).astype(np.int64)
            A[:, t] = np.where(Ur[:, t, 0] < eps_now, explore, greedy)
            _, _, succ = suite.step(A[:, t])
            R_env[:, t] = env_reward(succ, live, prm["env_reward"])
            success |= succ
            length += live
            S[:, t + 1], POS[:, t + 1], HOLD[:, t + 1] = suite.state(), suite.pos, suite.hold
            OBJ[:, t + 1], PHASE[:, t + 1] = suite.current_obj(), suite.phase
            if not suite.active.any():
                break
        failed = ~success

        # 2. a reflection of every episode (feedback methods only)
        goal = suite.goal
        obj_pos = np.where(HOLD[..., None].astype(bool), POS, OBJ)
        d_ao = np.abs(POS - obj_pos).sum(-1)
        d_og = np.abs(obj_pos - goal[:, None]).sum(-1)
        phase = PHASE if n_obj > 1 else None
        err_true, key_true = reflector.true_diagnosis(d_ao, d_og, HOLD, length, phase, success)
        ask = np.flatnonzero(feedback)
        records = reflector.reflect(err_true[ask], key_true[ask], length[ask], flip[ask],
                                    jitter[ask], accuracy[ask], success[ask])
        err, key, valid = (np.full(B, -1, np.int64), np.zeros(B, np.int64), np.zeros(B, bool))
        err[ask], key[ask], valid[ask] = reflector.parse(records, length[ask])
        fail_ask = ask[failed[ask]]
        n_refl[ask] += 1
        n_fail_refl[fail_ask] += 1
        n_refl_correct[fail_ask] += valid[fail_ask] & (err[fail_ask] == err_true[fail_ask])
        n_rejected[ask] += ~valid[ask]

        # 3. shaping rewards of the episode
        phi = T.features(POS, HOLD, OBJ, goal[:, None], size)
        fb_row = np.where(valid & (err >= 0), 1 + err, 0)  # success / rejected -> GOAL
        p, g = shaping.reads(phi, W, fb_row, N, prm, phase, n_obj)
        r_goal = shaping.goal_delta(p, prm)
        inside = np.arange(H)[None, :] < length[:, None]
        pos_cnt[:, e] = ((r_goal > 0) & inside).sum(1)
        len_cnt[:, e] = length
        lo = max(0, e + 1 - window)
        pos_frac = pos_cnt[:, lo:e + 1].sum(1) / np.maximum(len_cnt[:, lo:e + 1].sum(1), 1)
        sr_next = sr_decay * sr_ema + (1 - sr_decay) * success
        coef = shaping.coefficient(c, sr_next, sr_ema, pos_frac, prm)
        kappa = shaping.feedback_weights(c["keyframes"], p, length, key, valid, prm)
        alpha = shaping.feedback_alpha(W, fb_row, prm)
        r_shape = shaping.episode_shaping(c, p, g, r_goal, kappa, alpha, coef, length, success,
                                          failed & valid & (err >= 0), valid, key, prm)

        # 4. backward Q-learning sweep
        backward_sweep(U, S, A, R_env + r_shape, length, success, prm["alpha"], prm["gamma"],
                       r_fail)

        # 5. logs, success EMA, exploration decay
        log["rho"][:, e] = coef
        log["pos_frac"][:, e] = pos_frac
        log["abs_shape"][:, e] = np.abs(r_shape).sum(1) / np.maximum(length, 1)
        log["success"][:, e] = success
        sr_ema = sr_next
        eps = np.maximum(prm["eps_min"], eps * prm["eps_decay"])

        if e + 1 in points:
            j = points.index(e + 1)
            tie = np.concatenate([r["eval_rng"].random((K * M, H, 4)) for r in runs])
            st = np.concatenate([r["env"]["eval_start"][j].reshape(K * M, 2) for r in runs])
            gl = np.concatenate([r["env"]["eval_goal"][j].reshape(K * M) for r in runs])
            ok = evaluate_greedy(U, eval_suite, st, gl, tie)
            ev["success"][:, j] = ok.reshape(B, M).mean(1)
            ev["sr_ema"][:, j] = sr_ema

    return {"Q": U + q0, "eval_points": np.array(points), "eval_success": ev["success"],
            "eval_sr_ema": ev["sr_ema"], "ep_success": log["success"], "ep_rho": log["rho"],
            "ep_abs_shape": log["abs_shape"], "ep_pos_frac": log["pos_frac"],
            "n_reflections": n_refl, "n_fail_reflections": n_fail_refl,
            "n_type_correct": n_refl_correct, "n_rejected": n_rejected}
