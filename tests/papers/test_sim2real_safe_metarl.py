"""Behaviour tests of sim2real-safe-metarl: the braking dynamics on hand-solvable cases, the
product-of-Gaussians posterior and the accuracy-to-risk map against their equations, the CVaR
option choice of every method on a hand-made critic, the critic build, sharding independence,
the claim checkers on metrics built to fail, and the pipeline end to end."""

import numpy as np
import pandas as pd
import pytest

from icml26 import grid, pipeline
from icml26.claims import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED
from icml26.papers.sim2real_safe_metarl import (
    agents,
    braking,
    claims,
    critic,
    encoder,
    experiment,
)

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


def _metrics(values: dict, n_seeds: int = 5, literal: dict | None = None) -> pd.DataFrame:
    """One run per (method, setting, critic seed) with the given pooled stats (10 episodes per
    window and seed; a small seed-to-seed spread so the bootstrap has something to resample).
    ``literal``: setting -> PROPOSED's alpha under the literal noise reading."""
    rows = []
    for seed in range(n_seeds):
        jitter = 0.01 * (seed - (n_seeds - 1) / 2)
        for method in agents.RULES:
            for setting in ("REAL-HARD", "REAL-BENIGN"):
                v = values.get((method, setting), {})
                row = {"method": method, "setting": setting, "seed": seed,
                       "early_crashes": 10 * max(v.get("early", 0.0) + jitter, 0.0),
                       "early_episodes": 10,
                       "late_crashes": 10 * max(v.get("late", 0.0) + jitter, 0.0),
                       "late_episodes": 10,
                       "tts_sum": 10 * (v.get("tts", 6.0) + jitter), "tts_count": 10,
                       "alpha_sum": 10 * (v.get("alpha", 1.0) + jitter), "margin_sum": 0.0,
                       "adapted_episodes": 10}
                if literal is not None:
                    lit = method == "PROPOSED"
                    row.update({"early_crashes_literal": row["early_crashes"] if lit else np.nan,
                                "late_crashes_literal": row["late_crashes"] if lit else np.nan,
                                "tts_sum_literal": row["tts_sum"] if lit else np.nan,
                                "tts_count_literal": 10 if lit else np.nan,
                                "alpha_sum_literal": 10 * (literal[setting] + jitter)
                                if lit else np.nan})
                rows.append(row)
    return pd.DataFrame(rows)


GOOD = {
    ("PROPOSED", "REAL-HARD"): {"early": 0.1, "late": 0.0, "alpha": 0.6},
    ("CTX-NEUTRAL", "REAL-HARD"): {"early": 0.3},
    ("DR", "REAL-HARD"): {"early": 0.3, "late": 0.3},
    ("PROPOSED", "REAL-BENIGN"): {"alpha": 0.9, "tts": 6.0},
    ("ROB", "REAL-BENIGN"): {"tts": 8.0}, ("DR", "REAL-BENIGN"): {"tts": 7.0},
    ("CTX-NEUTRAL", "REAL-BENIGN"): {"tts": 6.0},
}


def test_claims_reproduce_and_fail_on_built_metrics():
    cfg = pipeline.resolve(SLUG, "default")
    good = claims.check(cfg, _metrics(GOOD), None)
    assert all(c.verdict == REPRODUCED for c in good), [(c.id, c.verdict) for c in good]
    bad = _metrics({
        ("PROPOSED", "REAL-HARD"): {"early": 0.3, "late": 0.3, "alpha": 0.9},
        ("CTX-NEUTRAL", "REAL-HARD"): {"early": 0.3},
        ("DR", "REAL-HARD"): {"early": 0.3, "late": 0.3},
        ("PROPOSED", "REAL-BENIGN"): {"alpha": 0.5, "tts": 8.0},
        ("ROB", "REAL-BENIGN"): {"tts": 8.0}, ("DR", "REAL-BENIGN"): {"tts": 7.0},
        ("CTX-NEUTRAL", "REAL-BENIGN"): {"tts": 6.0},
    })
    out = claims.check(cfg, bad, None)
    assert all(c.verdict == NOT_REPRODUCED for c in out), [(c.id, c.verdict) for c in out]


