"""Part A: the two-mode mixture model, trained by forward KL (SFT) or by a reverse-KL policy
gradient (RL), as in the authors' simulation (princeton-pli/retaining-by-doing,
simulation/settings.py `TwoModeSetting` and simulation/run.py `fit_forward_kl`,
`fit_reinforce`, `setup_variables`).

The "model" is a 1-D mixture q(y) = pi N(mu1, s1^2) + (1 - pi) N(mu2, s2^2). Component 1 plays
the prior knowledge (task T'), component 2 the target task T. The official target is
p(y) = 0.75 N(-3, 1) + 0.25 N(3.5, 0.7^2) and the initial model (pi, mu1, s1, mu2, s2) =
(0.75, -3.5, 1, 0.5, 0.7): the prior mode nearly right, the target mode wrong.

Two parametrisations (`param`):
- "direct" (official): gradient steps on theta = (pi, mu1, s1, mu2, s2) themselves; after each
  step pi is clipped to [1e-3, 1 - 1e-3] and s1, s2 to >= 1e-3.
- "logit" (the spec's reading, kept for the `mixture-spec` variant): theta = (logit pi, mu1,
  log s1, mu2, log s2), no clipping needed.
In both, the prior coordinates (the first three) move `slow` times as fast as the target ones
("prior knowledge lives in many pretrained weights and moves slowly"; the same factor for every
method, so it cannot favour either).

Every function works on a leading batch axis of runs (theta has shape (R, 5), samples
(R, n)), so one call advances all seeds of a method together; each run draws from its own
generator, so a run's numbers do not depend on which other runs share the batch.
"""

from __future__ import annotations

import numpy as np

LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)
N_PARAMS = 5
PRIOR_PARAMS = slice(0, 3)   # (pi, mu1, s1) or (logit pi, mu1, log s1): the prior coordinates
NATURAL_NAMES = ("pi", "mu1", "s1", "mu2", "s2")
PARAMS = ("direct", "logit")
ADVANTAGES = ("raw", "grpo")
TINY = 1e-12                 # the official guard added to q, q2 and the reward's argument
PI_MIN, SD_MIN = 1e-3, 1e-3  # official clipping of the direct parametrisation


def constants(p: dict) -> dict:
    """Target mixture, initial model and update rule of one setting, from its params
    (params.mixture, overridden by the setting's own keys)."""
    c = {k: float(p[k]) for k in ("w_prior", "prior_mean", "prior_sd", "target_mean",
                                  "target_sd", "slow_factor", "reward_beta")}
    c["param"], c["advantage"] = p["param"], p["advantage"]
    if c["param"] not in PARAMS:
        raise ValueError(f"mixture param must be one of {PARAMS}, got {c['param']!r}")
    if c["advantage"] not in ADVANTAGES:
        raise ValueError(f"mixture advantage must be one of {ADVANTAGES}, got "
                         f"{c['advantage']!r}")
    natural = np.array([p["init_pi"], p["init_mu1"], p["init_s1"], p["init_mu2"],
                        p["init_s2"]], dtype=float)
    c["init"] = to_theta(natural, c["param"])
    lo, hi, points = p["grid"]
    if not lo < hi or int(points) < 2:
        raise ValueError(f"mixture grid must be [lo < hi, points >= 2], got {p['grid']}")
    c["grid"] = (float(lo), float(hi), int(points))
    return c


def to_theta(natural: np.ndarray, param: str) -> np.ndarray:
    """(pi, mu1, s1, mu2, s2) -> theta of the parametrisation."""
    n = np.array(natural, dtype=float)
    if param == "direct":
        return n
    pi = n[..., 0]
    return np.stack([np.log(pi / (1 - pi)), n[..., 1], np.log(n[..., 2]), n[..., 3],
                     np.log(n[..., 4])], axis=-1)


