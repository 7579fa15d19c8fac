"""Behaviour tests of the smac paper: the batched networks against the shared modules, the
policy score against autograd, each method's update on tiny hand-checkable cases, the metrics,
the claim checkers on data built to fail, and the smoke pipeline end to end."""

import json

import numpy as np
import pandas as pd
import pytest
import torch

from icml26 import grid, pipeline
from icml26.claims import NOT_REPRODUCED, REPRODUCED
from icml26.papers.smac import claims, cql, data, experiment, iql, smac
from icml26.papers.smac.nets import Actors, Critics
from icml26.papers.smac.sac import Agent, sac_update
from icml26.rl.nets import QNetwork, TanhGaussianPolicy

torch.set_num_threads(1)  # as in the train jobs: faster for these tiny networks, and deterministic

P = {"alpha": 0.05, "gamma": 0.9, "tau": 0.005, "lr": 3e-4, "beta_bc": 0.5,
     "alpha_cql": 2.0, "iql_tau": 0.7, "iql_beta": 3.0, "iql_clip": 100.0}


def _batch(R, B, seed=0):
    g = torch.Generator().manual_seed(seed)
    return {"obs": torch.rand(R, B, 2, generator=g) * 2 - 1,
            "act": (torch.rand(R, B, 2, generator=g) * 2 - 1),
            "rew": -torch.rand(R, B, generator=g), "next_obs": torch.rand(R, B, 2, generator=g),
            "rtg": -torch.rand(R, B, generator=g) * 5}


# --------------------------------------------------------------------------------------------
# networks
# --------------------------------------------------------------------------------------------
def test_batched_nets_equal_the_shared_modules():
    actors, critics = Actors([11, 12]), Critics([21, 22])
    obs, act = torch.rand(2, 5, 2), torch.rand(2, 5, 2) * 2 - 1
    q = critics(obs, act)
    for r in range(2):
        pol = TanhGaussianPolicy(2, 2)
        pol.load_state_dict({k: torch.from_numpy(v) for k, v in actors.state_dicts()[r].items()})
        a_ref, _ = pol(obs[r], deterministic=True)
        assert torch.allclose(actors.mean_action(obs)[r], a_ref, atol=1e-6)
        torch.manual_seed(21 + r)  # same seed -> same init as the stacked critics
        q1, q2 = QNetwork(2, 2), QNetwork(2, 2)
        assert torch.allclose(q[r, 0], q1(obs[r], act[r]), atol=1e-6)
        assert torch.allclose(q[r, 1], q2(obs[r], act[r]), atol=1e-6)


def test_sample_logp_matches_shared_policy():
    actors = Actors([3])
    pol = TanhGaussianPolicy(2, 2)
    pol.load_state_dict({k: torch.from_numpy(v) for k, v in actors.state_dicts()[0].items()})
    obs = torch.rand(1, 7, 2)
    g = torch.Generator().manual_seed(0)
    a_ref, logp_ref = pol(obs[0], generator=g)
    eps = torch.randn(7, 2, generator=torch.Generator().manual_seed(0))
    a, logp = actors.sample(obs, eps[None])
    assert torch.allclose(a[0], a_ref, atol=1e-6) and torch.allclose(logp[0], logp_ref, atol=1e-4)


def test_closed_form_score_equals_autograd():
    actors = Actors([5])
    obs = torch.rand(1, 9, 2)
    act = (torch.rand(1, 9, 2) * 1.8 - 0.9).requires_grad_(True)
    g_auto = torch.autograd.grad(actors.log_prob(obs, act).sum(), act)[0]
    assert torch.allclose(actors.score(obs, act.detach()), g_auto, rtol=1e-4, atol=1e-4)