def test_pooled_claims_resample_critic_seeds():
    cfg = pipeline.resolve(SLUG, "default")
    # one critic seed cannot decide; a borderline alpha straddling 0.85 is inconclusive
    one = claims.check(cfg, _metrics(GOOD, n_seeds=1), None)
    assert all(c.verdict == INCONCLUSIVE for c in one)
    border = dict(GOOD)
    border[("PROPOSED", "REAL-BENIGN")] = {"alpha": 0.85, "tts": 6.0}
    c4 = claims.check(cfg, _metrics(border), None)[3]
    part = c4.parts["alpha REAL-BENIGN"]
    assert part.lo < 0.85 < part.hi and c4.verdict == INCONCLUSIVE
    # the pooled value is the ratio of summed counts, i.e. the mean over equal-size seeds
    assert np.isclose(claims.pooled(_metrics(GOOD), "PROPOSED", "REAL-BENIGN", "alpha"), 0.9)


def test_claim4_note_gives_the_literal_reading_computed_from_the_run():
    cfg = pipeline.resolve(SLUG, "default")
    met = _metrics(GOOD, literal={"REAL-BENIGN": 0.8, "REAL-HARD": 0.5})
    c4 = claims.check(cfg, met, None)[3]
    assert c4.verdict == REPRODUCED
    note = c4.to_dict()["note"]
    assert "REAL-BENIGN 0.800" in note and "REAL-HARD 0.500" in note
    assert "would be not reproduced" in note
    met = _metrics(GOOD, literal={"REAL-BENIGN": 0.95, "REAL-HARD": 0.5})
    assert "would be reproduced" in claims.check(cfg, met, None)[3].to_dict()["note"]


def test_literal_reading_redeploys_proposed_on_the_same_roads():
    cfg = pipeline.resolve(SLUG, "smoke")
    data = experiment.prepare(cfg, np.random.default_rng(0))
    runs = [r for r in grid.runs(cfg) if r.method in ("PROPOSED", "DR")]
    state, _ = experiment.train(cfg, data, runs)
    prop = next(r for r in runs if r.method == "PROPOSED")
    dr = next(r for r in runs if r.method == "DR")
    assert f"{dr.key}/alpha_literal" not in state
    # with the literal sd equal to the grid's, the redeployment repeats the run exactly
    cfg["params"]["literal_obs_sd"] = cfg["params"]["obs_sd"]
    same, _ = experiment.train(cfg, data, runs)
    for q in experiment.LITERAL_QUANTITIES:
        assert np.array_equal(same[f"{prop.key}/{q}_literal"], same[f"{prop.key}/{q}"],
                              equal_nan=True)
    rows = experiment.evaluate(cfg, data, runs, same, None)
    r = rows[runs.index(prop)]
    assert r["alpha_sum_literal"] == r["alpha_sum"] and np.isnan(rows[runs.index(dr)]
                                                                  ["alpha_sum_literal"])


def test_smoke_runs_end_to_end(tmp_path):
    out = pipeline.run_inprocess(pipeline.resolve(SLUG, "smoke"), tmp_path)
    assert out["claims"].exists()
    assert (out["figures"] / "deployment.png").exists()
    metrics = pd.read_csv(out["metrics"])
    assert len(metrics) == 12 and metrics["early_episodes"].eq(6).all()


# --------------------------------------------------------------------------------------------
# full profile: step-level control, tabular critic, learned KL-regularised encoder
# --------------------------------------------------------------------------------------------
def test_step_level_with_a_constant_margin_is_the_option_level_rollout():
    rng = np.random.default_rng(3)
    noise = braking.draw_noise(rng, (40,), braking.n_steps_max())
    mu, p = rng.uniform(0.5, 1.0, 40), rng.uniform(0.0, 0.3, 40)
    margins = rng.choice([0.0, 6.0, 20.0], 40)
    option = braking.rollout(mu, p, margins, noise)
    calls = []

    def choose(d, v):
        calls.append(d.copy())
        return margins

    step = braking.rollout(mu, p, np.nan, noise, choose=choose, every=5)
    for f in ("crash", "reward", "time_to_stop", "obs"):
        assert np.array_equal(getattr(option, f), getattr(step, f), equal_nan=True), f
    assert np.array_equal(step.margin, margins)
    # asked every 0.5 s (steps 0, 5, 10, ...): the first call sees the start gaps
    assert np.array_equal(calls[0], noise.d0) and len(calls) >= 2


