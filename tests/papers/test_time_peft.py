"""Behaviour tests of time-peft: the complexity metrics on hand cases, the data windows, the
stacked methods against the shared modules run one at a time, early stopping, the claim
checkers on metrics built to pass and to fail, and the params schema."""

import copy

import numpy as np
import pandas as pd
import pytest
import torch

from icml26 import pipeline
from icml26.claims import NOT_REPRODUCED, REPRODUCED
from icml26.errors import ConfigError
from icml26.papers.time_peft import claims, peft
from icml26.papers.time_peft import data as D
from icml26.timeseries.models import ChannelAdapter, FrequencyAdapter, add_lora

P = {"lookback": 16, "horizon": 4, "patch_len": 4, "d_model": 8, "n_heads": 2, "d_ff": 16,
     "n_layers": 1, "head_lr": 1e-3, "adapter_lr": 2e-3, "lora_rank": 2, "lora_alpha": 4.0,
     "top_k": 3, "n_recent": 4, "d_adapter": 8, "steps": 20, "batch": 4, "eval_every": 5,
     "eval_chunk": 8, "cache_mb": 64.0}


# ------------------------------------------------------------------------------ complexities
def test_tc_is_zero_for_a_pure_bin_sinusoid_and_near_one_for_white_noise():
    t = np.arange(1024)
    x = np.stack([np.sin(2 * np.pi * 8 * t / 256), np.cos(2 * np.pi * 20 * t / 256)])
    assert np.allclose(D.temporal_complexity(x, 256), 0.0, atol=1e-9)
    noise = np.random.default_rng(0).standard_normal((3, 256 * 40))
    assert (D.temporal_complexity(noise, 256) > 0.9).all()


def test_mc_zero_for_independent_channels_positive_for_a_lagged_copy():
    rng = np.random.default_rng(1)
    indep = rng.standard_normal((3, 4000))
    assert np.abs(D.multichannel_complexity(indep, 16, 1.0, 0.7)).max() < 0.01
    # channel 1 = channel 0 five steps earlier (+ small noise): its own past cannot predict the
    # white innovations, channel 0's past can
    a = rng.standard_normal(4000)
    b = np.r_[np.zeros(5), a[:-5]] + 0.1 * rng.standard_normal(4000)
    mc = D.multichannel_complexity(np.stack([a, b]), 16, 1.0, 0.7)
    assert mc[1] > 1.0                       # 1/2 log(1 / 0.01) ~ 2.3
    assert abs(mc[0]) < 0.02                 # the leader gains nothing from the follower


