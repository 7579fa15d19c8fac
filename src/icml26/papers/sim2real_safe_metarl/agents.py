"""Deployment on a "real" system: the latent-context posterior, the uncertainty-driven risk
level, the CVaR option choice of PROPOSED, and the five baselines. Reads top to bottom.

1. Context posterior (stand-in for PEARL's product-of-Gaussians encoder). Prior
   N(0.8, 0.15^2) on mu. During hard braking every step gives an observation y, modelled as
   y = min(6, 7 mu) + noise; each y contributes a Gaussian factor on mu with mean y / 7 and
   sd 0.5 / 7 (at most 20 per episode). The product of Gaussians is closed form: precisions
   add, means average by precision. The posterior persists across deployment episodes.
   (As the spec states it, a saturated observation y ~ 6 of a high-friction road still
   counts as mu ~ 6/7, so mu_hat saturates near 0.857 on such roads.)
2. Estimation-accuracy signal (INFERRED). Before each update the residual
   r_k = y_k - min(6, 7 mu_hat) is recorded; RMSE is taken over the last 40 residuals (ratio
   1, i.e. "as the model predicts", before any residual exists). Then
   u = sd * max(1, RMSE / 0.5) + 0.15 * max(0, RMSE / 0.5 - 1): unmodelled dynamics (the
   delayed first braking step of REAL-HARD) inflate the residuals and therefore u.
3. Risk level (INFERRED): alpha = clip(1 - u / 0.15, 0.05, 1). Right after deployment
   sd = 0.15, so alpha = 0.05 (most risk averse); it relaxes as the posterior tightens.
4. Decision per episode:
       w_b = N(mu_b; mu_hat, sd^2 + 0.05^2), normalised      (posterior over context bins)
       P(m) = sum_b w_b P_c(mu_b, m);  R(m) = sum_b w_b mean Z_r(mu_b, m)
       m* = argmax_m R(m) - lambda * min(1, P(m) / alpha),  lambda = 10 (INFERRED)
   min(1, P / alpha) is the CVaR at level alpha of the Bernoulli crash cost.

Baselines use the same simulator, critic and controller and differ only in the bin weights
and the risk level:
- DR (domain randomisation): uniform weights over all bins (the training distribution),
  alpha = 1; context-free.
- ROB (robust safe RL): only the lowest bin, alpha = 0.05; context-free worst case.
- CTX-NEUTRAL (PEARL-style point estimate): the bin nearest mu_hat, alpha = 1.
- CTX-NEUTRAL-MIX: posterior weights, alpha = 1 (isolates the risk adaptation).
- CTX-AVERSE: posterior weights, alpha = 0.05 always.

Full profile (``deploy(level="step")``): the same weights and risk levels, but the margin is
re-chosen every 0.5 s from the tabular (gap, speed, bin, margin) critic at the car's current
cell (``step_chooser``), and the posterior may be the learned encoder's (``EncoderPosterior``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import braking
from . import critic as critic_mod

#          method            bin weights   risk level ("adaptive" or fixed alpha)
RULES = {
    "PROPOSED":        ("posterior", "adaptive"),
    "DR":              ("uniform",   1.0),
    "ROB":             ("lowest",    "min"),
    "CTX-NEUTRAL":     ("nearest",   1.0),
    "CTX-NEUTRAL-MIX": ("posterior", 1.0),
    "CTX-AVERSE":      ("posterior", "min"),
}


@dataclass
class AgentParams:
    prior_mean: float = 0.8
    prior_sd: float = 0.15
    obs_model_sd: float = 0.5     # sd of one observation in the posterior's model (m/s^2)
    max_obs: int = 20             # observations used per episode
    rmse_window: int = 40
    u_scale: float = 0.15         # alpha = clip(1 - u / u_scale, alpha_min, 1)
    residual_weight: float = 0.15  # u's residual term
    alpha_min: float = 0.05
    bin_kernel_sd: float = 0.05
    lam: float = 10.0


# --------------------------------------------------------------------------------------------
# 1-3: posterior, accuracy signal, risk level (vectorised over B parallel deployments)
# --------------------------------------------------------------------------------------------
class ContextPosterior:
    """Gaussian posterior over mu per deployment plus the residual window of the last K."""

    def __init__(self, n: int, prm: AgentParams):
        self.prm = prm
        self.mean = np.full(n, prm.prior_mean)
        self.precision = np.full(n, 1.0 / prm.prior_sd ** 2)
        self.residuals = np.full((n, prm.rmse_window), np.nan)   # ring buffer
        self.count = np.zeros(n, int)

    @property
    def sd(self) -> np.ndarray:
        return 1.0 / np.sqrt(self.precision)

    def update(self, obs: np.ndarray) -> None:
        """Absorb one episode's observations (B, max_obs), NaN = no observation."""
        prm = self.prm
        factor_prec = (braking.FRICTION_DECEL / prm.obs_model_sd) ** 2   # sd 0.5/7 on mu
        rows = np.arange(len(self.mean))
        for k in range(obs.shape[1]):
            y = obs[:, k]
            has = np.isfinite(y)
            if not has.any():
                break
            # residual against the current estimate, recorded BEFORE the update
            pred = np.minimum(braking.BRAKE_CMD, braking.FRICTION_DECEL * self.mean)
            slot = self.count % prm.rmse_window
            self.residuals[rows[has], slot[has]] = (y - pred)[has]
            self.count += has
            # product of Gaussians: factor mean y / 7, precision (7 / 0.5)^2
            new_prec = self.precision + factor_prec
            new_mean = (self.precision * self.mean
                        + factor_prec * y / braking.FRICTION_DECEL) / new_prec
            self.mean = np.where(has, new_mean, self.mean)
            self.precision = np.where(has, new_prec, self.precision)

    def rmse_ratio(self) -> np.ndarray:
        """RMSE / 0.5 over the last window of residuals (1 when there are none yet)."""
        n = np.minimum(self.count, self.prm.rmse_window)
        sq = np.nansum(self.residuals ** 2, axis=1) / np.maximum(n, 1)
        return np.where(n > 0, np.sqrt(sq) / self.prm.obs_model_sd, 1.0)

    def uncertainty(self) -> np.ndarray:
        """u = sd * max(1, RMSE/0.5) + 0.15 * max(0, RMSE/0.5 - 1)."""
        ratio = self.rmse_ratio()
        return (self.sd * np.maximum(1.0, ratio)
                + self.prm.residual_weight * np.maximum(0.0, ratio - 1.0))


