"""Part A: the two-mode mixture model, trained by forward KL (SFT) or by a reverse-KL policy
gradient (RL).

The "model" is a 1-D mixture q(y) = pi N(mu1, s1^2) + (1 - pi) N(mu2, s2^2) with parameters
theta = (logit pi, mu1, log s1, mu2, log s2). Component 1 plays the prior knowledge (task T'),
component 2 the target task T. The target distribution is
p(y) = 0.7 N(-3, 1) + 0.3 N(3, 0.6^2): the prior mode is nearly right at initialisation, the
target mode is wrong (mu2 = 0.5 instead of 3).

Every function works on a leading batch axis of runs (theta has shape (R, 5), samples
(R, n)), so that one call advances all seeds of a method together; each run draws its samples
from its own generator, so a run's numbers do not depend on which other runs share the batch.
"""

from __future__ import annotations

import numpy as np

LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)
N_PARAMS = 5
PRIOR_PARAMS = slice(0, 3)  # (logit pi, mu1, log s1): the "prior knowledge" coordinates


def constants(p: dict) -> dict:
    """Target mixture and initial model of one setting (spec defaults; `sep` and `kappa` vary).

    The target-task mode sits at prior_mean + sep (sep = 6 by default: modes at -3 and 3). The
    model's target component starts at target_mean - 2.5, i.e. at 0.5 by default.
    INFERRED (full profile only): for other separations the same 2.5 offset of mu2 is kept.
    """
    prior_mean = float(p.get("prior_mean", -3.0))
    sep = float(p.get("sep", 6.0))
    target_mean = prior_mean + sep
    return {
        "w_prior": float(p.get("w_prior", 0.7)),
        "prior_mean": prior_mean,
        "prior_sd": float(p.get("prior_sd", 1.0)),
        "target_mean": target_mean,
        "target_sd": float(p.get("target_sd", 0.6)),
        "init": np.array([
            np.log(0.7 / 0.3),                                   # logit pi, pi = 0.7
            prior_mean - 0.4,                                    # mu1 = -3.4
            0.0,                                                 # log s1, s1 = 1
            target_mean - float(p.get("init_offset", 2.5)),      # mu2 = 0.5
            np.log(0.6),                                         # log s2, s2 = 0.6
        ]),
    }


def log_normal(y, mu, sd):
    """log N(y; mu, sd^2), broadcasting."""
    return -0.5 * ((y - mu) / sd) ** 2 - np.log(sd) - LOG_SQRT_2PI


def unpack(theta: np.ndarray):
    """(pi, mu1, s1, mu2, s2), each of shape theta.shape[:-1] + (1,) to broadcast over samples."""
    t = np.asarray(theta, dtype=float)
    pi = 1.0 / (1.0 + np.exp(-t[..., 0:1]))
    return pi, t[..., 1:2], np.exp(t[..., 2:3]), t[..., 3:4], np.exp(t[..., 4:5])


def component_densities(theta, y):
    """pi N1(y), (1 - pi) N2(y) and q(y) = their sum, for y of shape (R, n)."""
    pi, mu1, s1, mu2, s2 = unpack(theta)
    w1 = pi * np.exp(log_normal(y, mu1, s1))
    w2 = (1.0 - pi) * np.exp(log_normal(y, mu2, s2))
    return w1, w2, w1 + w2


def log_q(theta, y):
    w1, w2, q = component_densities(theta, y)
    return np.log(q)


def grad_log_q(theta, y) -> np.ndarray:
    """d log q(y) / d theta, shape (R, n, 5), from the spec's formulas.

    d/d logit pi = pi (1 - pi) (N1 - N2) / q;  d/d mu_k = rho_k (y - mu_k) / s_k^2;
    d/d log s_k = rho_k ((y - mu_k)^2 / s_k^2 - 1), with responsibilities rho_1 = pi N1 / q.
    """
    pi, mu1, s1, mu2, s2 = unpack(theta)
    n1 = np.exp(log_normal(y, mu1, s1))
    n2 = np.exp(log_normal(y, mu2, s2))
    q = pi * n1 + (1.0 - pi) * n2
    rho1 = pi * n1 / q
    rho2 = 1.0 - rho1
    z1, z2 = (y - mu1) / s1, (y - mu2) / s2
    return np.stack([
        pi * (1.0 - pi) * (n1 - n2) / q,
        rho1 * z1 / s1,
        rho1 * (z1 ** 2 - 1.0),
        rho2 * z2 / s2,
        rho2 * (z2 ** 2 - 1.0),
    ], axis=-1)


def prior_scaling(kappa: float) -> np.ndarray:
    """Per-coordinate step multipliers: kappa on (logit pi, mu1, log s1), 1 on the target mode.

    "Prior knowledge lives in many pretrained weights and moves slowly"; the same kappa is
    used by every method, so it cannot favour either.
    """
    scale = np.ones(N_PARAMS)
    scale[PRIOR_PARAMS] = kappa
    return scale


# ---------------------------------------------------------------------------------------------
# the three training signals: each returns the ascent direction (R, 5) of one iteration
# ---------------------------------------------------------------------------------------------
def sft_direction(theta, c: dict, normals: np.ndarray) -> np.ndarray:
    """SFT = forward KL on off-policy target-task data: y ~ N(3, 0.6^2), ascend mean grad log q.

    The data never contain the prior mode, so maximising their likelihood pulls mass (pi)
    towards the component that explains them: the prior mode is forgotten.
    """
    y = c["target_mean"] + c["target_sd"] * normals
    return grad_log_q(theta, y).mean(axis=1)


