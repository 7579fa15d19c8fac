"""Behaviour tests of outformer: the priors' marginals against scipy.stats and their outliers
against the inliers, the curriculum rules by hand, the PFN's attention mask and per-run
independence, the per-run gradient clip against torch's, the classical detectors against
scikit-learn and brute force, the scikit-learn tasks, the claim checkers on metrics built to
pass and to fail, params validation, and the pipeline at smoke scale."""

import copy
import json

import numpy as np
import pandas as pd
import pytest
import torch

from icml26 import pipeline
from icml26.claims import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED
from icml26.config import check_params
from icml26.errors import ConfigError
from icml26.grid import Run
from icml26.papers.outformer import claims, experiment, pfn, pretrain, priors

P = dict(d_max=8, n_bins=3, batch=2, epoch_steps=2, steps=4, heads=2, width=8, layers=1,
         ffn=8, ctx_min=12, ctx_max=16, query_inliers=3, query_outliers=3, lr=1e-3,
         warmup_frac=0.25, beta1=0.9, beta2=0.999, weight_decay=0.0, grad_clip=1.0,
         temperature=0.5, ema_gamma=0.1, filter_start=0.2, filter_max=0.95,
         filter_reach=0.8)


# --- priors --------------------------------------------------------------------------------
def test_marginals_match_scipy_ppf():
    from scipy import stats

    z = np.linspace(-3, 3, 13)
    u = stats.norm.cdf(z)
    assert np.allclose(priors._to_marginal(z, ("normal", 0.3, 1.7)),
                       stats.norm.ppf(u, 0.3, 1.7), atol=1e-6)
    assert np.allclose(priors._to_marginal(z, ("beta", 2.0, 5.0)),
                       stats.beta.ppf(u, 2.0, 5.0), atol=1e-6)
    assert np.allclose(priors._to_marginal(z, ("expo", 1.5, 0.0)),
                       stats.expon.ppf(u, scale=1 / 1.5), atol=1e-6)
    assert np.allclose(priors._to_marginal(z, ("student", 4.0, 0.0)),
                       stats.t.ppf(u, 4), atol=1e-6)
    # the official mixture marginals: a linear map of u onto [lo, hi]
    assert np.allclose(priors._to_marginal(z, ("uniform", -5.0, 5.0)), -5 + 10 * u)
    assert priors.chi2_quantile(0.95, 3) == pytest.approx(stats.chi2.ppf(0.95, 3), rel=1e-9)


def test_power_law_bins_by_hand():
    assert priors.dim_bins(2, 8, 3) == [(2, 3), (3, 5), (5, 9)]
    # official edges 2 + 98 (i/5)^2 rounded: 2, 6, 18, 37, 65, then d_max + 1
    assert priors.dim_bins(2, 100, 5) == [(2, 6), (6, 18), (18, 37), (37, 65), (65, 101)]


@pytest.mark.parametrize("prior", priors.PRIORS)
def test_priors_are_seeded_finite_and_shaped(prior):
    a = priors.draw(prior, 5, 40, 7, np.random.default_rng(3))
    b = priors.draw(prior, 5, 40, 7, np.random.default_rng(3))
    assert a[0].shape == (40, 5) and a[1].shape == (7, 5)
    assert np.isfinite(a[0]).all() and np.isfinite(a[1]).all()
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def _knn_auc(prior, d, seed, n=10):
    from sklearn.metrics import roc_auc_score

    out = []
    rng = np.random.default_rng(seed)
    for _ in range(n):
        inl, outl = priors.draw(prior, d, 300, 40, rng)
        s = experiment.classical_scores("knn", inl[:200], np.concatenate([inl[200:], outl]),
                                        {"knn_k": 5}, 0)
        out.append(roc_auc_score(np.r_[np.zeros(100), np.ones(40)], s))
    return float(np.mean(out))


def test_gmm_outliers_are_far_from_the_inliers():
    # inliers below the chi2 0.85 quantile, outliers above 0.95 of every component
    assert _knn_auc("gmm", 4, 0) > 0.9


def test_dependence_outliers_break_the_positive_correlation():
    from scipy import stats

    rng = np.random.default_rng(1)
    gaps = []
    for _ in range(10):
        inl, out = priors.draw("dependence_copula", 4, 400, 400, rng)
        r_in = stats.spearmanr(inl).statistic
        r_out = stats.spearmanr(out).statistic
        off = ~np.eye(4, dtype=bool)
        gaps.append(r_in[off].mean() - r_out[off].mean())
    assert np.mean(gaps) > 0.1                      # inliers: all-positive correlation