def test_runs_in_a_batch_train_independently():
    """Two runs trained together = each trained alone (the vectorisation is exact)."""
    b = _batch(2, 16)
    noise = torch.randn(2, 3, 16, 2, generator=torch.Generator().manual_seed(1))
    both = Agent(Actors([1, 2]), Critics([3, 4]), P)
    smac.offline_update(both, b, noise, torch.tensor([1.0, 0.0]), P)
    for r, (sa, sc, lam) in enumerate([(1, 3, 1.0), (2, 4, 0.0)]):
        one = Agent(Actors([sa]), Critics([sc]), P)
        smac.offline_update(one, {k: v[r:r + 1] for k, v in b.items()}, noise[r:r + 1],
                            torch.tensor([lam]), P)
        for x, y in zip(both.critics.parameters(), one.critics.parameters(), strict=True):
            assert torch.allclose(x[2 * r:2 * r + 2], y, atol=1e-6)
        for x, y in zip(both.actors.parameters(), one.actors.parameters(), strict=True):
            assert torch.allclose(x[r:r + 1], y, atol=1e-6)


def test_adam_equals_torch_adam():
    from icml26.papers.smac.sac import Adam

    g = torch.Generator().manual_seed(0)
    w0 = torch.randn(3, 4, generator=g)
    a, b = w0.clone().requires_grad_(True), w0.clone().requires_grad_(True)
    ours, ref = Adam([a], 0.01), torch.optim.Adam([b], lr=0.01)
    x = torch.randn(8, 4, generator=g)
    for _ in range(5):
        for w, opt in ((a, ours), (b, ref)):
            opt.zero_grad()
            (torch.sin(x @ w.T) ** 2).sum().backward()
            opt.step()
    assert torch.allclose(a, b, atol=1e-6)


# --------------------------------------------------------------------------------------------
# methods
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("space", ["action", "pre_tanh"])
def test_score_matching_loss_equals_its_equation(space):
    agent = Agent(Actors([1]), Critics([2]), P)
    b = _batch(1, 6)
    loss = smac.score_matching_loss(agent, b["obs"], b["act"], space)
    a = b["act"].clamp(-0.999, 0.999)
    want = 0.0
    for k in range(2):  # per critic, by plain autograd on each sample
        ak = a.clone().requires_grad_(True)
        q = agent.critics(b["obs"], ak)[:, k]
        gq = torch.autograd.grad(q.sum(), ak)[0]
        resid = gq - 0.05 * agent.actors.score(b["obs"], a)
        if space == "pre_tanh":
            resid = resid * (1 - a * a)
        want += (resid ** 2).sum(-1).mean()
    assert torch.allclose(loss, want.reshape(1), rtol=1e-5)


def test_score_matching_pulls_critic_gradient_to_alpha_score():
    """Minimising the SM term alone makes grad_a Q approach alpha * score."""
    agent = Agent(Actors([1]), Critics([2]), {**P, "lr": 3e-3})
    b = _batch(1, 64)
    first = float(smac.score_matching_loss(agent, b["obs"], b["act"], "pre_tanh").detach())
    for _ in range(60):
        loss = smac.score_matching_loss(agent, b["obs"], b["act"], "pre_tanh").sum()
        agent.critic_opt.zero_grad()
        loss.backward()
        agent.critic_opt.step()
    last = float(smac.score_matching_loss(agent, b["obs"], b["act"], "pre_tanh").detach())
    assert last < 0.2 * first


def test_cql_penalty_by_hand_and_calql_lower_bound():
    agent = Agent(Actors([1]), Critics([2]), P)
    b = _batch(1, 4)
    eps = torch.randn(1, 3, 4, 2)
    uni = torch.rand(1, 3, 4, 2) * 2 - 1
    pen, q_data = cql.cql_penalty(agent, b, eps, uni, torch.tensor([False]))
    with torch.no_grad():
        a_pi = torch.stack([agent.actors.sample(b["obs"], eps[:, j])[0] for j in range(3)], 1)
        qs = [agent.critics(b["obs"], x[:, None].squeeze(1)) for x in
              [uni[:, j] for j in range(3)] + [a_pi[:, j] for j in range(3)]]
        lse = torch.logsumexp(torch.stack(qs, 2), 2)
        want = (lse - agent.critics(b["obs"], b["act"])).mean(-1).sum(-1)
    assert torch.allclose(pen.detach(), want, atol=1e-5)
    # Cal-QL with a huge G_mu: every policy value is lifted to G, the penalty grows
    b_hi = {**b, "rtg": torch.full((1, 4), 50.0)}
    pen_cal, _ = cql.cql_penalty(agent, b_hi, eps, uni, torch.tensor([True]))
    with torch.no_grad():
        lse_cal = torch.logsumexp(torch.stack(qs[:3] + [torch.full_like(qs[0], 50.0)] * 3, 2), 2)
        want_cal = (lse_cal - agent.critics(b["obs"], b["act"])).mean(-1).sum(-1)
    assert torch.allclose(pen_cal.detach(), want_cal, atol=1e-4)


