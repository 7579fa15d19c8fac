"""Behaviour tests of cyber-reward-sparsity: MiniTitan's mechanics and rewards on hand-solved
steps, the ground-truth score, the reference policies, the claim checkers on data built to fail,
sharding independence and the pipeline end to end."""

import json

import numpy as np
import pandas as pd
import pytest

from icml26 import grid, pipeline
from icml26.claims import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED
from icml26.papers.cyber_reward_sparsity import claims, experiment
from icml26.papers.cyber_reward_sparsity import minititan as mt


def _line_game(**kw):
    """Path graph 0-1-2-3 (entry nodes 0, 1), v0 = 0.5 everywhere."""
    adj = np.zeros((4, 4), bool)
    for i in range(3):
        adj[i, i + 1] = adj[i + 1, i] = True
    return mt.Game(adj=adj, v0=np.full(4, 0.5), **kw)


def _U(m, n, target=0.0, hit=0.99, spread=0.99, pick=0.0):
    U = np.empty((m, 2 + 2 * n))
    U[:, 0], U[:, 1], U[:, 2:2 + n], U[:, 2 + n:] = target, hit, spread, pick
    return U


def test_graph_follows_spec_seeds():
    import networkx as nx

    adj, v0 = mt.make_graph(6)
    g = nx.connected_watts_strogatz_graph(6, 4, 0.3, seed=106)
    assert {tuple(sorted(e)) for e in g.edges} == {
        (i, j) for i in range(6) for j in range(i + 1, 6) if adj[i, j]}
    assert np.allclose(v0, np.random.default_rng(206).uniform(0.3, 0.7, 6))


def test_blue_actions_and_red_attack_by_hand():
    g = _line_game()
    c, v, t, k = g.initial(1)
    # nothing compromised: red targets an entry node; U0 = 0.6 picks the second (node 1);
    # hit iff U1 < skill * v = 0.45
    c, v, t, k, info = g.step(c, v, t, k, [0], _U(1, 4, target=0.6, hit=0.4))
    assert c[0].tolist() == [False, True, False, False] and info["n_after"][0] == 1
    # reduce_vulnerability(2): 0.5 -> 0.35; red: frontier of {1} is {0, 2}, U1 = 0.5 misses
    c, v, t, k, info = g.step(c, v, t, k, [1 + 4 + 2], _U(1, 4, hit=0.5))
    assert v[0, 2] == pytest.approx(0.35) and c[0].sum() == 1
    # restore(1): c_1 <- 0 and v_1 <- v0_1; then red attacks an entry node but misses
    v[0, 1] = 0.2
    c, v, t, k, info = g.step(c, v, t, k, [1 + 1], _U(1, 4, hit=0.99))
    assert not c.any() and v[0, 1] == 0.5 and info["target_was_comp"][0]
    assert t[0] == 3
    # floor of the vulnerability
    v[0, 3] = 0.12
    c, v, t, k, _ = g.step(c, v, t, k, [1 + 4 + 3], _U(1, 4))
    assert v[0, 3] == pytest.approx(0.1)


def test_spread_and_early_loss():
    g = _line_game(loss_frac=0.75)
    c = np.array([[True, True, False, False]])
    v, t = np.full((1, 4), 0.5), np.zeros(1, np.int64)
    # attack hits node 2 (only frontier node); node 1 spreads (U < 0.05) to its safe neighbour 2,
    # node 0 has no safe neighbour: 3 of 4 compromised -> lost (>= 75%)
    U = _U(1, 4, hit=0.0, spread=0.01)
    c2, _, _, _, info = g.step(c, v, t, c, [0], U)
    assert c2[0].tolist() == [True, True, True, False]
    assert info["lost"][0] and info["done"][0]
    # spread alone, attack misses: node 1 -> node 2
    c3, _, _, _, info = g.step(c, v, t, c, [0], _U(1, 4, hit=0.99, spread=0.01))
    assert c3[0].tolist() == [True, True, True, False]


def test_rewards_by_hand():
    g = _line_game()
    n = 4
    base = {"target_was_comp": np.array([False]), "at_min": np.array([False]),
            "v_decrease": np.array([0.0]), "n_before": np.array([0])}

    def r(kind, n_after, **kw):
        info = {**base, "kind": np.array([kind]), "n_after": np.array([n_after]), **kw}
        return {k: float(x[0]) for k, x in g.rewards(info).items()}

    x = r(mt.DO_NOTHING, 0)
    assert x == {"SP": 1.0, "SPN": 1.0, "DS": -0.0, "DYT": 0.5}
    x = r(mt.DO_NOTHING, 2, n_before=np.array([2]))  # frac 0.5 > 0.3
    assert x["SP"] == 0 and x["DS"] == -2
    assert x["DYT"] == pytest.approx(0.5 - 0.4 - 0.2)
    assert r(mt.DO_NOTHING, n)["SPN"] == -1.0
    # restore of a safe node: -1 - 3
    assert r(mt.RESTORE, 0)["DYT"] == pytest.approx(-4.0)
    # restore that lowers compromise 2 -> 1: -1 + exp(-0.4 * 0.25)
    x = r(mt.RESTORE, 1, n_before=np.array([2]), target_was_comp=np.array([True]))
    assert x["DYT"] == pytest.approx(-1 + np.exp(-0.1))
    # reduce: -0.5 + 4 * 0.15; at minimum: -0.5 - 0.5
    assert r(mt.REDUCE, 0, v_decrease=np.array([0.15]))["DYT"] == pytest.approx(0.1)
    assert r(mt.REDUCE, 0, at_min=np.array([True]))["DYT"] == pytest.approx(-1.0)


