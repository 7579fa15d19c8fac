"""Shared time-series blocks: generators reach their known laws, windows and splits match hand
cases, features and ridge match closed forms and scikit-learn, forecasters are channel-
independent, and every adapter is an exact no-op when initialised."""
import numpy as np
import pytest

from icml26.timeseries import features, generate, linear, metrics, windows


def rng(seed=0):
    return np.random.default_rng(seed)


# ------------------------------------------------------------------ generators

def test_ar1_has_its_autocorrelation_and_stationary_variance():
    x = generate.ar1(rng(), (4,), 20000, 0.8, 0.5)
    assert np.allclose(features.lag1_autocorr(x), 0.8, atol=0.02)
    assert np.allclose(x.var(axis=-1), 0.25 / (1 - 0.64), rtol=0.1)


def test_ar2_matches_its_yule_walker_autocorrelation():
    phi1, phi2 = 0.5, -0.3
    x = generate.ar2(rng(1), (3,), 30000, phi1, phi2, 1.0)
    rho1 = phi1 / (1 - phi2)
    assert np.allclose(features.lag1_autocorr(x), rho1, atol=0.02)


def test_stable_ar2_coefficients_have_roots_inside_the_radius():
    p1, p2 = generate.stable_ar2_coefficients(rng(2), 200, max_root=0.9)
    roots = [np.roots([1.0, -a, -b]) for a, b in zip(p1, p2, strict=False)]
    assert max(np.abs(r).max() for r in roots) <= 0.9 + 1e-9


def test_sinusoids_sum_components():
    t = np.arange(8)
    y = generate.sinusoids(t, [4.0, 8.0], [1.0, 2.0], [0.0, np.pi / 2])
    assert np.allclose(y, np.sin(2 * np.pi * t / 4) + 2 * np.cos(2 * np.pi * t / 8))


def test_piecewise_trend_is_continuous_and_linear_between_knots():
    tr = generate.piecewise_linear_trend(rng(3), (2,), 100, knot_every=25, slope_sd=0.1)
    assert tr.shape == (2, 100) and np.all(tr[:, 0] == 0)
    second = np.diff(tr, 2, axis=-1)
    # the slope changes only where a knot lies between the two differences
    assert np.allclose(np.delete(second, [23, 48, 73], axis=-1), 0)


def test_level_shifts_is_a_step_function_with_n_jumps():
    s = generate.level_shifts(rng(4), (5,), 200, 3, 0.5)
    assert np.all(s[:, 0] == 0)
    assert np.all((np.diff(s, axis=-1) != 0).sum(axis=-1) <= 3)


def test_onoff_markov_stationary_on_fraction():
    on = generate.onoff_markov(rng(5), (200,), 2000, p_on_off=0.10, p_off_on=0.05)
    assert on.mean() == pytest.approx(0.05 / 0.15, abs=0.02)
    # mean on-run length is 1 / p_on_off
    runs = np.diff(np.flatnonzero(np.diff(np.concatenate([[0], on[0].astype(int), [0]]))))[::2]
    assert runs.mean() == pytest.approx(10, rel=0.35)


def test_zero_inflated_lognormal_zero_fraction_and_median():
    z = generate.zero_inflated_lognormal(rng(6), (40000,), 0.7, 100.0, 0.8)
    assert (z == 0).mean() == pytest.approx(0.7, abs=0.01)
    assert np.median(z[z > 0]) == pytest.approx(100.0, rel=0.05)


def test_delay_shifts_each_series_by_its_own_lag():
    x = np.tile(np.arange(6.0), (2, 1))
    assert np.array_equal(generate.delay(x, [1, 2]), [[0, 0, 1, 2, 3, 4], [0, 0, 0, 1, 2, 3]])


def test_var_coefficients_reach_the_asked_spectral_radius():
    a = generate.stable_var_coefficients(rng(7), 7, 2, 0.3, 0.95)
    comp = np.zeros((14, 14))
    comp[:7] = np.concatenate(list(a), axis=1)
    comp[7:, :7] = np.eye(7)
    assert np.max(np.abs(np.linalg.eigvals(comp))) == pytest.approx(0.95)
    x = generate.var_process(rng(8), a, 3000, 0.5)
    assert x.shape == (7, 3000) and np.all(np.isfinite(x)) and np.abs(x).max() < 100


