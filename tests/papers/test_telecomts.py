"""Behaviour tests of the telecomts paper: the official anomaly functions on hand-solved
cases (seconds since onset, clipping), the representations (INST removes scale exactly,
INST+SCALE restores it), the summary features, the metrics and the ridge probe against
scikit-learn, the classifiers on cases with a known answer, the claim checkers on metrics
built to pass and to fail, and a bad params value."""

import numpy as np
import pandas as pd
import pytest
from conftest import REPO

from icml26 import pipeline
from icml26.claims import NOT_REPRODUCED, REPRODUCED
from icml26.config import check_params
from icml26.errors import ConfigError
from icml26.grid import Run
from icml26.papers.telecomts import claims, experiment, probe
from icml26.papers.telecomts import generator as gen
from icml26.papers.telecomts import metrics as mt
from icml26.papers.telecomts import represent as rp
from icml26.timeseries.linear import lag_matrix


@pytest.fixture(scope="module")
def cfg():
    return pipeline.resolve("telecomts", "smoke")


def _apply(fn, x, t, pars, name="RSRP", seed=0):
    x = np.atleast_2d(np.asarray(x, float))
    t = np.broadcast_to(t, x.shape).astype(float)
    m = np.ones(x.shape, bool)
    return gen.transform(np.random.default_rng(seed), fn, x, t, m,
                         [np.atleast_1d(np.asarray(v, float)) for v in pars], name, {})


# ------------------------------------------------------------------ generator (official)
def test_anomaly_functions_by_hand():
    t = np.arange(128) / gen.HZ                     # seconds since onset
    x = np.full((1, 128), 1000.0)
    # constant multiply and log decay: exact
    assert np.allclose(_apply("c_mul", x, t, [0.5]), 500.0)
    y = _apply("log_decay", x, t, [0.3])
    assert np.allclose(y, 1000.0 * (1 - 0.3 * np.log1p(t)))
    # exp growth of a flat buffer (no residual, no floor): x e^{r t}, with t in seconds, so a
    # 12.8 s window grows e^{12.8 r}, not e^{128 r}
    y = _apply("exp", x, t, [0.15], name="UL_Buffer")
    assert np.allclose(y, 1000.0 * np.exp(0.15 * t))
    assert np.isclose(y[0, -1] / y[0, 0], np.exp(0.15 * 12.7))
    # sinusoidal multiply with an offset (resource-allocation bug on bytes)
    y = _apply("sin_mul", x, t, [0.5, 1.0, 0.2])
    assert np.allclose(y, 1000.0 * 0.2 * (1 + 0.5 * np.sin(2 * np.pi * t)))


def test_logistic_growth_matches_its_official_form():
    t = np.arange(0, 2000) / gen.HZ
    x = np.full((400, t.size), 40.0)
    y = _apply("logistic", x, t, [np.full(400, 0.05)], name="PRB_Util_DL")
    mean = y.mean(axis=0)
    diff = 100.0 - 40.0
    assert abs(mean[0] - 40.0) < 0.1                            # no change at onset
    s = -2.0 * np.log((3 + np.sqrt(3)) / (3 - np.sqrt(3))) / 0.05
    assert np.isclose(s, -2.634 / 0.05, rtol=1e-3)
    # asymptote x + 0.933 diff, and only ~5 % of the headroom after one 12.8 s window
    assert abs(mean[-1] - (40.0 + 0.933 * diff)) < 0.2
    assert 0.04 < (mean[128] - 40.0) / diff < 0.07


def test_c_add_noise_and_clipping_to_official_bounds():
    p = {"T": 128}
    x = np.full((1, len(gen.KPIS), 128), 0.0)
    x[:, gen.K["RSRP"]] = -130.0
    x[:, gen.K["PRB_Util_DL"]] = 90.0
    t = np.broadcast_to(np.arange(128) / gen.HZ, (1, 128)).copy()
    m = np.ones((1, 128), bool)
    gen.inject(np.random.default_rng(0), x, np.array([2]), t, m, p)   # severe interference
    assert x[0, gen.K["RSRP"]].min() >= -135.0 and np.isclose(x[0, gen.K["RSRP"]].min(), -135)
    assert x[0, gen.K["PRB_Util_DL"]].max() <= 100.0
    y = _apply("c_add", np.zeros((1, 20000)), 0.0, [-10.0])
    assert abs(y.mean() + 10.0) < 0.01 and abs(y.std() - 0.15) < 0.01    # N(0, 0.015 |p|)