def test_partial_observability_scan_reveals_and_restore_clears():
    g = _line_game(observe="partial")
    assert g.n_actions == 1 + 2 * 4 + 1
    c, v, t, k = g.initial(1)
    c[0, 1] = True  # compromised, not yet known
    assert g.obs(c, v, t, k)[0, :4].tolist() == [0, 0, 0, 0]
    c, v, t, k, info = g.step(c, v, t, k, [9], _U(1, 4, hit=0.0))  # scan; red hits node 0
    assert info["kind"][0] == mt.SCAN and k[0].tolist() == [False, True, False, False]
    assert c[0, :2].all() and g.obs(c, v, t, k)[0, :4].tolist() == [0, 1, 0, 0]
    c, v, t, k, _ = g.step(c, v, t, k, [2], _U(1, 4, hit=0.99))    # restore(1)
    assert not k.any() and c[0].tolist() == [True, False, False, False]
    assert g.rewards(info)["DYT"][0] == pytest.approx(-(2 / 4 - 0.3))  # scan costs 0


def test_ground_truth_score():
    g = _line_game(skill=0.0, spread=0.0)
    U = np.random.default_rng(0).random((50, 3, g.n_uniforms))
    res = mt.evaluate(g, mt.do_nothing_policy(g), U)
    assert np.allclose(res["gt"], 1.0) and np.allclose(res["all_safe"], 50)
    # certain compromise: t=1: 1 node, t=2: 2 nodes, t=3: 3 = 75% -> lost; after that 0 safe
    g = _line_game(spread=0.0, loss_frac=0.75)
    g.v0 = np.ones(4) / 0.9  # skill * v = 1
    U = np.full((50, 1, g.n_uniforms), 0.5)
    res = mt.evaluate(g, mt.do_nothing_policy(g), U)
    assert res["gt"][0] == pytest.approx((3 + 2 + 1) / (50 * 4))
    assert res["steps"][0] == 3


def test_greedy_policy_restores_highest_degree_then_patches_entry():
    g = _line_game()
    c = np.array([[True, False, True, False], [False] * 4])
    v = np.array([[0.5] * 4, [0.3, 0.6, 0.1, 0.9]])
    a = mt.greedy_policy(g)(g.obs(c, v, np.zeros(2), c), c, v)
    assert a[0] == 1 + 2          # node 2 (degree 2) over node 0 (degree 1)
    assert a[1] == 1 + 4 + 1      # most vulnerable of the entry-adjacent nodes {0, 1, 2}


def test_cvar_is_mean_of_worst_tenth():
    x = np.arange(100.0)
    assert experiment.cvar(x) == pytest.approx(4.5)
    assert experiment.cvar([3.0, 1.0, 2.0]) == 1.0


def _metrics(good: bool, n_seeds: int = 10):
    """Synthetic metrics where SP is clearly better (good) or clearly worse than every other:
    SP's GT is tight across seeds and the others' spread wide when good; when bad, SP's GT is
    spread and the others' GT the same in every seed."""
    rng = np.random.default_rng(0)
    rows = []
    for setting in ("ppo-n6", "ppo-n12", "dqn-n6"):
        for seed in range(n_seeds):
            for m in ("SP", "SPN", "DS", "DYT", "random", "do-nothing", "greedy"):
                if m == "SP":
                    gt = (0.9 if good else 0.2) + (0.002 if good else 0.2) * rng.random()
                    cost = 0.1 if good else 0.9
                else:
                    gt = 0.3 + 0.2 * rng.random() if good else 0.9
                    cost = 0.5
                if m == "greedy":
                    gt = 0.95 if good else 0.5
                if m == "random":
                    gt = 0.2 if good else 0.8
                rows.append({"method": m, "setting": setting, "seed": seed, "gt": gt,
                             "cvar10": gt - 0.05, "costly_rate": cost})
    return pd.DataFrame(rows)


def test_claims_fail_on_data_built_to_fail_and_pass_otherwise():
    cfg = pipeline.resolve("cyber-reward-sparsity", "default")
    bad = claims.check(cfg, _metrics(False), pd.DataFrame())
    good = claims.check(cfg, _metrics(True), pd.DataFrame())
    assert len(bad) == 7
    for c in bad:
        assert c.verdict == NOT_REPRODUCED, c.id
    for c in good:
        assert c.verdict == REPRODUCED, c.id