# ------------------------------------------------------------------ windows and metrics

def test_sliding_windows_hand_case():
    x = np.arange(20).reshape(2, 10)
    past, fut = windows.sliding_windows(x, 4, 2, stride=2)
    assert past.shape == (3, 2, 4) and fut.shape == (3, 2, 2)
    assert np.array_equal(past[1], [[2, 3, 4, 5], [12, 13, 14, 15]])
    assert np.array_equal(fut[2], [[8, 9], [18, 19]])
    assert windows.sliding_windows(np.arange(5), 4, 2)[0].shape == (0, 4)


def test_chrono_split_covers_the_series_in_order_and_rejects_bad_fractions():
    parts = windows.chrono_split(101, [0.6, 0.2, 0.2])
    assert parts[0].start == 0 and parts[-1].stop == 101
    assert all(a.stop == b.start for a, b in zip(parts[:-1], parts[1:], strict=False))
    with pytest.raises(ValueError, match="sum to 1"):
        windows.chrono_split(10, [0.5, 0.2])


def test_standardiser_and_instance_normalise_round_trip():
    x = rng(9).normal(5.0, 3.0, (3, 50))
    st = windows.Standardiser().fit(x)
    z = st.transform(x)
    assert np.allclose(z.mean(axis=-1), 0) and np.allclose(z.std(axis=-1), 1)
    assert np.allclose(st.inverse(z), x)
    zi, m, s = windows.instance_normalise(x, eps=0.0)
    assert np.allclose(zi * s + m, x) and np.allclose(zi.std(axis=-1), 1)


def test_mse_mae_per_channel_hand_case():
    pred = np.zeros((2, 2, 3))
    # channel 0 is off by 1, channel 1 by 2
    target = np.stack([np.ones((2, 3)), 2 * np.ones((2, 3))], axis=1)
    assert np.allclose(metrics.per_channel(metrics.mse, pred, target), [1, 4])
    assert np.allclose(metrics.per_channel(metrics.mae, pred, target), [1, 2])
    assert metrics.mse(pred, target) == pytest.approx(2.5)


# ------------------------------------------------------------------ features and ridge

def test_spectral_entropy_is_zero_for_one_tone_and_high_for_noise():
    t = np.arange(256)
    assert features.spectral_entropy(np.sin(2 * np.pi * 8 * t / 256)) == pytest.approx(0, abs=1e-9)
    two = np.sin(2 * np.pi * 8 * t / 256) + np.sin(2 * np.pi * 20 * t / 256)
    assert features.spectral_entropy(two) == pytest.approx(np.log(2) / np.log(128))
    assert features.spectral_entropy(rng(10).standard_normal((20, 256))).mean() > 0.85
    assert features.seasonal_strength(two) == pytest.approx(0.5)


def test_corr_and_lagged_corr_find_a_known_lead():
    a = rng(11).standard_normal(2000)
    b = np.roll(a, 5)  # b(t) = a(t - 5): a leads b by 5
    lc = features.lagged_corr(b, a, 10)
    assert np.argmax(lc) + 1 == 5 and lc.max() > 0.99
    assert features.corr(a, a) == pytest.approx(1.0)
    assert features.corr(a, np.ones_like(a)) == 0.0


def test_ridge_matches_scikit_learn_and_ar_forecast_iterates():
    from sklearn.linear_model import Ridge
    x = generate.ar1(rng(12), (1,), 500, 0.7, 1.0)[0]
    X, y = linear.lag_matrix(x, 4)
    assert np.array_equal(X[0], x[3::-1][:4]) and y[0] == x[4]
    w, b = linear.ridge_fit(X, y, alpha=2.0)
    ref = Ridge(alpha=2.0).fit(X, y)
    assert np.allclose(w, ref.coef_, atol=1e-10) and b == pytest.approx(ref.intercept_)
    # an exact AR(1) with coefficient 0.5 is continued geometrically
    fc = linear.ridge_ar_forecast(np.array([[3.0, 2.0]]), np.array([0.5]), 0.0, 3)
    assert np.allclose(fc, [[1.0, 0.5, 0.25]])


# ------------------------------------------------------------------ torch models and adapters