def test_onset_timing_follows_the_rules():
    p = dict(T=128, full_frac=0.5, full_elapsed_s=24.0, onset_lo=20, onset_hi=90,
             min_steps=30, duration_s=24.0)
    t, m, full = gen.onset_times(np.random.default_rng(1), 4000, p)
    assert 0.45 < full.mean() < 0.55
    assert m[full].all() and np.isclose(t[full, 0].mean(), 24.0, rtol=0.1)
    assert np.allclose(np.diff(t[full], axis=1), 0.1)            # seconds at 10 Hz
    part = m[~full]
    first = part.argmax(axis=1)
    assert first.min() >= 20 and first.max() <= 90
    assert (part.sum(axis=1) >= np.minimum(30, 128 - first)).all()
    assert (~part[:, -1]).any()                                   # some end inside


def test_dataset_is_deterministic_and_balanced(cfg):
    a, _ = experiment.seed_data(cfg, 3)
    b, _ = experiment.seed_data(cfg, 3)
    assert np.array_equal(a["x"], b["x"])
    p = cfg["params"]
    assert (a["type"] < 0).sum() == p["n_train_normal"]
    assert np.array_equal(np.bincount(a["type"][a["type"] >= 0]),
                          np.full(10, p["n_train_per_type"]))
    x = a["x"]
    for name, (lo, hi) in gen.BOUNDS.items():
        assert x[:, gen.K[name]].min() >= lo and x[:, gen.K[name]].max() <= hi
    assert (x[:, gen.K["RX_Bytes"]] == 0).mean() > 0.4            # zero-inflated (off state)


# ------------------------------------------------------------------ representations
def test_inst_removes_scale_exactly_and_scale_tokens_restore_it():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(5, 3, 128))
    z[0, 2] = 4.0                                                 # a flat channel
    scaled = 7.0 * z - 3.0
    fa, fb = rp.gbm_inputs(z, "inst", 1e-6, 1e-6), rp.gbm_inputs(scaled, "inst", 1e-6, 1e-6)
    assert np.allclose(fa, fb, atol=1e-9)
    f = fa.reshape(5, 3, len(rp.FEATURES))
    assert np.allclose(f[..., 0], 0.0, atol=1e-12)                # mean feature
    expected_sd = np.ones((5, 3))
    expected_sd[0, 2] = 0.0                                       # the flat channel maps to 0
    assert np.allclose(f[..., 1], expected_sd, atol=1e-12)        # s.d. feature
    _, sa = rp.represent(z, "inst-scale", 1e-6, 1e-6)
    _, sb = rp.represent(scaled, "inst-scale", 1e-6, 1e-6)
    assert np.allclose(sb[:, :3], 7.0 * sa[:, :3] - 3.0)          # window means
    assert np.allclose(sb[1:, 3:], sa[1:, 3:] + np.log(7.0), atol=1e-6)   # log s.d.
    # the spec's additive eps would leak scale: s.d. of (x - m) / (sd + eps) is monotone in sd
    small = 1e-4 * z[1:2]
    leak = (small - small.mean(-1, keepdims=True)) / (small.std(-1, keepdims=True) + 1e-6)
    assert leak.std(-1).max() < 0.995


def test_raw_uses_log1p_and_training_statistics():
    x = np.zeros((4, len(gen.KPIS), 16))
    x[:, gen.K["RX_Bytes"]] = np.array([0.0, 9.0, 99.0, 999.0])[:, None]
    std = rp.fit_raw(x)
    z = rp.raw(x, std)
    g = np.log1p(np.array([0.0, 9.0, 99.0, 999.0]))
    assert np.allclose(z[:, gen.K["RX_Bytes"], 0], (g - g.mean()) / (g.std() + 1e-8))


def test_summary_features_by_hand():
    T = 128
    t = np.arange(T)
    x = np.stack([0.5 * t + 2.0, np.sin(2 * np.pi * 8 * t / T),
                  np.where(t % 4 == 0, 3.0, 0.0)])[None]
    f = rp.features(x).reshape(3, len(rp.FEATURES))
    col = {n: i for i, n in enumerate(rp.FEATURES)}
    assert np.isclose(f[0, col["slope"]], 0.5)
    assert np.isclose(f[0, col["quarter_diff"]], 0.5 * 96)
    assert f[1, col["dom_freq"]] == 8 and np.isclose(f[1, col["dom_power"]], 1.0)
    assert np.isclose(f[2, col["frac_at_min"]], 0.75)             # the zero fraction
    assert np.isclose(f[0, col["q50"]], np.quantile(x[0, 0], 0.5))
    assert np.isclose(f[2, col["lag1_acf"]], np.corrcoef(x[0, 2, 1:], x[0, 2, :-1])[0, 1],
                      atol=0.02)