def test_expectile_loss_minimiser_is_the_expectile():
    x = torch.tensor(np.random.default_rng(0).exponential(size=2000), dtype=torch.float32)
    v = torch.zeros(1, requires_grad=True)
    opt = torch.optim.SGD([v], lr=0.5)
    for _ in range(500):
        opt.zero_grad()
        iql.expectile_loss((x - v)[None], 0.7).sum().backward()
        opt.step()
    # the 0.7-expectile e solves 0.7 E(x - e)_+ = 0.3 E(e - x)_+
    e = float(v.detach())
    lhs = 0.7 * np.clip(x.numpy() - e, 0, None).mean()
    rhs = 0.3 * np.clip(e - x.numpy(), 0, None).mean()
    assert abs(lhs - rhs) < 1e-3 and e > float(x.mean())


def test_iql_actor_imitates_high_advantage_actions():
    agent = Agent(Actors([1]), Critics([2]), {**P, "lr": 1e-2})
    from icml26.papers.smac.nets import ValueNets
    from icml26.papers.smac.sac import adam

    value = ValueNets([3])
    vopt = adam(value.parameters(), 1e-2)
    g = torch.Generator().manual_seed(0)
    B = 128
    obs = torch.zeros(1, B, 2)
    act = torch.rand(1, B, 2, generator=g) * 2 - 1
    rew = -((act - 0.5) ** 2).sum(-1)  # best action (0.5, 0.5)
    b = {"obs": obs, "act": act, "rew": rew, "next_obs": obs, "rtg": rew}
    p = {**P, "gamma": 0.0}
    agent.gamma = 0.0
    for _ in range(300):
        iql.offline_update(agent, value, vopt, b, p)
    a = agent.actors.mean_action(obs[:, :1]).detach()[0, 0]
    assert torch.all((a - 0.5).abs() < 0.25), a


def test_sac_solves_a_bandit():
    """gamma = 0, one state, r = -||a - (0.5, -0.3)||^2: the SAC actor mean moves there."""
    agent = Agent(Actors([1]), Critics([2]), {**P, "lr": 1e-2, "gamma": 0.0})
    g = torch.Generator().manual_seed(0)
    target = torch.tensor([0.5, -0.3])
    B = 64
    for _ in range(150):
        act = torch.rand(1, B, 2, generator=g) * 2 - 1
        b = {"obs": torch.zeros(1, B, 2), "act": act,
             "rew": -((act - target) ** 2).sum(-1), "next_obs": torch.zeros(1, B, 2)}
        sac_update(agent, b, torch.randn(1, 2, B, 2, generator=g))
    a = agent.actors.mean_action(torch.zeros(1, 1, 2)).detach()[0, 0]
    assert torch.all((a - target).abs() < 0.15), a


# --------------------------------------------------------------------------------------------
# data and metrics
# --------------------------------------------------------------------------------------------
def test_dataset_rewards_and_returns_to_go():
    rng = np.random.default_rng(0)
    ds = data.make_dataset("medium", 0.9, rng, scale=0.02)
    assert ds["obs"].shape == (300, 2)  # 10 episodes x 30 steps
    assert np.allclose(ds["rew"], data.reward_of(ds["next_obs"]), atol=1e-5)
    ep_r, ep_g = ds["rew"].reshape(10, 30), ds["rtg"].reshape(10, 30)
    want = sum(0.9 ** t * ep_r[:, t] for t in range(30))
    assert np.allclose(ep_g[:, 0], want, atol=1e-4)
    assert np.allclose(ep_g[:, :-1], ep_r[:, :-1] + 0.9 * ep_g[:, 1:], atol=1e-4)
    s, s2 = ds["obs"].reshape(10, 30, 2), ds["next_obs"].reshape(10, 30, 2)
    assert np.allclose(s[:, 1:], s2[:, :-1])