def natural(theta: np.ndarray, param: str) -> np.ndarray:
    """theta -> (pi, mu1, s1, mu2, s2), same leading shape."""
    t = np.array(theta, dtype=float)
    if param == "direct":
        return t
    return np.stack([1.0 / (1.0 + np.exp(-t[..., 0])), t[..., 1], np.exp(t[..., 2]),
                     t[..., 3], np.exp(t[..., 4])], axis=-1)


def log_normal(y, mu, sd):
    """log N(y; mu, sd^2), broadcasting."""
    return -0.5 * ((y - mu) / sd) ** 2 - np.log(sd) - LOG_SQRT_2PI


def _columns(theta, param):
    """(pi, mu1, s1, mu2, s2), each of shape theta.shape[:-1] + (1,) to broadcast over samples."""
    n = natural(np.atleast_2d(theta), param)
    return tuple(n[..., k:k + 1] for k in range(N_PARAMS))


def component_densities(theta, y, param: str):
    """pi N1(y), (1 - pi) N2(y) and q(y) = their sum, for y of shape (R, n)."""
    pi, mu1, s1, mu2, s2 = _columns(theta, param)
    w1 = pi * np.exp(log_normal(y, mu1, s1))
    w2 = (1.0 - pi) * np.exp(log_normal(y, mu2, s2))
    return w1, w2, w1 + w2


def log_q(theta, y, param: str):
    return np.log(component_densities(theta, y, param)[2])


def grad_log_q(theta, y, param: str) -> np.ndarray:
    """d log q(y) / d theta, shape (R, n, 5), with responsibilities rho_1 = pi N1 / q,
    rho_2 = (1 - pi) N2 / q.

    direct: d/dpi = (N1 - N2) / q;  d/dmu_k = rho_k (y - mu_k) / s_k^2;
            d/ds_k = rho_k (-1 / s_k + (y - mu_k)^2 / s_k^3)   (official; q gets + 1e-12)
    logit:  d/dlogit pi = pi (1 - pi) (N1 - N2) / q;  d/dlog s_k = rho_k ((y - mu_k)^2 / s_k^2 - 1)
    """
    pi, mu1, s1, mu2, s2 = _columns(theta, param)
    n1 = np.exp(log_normal(y, mu1, s1))
    n2 = np.exp(log_normal(y, mu2, s2))
    q = pi * n1 + (1.0 - pi) * n2
    if param == "direct":
        q = q + TINY
    rho1, rho2 = pi * n1 / q, (1.0 - pi) * n2 / q
    z1, z2 = (y - mu1) / s1, (y - mu2) / s2
    if param == "direct":
        cols = [(n1 - n2) / q, rho1 * z1 / s1, rho1 * (z1 ** 2 - 1.0) / s1,
                rho2 * z2 / s2, rho2 * (z2 ** 2 - 1.0) / s2]
    else:
        cols = [pi * (1.0 - pi) * (n1 - n2) / q, rho1 * z1 / s1, rho1 * (z1 ** 2 - 1.0),
                rho2 * z2 / s2, rho2 * (z2 ** 2 - 1.0)]
    return np.stack(cols, axis=-1)


def step_scaling(slow: float) -> np.ndarray:
    """Per-coordinate step multipliers: `slow` on the prior coordinates, 1 on the target mode."""
    scale = np.ones(N_PARAMS)
    scale[PRIOR_PARAMS] = slow
    return scale


def project(theta: np.ndarray, param: str) -> np.ndarray:
    """The official clipping after each step of the direct parametrisation (none for logit)."""
    if param != "direct":
        return theta
    out = theta.copy()
    out[:, 0] = np.clip(out[:, 0], PI_MIN, 1.0 - PI_MIN)
    out[:, 2] = np.maximum(out[:, 2], SD_MIN)
    out[:, 4] = np.maximum(out[:, 4], SD_MIN)
    return out


