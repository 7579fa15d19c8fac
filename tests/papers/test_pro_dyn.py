"""Behaviour tests of pro-dyn: the five forecasters on hand-solved cases (RevIN round trip,
the +DYN model reducing to LINEAR, DYN-first without a residual, causal decoder, attention
against the hand-written formula), the data and window rules, the
closed-form reference, stacked training against each seed trained alone, the claim checkers
on metrics built to pass and to fail, params errors, and the pipeline end to end at smoke."""

import json
import math

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import REPO

from icml26 import grid, pipeline
from icml26.claims import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED
from icml26.config import check_params
from icml26.errors import ConfigError
from icml26.papers.pro_dyn import claims, data, experiment, models, stacking
from icml26.timeseries.features import periodogram
from icml26.timeseries.models import fit

P = dict(d_model=8, n_heads=2, d_ff=16, n_layers=2, dec_layers=1, label_len=4, patch_len=4,
         patch_stride=2, dynfirst_patch=4)


def _x(b=3, c=2, L=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(b, c, L, generator=g, dtype=torch.float64) * 2.0 + 1.0


def _model(name, L=16, H=8, C=2, seed=0):
    torch.manual_seed(seed)
    return models.build(name, L, H, C, P).double()


def test_sinusoidal_position_by_hand():
    pe = models.sinusoidal_position(torch.tensor([0, 3]), 4)
    assert torch.allclose(pe[0], torch.tensor([0.0, 1.0, 0.0, 1.0]))
    want = [math.sin(3), math.cos(3), math.sin(3 / 100), math.cos(3 / 100)]
    assert torch.allclose(pe[1], torch.tensor(want, dtype=torch.float32), atol=1e-6)


def test_linear_identity_weights_reproduce_the_input_through_revin():
    """LINEAR with L = H, W = I, b = 0 returns its input exactly (normalise, map, undo)."""
    m = models.Linear(16, 16).double()
    with torch.no_grad():
        m.dyn.weight.copy_(torch.eye(16, dtype=torch.float64))
        m.dyn.bias.zero_()
    x = _x()
    assert torch.allclose(m(x), x, atol=1e-10)
    # the map is shared by the channels: swapping channels swaps the outputs
    assert torch.allclose(m(x.flip(1)), m(x).flip(1))


@pytest.mark.parametrize("name", models.METHODS)
def test_every_model_is_affine_equivariant_per_channel(name):
    """RevIN makes every forecaster commute with a per-channel a x + b (a > 0), up to the
    1e-5 in the normalisation."""
    m = _model(name)
    x = _x()
    a = torch.tensor([3.0, 0.5], dtype=torch.float64)[None, :, None]
    b = torch.tensor([-2.0, 7.0], dtype=torch.float64)[None, :, None]
    with torch.no_grad():
        assert torch.allclose(m(a * x + b), a * m(x) + b, atol=1e-4)


def test_informer_dyn_reduces_to_linear_when_the_processing_is_zero():
    """z' = z + proj(enc(z)): with proj = 0 INFORMER-LITE+DYN is LINEAR with the same DYN."""
    dyn, lin = _model(models.INFORMER_DYN), models.Linear(16, 8).double()
    with torch.no_grad():
        dyn.proj.weight.zero_()
        dyn.proj.bias.zero_()
        lin.dyn.load_state_dict(dyn.dyn.state_dict())
        x = _x()
        assert torch.allclose(dyn(x), lin(x), atol=1e-12)
        # and any processing changes it (the encoder feeds the DYN)
        dyn.proj.bias.fill_(0.3)
        assert not torch.allclose(dyn(x), lin(x), atol=1e-3)


def test_dynfirst_sees_the_past_only_through_its_leading_linear_map():
    """DYN -> PRO: with the front Linear(L -> H) set to zero the processed output no longer
    depends on the (normalised) lookback: no residual path around the DYN."""
    m = _model(models.DYNFIRST)
    with torch.no_grad():
        m.dyn.weight.zero_()
        a, b = m.inner(_x(seed=1)), m.inner(_x(seed=2))
        assert torch.allclose(a, b, atol=1e-12)
        assert m.n_patches == 2 and m.inner(_x()).shape == (3, 2, 8)


def test_attention_matches_the_formula_and_the_decoder_is_causal():
    torch.manual_seed(0)
    att = models.Attention(8, 2).double()
    h, mem = _x(2, 5, 8), _x(2, 7, 8, seed=3)  # tokens (batch, n, d)

    def heads(t, lin):
        return lin(t).view(t.shape[0], t.shape[1], 2, 4).transpose(1, 2)

    q, k, v = heads(h, att.q), heads(mem, att.k), heads(mem, att.v)
    w = torch.softmax(q @ k.transpose(-2, -1) / 2.0, dim=-1)
    want = att.o((w @ v).transpose(1, 2).reshape(2, 5, 8))
    with torch.no_grad():
        assert torch.allclose(att(h, mem), want, atol=1e-12)
    # masked (causal) decoder: changing token j leaves the outputs before j unchanged
    torch.manual_seed(1)
    dec = models.DecoderLayer(8, 2, 16).double()
    h2 = h.clone()
    h2[:, 3] += 5.0
    with torch.no_grad():
        o1, o2 = dec(h, mem), dec(h2, mem)
    assert torch.allclose(o1[:, :3], o2[:, :3], atol=1e-12)
    assert not torch.allclose(o1[:, 3:], o2[:, 3:], atol=1e-6)


@pytest.mark.parametrize("name", models.METHODS)
def test_stacked_model_computes_every_member_as_its_own_model(name):
    """stacking.stack: R models (own seeds) in one module; member-major input rows give each
    member's own forecast, and member_state recovers each member's weights."""
    ms = [_model(name, seed=s) for s in (0, 1, 2)]
    st = stacking.stack(ms)
    x = torch.cat([_x(seed=10 + r) for r in range(3)])        # (3 * 3, C, L), member-major
    with torch.no_grad():
        y = st(x).reshape(3, 3, 2, 8)
        for r, m in enumerate(ms):
            assert torch.allclose(y[r], m(x[3 * r: 3 * r + 3]), atol=1e-12)
            fresh = _model(name, seed=99)
            fresh.load_state_dict(stacking.member_state(st, r))
            assert torch.allclose(fresh(x[:3]), m(x[:3]), atol=1e-12)
    # the stacked module's parameters are the members' parameters, nothing else
    assert sum(q.numel() for q in st.parameters()) == 3 * sum(q.numel() for q in ms[0].parameters())


def _series(seed, T=600):
    t = np.arange(T)
    g = np.random.default_rng(seed)
    z = np.stack([np.sin(2 * np.pi * t / 24 + c) + 0.2 * g.standard_normal(T) for c in range(2)])
    return z, np.array([420, 480, T])


@pytest.mark.parametrize("name", models.METHODS)
def test_stacked_training_equals_training_each_seed_alone(name):
    """2 seeds x 2 data cells trained as one stack end with the same weights, predictions,
    histories and best checkpoints as each run trained alone by the shared `fit` (float64):
    own initialisation, own minibatch generator, own gradient clip, own early stopping."""
    cells = [data.split_windows(*_series(c), part, 16, 8, 1 if part == "train" else 4)
             for c in (0, 1) for part in ("train", "val")]
    tr = [tuple(torch.as_tensor(a) for a in cells[2 * c]) for c in (0, 1)]
    va = [tuple(torch.as_tensor(a) for a in cells[2 * c + 1]) for c in (0, 1)]
    members = [(seed, c) for seed in (0, 1) for c in (0, 1)]
    kw = dict(steps=12, batch=5, lr=0.01, eval_every=4, clip=0.05)

    alone, hists = [], []
    for seed, c in members:
        m = _model(name, seed=seed)
        hists.append(fit(m, list(m.parameters()), *tr[c], val=va[c],
                         generator=torch.Generator().manual_seed(100 + seed), **kw))
        alone.append(m)

    st = stacking.stack([_model(name, seed=seed) for seed, _ in members])
    X, Y = (torch.stack([t[i] for t in tr]) for i in (0, 1))
    val = tuple(torch.stack([t[i] for t in va]) for i in (0, 1))
    got = stacking.fit_stacked(st, X, Y, torch.tensor([c for _, c in members]),
                               [torch.Generator().manual_seed(100 + s) for s, _ in members],
                               val=val, **kw)
    Xt = torch.stack([va[c][0] for _, c in members])
    pred = stacking.predict_stacked(st, Xt)
    for r, (m, h) in enumerate(zip(alone, hists, strict=True)):
        assert got[r]["best_step"] == h["best_step"]
        assert np.allclose(got[r]["train_loss"], h["train_loss"], rtol=1e-9, atol=1e-12)
        assert np.allclose(got[r]["val_mse"], h["val_mse"], rtol=1e-9, atol=1e-12)
        want = m.state_dict()
        for k, v in stacking.member_state(st, r).items():
            assert torch.allclose(v, want[k], atol=1e-9), k
        with torch.no_grad():
            assert torch.allclose(pred[r], m(Xt[r]), atol=1e-9)
    # the runs differ (seeds and cells matter); every gradient norm here exceeds the clip
    assert not np.allclose(got[0]["train_loss"], got[1]["train_loss"])


def test_train_does_not_depend_on_which_runs_share_the_job():
    """train() on all smoke runs and on one seed's runs alone give that seed the same test
    errors: every stream comes from run.rng_seed, stacking changes nothing."""
    cfg = pipeline.resolve("pro-dyn", "smoke")
    cfg = {**cfg, "params": {**cfg["params"], "steps": 6, "eval_every": 3}}
    d = experiment.prepare(cfg, np.random.default_rng(0))
    runs = grid.runs(cfg)
    both, _ = experiment.train(cfg, d, runs)
    one, curves = experiment.train(cfg, d, [r for r in runs if r.seed == 1])
    assert len(one) and len({r.method for r in runs}) == 5
    for key, v in one.items():
        assert np.allclose(v, both[key], rtol=1e-5, atol=1e-7), key
    # every run kept its own best checkpoint among the validation steps
    assert all(int(v) in (3, 6) for k, v in one.items() if k.endswith("/best_step"))


def test_informer_decoder_reads_only_the_start_token_of_the_lookback_and_the_encoder():
    """INFORMER-LITE's forecast depends on the early lookback only through the encoder
    (cross-attention): zeroing the cross-attention output removes that dependence."""
    m = _model(models.INFORMER, L=16, H=8)
    x1 = _x(seed=4)
    x2 = x1.clone()
    x2[..., :8] = x2[..., :8] * 0.2 + 0.5  # change the early lookback, keep the start token
    with torch.no_grad():
        z1, _, _ = models.revin_normalise(x1)
        assert not torch.allclose(m.inner(z1), m.inner(models.revin_normalise(x2)[0]))
        for layer in m.decoder:
            layer.cross.o.weight.zero_()
            layer.cross.o.bias.zero_()
        # same start token (the last label_len steps, in normalised units) -> same forecast
        z2 = z1.clone()
        z2[..., :8] = torch.randn(z2[..., :8].shape, generator=torch.Generator().manual_seed(5),
                                  dtype=torch.float64)
        assert torch.allclose(m.inner(z1), m.inner(z2), atol=1e-12)


def test_split_windows_by_hand():
    """Training windows stay inside the training part; a test window's forecast starts at the
    test part's first step and its lookback reaches into the validation part."""
    z = np.arange(40, dtype=float)[None]
    bounds = np.array([20, 28, 40])
    past, fut = data.split_windows(z, bounds, "train", 4, 2, 1)
    assert past.shape == (15, 1, 4) and fut[-1, 0, -1] == 19
    past, fut = data.split_windows(z, bounds, "test", 4, 2, 4)
    assert fut[:, 0, 0].tolist() == [28, 32, 36] and past[0, 0].tolist() == [24, 25, 26, 27]
    past, fut = data.split_windows(z, bounds, "val", 4, 2, 4)
    assert fut[:, 0, 0].tolist() == [20, 24]


def test_datasets_standardised_on_train_and_ett_periods():
    rng = np.random.default_rng(0)
    z, bounds = data.make_dataset("ett", rng, 7, 6000, [0.7, 0.1, 0.2])
    tr = z[:, :bounds[0]]
    assert np.allclose(tr.mean(1), 0, atol=1e-9) and np.allclose(tr.std(1), 1, atol=1e-6)
    # ETT-LIKE without trend and shifts: its two strongest periods are 24 and 96
    x = data.ett_like(np.random.default_rng(1), 7, 4800)
    x = x - np.array([np.polyval(np.polyfit(np.arange(4800), c, 3), np.arange(4800)) for c in x])
    top = np.argsort(periodogram(x).mean(0))[-2:] + 1       # bins 1.. (DC dropped)
    assert sorted(4800 / top) == [24.0, 96.0]
    w = data.weather_like(np.random.default_rng(2), 7, 3000)
    assert w.shape == (7, 3000) and np.isfinite(w).all()


def test_least_squares_reference_extrapolates_a_sinusoid_exactly():
    """Any sinusoid is an exact linear recurrence: the least-squares L -> H map forecasts a
    noiseless period-24 signal with (near) zero error, and a period-96 one with L = 192."""
    t = np.arange(3000)
    z = np.stack([np.sin(2 * np.pi * t / 24 + 0.3), np.sin(2 * np.pi * t / 96 + 1.0)])
    bounds = np.array([2100, 2400, 3000])
    ref = experiment.least_squares_reference(z, bounds, 192, 48, 1e-8)
    assert ref["mse"] < 1e-6


def test_adam_fit_of_linear_approaches_the_least_squares_optimum():
    t = np.arange(2400)
    g = np.random.default_rng(0)
    z = np.stack([np.sin(2 * np.pi * t / 24) + 0.1 * g.standard_normal(2400)])
    bounds = np.array([1680, 1920, 2400])
    ref = experiment.least_squares_reference(z, bounds, 48, 12, 1e-6)
    tr = data.split_windows(z, bounds, "train", 48, 12, 1)
    te = data.split_windows(z, bounds, "test", 48, 12, 8)
    X, Y = (torch.as_tensor(a, dtype=torch.float32) for a in tr)
    torch.manual_seed(0)
    m = models.Linear(48, 12)
    fit(m, list(m.parameters()), X, Y, steps=600, batch=32,
        generator=torch.Generator().manual_seed(0), clip=1.0)
    with torch.no_grad():
        pred = m(torch.as_tensor(te[0], dtype=torch.float32)).numpy()
    mse = float(np.mean((pred - te[1]) ** 2))
    assert ref["mse"] <= mse < 1.3 * ref["mse"]


# ----------------------------------------------------------------------------- claims


def _cfg(cells=tuple((d, L) for d in ("ett", "weather") for L in (48, 192))):
    settings = {f"{d}-L{L}": {"dataset": d, "lookback": L, "horizon": 48} for d, L in cells}
    return {"settings": settings, "seeds": list(range(5))}


def _metrics(mse: dict, ls=None, noise=0.01):
    """mse[(method, dataset, L)] -> a mean MSE; 5 seeds with small spread."""
    rows = []
    g = np.random.default_rng(0)
    for (m, d, L), v in mse.items():
        for s in range(5):
            rows.append({"method": m, "setting": f"{d}-L{L}", "seed": s,
                         "test_mse": v * (1 + noise * g.standard_normal()),
                         "ls_test_mse": (ls or {}).get((d, L), 0.5)})
    return pd.DataFrame(rows)


def _grid(lin, inf, dyn, patch, df):
    out = {}
    for d in ("ett", "weather"):
        for L in (48, 192):
            for m, f in (("linear", lin), ("informer-lite", inf), ("informer-lite+dyn", dyn),
                         ("patch-lite", patch), ("patch-lite-dynfirst", df)):
                out[(m, d, L)] = f(d, L)
    return out


def _verdicts(metrics, cfg=None):
    return {c.id: c.verdict for c in claims.check(cfg or _cfg(), metrics, None)}


def test_claims_reproduced_on_metrics_built_to_pass():
    # long lookback helps the final-DYN models; INFORMER is poor; DYN-first hurts
    mse = _grid(lin=lambda d, L: 0.5 if L == 48 else 0.35,
                inf=lambda d, L: 0.8,
                dyn=lambda d, L: 0.6 if L == 48 else 0.45,
                patch=lambda d, L: 0.5 if L == 48 else 0.36,
                df=lambda d, L: 0.6 if L == 48 else 0.45)
    ls = {(d, L): 0.4 if L == 48 else 0.3 for d in ("ett", "weather") for L in (48, 192)}
    v = _verdicts(_metrics(mse, ls))
    assert set(v.values()) == {REPRODUCED}, v


def test_claims_not_reproduced_on_metrics_built_to_fail():
    # INFORMER as good as LINEAR, +DYN no better, DYN-first as good, no lookback gain
    mse = _grid(lin=lambda d, L: 0.5, inf=lambda d, L: 0.5, dyn=lambda d, L: 0.55,
                patch=lambda d, L: 0.5, df=lambda d, L: 0.49)
    ls = {(d, L): 0.4 for d in ("ett", "weather") for L in (48, 192)}
    v = _verdicts(_metrics(mse, ls))
    assert set(v.values()) == {NOT_REPRODUCED}, v


def test_claim2_needs_three_of_four_cells_and_failed_runs_are_named():
    # +DYN much better on two cells only: the mean ratio passes but the fraction is 0.5
    mse = _grid(lin=lambda d, L: 0.5, inf=lambda d, L: 0.8,
                dyn=lambda d, L: 0.3 if d == "ett" else 0.85,
                patch=lambda d, L: 0.5, df=lambda d, L: 0.6)
    out = {c.id: c for c in claims.check(_cfg(), _metrics(mse), None)}
    c2 = out["C2-add-dyn"]
    assert c2.parts["mean_ratio"].verdict == REPRODUCED
    assert c2.parts["fraction_lower"].verdict == NOT_REPRODUCED
    # a NaN run cannot help: the statistic becomes non-finite (inconclusive) and it is named
    mse = _grid(lin=lambda d, L: 0.5, inf=lambda d, L: 0.8, dyn=lambda d, L: 0.5,
                patch=lambda d, L: 0.5, df=lambda d, L: 0.6)
    m = _metrics(mse)
    m.loc[(m["method"] == "informer-lite+dyn") & (m["setting"] == "ett-L48") & (m["seed"] == 2),
          "test_mse"] = np.nan
    c2 = {c.id: c for c in claims.check(_cfg(), m, None)}["C2-add-dyn"]
    assert c2.verdict == INCONCLUSIVE
    assert "informer-lite+dyn/ett-L48/seed 2" in c2.to_dict()["note"]


def test_claims_inconclusive_when_cells_are_missing():
    mse = {(m, "ett", 48): 0.5 for m in models.METHODS}
    v = _verdicts(_metrics(mse), _cfg([("ett", 48)]))
    assert set(v.values()) == {INCONCLUSIVE}


# ----------------------------------------------------------------------------- config


def test_bad_params_are_one_config_error_naming_the_key():
    cfg = pipeline.resolve("pro-dyn", "smoke")
    bad = {**cfg, "params": {**cfg["params"], "steps": -1}}
    with pytest.raises(ConfigError, match="steps"):
        check_params(bad, REPO / "config")
    bad = {**cfg, "params": {**cfg["params"], "dynfirst_patch": 7}}
    with pytest.raises(ConfigError, match="dynfirst_patch"):
        experiment.check_params(bad)
    bad = {**cfg, "settings": {"x": {"dataset": "ett", "lookback": 48}}}
    with pytest.raises(ConfigError, match="horizon"):
        check_params(bad, REPO / "config")


def test_pipeline_smoke(tmp_path):
    cfg = pipeline.resolve("pro-dyn", "smoke")
    out = pipeline.run_inprocess(cfg, tmp_path)
    doc = json.loads(out["claims"].read_text())
    assert [c["id"] for c in doc["claims"]][:5] == ["C1-partial-dynamics", "C2-add-dyn",
                                                    "C3-dyn-last", "C4-lookback-gain",
                                                    "C5-dyn-lookback-soft"]
    metrics = pd.read_csv(out["metrics"])
    assert len(metrics) == 5 * len(cfg["seeds"]) and np.isfinite(metrics["test_mse"]).all()
    # the best checkpoint is one of the validation steps
    assert set(metrics["best_step"]) <= {25, 30}
    assert {p.stem for p in out["figures"].glob("*.png")} == set(cfg["figures"])
