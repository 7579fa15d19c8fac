"""Behaviour tests of prm-adaptive-tts: the generator fit and sampling, the vote and rerank by
hand, beam search with an exact PRM and with the calculator, the escalation controller and its
FLOP accounting (the same as running the agent through the shared loop), the learned
controller, matched-compute interpolation, claim checkers on data built to pass and to fail,
params errors."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from icml26 import pipeline
from icml26.agents import Call, run_batch
from icml26.agents.worlds.chains import ChainWorld, check_step, make_chains
from icml26.claims import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED
from icml26.config import check_params
from icml26.errors import ConfigError
from icml26.papers.prm_adaptive_tts import claims, experiment
from icml26.papers.prm_adaptive_tts import controller as ctl
from icml26.papers.prm_adaptive_tts import models as md
from icml26.papers.prm_adaptive_tts import search as sr

REPO = Path(__file__).resolve().parents[2]
M = 23


class Scripted(sr.Models):
    """A generator putting ``p_right`` on the right value (rest uniform) and an exact PRM
    (0.99 right, ``wrong`` otherwise)."""

    def __init__(self, p_right=0.5, wrong=0.01):
        super().__init__(None, None, M, 9)
        self.p_right, self.wrong = p_right, wrong

    def logits(self, x, op, c):
        right = md.apply_op(x, op, c, M)
        p = np.full((len(x), M), (1 - self.p_right) / (M - 1))
        p[np.arange(len(x)), right] = self.p_right
        return np.log(p + 1e-12)

    def score(self, x, op, c, y):
        return np.where(check_step(x, op, c, y, M), 0.99, self.wrong)


def test_generator_fits_its_seen_triples_and_sampling_follows_softmax():
    tri = md.all_triples(M, 9)
    assert len(tri) == 414 and md.n_params(M, 9, 64, prm=False) == 3735
    seen = tri[np.random.default_rng(0).permutation(414)[:310]][None]
    params, losses, used = md.train_generators(M, 9, 64, seen, [np.random.default_rng(1)],
                                               steps=400, batch=128, lr=3e-3, fit_target=1.0,
                                               max_steps=1600)
    g = [a[0] for a in params]
    x, op, c = seen[0, :, 0], seen[0, :, 1], seen[0, :, 2]
    assert (md.gen_logits(g, x, op, c, M).argmax(1) == md.apply_op(x, op, c, M)).all()
    assert used[0] % 400 == 0 and losses[-1, 0] < losses[0, 0]
    # sampling: T = 0 is argmax; T = 1 frequencies match the softmax
    z = np.log(np.array([[0.5, 0.3, 0.2]]))
    assert md.sample(np.repeat(z, 4, 0), 0.0, None).tolist() == [0, 0, 0, 0]
    draws = md.sample(np.repeat(z, 20000, 0), 1.0, np.random.default_rng(0))
    assert np.allclose(np.bincount(draws, minlength=3) / 20000, [0.5, 0.3, 0.2], atol=0.015)
    # T = 2 flattens: p ~ sqrt(p)
    draws = md.sample(np.repeat(z, 20000, 0), 2.0, np.random.default_rng(1))
    want = np.sqrt([0.5, 0.3, 0.2]) / np.sqrt([0.5, 0.3, 0.2]).sum()
    assert np.allclose(np.bincount(draws, minlength=3) / 20000, want, atol=0.015)


def test_vote_and_rerank_by_hand():
    a = np.array([[3, 5, 5, 3], [1, 2, 3, 4], [7, 7, 2, 2]])
    assert sr.self_consistency(a, 4, M).tolist() == [3, 1, 7]   # ties: sampled first wins
    assert sr.self_consistency(a, 3, M).tolist() == [5, 1, 7]
    R = np.array([[0.1, 0.9, 0.2, 0.95], [0.5, 0.5, 0.1, 0.1], [0.3, 0.2, 0.8, 0.1]])
    assert sr.best_of_n(a, R, 4).tolist() == [3, 1, 2]
    assert sr.best_of_n(a, R, 2).tolist() == [5, 1, 7]
    out = sr.pool_outcome(a, R, 2, np.array([2, 4, 6]), method="bon", m=M)
    assert out.n_gen.tolist() == [4, 8, 12] and out.n_prm.tolist() == [4, 8, 12]
    out = sr.pool_outcome(a, R, 2, np.array([2, 4, 6]), method="sc", m=M)
    assert out.n_prm.tolist() == [0, 0, 0]


def test_beam_search_counts_repairs_steps_and_calls_the_tool():
    probs = make_chains(np.random.default_rng(0), M, [3, 6], n_per_K=200)
    truth = probs.answers()
    K = probs.K.astype(float)
    # a deterministic generator: every expansion is the same step, merged into one beam
    det = Scripted(p_right=0.5)
    out = sr.beam_search(det, probs, 4, 4, 1e-6, np.random.default_rng(0))
    assert out.n_gen.tolist() == (4 * K).tolist() and out.n_prm.tolist() == (4 * K).tolist()
    # with an exact PRM, step-level pruning repairs each step: the one right partial chain
    # survives a step unless none of its 4 expansions is right, P = (1 - 0.5^4)^K, while a
    # single sample needs all K steps right, 0.5^K
    gen = Scripted(p_right=0.5)
    beam = sr.beam_search(gen, probs, 4, 4, 1.0, np.random.default_rng(1))
    ans, R = sr.sample_pool(gen, probs, 1, 1.0, np.random.default_rng(2))
    want = np.mean([(1 - 0.5 ** 4) ** k for k in (3, 6)])
    assert abs((beam.answer == truth).mean() - want) < 0.07
    assert abs((sr.best_of_n(ans, R, 1) == truth).mean() - np.mean([0.5 ** 3, 0.5 ** 6])) < 0.05
    assert np.all(beam.n_gen >= 4 * K) and np.all(beam.n_gen <= 16 * K)
    # a useless generator and PRM: the calculator (threshold 0.5) does every step, R = 1
    bad = Scripted(p_right=0.0, wrong=0.1)
    tool = sr.beam_search(bad, probs, 4, 4, 1.0, np.random.default_rng(3), tool_thr=0.5)
    assert (tool.answer == truth).all() and np.allclose(tool.R, 1.0)
    assert tool.n_tool.tolist() == K.tolist()       # one beam left after merging: K calls
    notool = sr.beam_search(bad, probs, 4, 4, 1.0, np.random.default_rng(3))
    assert (notool.answer == truth).mean() < 0.1 and notool.n_tool.sum() == 0


def _outcome(ans, R, gen):
    n = len(ans)
    return sr.Outcome(np.array(ans), np.array(R, float), np.array(gen, float),
                      np.array(gen, float), np.zeros(n))


def test_escalation_controller_by_hand():
    its = [_outcome([1, 1, 1], [0.95, 0.5, 0.5], [2, 2, 2]),
           _outcome([2, 2, 2], [0.99, 0.8, 0.4], [10, 10, 10]),
           _outcome([3, 3, 3], [0.1, 0.95, 0.5], [20, 20, 20]),
           _outcome([4, 4, 4], [0.1, 0.99, 0.6], [30, 30, 30])]
    out = sr.adaptive(its, 0.9)
    # problem 0 stops after greedy; 1 stops after iteration 3 (R 0.95); 2 runs all four and
    # keeps iteration 4 (0.6 > 0.5 = the tie of 1 and 3, which keeps the earlier)
    assert out.answer.tolist() == [1, 3, 4] and out.n_iter.tolist() == [1, 3, 4]
    assert out.n_gen.tolist() == [2, 32, 62] and out.R.tolist() == [0.95, 0.95, 0.6]
    nostop = sr.adaptive(its, None)
    assert nostop.n_iter.tolist() == [4, 4, 4] and nostop.answer.tolist() == [2, 4, 4]
    assert sr.adaptive(its, 0.0).n_iter.tolist() == [1, 1, 1]


def test_flops_are_those_of_the_agent_run_through_the_shared_loop():
    cfg = pipeline.resolve("prm-adaptive-tts", "smoke")
    w = experiment.world(cfg)
    assert w.gen_flops == 2 * 3735 and w.prm_flops == 2 * 3777 and w.tool_flops == 50 * 7470
    probs = make_chains(np.random.default_rng(4), M, [2, 5], n_per_K=3)
    gen = Scripted(p_right=0.7)
    out = sr.greedy(gen, probs)
    flops, calls = sr.account(w, out)
    # the same greedy agent, one call at a time through the world: step, score, ..., answer
    tasks = probs.tasks()

    def policy(states, trajs, live):
        calls_ = []
        for s in states:
            chain, t = s["chain"], s["task"]
            i = len(chain) - 1
            if i == t.K and len(s["scored"]) == t.K:
                calls_.append(Call("answer", (chain[-1],)))
            elif len(s["scored"]) < i:
                calls_.append(Call("score", (i,)))
            else:
                y = int(gen.logits(np.array([chain[-1]]), np.array([t.ops[i]]),
                                   np.array([t.cs[i]])).argmax())
                calls_.append(Call("step", (y,)))
        return calls_

    trajs = run_batch(w, tasks, policy, max_steps=30)
    assert [t.flops for t in trajs] == flops.tolist()
    assert [t.n_calls - 1 for t in trajs] == calls.tolist()     # less the free answer
    assert [t.success for t in trajs] == (out.answer == probs.answers()).tolist()
    tool = sr.Outcome(out.answer, out.R, out.n_gen, out.n_prm, np.array([1, 0, 2, 0, 0, 3.0]))
    assert np.allclose(sr.account(w, tool)[0] - flops, tool.n_tool * 50 * 7470)


def test_learned_controller_learns_when_to_stop():
    # iteration 1 is right exactly when its R is high; iteration 2 always right but costly
    n = 400
    rng = np.random.default_rng(0)
    good = rng.random(n) < 0.5
    its = [_outcome(np.where(good, 1, 0), np.where(good, 0.95, 0.2), np.ones(n))]
    its += [_outcome(np.ones(n, int), np.full(n, 0.99), np.full(n, 10.0)) for _ in range(3)]
    correct = np.stack([o.answer == 1 for o in its]).astype(float)
    flops = np.stack([o.n_gen for o in its])
    kf = np.ones(n)
    W, curve = ctl.train_controller(its, flops, kf, correct, 0.3, np.random.default_rng(1),
                                    updates=300, batch=128, lr=0.05)
    out, corr, fl, _ = ctl.rollout(W, its, flops, kf, correct)
    assert corr.mean() == 1.0                       # escalates exactly when greedy is wrong
    assert out.n_iter[good].max() == 1 and out.n_iter[~good].min() == 2
    assert curve[-20:].mean() > curve[:20].mean()


def test_matched_compute_interpolation_by_hand():
    F, A = np.array([1e5, 1e6, 1e7]), np.array([0.1, 0.3, 0.4])
    v, where = claims.interp_log(F, A, np.sqrt(1e5 * 1e6))   # halfway in log F
    assert v == pytest.approx(0.2) and where == 0
    assert claims.interp_log(F, A, 1e8) == (0.4, 1)
    assert claims.interp_log(F, A, 1e4) == (0.1, -1)
    f, g = claims.flops_to_reach(F, A, 0.2)
    assert f == pytest.approx(np.sqrt(1e5 * 1e6)) and g == 0
    assert claims.flops_to_reach(F, A, 0.05) == (1e5, -1)
    assert claims.flops_to_reach(F, A, 0.9) == (1e7, 1)


def _metrics(cfg, good: bool):
    rows = []
    for s in range(5):
        e = 0.01 * s
        base = {"setting": "chains", "seed": s}
        for meth in ("sc", "bon"):
            r = {**base, "method": meth}
            for n in cfg["params"]["n_samples"]:
                for sub in ("all", "easy", "hard"):
                    r[f"flops_{sub}_N{n}"] = 1e5 * n * (2 if meth == "bon" else 1)
                    r[f"acc_{sub}_N{n}"] = 0.1 + e + 0.001 * n
                r[f"ci_N{n}"] = 2.0 * n
            rows.append(r)
        r = {**base, "method": "beam"}
        for w in cfg["params"]["beam_widths"]:
            for sub in ("all", "easy", "hard"):
                r[f"flops_{sub}_w{w}"] = 4e5 * w
                r[f"acc_{sub}_w{w}"] = (0.4 if good else 0.05) + e
        rows.append(r)
        r = {**base, "method": "adaptive", "greedy_acc": 0.3}
        for pt in experiment.points(cfg, "adaptive"):
            theta = float(pt[1:])
            for sub in ("all", "easy", "hard"):
                r[f"flops_{sub}_{pt}"] = 2e5 * (1 + 3 * theta)
                r[f"acc_{sub}_{pt}"] = (0.1 + 0.6 * theta if good else 0.1) + e
            r[f"ci_{pt}"] = 5.0 if good else 80.0
            r[f"alloc_{pt}"] = (5.0 if good else 1.5) + e
        rows.append(r)
    return pd.DataFrame(rows)


def test_claim_checkers_pass_and_fail_on_built_metrics():
    cfg = pipeline.resolve("prm-adaptive-tts", "default")
    verdicts = {c.id: c.verdict for c in claims.check(cfg, _metrics(cfg, True), None)}
    assert set(verdicts.values()) == {REPRODUCED}, verdicts
    verdicts = {c.id: c.verdict for c in claims.check(cfg, _metrics(cfg, False), None)}
    assert set(verdicts.values()) == {NOT_REPRODUCED}, verdicts
    # without BoN@16 (smoke's grid) claim 4 is inconclusive, never a silent pass
    small = {**cfg, "params": {**cfg["params"], "n_samples": [1, 2, 4]}}
    m = _metrics(small, True)
    c4 = [c for c in claims.check(small, m, None) if c.id == "4-efficiency"][0]
    assert c4.verdict == INCONCLUSIVE


def test_bad_params_name_the_key():
    for scale in ("smoke", "full"):
        check_params(pipeline.resolve("prm-adaptive-tts", scale), REPO / "config")
    cfg = pipeline.resolve("prm-adaptive-tts", "default")
    check_params(cfg, REPO / "config")
    for key, val in (("n_per_K", 0), ("tool_thr3", 1.5), ("thetas", [])):
        bad = {**cfg, "params": {**cfg["params"], key: val}}
        with pytest.raises(ConfigError, match=key):
            check_params(bad, REPO / "config")
    bad = {**cfg, "params": {**cfg["params"], "typo_key": 1}}
    with pytest.raises(ConfigError, match="typo_key"):
        check_params(bad, REPO / "config")
    bad = {**cfg, "params": {**cfg["params"], "theta_headline": 0.5}}
    with pytest.raises(ConfigError, match="theta_headline"):
        experiment.check(bad)


def test_world_prices_and_problems_are_shared_and_deterministic():
    cfg = pipeline.resolve("prm-adaptive-tts", "smoke")
    a, b = experiment.problems(cfg, 3), experiment.problems(cfg, 3)
    assert np.array_equal(a.x0, b.x0) and np.array_equal(a.ops, b.ops)
    assert not np.array_equal(a.x0, experiment.problems(cfg, 4).x0)
    assert sorted(set(a.K.tolist())) == cfg["params"]["K"]
    assert isinstance(experiment.world(cfg), ChainWorld)