def replay_direction(theta, c: dict, normals: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """SFT with replay (reference): forward KL on samples of the full target p, prior mode
    included (component chosen with probability 0.7 / 0.3 by a uniform draw)."""
    prior = uniforms < c["w_prior"]
    mean = np.where(prior, c["prior_mean"], c["target_mean"])
    sd = np.where(prior, c["prior_sd"], c["target_sd"])
    y = mean + sd * normals
    return grad_log_q(theta, y).mean(axis=1)


def rl_direction(theta, c: dict, normals: np.ndarray) -> np.ndarray:
    """RL = on-policy reverse-KL policy gradient with GRPO-style normalised advantages.

    Samples come from the model's own target-task behaviour N(mu2, s2^2). The reward
    r(y) = log N(y; 3, 0.6) - log[(1 - pi) N(y; mu2, s2)] is the reverse-KL reward towards the
    target mode; A = (r - mean r) / std r over the group. The score is weighted by the
    importance ratio q(y) / ((1 - pi) N2(y)) (the samples come from one component of the
    mixture), exactly as the spec writes it. That weight is 1 / rho_2: large for the rare
    samples that land where the prior component dominates, so the prior coordinates receive
    occasional large kicks while the target component still overlaps the prior mode
    ("overlap-gated drift"). The reward is a constant of the step (no gradient
    flows through it), as in policy-gradient training.
    """
    pi, mu1, s1, mu2, s2 = unpack(theta)
    y = mu2 + s2 * normals
    w1, w2, q = component_densities(theta, y)
    r = log_normal(y, c["target_mean"], c["target_sd"]) - np.log(w2)
    # (the 1e-12 only guards the degenerate group whose rewards are all equal)
    adv = (r - r.mean(axis=1, keepdims=True)) / (r.std(axis=1, keepdims=True) + 1e-12)
    ratio = q / w2
    return ((adv * ratio)[..., None] * grad_log_q(theta, y)).mean(axis=1)


# ---------------------------------------------------------------------------------------------
# accuracies (overlap of matching weighted components) and training loop
# ---------------------------------------------------------------------------------------------
def grid(c: dict, points: int = 2000, lo: float = -9.0, hi: float = 9.0) -> np.ndarray:
    """The integration grid (2000 points over [-9, 9]; widened if a setting's modes lie beyond)."""
    lo = min(lo, c["prior_mean"] - 6 * c["prior_sd"])
    hi = max(hi, c["target_mean"] + 6 * c["target_sd"])
    return np.linspace(lo, hi, points)


def accuracies(theta, c: dict, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Acc(T') and Acc(T) per run: overlap of the matching weighted components, normalised.

    Acc(T') = int min(0.7 N(y; -3, 1), pi N(y; mu1, s1)) dy / 0.7, and likewise for T with
    weight 0.3; trapezoid rule on the grid ys.
    """
    theta = np.atleast_2d(theta)
    w1, w2, _ = component_densities(theta, ys[None, :])
    w_t = 1.0 - c["w_prior"]
    p1 = c["w_prior"] * np.exp(log_normal(ys, c["prior_mean"], c["prior_sd"]))
    p2 = w_t * np.exp(log_normal(ys, c["target_mean"], c["target_sd"]))
    acc_old = np.trapezoid(np.minimum(p1[None, :], w1), ys, axis=1) / c["w_prior"]
    acc_new = np.trapezoid(np.minimum(p2[None, :], w2), ys, axis=1) / w_t
    return acc_old, acc_new


def kl_to_init(theta, theta0, ys: np.ndarray) -> np.ndarray:
    """KL(q_theta || q_theta0) per run on the grid (distribution shift from the initial model)."""
    theta = np.atleast_2d(theta)
    lq = log_q(theta, ys[None, :])
    lq0 = log_q(np.atleast_2d(theta0), ys[None, :])
    return np.trapezoid(np.exp(lq) * (lq - lq0), ys, axis=1)


def target_density(c: dict, ys: np.ndarray) -> np.ndarray:
    return (c["w_prior"] * np.exp(log_normal(ys, c["prior_mean"], c["prior_sd"]))
            + (1 - c["w_prior"]) * np.exp(log_normal(ys, c["target_mean"], c["target_sd"])))


def train(method: str, c: dict, rngs: list, iterations: int, lr: float, kappa: float,
          n_samples: int, log_steps: set) -> dict[int, np.ndarray]:
    """Train one method for the runs whose generators are `rngs`; theta at every logged step.

    Gradient ascent theta <- theta + lr * scale * direction with scale = kappa on the prior
    coordinates. Returns {step: theta (R, 5)} for step in log_steps (step 0 = initial model).
    """
    R = len(rngs)
    theta = np.tile(c["init"], (R, 1))
    scale = prior_scaling(kappa)
    logged = {0: theta.copy()} if 0 in log_steps else {}
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
        theta = theta + lr * scale * d
        if it in log_steps:
            logged[it] = theta.copy()
    return logged