class EncoderPosterior(ContextPosterior):
    """Full profile: the learned PEARL-style posterior. Each observation y goes through the
    MLP factor network (``encoder.factors``), which returns a Gaussian factor (mean, precision)
    on mu; the posterior is the prior times the product of all factors so far (precisions add,
    means average by precision), persisting across episodes as in the closed form. Residuals
    and the accuracy signal are computed exactly as in ``ContextPosterior``."""

    def __init__(self, n: int, prm: AgentParams, weights: dict):
        super().__init__(n, prm)
        self.weights = weights

    def update(self, obs: np.ndarray) -> None:
        from . import encoder

        prm = self.prm
        rows = np.arange(len(self.mean))
        f_mean, f_prec = encoder.factors(self.weights, obs)
        for k in range(obs.shape[1]):
            has = np.isfinite(obs[:, k])
            if not has.any():
                break
            pred = np.minimum(braking.BRAKE_CMD, braking.FRICTION_DECEL * self.mean)
            slot = self.count % prm.rmse_window
            self.residuals[rows[has], slot[has]] = (obs[:, k] - pred)[has]
            self.count += has
            new_prec = self.precision + f_prec[:, k]
            new_mean = (self.precision * self.mean + f_prec[:, k] * f_mean[:, k]) / new_prec
            self.mean = np.where(has, new_mean, self.mean)
            self.precision = np.where(has, new_prec, self.precision)


def risk_level(u: np.ndarray, prm: AgentParams) -> np.ndarray:
    return np.clip(1.0 - u / prm.u_scale, prm.alpha_min, 1.0)


# --------------------------------------------------------------------------------------------
# 4: the option choice
# --------------------------------------------------------------------------------------------
def bin_weights(rule: str, bins: np.ndarray, mu_hat: np.ndarray, sd: np.ndarray,
                prm: AgentParams) -> np.ndarray:
    """(B, n_bins) weights of the context bins under one weighting rule."""
    n = len(mu_hat)
    if rule == "posterior":
        var = sd[:, None] ** 2 + prm.bin_kernel_sd ** 2
        logw = -0.5 * (bins[None, :] - mu_hat[:, None]) ** 2 / var   # common normaliser
        w = np.exp(logw - logw.max(axis=1, keepdims=True))
        return w / w.sum(axis=1, keepdims=True)
    w = np.zeros((n, len(bins)))
    if rule == "uniform":
        w[:] = 1.0 / len(bins)
    elif rule == "lowest":
        w[:, int(np.argmin(bins))] = 1.0
    elif rule == "nearest":
        w[np.arange(n), np.argmin(np.abs(bins[None, :] - mu_hat[:, None]), axis=1)] = 1.0
    else:
        raise ValueError(f"unknown weighting rule {rule!r}")
    return w


def choose_margin(weights: np.ndarray, alpha: np.ndarray, critic: dict,
                  prm: AgentParams) -> np.ndarray:
    """Index of m* = argmax R(m) - lambda * min(1, P(m) / alpha) per row (ties: smallest m)."""
    P = weights @ critic["crash_prob"]            # (B, M) crash probability
    R = weights @ critic["mean_return"]           # (B, M) expected return
    cvar_cost = np.minimum(1.0, P / alpha[:, None])
    return np.argmax(R - prm.lam * cvar_cost, axis=1)


