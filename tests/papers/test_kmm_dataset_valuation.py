"""Behaviour tests of kmm-dataset-valuation: the KMM solver against scikit-learn's Lasso and a
hand-solved orthogonal case, the redundancy mechanism on built features, the official
selection rule and mixture recipe, gradients against finite differences, the stacked
trainer's independence of its batch partners, the datamodel fit on a known linear utility,
the data generator, the feature premise (full vs 4-shot features), claim checkers on data
built to pass and to fail, bad params, and the pipeline end to end (smoke)."""

import copy
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import Lasso

from icml26 import pipeline, seeding
from icml26.claims import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED
from icml26.config import check_params
from icml26.errors import ConfigError
from icml26.papers.kmm_dataset_valuation import claims, data, experiment, mlp
from icml26.papers.kmm_dataset_valuation import valuation as V

CONFIG = Path(__file__).resolve().parents[2] / "config"


# --- KMM solver ------------------------------------------------------------------------------
def _features(rng, M=8, P=60, dup=3, jitter=0.05):
    """M gradient features, the first ``dup`` near-copies of one direction."""
    G = rng.standard_normal((M, P))
    G[1:dup] = G[0] + jitter * rng.standard_normal((dup - 1, P))
    return G


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("lam_rel", [0.02, 0.2])
def test_kmm_matches_sklearn_lasso(seed, lam_rel):
    rng = np.random.default_rng(seed)
    G = _features(rng)
    a = 0.5 * G[0] + 0.3 * G[4] + 0.2 * G[5] + 0.3 * rng.standard_normal(G.shape[1])
    est = V.KMM(lam_rel, max_sweeps=100_000, tol=1e-8).fit(G, a)
    # 1/2 ||G^T b - a||^2 + lam |b|_1  ==  P * (sklearn objective with alpha = lam / P)
    P = G.shape[1]
    ref = Lasso(alpha=est.lam_ / P, fit_intercept=False, tol=1e-12, max_iter=1_000_000)
    ref.fit(G.T, a)
    assert np.allclose(est.beta_, ref.coef_, atol=1e-5)
    assert est.kkt_ < 1e-6
    # the objective at our solution is not above the reference's
    def obj(b):
        return 0.5 * np.sum((G.T @ b - a) ** 2) + est.lam_ * np.abs(b).sum()
    assert obj(est.beta_) <= obj(ref.coef_) + 1e-9


def test_kmm_orthogonal_case_by_hand():
    # orthogonal features: beta_j = S(c_j, lam) / K_jj, c_j = <g_j, a>
    G = np.diag([2.0, 1.0, 0.5])
    a = np.array([1.0, -0.3, 0.02])
    est = V.KMM(lam_rel=0.1).fit(G, a)
    c = np.array([2.0, -0.3, 0.01])
    lam = 0.1 * 2.0
    assert np.isclose(est.lam_, lam)
    assert np.allclose(est.beta_, [(2.0 - lam) / 4.0, (-0.3 + lam) / 1.0, 0.0])
    assert np.allclose(est.K_, G @ G.T) and np.allclose(est.c_, c)


def test_kmm_normalize_is_scale_free():
    rng = np.random.default_rng(3)
    G = _features(rng)
    a = G[0] + G[5]
    scaled = G * rng.uniform(0.1, 10, size=(len(G), 1))
    b1 = V.KMM(normalize=True).fit(G, a).beta_
    b2 = V.KMM(normalize=True).fit(scaled, 7.0 * a).beta_
    assert np.allclose(b1, b2, atol=1e-8)


def test_redundancy_kmm_spreads_alignment_stacks():
    # three near-duplicates of the largest target direction, three distinct relevant sets,
    # two irrelevant: alignment's top 4 is the duplicate group, KMM's covers the others
    rng = np.random.default_rng(0)
    P = 200
    basis = np.linalg.qr(rng.standard_normal((P, 6)))[0].T
    G = np.vstack([basis[0] + 0.02 * rng.standard_normal(P) for _ in range(4)] + [basis[1],
                  basis[2], basis[3], basis[4], basis[5]])
    a = 0.4 * basis[0] + 0.2 * basis[1] + 0.2 * basis[2] + 0.2 * basis[3]
    cos_top = V.select_top_k(V.cosine(G, a), 4)
    kmm_top = V.select_top_k(V.KMM(0.02).fit(G, a).beta_, 4)
    assert set(cos_top) == {0, 1, 2, 3}
    assert len(set(kmm_top) & {0, 1, 2, 3}) == 1 and {4, 5, 6} <= set(kmm_top)


