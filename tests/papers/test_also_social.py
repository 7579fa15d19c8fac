"""Behaviour tests of also-social: the numpy surrogate network against torch (same weights,
Adam, clipping, cosine schedule), its per-arm parameter gradients against torch autograd,
ALSO-lin against scikit-learn's Ridge, LinUCB against a direct transcription of Li et al.'s
Algorithm 1, UCB1 and EXP3 on hand-solved cases, ALSO's selection rule (and ALSO-iw's) on
fixed predictions, the simulator's reward formula and history features by hand, determinism
and shard invariance, claim checkers on data built to pass and to fail, bad params, and the
pipeline end to end (smoke)."""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from icml26 import grid, pipeline
from icml26.claims import NOT_REPRODUCED, REPRODUCED
from icml26.papers.also_social import claims, experiment, policies, sim
from icml26.papers.also_social.surrogate import MLPSurrogate, RidgeSurrogate

CONFIG = Path(__file__).resolve().parents[2] / "config"


def _draw(seed):
    g = np.random.default_rng(seed)

    def draw(tail):
        return g.random((2,) + tuple(tail))
    return draw


def _torch_net(model, lane):
    import torch
    from torch import nn

    W1, b1, W2, b2, W3, b3 = (torch.tensor(p[lane], dtype=torch.float64) for p in model.params_)
    net = nn.Sequential(nn.Linear(W1.shape[0], W1.shape[1]), nn.GELU(),
                        nn.Linear(W2.shape[0], W2.shape[1]), nn.GELU(), nn.Linear(W3.shape[0], 1))
    with torch.no_grad():
        for layer, W, b in zip((net[0], net[2], net[4]), (W1, W2, W3), (b1, b2, b3), strict=True):
            layer.weight.copy_(W.T)
            layer.bias.copy_(b[0])
    return net.double()


def test_mlp_surrogate_fit_matches_torch():
    import torch

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(2, 9, 5)), rng.random((2, 9))
    m = MLPSurrogate(5, hidden=6, steps=40, lr=0.01, dtype=np.float64)
    m.init(_draw(1), 2)
    nets = [_torch_net(m, i) for i in range(2)]          # the same initial weights
    m.fit(_draw(1), X, y)                                # fit re-inits from the same draws
    wd = min(0.01, 0.01 / 9)
    for i, net in enumerate(nets):
        opt = torch.optim.Adam(net.parameters(), lr=0.01, weight_decay=wd)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=40, eta_min=1e-4)
        xt, yt = torch.tensor(X[i]), torch.tensor(y[i])
        for _ in range(40):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(net(xt)[:, 0], yt)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=1.0)
            opt.step()
            sched.step()
        Xn = rng.normal(size=(4, 5))
        want = net(torch.tensor(Xn)).detach().numpy()[:, 0]
        got = m.predict(np.stack([Xn, Xn]))[i]
        assert np.allclose(got, want, atol=1e-6)


def test_parameter_gradients_match_autograd():
    import torch

    m = MLPSurrogate(4, hidden=5, steps=1, lr=0.01, dtype=np.float64).init(_draw(3), 2)
    X = np.random.default_rng(1).normal(size=(2, 3, 4))
    f, g = m.grad_outputs(X)
    net = _torch_net(m, 1)
    for j in range(3):
        net.zero_grad()
        out = net(torch.tensor(X[1, j:j + 1]))[0, 0]
        out.backward()
        flat = torch.cat([p.grad.T.reshape(-1) if p.ndim == 2 else p.grad.reshape(-1)
                          for p in net.parameters()]).numpy()
        assert np.isclose(f[1, j], out.item())
        assert np.allclose(g[1, j], flat, atol=1e-10)


def test_ridge_matches_sklearn():
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(3, 12, 6)), rng.random((3, 12))
    r = RidgeSurrogate(1.0).fit(X, y)
    Xn = rng.normal(size=(3, 5, 6))
    for i in range(3):
        ref = Ridge(alpha=1.0).fit(X[i], y[i])
        assert np.allclose(r.predict(Xn)[i], ref.predict(Xn[i]), atol=1e-10)


def test_linucb_matches_direct_algorithm():
    rng = np.random.default_rng(4)
    ctxs, rewards = rng.normal(size=(30, sim.CTX_DIM)), rng.random((30, sim.K))
    lin = policies.LinUCB(policies.LaneRNG([rng], 1), alpha=1.0)
    d = sim.CTX_DIM + 1
    A = [np.eye(d) for _ in range(sim.K)]
    b = [np.zeros(d) for _ in range(sim.K)]
    for t in range(30):
        x = np.append(ctxs[t], 1.0)
        ucb = [np.linalg.solve(A[k], b[k]) @ x + math.sqrt(x @ np.linalg.solve(A[k], x))
               for k in range(sim.K)]
        want = int(np.argmax(ucb))
        arm, _, _ = lin.select(t, ctxs[t:t + 1], None)
        assert arm[0] == want
        A[want] += np.outer(x, x)
        b[want] += rewards[t, want] * x
        lin.observe(t, arm, rewards[t, want:want + 1])