torch = pytest.importorskip("torch")
from icml26.timeseries import models  # noqa: E402


def test_revin_round_trip():
    x = torch.randn(4, 3, 32) * 5 + 2
    z, m, s = models.revin_normalise(x)
    assert torch.allclose(z.mean(-1), torch.zeros(4, 3), atol=1e-5)
    assert torch.allclose(models.revin_denormalise(z, m, s), x, atol=1e-4)


@pytest.mark.parametrize("factory", [
    lambda: models.PatchTransformer(64, 16, 8, 8, 16, 2, 32, 2),
    lambda: models.PatchTransformer(48, 12, 16, 8, 16, 2, 32, 1, pre_norm=False),
    lambda: models.MLPForecaster(64, 16, hidden=(32,)),
])
def test_forecasters_are_channel_independent_and_scale_equivariant(factory):
    torch.manual_seed(0)
    m = factory()
    L = m.lookback if hasattr(m, "lookback") else 64
    x = torch.randn(2, 3, L)
    y = m(x)
    assert y.shape[:2] == (2, 3)
    x2 = x.clone()
    x2[:, 1] = torch.randn(2, L) * 10
    y2 = m(x2)
    assert torch.allclose(y[:, [0, 2]], y2[:, [0, 2]], atol=1e-5)
    assert not torch.allclose(y[:, 1], y2[:, 1])
    # RevIN: an affine change of the input maps to the same affine change of the forecast
    assert torch.allclose(m(3 * x + 7), 3 * y + 7, atol=1e-3)


def test_patch_count_follows_length_and_stride():
    m = models.PatchTransformer(192, 48, 16, 8, 8, 2, 16, 1)
    assert m.n_patches == 23 and m.encode(torch.zeros(1, 2, 192)).shape == (1, 2, 23, 8)


def test_lora_is_a_no_op_at_init_and_trains_only_its_factors():
    torch.manual_seed(0)
    m = models.PatchTransformer(64, 16, 8, 8, 16, 2, 32, 2)
    x = torch.randn(3, 2, 64)
    before = m(x).detach()
    models.freeze(m)
    params = models.add_lora(m, rank=4, alpha=8, generator=torch.Generator().manual_seed(1))
    assert len(params) == 2 * 6 * 2  # A and B on q, k, v, o, ff1, ff2 of two layers
    assert torch.equal(m(x), before)
    trainable = [p for p in m.parameters() if p.requires_grad]
    assert {id(p) for p in trainable} == {id(p) for p in params}
    with torch.no_grad():
        m.layers[0].q.lora_B.fill_(0.1)
    assert not torch.allclose(m(x), before)
    with pytest.raises(ValueError, match="no nn.Linear"):
        models.add_lora(torch.nn.Sequential(torch.nn.ReLU()), 2, 4)