def test_step_level_switch_changes_the_braking_point_only_while_cruising():
    # start with a huge margin (brake at once) vs switching from 0 to 30 m after 0.5 s
    q = _quiet(1, d0=70.0, v0=14.0)
    late = braking.rollout(1.0, 0.0, np.nan, q, choose=lambda d, v: np.where(d > 62, 0.0, 30.0))
    # 0.5 s of cruise at 14 m/s: d = 63 > 62 -> still 0; at 1.0 s d = 56 -> 30 m, and
    # 56 <= 16.33 + 30 + 1.4: braking starts at step 10 and the 30 m margin is kept
    assert late.margin[0] == 30.0
    fixed = braking.rollout(1.0, 0.0, 30.0, q)
    assert late.time_to_stop[0] > fixed.time_to_stop[0] - 1e-9
    assert not late.crash[0]
    # once braking, a later smaller margin has no effect (latched command)
    flip = braking.rollout(1.0, 0.0, np.nan, q,
                           choose=lambda d, v: np.where(d > 46.0, 30.0, 0.0))
    assert flip.margin[0] == 30.0 and np.array_equal(flip.obs, fixed.obs)


def test_cell_index_clips_to_the_grid():
    edges = [10.0, 20.0, 30.0]
    assert critic.cell_index([5.0, 10.0, 19.9, 20.0, 30.0, 99.0], edges).tolist() == [
        0, 0, 0, 1, 1, 1]


def test_tabular_critic_on_a_hand_checkable_case(monkeypatch):
    # no actuation noise, no delay (the simulator's delay range pinned to 0), friction never
    # limiting (mu ~ U(0.95, 1.05): 7 mu >= 6) and start states pinned to one point per cell:
    # every rollout of a cell is the same noise-free episode, so all quantiles equal its
    # return-to-go and the crash probability is 0
    monkeypatch.setattr(braking, "SIM_DELAY", (0.0, 0.0))
    rng = np.random.default_rng(0)
    c = critic.build_step([1.0], [0.0, 10.0], [70.0, 70.0], [14.0, 14.0], 8, 4, rng,
                          acc_sd=0.0, obs_sd=0.0)
    assert c["quantiles"].shape == (1, 1, 1, 2, 4) and c["crash_prob"].shape == (1, 1, 1, 2)
    assert np.all(c["crash_prob"] == 0.0)
    for j, m in enumerate((0.0, 10.0)):
        expected = -braking.rollout(1.0, 0.0, m, _quiet(1)).time_to_stop[0]
        assert c["quantiles"][0, 0, 0, j] == pytest.approx([expected] * 4)
        assert c["mean_return"][0, 0, 0, j] == pytest.approx(expected)
    # the 10 m margin stops 2 m outside the 8 m zone: 1 s of creep, minus the shorter cruise
    assert c["mean_return"][0, 0, 0, 1] < c["mean_return"][0, 0, 0, 0]


def test_tabular_critic_sees_the_state():
    rng = np.random.default_rng(1)
    c = critic.build_step([0.6], [0.0], [20.0, 30.0, 80.0], [15.0, 16.0], 40, 8, rng, 0.3, 0.4)
    # close to the line at 15-16 m/s on a slippery road: braking distance v^2/(2*4.2) >= 26 m
    # exceeds the gap -> crash certain; far away with margin 0 a crash is still likely
    assert c["crash_prob"][0, 0, 0, 0] == 1.0
    assert c["mean_return"][0, 0, 0, 0] < -20
    # far away, the return-to-go counts the cruise time
    assert c["quantiles"][1, 0, 0, 0].max() < 0