# ------------------------------------------------------------------ metrics vs sklearn
def test_metrics_match_sklearn():
    from sklearn.metrics import confusion_matrix, f1_score, roc_auc_score

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300).astype(bool)
    s = np.round(rng.random(300) + 0.4 * y, 1)                    # with ties
    assert np.isclose(mt.auroc(y, s), roc_auc_score(y, s))
    w = mt.prevalence_weights(y, 0.05)
    assert np.isclose(mt.f1_binary(y, s >= 0.5, w), f1_score(y, s >= 0.5, sample_weight=w))
    assert np.isclose((w * y).sum() / w.sum(), 0.05)
    yc = rng.integers(0, 9, 400)                                   # class 9 never true
    pc = np.where(rng.random(400) < 0.6, yc, rng.integers(0, 10, 400))
    assert np.array_equal(mt.confusion(yc, pc, 10), confusion_matrix(yc, pc, labels=range(10)))
    assert np.isclose(mt.macro_f1(yc, pc, 10),
                      f1_score(yc, pc, labels=np.unique(yc), average="macro"))


def test_mild_severe_confusion_by_hand():
    y = np.array([1, 1, 2, 2, 2, 0])
    pred = np.array([2, 1, 1, 1, 2, 1])
    assert np.isclose(mt.mild_severe_confusion(y, pred, 1, 2), 3 / 5)
    out = mt.rca(y, np.eye(10)[pred], np.ones(6, bool), 10, 1, 2)
    assert np.isclose(out["rca_acc"], 2 / 6)
    assert np.isnan(out["rca_f1_partial"])
    bad = mt.rca(y, np.full((6, 10), np.nan), np.ones(6, bool), 10, 1, 2)
    assert np.isnan(bad["rca_macro_f1"])                          # a failed run stays failed


# ------------------------------------------------------------------ probe
def test_lag_rows_and_ridge_match_reference():
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(0)
    past = rng.normal(size=(3, 40))
    X, y = probe.lag_rows(past, 5)
    X0, y0 = lag_matrix(past[1], 5)
    assert np.array_equal(X[35:70], X0) and np.array_equal(y[35:70], y0)
    from icml26.timeseries.linear import ridge_fit

    w, b = ridge_fit(X, y, 1.0)
    ref = Ridge(alpha=1.0).fit(X, y)
    assert np.allclose(w, ref.coef_, atol=1e-8) and np.isclose(b, ref.intercept_, atol=1e-8)


def test_probe_skill_on_known_series():
    rng = np.random.default_rng(0)
    # a level per window: the last value is exact, the window mean too -> skill undefined
    # scale; a random walk: last value beats the window mean clearly; white noise: ~0
    walk = np.cumsum(rng.normal(size=(400, 128)), axis=1)
    res = probe.skill(walk[:300], walk[300:], 112, 16, 8, 1.0, 0.15)
    assert res["skill"] > 0.5
    noise = rng.normal(size=(400, 128))
    res = probe.skill(noise[:300], noise[300:], 112, 16, 8, 1.0, 0.15)
    assert abs(res["skill"]) < 0.05
    ctl = gen.control_windows(rng, 400, 128)
    assert probe.skill(ctl[:300], ctl[300:], 112, 16, 32, 1.0, 0.15)["skill"] > 0.5


