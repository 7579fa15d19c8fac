"""Behaviour tests of ia-sft: the scene generator, the autoencoder's backward pass, the
change features, the head against scikit-learn, the influence against a brute-force refit,
the selection rules, the AFCD head, the claim checkers on data built to fail and to pass,
the params schema and the pipeline end to end (smoke)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from icml26 import pipeline
from icml26.claims import NOT_REPRODUCED, REPRODUCED
from icml26.papers.ia_sft import claims, experiment, features, head, scene, selection

SCENE_P = {"size": 32, "bands": 12, "n_endmembers": 5, "field_sigma": 2.0, "temperature": 0.5,
           "blob_radius": [2.0, 5.0], "aspect_min": 0.5, "gain_sd": 0.03, "noise_sd": 0.0}


def _blobs(rng, n=300, d=3):
    """Two multimodal classes in d dimensions (a small kernel problem)."""
    centres = rng.normal(0, 2.0, (4, d))
    lab = rng.integers(0, 4, n)
    return centres[lab] + 0.7 * rng.standard_normal((n, d)), (lab % 2).astype(np.int64)


# --- scene -----------------------------------------------------------------------------------
def test_scene_follows_the_linear_mixing_model():
    rng = np.random.default_rng(0)
    s = scene.make_scene(rng, SCENE_P, [10, 12])
    em = s["endmembers"]
    assert np.allclose(em.min(1), 0.05) and np.allclose(em.max(1), 0.6)
    assert np.allclose(s["a1"].sum(0), 1.0) and np.allclose(s["a2"].sum(0), 1.0)
    assert np.allclose(s["x1"], s["a1"].T @ em)
    changed = s["y"].astype(bool)
    # unchanged pixels keep their mix; a changed pixel's dominant endmember always changes
    assert np.array_equal(s["a1"][:, ~changed], s["a2"][:, ~changed])
    assert np.all(s["a1"][:, changed].argmax(0) != s["a2"][:, changed].argmax(0))
    # date 2 without noise = mix x per-band gain, the same gain for every pixel
    ratio = s["x2"][~changed] / s["x1"][~changed]
    assert np.allclose(ratio, ratio[0]) and not np.allclose(ratio[0], 1.0)
    assert 0.05 < changed.mean() < 0.6


def test_labelled_pixels_are_uniform_not_balanced():
    lab = scene.labelled_pixels(np.random.default_rng(1), 1000, 40)
    assert len(np.unique(lab)) == 40 and np.all(np.diff(lab) > 0)
    # over many draws the labelled class ratio follows the pool's ratio (here 20% positives)
    y = np.zeros(1000, int)
    y[:200] = 1
    share = [y[scene.labelled_pixels(np.random.default_rng(s), 1000, 40)].mean()
             for s in range(300)]
    assert np.mean(share) == pytest.approx(0.2, abs=0.01)


# --- features ----------------------------------------------------------------------------------
def test_autoencoder_backward_matches_finite_differences():
    rng = np.random.default_rng(2)
    ae = features.SpectralAutoencoder(hidden=6, code=3).init(5, rng)
    x = rng.standard_normal((7, 5))
    _, grads = ae.loss_and_grads(x)
    eps = 1e-6
    for p, g in zip(ae.params_, grads, strict=True):
        for i in range(min(p.size, 6)):
            idx = np.unravel_index(i, p.shape)
            old = p[idx]
            p[idx] = old + eps
            up = ae.loss_and_grads(x)[0]
            p[idx] = old - eps
            dn = ae.loss_and_grads(x)[0]
            p[idx] = old
            assert g[idx] == pytest.approx((up - dn) / (2 * eps), abs=1e-7)


def test_autoencoder_learns_low_rank_spectra():
    rng = np.random.default_rng(3)
    s = scene.make_scene(rng, {**SCENE_P, "bands": 40}, [10, 12])
    x = features.standardise(np.concatenate([s["x1"], s["x2"]]))
    ae = features.SpectralAutoencoder(steps=150).fit(x, rng)
    assert ae.loss_[-10:].mean() < 0.1 * ae.loss_[:3].mean()
    assert ae.encode(x).shape == (len(x), 16)


def test_change_features_by_hand():
    size = 3
    e1 = np.zeros((9, 1))
    e2 = np.zeros((9, 1))
    e2[4] = 3.0            # one changed centre pixel
    z = features.ae_change_features(e1, e2, size, window=3)
    # raw columns before standardising: |e1 - e2| = 3 at the centre; the 3x3 mean (nearest
    # padding) is 3/9 everywhere, so that column is constant and stays 0 after standardising
    d = np.zeros(9)
    d[4] = 3.0
    assert np.allclose(z[:, 2], (d - d.mean()) / d.std())
    assert np.allclose(z[:, 3], 0.0)
    assert np.allclose(z.mean(0), 0.0)


def test_raw_features_equal_sklearn_pca_up_to_sign():
    from sklearn.decomposition import PCA

    rng = np.random.default_rng(4)
    x1, x2 = rng.random((200, 6)), rng.random((200, 6))
    z = features.raw_change_features(x1, x2, 4)
    f = features.standardise(np.concatenate([x1, x2, np.abs(x1 - x2)], axis=1))
    ref = features.standardise(PCA(4).fit_transform(f))
    for k in range(4):
        assert abs(np.corrcoef(z[:, k], ref[:, k])[0, 1]) == pytest.approx(1.0, abs=1e-8)


def test_random_fourier_features_approximate_the_rbf_kernel():
    rng = np.random.default_rng(5)
    z = rng.standard_normal((6, 3))
    rff = features.RandomFourierFeatures(40000, 1.5).fit(3, rng)
    phi = rff.transform(z)
    d2 = ((z[:, None] - z[None]) ** 2).sum(-1)
    assert np.abs(phi @ phi.T - np.exp(-d2 / (2 * 1.5 ** 2))).max() < 0.03
    # the bandwidth is the median pairwise distance
    assert features.median_distance(z, rng, 6) == pytest.approx(
        np.median(np.sqrt(d2[np.triu_indices(6, 1)])))


# --- head and influence ------------------------------------------------------------------------
def test_logistic_head_matches_sklearn_on_the_same_features():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(6)
    z, y = _blobs(rng)
    phi = features.RandomFourierFeatures(30, 2.0).fit(3, rng).transform(z)
    w = np.where(np.arange(len(y)) < 40, 1.0, 0.5)          # labelled 1, pseudo 0.5
    alpha = 1e-2
    ours = head.LogisticHead(alpha, gtol=1e-10).fit(phi, y, w)
    ref = LogisticRegression(C=1.0 / (alpha * w.sum()), tol=1e-12, max_iter=10000)
    ref.fit(phi, y, sample_weight=w)
    assert np.allclose(ours.coef_[:-1], ref.coef_[0], atol=1e-4)
    assert ours.coef_[-1] == pytest.approx(ref.intercept_[0], abs=1e-4)
    assert np.allclose(ours.decision(phi), ref.decision_function(phi), atol=1e-4)


def test_head_gradient_and_hessian_by_finite_differences():
    rng = np.random.default_rng(7)
    z, y = _blobs(rng, 80)
    phi = features.RandomFourierFeatures(6, 2.0).fit(3, rng).transform(z)
    h = head.LogisticHead(1e-2).fit(phi, y, np.ones(len(y)))
    a = head.augment(phi)
    theta = h.coef_ + 0.1 * rng.standard_normal(7)
    h.coef_ = theta
    eps = 1e-6
    _, g = h.objective(theta, a, y, np.ones(len(y)), len(y))
    H = h.hessian()
    for i in range(7):
        e = np.zeros(7)
        e[i] = eps
        up, gu = h.objective(theta + e, a, y, np.ones(len(y)), len(y))
        dn, gd = h.objective(theta - e, a, y, np.ones(len(y)), len(y))
        assert g[i] == pytest.approx((up - dn) / (2 * eps), abs=1e-7)
        assert np.allclose(H[:, i], (gu - gd) / (2 * eps), atol=1e-6)


def test_influence_matches_brute_force_refit():
    """Upweight a candidate by eps (J + eps l(z)), refit, and compare the change of the mean
    labelled loss with I(z) eps (central difference)."""
    rng = np.random.default_rng(8)
    z, y = _blobs(rng, 120)
    phi = features.RandomFourierFeatures(10, 2.0).fit(3, rng).transform(z)
    lab, pseudo, cand = np.arange(20), np.arange(20, 100), np.arange(100, 120)
    y_hat = y.copy()
    y_hat[cand[::3]] = 1 - y_hat[cand[::3]]                   # some wrong pseudo-labels
    idx = np.concatenate([lab, pseudo])
    w = np.where(idx < 20, 1.0, 0.5)
    W = w.sum()
    h = head.LogisticHead(1e-2, gtol=1e-11).fit(phi[idx], y[idx], w)
    infl = h.influence(phi[lab], y[lab], phi[cand], y_hat[cand])
    eps = 1e-4
    for j, c in enumerate(cand[:8]):
        losses = []
        for sign in (1, -1):
            hi = head.LogisticHead(1e-2, gtol=1e-11).fit(
                np.vstack([phi[idx], phi[c][None]]), np.r_[y[idx], y_hat[c]],
                np.r_[w, sign * eps * W], norm=W)
            losses.append(hi.labelled_loss(phi[lab], y[lab]))
        brute = (losses[0] - losses[1]) / (2 * eps)
        assert infl[j] == pytest.approx(brute, rel=1e-3, abs=1e-7)
    # wrong pseudo-labels pull against the labelled data: larger influence on average
    wrong = y_hat[cand] != y[cand]
    assert infl[wrong].mean() > infl[~wrong].mean()


def test_afcd_gradient_by_finite_differences_and_fit_lowers_loss():
    rng = np.random.default_rng(9)
    z, y = _blobs(rng, 100)
    p1 = features.RandomFourierFeatures(5, 2.0).fit(3, rng).transform(z)
    p2 = features.RandomFourierFeatures(4, 2.0).fit(3, rng).transform(z + 0.1)
    a1, a2, w = head.augment(p1), head.augment(p2), np.ones(len(y))
    m = head.AFCDHead(1e-2)
    theta = rng.standard_normal(6 + 5 + 1)
    _, g = m.objective(theta, a1, a2, y, w, len(y))
    eps = 1e-6
    for i in range(len(theta)):
        e = np.zeros(len(theta))
        e[i] = eps
        num = (m.objective(theta + e, a1, a2, y, w, len(y))[0]
               - m.objective(theta - e, a1, a2, y, w, len(y))[0]) / (2 * eps)
        assert g[i] == pytest.approx(num, abs=1e-7)
    m.fit(p1, p2, y, w)
    local = head.LogisticHead(1e-2).fit(p1, y, w)
    # the fused head can always switch its global branch off, so it fits at least as well
    fused = m.objective(m.coef_, a1, a2, y, w, len(y))[0]
    alone = local.objective(local.coef_, a1, y, w, len(y))[0]
    assert fused <= alone + 1e-8 and 0 < m.gate_ < 1


# --- selection rules ---------------------------------------------------------------------------
P_SEL = {"alpha": 1e-2, "rounds": 2, "tau_high": 0.9, "tau_low": 0.7, "band_low": 0.6,
         "ia_cap": 0.2, "pseudo_weight": 0.5}


def _sel_problem():
    rng = np.random.default_rng(10)
    z, y = _blobs(rng, 600)
    rff = features.RandomFourierFeatures(40, features.median_distance(z, rng, 300)).fit(3, rng)
    fac = selection.HeadFactory(z, rff, P_SEL)
    lab = np.sort(rng.choice(600, 30, replace=False))
    return fac, y, lab, np.setdiff1d(np.arange(600), lab)


def _round_prediction(fac, y, lab, unl, prev):
    idx = np.concatenate([lab, unl[prev.idx]]) if prev else lab
    yv = np.concatenate([y[lab], prev.label]) if prev else y[lab]
    w = np.r_[np.ones(len(lab)), np.full(len(idx) - len(lab), 0.5)]
    h, phi = fac.fit(idx, yv, w)
    t = h.decision(phi[unl])
    p = head.sigmoid(t)
    return t, np.maximum(p, 1 - p)


def test_conf_rule_accepts_exactly_the_confident_pixels():
    fac, y, lab, unl = _sel_problem()
    rounds, (idx, yv, w) = selection.self_train(fac, y, lab, unl, P_SEL, "conf", tau=0.7)
    t, c = _round_prediction(fac, y, lab, unl, rounds[0])
    assert np.array_equal(rounds[1].idx, np.flatnonzero(c >= 0.7))
    assert np.array_equal(rounds[1].label, (t[c >= 0.7] > 0).astype(int))
    assert np.array_equal(rounds[1].low, c[c >= 0.7] < 0.9)
    assert np.array_equal(w, np.r_[np.ones(30), np.full(len(rounds[1].idx), 0.5)])


def test_ia_rule_keeps_the_most_negative_influences_within_the_cap():
    fac, y, lab, unl = _sel_problem()
    rounds, _ = selection.self_train(fac, y, lab, unl, P_SEL, "ia")
    r0 = rounds[0]
    t, c = _round_prediction(fac, y, lab, unl, None)
    hc = c >= 0.9
    cand = np.flatnonzero((c >= 0.6) & ~hc)
    assert np.array_equal(r0.cand_idx, cand) and r0.n_hc == hc.sum()
    # recompute the influences from a head refitted on L + HC by hand
    yhat = (t > 0).astype(int)
    h2 = head.LogisticHead(1e-2).fit(
        fac.phi[np.r_[lab, unl[hc]]], np.r_[y[lab], yhat[hc]],
        np.r_[np.ones(len(lab)), np.full(hc.sum(), 0.5)])
    infl = h2.influence(fac.phi[lab], y[lab], fac.phi[unl[cand]], yhat[cand])
    assert np.allclose(r0.influence, infl)
    chosen = np.sort(unl[r0.idx[r0.low]])
    k = min(int((infl < 0).sum()), int(0.2 * len(cand)))
    assert np.array_equal(chosen, np.sort(unl[cand[np.argsort(infl)[:k]]]))
    assert np.all(infl[np.isin(cand, r0.idx[r0.low])] < 0)
    assert np.array_equal(np.sort(r0.idx[~r0.low]), np.flatnonzero(hc))


def test_random_and_oracle_rules_take_the_given_count():
    fac, y, lab, unl = _sel_problem()
    for rule in ("random", "oracle"):
        rounds, _ = selection.self_train(fac, y, lab, unl, P_SEL, rule, counts=[5, 7],
                                         rng=np.random.default_rng(0))
        assert [int(r.low.sum()) for r in rounds] == [5, 7]
        for r in rounds:
            assert np.all(np.isin(r.idx[r.low], r.cand_idx))
            if rule == "oracle":
                assert np.all(r.label[r.low] == y[unl[r.idx[r.low]]])


def test_supervised_has_no_rounds():
    fac, y, lab, unl = _sel_problem()
    rounds, (idx, yv, w) = selection.self_train(fac, y, lab, unl, P_SEL, None)
    assert rounds == [] and np.array_equal(idx, lab) and np.all(w == 1)


# --- claims ------------------------------------------------------------------------------------
def _metrics(f1, prec_low, prec_all, seeds=range(5)):
    rows = []
    for seed in seeds:
        for s in ("V1", "V2", "V3"):
            for m in experiment.METHOD_SPECS:
                jitter = 0.002 * ((seed * 7 + len(s)) % 3)
                rows.append({"method": m, "setting": s, "seed": seed,
                             "f1": f1.get(m, 0.7) + jitter,
                             "prec_low": prec_low.get(m, np.nan) + jitter,
                             "prec_all": prec_all.get(m, 0.95), "n_low": 10.0,
                             "acc_frac_changed": 0.2, "pool_frac_changed": 0.25,
                             "prec_candidates": 0.8})
    return pd.DataFrame(rows)


PASS = ({"supervised": 0.70, "conf-high": 0.75, "random-low": 0.76, "ia-sft": 0.80,
         "conf-high-rawfeat": 0.60, "ia-sft-rawfeat": 0.63},
        {"random-low": 0.75, "conf-0.7": 0.8, "ia-sft": 0.95},
        {"conf-0.7": 0.90, "ia-sft": 0.97})
FAIL = ({"supervised": 0.80, "conf-high": 0.80, "random-low": 0.82, "ia-sft": 0.78,
         "conf-high-rawfeat": 0.63, "ia-sft-rawfeat": 0.60},
        {"random-low": 0.80, "conf-0.7": 0.8, "ia-sft": 0.82},
        {"conf-0.7": 0.97, "ia-sft": 0.90})


def test_claims_pass_on_data_built_to_pass():
    cfg = pipeline.resolve("ia-sft", "default")
    out = claims.check(cfg, _metrics(*PASS), pd.DataFrame())
    assert [c.verdict for c in out] == [REPRODUCED] * 4, [(c.id, c.verdict) for c in out]
    note = out[0].to_dict()["note"]
    assert "IA-SFT 0.802" in note and "Supervised 0.702" in note    # computed, with jitter


def test_claims_fail_on_data_built_to_fail():
    cfg = pipeline.resolve("ia-sft", "default")
    out = claims.check(cfg, _metrics(*FAIL), pd.DataFrame())
    assert [c.verdict for c in out] == [NOT_REPRODUCED] * 4, [(c.id, c.verdict) for c in out]


def test_a_failed_run_is_named_and_cannot_pass():
    cfg = pipeline.resolve("ia-sft", "default")
    m = _metrics(*PASS)
    m.loc[(m["method"] == "ia-sft") & (m["seed"] == 3) & (m["setting"] == "V2"),
          "prec_low"] = np.nan
    c2 = claims.check(cfg, m, pd.DataFrame())[1].to_dict()
    assert c2["verdict"] != REPRODUCED and "seeds 3" in c2["note"]


def test_claims_read_main_variants_only_and_premises():
    cfg = pipeline.resolve("ia-sft", "full")
    assert claims.main_settings(cfg) == ["V1", "V2", "V3"]
    m = _metrics(*PASS)
    m["frac_changed"], m["n_lab_changed"], m["n_labelled"] = 0.27, 11.0, 40.0
    m["frac_wrong_positive"], m["infl_mean_correct"], m["infl_mean_wrong"] = 0.9, -1.0, 0.5
    assert [r["held"] for r in claims.premises(cfg, m)] == ["yes", "yes", "yes"]
    m["frac_changed"], m["n_lab_changed"], m["frac_wrong_positive"] = 0.45, 18.0, 0.3
    assert [r["held"] for r in claims.premises(cfg, m)] == ["no", "no", "no"]


# --- config and pipeline -----------------------------------------------------------------------
def test_bad_params_are_one_config_error_line_naming_the_key():
    from icml26.config import check_params
    from icml26.errors import ConfigError

    root = Path(__file__).resolve().parents[2] / "config"
    for key, value in (("rounds", 0), ("tau_high", 1.5), ("head", "linear"), ("typo_key", 1),
                       ("blob_radius", [4.0])):
        cfg = pipeline.resolve("ia-sft", "default")
        cfg["params"][key] = value
        with pytest.raises(ConfigError) as info:
            check_params(cfg, root)
        assert "\n" not in str(info.value) and key in str(info.value)
    cfg = pipeline.resolve("ia-sft", "default")
    cfg["settings"]["V1"]["decoder"] = "transformer"
    with pytest.raises(ConfigError, match="decoder"):
        check_params(cfg, root)


def test_pipeline_smoke_is_deterministic(tmp_path):
    cfg = pipeline.resolve("ia-sft", "smoke")
    a = pipeline.run_inprocess(cfg, tmp_path / "a")
    # one job per method: Random-low and Oracle recompute IA-SFT's selection in their shard
    b = pipeline.run_inprocess(pipeline.resolve("ia-sft", "smoke", shard_by=["method"]),
                               tmp_path / "b")
    assert a["metrics"].read_bytes() == b["metrics"].read_bytes()
    m = pd.read_csv(a["metrics"]).set_index("method")
    assert set(m.index) == set(experiment.METHOD_SPECS)
    # paired: every method sees the same scene and labelled pixels
    assert m["frac_changed"].nunique() == 1 and m["n_lab_changed"].nunique() == 1
    # the AFCD variant shares IA-SFT's selection; Random-low and Oracle take its count
    for col in ("n_accepted", "prec_all"):
        assert m.loc["ia-sft-afcd", col] == m.loc["ia-sft", col]
    assert m.loc["random-low", "n_low"] == m.loc["ia-sft", "n_low"]
    assert m.loc["oracle", "prec_low"] == 1.0
    assert (a["figures"] / "f1_by_method.png").exists()
    assert "premises, checked against this run" in a["report_md"].read_text()


def test_full_profile_paths_mlp_head_label_budget_and_afcd_setting():
    """The full profile's pieces on a small scene: the MLP head (last-layer influence), a
    setting with its own label budget and the AFCD ablation setting."""
    cfg = pipeline.resolve("ia-sft", "smoke")
    cfg["params"].update(head="mlp", mlp_steps=30, size=24, ae_steps=20)
    cfg["settings"] = {"V1": {"variant": 1, "n_blobs": [6, 8]},
                       "V1-L20": {"variant": 1, "n_blobs": [6, 8], "n_labelled": 20},
                       "V1-afcd": {"variant": 1, "n_blobs": [6, 8], "decoder": "afcd"}}
    cfg["methods"] = ["supervised", "ia-sft", "random-low"]
    from icml26.grid import runs

    grid_runs = runs(cfg)
    data = experiment.prepare(cfg, None)
    state, _ = experiment.train(cfg, data, grid_runs)
    rows = {(r.method, r.setting): row for r, row in
            zip(grid_runs, experiment.evaluate(cfg, data, grid_runs, state, None), strict=True)}
    assert rows[("ia-sft", "V1-L20")]["n_labelled"] == 20
    assert rows[("ia-sft", "V1")]["n_labelled"] == 40
    # same variant -> same scene; the AFCD setting gives every method the gated decoder
    assert rows[("ia-sft", "V1")]["frac_changed"] == rows[("ia-sft", "V1-afcd")]["frac_changed"]
    assert all(0 < rows[(m, "V1-afcd")]["gate"] < 1 for m in cfg["methods"])
    assert np.isnan(rows[("ia-sft", "V1")]["gate"])
    assert rows[("random-low", "V1")]["n_low"] == rows[("ia-sft", "V1")]["n_low"]
    assert all(0 <= row["f1"] <= 1 for row in rows.values())