def test_step_chooser_uses_the_cell_of_each_row():
    prm = agents.AgentParams()
    # two gap cells: near (crashy at margin 0) and far (margin 0 safe and faster)
    step_critic = {
        "gap_edges": np.array([0.0, 40.0, 100.0]), "speed_edges": np.array([0.0, 50.0]),
        "crash_prob": np.array([[[[0.5, 0.0]]], [[[0.0, 0.0]]]]),
        "mean_return": np.array([[[[-5.0, -6.0]]], [[[-8.0, -9.0]]]]),
    }
    choose = agents.step_chooser(np.ones((2, 1)), np.array([1.0, 1.0]), [0.0, 10.0],
                                 step_critic, prm)
    # near: -5 - 10 * 0.5 = -10 < -6 -> margin 10; far: -8 > -9 -> margin 0
    assert choose(np.array([30.0, 70.0]), np.array([14.0, 14.0])).tolist() == [10.0, 0.0]


def test_step_level_deploy_with_a_state_free_critic_matches_the_option_level():
    cfg = pipeline.resolve(SLUG, "smoke")
    data = experiment.prepare(cfg, np.random.default_rng(0))
    crit = experiment.build_critic(cfg, 0, data)
    # the option critic copied into every (gap, speed) cell: the choice never changes within
    # an episode, so step-level deployment reproduces the option-level one
    step_critic = {k: np.broadcast_to(crit[k], (2, 1, *crit[k].shape))
                   for k in ("crash_prob", "mean_return")}
    step_critic.update(gap_edges=np.array([0.0, 50.0, 100.0]),
                       speed_edges=np.array([0.0, 50.0]))
    methods = np.repeat(list(agents.RULES), 3)
    rng = np.random.default_rng(5)
    noise = [braking.draw_noise(rng, (len(methods),), braking.n_steps_max()) for _ in range(4)]
    args = (methods, 0.55, 0.3, lambda e: noise[e], 4, data["bins"], data["margins"])
    prm = agents.AgentParams()
    option = agents.deploy(*args, crit, prm, 0.3, 0.4)
    step = agents.deploy(*args, step_critic, prm, 0.3, 0.4, level="step")
    for q in experiment.QUANTITIES:
        assert np.array_equal(option[q], step[q], equal_nan=True), q


def test_kl_is_zero_at_the_prior_and_positive_elsewhere():
    assert encoder.kl_gauss(0.8, 0.15, 0.8, 0.15) == pytest.approx(0.0, abs=1e-15)
    # closed form: 0.5 * (var/var0 + dm^2/var0 - 1) + log(sd0/sd)
    kl = encoder.kl_gauss(0.7, 0.05, 0.8, 0.15)
    assert kl == pytest.approx(0.5 * (1 / 9 + 0.01 / 0.0225 - 1) + np.log(3))
    assert kl > 0
    # an empty context leaves the posterior at the prior: KL exactly 0
    mean, prec = encoder.product_of_gaussians(0.8, 1 / 0.15 ** 2, np.array([0.5, 0.6]),
                                              np.array([100.0, 50.0]), np.zeros(2))
    assert mean == pytest.approx(0.8) and prec == pytest.approx(1 / 0.15 ** 2)
    assert encoder.kl_gauss(mean, prec ** -0.5, 0.8, 0.15) == pytest.approx(0.0, abs=1e-12)
    # and with factors, precisions add and means average by precision
    mean, prec = encoder.product_of_gaussians(0.8, 1 / 0.15 ** 2, np.array([0.5, 0.6]),
                                              np.array([100.0, 50.0]), np.ones(2))
    p0 = 1 / 0.15 ** 2
    assert prec == pytest.approx(p0 + 150)
    assert mean == pytest.approx((p0 * 0.8 + 50 + 30) / (p0 + 150))


def test_torch_kl_matches_numpy_kl():
    torch = pytest.importorskip("torch")
    m, s = torch.tensor([0.7, 0.8]), torch.tensor([0.05, 0.15])
    got = encoder.kl_gauss(m, s, torch.tensor(0.8), torch.tensor(0.15)).numpy()
    want = [encoder.kl_gauss(0.7, 0.05, 0.8, 0.15), 0.0]
    assert got == pytest.approx(want, abs=1e-6)


