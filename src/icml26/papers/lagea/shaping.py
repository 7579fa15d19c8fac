"""LaGEA's shaping reward (and the GOALSIM / ablation / spec-reading variants), read top to bottom.

The official code (github.com/monaf-chowdhury/LaGEA) fixes the form; the file each piece comes
from is named where it is used. Facts and numbers carry over, the code is ours.

1. Shared representation (stand-in for aligned VLM embeddings; INFERRED). Each schema error
   type and the goal description get a read-out vector w over the state features phi(s)
   (tasks.features). It is fitted once, in the prepare stage, by ridge regression
   (lambda = 1e-3) on random states to a sub-goal completion score:
     GOAL: 1 - d_og/D;  MISSED_OBJECT: 1 if holding else 1 - d_ao/D;
     FAILED_PLACEMENT: hold * (1 - d_og/D),
   and frozen afterwards (the role of the projection heads that align text and image). Every
   similarity read adds N(0, 0.03^2) noise (embedding noise).
   2-object variant (INFERRED): phi(s) describes the current object, and a read of an
   N-object task is (objects placed + w . phi(s)) / N, so putting object 1 down is progress.
2. Keyframes (official: ``get_keyframe`` and ``keyframe_weights_from_indices`` in
   utils/train_utils.py, used in experiments/train_lagea.py). The keyframes come from the
   episode's goal-similarity trace, not from the reflection: both endpoints, then turning
   points of the trace, then the most salient frames, then a coverage fill, at most
   ``kf_max_frames`` of them. Each keyframe gets a triangular +-2 window
   (1, 2/3, 1/3); the weights are kappa = 0.25 + 0.75 window, divided by their episode mean,
   so keyframing moves a fixed feedback mass towards the keyframes.
3. The official shaping of an episode of n transitions (models/projection.py:
   get_goal_delta_reward, get_feedback_delta_reward, get_fused_reward, _blend_alpha;
   utils/train_utils.py: adaptive_rho_shaping; models/lagea.py: critic_train_step), with the
   noisy goal reads p_t and feedback reads g_t, t = 0..n:
     r_goal_t = tanh((0.99 p_{t+1} - p_t) / 0.05)
     r_fb_t   = kappa_t tanh((0.99 g_{t+1} - g_t) / 0.15)
     alpha    = clip(0.5 (0.5 + 0.5 agree), 0.2, 0.95),  agree = (max(cos(w_fb, w_GOAL), 0) + 1) / 2
     fused_t  = clip((1 - alpha) r_goal_t + alpha r_fb_t, -1, 1)
     r_shape_t = rho_static clip(scale fused_t, -1, 1) m_t,  scale = rho_eff / rho_static,
   rho_static = 0.25 and m_t = 0 only on the success transition (the official mask is
   "env reward < 0", i.e. every step that is not in the success state). Every episode is
   reflected on, successes too; a success (or a rejected record: the official fallback uses
   the task instruction as the feedback text) reads the feedback with the GOAL read-out.
4. Failure-aware coefficient (adaptive_rho_shaping):
     rho_eff = 0.05 + 0.94 (1 - max(SR_ema, pos_frac^2)),
   SR_ema an EMA of episode success (beta 0.01, configs/metaworld.py success_ema_beta),
   pos_frac the share of recent transitions with r_goal > 0 (officially of the sampled replay
   batch; here the learner's last ``pos_frac_window`` x E episodes, INFERRED).

Methods (``METHODS``): SPARSE (no shaping); GOALSIM, the FuRL form (FuRL
experiments/train_furl.py, configs/metaworld.py rho = 0.05): a level goal-similarity bonus
0.05 (2 p_{t+1} - 1) on every transition -- FuRL's reward is the cosine itself, and our read p
stands for LaGEA's pot01 = (cos + 1) / 2, so the cosine is 2 p - 1 (INFERRED mapping);
LAGEA (official); LAGEA-NOKEY (kappa = 1, the uniform weights after the official
mean-normalisation); LAGEA-CONST (scale fixed at 1, i.e. the
coefficient rho_static = 0.25: what the official critic uses without the adaptive scale);
LAGEA-REFLKEY (official, but the keyframe is the reflector's, the spec's "the VLM localises
the decisive moment"). Two labelled variants keep the earlier (spec) reading: LAGEA-SPEC,
r_shape = rho clip(dp + w dg, +-0.2), rho = 0.5 max(0.1, 1 - SR_ema) (decay 0.95, SR_ema of
the episodes before), feedback on failed episodes only with a Gaussian window around the
reflector's keyframe, no shaping for a rejected record; GOALSIM-DELTA, 0.5 clip(dp, +-0.2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import tasks as T

READOUTS = ("GOAL", "MISSED_OBJECT", "FAILED_PLACEMENT")  # rows of the read-out matrix W
# get_keyframe's saliency weights (similarity, |velocity|, |acceleration|) and the share of
# frames filled by saliency before the coverage fill (utils/train_utils.py)
SALIENCY_WEIGHTS = (0.5, 0.3, 0.2)
SALIENT_FILL = 0.7

FORMS = ("none", "official", "spec", "goal_level", "goal_delta")
KEYFRAMES = ("none", "saliency", "reflector", "uniform", "gaussian")
RHOS = ("none", "adaptive", "const", "spec")


@dataclass(frozen=True)
class Shaping:
    form: str       # FORMS: which shaping formula
    keyframes: str  # KEYFRAMES: where the feedback weights come from
    rho: str        # RHOS: the coefficient

    @property
    def feedback(self) -> bool:
        """Uses the reflection (so the reflector runs after its episodes)."""
        return self.form in ("official", "spec")


METHODS = {
    "SPARSE": Shaping("none", "none", "none"),
    "GOALSIM": Shaping("goal_level", "none", "const"),
    "LAGEA": Shaping("official", "saliency", "adaptive"),
    "LAGEA-NOKEY": Shaping("official", "uniform", "adaptive"),
    "LAGEA-CONST": Shaping("official", "saliency", "const"),
    "LAGEA-REFLKEY": Shaping("official", "reflector", "adaptive"),
    "LAGEA-SPEC": Shaping("spec", "gaussian", "spec"),
    "GOALSIM-DELTA": Shaping("goal_delta", "none", "const"),
}


def codes(flags_list) -> dict[str, np.ndarray]:
    """Per-learner integer codes of a list of ``Shaping``: form, keyframes, rho (index into
    FORMS, KEYFRAMES, RHOS)."""
    return {"form": np.array([FORMS.index(f.form) for f in flags_list]),
            "keyframes": np.array([KEYFRAMES.index(f.keyframes) for f in flags_list]),
            "rho": np.array([RHOS.index(f.rho) for f in flags_list])}


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
    """n uniformly random (task, free cell, holding, goal) states: (pos, hold, obj, goal).
    (Some have hold = 0 on the object cell, which the env never produces; the targets are
    linear in phi, so the fit is exact either way.)"""
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


def reads(phi, W, fb_row, noise, prm, phase=None, n_objects=1):
    """Goal reads p and feedback reads g, (B, T+1) each; fb_row: (B,) read-out row of the
    feedback (0 = GOAL for a success or a rejected record, 1 + error type for a failure)."""
    sd = prm["sim_noise"]
    p = similarity(phi, W[0], sd * noise[:, 0], phase, n_objects)
    g = similarity(phi, W[fb_row][:, None, :], sd * noise[:, 1], phase, n_objects)
    return p, g


def feedback_alpha(W, fb_row, prm):
    """Convex weight of the feedback term (models/projection.py _blend_alpha with the
    instruction-feedback agreement of feedback_task_agreement): the cosine between the
    feedback's read-out and the GOAL read-out stands for cos(z_text, z_fb). (B,)"""
    unit = W / np.linalg.norm(W, axis=1, keepdims=True)
    cos = (unit[fb_row] * unit[0]).sum(-1)  # row-wise: identical whatever the batch size
    agree = 0.5 * (np.maximum(cos, 0.0) + 1.0)
    alpha = prm["alpha_feedback"] * (0.5 + 0.5 * np.clip(agree, 0.0, 1.0))
    return np.clip(alpha, prm["alpha_min"], prm["alpha_max"])