# ------------------------------------------------------------------ classifiers
def _level_task(n=240, T=128, seed=0):
    """Two classes that differ only in a channel's level: visible to RAW, not to INST."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    z = rng.normal(size=(n, 2, T))
    z[:, 0] += 3.0 * y[:, None]
    return z, y


def test_gbm_sees_level_only_with_scale(cfg):
    # also guards the floating-point leak: (x + 3) - mean(x + 3) differs from x - mean(x) by
    # rounding that grows with the level, and a quantile-binned GBM splits on it unless the
    # features are rounded (represent.features)
    z, y = _level_task()
    run = Run("raw", "gbm", 0)
    acc = {}
    for kind in ("raw", "inst", "inst-scale"):
        f = rp.gbm_inputs(z, kind, 1e-6, 1e-6)
        proba, rows = experiment._gbm(cfg, run, "rca", f[:160], y[:160], f[160:])
        acc[kind] = (proba.argmax(1) == y[160:]).mean()
        assert rows[0]["value"] >= 1
    assert acc["raw"] > 0.95 and acc["inst-scale"] > 0.95 and acc["inst"] < 0.7


def test_cnn_learns_a_level_with_raw_inputs(cfg):
    import torch

    from icml26.papers.telecomts.cnn import predict_proba, train_cnn

    torch.set_num_threads(1)
    z, y = _level_task(n=320)
    p = {**cfg["params"], "cnn_epochs": 8}
    dev = torch.device("cpu")
    model, losses = train_cnn(z[:240], None, y[:240], 2, p, 0, np.random.default_rng(0), dev)
    assert losses[-1] < losses[0]
    assert (predict_proba(model, z[240:], None, dev).argmax(1) == y[240:]).mean() > 0.9
    m2, l2 = train_cnn(z[:240], None, y[:240], 2, p, 0, np.random.default_rng(0), dev)
    assert l2 == losses                                           # same seed, same run


# ------------------------------------------------------------------ claims
def _metrics(gap_gbm, gap_cnn, recovery, conf_raw, conf_inst, full_extra, auroc_gap, skill_rx,
             skill_ctl, seeds=(0, 1, 2, 3, 4)):
    rows = []
    for s in seeds:
        jit = 0.002 * s
        base = 0.7 + jit
        f1 = {"raw": base + gap_gbm, "inst": base, "inst-scale": base + recovery * gap_gbm}
        for m in ("raw", "inst", "inst-scale"):
            g = f1[m] - base
            rows.append({"method": m, "setting": "gbm", "seed": s, "rca_macro_f1": f1[m],
                         "rca_f1_full": base + g * (1 + full_extra),
                         "rca_f1_partial": base + g * (1 - full_extra),
                         "rca_mild_severe_conf": {"raw": conf_raw, "inst": conf_inst,
                                                  "inst-scale": conf_raw}[m] + jit / 10,
                         "det_auroc": 0.95 + jit - (auroc_gap if m == "inst" else 0.0),
                         "probe_skill_RX_Bytes": skill_rx + jit,
                         "probe_skill_control": skill_ctl + jit,
                         "probe_choice_RX_Bytes": 0.0})
            rows.append({"method": m, "setting": "cnn", "seed": s,
                         "rca_macro_f1": base - (0.0 if m == "raw" else gap_cnn)})
    return pd.DataFrame(rows)


def test_claims_pass_and_fail(cfg):
    c = {**cfg, "seeds": [0, 1, 2, 3, 4],
         "settings": {"gbm": {"model": "gbm", "tasks": ["detection", "rca"]},
                      "cnn": {"model": "cnn", "tasks": ["rca"]}}}
    good = _metrics(0.2, 0.1, 0.9, 0.05, 0.2, 0.5, 0.08, 0.05, 0.8)
    verdicts = {x.id: x.verdict for x in claims.check(c, good, None)}
    assert set(verdicts.values()) == {REPRODUCED}, verdicts
    bad = _metrics(0.05, 0.0, 0.3, 0.1, 0.12, -0.5, 0.0, 0.4, 0.2)
    verdicts = {x.id: x.verdict for x in claims.check(c, bad, None)}
    assert set(verdicts.values()) == {NOT_REPRODUCED}, verdicts


def test_a_failed_run_cannot_pass(cfg):
    c = {**cfg, "seeds": [0, 1, 2, 3, 4],
         "settings": {"gbm": {"model": "gbm", "tasks": ["detection", "rca"]},
                      "cnn": {"model": "cnn", "tasks": ["rca"]}}}
    m = _metrics(0.2, 0.1, 0.9, 0.05, 0.2, 0.5, 0.08, 0.05, 0.8)
    m.loc[(m["method"] == "raw") & (m["setting"] == "gbm") & (m["seed"] == 2),
          "rca_macro_f1"] = np.nan
    c1 = claims.check(c, m, None)[0]
    assert c1.verdict != REPRODUCED and "2" in c1.to_dict()["note"]


def test_bad_params_value_names_the_key(cfg):
    bad = {**cfg, "params": {**cfg["params"], "cnn_epochs": -1}}
    with pytest.raises(ConfigError, match="cnn_epochs"):
        check_params(bad, REPO / "config")
    bad = {**cfg, "settings": {"gbm": {"model": "svm", "tasks": ["rca"]}}}
    with pytest.raises(ConfigError, match="model"):
        check_params(bad, REPO / "config")


# ------------------------------------------------------------------ full profile: long traces
def _tiny_full(seconds=300.0, seeds=(0,)):
    """The full profile's new settings (localisation, PatchTST-like) on a tiny config."""
    cfg = pipeline.resolve("telecomts", "full")
    p = {**cfg["params"], "n_train_normal": 10, "n_train_per_type": 8, "n_test_normal": 5,
         "n_test_per_type": 5, "loc_trace_s": seconds, "loc_train_traces": 2,
         "loc_val_traces": 1, "loc_test_traces": 1, "loc_excerpt_s": 60.0, "pt_epochs": 1,
         "gbm_max_bins": 31}
    return {**cfg, "params": p, "seeds": list(seeds),
            "settings": {k: v for k, v in cfg["settings"].items()
                         if k in ("loc", "patchtst")}}