def test_probabilistic_outliers_sit_in_a_marginal_tail():
    rng = np.random.default_rng(2)
    inl, out = priors.draw("probabilistic_copula", 5, 2000, 300, rng)
    # the pushed coordinate is in the lower or upper 20% of its inlier marginal
    lo, hi = np.quantile(inl, 0.2, axis=0), np.quantile(inl, 0.8, axis=0)
    tail_out = ((out < lo) | (out > hi)).any(1).mean()
    tail_in = ((inl < lo) | (inl > hi)).any(1).mean()
    assert tail_out > 0.97 and tail_out > tail_in


def test_structure_outliers_differ_from_inliers():
    assert _knn_auc("structure_scm", 4, 4) > 0.6


# --- curriculum ----------------------------------------------------------------------------
def test_filter_schedule_and_softmax_by_hand():
    p = {"filter_start": 0.2, "filter_reach": 0.8, "filter_max": 0.95}
    assert pretrain.filter_ratio(0, 10, p) == pytest.approx(0.2)
    assert pretrain.filter_ratio(2, 10, p) == pytest.approx(0.2 + 0.8 * np.sqrt(0.25))
    assert pretrain.filter_ratio(8, 10, p) == pytest.approx(0.95)
    assert pretrain.softmax([0.0, np.log(3) * 0.5], 0.5) == pytest.approx([0.25, 0.75])


def test_category_weights_favour_learnable_categories():
    loss = np.array([[0.5, 0.5], [0.1, 0.1], [2.0, 2.0]])   # 3 tasks x 2 query points
    cat_of = np.array([0, 1, 2])
    w = pretrain.update_weights([0.0, 0.0, 0.0, 0.4], loss, cat_of, 0.1)
    assert w == pytest.approx([0.9 * 0.25, 0.9 * 0.09, 0.9 * (2 - 4), 0.4])  # absent keeps w
    assert np.argmax(w[:3]) == 0                          # m = 0.5 scores highest


def test_keep_mask_keeps_the_lowest_losses():
    loss = np.array([[0.9, 0.1], [0.5, 0.3]])
    assert pretrain.keep_mask(loss, 0.5).tolist() == [[0, 1], [0, 1]]
    assert pretrain.keep_mask(loss, 0.75).tolist() == [[0, 1], [1, 1]]


# --- the network ---------------------------------------------------------------------------
def test_preprocess_by_hand():
    ctx = np.array([[0.0, 10.0], [2.0, 10.0]])
    q = np.array([[1.0, 10.0], [100.0, 12.0]])
    x = pfn.preprocess(ctx, q, 4)
    # z = (x - mean) / sd, s.d. 1 for the constant column, clipped at 20, times 4 / 2
    assert x.tolist() == [[-2, 0, 0, 0], [2, 0, 0, 0], [0, 0, 0, 0], [40, 4, 0, 0]]
    assert pfn.preprocess(ctx, q, 4, perm=[1, 0])[3].tolist() == [4, 40, 0, 0]


def test_queries_see_the_context_and_not_each_other():
    params = pfn.init_params([1], 8, 2, 8, 4, "cpu")
    x = torch.randn(1, 1, 10, 4)
    base = pfn.forward(params, x, 6, 2)
    x2 = x.clone()
    x2[0, 0, 8] += 5.0                                   # move one query
    moved = pfn.forward(params, x2, 6, 2)
    keep = [0, 1, 3]
    assert torch.allclose(base[0, 0, keep], moved[0, 0, keep], atol=1e-6)
    assert not torch.allclose(base[0, 0, 2], moved[0, 0, 2])
    x3 = x.clone()
    x3[0, 0, 0] += 5.0                                   # move one context row
    assert not torch.allclose(base, pfn.forward(params, x3, 6, 2))