def test_select_top_k_drops_nonpositive_and_breaks_ties_by_index():
    s = np.array([0.3, -1.0, 0.3, 0.0, 0.9])
    assert list(V.select_top_k(s, 3)) == [4, 0, 2]
    assert list(V.select_top_k(s, 5)) == [4, 0, 2]          # 0 and negative dropped
    assert V.select_top_k(-np.abs(s), 2).size == 0


# --- post-training recipe, model, trainer ----------------------------------------------------
def test_mixture_is_the_official_recipe():
    cfg = pipeline.resolve("kmm-dataset-valuation", "default")
    probs, steps = experiment.mixture(cfg, [2, 5])
    assert np.isclose(probs[0], 0.7) and np.allclose(probs[[3, 6]], 0.15)
    assert steps == 300 and np.isclose(probs.sum(), 1.0)
    probs, steps = experiment.mixture(cfg, [1, 4], weights=[3.0, 1.0])
    assert np.allclose(probs[[2, 5]], [0.225, 0.075])
    probs, steps = experiment.mixture(cfg, [])
    assert probs[0] == 1.0 and probs[1:].sum() == 0 and steps == 210


def test_mean_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    w = mlp.init([5, 7, 3], rng)
    x, y = rng.standard_normal((11, 5)), rng.integers(0, 3, 11)
    g = experiment.mean_grad(w, x, y)
    flat = mlp.flat(w)
    shapes = [p.shape for p in w]

    def loss(v):
        parts, i = [], 0
        for s in shapes:
            n = int(np.prod(s))
            parts.append(v[i:i + n].reshape(s))
            i += n
        return float(mlp.loss_grad(parts, x, y)[0])

    for i in rng.choice(flat.size, 12, replace=False):
        e = np.zeros_like(flat)
        e[i] = 1e-6
        assert np.isclose(g[i], (loss(flat + e) - loss(flat - e)) / 2e-6, atol=1e-7)


def test_stacked_training_is_independent_of_partners_and_follows_the_mixture():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((30, 4))
    y = np.r_[np.zeros(10, int), np.ones(20, int)]       # source 0: class 0, source 1: class 1
    w = mlp.stack([mlp.init([4, 6, 2], rng) for _ in range(2)])
    start, length = np.array([[0, 10], [0, 10]]), np.array([[10, 20], [10, 20]])
    probs = np.array([[1.0, 0.0], [0.0, 1.0]])
    kw = {"lr": 0.05, "batch": 16, "weight_decay": 0.0}
    both = mlp.train_mixtures(w, x, y, start, length, probs, [60, 60], [7, 8], **kw)
    alone = mlp.train_mixtures([p[1:] for p in w], x, y, start[1:], length[1:], probs[1:],
                               [60], [8], **kw)
    assert all(np.array_equal(a[1], b[0]) for a, b in zip(both, alone, strict=True))
    # trained only on class 0 (resp. 1), each model predicts that class everywhere
    m0, m1 = [p[0] for p in both], [p[1] for p in both]
    assert (mlp.fed.predict(m0, x) == 0).all() and (mlp.fed.predict(m1, x) == 1).all()
    # a model with fewer steps is frozen after them: equal to training it alone that long
    short = mlp.train_mixtures(w, x, y, start, length, probs, [60, 25], [7, 8], **kw)
    alone25 = mlp.train_mixtures([p[1:] for p in w], x, y, start[1:], length[1:], probs[1:],
                                 [25], [8], **kw)
    assert all(np.array_equal(a[1], b[0]) for a, b in zip(short, alone25, strict=True))