def test_anomaly_process_is_the_official_one():
    rng = np.random.default_rng(0)
    iv = np.array(gen.anomaly_intervals(rng, 300 * 3600.0, 60.0, 24.0))     # 300 hours
    onset, end, typ = iv[:, 0], iv[:, 1], iv[:, 2].astype(int)
    assert (end > onset).all() and (onset[1:] > end[:-1]).all()             # never overlap
    assert onset[-1] < 300 * 3600.0
    gap, dur = onset - np.r_[0.0, end[:-1]], end - onset
    assert abs(gap.mean() - 60.0) < 2.0 and abs(dur.mean() - 24.0) < 1.0
    assert gap.mean() > 2 * dur.mean()                                       # 60 s vs 24 s
    assert np.allclose(np.bincount(typ, minlength=10) / len(typ), 0.1, atol=0.015)  # uniform
    # official labels: steps with onset <= k / 10 <= end
    assert gen.interval_steps(1.25, 2.0, 100) == (13, 20)
    assert gen.interval_steps(9.93, 9.97, 1000)[1] < gen.interval_steps(9.93, 9.97, 1000)[0]


def test_tiny_trace_locates_anomalies_in_seconds_since_onset():
    p = {**pipeline.resolve("telecomts", "full")["params"], "loc_gap_s": 30.0}
    L = 36000
    tr = gen.trace(np.random.default_rng(1), L, p)
    x0, starts = gen.session_trace(np.random.default_rng(1), L, p["loc_session_s"], p)
    assert len(starts) > 3                                   # the session changes along it
    steps = [gen.interval_steps(a, b, L) for a, b in zip(tr["onset_s"], tr["end_s"],
                                                         strict=True)]
    covered = np.zeros(L, int)
    for (a, b), k in zip(steps, tr["itype"], strict=True):
        covered[a:b + 1] += 1
        assert (b < a) or (tr["type"][a:b + 1] == k).all()
    assert covered.max() == 1                                 # intervals never overlap
    assert np.array_equal(tr["type"] >= 0, covered > 0)
    normal = tr["type"] < 0
    assert np.array_equal(tr["x"][:, normal], x0[:, normal])   # only anomalous steps change
    # faulty RF filter: RSRP drifts by c dB per SECOND since onset (c in [-0.5, -0.2]), with
    # no offset at the onset; fitted on each long enough type-3 interval
    fits = []
    for (a, b), k, on in zip(steps, tr["itype"], tr["onset_s"], strict=True):
        if k == 3 and b - a > 100:
            el = np.arange(a, b + 1) / gen.HZ - on
            assert 0.0 <= el[0] < 0.1
            d = tr["x"][gen.K["RSRP"], a:b + 1] - x0[gen.K["RSRP"], a:b + 1]
            keep = tr["x"][gen.K["RSRP"], a:b + 1] > -135.0       # not at the clip
            slope, icpt = np.polyfit(el[keep], d[keep], 1)
            fits.append((slope, icpt))
    assert fits
    for slope, icpt in fits:
        assert -0.55 < slope < -0.15 and abs(icpt) < 1.0