def test_clip_per_run_matches_torch_clip():
    params = pfn.init_params([1, 2], 8, 1, 8, 4, "cpu")
    for i, t in enumerate(params.values()):
        t.grad = torch.full_like(t, 0.1 * (i + 1))
        t.grad[1] *= 0.01
    ref = [[t.grad[r].clone() for t in params.values()] for r in range(2)]
    for r in range(2):
        torch.nn.utils.clip_grad_norm_([torch.nn.Parameter(g) for g in ref[r]], 1.0)
    leaves = []
    for r in range(2):
        ps = [torch.nn.Parameter(torch.zeros_like(g)) for g in ref[r]]
        for p_, g in zip(ps, [t.grad[r].clone() for t in params.values()], strict=True):
            p_.grad = g
        torch.nn.utils.clip_grad_norm_(ps, 1.0)
        leaves.append([p_.grad for p_ in ps])
    pfn.clip_per_run(params, 1.0)
    for r in range(2):
        for t, g in zip(params.values(), leaves[r], strict=True):
            assert torch.allclose(t.grad[r], g, rtol=1e-5, atol=1e-7)


def test_runs_train_independently_of_their_batch_mates():
    cfg = {"paper": "outformer-test", "params": P}
    a, b = Run("outformer", "bench", 0), Run("fomo", "bench", 1)
    both, _ = pretrain.pretrain(cfg, [a, b], "cpu")
    alone, curves = pretrain.pretrain(cfg, [a], "cpu")
    for n in both:
        assert torch.allclose(both[n][0], alone[n][0], atol=1e-5), n
    assert not torch.allclose(both["head.w"][0], both["head.w"][1])
    probs = pd.DataFrame(curves)
    probs = probs[probs["metric"].str.startswith("p:")]
    assert probs.groupby("step")["value"].sum().to_numpy() == pytest.approx(1.0)


def test_pretraining_lowers_the_gmm_loss():
    p = dict(P, steps=40, batch=4, epoch_steps=10, width=16, heads=2, ffn=16, layers=1,
             lr=3e-3, ctx_min=32, ctx_max=48, query_inliers=8, query_outliers=8)
    _, curves = pretrain.pretrain({"paper": "outformer-test", "params": p},
                                  [Run("fomo", "bench", 0)], "cpu")
    c = pd.DataFrame(curves)
    loss = c[c["metric"] == "train_loss"].sort_values("step")["value"].to_numpy()
    assert loss[-1] < np.log(2) and loss[-1] < loss[0] - 0.02    # below chance, falling


# --- classical detectors and tasks -----------------------------------------------------------
def test_knn_score_matches_brute_force_and_iforest_lof_match_sklearn():
    from sklearn.ensemble import IsolationForest
    from sklearn.neighbors import LocalOutlierFactor

    rng = np.random.default_rng(0)
    ctx, test = rng.normal(size=(40, 3)), rng.normal(size=(9, 3))
    p = {"knn_k": 5, "iforest_trees": 50, "lof_neighbors": 10}
    c, t = experiment.zscore(ctx, test)
    d = np.sqrt(((t[:, None] - c[None]) ** 2).sum(-1))
    assert np.allclose(experiment.classical_scores("knn", ctx, test, p, 0),
                       np.sort(d, 1)[:, :5].mean(1))
    ref = -IsolationForest(n_estimators=50, random_state=7).fit(c).score_samples(t)
    assert np.allclose(experiment.classical_scores("iforest", ctx, test, p, 7), ref)
    ref = -LocalOutlierFactor(n_neighbors=10, novelty=True).fit(c).score_samples(t)
    assert np.allclose(experiment.classical_scores("lof", ctx, test, p, 0), ref)
    far = np.vstack([test, [[9.0, 9.0, 9.0]]])
    for m in ("knn", "lof", "iforest"):
        s = experiment.classical_scores(m, ctx, far, p, 0)
        assert np.argmax(s) == len(far) - 1


def test_real_tasks_follow_the_split_rule():
    ctx, test, y = experiment.real_task("iris", "outformer", 160)
    assert ctx.shape == (50, 4) and len(test) == 60 and y.sum() == 10
    ctx, test, y = experiment.real_task("breast_cancer-1", "outformer", 160)
    assert ctx.shape == (160, 8) and (y == 0).sum() == 357 - 178 and y.sum() == 18
    ctx, test, y = experiment.real_task("digits-3", "outformer", 160)
    assert ctx.shape[1] == 8 and np.allclose(ctx.mean(0), 0, atol=1e-8)   # PCA on context