def test_datamodel_fit_recovers_a_linear_utility():
    rng = np.random.default_rng(0)
    A = np.array([rng.permutation(np.r_[np.ones(3), np.zeros(3)]) for _ in range(60)])
    true = np.array([0.10, -0.05, 0.0, 0.08, 0.0, 0.02])
    y = 0.5 + A @ true + 0.002 * rng.standard_normal(60)
    coef = V.datamodel_fit(A, y, alpha=1e-5)
    assert np.allclose(coef, true, atol=0.01)
    assert list(V.select_top_k(coef, 2)) == [0, 3]


# --- data and the feature premise --------------------------------------------------------------
def test_data_rules_noise_and_pool():
    cfg = pipeline.resolve("kmm-dataset-valuation", "default")
    p = cfg["params"]
    d = data.make_seed_data(np.random.default_rng(0), p)
    assert d["aux_x"].shape == (10, 400, 16)
    # flipped fraction close to each dataset's rate, and the rest follow the rule
    world = data.World(np.random.default_rng(0), p["n_subpops"], p["dim"], p["n_classes"],
                       p["centre_scale"])
    for j in (0, 3, 9):
        assert abs(d["aux_flipped"][j].mean() - p["pool"][j]["noise"]) < 0.06
        sub = d["aux_subpop"][j]
        assert set(np.unique(sub)) <= set(p["pool"][j]["subpops"])
        x = d["aux_x"][j]
        clean = np.einsum("ncd,nd->nc", world.rules[sub], x - world.centres[sub]).argmax(1)
        keep = ~d["aux_flipped"][j]
        assert (clean[keep] == d["aux_y"][j][keep]).all()
        assert (clean[~keep] != d["aux_y"][j][~keep]).all()
    # target mixture weights
    counts = np.bincount(d["target_test_subpop"], minlength=6) / p["n_target_test"]
    assert np.allclose(counts[:4], p["target_weights"], atol=0.03) and counts[4:].sum() == 0
    assert experiment.coverage_sets(cfg)[9] == {1, 2, 3}
    assert list(np.flatnonzero(experiment.duplicate_mask(cfg))) == [0, 1, 2, 3]


def test_premise_duplicates_share_a_gradient_direction_with_full_features_only():
    cfg = pipeline.resolve("kmm-dataset-valuation", "default")
    d = data.make_seed_data(seeding.rng("test", 0), cfg["params"])
    w = experiment.warm_start(cfg, 0, d)
    C = V.cosine_matrix(experiment.features(cfg, w, d, None))
    Ck = V.cosine_matrix(experiment.features(cfg, w, d, 4))
    iu = np.triu_indices(4, 1)
    assert C[:4, :4][iu].mean() > 0.7 > Ck[:4, :4][iu].mean()
    # different sub-populations are far less aligned than the duplicates
    assert np.abs(C[4:7, 4:7][np.triu_indices(3, 1)]).mean() < C[:4, :4][iu].mean() - 0.3


# --- claims --------------------------------------------------------------------------------
def _metrics(kmm_gain=0.2, dup_ok=True, dm_time=1.0, weighted_gap=0.0, seeds=range(5)):
    rows = []
    for s in seeds:
        base = 0.55 + 0.01 * s
        for k in (3, 4):
            rows.append({"method": "alignment", "setting": f"k{k}", "seed": s,
                         "test_acc": base, "n_duplicates": 4.0 if dup_ok else 1.0,
                         "coverage": 1.0, "valuation_cpu_s": 1e-4})
            rows.append({"method": "kmm", "setting": f"k{k}", "seed": s,
                         "test_acc": base + kmm_gain + 0.003 * s,
                         "n_duplicates": 1.0 if dup_ok else 3.0, "coverage": 4.0,
                         "valuation_cpu_s": 1e-3, "dup_cos": 0.9, "a_pop_cos": 0.6})
            rows.append({"method": "kmm-weighted", "setting": f"k{k}", "seed": s,
                         "test_acc": base + kmm_gain + 0.003 * s + weighted_gap
                         + 0.002 * (s % 2),
                         "n_duplicates": 1.0, "coverage": 4.0, "valuation_cpu_s": 1e-3})
            rows.append({"method": "random", "setting": f"k{k}", "seed": s,
                         "test_acc": base + 0.005 * (s % 2), "n_duplicates": 1.6,
                         "coverage": 2.8, "valuation_cpu_s": 0.0})
        rows.append({"method": "datamodel", "setting": "k4", "seed": s,
                     "test_acc": base + kmm_gain + 0.004 * (s % 3), "n_duplicates": 2.0,
                     "coverage": 3.0, "valuation_cpu_s": dm_time * (1 + 0.1 * s)})
    return pd.DataFrame(rows)