def _ctx(scen, n=1):
    c = np.zeros((n, sim.CTX_DIM))
    c[:, scen] = 1.0
    return c


def test_ucb1_by_hand():
    u = policies.UCB1(policies.LaneRNG([np.random.default_rng(0)], 1))
    means = np.linspace(0.1, 0.8, sim.K)
    seq = []
    for t in range(sim.K + 1):
        arm, _, _ = u.select(t, _ctx(2), None)
        seq.append(int(arm[0]))
        u.observe(t, arm, means[arm])
    assert seq[:sim.K] == list(range(sim.K))         # each arm once, lowest index first
    assert seq[-1] == sim.K - 1                       # equal bonuses: the best mean
    arm, _, _ = u.select(0, _ctx(3), None)            # another scenario keeps its own counts
    assert arm[0] == 0


def test_exp3_by_hand():
    e = policies.EXP3(policies.LaneRNG([np.random.default_rng(0)], 1), eta=0.2, gamma=0.1)
    arm, p, _ = e.select(0, _ctx(0), None)
    assert np.isclose(p[0], 1.0 / sim.K)
    e.observe(0, arm, np.array([0.5]))
    w = np.ones(sim.K)
    w[arm[0]] = math.exp(0.2 * 0.5 * sim.K)
    e.select(1, _ctx(0), None)
    assert np.allclose(e.p_[0], 0.9 * w / w.sum() + 0.1 / sim.K)
    assert np.isclose(policies.exp3_eta(20), math.sqrt(2 * math.log(8) / 160))


class _Fixed:
    """A stub surrogate whose predictions are given per turn."""

    def __init__(self, preds):
        self.preds, self.t = preds, 0

    def init(self, *a):
        return self

    def fit(self, *a):
        return self

    def predict(self, X):
        out = self.preds[self.t]
        self.t += 1
        return out


@pytest.mark.parametrize("mode", ["nn", "mean-zscore"])
def test_also_selection_rule_by_hand(mode):
    rng = np.random.default_rng(5)
    preds = [rng.random((1, sim.K)) for _ in range(3)]
    emb = np.zeros((1, sim.K, sim.EMB_DIM))
    s = policies.Surrogate(policies.LaneRNG([rng], 1), emb, mode=mode, eta=0.5, decay=0.9,
                           history=True, model="mlp", mlp={"hidden": 2, "steps": 1, "lr": 0.1},
                           ridge_lambda=1.0)
    s.model = _Fixed(preds)
    hist = np.zeros((1, sim.K, 3))
    iw = np.zeros(sim.K)
    for t in range(3):
        arm, p, f = s.select(t, _ctx(0), hist)
        nn = sum(0.9 ** (t - tau) * preds[tau][0] for tau in range(t + 1))
        if mode == "nn":
            score = nn
        else:
            z = [(v - v.mean()) / v.std(ddof=1) if v.std() > 0 else v - v.mean()
                 for v in (nn, iw)]
            score = 0.5 * z[0] + 0.5 * z[1]
        want = np.exp(0.5 * score) / np.exp(0.5 * score).sum()
        assert np.allclose(s.p_[0], want) and np.isclose(p[0], want[arm[0]])
        assert np.isclose(f[0], preds[t][0, arm[0]])
        r = 0.3 + 0.1 * t
        iw = 0.9 * iw
        iw[arm[0]] += r / max(want[arm[0]], 0.01)
        s.observe(t, arm, np.array([r]))