def test_per_step_f1_and_point_adjusted_f1_by_hand():
    from sklearn.metrics import f1_score

    label = np.array([0, 1, 1, 1, 0, 0, 1, 1, 0, 0], bool)
    pred = np.array([0, 0, 1, 0, 0, 1, 0, 0, 0, 0], bool)
    # per step: tp 1, fp 1, fn 4 -> 2 / 7; point-adjusted: the first segment has a hit, so
    # all 3 of its steps count: tp 3, fp 1, fn 2 -> 6 / 9
    assert np.array_equal(mt.point_adjust(label, pred)[0],
                          [0, 1, 1, 1, 0, 1, 0, 0, 0, 0])
    out = mt.localisation(label, pred.astype(float), 0.5)
    assert np.isclose(out["loc_f1"], 2 / 7) and np.isclose(out["loc_f1_pa"], 2 / 3)
    assert np.isclose(out["loc_f1"], f1_score(label, pred))
    assert np.isclose(out["loc_precision"], 0.5) and np.isclose(out["loc_recall"], 0.2)
    # segments never cross traces: a hit at the end of trace 0 does not adjust trace 1
    lab2 = np.array([[0, 0, 1], [1, 1, 0]], bool)
    pr2 = np.array([[0, 0, 1], [0, 0, 0]], bool)
    assert np.array_equal(mt.point_adjust(lab2, pr2), pr2)
    assert np.isnan(mt.localisation(label, np.full(10, np.nan), 0.5)["loc_f1"])


def test_sliding_windows_labels_and_step_scores_by_hand():
    from icml26.papers.telecomts import localise as loc

    z = np.arange(20.0).reshape(1, 2, 10)
    w, starts = loc.cut(z, 4, 2)
    assert starts.tolist() == [0, 2, 4, 6] and w.shape == (4, 2, 4)
    assert np.array_equal(w[1, 1], z[0, 1, 2:6])
    anom = np.array([[0, 0, 0, 1, 1, 1, 0, 0, 0, 0]], bool)
    assert loc.window_labels(anom, starts, 4, 0.5).tolist() == [0, 1, 1, 0]
    s = loc.step_scores(np.array([[1.0, 0.0, 0.0, 1.0]]), starts, 4, 10)
    assert np.allclose(s, [[1, 1, 0.5, 0.5, 0, 0, 0.5, 0.5, 1, 1]])
    thr, f1 = loc.choose_threshold(anom, np.array([[0, 0, .1, .9, .8, .7, .2, 0, 0, 0]]),
                                   np.array([0.3, 0.5, 0.75]))
    assert thr == 0.3 and f1 == 1.0
    # a choice on the grid's edge extends it (halving towards 0)
    thr, _ = loc.choose_threshold(anom, np.array([[0, 0, 0, .1, .1, .1, 0, 0, 0, 0]]),
                                  np.array([0.2, 0.5]))
    assert thr == 0.05


def test_seed_traces_are_deterministic_and_match_the_process():
    from icml26.papers.telecomts import localise as loc

    cfg = _tiny_full(seconds=600.0)
    a, b = loc.seed_traces(cfg, 0), loc.seed_traces(cfg, 0)
    for split in loc.SPLITS:
        assert np.array_equal(a[split][0], b[split][0])
        assert a[split][0].shape == (cfg["params"][f"loc_{split}_traces"], 12, 6000)
    assert a["stats"] == b["stats"] and 0.05 < a["stats"]["loc_anom_frac"] < 0.6


# ------------------------------------------------------------------ full profile: transformer
def _pt_params(**kw):
    return {"pt_patch": 16, "pt_stride": 8, "pt_d_model": 16, "pt_heads": 2, "pt_d_ff": 32,
            "pt_layers": 1, "pt_d_out": 4, "pt_dropout": 0.2, "pt_lr": 3e-3, "pt_batch": 32,
            "pt_epochs": 12, **kw}


def test_revin_on_makes_the_transformer_scale_invariant():
    import torch

    from icml26.papers.telecomts.patchtst import PatchRCA

    torch.manual_seed(0)
    x = torch.randn(6, 3, 64)
    a = torch.tensor([7.0, 0.3, 2.0])[None, :, None]
    b = torch.tensor([-3.0, 5.0, 0.5])[None, :, None]
    out = {}
    for revin in (True, False):
        torch.manual_seed(1)
        m = PatchRCA(3, 64, 0, 4, _pt_params(), revin).eval()
        with torch.no_grad():
            out[revin] = (m(x), m(a * x + b))
    assert torch.allclose(*out[True], atol=1e-4)                # RevIN: invariant logits
    assert (out[False][0] - out[False][1]).abs().max() > 1e-2   # no RevIN: scale matters