# ---------------------------------------------------------------------------------------------
# the three training signals: each returns the ascent direction (R, 5) of one iteration
# ---------------------------------------------------------------------------------------------
def sft_direction(theta, c: dict, normals: np.ndarray) -> np.ndarray:
    """SFT = forward KL on off-policy target-task data: y ~ N(target_mean, target_sd^2),
    ascend mean grad log q (run.py `fit_forward_kl`, `sample_p_right`).

    The data never contain the prior mode, so maximising their likelihood pulls mass (pi)
    towards the component that explains them: the prior mode is forgotten.
    """
    y = c["target_mean"] + c["target_sd"] * normals
    return grad_log_q(theta, y, c["param"]).mean(axis=1)


def replay_direction(theta, c: dict, normals: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """SFT with replay (the spec's reference, not in the official code): forward KL on samples
    of the full target p, prior mode included (component chosen by a uniform draw)."""
    prior = uniforms < c["w_prior"]
    mean = np.where(prior, c["prior_mean"], c["target_mean"])
    sd = np.where(prior, c["prior_sd"], c["target_sd"])
    y = mean + sd * normals
    return grad_log_q(theta, y, c["param"]).mean(axis=1)


def rl_reward(theta, c: dict, y: np.ndarray) -> np.ndarray:
    """The reverse-KL reward towards the target mode (run.py `fit_reinforce`):
    r(y) = log(N(y; target_mean, target_sd) / ((1 - pi) N(y; mu2, s2)) / beta_r + 1e-12),
    i.e. log p2 - log q2 + log(1 / beta_r) with beta_r = REINFORCE_BETA = 0.1 (a constant
    shift; it adds variance to the raw-reward estimate, not bias)."""
    _, w2, _ = component_densities(theta, y, c["param"])
    p2 = np.exp(log_normal(y, c["target_mean"], c["target_sd"]))
    return np.log(p2 / w2 / c["reward_beta"] + TINY)


def rl_direction(theta, c: dict, normals: np.ndarray) -> np.ndarray:
    """RL = on-policy reverse-KL policy gradient.

    Samples come from the model's own target-task behaviour N(mu2, s2^2). The score is weighted
    by the importance ratio q(y) / ((1 - pi) N2(y)) (the samples come from one component of the
    mixture), and multiplied by the advantage:
    - "raw" (official, `fit_reinforce`'s code): the reward itself, g = mean(r w score). The
      function's docstring says "centred & st-dev-normalised (GRPO style)", its code does not
      normalise; we follow the code.
    - "grpo" (the spec's reading, kept for `mixture-spec`): A = (r - mean r) / std r.
    The reward is a constant of the step (no gradient flows through it), as in policy-gradient
    training.
    """
    pi, mu1, s1, mu2, s2 = _columns(theta, c["param"])
    y = mu2 + s2 * normals
    _, w2, q = component_densities(theta, y, c["param"])
    r = rl_reward(theta, c, y)
    if c["advantage"] == "grpo":
        # (the 1e-12 only guards the degenerate group whose rewards are all equal)
        r = (r - r.mean(axis=1, keepdims=True)) / (r.std(axis=1, keepdims=True) + TINY)
    if c["param"] == "direct":
        ratio = (q + TINY) / (w2 + TINY)
    else:
        ratio = q / w2
    return ((r * ratio)[..., None] * grad_log_q(theta, y, c["param"])).mean(axis=1)


# ---------------------------------------------------------------------------------------------
# accuracies (overlap of matching weighted components) and training loop
# ---------------------------------------------------------------------------------------------
def grid(c: dict) -> np.ndarray:
    """The integration grid (official: 500 points over [-8, 8])."""
    lo, hi, points = c["grid"]
    return np.linspace(lo, hi, points)


def target_components(c: dict, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The weighted target components w_k N(y; m_k, s_k) on the grid."""
    p1 = c["w_prior"] * np.exp(log_normal(ys, c["prior_mean"], c["prior_sd"]))
    p2 = (1.0 - c["w_prior"]) * np.exp(log_normal(ys, c["target_mean"], c["target_sd"]))
    return p1, p2


def accuracies(theta, c: dict, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Acc(T') and Acc(T) per run: overlap of the matching weighted components, normalised by
    the component's own area on the grid (run.py `setup_variables`):
    Acc(T') = trapz(min(p1, pi N(mu1, s1))) / trapz(p1), and likewise for T."""
    w1, w2, _ = component_densities(np.atleast_2d(theta), ys[None, :], c["param"])
    p1, p2 = target_components(c, ys)
    acc_old = np.trapezoid(np.minimum(p1[None, :], w1), ys, axis=1) / np.trapezoid(p1, ys)
    acc_new = np.trapezoid(np.minimum(p2[None, :], w2), ys, axis=1) / np.trapezoid(p2, ys)
    return acc_old, acc_new


def kl_to_init(theta, theta0, c: dict, ys: np.ndarray) -> np.ndarray:
    """KL(q_theta || q_theta0) per run on the grid (distribution shift from the initial model)."""
    lq = log_q(np.atleast_2d(theta), ys[None, :], c["param"])
    lq0 = log_q(np.atleast_2d(theta0), ys[None, :], c["param"])
    return np.trapezoid(np.exp(lq) * (lq - lq0), ys, axis=1)


def target_density(c: dict, ys: np.ndarray) -> np.ndarray:
    p1, p2 = target_components(c, ys)
    return p1 + p2


def train(method: str, c: dict, rngs: list, iterations: int, lr: float, n_samples: int,
          log_steps: set) -> tuple[dict[int, np.ndarray], np.ndarray, np.ndarray]:
    """Train one method for the runs whose generators are `rngs`.

    Gradient ascent theta <- project(theta + lr * scale * direction) with scale = slow_factor
    on the prior coordinates. Returns ({step: theta (R, 5)} for step in log_steps (step 0 =
    initial model), Acc(T') and Acc(T) at every iteration, shape (iterations + 1, R)): the
    official reading point (the first iteration whose gain reaches a threshold) is checked at
    every iteration, not only at the logged ones.
    """
    R = len(rngs)
    theta = np.tile(c["init"], (R, 1))
    scale = step_scaling(c["slow_factor"])
    ys = grid(c)
    logged = {0: theta.copy()} if 0 in log_steps else {}
    old = np.empty((iterations + 1, R))
    new = np.empty((iterations + 1, R))
    old[0], new[0] = accuracies(theta, c, ys)
    for it in range(1, iterations + 1):
        normals = np.stack([g.standard_normal(n_samples) for g in rngs])
        if method == "sft":
            d = sft_direction(theta, c, normals)
        elif method == "rl":
            d = rl_direction(theta, c, normals)
        elif method == "sft-replay":
            uniforms = np.stack([g.random(n_samples) for g in rngs])
            d = replay_direction(theta, c, normals, uniforms)
        else:
            raise ValueError(f"method {method!r} does not run in the mixture setting")
        theta = project(theta + lr * scale * d, c["param"])
        old[it], new[it] = accuracies(theta, c, ys)
        if it in log_steps:
            logged[it] = theta.copy()
    return logged, old, new


def gain_reading(old: np.ndarray, new: np.ndarray, threshold: float) -> dict[str, np.ndarray]:
    """The official reading point per run (run.py `plot_overlaid_iterations`, `--gain_thresholds
    0.9`): the first iteration whose gain Acc(T) - Acc_0(T) reaches `threshold`, and the drop
    Acc_0(T') - Acc(T') there. A run that never reaches it is read at the last iteration, as
    the official plot does, and flagged censored (its true matched drop is unknown)."""
    gain = new - new[:1]
    hit = gain >= threshold
    reached = hit[1:].any(axis=0)
    first = np.where(reached, hit[1:].argmax(axis=0) + 1, old.shape[0] - 1)
    cols = np.arange(old.shape[1])
    return {"iter": np.where(reached, first, np.nan).astype(float),
            "drop": old[0] - old[first, cols],
            "old_acc": old[first, cols], "new_acc": new[first, cols],
            "censored": (~reached).astype(float)}