def decide(methods, bins, margins, critic, post: ContextPosterior, prm: AgentParams):
    """Margin and alpha of every row, each row following its own method's rule."""
    weights, alpha = weights_and_alpha(methods, bins, post, prm)
    idx = choose_margin(weights, alpha, critic, prm)
    return np.asarray(margins, float)[idx], alpha


def weights_and_alpha(methods, bins, post: ContextPosterior, prm: AgentParams):
    """(B, n_bins) bin weights and (B,) risk levels, each row following its method's rule."""
    methods = np.asarray(methods)
    mu_hat, sd = post.mean, post.sd
    adaptive_alpha = risk_level(post.uncertainty(), prm)
    alpha = np.ones(len(methods))
    weights = np.zeros((len(methods), len(bins)))
    for name, (rule, risk) in RULES.items():
        rows = methods == name
        if not rows.any():
            continue
        weights[rows] = bin_weights(rule, bins, mu_hat[rows], sd[rows], prm)
        if risk == "adaptive":
            alpha[rows] = adaptive_alpha[rows]
        elif risk == "min":
            alpha[rows] = prm.alpha_min
        else:
            alpha[rows] = float(risk)
    return weights, alpha


def step_chooser(weights, alpha, margins, step_critic: dict, prm: AgentParams):
    """Step level: ``choose(d, v)`` for ``braking.rollout``. At the current (gap, speed) cell
    of each row, m* = argmax_m R(g, s, m) - lambda * min(1, P(g, s, m) / alpha), with
    P = sum_b w_b P_c(g, s, mu_b, m) and R = sum_b w_b mean Z_r(g, s, mu_b, m) (the option
    rule on the tabular critic's row of that cell)."""
    margins = np.asarray(margins, float)

    def choose(d, v):
        g = critic_mod.cell_index(d, step_critic["gap_edges"])
        s = critic_mod.cell_index(v, step_critic["speed_edges"])
        P = np.einsum("ib,ibm->im", weights, step_critic["crash_prob"][g, s])
        R = np.einsum("ib,ibm->im", weights, step_critic["mean_return"][g, s])
        cvar_cost = np.minimum(1.0, P / alpha[:, None])
        return margins[np.argmax(R - prm.lam * cvar_cost, axis=1)]

    return choose


# --------------------------------------------------------------------------------------------
# the deployment loop: n_episodes consecutive episodes on the real system
# --------------------------------------------------------------------------------------------
def deploy(methods, mu_real, p_real, noise_of_episode, n_episodes: int, bins, margins,
           critic: dict, prm: AgentParams, acc_sd: float, obs_sd: float,
           level: str = "option", encoder: dict | None = None, every: int = 5) -> dict:
    """Deploy B agents in parallel; ``noise_of_episode(e)`` gives the batch's Noise of episode e.

    Returns (B, n_episodes) arrays: crash, time_to_stop (NaN on crashes), margin, alpha,
    mu_hat and sd (the posterior at decision time, before the episode).

    ``level="option"``: one margin per episode from the option critic (smoke, default).
    ``level="step"`` (full): ``critic`` is the tabular (gap, speed, bin, margin) critic and the
    margin is re-chosen every ``every`` steps from the current gap and speed; ``margin`` is
    then the margin in force when braking began. With ``encoder`` (the learned MLP factor
    network's weights) the context posterior is the learned product of Gaussians
    (``EncoderPosterior``) instead of the closed-form one.
    """
    bins = np.asarray(bins, float)
    B = len(methods)
    post = ContextPosterior(B, prm) if encoder is None else EncoderPosterior(B, prm, encoder)
    out = {k: np.zeros((B, n_episodes)) for k in
           ("crash", "time_to_stop", "margin", "alpha", "mu_hat", "sd")}
    for e in range(n_episodes):
        out["mu_hat"][:, e], out["sd"][:, e] = post.mean, post.sd
        if level == "option":
            margin, alpha = decide(methods, bins, margins, critic, post, prm)
            res = braking.rollout(mu_real, p_real, margin, noise_of_episode(e), acc_sd, obs_sd,
                                  prm.max_obs)
        elif level == "step":
            weights, alpha = weights_and_alpha(methods, bins, post, prm)
            choose = step_chooser(weights, alpha, margins, critic, prm)
            res = braking.rollout(mu_real, p_real, np.nan, noise_of_episode(e), acc_sd, obs_sd,
                                  prm.max_obs, choose=choose, every=every)
            margin = res.margin
        else:
            raise ValueError(f"unknown level {level!r}; allowed: option, step")
        out["crash"][:, e] = res.crash
        out["time_to_stop"][:, e] = res.time_to_stop
        out["margin"][:, e], out["alpha"][:, e] = margin, alpha
        post.update(res.obs)
    return out