def test_iqr_claim_is_a_seed_bootstrap_and_needs_three_seeds():
    cfg = pipeline.resolve("cyber-reward-sparsity", "default")
    c3 = {c.id: c for c in claims.check(cfg, _metrics(True), pd.DataFrame())}["3-reliability"]
    part = c3.parts["value"]
    assert part.n == 10 and part.lo <= part.measured <= part.hi < 0
    # the point estimate is the mean over sizes of IQR(SP) - IQR(DYT) over all seeds
    m = _metrics(True)
    want = np.mean([claims.iqr(m[(m.setting == s) & (m.method == "SP")]["gt"])
                    - claims.iqr(m[(m.setting == s) & (m.method == "DYT")]["gt"])
                    for s in ("ppo-n6", "ppo-n12")])
    assert part.measured == pytest.approx(want)
    # two seeds cannot be resampled: inconclusive, not a decisive verdict from two numbers
    two = {c.id: c for c in claims.check(cfg, _metrics(True, 2), pd.DataFrame())}
    assert two["3-reliability"].verdict == INCONCLUSIVE
    # at 5 seeds a resample that draws one seed 4 or 5 times (3.4% of resamples) has zero
    # IQR for every method, so the upper bound of IQR(SP) - IQR(DYT) cannot fall below 0
    five = {c.id: c for c in claims.check(cfg, _metrics(True, 5), pd.DataFrame())}
    assert five["3-reliability"].parts["value"].hi == 0.0
    assert five["3-reliability"].verdict == INCONCLUSIVE


def test_failed_run_is_named_and_cannot_pass():
    cfg = pipeline.resolve("cyber-reward-sparsity", "default")
    m = _metrics(True)
    m.loc[(m.setting == "ppo-n6") & (m.method == "SP") & (m.seed == 3), "gt"] = np.nan
    c1 = {c.id: c for c in claims.check(cfg, m, pd.DataFrame())}["1-sparse-beats-dyt"]
    assert c1.verdict == INCONCLUSIVE
    assert "seeds 3" in c1.to_dict()["note"]


def test_runs_do_not_depend_on_sharding():
    cfg = pipeline.resolve("cyber-reward-sparsity", "smoke")
    cfg["params"] = {**cfg["params"], "ppo_steps": 1024, "eval_every": 1024,
                     "eval_episodes": 10, "curve_episodes": 4}
    data = experiment.prepare(cfg, None)
    runs = grid.runs(cfg)
    sp = [r for r in runs if r.method == "SP"]
    both, _ = experiment.train(cfg, data, [r for r in runs if r.method in ("SP", "DYT")])
    alone, _ = experiment.train(cfg, data, sp)
    for k, v in alone.items():
        assert np.allclose(v, both[k], atol=1e-6), k


def test_smoke_pipeline_end_to_end(tmp_path):
    """Smoke: every method evaluated on the same 100 episodes, reference policies behave as
    their definitions say, learning curves at the configured steps, and one seed decides no
    claim (every claim inconclusive, none decided from a single seed)."""
    cfg = pipeline.resolve("cyber-reward-sparsity", "smoke")
    out = pipeline.run_inprocess(cfg, tmp_path)
    m = pd.read_csv(out["metrics"]).set_index("method")
    assert set(m.index) == {"SP", "DYT", "random", "do-nothing", "greedy"}
    assert m["gt"].between(0, 1).all() and m["costly_rate"].between(0, 1).all()
    # do-nothing never acts; random acts costly in 2N of its 2N + 1 actions (N = 6)
    assert m.loc["do-nothing", "costly_rate"] == 0
    assert abs(m.loc["random", "costly_rate"] - 12 / 13) < 0.03
    # the scripted heuristic defends far better than doing nothing or acting at random
    assert m.loc["greedy", "gt"] > max(m.loc["random", "gt"], m.loc["do-nothing", "gt"]) + 0.2
    # wasted restores are a subset of restores, restores of all costly actions
    assert (m["wasted_restore_rate"] <= m["restore_rate"] + 1e-12).all()
    assert (m["restore_rate"] <= m["costly_rate"] + 1e-12).all()
    curves = pd.read_csv(tmp_path / "cyber-reward-sparsity" / "train" / "ppo-n6.csv")
    assert sorted(curves["step"].unique()) == [2048, 4096]
    assert set(curves["method"]) == {"SP", "DYT"}
    verdicts = {c["id"]: c["verdict"] for c in json.loads(out["claims"].read_text())["claims"]}
    assert len(verdicts) == 7 and set(verdicts.values()) == {INCONCLUSIVE}
    assert (out["figures"] / "gt_by_reward.png").exists()


def test_iqr_collapse_share_by_enumeration():
    """Every draw of n seeds with replacement (n = 4, 5, 6): the share whose IQR is 0 for any
    distinct values equals the formula."""
    import itertools

    rng = np.random.default_rng(1)
    for n in (4, 5, 6):
        vals = [rng.permutation(n) for _ in range(6)]  # several value orderings
        hits = 0
        for idx in itertools.product(range(n), repeat=n):
            idx = np.array(idx)
            hits += all(claims.iqr(v[idx]) == 0 for v in vals)
        assert hits / n ** n == pytest.approx(claims.iqr_collapse_share(n), abs=1e-12), n