def _curves(m):
    rows = []
    for _, r in m.iterrows():
        for j in range(int(r["n_duplicates"]) if r["method"] != "random" else 0):
            rows.append({"method": r["method"], "setting": r["setting"], "seed": r["seed"],
                         "step": j, "metric": "selected", "value": 1.0})
    return pd.DataFrame(rows, columns=["method", "setting", "seed", "step", "metric", "value"])


def _verdicts(m):
    cfg = pipeline.resolve("kmm-dataset-valuation", "default")
    return {c.id: c.verdict for c in claims.check(cfg, m, _curves(m))}


def test_claims_pass_on_data_built_to_pass():
    v = _verdicts(_metrics())
    assert all(x == REPRODUCED for x in v.values()), v


def test_claims_fail_on_data_built_to_fail():
    v = _verdicts(_metrics(kmm_gain=-0.1, dup_ok=False, dm_time=1e-3, weighted_gap=-0.1))
    assert all(x == NOT_REPRODUCED for x in v.values()), v


def test_claim_with_a_failed_run_cannot_pass_and_needs_enough_seeds():
    m = _metrics()
    m.loc[(m["method"] == "kmm") & (m["seed"] == 2), "test_acc"] = np.nan
    cfg = pipeline.resolve("kmm-dataset-valuation", "default")
    c = claims.claim1(cfg, m, _curves(m))
    assert c.verdict != REPRODUCED and "2" in c.to_dict()["note"]
    few = _metrics(seeds=range(2))
    assert claims.claim2(cfg, few, _curves(few)).verdict == INCONCLUSIVE


# --- config and pipeline ---------------------------------------------------------------------
@pytest.mark.parametrize("key, bad", [("steps", -1), ("dm_rows", 0), ("lr", 0.0),
                                      ("feature_shots", "all"), ("unknown_key", 1)])
def test_bad_params_are_one_config_error_line(key, bad):
    cfg = pipeline.resolve("kmm-dataset-valuation", "default")
    cfg["params"][key] = bad
    with pytest.raises(ConfigError) as info:
        check_params(cfg, CONFIG)
    assert "\n" not in str(info.value) and key in str(info.value)


def test_inconsistent_params_are_one_config_error_line():
    cfg = pipeline.resolve("kmm-dataset-valuation", "default")
    for mutate, word in ((lambda c: c["params"].update(target_weights=[1.0]), "target_weights"),
                         (lambda c: c["params"].update(duplicate_group=["D99"]), "D99"),
                         (lambda c: c["settings"].update(k12={"k": 12}), "k=12")):
        bad = copy.deepcopy(cfg)
        mutate(bad)
        with pytest.raises(ConfigError, match=word):
            experiment.check_params(bad)
    bad = copy.deepcopy(cfg)
    bad["settings"]["k4"] = {"k": 0}
    with pytest.raises(ConfigError):
        check_params(bad, CONFIG)


def test_pipeline_smoke(tmp_path):
    cfg = pipeline.resolve("kmm-dataset-valuation", "smoke")
    out = pipeline.run_inprocess(cfg, tmp_path)
    m = pd.read_csv(out["metrics"])
    assert set(m["method"]) == set(cfg["methods"]) and len(m) == 2 * len(cfg["methods"])
    assert ((m["test_acc"] > 0.25) & (m["test_acc"] <= 1)).all()
    # the references: no auxiliary data vs every dataset
    t = m[m["method"] == "target-only"]["n_selected"]
    a = m[m["method"] == "all"]["n_selected"]
    assert (t == 0).all() and (a == 10).all()
    kmm = m[m["method"] == "kmm"]
    assert (kmm["kmm_kkt"] < 1e-6).all() and (kmm["n_selected"] <= 4).all()
    assert sorted(p.name for p in out["figures"].glob("*.png")) == [
        "accuracy_vs_budget.png", "coverage.png", "scores.png"]