def test_reward_formula_and_history_by_hand():
    p = {"turns": 3, "switch_prob": 0.0, "signal_sd": 0.0, "reward_sd": 0.0, "stance_sd": 2.0,
         "use_decay": 0.6, "reward_decay": 0.7, "unused_reward": 0.5}
    env = sim.environment(np.random.default_rng(0), p)
    eps = sim.episodes(np.random.default_rng(1), 1, p, drift=True)
    assert (eps["stance"] == eps["stance"][:, :1]).all()     # no switching at probability 0

    class Same(policies.Policy):
        def select(self, t, ctx, hist):
            self.hist = hist
            return np.array([3]), np.ones(1), np.full(1, np.nan)

    pol = Same()
    out = sim.play(pol, sim.lane_env([env], 1), eps, p, counter=0.8)
    s, z = eps["scenario"][0], eps["stance"][0, 0]
    base = env["a"][s, 3] + env["B"][z, 3]
    u = [0.0, 0.4, 0.64]                                       # EWMA 0.6 of using arm 3
    want = [1 / (1 + math.exp(-(base - 0.8 * v))) for v in u]
    assert np.allclose(out["reward"][0], want)
    # history before turn 3: u = 0.64, rbar = (0.7 r0 + r1) / (0.7 + 1); unused arms 0.5
    h = pol.hist[0]
    assert np.isclose(h[3, 0], 0.64)
    assert np.isclose(h[3, 1], (0.7 * want[0] + want[1]) / 1.7)
    assert np.isclose(h[0, 1], 0.5) and np.isclose(h[3, 2], h[3, 0] * h[3, 1])


def _cfg(scale="default"):
    return pipeline.resolve("also-social", scale)


def test_runs_are_deterministic_and_shard_invariant():
    cfg = _cfg()
    cfg["params"].update(episodes=3, fit_steps=5, validation_episodes=2)
    runs = [grid.Run("also", "adversarial", s) for s in (0, 1)]
    a = experiment.run_group(cfg, "also", "adversarial", runs)
    b = experiment.run_group(cfg, "also", "adversarial", runs[1:])
    c = experiment.run_group(cfg, "also", "adversarial", runs)
    for k in experiment.ARRAYS:
        assert np.array_equal(a[runs[1].key][k], b[runs[1].key][k])
        assert np.array_equal(a[runs[0].key][k], c[runs[0].key][k])


def test_best_static_picks_the_validation_argmax():
    cfg = _cfg()
    cfg["params"].update(validation_episodes=3)
    run = grid.Run("best-static", "stationary", 0)
    choice, means = experiment.best_static_choice(cfg, run, 0.0, False)
    assert np.array_equal(choice, np.nanargmax(np.where(np.isnan(means), -np.inf, means), 1))


def _metrics(also, others):
    rows = []
    for seed in range(5):
        jitter = 0.05 * (seed - 2)
        rows.append({"method": "also", "setting": "adversarial", "seed": seed,
                     "score": also + jitter})
        for m, v in others.items():
            rows.append({"method": m, "setting": "adversarial", "seed": seed, "score": v})
    return pd.DataFrame(rows)


BASE = {"static": 4.0, "best-static": 6.0, "exp3": 5.0, "ucb1": 6.2, "also-nohist": 6.3,
        "linucb": 6.6}


def test_claims_pass_and_fail_on_built_data():
    cfg = _cfg()
    good = {c.id: c.verdict for c in claims.check(cfg, _metrics(7.0, BASE), pd.DataFrame())}
    assert set(good.values()) == {REPRODUCED}
    bad = {c.id: c.verdict for c in claims.check(cfg, _metrics(5.5, BASE), pd.DataFrame())}
    assert set(bad.values()) == {NOT_REPRODUCED}


def test_failed_also_run_cannot_support_a_claim():
    m = _metrics(7.0, BASE)
    m.loc[(m["method"] == "also") & (m["seed"] == 3), "score"] = np.nan
    c = claims.check(_cfg(), m, pd.DataFrame())[0].to_dict()
    assert c["verdict"] != REPRODUCED and "3" in c["note"]


def test_bad_params_are_one_config_error_line():
    from icml26.config import check_params
    from icml26.errors import ConfigError

    for key, bad in (("episodes", -1), ("eta", 0), ("switch_prob", 1.5), ("typo", 1)):
        cfg = _cfg()
        cfg["params"][key] = bad
        with pytest.raises(ConfigError) as info:
            check_params(cfg, CONFIG)
        assert "\n" not in str(info.value) and key in str(info.value)
    cfg = _cfg()
    cfg["settings"]["adversarial"]["drift"] = "yes"
    with pytest.raises(ConfigError):
        check_params(cfg, CONFIG)


def test_smoke_end_to_end(tmp_path):
    cfg = _cfg("smoke")
    paths = pipeline.run_inprocess(cfg, tmp_path)
    m = pd.read_csv(paths["metrics"])
    assert set(m["method"]) == {"also", "static"}
    assert ((m["score"] >= 0) & (m["score"] <= 10)).all()
    assert np.isfinite(m.loc[m["method"] == "also", "surrogate_mse"]).all()
    for name in cfg["figures"]:
        assert (paths["figures"] / f"{name}.png").exists()
    assert "1-headline" in paths["claims"].read_text()
