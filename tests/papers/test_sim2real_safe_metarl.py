"""Behaviour tests of sim2real-safe-metarl: the braking dynamics on hand-solvable cases, the
product-of-Gaussians posterior and the accuracy-to-risk map against their equations, the CVaR
option choice of every method on a hand-made critic, the critic build, sharding independence,
the claim checkers on metrics built to fail, and the pipeline end to end."""

import numpy as np
import pandas as pd
import pytest

from icml26 import grid, pipeline
from icml26.claims import NOT_REPRODUCED, REPRODUCED
from icml26.papers.sim2real_safe_metarl import agents, braking, claims, critic, experiment

SLUG = "sim2real-safe-metarl"


def _quiet(n, d0=70.0, v0=14.0, steps=300, delay_u=1.0):
    """Noise with no randomness: fixed start, zero actuation/observation noise."""
    return braking.Noise(d0=np.full(n, d0), v0=np.full(n, v0), acc=np.zeros((n, steps)),
                         delay=np.full((n, steps), delay_u), obs=np.zeros((n, steps)))


# --------------------------------------------------------------------------------------------
# dynamics
# --------------------------------------------------------------------------------------------
def test_noise_free_stop_lands_near_the_margin_and_scores_time_plus_creep():
    margins = np.array([0.0, 10.0, 20.0])
    out = braking.rollout(1.0, 0.0, margins, _quiet(3))
    assert not out.crash.any()
    # braking starts at d <= v^2/12 + m + v dt, then 6 m/s^2 to rest: stop gap ~ m (+- v dt)
    # cruise (70 - 16.33 - m - 1.4) / 14 s, brake 14/6 s, creep max(0, d - 8)/2
    for m, tts in zip(margins, out.time_to_stop, strict=True):
        cruise = (70 - 14 ** 2 / 12 - m - 1.4) / 14
        expected = cruise + 14 / 6 + max(0.0, m - 8) / 2
        assert tts == pytest.approx(expected, abs=0.35)
    assert np.all(out.reward == -out.time_to_stop)
    # 20 observations per episode, each exactly min(6, 7 mu) without noise
    assert np.all(out.obs == 6.0)


def test_low_friction_without_margin_crashes_with_the_crash_reward():
    out = braking.rollout(0.5, 0.0, np.array([0.0, 30.0]), _quiet(2))
    assert out.crash[0] and not out.crash[1]
    assert np.isnan(out.time_to_stop[0])
    assert out.reward[0] < -20
    # friction-limited observations: 7 * 0.5 = 3.5
    assert np.allclose(out.obs[1], 3.5)


def test_delay_applies_the_previous_command_on_the_first_braking_step():
    on_time = braking.rollout(1.0, 0.0, 5.0, _quiet(1))
    delayed = braking.rollout(1.0, 1.0, 5.0, _quiet(1, delay_u=0.0))
    # the first braking step applies the cruise command (0): observation 0, later ones 6
    assert delayed.obs[0, 0] == 0.0 and np.all(delayed.obs[0, 1:] == 6.0)
    # ~one step of travel at 14 m/s lost: later stop, less creep-free gap
    assert delayed.time_to_stop[0] != on_time.time_to_stop[0]


# --------------------------------------------------------------------------------------------
# posterior, accuracy signal, risk level
# --------------------------------------------------------------------------------------------
def test_posterior_is_the_product_of_gaussians_and_residuals_precede_updates():
    prm = agents.AgentParams()
    post = agents.ContextPosterior(1, prm)
    y = np.array([[4.2, 3.5, 3.9] + [np.nan] * 17])
    post.update(y)
    prec = 1 / 0.15 ** 2 + 3 * (7 / 0.5) ** 2
    mean = (0.8 / 0.15 ** 2 + (7 / 0.5) ** 2 * (4.2 + 3.5 + 3.9) / 7) / prec
    assert post.precision[0] == pytest.approx(prec)
    assert post.mean[0] == pytest.approx(mean)
    # first residual against the prior mean: y1 - min(6, 7 * 0.8)
    assert post.residuals[0, 0] == pytest.approx(4.2 - 5.6)
    m1 = (0.8 / 0.15 ** 2 + 196 * 0.6) / (1 / 0.15 ** 2 + 196)
    assert post.residuals[0, 1] == pytest.approx(3.5 - 7 * m1)
    assert post.count[0] == 3