def test_lora_update_equals_the_low_rank_product():
    base = torch.nn.Linear(5, 3)
    lo = models.LoRALinear(base, rank=2, alpha=4, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        lo.lora_B.copy_(torch.randn(3, 2))
    x = torch.randn(7, 5)
    assert torch.allclose(lo(x), base(x) + 2.0 * x @ (lo.lora_B @ lo.lora_A).T, atol=1e-6)


def test_frequency_adapter_is_a_no_op_at_init_and_extrapolates_bin_harmonics_exactly():
    L, H = 64, 16
    fa = models.FrequencyAdapter(n_channels=2, lookback=L, horizon=H, k=3)
    t = np.arange(L + H)
    s = np.stack([np.sin(2 * np.pi * 3 * t / L + 0.4) + 0.5 * np.cos(2 * np.pi * 7 * t / L),
                  np.cos(2 * np.pi * 32 * t / L)])  # the second is the Nyquist tone
    z = torch.tensor(s[None, :, :L], dtype=torch.float64)
    z_in, y = fa(z)
    assert torch.equal(z_in, z) and torch.all(y == 0)
    filtered, waves = fa.harmonics(z)
    assert np.allclose(waves.sum(2)[0].numpy(), s[:, L:], atol=1e-9)
    assert np.allclose(filtered[0].numpy(), s[:, :L], atol=1e-9)
    with torch.no_grad():
        fa.w.fill_(1.0)
        fa.lam.fill_(1.0)
    z_in, y = fa(z + 0.01 * torch.randn_like(z, dtype=torch.float64))
    assert np.allclose(y[0].detach().numpy(), s[:, L:], atol=0.05)
    with pytest.raises(ValueError, match="k=40"):
        models.FrequencyAdapter(1, L, H, 40)


def test_channel_adapter_is_zero_at_init_and_mixes_channels_once_trained():
    torch.manual_seed(0)
    ca = models.ChannelAdapter(d_token=8, n_recent=4, horizon=5, d_adapter=6)
    tokens, z = torch.randn(2, 3, 8), torch.randn(2, 3, 16)
    assert torch.all(ca(tokens, z) == 0)
    torch.nn.init.normal_(ca.out.weight)
    y = ca(tokens, z)
    z2 = z.clone()
    z2[:, 2, -1] += 5.0  # change channel 2 only: channel 0's output moves through attention
    assert y.shape == (2, 3, 5) and not torch.allclose(ca(tokens, z2)[:, 0], y[:, 0])


def test_fit_recovers_a_linear_map_and_restores_the_best_validation_state():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(512, 1, 4, generator=g)
    w_true = torch.tensor([0.5, -1.0, 0.0, 2.0])
    Y = (X @ w_true)[..., None]
    lin = torch.nn.Linear(4, 1)
    hist = models.fit(lin, lin.parameters(), X, Y, steps=400, batch=64, generator=g, lr=0.05,
                      val=(X[:64], Y[:64]), eval_every=50, eval_at_start=True)
    assert torch.allclose(lin.weight[0], w_true, atol=0.05)
    assert hist["val_steps"][0] == 0 and hist["val_mse"][-1] < 1e-3
    best = min(hist["val_mse"])
    with torch.no_grad():
        restored = torch.nn.functional.mse_loss(lin(X[:64]), Y[:64]).item()
    assert restored == pytest.approx(best, rel=1e-5)
    assert models.count_parameters(lin.parameters()) == 5


def test_fit_takes_the_same_steps_as_torch_adam_per_group():
    g = torch.Generator().manual_seed(3)
    X, Y = torch.randn(64, 1, 4, generator=g), torch.randn(64, 1, 2, generator=g)
    torch.manual_seed(0)
    ours = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2))
    ref = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2))
    ref.load_state_dict(ours.state_dict())
    groups = [{"params": ours[0].parameters(), "lr": 0.01}, {"params": ours[1].parameters()}]
    models.fit(ours, groups, X, Y, steps=5, batch=16, generator=torch.Generator().manual_seed(1),
               lr=0.003)
    opt = torch.optim.Adam([{"params": ref[0].parameters(), "lr": 0.01},
                            {"params": ref[1].parameters()}], lr=0.003)
    gen = torch.Generator().manual_seed(1)
    for _ in range(5):
        idx = torch.randint(0, 64, (16,), generator=gen)
        opt.zero_grad()
        torch.nn.functional.mse_loss(ref(X[idx]), Y[idx]).backward()
        opt.step()
    for a, b in zip(ours.parameters(), ref.parameters(), strict=True):
        assert torch.allclose(a, b, atol=1e-6)


def test_encoder_attention_is_the_written_out_softmax_with_its_mask():
    torch.manual_seed(0)
    layer = models.EncoderLayer(8, 2, 16)
    h = torch.randn(3, 5, 8)
    mask = torch.triu(torch.ones(5, 5, dtype=torch.bool), 1)  # causal: no look at later tokens

    def reference(m):
        def split(t):
            return t.view(3, 5, 2, 4).transpose(1, 2)
        q, k, v = split(layer.q(h)), split(layer.k(h)), split(layer.v(h))
        att = q @ k.transpose(-2, -1) / 2.0
        if m is not None:
            att = att.masked_fill(m, float("-inf"))
        return layer.o((torch.softmax(att, -1) @ v).transpose(1, 2).reshape(3, 5, 8))

    for m in (None, mask):
        assert torch.allclose(layer.attention(h, m), reference(m), atol=1e-6)
    # with the causal mask the first token's output ignores every later token
    h2 = h.clone()
    h2[:, 1:] += 1.0
    assert torch.allclose(layer.attention(h2, mask)[:, 0], layer.attention(h, mask)[:, 0])