def test_mc_matches_a_hand_fitted_gaussian_transfer_entropy():
    """MC_i = 1/2 log(var_own / var_full) with sklearn-free closed-form ridge on standardised
    data: compare with a direct least-squares computation (alpha = 0)."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal(3000)
    b = 0.5 * np.r_[0.0, a[:-1]] + rng.standard_normal(3000)
    x = np.stack([a, b])
    got = D.multichannel_complexity(x, 1, 0.0, 0.7)[1]
    z = (x - x.mean(1, keepdims=True)) / x.std(1, keepdims=True)
    y, own, other = z[1, 1:], z[1, :-1], z[0, :-1]
    cut = int(round(0.7 * len(y)))
    res = []
    for X in (own[:, None], np.stack([own, other], 1)):
        X1 = np.c_[X, np.ones(len(y))]
        w = np.linalg.lstsq(X1[:cut], y[:cut], rcond=None)[0]
        res.append(np.var(y[cut:] - X1[cut:] @ w))
    assert got == pytest.approx(0.5 * np.log(res[0] / res[1]), rel=1e-8)


def test_grid_levels_order_the_designed_coupling():
    p = {"channels": 4, "length": 2400, "amplitude": [0.3, 1.0], "noise_phi": 0.5,
         "noise_sd": 0.2, "rw_phi": 0.95, "rw_sd": 0.3, "lag_range": [4, 10], "ett_shifts": 2}
    mc = {}
    for M in ("none", "high"):
        x = D.target_series(np.random.default_rng(3), {"T": "low", "M": M}, p)
        assert x.shape == (4, 2400) and np.isfinite(x).all()
        mc[M] = D.multichannel_complexity(x[:, :1400], 16, 1.0, 0.7).mean()
    assert mc["none"] < 0.02 < 0.05 < mc["high"]
    ett = D.target_series(np.random.default_rng(3), {"kind": "ett", "M": "none"}, p)
    assert np.isfinite(ett).all()


AMP = {"channels": 6, "length": 3000, "amplitude": [0.3, 1.0], "noise_phi": 0.5,
       "noise_sd": 0.2, "rw_phi": 0.95, "rw_sd": 0.3, "lag_range": [4, 10], "ett_shifts": 2}


def test_equal_variance_rule_gives_every_level_the_same_seasonal_variance():
    # the common variance: 12 sinusoids with amplitudes U(0.3, 1), E[a^2] / 2 each
    mean_sq = np.mean(np.random.default_rng(0).uniform(0.3, 1.0, 10**6) ** 2)
    assert D.seasonal_variance(AMP) == pytest.approx(12 * mean_sq / 2, rel=1e-2)
    assert D.seasonal_variance(AMP) == pytest.approx(12 * 0.973 / 2.1 / 2, rel=1e-12)
    # without noise, coupling or driver a target channel is its seasonal sum alone
    quiet = {**AMP, "noise_sd": 0.0, "rw_sd": 0.0}
    var = {}
    for rule in D.AMPLITUDE_RULES:
        for T in ("low", "mid", "high"):
            x = D.target_series(np.random.default_rng(4), {"T": T, "M": "none"},
                                {**quiet, "amplitude_rule": rule})
            var[rule, T] = x.var(axis=1)
        # both rules see the same draws: equal-variance only rescales each channel
        ratio = D.target_series(np.random.default_rng(4), {"T": "mid", "M": "none"},
                                {**quiet, "amplitude_rule": "equal-variance"}) / \
            D.target_series(np.random.default_rng(4), {"T": "mid", "M": "none"},
                            {**quiet, "amplitude_rule": "per-sinusoid"})
        assert np.allclose(ratio, ratio[:, :1])
    for T in ("low", "mid", "high"):
        assert np.allclose(var["equal-variance", T], D.seasonal_variance(AMP), rtol=1e-9)
    # the first reading: the seasonal power grows with the number of sinusoids
    per = [var["per-sinusoid", T].mean() for T in ("low", "mid", "high")]
    assert per[0] < per[1] < per[2] and per[2] > 5 * per[0]
    with pytest.raises(ValueError, match="amplitude_rule"):
        D.target_series(np.random.default_rng(4), {"T": "low", "M": "none"},
                        {**AMP, "amplitude_rule": "loud"})


@pytest.mark.parametrize("seed", [0, 1])
def test_tc_rises_with_the_t_level_under_equal_variance_only(seed):
    """The grid's premise on fixed seeds: under equal variance TC(T-low) < TC(T-mid) <
    TC(T-high) at every M level; under per-sinusoid amplitudes T-low's lone sinusoid is buried
    in the noise and has the highest TC at M-mid and M-high."""
    for M in ("none", "mid", "high"):
        tc = {}
        for rule in D.AMPLITUDE_RULES:
            for T in ("low", "mid", "high"):
                x = D.target_series(np.random.default_rng(seed), {"T": T, "M": M},
                                    {**AMP, "amplitude_rule": rule})
                tc[rule, T] = D.temporal_complexity(x[:, :1800], 256).mean()
        assert tc["equal-variance", "low"] < tc["equal-variance", "mid"] \
            < tc["equal-variance", "high"], M
        if M != "none":
            assert tc["per-sinusoid", "low"] > tc["per-sinusoid", "high"], M


def test_windows_are_normalised_by_their_lookback_and_eval_horizons_lie_in_the_split():
    x = np.arange(2 * 200, dtype=float).reshape(2, 200) ** 1.5
    p = {"split": [0.6, 0.2, 0.2], "eval_stride": 4}
    z, y = D.windows_at(x, np.array([0, 10]), 16, 4)
    raw = x[1, 10:30]
    m, s = raw[:16].mean(), raw[:16].std()
    assert np.allclose(z[1, 1], (raw[:16] - m) / (s + 1e-5))
    assert np.allclose(y[1, 1], (raw[16:] - m) / (s + 1e-5))
    starts = D.eval_starts(200, p, "test", 16, 4)
    assert (starts + 16 >= 160).all() and (starts + 20 <= 200).all() and starts[0] + 16 == 160
    tr = D.train_starts(200, p, 16, 4)
    assert tr[0] == 0 and tr[-1] + 20 == 120


# ------------------------------------------------------------------------------ methods
def _bb():
    torch.manual_seed(0)
    bb = peft.build_backbone(P, P["horizon"])
    for q in bb.parameters():
        q.requires_grad_(False)
    return bb.eval()


def test_zero_shot_and_untrained_adapters_equal_the_backbone():
    bb = _bb()
    z = torch.randn(2, 3, 4, 16)
    ref = bb.decode(bb.encode(z.reshape(6, 4, 16))).reshape(2, 3, 4, -1)
    for name in peft.METHODS:
        m = peft.Method(name, bb, 2, 4, P, [1, 2], "cpu")
        assert torch.allclose(m.forward(m.params, z), ref, atol=1e-6), name


def test_stacked_lora_equals_add_lora_per_run():
    bb = _bb()
    m = peft.Method("lora", bb, 2, 4, P, [11, 12], "cpu")
    with torch.no_grad():
        for k, v in m.params.items():
            if "lora_B" in k:
                v.copy_(torch.randn_like(v))
    z = torch.randn(2, 3, 4, 16)
    out = m.forward(m.params, z)
    for r, seed in enumerate([11, 12]):
        one = copy.deepcopy(bb)
        add_lora(one, P["lora_rank"], P["lora_alpha"], peft.LORA_TARGETS,
                 generator=torch.Generator().manual_seed(seed))
        one.load_state_dict({**one.state_dict(), **{k: v[r] for k, v in m.params.items()}})
        assert torch.allclose(out[r], one.decode(one.encode(z[r])), atol=1e-5)
    assert m.n_trainable() == sum(
        p.numel() for n, p in one.named_parameters() if "lora_" in n)


def test_stacked_frequency_adapter_equals_the_shared_module_per_run():
    bb = _bb()
    m = peft.Method("time-peft-nochan", bb, 2, 4, P, [1, 2], "cpu")
    with torch.no_grad():
        for v in m.params.values():
            v.copy_(torch.randn_like(v))
    z = torch.randn(2, 3, 4, 16)
    out = m.forward(m.params, z)
    for r in range(2):
        fa = FrequencyAdapter(4, 16, P["horizon"], P["top_k"])
        fa.load_state_dict({k[5:]: v[r] for k, v in m.params.items()})
        z_in, y_freq = fa(z[r])
        assert torch.allclose(out[r], bb.decode(bb.encode(z_in)) + y_freq, atol=1e-5)


def test_stacked_channel_adapter_equals_the_shared_module_per_run():
    bb = _bb()
    m = peft.Method("time-peft-nofreq", bb, 2, 4, P, [1, 2], "cpu")
    with torch.no_grad():
        for v in m.params.values():
            v.copy_(torch.randn_like(v))
    z = torch.randn(2, 3, 4, 16)
    out = m.forward(m.params, z)
    for r in range(2):
        ca = ChannelAdapter(bb.position.shape[1], P["n_recent"], P["horizon"], P["d_adapter"])
        ca.load_state_dict({k[5:]: v[r] for k, v in m.params.items()})
        tokens = bb.encode(z[r])
        assert torch.allclose(out[r], bb.decode(tokens) + ca(tokens.mean(dim=-2), z[r]),
                              atol=1e-5)


def _series(R=2, C=3, T=240, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(T)
    x = np.sin(2 * np.pi * t / 12)[None, None] + 0.3 * rng.standard_normal((R, C, T))
    return torch.tensor(x, dtype=torch.float32)


def _fit(name, series, p, seeds=(5, 6), cache=None):
    bb = _bb()
    R = series.shape[0]
    xs = [s.numpy().astype(float) for s in series]
    sp = {"split": [0.6, 0.2, 0.2], "eval_stride": 4}
    val = [D.windows_at(x, D.eval_starts(x.shape[1], sp, "val", 16, 4), 16, 4) for x in xs]
    test = [D.windows_at(x, D.eval_starts(x.shape[1], sp, "test", 16, 4), 16, 4) for x in xs]
    f = lambda a: torch.tensor(np.stack(a), dtype=torch.float32)  # noqa: E731
    m = peft.Method(name, bb, R, series.shape[1], p, list(seeds[:R]), "cpu")
    rngs = [np.random.default_rng(100 + s) for s in seeds[:R]]
    return peft.run_method(m, series, D.train_starts(xs[0].shape[1], sp, 16, 4), rngs,
                           (f([v[0] for v in val]), f([v[1] for v in val])),
                           f([t[0] for t in test]), p,
                           keys=[("s", k) for k in range(R)], cache=cache)


@pytest.mark.parametrize("name", ["linear-probe", "time-peft"])
def test_stacked_runs_train_as_if_alone(name):
    """No gradient crosses runs: two runs trained together give what each gives alone."""
    s = _series()
    both = _fit(name, s, P)
    alone = _fit(name, s[1:], P, seeds=(6,))
    assert np.allclose(both["pred"][1], alone["pred"][0], atol=1e-4)
    assert np.allclose(both["val_mse"][1], alone["val_mse"][0], rtol=1e-4)


@pytest.mark.parametrize("name", ["linear-probe", "time-peft-nofreq", "time-peft"])
def test_cached_frozen_part_trains_as_the_pass_at_every_step(name):
    """The frozen part computed once per window (cache) gives what the pass at every step
    gives (cache_mb = 0), and a cache filled by another method is reused unchanged."""
    s = _series()
    fresh = _fit(name, s, P)
    per_step = _fit(name, s, {**P, "cache_mb": 0.0})
    assert np.allclose(fresh["pred"], per_step["pred"], atol=1e-5)
    assert np.allclose(fresh["val_mse"], per_step["val_mse"], rtol=1e-5)
    cache = peft.FrozenCache()
    other = "time-peft-nochan" if name == "time-peft" else "zero-shot"
    _fit(other, s, P, cache=cache)
    _fit("linear-probe" if name != "linear-probe" else "time-peft-nofreq", s, P, cache=cache)
    shared = _fit(name, s, P, cache=cache)
    assert np.array_equal(shared["pred"], fresh["pred"])
    assert cache.nbytes > 0


def test_fine_tuning_lowers_validation_error_and_early_stopping_keeps_the_best():
    s = _series()
    res = _fit("linear-probe", s, {**P, "steps": 60})
    assert (res["best_val"] < res["val_mse"][:, 0]).all()
    assert np.allclose(res["best_val"], res["val_mse"].min(axis=1))
    # a diverging learning rate: the untouched model (step 0) is kept, so the test
    # predictions are the zero-shot ones
    bad = _fit("linear-probe", s, {**P, "head_lr": 50.0})
    zs = _fit("zero-shot", s, P)
    assert (bad["best_step"] == 0).all()
    assert np.allclose(bad["pred"], zs["pred"], atol=1e-6)   # head as einsum vs as a Linear


# ------------------------------------------------------------------------------ claims
GRID = {f"T{t}-M{m}": {"T": t, "M": m} for t in ("low", "mid", "high")
        for m in ("none", "mid", "high")}
CFG = {"settings": GRID, "params": {"channels": 6, "horizon": 16},
       "methods": list(peft.METHODS)}


def _metrics(passing: bool, seeds=range(5)):
    rng = np.random.default_rng(0)
    rows = []
    for s, sp in GRID.items():
        tc = {"low": 0.2, "mid": 0.4, "high": 0.6}[sp["T"]]
        mc = {"none": 0.0, "mid": 0.1, "high": 0.2}[sp["M"]]
        cx = sp["T"] == "high" or sp["M"] == "high"
        for seed in seeds:
            e = 1 + 0.01 * rng.standard_normal()
            zs = (1.0 + 2 * tc + 5 * mc) * e if passing else 2.0 * e
            lora = zs * (0.9 if s == "Tlow-Mnone" else 0.6) if passing \
                else zs * (0.5 + 0.5 * tc + mc)
            tp = lora * (0.8 if cx else 1.0) if passing else lora * 1.3
            vals = {"zero-shot": zs, "linear-probe": lora * 1.05, "lora": lora,
                    "time-peft": tp,
                    "time-peft-nofreq": tp * (1.2 if passing else 0.99),
                    "time-peft-nochan": tp * (1.2 if passing else 0.99)}
            for m, v in vals.items():
                rows.append({"method": m, "setting": s, "seed": seed, "test_mse": v,
                             "tc": tc + 0.01 * rng.standard_normal(),
                             "mc": mc + 0.01 * rng.standard_normal(),
                             "best_step": 200.0, "last_eval_step": 200.0})
    return pd.DataFrame(rows)


def test_claims_reproduced_on_metrics_built_to_pass():
    out = {c.id: c for c in claims.check(CFG, _metrics(True), pd.DataFrame())}
    for cid in ("C1-complexity-predicts-gain", "C2-time-peft-beats-lora",
                "C3-adapters-do-their-job", "C4-no-harm-on-simple", "S1-grid-levels"):
        assert out[cid].verdict == REPRODUCED, (cid, out[cid].to_dict())


def test_claims_not_reproduced_on_metrics_built_to_fail():
    out = {c.id: c for c in claims.check(CFG, _metrics(False), pd.DataFrame())}
    for cid in ("C1-complexity-predicts-gain", "C2-time-peft-beats-lora",
                "C3-adapters-do-their-job", "C4-no-harm-on-simple"):
        assert out[cid].verdict == NOT_REPRODUCED, (cid, out[cid].to_dict())


def test_s1_needs_tc_to_rise_through_every_t_level_on_every_seed():
    m = _metrics(True)
    mid = m["setting"].str.startswith("Tmid") & (m["seed"] == 3)
    m.loc[mid, "tc"] = 0.7                      # T-mid above T-high on one seed only
    s1 = {c.id: c for c in claims.check(CFG, m, pd.DataFrame())}["S1-grid-levels"].to_dict()
    assert s1["verdict"] == NOT_REPRODUCED
    assert "tc:low<mid<high every seed" in str(s1)


def test_a_failed_run_cannot_support_a_claim():
    m = _metrics(True)
    m.loc[(m["method"] == "time-peft") & (m["seed"] == 2), "test_mse"] = np.nan
    out = {c.id: c.to_dict() for c in claims.check(CFG, m, pd.DataFrame())}
    assert out["C2-time-peft-beats-lora"]["verdict"] != REPRODUCED
    assert "seeds 2" in out["C2-time-peft-beats-lora"]["note"]


# ------------------------------------------------------------------------------ config
def test_bad_params_are_one_line_naming_the_key():
    from conftest import REPO

    from icml26.config import check_params

    cfg = pipeline.resolve("time-peft", "smoke")
    assert cfg["params"]["steps"] == 50
    for key, value in (("top_k", 0), ("steps", -1), ("lookback", "64"), ("typo_key", 1),
                       ("amplitude_rule", "loud"), ("cache_mb", -1)):
        bad = copy.deepcopy(cfg)
        bad["params"][key] = value
        with pytest.raises(ConfigError, match=key):
            check_params(bad, REPO / "config")
    bad = copy.deepcopy(cfg)
    bad["settings"]["Tlow-Mnone"]["M"] = "huge"
    with pytest.raises(ConfigError, match="M"):
        check_params(bad, REPO / "config")