def test_risk_level_follows_the_spec_formula():
    prm = agents.AgentParams()
    post = agents.ContextPosterior(2, prm)
    # before any observation: ratio 1, u = sd = 0.15, alpha = clip(0) = 0.05
    assert agents.risk_level(post.uncertainty(), prm) == pytest.approx([0.05, 0.05])
    post.precision[:] = 1 / 0.01 ** 2
    post.residuals[0, :] = 0.5          # RMSE = 0.5: u = sd
    post.residuals[1, :] = 1.0          # RMSE = 1.0: ratio 2
    post.count[:] = 40
    u = post.uncertainty()
    assert u[0] == pytest.approx(0.01)
    assert u[1] == pytest.approx(0.01 * 2 + 0.15 * 1)
    assert agents.risk_level(u, prm) == pytest.approx([1 - 0.01 / 0.15, 0.05])
    # the window keeps the last 40 residuals only (ring buffer)
    post2 = agents.ContextPosterior(1, prm)
    post2.update(np.full((1, 20), 5.6))
    post2.update(np.full((1, 20), 5.6))
    post2.update(np.full((1, 20), 5.6))
    assert post2.count[0] == 60 and np.isfinite(post2.residuals).sum() == 40


def _toy_critic():
    # bins 0.6 (slippery) and 1.0; margins 0 (fast) and 10 (slow)
    return {"crash_prob": np.array([[0.3, 0.0], [0.0, 0.0]]),
            "mean_return": np.array([[-12.0, -9.0], [-6.0, -8.0]])}


def test_every_method_follows_its_weighting_and_risk_rule():
    prm = agents.AgentParams()
    bins, margins = np.array([0.6, 1.0]), np.array([0.0, 10.0])
    methods = list(agents.RULES)
    post = agents.ContextPosterior(len(methods), prm)
    post.mean[:] = 0.98                      # identified a grippy road
    post.precision[:] = 1 / 0.02 ** 2
    post.count[:] = 40
    post.residuals[:] = 0.5                  # model fits: u = sd = 0.02
    margin, alpha = agents.decide(methods, bins, margins, _toy_critic(), post, prm)
    got = dict(zip(methods, zip(margin, alpha, strict=True), strict=True))
    assert got["PROPOSED"][1] == pytest.approx(1 - 0.02 / 0.15)
    assert got["DR"][1] == 1.0 and got["CTX-NEUTRAL"][1] == 1.0
    assert got["ROB"][1] == 0.05 and got["CTX-AVERSE"][1] == 0.05
    # DR: uniform mix -> R = (-9, -8.5), P = (0.15, 0): -9 - 1.5 vs -8.5 -> margin 10
    assert got["DR"][0] == 10.0
    # ROB: only the slippery bin -> margin 10
    assert got["ROB"][0] == 10.0
    # contextual agents put almost all weight on mu = 1.0 -> fast margin 0
    for m in ("PROPOSED", "CTX-NEUTRAL", "CTX-NEUTRAL-MIX", "CTX-AVERSE"):
        assert got[m][0] == 0.0, m
    w = agents.bin_weights("posterior", bins, np.array([0.8]), np.array([0.1]), prm)
    g = np.exp(-0.5 * (bins - 0.8) ** 2 / (0.1 ** 2 + 0.05 ** 2))
    assert w[0] == pytest.approx(g / g.sum())


def test_low_alpha_chooses_the_safe_option_under_residual_uncertainty():
    prm = agents.AgentParams()
    crit = _toy_critic()
    w = np.array([[0.2, 0.8]])               # P(0) = 0.06, R = (-7.2, -8.2)
    risky = agents.choose_margin(w, np.array([1.0]), crit, prm)   # -7.2 - 0.6 > -8.2
    safe = agents.choose_margin(w, np.array([0.05]), crit, prm)   # -7.2 - 10 * 1 < -8.2
    assert risky[0] == 0 and safe[0] == 1