# ---- 2. keyframes -------------------------------------------------------------------------
def _z(x):
    sd = x.std()
    return (x - x.mean()) / (sd + 1e-8) if sd > 1e-8 else np.zeros_like(x)


def saliency_keyframes(s, max_frames):
    """Keyframe indices of a goal-similarity trace s (T,) (utils/train_utils.py get_keyframe):
    every frame if T <= max_frames; else both endpoints, then turning points of the trace
    (sign changes of its velocity) by descending saliency, then the most salient frames up to
    0.7 max_frames, then a coverage fill (distance to the nearest chosen frame x
    (1 + z(saliency))) up to max_frames, all at least max(1, T // (2 max_frames)) apart
    (the coverage fill spaces only its own picks). Saliency = 0.5 max(z(s), 0) + 0.3 z(|v|)
    + 0.2 z(|a|), v and a the first and second differences. Sorted indices."""
    s = np.asarray(s, float)
    n = len(s)
    if n <= max_frames:
        return np.arange(n)
    v = np.diff(s, prepend=s[0])
    a = np.diff(v, prepend=v[0])
    ws, wv, wa = SALIENCY_WEIGHTS
    score = ws * np.maximum(_z(s), 0.0) + wv * _z(np.abs(v)) + wa * _z(np.abs(a))
    turns = np.flatnonzero(np.diff(np.sign(v)) != 0) + 1
    min_dist = max(1, n // (2 * max_frames))
    kept = [0]

    def far(i):
        return min(abs(i - j) for j in kept) >= min_dist

    if far(n - 1):
        kept.append(n - 1)
    # descending score; equal scores: the later frame first (as the reversed ascending sort)
    for i in turns[np.argsort(score[turns], kind="stable")[::-1]]:
        if far(i):
            kept.append(int(i))
            if len(kept) >= max_frames:
                break
    if len(kept) < max_frames:
        for i in np.argsort(score, kind="stable")[::-1]:
            if far(i):
                kept.append(int(i))
                if len(kept) >= int(max_frames * SALIENT_FILL):
                    break
    if len(kept) < max_frames:
        chosen = np.array(sorted(set(kept)))
        free = np.ones(n, bool)
        free[chosen] = False
        while len(chosen) < max_frames and free.any():
            idx = np.flatnonzero(free)
            dist = np.abs(idx[:, None] - chosen[None, :]).min(1)
            pick = int(idx[np.argmax(dist * (1.0 + _z(score[idx])))])
            chosen = np.sort(np.append(chosen, pick))
            free[max(0, pick - min_dist + 1):min(n, pick + min_dist)] = False
        kept = chosen.tolist()
    return np.array(sorted(set(kept)))


def keyframe_weights(indices, n, half_window, floor):
    """kappa (n,): triangular windows 1 - |off| / (half_window + 1) around each keyframe
    (indices clipped into the episode, the max where windows overlap), raised to
    floor + (1 - floor) w and divided by the episode mean (train_lagea.py after
    keyframe_weights_from_indices)."""
    w = np.zeros(n)
    off = np.arange(-half_window, half_window + 1)
    j = np.clip(np.asarray(indices)[:, None] + off[None, :], 0, n - 1)
    np.maximum.at(w, j.ravel(), np.broadcast_to(1.0 - np.abs(off) / (half_window + 1),
                                                j.shape).ravel())
    kappa = floor + (1.0 - floor) * w
    return kappa / kappa.mean()


def gaussian_window(k, n_steps, prm):
    """LAGEA-SPEC's window: exp(-0.5 ((t-k)/sd)^2), at least ``spec_window_floor`` for
    t <= k: (B, n_steps)."""
    t = np.arange(n_steps)[None, :]
    w = np.exp(-0.5 * ((t - k[:, None]) / prm["spec_window_sd"]) ** 2)
    return np.where(t <= k[:, None], np.maximum(w, prm["spec_window_floor"]), w)


def feedback_weights(kind, p, length, refl_key, refl_valid, prm):
    """Per-transition feedback weights (B, T) of the official form by keyframe source:
    saliency keyframes of the post-step goal trace p_1..p_n (transition j's frame is the state
    it arrives in); the reflector's keyframe (state k -> transition k - 1; a rejected record
    -> uniform); uniform 1. Zero beyond each episode."""
    B, T1 = p.shape
    out = (np.arange(T1 - 1)[None, :] < length[:, None]).astype(float)  # uniform 1
    M, h, floor = prm["kf_max_frames"], prm["kf_half_window"], prm["kf_floor"]
    for b in np.flatnonzero(kind == KEYFRAMES.index("saliency")):
        n = int(length[b])
        out[b, :n] = keyframe_weights(saliency_keyframes(p[b, 1:n + 1], M), n, h, floor)
    for b in np.flatnonzero((kind == KEYFRAMES.index("reflector")) & refl_valid):
        n = int(length[b])
        out[b, :n] = keyframe_weights([min(max(int(refl_key[b]) - 1, 0), n - 1)], n, h, floor)
    return out


# ---- 3. the shaping terms ------------------------------------------------------------------
def goal_delta(p, prm):
    """Official goal term r_goal_t = tanh((gamma_fb p_{t+1} - p_t) / temp_goal): (B, T)."""
    return np.tanh((prm["gamma_fb"] * p[:, 1:] - p[:, :-1]) / prm["temp_goal"])


def fused_reward(r_goal, g, kappa, alpha, prm):
    """Official fused signal clip((1 - alpha) r_goal + alpha kappa tanh((0.99 g' - g) / 0.15),
    -1, 1): (B, T)."""
    r_fb = kappa * np.tanh((prm["gamma_fb"] * g[:, 1:] - g[:, :-1]) / prm["temp_fb"])
    a = alpha[:, None]
    return np.clip((1.0 - a) * r_goal + a * r_fb, -prm["fused_clip"], prm["fused_clip"])


# ---- 4. the coefficient --------------------------------------------------------------------
def rho_eff(sr_ema, pos_frac, prm):
    """Official failure-aware weight 0.05 + 0.94 (1 - max(SR_ema, pos_frac^2))."""
    progress = np.maximum(sr_ema, pos_frac ** prm["progress_power"])
    return prm["rho_min"] + (prm["rho_max"] - prm["rho_min"]) * (1.0 - progress)


def rho_spec(sr_ema, prm):
    """LAGEA-SPEC's coefficient 0.5 max(0.1, 1 - SR_ema)."""
    return prm["spec_rho_scale"] * np.maximum(prm["spec_rho_floor"], 1.0 - sr_ema)


def coefficient(c, sr_now, sr_before, pos_frac, prm):
    """The effective shaping weight per learner (B,): rho_eff (official adaptive), rho_static
    (official const), 0.05 (GOALSIM), 0.5 (GOALSIM-DELTA), the spec rho (LAGEA-SPEC, from the
    success EMA of the episodes before), 0 (SPARSE)."""
    form, rho = c["form"], c["rho"]
    official = form == FORMS.index("official")
    out = np.zeros(len(form))
    out = np.where(official & (rho == RHOS.index("adaptive")), rho_eff(sr_now, pos_frac, prm),
                   out)
    out = np.where(official & (rho == RHOS.index("const")), prm["rho_static"], out)
    out = np.where(form == FORMS.index("goal_level"), prm["goalsim_rho"], out)
    out = np.where(form == FORMS.index("goal_delta"), prm["spec_rho_scale"], out)
    return np.where(form == FORMS.index("spec"), rho_spec(sr_before, prm), out)


def episode_shaping(c, p, g, r_goal, kappa, alpha, coef, length, success, failed_fb, refl_valid,
                    refl_key, prm):
    """Per-step shaping rewards (B, T) of a batch of episodes (0 beyond each episode's end).

    c: codes(); p, g: goal / feedback reads (B, T+1); r_goal: goal_delta(p); kappa: feedback
    weights (B, T); alpha, coef: (B,); length: (B,) transitions n; success: (B,);
    failed_fb: (B,) failed episode with a failure reflection (LAGEA-SPEC's dg applies);
    refl_valid, refl_key: (B,) parsed reflection (LAGEA-SPEC's window and its no-shaping path).
    """
    B, T1 = p.shape
    steps = np.arange(T1 - 1)[None, :]
    inside = steps < length[:, None]
    form = c["form"][:, None]
    # official: rho_static clip(scale fused, +-post_clip) on every non-success transition
    scale = coef / prm["rho_static"]
    fused = fused_reward(r_goal, g, kappa, alpha, prm)
    not_success_step = ~(success[:, None] & (steps == length[:, None] - 1))
    official = prm["rho_static"] * np.clip(scale[:, None] * fused, -prm["post_clip"],
                                           prm["post_clip"]) * not_success_step
    # spec reading (LAGEA-SPEC; GOALSIM-DELTA is its goal term alone)
    dp = p[:, 1:] - p[:, :-1]
    dg = np.where(failed_fb[:, None], g[:, 1:] - g[:, :-1], 0.0)
    window = gaussian_window(refl_key, T1 - 1, prm)
    spec = coef[:, None] * np.clip(dp + window * dg, -prm["spec_clip"], prm["spec_clip"])
    spec_off = ~success & ~refl_valid  # a failed episode whose record was rejected: no shaping
    spec = np.where(spec_off[:, None], 0.0, spec)
    delta = coef[:, None] * np.clip(dp, -prm["spec_clip"], prm["spec_clip"])
    level = coef[:, None] * (2.0 * p[:, 1:] - 1.0)  # the cosine 2 pot01 - 1 of the next state
    r = np.select([form == FORMS.index("official"), form == FORMS.index("spec"),
                   form == FORMS.index("goal_delta"), form == FORMS.index("goal_level")],
                  [official, spec, delta, level], 0.0)
    return np.where(inside, r, 0.0)