# --- claims --------------------------------------------------------------------------------
def _metrics(good: bool, seeds=(0, 1, 2, 3, 4)):
    tasks = ["gmm-00", "gmm-01", "dependence_copula-00", "measure_scm-00", "iris"]
    rows = []
    for s in seeds:
        j = 0.005 * s
        auc = {
            "outformer": [0.9, 0.9, 0.8 if good else 0.6, 0.8 if good else 0.6,
                          0.95 if good else 0.5],
            "fomo": [0.91, 0.9, 0.6, 0.6, 0.7],
            "iforest": [0.85, 0.85, 0.7, 0.7, 0.9],
            "lof": [0.8, 0.95, 0.7, 0.65, 0.85],
            "knn": [0.82, 0.92, 0.72, 0.7, 0.9],
        }
        if not good:
            auc["outformer"][0] = auc["outformer"][1] = 0.7
        for m, a in auc.items():
            row = {"method": m, "setting": "bench", "seed": s}
            row.update({f"auroc:{t}": v + (j if m == "outformer" else 0)
                        for t, v in zip(tasks, a, strict=True)})
            row["cpu_s_per_task"] = (0.01 if good else 0.3) + j if m == "outformer" else \
                0.1 + j
            rows.append(row)
    return pd.DataFrame(rows)


def test_claims_pass_on_metrics_built_to_pass():
    out = claims.check({}, _metrics(True), None)
    assert [c.id for c in out] == ["C1-mixture-widens-coverage", "C2-no-loss-on-gmm",
                                   "C3-competitive-rank", "C4-fast-inference"]
    for c in out:
        assert c.verdict == REPRODUCED, (c.id, c.to_dict())


def test_claims_fail_on_metrics_built_to_fail():
    for c in claims.check({}, _metrics(False), None):
        assert c.verdict == NOT_REPRODUCED, (c.id, c.to_dict())


def test_ranks_share_ties_and_failed_runs_are_named():
    m = _metrics(True)
    r = claims.average_ranks(m[m["seed"] == 0], claims.RANKED, ["auroc:gmm-01"])
    # 0.95 lof; 0.92 knn; 0.9 outformer and fomo tie at 3.5; 0.85 iforest
    assert r.loc[0].to_dict() == {"outformer": 3.5, "fomo": 3.5, "iforest": 5.0, "lof": 1.0,
                                  "knn": 2.0}
    m.loc[(m["method"] == "outformer") & (m["seed"] == 2), "auroc:gmm-00"] = np.nan
    out = {c.id: c for c in claims.check({}, m, None)}
    assert out["C2-no-loss-on-gmm"].verdict == INCONCLUSIVE
    assert "2" in out["C2-no-loss-on-gmm"].parts["gmm"].failed
    assert out["C1-mixture-widens-coverage"].verdict == REPRODUCED   # GMM task only


# --- config and pipeline ---------------------------------------------------------------------
def test_bad_params_name_the_key():
    from conftest import REPO

    cfg = pipeline.resolve("outformer", "default")
    for key, value in (("steps", -3), ("width", 0), ("typo_key", 1), ("real_tasks", ["x"])):
        bad = copy.deepcopy(cfg)
        bad["params"][key] = value
        with pytest.raises(ConfigError, match=key):
            check_params(bad, REPO / "config")
    bad = copy.deepcopy(cfg)
    del bad["params"]["lr"]
    with pytest.raises(ConfigError, match="lr"):
        check_params(bad, REPO / "config")
    bad = copy.deepcopy(cfg)
    bad["params"]["heads"] = 5
    with pytest.raises(ConfigError, match="multiple of params.heads"):
        experiment.check_params(bad)


def test_pipeline_smoke(tmp_path):
    out = pipeline.run_inprocess(pipeline.resolve("outformer", "smoke"), tmp_path)
    doc = json.loads(out["claims"].read_text())
    assert [c["id"] for c in doc["claims"]] == ["C1-mixture-widens-coverage",
                                                "C2-no-loss-on-gmm", "C3-competitive-rank",
                                                "C4-fast-inference"]
    metrics = pd.read_csv(out["metrics"])
    aucs = metrics[[c for c in metrics.columns if c.startswith("auroc:")]].to_numpy(float)
    assert np.isfinite(aucs).all() and ((aucs >= 0) & (aucs <= 1)).all()
    # classical rows do not depend on the seed; the kNN detector separates the iris task
    assert metrics.loc[metrics["method"] == "knn", "auroc:iris"].iloc[0] > 0.8
    assert sorted(p.name for p in out["figures"].glob("*.png")) == [
        "benchmark.png", "curriculum.png", "per_task.png", "speed.png"]