# --------------------------------------------------------------------------------------------
# critic
# --------------------------------------------------------------------------------------------
def test_critic_quantiles_and_crash_probabilities():
    c = critic.build([0.6, 1.0], [0.0, 10.0, 30.0], 120, 32, np.random.default_rng(0),
                     0.3, 0.4)
    assert c["quantiles"].shape == (2, 3, 32)
    assert np.all(np.diff(c["quantiles"], axis=2) >= 0)
    # slippery roads crash more, and larger margins crash less
    assert c["crash_prob"][0, 0] > 0.5 and c["crash_prob"][1, 0] < c["crash_prob"][0, 0]
    assert c["crash_prob"][0, 2] == 0.0
    # with no crash, a 30 m margin costs creep time: lower return than 10 m
    assert c["mean_return"][1, 2] < c["mean_return"][1, 1]
    assert critic.quantile_levels(4) == pytest.approx([0.125, 0.375, 0.625, 0.875])


# --------------------------------------------------------------------------------------------
# pipeline: sharding independence, claims, end to end
# --------------------------------------------------------------------------------------------
def test_results_do_not_depend_on_sharding():
    cfg = pipeline.resolve(SLUG, "smoke")
    data = experiment.prepare(cfg, np.random.default_rng(0))
    runs = grid.runs(cfg)
    full, _ = experiment.train(cfg, data, runs)
    one, _ = experiment.train(cfg, data, [runs[3]])
    for q in experiment.QUANTITIES:
        key = f"{runs[3].key}/{q}"
        assert np.array_equal(full[key], one[key], equal_nan=True)


def _metrics(values: dict) -> pd.DataFrame:
    """One run per (method, setting) with the given pooled stats (10 episodes per window)."""
    rows = []
    for method in agents.RULES:
        for setting in ("REAL-HARD", "REAL-BENIGN"):
            v = values.get((method, setting), {})
            rows.append({"method": method, "setting": setting, "seed": 0,
                         "early_crashes": 10 * v.get("early", 0.0), "early_episodes": 10,
                         "late_crashes": 10 * v.get("late", 0.0), "late_episodes": 10,
                         "tts_sum": 10 * v.get("tts", 6.0), "tts_count": 10,
                         "alpha_sum": 10 * v.get("alpha", 1.0), "margin_sum": 0.0,
                         "adapted_episodes": 10})
    return pd.DataFrame(rows)


def test_claims_reproduce_and_fail_on_built_metrics():
    cfg = pipeline.resolve(SLUG, "default")
    good = _metrics({
        ("PROPOSED", "REAL-HARD"): {"early": 0.1, "late": 0.0, "alpha": 0.6},
        ("CTX-NEUTRAL", "REAL-HARD"): {"early": 0.3},
        ("DR", "REAL-HARD"): {"early": 0.3, "late": 0.3},
        ("PROPOSED", "REAL-BENIGN"): {"alpha": 0.9, "tts": 6.0},
        ("ROB", "REAL-BENIGN"): {"tts": 8.0}, ("DR", "REAL-BENIGN"): {"tts": 7.0},
        ("CTX-NEUTRAL", "REAL-BENIGN"): {"tts": 6.0},
    })
    assert all(c.verdict == REPRODUCED for c in claims.check(cfg, good, None))
    bad = _metrics({
        ("PROPOSED", "REAL-HARD"): {"early": 0.3, "late": 0.3, "alpha": 0.9},
        ("CTX-NEUTRAL", "REAL-HARD"): {"early": 0.3},
        ("DR", "REAL-HARD"): {"early": 0.3, "late": 0.3},
        ("PROPOSED", "REAL-BENIGN"): {"alpha": 0.5, "tts": 8.0},
        ("ROB", "REAL-BENIGN"): {"tts": 8.0}, ("DR", "REAL-BENIGN"): {"tts": 7.0},
        ("CTX-NEUTRAL", "REAL-BENIGN"): {"tts": 6.0},
    })
    assert all(c.verdict == NOT_REPRODUCED for c in claims.check(cfg, bad, None))


def test_smoke_runs_end_to_end(tmp_path):
    out = pipeline.run_inprocess(pipeline.resolve(SLUG, "smoke"), tmp_path)
    assert out["claims"].exists()
    assert (out["figures"] / "deployment.png").exists()
    metrics = pd.read_csv(out["metrics"])
    assert len(metrics) == 12 and metrics["early_episodes"].eq(6).all()
