"""Option-level distributional critic (stand-in for the paper's distributional reward and cost
critics; the spec's substitution).

For every context bin mu_b and braking-margin option m, run ``n_rollouts`` simulator episodes
with mu ~ U(mu_b - h, mu_b + h) (h = half the bin spacing, 0.05 for the spec's bins) and
delay p ~ U(0, 0.2), and store
- the return distribution Z_r(mu_b, m) as ``n_quantiles`` quantiles at the midpoints
  tau_i = (2 i + 1) / (2 n) (the QR-DQN parameterisation), and
- the crash probability P_c(mu_b, m). The crash cost is Bernoulli, so its CVaR at level
  alpha is min(1, P_c / alpha) (computed by the agents).
All (bin, margin, rollout) episodes of a bin run as one vectorised batch.
"""

from __future__ import annotations

import numpy as np

from . import braking


def bin_half_width(bins) -> float:
    bins = np.asarray(bins, float)
    return float(np.min(np.diff(bins)) / 2.0) if bins.size > 1 else 0.05


def quantile_levels(n_quantiles: int) -> np.ndarray:
    return (2.0 * np.arange(n_quantiles) + 1.0) / (2.0 * n_quantiles)


def build(bins, margins, n_rollouts: int, n_quantiles: int, rng: np.random.Generator,
          acc_sd: float, obs_sd: float) -> dict[str, np.ndarray]:
    """Critic arrays: quantiles (B, M, Q), crash_prob (B, M), mean_return (B, M)."""
    bins = np.asarray(bins, float)
    margins = np.asarray(margins, float)
    h = bin_half_width(bins)
    B, M, N = len(bins), len(margins), int(n_rollouts)
    taus = quantile_levels(n_quantiles)
    quantiles = np.zeros((B, M, n_quantiles))
    crash_prob = np.zeros((B, M))
    for b, mu_b in enumerate(bins):
        shape = (M * N,)
        mu = rng.uniform(mu_b - h, mu_b + h, size=shape)
        p = rng.uniform(*braking.SIM_DELAY, size=shape)
        noise = braking.draw_noise(rng, shape, braking.n_steps_max())
        out = braking.rollout(mu, p, np.repeat(margins, N), noise, acc_sd, obs_sd)
        reward = out.reward.reshape(M, N)
        crash_prob[b] = out.crash.reshape(M, N).mean(axis=1)
        quantiles[b] = np.quantile(reward, taus, axis=1).T
    # the expected return of the quantile distribution: mean of its quantiles
    return {"quantiles": quantiles, "crash_prob": crash_prob,
            "mean_return": quantiles.mean(axis=2)}
