"""Behaviour tests of the qkmeans paper: samplers against known distributions and scikit-learn,
the data geometry, the claim checkers on data built to fail, and the pipeline end to end."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from icml26 import grid, pipeline, registry
from icml26.claims import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED
from icml26.papers.qkmeans import claims, data, experiment, lsh, seeding


def _blobs(n=300, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=4.0, size=(6, 3))
    return centres[rng.integers(6, size=n)] + rng.normal(size=(n, 3))


def _d2(X, C):
    return ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1).min(axis=1)


# --------------------------------------------------------------------------------------------
# samplers
# --------------------------------------------------------------------------------------------
def test_kmeans_pp_cost_distribution_matches_sklearn():
    from sklearn.cluster import kmeans_plusplus

    X = _blobs()
    ours, ref = [], []
    for s in range(300):
        seeding_, d2 = seeding.kmeans_pp(X, 8, np.random.default_rng(s))
        ours.append(d2.mean())
        assert np.allclose(d2, _d2(X, X[seeding_.centres]))
        centres, _ = kmeans_plusplus(X, 8, random_state=s, n_local_trials=1)
        ref.append(_d2(X, centres).mean())
    assert abs(np.mean(ours) / np.mean(ref) - 1) < 0.06
    assert stats.ks_2samp(ours, ref).pvalue > 0.01
    assert seeding_.evals[-1] == 300 * 8


def test_rejection_sampler_draws_exactly_d2():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(8, 2))
    C = X[[0, 5]]
    mom = seeding.preprocess(X)
    dmu = float(((mom.mu - C) ** 2).sum(axis=1).min())
    target = _d2(X, C)

    def nearest(idx):
        return _d2(X[idx], C), np.full(len(idx), len(C))

    draws, trials = [], []
    for _ in range(20000):
        i, t, ev = seeding.rejection_step(mom, dmu, nearest, rng, batch=16)
        draws.append(i)
        trials.append(t)
        assert ev == 2 * t
    counts = np.bincount(draws, minlength=len(X))
    assert counts[0] == counts[5] == 0  # centres have D^2 = 0
    keep = target > 0
    expected = target[keep] / target.sum() * len(draws)
    assert stats.chisquare(counts[keep], expected).pvalue > 1e-3
    # expected trials per centre: 2 (S + n dmu) / cost(C)
    assert np.mean(trials) == pytest.approx(2 * (mom.S + len(X) * dmu) / target.sum(), rel=0.05)


def test_acceptance_probability_never_exceeds_one():
    rng = np.random.default_rng(0)
    for D in (2, 5, 20):
        X = rng.standard_exponential(size=(400, D)) * rng.normal(size=D)
        mom = seeding.preprocess(X)
        for j in (1, 3, 30):
            C = X[rng.choice(len(X), j, replace=False)]
            dmu = float(((mom.mu - C) ** 2).sum(axis=1).min())
            ratio = seeding.acceptance_ratio(_d2(X, C), mom.r2, dmu)
            assert ratio.max() <= 1.0 + 1e-12
            assert ratio.min() >= 0.0


def test_proposal_density_is_r2_plus_dmu():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(6, 2))
    mom = seeding.preprocess(X)
    dmu = 0.7
    idx = seeding.propose(mom, dmu, 200000, rng)
    q = (mom.r2 + dmu) / (mom.S + len(X) * dmu)
    assert np.abs(np.bincount(idx, minlength=6) / len(idx) - q).max() < 0.005


def test_afkmc2_long_chain_approaches_d2_sampling():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(10, 2))
    C = X[[0, 4]]
    d1 = _d2(X, C[:1])
    q = 0.5 * d1 / d1.sum() + 0.5 / len(X)
    cum = np.cumsum(q)
    target = _d2(X, C) / _d2(X, C).sum()

    def candidate_d2(idx):
        return _d2(X[idx], C), len(idx) * len(C)

    def tv(m, draws=4000):
        picks = [seeding.mcmc_draw(q, cum, candidate_d2, m, rng)[0] for _ in range(draws)]
        return 0.5 * np.abs(np.bincount(picks, minlength=len(X)) / draws - target).sum()

    assert tv(200) < 0.04
    assert tv(1) > 0.1  # a chain of length 1 is just the proposal: the test has power
    s = seeding.afkmc2(_blobs(), 5, rng, m=20)
    assert list(s.evals) == [300 + 20 * sum(range(j)) for j in range(1, 6)]


def test_prefix_costs_and_uniform():
    X = _blobs()
    s = seeding.uniform(X, 20, np.random.default_rng(0))
    assert len(set(s.centres)) == 20 and not s.evals.any()
    costs = seeding.prefix_costs(X, s.centres, [1, 7, 20])
    for k, c in costs.items():
        assert c == pytest.approx(_d2(X, X[s.centres[:k]]).mean())


def test_qkmeans_exact_counts_and_quality():
    X = data.flat_torus(3000, 8, 2, 0.0, np.random.default_rng(0))
    s = seeding.qkmeans_exact(X, 32, np.random.default_rng(1))
    assert len(set(s.centres)) == 32
    assert np.all(np.diff(s.evals) > 0) and np.all(np.diff(s.trials) >= 1)
    assert s.evals[0] == 3000 + 1  # preprocessing + D2(mu, c1)
    # evaluations: |C| per trial and 1 per centre, on top of the preprocessing
    assert s.evals[-1] == 3001 + 31 + sum(
        j * (s.trials[j] - s.trials[j - 1]) for j in range(1, 32))


# --------------------------------------------------------------------------------------------
# Qkmeans-LSH
# --------------------------------------------------------------------------------------------
def test_lsh_overestimates_and_huge_buckets_are_exact():
    rng = np.random.default_rng(0)
    C = rng.normal(size=(40, 5))
    P = rng.normal(size=(100, 5))
    index = lsh.CentreLSH(5, 4, 3, 40, rng)
    assert index.rebuild(C, 1e4) == 4 * 3 * 40
    assert index.bucket_mates(P).all() or index.bucket_mates(P).mean() > 0.99
    index.rebuild(C, 0.5)
    mates = index.bucket_mates(P)
    assert 0 < mates.mean() < 1
    d2 = ((P[:, None] - C[None]) ** 2).sum(-1)
    approx = np.where(mates, d2, np.inf).min(axis=1)
    assert np.all(approx >= d2.min(axis=1))
    # a centre always shares every bucket with itself
    assert index.bucket_mates(C).diagonal().all()


def test_pilot_recovers_eps_and_lsh_seeding_runs():
    X = data.flat_torus(4000, 8, 2, 0.0, np.random.default_rng(5))
    eps, cost = lsh.pilot_eps(X, np.random.default_rng(0))
    assert cost == 1000 * 56
    assert abs(eps - 1.0) < 0.3
    s = lsh.qkmeans_lsh(X, 32, np.random.default_rng(1), rho=0.5, eps_hat=eps, pilot_evals=cost)
    assert len(set(s.centres)) == 32
    assert s.evals[0] >= cost + 4000
    ratio = seeding.prefix_costs(X, s.centres, [32])[32] / seeding.prefix_costs(
        X, seeding.kmeans_pp(X, 32, np.random.default_rng(2))[0].centres, [32])[32]
    assert ratio < 1.5


# --------------------------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------------------------
def test_flat_torus_geometry():
    n, D, d = 20000, 10, 3
    X = data.flat_torus(n, D, d, 0.0, np.random.default_rng(0))
    # every point has squared norm d/2: z = [cos, sin]/sqrt(2) per angle, Q orthonormal
    assert np.allclose((X ** 2).sum(axis=1), d / 2)
    eig = np.linalg.eigvalsh(np.cov(X.T))[::-1]
    # a 2d-dimensional subspace, each direction with variance Var(cos(2 pi u))/2 = 1/4
    assert np.allclose(eig[:2 * d], 0.25, atol=0.02)
    assert np.allclose(eig[2 * d:], 0.0, atol=1e-10)
    assert np.abs(X.mean(axis=0)).max() < 0.02
    noisy = data.flat_torus(n, D, d, 0.1, np.random.default_rng(0))
    assert np.linalg.eigvalsh(np.cov(noisy.T)).min() == pytest.approx(0.01, rel=0.15)
    Q = data.random_orthonormal(D, 2 * d, np.random.default_rng(1))
    assert np.allclose(Q.T @ Q, np.eye(2 * d))


# --------------------------------------------------------------------------------------------
# claims on constructed data
# --------------------------------------------------------------------------------------------
KS = [16, 32, 64, 128, 256]


def _cfg():
    return pipeline.resolve("qkmeans", "default")


def _constructed(good: bool):
    """Curves and metrics that satisfy (good) or violate (bad) every claim."""
    rows, mrows = [], []
    for d, setting in ((2, "d2"), (3, "d3"), (4, "d4")):
        for seed in range(5):
            wobble = 1 + 0.001 * seed
            for k in KS:
                kpp_cost = wobble * k ** (-2 / d if good else -0.1)
                kpp_ev = 20000 * k
                per = {
                    "kmeans++": {"cost": kpp_cost, "evals": kpp_ev},
                    "uniform": {"cost": kpp_cost * (1.3 if good else 1.0), "evals": 0},
                    "afkmc2": {"cost": kpp_cost, "evals": kpp_ev / 2},
                    "qkmeans-exact": {
                        "cost": kpp_cost * (1.0 if good else 1.3),
                        "evals": kpp_ev * ((0.1 if d == 4 else 0.9) if good else
                                           (0.9 if d == 4 else 0.5)),
                        "trials": wobble * k ** ((1 + 2 / d) if good else 1.0)},
                    "qkmeans-lsh": {
                        "cost": kpp_cost * (1.0 if good else 2.0),
                        "evals": kpp_ev * ((0.05 if d == 4 else 0.5) if good else 2.0),
                        "trials": k, "eps_hat": (2 / d) if good else 2 / d + 0.5},
                }
                for method, metrics in per.items():
                    for metric, value in metrics.items():
                        rows.append({"method": method, "setting": setting, "seed": seed,
                                     "step": k, "metric": metric, "value": value})
            mrows.append({"method": "qkmeans-lsh", "setting": setting, "seed": seed,
                          "eps_hat": (2 / d) if good else 2 / d + 0.5})
    return pd.DataFrame(mrows), pd.DataFrame(rows)


@pytest.mark.parametrize("good", [True, False])
def test_claim_checkers(good):
    metrics, curves = _constructed(good)
    result = claims.check(_cfg(), metrics, curves)
    assert len(result) == 8
    want = REPRODUCED if good else NOT_REPRODUCED
    assert {c.id: c.verdict for c in result} == {c.id: want for c in result}
    for c in result:
        c.to_dict()  # JSON-safe


def test_borderline_pooled_geometric_mean_is_not_decisive():
    """Seeds whose uniform / k-means++ ratios straddle 1.15 give a pooled geometric mean near
    1.15 whose bootstrap interval over seeds straddles it: inconclusive, not decided."""
    metrics, curves = _constructed(True)
    factor = {0: 1.0, 1: 1.35, 2: 0.95, 3: 1.3, 4: 1.05}  # per-seed ratio uniform / kmeans++
    sel = curves["method"] == "uniform"
    kpp = curves[curves["method"] == "kmeans++"].set_index(["setting", "seed", "step", "metric"])
    curves.loc[sel, "value"] = [
        kpp.loc[(r.setting, r.seed, r.step, r.metric), "value"] * factor[r.seed]
        if r.metric == "cost" else r.value for r in curves[sel].itertuples()]
    c7 = {c.id: c for c in claims.check(_cfg(), metrics, curves)}["C7-seeding-matters"]
    part = c7.parts["value"]
    assert part.lo < 1.15 < part.hi and part.verdict == INCONCLUSIVE
    assert c7.verdict == INCONCLUSIVE


def test_pooled_slope_resamples_seeds():
    """The scaling-law slope is fitted to the mean over the resampled seeds: seeds with very
    different slopes make the interval wide (inconclusive); identical seeds make it decisive."""
    metrics, curves = _constructed(True)
    sel = (curves["method"] == "kmeans++") & (curves["metric"] == "cost") & \
        (curves["setting"] == "d2")
    # seed s has slope -1 + 0.25 (s - 2): mean-curve slope near -1, seeds far apart
    curves.loc[sel, "value"] = [r.step ** (-1 + 0.25 * (r.seed - 2)) for r in
                                curves[sel].itertuples()]
    part = {c.id: c for c in claims.check(_cfg(), metrics, curves)}["C1-scaling-law"].parts
    assert part["d=2"].verdict == INCONCLUSIVE and part["d=4"].verdict == REPRODUCED


# --------------------------------------------------------------------------------------------
# pipeline
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("scale", ["smoke", "default", "full"])
def test_configs_resolve(scale):
    cfg = pipeline.resolve("qkmeans", scale)
    registry.check_config_against_module(cfg)
    assert grid.runs(cfg)
    for setting in cfg["settings"]:
        assert experiment.k_list(cfg, setting)


def test_train_is_deterministic_and_shard_independent():
    cfg = pipeline.resolve("qkmeans", "smoke")
    runs = grid.runs_in_shard(cfg, "d4")
    _, curves_all = experiment.train(cfg, {}, runs)
    one = [r for r in runs if r.method == "qkmeans-lsh"]
    _, curves_one = experiment.train(cfg, {}, one)
    _, again = experiment.train(cfg, {}, one)
    all_frame = pd.DataFrame(curves_all)
    picked = all_frame[all_frame["method"] == "qkmeans-lsh"].reset_index(drop=True)
    pd.testing.assert_frame_equal(picked, pd.DataFrame(curves_one))
    assert curves_one == again


def test_paired_data_across_methods():
    cfg = pipeline.resolve("qkmeans", "smoke")
    a = experiment.dataset(cfg, "d2", 0, {})
    b = experiment.dataset(cfg, "d2", 0, {})
    c = experiment.dataset(cfg, "d2", 1, {})
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert a.shape == (2000, 16)


def test_smoke_end_to_end(tmp_path):
    cfg = pipeline.resolve("qkmeans", "smoke")
    out = pipeline.run_inprocess(cfg, tmp_path)
    metrics = pd.read_csv(out["metrics"])
    assert len(metrics) == len(grid.runs(cfg))
    assert {"cost", "evals", "evals_frac", "trials", "eps_hat"} <= set(metrics.columns)
    import json

    doc = json.loads(out["claims"].read_text())
    assert [c["id"][:3] for c in doc["claims"]] == [f"C{i}-" for i in range(1, 9)]
    for name in cfg["figures"]:
        assert (out["figures"] / f"{name}.png").exists()


def test_full_profile_methods_on_a_small_case():
    X = data.flat_torus(1500, 8, 3, 0.01, np.random.default_rng(0))
    params = {**pipeline.resolve("qkmeans", "full")["params"], "pilot_n": 500}

    def rng_for(stream):
        return np.random.default_rng(sum(map(ord, stream)))

    ks = [4, 8, 16]
    kpp = experiment.seed_run("kmeans++", X, ks, params, rng_for)["rows"]
    ref = experiment.seed_run("kmeans++lloyd", X, ks, params, rng_for)["rows"]
    for k in ks:  # same k-means++ stream: Lloyd can only lower the cost of its start
        assert ref[k]["cost"] <= kpp[k]["cost"] + 1e-12
    out = experiment.seed_run("qkmeans-lsh-0.25", X, ks, params, rng_for)
    assert set(out["centres"]) == {f"centres_k{k}" for k in ks}
    assert all(np.isfinite(out["rows"][k]["eps_hat"]) for k in ks)