def test_normalised_score_anchors():
    rng = np.random.default_rng(1)
    r_opt = data.mean_return(data.optimal_policy, 100, rng)
    r_rand = data.mean_return(data.random_policy(rng), 100, rng)
    beh = data.mean_return(data.behaviour_policy(50, 0.3, rng), 100, rng)
    d = {"R_opt": np.array(r_opt), "R_rand": np.array(r_rand)}
    ns = experiment.normalised([r_opt, r_rand, beh], d)
    assert ns[0] == pytest.approx(1.0) and ns[1] == pytest.approx(0.0)
    assert 0.1 < ns[2] < 0.7


def test_run_metrics_by_hand():
    ns_on = {0: 0.6, 100: 0.4, 200: 0.5, 300: 0.8, 400: 0.9}
    m = experiment.run_metrics(ns_on, [0.6, 0.5, 0.7, 0.69, 0.9], gap=1.5, drop_window=200)
    assert m["ns_off"] == 0.6 and m["initial_drop"] == pytest.approx(0.2)
    assert m["regret"] == pytest.approx(np.mean([0.6, 0.5, 0.2, 0.1]))
    assert m["final_ns"] == pytest.approx(np.mean([0.5, 0.8, 0.9]))
    assert m["valley_depth"] == pytest.approx(0.1)
    assert m["monotonicity"] == pytest.approx(3 / 4)  # 0.6->0.5 fails, 0.7->0.69 passes
    assert m["q_gap"] == 1.5


# --------------------------------------------------------------------------------------------
# claims
# --------------------------------------------------------------------------------------------
def _metrics(values: dict) -> pd.DataFrame:
    rows = []
    for m, cols in values.items():
        for s in range(3):
            rows.append({"method": m, "setting": "medium", "seed": s,
                         **{k: v + 0.001 * s for k, v in cols.items()}})
    return pd.DataFrame(rows)


GOOD = {"initial_drop": 0.0, "regret": 0.2, "monotonicity": 1.0, "valley_depth": 0.0}


def test_claims_reproduced_on_data_built_to_hold():
    base = {"initial_drop": 0.3, "regret": 0.5, "monotonicity": 0.5, "valley_depth": 0.2}
    m = _metrics({"smac": GOOD, "sac-bc": base, "cql": base, "calql": base, "iql": base})
    got = {c.id: c.verdict for c in claims.check({}, m, None)}
    assert set(got.values()) == {REPRODUCED}, got


def test_claims_not_reproduced_on_data_built_to_fail():
    bad_smac = {"initial_drop": 0.3, "regret": 0.5, "monotonicity": 0.2, "valley_depth": 0.3}
    base = {"initial_drop": 0.0, "regret": 0.2, "monotonicity": 1.0, "valley_depth": 0.0}
    m = _metrics({"smac": bad_smac, "sac-bc": base, "cql": base, "calql": base, "iql": base})
    got = {c.id: c.verdict for c in claims.check({}, m, None)}
    assert set(got.values()) == {NOT_REPRODUCED}, got


# --------------------------------------------------------------------------------------------
# pipeline
# --------------------------------------------------------------------------------------------
def test_smoke_end_to_end(tmp_path):
    cfg = pipeline.resolve("smac", "smoke")
    out = pipeline.run_inprocess(cfg, tmp_path)
    metrics = pd.read_csv(out["metrics"])
    assert len(metrics) == len(grid.runs(cfg))
    assert {"ns_off", "initial_drop", "regret", "final_ns", "valley_depth", "monotonicity",
            "q_gap"} <= set(metrics.columns)
    doc = json.loads(out["claims"].read_text())
    assert [c["id"][:3] for c in doc["claims"]] == [f"C{i}-" for i in range(1, 6)]
    for name in cfg["figures"]:
        assert (out["figures"] / f"{name}.png").exists()
    state = np.load(tmp_path / "smac" / "train" / "all.npz")
    assert any(k.endswith("actor_on/mu.weight") for k in state.files)