def test_encoder_posterior_with_the_closed_form_factors_is_the_closed_form_posterior():
    prm = agents.AgentParams()
    # weights of an MLP whose output is exactly (0 correction, log 196): factor y/7, sd 0.5/7
    H = 4
    w = {"W1": np.zeros((1, H)), "b1": np.zeros(H), "W2": np.zeros((H, H)), "b2": np.zeros(H),
         "W3": np.zeros((H, 2)), "b3": np.array([0.0, np.log(196.0)]),
         "log_prec_max": np.asarray(12.0)}
    y = np.array([[4.2, 3.5, 3.9] + [np.nan] * 17, [6.0] * 20])
    closed, learned = agents.ContextPosterior(2, prm), agents.EncoderPosterior(2, prm, w)
    closed.update(y)
    learned.update(y)
    assert learned.mean == pytest.approx(closed.mean, rel=1e-12)
    assert learned.precision == pytest.approx(closed.precision, rel=1e-12)
    assert np.allclose(learned.residuals, closed.residuals, equal_nan=True)


def test_encoder_training_moves_the_posterior_toward_the_context():
    pytest.importorskip("torch")
    prm = agents.AgentParams()
    rng = np.random.default_rng(0)
    mu, obs = encoder.simulator_tasks(300, 2, [0.0, 10.0, 20.0, 30.0], rng, 0.3, 0.4, 20)
    assert obs.shape == (300, 40) and np.isfinite(obs).any(axis=1).all()
    eprm = encoder.EncoderParams(hidden=16, iters=150, batch=32)
    w = encoder.train(mu, obs, prm.prior_mean, prm.prior_sd, eprm, seed=7)
    assert w["W1"].shape == (1, 16) and w["W3"].shape == (16, 2)
    again = encoder.train(mu, obs, prm.prior_mean, prm.prior_sd, eprm, seed=7)
    assert all(np.array_equal(w[k], again[k]) for k in w)     # deterministic
    post = agents.EncoderPosterior(2, prm, w)
    post.update(np.array([[7 * 0.6] * 20, [6.0] * 20]))
    # slippery road pulled below the prior mean, grippy one above; sd shrinks
    assert post.mean[0] < 0.7 and post.mean[1] > 0.82
    assert np.all(post.sd < 0.05)


def test_full_like_step_level_run_end_to_end():
    """A shortened full profile (step level, tabular critic, learned encoder) in process."""
    pytest.importorskip("torch")
    cfg = pipeline.resolve(SLUG, "full")
    p = cfg["params"]
    assert p["level"] == "step" and len(p["bins"]) == 9 and p["encoder"] is not None
    cfg["seeds"] = [0]
    p.update(bins=[0.6, 0.8, 1.0], margins=[0, 10, 20, 30], gap_edges=[10, 40, 70, 90],
             speed_edges=[12, 14, 16], n_cell_rollouts=10, n_deploy=2, n_episodes=6,
             late_episodes=[4, 6], adapted_episodes=[5, 6])
    p["encoder"] = dict(p["encoder"], n_tasks=100, iters=30, hidden=8)
    data = experiment.prepare(cfg, np.random.default_rng(0))
    runs = grid.runs(cfg)
    state, curves = experiment.train(cfg, data, runs)
    assert state["critic/0/crash_prob"].shape == (3, 2, 3, 4)
    assert state["critic/0/quantiles"].shape == (3, 2, 3, 4, 32)
    assert "encoder/0/W1" in state
    rows = experiment.evaluate(cfg, data, runs, state, curves)
    assert len(rows) == len(runs) == 12
    for run in runs:
        margin = state[f"{run.key}/margin"]
        assert margin.shape == (2, 6) and np.isin(margin, [0, 10, 20, 30]).all()
    assert all(np.isfinite(r["alpha"]) for r in rows)
    # sharding independence holds at step level too
    one, _ = experiment.train(cfg, data, [runs[5]])
    for q in experiment.QUANTITIES:
        key = f"{runs[5].key}/{q}"
        assert np.array_equal(state[key], one[key], equal_nan=True)
