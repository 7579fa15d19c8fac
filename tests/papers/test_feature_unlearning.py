"""Behaviour tests of the feature-unlearning paper: the quadrature against the exact ReLU
population loss, gradients against finite differences, the critical manifold and a_eq
against an independent root finder, the ODE against the spec's reference trajectory, the
network's SGD step against finite differences of the batch loss, claim checkers on data built
to pass and to fail, bad params, and the pipeline end to end (smoke)."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import brentq, fsolve

from icml26 import pipeline
from icml26.claims import NOT_REPRODUCED, REPRODUCED
from icml26.papers.feature_unlearning import claims, experiment, model
from icml26.papers.feature_unlearning.network import OnlineNetwork

QUAD = model.gauss_hermite(81)


def test_gauss_hermite_moments():
    z, w = QUAD
    assert np.isclose(w.sum(), 1.0)
    assert np.isclose((w * z * z).sum(), 1.0) and np.isclose((w * z ** 4).sum(), 3.0)
    # the target's Hermite parts: E y = 0, E y z = 1, E y^2 = 1 + beta^2
    y = model.target(z, 0.7)
    assert np.isclose((w * y).sum(), 0, atol=1e-12) and np.isclose((w * y * z).sum(), 1.0)
    assert np.isclose((w * y * y).sum(), 1 + 0.49)


def test_smoothed_relu_by_hand_at_zero_overlap():
    z = np.array([-1.3, 0.0, 2.0])
    s, ds = model.smoothed(np.zeros(3), z, "relu", QUAD)
    assert np.allclose(s, 1 / np.sqrt(2 * np.pi))      # E ReLU(xi)
    assert np.allclose(ds, z / 2)                        # z Phi(0)


@pytest.mark.parametrize("m", [0.05, 0.3, 0.6, 0.85])
@pytest.mark.parametrize("beta", [0.0, 0.5, 1.0])
def test_quadrature_matches_exact_relu_loss(m, beta):
    a = 0.7
    got = model.loss_and_grad(m, a, beta, "relu", QUAD)
    exact = model.relu_closed_form(m, a, beta)
    assert np.allclose(got, exact, atol=1e-8)


def test_tanh_inner_quadrature_matches_relu_path_structure():
    # the tanh branch uses a second Gauss-Hermite sum; check it against a direct 2-D sum
    m, a, beta = 0.6, 0.9, 0.5
    z, w = QUAD
    q = np.sqrt(1 - m * m)
    h = m * z[:, None] + q * z[None, :]
    s = (np.tanh(h) * w[None, :]).sum(1)
    L = 0.5 * (w * (a * s - model.target(z, beta)) ** 2).sum()
    assert np.isclose(model.loss_and_grad(m, a, beta, "tanh", QUAD)[0], L)
    # its gradient against central differences
    e = 1e-6
    for i, (dm, da) in enumerate(((e, 0), (0, e))):
        num = (model.loss_and_grad(m + dm, a + da, beta, "tanh", QUAD)[0]
               - model.loss_and_grad(m - dm, a - da, beta, "tanh", QUAD)[0]) / (2 * e)
        assert np.isclose(model.loss_and_grad(m, a, beta, "tanh", QUAD)[1 + i], num, atol=1e-7)


def test_closed_form_gradient_by_finite_differences():
    e = 1e-6
    for m, a, beta in ((0.3, 0.5, 0.5), (0.8, 1.7, 1.0), (0.95, 0.2, 0.0)):
        L, gm, ga = model.relu_closed_form(m, a, beta)
        assert np.isclose(gm, (model.relu_closed_form(m + e, a, beta)[0]
                               - model.relu_closed_form(m - e, a, beta)[0]) / (2 * e), atol=1e-7)
        assert np.isclose(ga, (model.relu_closed_form(m, a + e, beta)[0]
                               - model.relu_closed_form(m, a - e, beta)[0]) / (2 * e), atol=1e-7)


def test_critical_manifold_and_equilibrium_against_brentq_and_fsolve():
    beta = 0.5
    for a in (0.6, 0.8, 2.0):
        ref = brentq(lambda m, a=a: model.relu_closed_form(m, a, beta)[1], 1e-6, 0.999999)
        assert np.isclose(model.critical_m(a, beta, "relu", QUAD)[0], ref, atol=1e-6)
        assert np.isclose(model.critical_m(a, beta, "relu-exact", QUAD)[0], ref, atol=1e-9)
    # exact loss: dL/dm(1, a) = a (a - 1 + 2 beta / sqrt(pi)) / 2 <= 0 for a <= 1 - 2 beta /
    # sqrt(pi), so m* = 1 there; 81-node quadrature smooths the kink and puts m* below 1
    a_c = 1 - 2 * beta / np.sqrt(np.pi)
    assert np.isclose(model.relu_closed_form(1.0, a_c, beta)[1], 0.0, atol=1e-12)
    assert model.critical_m(a_c - 0.01, beta, "relu-exact", QUAD)[0] == 1.0
    assert model.critical_m(a_c + 0.01, beta, "relu-exact", QUAD)[0] < 1.0
    # the equilibrium of the full system: dL/dm = dL/da = 0 (exact loss)
    m_eq, a_eq = fsolve(lambda v: model.relu_closed_form(v[0], v[1], beta)[1:], [0.8, 0.8])
    assert np.isclose(model.a_equilibrium(beta, "relu", QUAD), a_eq, atol=1e-6)
    # beta = 0: no interior fast equilibrium below a = 1 (m* = 1) and a_eq = 1
    assert model.critical_m(0.5, 0.0, "relu", QUAD)[0] == 1.0
    assert np.isclose(model.a_equilibrium(0.0, "relu", QUAD), 1.0, atol=1e-6)


def test_ode_reproduces_the_specs_reference_trajectory():
    t = np.arange(0, 1201) * 0.05
    m, a, L = model.solve(0.5, 0.1, 0.05, 0.05, t, "relu", QUAD, 1e-9, 1e-11)
    d = experiment.drop(t, m)
    # spec: peak ~0.964 at t ~ 3, settles at ~0.833, a grows to ~0.855 (Euler dt = 0.005)
    assert abs(d["m_peak"] - 0.964) < 0.003 and abs(d["t_peak"] - 3) < 0.5
    assert abs(m[-1] - 0.833) < 0.002 and abs(a[-1] - 0.855) < 0.002
    assert np.max(np.diff(L)) <= 1e-12          # a gradient flow: the loss never rises
    # the end point is the fixed point: on the manifold, at a_eq
    assert np.isclose(a[-1], model.a_equilibrium(0.5, "relu", QUAD), atol=1e-4)
    # against an independent fixed-step RK4 of the exact-loss field
    f = model.field(0.5, 0.05, "relu", QUAD)
    y, h = np.array([0.05, 0.1]), 0.01
    for _ in range(300):          # to t = 3
        k1 = f(0, y)
        k2 = f(0, y + h / 2 * k1)
        k3 = f(0, y + h / 2 * k2)
        k4 = f(0, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    assert np.allclose(y, [m[60], a[60]], atol=1e-6)


def test_drop_by_hand():
    t = np.arange(6.0)
    d = experiment.drop(t, np.array([0.1, 0.5, 0.9, 0.7, 0.6, 0.5]), last=2)
    assert d["m_peak"] == 0.9 and d["t_peak"] == 2.0
    assert np.isclose(d["m_final"], 0.55) and np.isclose(d["delta"], 0.35)
    assert np.isclose(d["D"], 0.35 / 0.9)


def _net(**kw):
    base = dict(d=5, width=7, batch=64, steps=3, eta_a=0.05, record_every=1, n_eval=50)
    return OnlineNetwork(0.5, 0.3, 0.05, **{**base, **kw})


def test_sgd_step_is_the_mean_field_scaled_gradient():
    net = _net()
    rng = np.random.default_rng(0)
    W, a = net.init(rng)
    a = a + rng.normal(size=a.shape).astype(a.dtype)     # distinct second-layer weights
    X = rng.standard_normal((64, 5)).astype(np.float32)
    W64, a64, X64 = W.astype(float), a.astype(float), X.astype(float)
    y = model.target(X64[:, 0], 0.5)

    def loss(W_, a_):
        f = np.maximum(X64 @ W_.T, 0) @ a_ / 7
        return 0.5 * np.mean((f - y) ** 2)

    e = 1e-6
    ga = np.array([(loss(W64, a64 + e * np.eye(7)[j]) - loss(W64, a64 - e * np.eye(7)[j]))
                   / (2 * e) for j in range(7)])
    gW = np.zeros_like(W64)
    for j in range(7):
        for k in range(5):
            E = np.zeros_like(W64)
            E[j, k] = e
            gW[j, k] = (loss(W64 + E, a64) - loss(W64 - E, a64)) / (2 * e)
    W1, a1 = net.step(W, a, X)
    assert np.allclose(a1, a64 - 0.05 * 7 * ga, atol=1e-5)       # N x gradient
    G = 7 * gW
    G -= np.sum(G * W64, axis=1, keepdims=True) * W64            # tangent part
    Wn = W64 - (0.05 / 0.05) * G
    Wn /= np.linalg.norm(Wn, axis=1, keepdims=True)
    assert np.allclose(W1, Wn, atol=1e-5)
    assert np.allclose(np.linalg.norm(W1, axis=1), 1.0, atol=1e-6)


def test_eval_loss_matches_exact_population_loss_of_an_aligned_network():
    # every unit on w*: f = a ReLU(z), L = 0.5 (a^2 kappa(1) - 2 a E[s y] + 1 + beta^2)
    net = _net(n_eval=400000, width=3)
    W = np.zeros((3, 5), np.float32)
    W[:, 0] = 1
    a = np.full(3, 0.8, np.float32)
    X = np.random.default_rng(1).standard_normal((400000, 5)).astype(np.float32)
    got = net.eval_loss(W, a, X, model.target(X[:, 0].astype(float), 0.5))
    exact = model.relu_closed_form(1.0, 0.8, 0.5)[0]
    assert abs(got - exact) < 0.01


def test_network_records_and_peak_loss():
    net = _net(steps=20, record_every=5).fit(np.random.default_rng(0), np.random.default_rng(1),
                                             loss_every=10)
    assert np.allclose(net.t_, [0, 0.25, 0.5, 0.75, 1.0])
    assert np.isclose(net.a_[0], 0.3)
    finite = np.isfinite(net.loss_)
    assert finite[[0, 2, 4]].all() and finite[int(np.argmax(net.m_))]


# --------------------------------------------------------------------------- claims
def _metrics(good: bool) -> pd.DataFrame:
    """ODE cells of the default grid and network runs, built to pass (good) or fail."""
    rows = []
    a_eq = {0.0: 1.0, 0.25: 0.9, 0.5: 0.85, 1.0: 0.75}
    for b in (0.0, 0.25, 0.5, 1.0):
        for a0 in (0.1, 0.3, 1.0, 2.0):
            below = a0 < a_eq[b] and b > 0
            D = {0.0: 0.0, 0.25: 0.05, 0.5: 0.13, 1.0: 0.15}[b] if below else 0.0
            if not good and b == 1.0:
                D = 0.06 if below else 0.02         # breaks claims 2 and 4
            if not good and b == 0.5 and a0 == 2.0:
                D = 0.01                             # breaks claim 3
            for seed in range(5):
                rows.append({"method": "ode", "setting": f"b{b:g}-a{a0:g}", "seed": seed,
                             "beta": b, "a0": a0, "eps": 0.05, "tanh": 0.0,
                             "D": D, "delta": D * 0.95, "m_peak": 0.95, "t_peak": 3.0,
                             "m_final": 1.0 if b == 0 else 0.8, "a_eq": a_eq[b],
                             "m_max_fall_after_1": 0.0 if good else 0.01,
                             "L_max_rise": -1e-12 if good else 1e-6,
                             "mstar_max_step": -1e-3 if good else 1e-3,
                             "dev_after_3": 0.02 if good else 0.05, "dev_max": 0.9,
                             "a_at_3": 0.5, "m_at_net_T": 0.83,
                             "mstar_a0.4": 0.99, "mstar_a0.8": 0.85, "mstar_a2": 0.56})
    rng = np.random.default_rng(0)
    for (b, a0, delta) in ((0.0, 0.1, 0.02), (0.5, 0.1, 0.17), (0.5, 2.0, 0.015)):
        for seed in range(5):
            dl = delta + 0.005 * rng.normal()
            if not good and b == 0.0:
                dl = 0.1 + 0.005 * rng.normal()
            rows.append({"method": "network", "setting": f"b{b:g}-a{a0:g}", "seed": seed,
                         "beta": b, "a0": a0, "eps": 0.05, "tanh": 0.0, "delta": dl,
                         "D": dl, "m_T": 0.8 + 0.005 * rng.normal() if good else 0.7,
                         "loss_T_minus_peak": -0.01 if good else 0.01})
    return pd.DataFrame(rows)


def _verdicts(good):
    cfg = pipeline.resolve("feature-unlearning", "default")
    return {c.id: c.verdict for c in claims.check(cfg, _metrics(good), pd.DataFrame())}


def test_claims_pass_on_data_built_to_pass():
    v = _verdicts(True)
    assert set(v.values()) == {REPRODUCED}, v


def test_claims_fail_on_data_built_to_fail():
    v = _verdicts(False)
    assert set(v.values()) == {NOT_REPRODUCED}, v


def test_claim3_fails_when_large_a0_still_drops():
    cfg = pipeline.resolve("feature-unlearning", "default")
    m = _metrics(True)
    m.loc[(m["method"] == "ode") & (m["beta"] == 0.5) & (m["a0"] == 2.0), "D"] = 0.01
    out = {c.id: c for c in claims.check(cfg, m, pd.DataFrame())}
    assert out["3-initial-scale"].verdict == NOT_REPRODUCED
    assert out["4-critical-manifold"].verdict == REPRODUCED     # 0.01 is not "> 0.01"


def test_failed_network_run_is_named_and_cannot_pass():
    cfg = pipeline.resolve("feature-unlearning", "default")
    m = _metrics(True)
    m.loc[(m["method"] == "network") & (m["seed"] == 3) & (m["beta"] == 0.5)
          & (m["a0"] == 0.1), "delta"] = np.nan
    c = {c.id: c for c in claims.check(cfg, m, pd.DataFrame())}["7-network-validation"]
    assert c.verdict != REPRODUCED and "3" in c.to_dict()["note"]


def test_bad_params_are_one_config_error_line():
    from icml26.config import check_params
    from icml26.errors import ConfigError

    root = Path(__file__).resolve().parents[2] / "config"
    for key, bad in (("steps", 0), ("eps", -0.1), ("activation", "gelu"), ("widths", [])):
        cfg = pipeline.resolve("feature-unlearning", "default")
        cfg["params"][key] = bad
        with pytest.raises(ConfigError) as info:
            check_params(cfg, root)
        assert "\n" not in str(info.value) and key in str(info.value)


def test_smoke_end_to_end(tmp_path):
    cfg = pipeline.resolve("feature-unlearning", "smoke")
    cfg["params"].update(steps=40, n_eval=2000, T=5)
    paths = pipeline.run_inprocess(cfg, tmp_path)
    m = pd.read_csv(paths["metrics"])
    assert set(m["method"]) == {"ode", "network"}
    ode = m[m["method"] == "ode"].set_index("setting")
    assert np.isfinite(ode["a_eq"]).all() and (ode["L_max_rise"] <= 1e-9).all()
    assert np.isclose(ode.loc["b0.5-a0.1", "a_eq"], model.a_equilibrium(0.5, "relu", QUAD))
    net = m[m["method"] == "network"].iloc[0]
    assert net["t_peak"] <= 2.0 and np.isfinite(net["loss_T_minus_peak"])
    for name in cfg["figures"]:
        assert (paths["figures"] / f"{name}.png").exists()
    doc = paths["claims"].read_text()
    assert "1-dichotomy" in doc and "7-network-validation" in doc