def test_transformer_sees_a_level_only_without_revin():
    import torch

    from icml26.papers.telecomts.cnn import predict_proba
    from icml26.papers.telecomts.patchtst import train_patchtst

    torch.set_num_threads(1)
    z, y = _level_task(n=240, T=64)
    dev = torch.device("cpu")
    acc = {}
    for revin in (False, True):
        model, losses = train_patchtst(z[:160], None, y[:160], 2, _pt_params(), revin, 0,
                                       np.random.default_rng(0), dev)
        acc[revin] = (predict_proba(model, z[160:], None, dev).argmax(1) == y[160:]).mean()
        if not revin:
            assert losses[-1] < losses[0]
            _, again = train_patchtst(z[:160], None, y[:160], 2, _pt_params(), revin, 0,
                                      np.random.default_rng(0), dev)
            assert again == losses                             # same seed, same run
    assert acc[False] > 0.9 and acc[True] < 0.7


def test_full_profile_runs_end_to_end_on_a_tiny_config(tmp_path):
    import torch

    from icml26 import plotting
    from icml26.grid import runs as grid_runs
    from icml26.papers.telecomts import figures

    torch.set_num_threads(1)
    cfg = _tiny_full()
    check_params(cfg, REPO / "config")
    runs = grid_runs(cfg)
    state, curves = experiment.train(cfg, {}, runs)
    curves = pd.DataFrame(curves)
    rows = experiment.evaluate(cfg, {}, runs, state, curves)
    m = pd.DataFrame([{**r.as_dict(), **row} for r, row in zip(runs, rows, strict=True)])
    loc_rows = m[m["setting"] == "loc"]
    assert len(loc_rows) == 3 and not any(c.startswith("trace_") for c in m.columns)
    for col in ("loc_f1", "loc_f1_pa", "loc_auroc", "loc_threshold"):
        assert loc_rows[col].between(0, 1).all(), col
    assert (loc_rows["loc_f1_pa"] >= loc_rows["loc_f1"] - 1e-12).all()   # PA never lowers F1
    pt = m[m["setting"] == "patchtst"]
    assert pt["rca_macro_f1"].between(0, 1).all() and pt["patchtst_loss_rca_final"].gt(0).all()
    plotting.pyplot()
    figs = figures.make(cfg, m, curves)
    assert set(figs) == set(cfg["figures"])
    assert len([ax for ax in figs["full_profile"].axes if ax.axison]) == 3
    from test_figures import legends_over_data, proposed_below_baselines, small_texts

    fig = figs["full_profile"]
    plotting.save(fig, tmp_path / "full_profile.png")          # the house style at full too
    assert not small_texts(fig) and not legends_over_data(fig)
    assert not proposed_below_baselines(fig)
    titles = list(figures.tables(cfg, m, curves))
    assert sum(t.startswith("Full profile") for t in titles) == 3
    for fig in figs.values():
        plotting.pyplot().close(fig)


def test_full_profile_figure_says_so_below_full(cfg):
    from icml26 import plotting
    from icml26.papers.telecomts import figures

    m = pd.DataFrame([{"method": x, "setting": "gbm", "seed": 0, "rca_macro_f1": 0.5}
                      for x in ("raw", "inst", "inst-scale")])
    plotting.pyplot()
    fig = figures.full_profile(cfg, m, pd.DataFrame(columns=["method", "setting", "seed",
                                                             "step", "metric", "value"]))
    texts = " ".join(t.get_text() for ax in fig.axes for t in ax.texts)
    assert "Full profile only" in texts and "scale=smoke" in texts
    assert not any(t.startswith("Full profile") for t in figures.full_profile_tables(cfg, m))
    plotting.pyplot().close(fig)


def test_full_profile_settings_are_validated():
    full = pipeline.resolve("telecomts", "full")
    check_params(full, REPO / "config")
    assert {"loc", "patchtst"} <= set(full["settings"])
    bad = {**full, "settings": {"cnn": {"model": "cnn", "tasks": ["localisation"]}}}
    with pytest.raises(ConfigError, match="tasks"):
        check_params(bad, REPO / "config")
    bad = {**full, "params": {**full["params"], "loc_stride": 0}}
    with pytest.raises(ConfigError, match="loc_stride"):
        check_params(bad, REPO / "config")
