"""Option-level distributional critic (stand-in for the paper's distributional reward and cost
critics; the spec's substitution).

For every context bin mu_b and braking-margin option m, run ``n_rollouts`` simulator episodes
with mu ~ U(mu_b - h, mu_b + h) (h = half the bin spacing, 0.05 for the spec's bins) and
delay p ~ U(0, 0.2), and store
- the return distribution Z_r(mu_b, m) as ``n_quantiles`` quantiles at the midpoints
  tau_i = (2 i + 1) / (2 n) (the QR-DQN parameterisation), and
- the crash probability P_c(mu_b, m). The crash cost is Bernoulli, so its CVaR at level
  alpha is min(1, P_c / alpha) (computed by the agents).
All (bin, margin, rollout) episodes of a bin run as one vectorised batch. ``build_step`` is
the full profile's tabular critic over (gap, speed, context bin, margin).
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


# --------------------------------------------------------------------------------------------
# full profile: the step-level tabular quantile critic over (gap, speed, context bin, margin)
# --------------------------------------------------------------------------------------------
def cell_index(x, edges) -> np.ndarray:
    """Cell of each x on a grid of cell edges (values outside the grid go to the edge cells)."""
    edges = np.asarray(edges, float)
    return np.clip(np.searchsorted(edges, np.asarray(x, float), side="right") - 1,
                   0, len(edges) - 2)


def build_step(bins, margins, gap_edges, speed_edges, n_rollouts: int, n_quantiles: int,
               rng: np.random.Generator, acc_sd: float, obs_sd: float) -> dict[str, np.ndarray]:
    """Tabular critic of the step-level controller: arrays (G, S, B, M[, Q]).

    For every cell (gap g, speed s) of the cruise state, context bin mu_b and margin m, run
    ``n_rollouts`` simulator episodes that start at a gap and speed drawn uniformly in the cell,
    with mu ~ U(mu_b - h, mu_b + h) and delay p ~ U(0, 0.2) (the friction and delay
    nuisances), and hold the margin m from there on. Store the return-to-go quantiles (time
    already spent is sunk, so the return counts from the cell's state), the crash probability
    and the mean return. Holding m after the current choice makes the critic the value of the
    fixed-margin continuation, and re-choosing every 0.5 s is a policy-improvement (rollout)
    step on it (INFERRED, ours: the spec names the table but not how it is estimated).
    """
    bins, margins = np.asarray(bins, float), np.asarray(margins, float)
    ge, se = np.asarray(gap_edges, float), np.asarray(speed_edges, float)
    G, S, B, M, N = len(ge) - 1, len(se) - 1, len(bins), len(margins), int(n_rollouts)
    h = bin_half_width(bins)
    taus = quantile_levels(n_quantiles)
    quantiles = np.zeros((G, S, B, M, n_quantiles))
    crash_prob = np.zeros((G, S, B, M))
    shape = (G * S * N,)
    g_of = np.repeat(np.arange(G), S * N)
    s_of = np.tile(np.repeat(np.arange(S), N), G)
    for b, mu_b in enumerate(bins):
        for j, m in enumerate(margins):
            noise = braking.draw_noise(rng, shape, braking.n_steps_max())
            noise.d0 = rng.uniform(ge[g_of], ge[g_of + 1])
            noise.v0 = rng.uniform(se[s_of], se[s_of + 1])
            mu = rng.uniform(mu_b - h, mu_b + h, size=shape)
            p = rng.uniform(*braking.SIM_DELAY, size=shape)
            out = braking.rollout(mu, p, m, noise, acc_sd, obs_sd)
            reward = out.reward.reshape(G, S, N)
            crash_prob[:, :, b, j] = out.crash.reshape(G, S, N).mean(axis=2)
            quantiles[:, :, b, j] = np.moveaxis(np.quantile(reward, taus, axis=2), 0, -1)
    return {"quantiles": quantiles, "crash_prob": crash_prob,
            "mean_return": quantiles.mean(axis=-1),
            "gap_edges": ge, "speed_edges": se}
