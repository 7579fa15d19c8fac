"""Behaviour tests of rl-vs-sft-forgetting: mixture scores and network gradients against finite
differences, samplers against their distributions, each method on small hand-checkable cases,
sharding invariance, the claim checkers on data built to fail, and the pipeline end to end."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from icml26 import grid, pipeline
from icml26.claims import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED
from icml26.papers.rl_vs_sft_forgetting import claims, experiment, mixture, policy

SLUG = "rl-vs-sft-forgetting"


# --------------------------------------------------------------------------------------------
# Part A: mixture
# --------------------------------------------------------------------------------------------
def test_mixture_score_matches_finite_differences_of_log_q():
    rng = np.random.default_rng(0)
    theta = np.array([[0.3, -2.0, 0.2, 1.0, -0.4], [-1.0, -3.4, 0.0, 0.5, np.log(0.6)]])
    y = rng.normal(scale=3.0, size=(2, 7))
    g = mixture.grad_log_q(theta, y)
    eps = 1e-6
    for j in range(5):
        d = np.zeros(5)
        d[j] = eps
        fd = (mixture.log_q(theta + d, y) - mixture.log_q(theta - d, y)) / (2 * eps)
        assert np.allclose(g[..., j], fd, rtol=1e-5, atol=1e-8)


def _target_theta(c):
    return np.array([np.log(0.7 / 0.3), c["prior_mean"], np.log(c["prior_sd"]),
                     c["target_mean"], np.log(c["target_sd"])])


def test_accuracies_are_one_at_the_target_and_zero_far_away():
    c = mixture.constants({})
    ys = mixture.grid(c)
    old, new = mixture.accuracies(_target_theta(c), c, ys)
    assert old[0] == pytest.approx(1.0, abs=1e-4) and new[0] == pytest.approx(1.0, abs=1e-4)
    far = _target_theta(c) + np.array([0, 0, 0, -8.0, 0])   # target mode moved to -5
    old, new = mixture.accuracies(far, c, ys)
    assert new[0] < 1e-3 and old[0] == pytest.approx(1.0, abs=1e-4)
    # the spec's initial model: prior mode nearly right, target mode wrong
    old, new = mixture.accuracies(c["init"], c, ys)
    assert 0.8 < old[0] < 0.9 and new[0] < 0.1


def test_forward_kl_on_full_target_is_stationary_at_the_target():
    """MLE stationarity: E_p[grad log q] = 0 at q = p, so replay's direction vanishes there."""
    c = mixture.constants({})
    g = np.random.default_rng(1)
    n = 400_000
    d = mixture.replay_direction(_target_theta(c)[None, :], c, g.standard_normal((1, n)),
                                 g.random((1, n)))
    assert np.abs(d).max() < 0.01
    # while target-only data (SFT) pull the mixing weight down (logit pi gradient < 0)
    d = mixture.sft_direction(_target_theta(c)[None, :], c, g.standard_normal((1, n)))
    assert d[0, 0] < -0.5


def test_mixture_methods_reproduce_the_spec_sanity_numbers_on_short_runs():
    """SFT erodes pi steadily while RL moves the target mode and leaves pi ~ 0.7."""
    c = mixture.constants({})
    ys = mixture.grid(c)
    out = {}
    for m, lr in (("sft", 0.05), ("rl", 0.03)):
        logged = mixture.train(m, c, [np.random.default_rng(0)], 300, lr, 0.1, 1000, {300})
        out[m] = logged[300][0]
    pi = {m: 1 / (1 + np.exp(-t[0])) for m, t in out.items()}
    assert pi["sft"] < 0.5 < 0.65 < pi["rl"]
    for m in out:
        assert mixture.accuracies(out[m], c, ys)[1][0] > 0.95
    assert out["rl"][3] == pytest.approx(3.0, abs=0.15)           # mu2 -> target mode


def test_rl_direction_moves_target_mode_towards_target_and_kappa_freezes_prior():
    c = mixture.constants({})
    g = np.random.default_rng(2)
    d = mixture.rl_direction(c["init"][None, :], c, g.standard_normal((1, 1000)))
    assert d[0, 3] > 0                                            # mu2 from 0.5 towards 3
    logged = mixture.train("rl", c, [np.random.default_rng(3)], 50, 0.03, 0.0, 1000, {50})
    assert np.allclose(logged[50][0, :3], c["init"][:3])          # kappa = 0: prior untouched


# --------------------------------------------------------------------------------------------
# Part B: policy network
# --------------------------------------------------------------------------------------------
def _tiny(seed=0, R=2, prompts=5, vocab=6, hidden=4):
    rngs = [np.random.default_rng(seed + k) for k in range(R)]
    params = policy.init_params(rngs, 2 + prompts, hidden, vocab)
    prompt = np.stack([g.integers(prompts, size=7) for g in rngs])
    task = np.stack([g.integers(2, size=7) for g in rngs])
    X = policy.inputs(task, prompt, prompts)
    return params, X, rngs


def _fd_check(params, X, loss_and_dz, eps=1e-6):
    """Compare backward() with central finite differences of the scalar loss (summed over R)."""
    h, logp = policy.forward(params, X)
    _, dz = loss_and_dz(logp)
    grads = policy.backward(params, X, h, dz)
    rng = np.random.default_rng(9)
    for k in policy.PARAM_NAMES:
        for _ in range(6):
            idx = tuple(rng.integers(s) for s in params[k].shape)
            plus = {n: v.copy() for n, v in params.items()}
            minus = {n: v.copy() for n, v in params.items()}
            plus[k][idx] += eps
            minus[k][idx] -= eps
            fd = (loss_and_dz(policy.forward(plus, X)[1])[0]
                  - loss_and_dz(policy.forward(minus, X)[1])[0]) / (2 * eps)
            assert grads[k][idx] == pytest.approx(fd, rel=1e-5, abs=1e-9), k


def test_cross_entropy_gradient_matches_finite_differences():
    params, X, _ = _tiny()
    y = np.array([[0, 1, 2, 3, 4, 5, 0], [5, 4, 3, 2, 1, 0, 1]])

    def loss(logp):
        ce = -np.take_along_axis(logp, y[..., None], -1)[..., 0].mean(-1).sum()
        return ce, policy.cross_entropy_dz(logp, y)

    _fd_check(params, X, loss)


def test_policy_gradient_and_kl_gradients_match_finite_differences():
    params, X, _ = _tiny(seed=4)
    y = np.array([[0, 1, 2, 3, 4, 5, 0], [5, 4, 3, 2, 1, 0, 1]])
    adv = np.random.default_rng(5).normal(size=y.shape)
    base = np.log(np.random.default_rng(6).dirichlet(np.ones(6), size=(2, 7)))
    B = y.shape[1]

    def loss(logp):
        # -mean(A log pi(y)) + beta * mean KL(pi || base), as in post_train's rl-kl
        onehot = np.zeros_like(logp)
        onehot[np.arange(2)[:, None], np.arange(B)[None, :], y] = 1.0
        pg = -(adv * np.take_along_axis(logp, y[..., None], -1)[..., 0]).mean(-1).sum()
        kl = (np.exp(logp) * (logp - base)).sum(-1).mean(-1).sum()
        dz = -adv[..., None] * (onehot - np.exp(logp)) / B + 0.1 * policy.kl_dz(logp, base) / B
        return pg + 0.1 * kl, dz

    _fd_check(params, X, loss)


def test_inverse_cdf_sampler_matches_the_distribution():
    p = np.array([0.05, 0.5, 0.0, 0.25, 0.2])
    logp = np.log(np.maximum(p, 1e-300))[None, None, :].repeat(20000, axis=1)
    y = policy.sample(logp, np.random.default_rng(0).random((1, 20000)))
    counts = np.bincount(y[0], minlength=5)
    assert counts[2] == 0
    keep = p > 0
    assert stats.chisquare(counts[keep], p[keep] * 20000).pvalue > 1e-3


def test_group_advantages_by_hand():
    r = np.array([[1.0, 0, 0, 0, 1, 1, 1, 1]])
    a = policy.group_advantages(r, 4, normalise=False)
    assert np.allclose(a, [[0.75, -0.25, -0.25, -0.25, 0, 0, 0, 0]])
    a = policy.group_advantages(r, 4, normalise=True)
    assert np.allclose(a[0, :4], np.array([0.75, -0.25, -0.25, -0.25]) / (np.sqrt(3) / 4 + 1e-6))
    assert np.allclose(a[0, 4:], 0)                   # all-equal group: no signal


def _base(steps=1500, seed=0):
    tasks = policy.make_tasks(np.random.default_rng(seed), 64, 32, 4)
    stacked = {k: v[None] for k, v in tasks.items()}
    mask = policy.correct_mask(tasks["C"], 32)[None]
    base = policy.pretrain(stacked, [np.random.default_rng(seed + 1)], steps, 0.5, 64, 64, 32,
                           0.5)
    return stacked, mask, base


@pytest.fixture(scope="module")
def base_model():
    return _base(steps=3000)


def test_pretraining_gives_the_spec_base_model(base_model):
    tasks, mask, base = base_model
    assert set(tasks["a"][0]) <= set(tasks["C"][0].ravel())
    assert np.all(tasks["a"] != tasks["e"])
    old, new, _ = policy.evaluate(base, tasks, mask)
    assert old[0] > 0.95                                     # spec: ~0.99
    assert 0.45 < new[0] < 0.65                              # spec: ~0.55
    _, logp_new = policy.all_logp(base, 64)
    pa = np.exp(np.take_along_axis(logp_new[0], tasks["a"][0][:, None], 1)).mean()
    pe = np.exp(np.take_along_axis(logp_new[0], tasks["e"][0][:, None], 1)).mean()
    assert pa > 0.4 and pe < 0.05                            # prefers a(i), rarely says e(i)


HP = dict(batch=64, steps=60, lr_sft=0.5, lr_rl=2.0, beta=0.1, group=8, self_samples=8,
          regen_every=20)


@pytest.mark.parametrize("method", ["sft", "self-sft", "iter-self-sft", "rl", "rl-kl",
                                    "rl-mean"])
def test_every_post_training_method_raises_new_task_accuracy(base_model, method):
    tasks, mask, base = base_model
    _, base_new = policy.all_logp(base, 64)
    log = []
    hp = dict(HP, lr_rl=0.5) if method.startswith("rl") else HP
    final = policy.post_train(method, base, tasks, mask, [np.random.default_rng(7)], hp, 20,
                              lambda s, p: log.append(s))
    assert log == [0, 20, 40, 60]
    old0, new0, _ = policy.evaluate(base, tasks, mask, base_new)
    old, new, kl = policy.evaluate(final, tasks, mask, base_new)
    assert new[0] > new0[0] + 0.15 and kl[0] > 0
    if method == "sft":   # trained on the expert answer e(i)
        _, logp = policy.all_logp(final, 64)
        pe = np.exp(np.take_along_axis(logp[0], tasks["e"][0][:, None], 1)).mean()
        assert pe > 0.5


def test_self_generated_dataset_holds_only_correct_own_answers(base_model):
    tasks, mask, base = base_model
    (ids, y), = policy.self_generated_dataset(base, mask, [np.random.default_rng(0)], 8)
    assert mask[0][ids, y].all()
    assert 0.4 * 512 < len(y) < 0.7 * 512     # ~ the base model's new-task accuracy


def test_kl_term_keeps_the_policy_closer_to_base(base_model):
    tasks, mask, base = base_model
    _, base_new = policy.all_logp(base, 64)
    kls = {}
    for m in ("rl", "rl-kl"):
        hp = dict(HP, lr_rl=0.5, beta=1.0)
        final = policy.post_train(m, base, tasks, mask, [np.random.default_rng(3)], hp, 60,
                                  lambda s, p: None)
        kls[m] = policy.evaluate(final, tasks, mask, base_new)[2][0]
    assert kls["rl-kl"] < kls["rl"]


# --------------------------------------------------------------------------------------------
# stages
# --------------------------------------------------------------------------------------------
def test_run_metrics_matched_drop_by_hand():
    trace = pd.DataFrame({"old_acc": [0.9, 0.85, 0.7, 0.6], "new_acc": [0.5, 0.8, 0.92, 0.99],
                          "kl_base": [0, 0.1, 0.2, 0.3]}, index=[0, 20, 40, 60])
    m = experiment.run_metrics(trace, 0.9)
    assert m["drop_matched"] == pytest.approx(0.2) and m["step_matched"] == 40
    assert m["drop_final"] == pytest.approx(0.3) and m["kl_matched"] == pytest.approx(0.2)
    assert m["matched_censored"] == 0 and m["drop_matched_bound"] == pytest.approx(0.2)
    trace["new_acc"] = 0.5
    never = experiment.run_metrics(trace, 0.9)
    assert np.isnan(never["drop_matched"])
    # censored: entered at the final drop, marked as a lower bound
    assert never["matched_censored"] == 1 and never["drop_matched_bound"] == pytest.approx(0.3)


def test_results_do_not_depend_on_sharding():
    cfg = pipeline.resolve(SLUG, "smoke", seeds=[0, 1])
    cfg["params"]["policy"]["pretrain_steps"] = 200
    cfg["params"]["policy"]["steps"] = 20
    cfg["params"]["mixture"]["iterations"] = 20
    data = experiment.prepare(cfg, np.random.default_rng(0))
    runs = [r for r in grid.runs(cfg) if r.method in ("sft", "rl", "rl-kl")]
    _, together = experiment.train(cfg, data, runs)
    alone = [row for r in runs for row in experiment.train(cfg, data, [r])[1]]
    key = ["method", "setting", "seed", "step", "metric"]
    a = pd.DataFrame(together).sort_values(key).reset_index(drop=True)
    b = pd.DataFrame(alone).sort_values(key).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)


def _metrics(policy_drops, rl_new=0.99, mix=None, censored=()):
    """censored: (method, seed) pairs whose drop is a bound (0.9 never reached)."""
    rows = []
    for m, drops in policy_drops.items():
        for s, d in enumerate(drops):
            cens = (m, s) in censored
            rows.append({"method": m, "setting": "policy", "seed": s,
                         "drop_matched": np.nan if cens else d, "drop_matched_bound": d,
                         "matched_censored": float(cens), "new_acc_final": rl_new})
    mix = mix or {}
    for m, (old, new, pi) in mix.items():
        for s in range(5):
            rows.append({"method": m, "setting": "mixture", "seed": s,
                         "old_acc_final": old + 0.001 * s, "new_acc_final": new,
                         "pi_final": pi})
    return pd.DataFrame(rows)


GOOD = {"sft": [0.2, 0.22, 0.21, 0.2, 0.21], "rl": [0.03, 0.04, 0.03, 0.035, 0.03],
        "rl-kl": [0.03, 0.035, 0.03, 0.03, 0.03], "rl-mean": [0.02, 0.03, 0.03, 0.02, 0.03],
        "self-sft": [0.02, 0.03, 0.03, 0.02, 0.02],
        "iter-self-sft": [0.01, 0.02, 0.01, 0.02, 0.01]}
GOOD_MIX = {"sft": (0.22, 1.0, 0.16), "rl": (0.78, 0.99, 0.7), "sft-replay": (0.995, 1.0, 0.7)}


def test_claim_checkers_fail_on_data_built_to_fail_and_pass_on_good_data():
    cfg = {"seeds": [0, 1, 2, 3, 4]}
    bad = _metrics(
        {"sft": [0.02, 0.03, 0.02, 0.03, 0.02], "rl": [0.2, 0.21, 0.22, 0.2, 0.2],
         "rl-kl": [0.4, 0.41, 0.42, 0.4, 0.4], "rl-mean": [0.2, 0.2, 0.21, 0.2, 0.2],
         "self-sft": [0.1, 0.1, 0.11, 0.1, 0.1], "iter-self-sft": [0.1, 0.1, 0.11, 0.1, 0.1]},
        rl_new=0.5,
        mix={"sft": (0.8, 1.0, 0.7), "rl": (0.2, 1.0, 0.2), "sft-replay": (0.3, 1.0, 0.2)})
    verdicts = {c.id: c.verdict for c in claims.check(cfg, bad, None)}
    assert len(verdicts) == 5 and set(verdicts.values()) == {NOT_REPRODUCED}
    good = _metrics(GOOD, mix=GOOD_MIX)
    verdicts = {c.id: c.verdict for c in claims.check(cfg, good, None)}
    assert set(verdicts.values()) == {REPRODUCED}


def test_censored_drops_are_kept_and_conservative():
    """A seed where a method never reaches 0.9 stays in the claim at its bound (a lower bound
    of the drop): it cannot be dropped, and it decides only where the truth cannot overturn."""
    cfg = {"seeds": [0, 1, 2, 3, 4]}
    # SFT censored in seed 4: its true drop is at least the bound, which only helps
    # "drop_SFT >= 2 drop_RL" -> the reproduced verdict may stand, with all 5 seeds
    out = {c.id: c for c in claims.check(cfg, _metrics(GOOD, mix=GOOD_MIX,
                                                       censored={("sft", 4)}), None)}
    part = out["C2-headline-rl-forgets-less"].parts["drop_sft - 2 drop_rl"]
    assert part.verdict == REPRODUCED and part.n == 5 and part.censored == ("4",)
    assert "censored" in out["C2-headline-rl-forgets-less"].note
    # RL censored in seed 4: a larger true RL drop could overturn -> inconclusive
    out = {c.id: c for c in claims.check(cfg, _metrics(GOOD, mix=GOOD_MIX,
                                                       censored={("rl", 4)}), None)}
    part = out["C2-headline-rl-forgets-less"].parts["drop_sft - 2 drop_rl"]
    assert part.verdict == INCONCLUSIVE and part.n == 5
    # both censored in one seed: unbounded either way -> nothing decisive on that difference
    out = {c.id: c for c in claims.check(cfg, _metrics(GOOD, mix=GOOD_MIX,
                                                       censored={("rl", 2), ("rl-kl", 2)}),
                                         None)}
    assert out["C3-not-kl"].parts["drop_rl-kl - drop_rl (upper)"].verdict == INCONCLUSIVE
    # a censored value that only strengthens a failing verdict keeps it not reproduced
    bad = {**GOOD, "self-sft": [0.3, 0.3, 0.31, 0.3, 0.3]}
    out = {c.id: c for c in claims.check(cfg, _metrics(bad, mix=GOOD_MIX,
                                                       censored={("self-sft", 1)}), None)}
    assert out["C5-approx-on-policy"].parts["drop_self-sft - drop_sft/2"].verdict \
        == NOT_REPRODUCED


def test_pipeline_smoke_end_to_end(tmp_path):
    import json

    out = pipeline.run_inprocess(pipeline.resolve(SLUG, "smoke"), tmp_path)
    doc = json.loads(out["claims"].read_text())
    assert [c["id"] for c in doc["claims"]] == [
        "C1-mixture-mass-forgetting", "C2-headline-rl-forgets-less", "C3-not-kl",
        "C4-not-advantage-estimator", "C5-approx-on-policy"]
    assert (out["figures"] / "forgetting_tradeoff.png").exists()
    assert (out["figures"] / "mixture_densities.png").exists()


# --------------------------------------------------------------------------------------------
# Part B, full profile: the character transformer (torch; tiny sizes here)
# --------------------------------------------------------------------------------------------
TINY_SEQ = dict(prompts=8, context=16, d_model=16, heads=2, layers=2, max_answer=6,
                pretrain_steps=30, pretrain_lr=0.003, label_noise=0.5, batch=16, steps=2,
                post_lr=0.001, beta=0.1, group=8, self_samples=8, regen_every=1, log_every=1)


def test_sequence_tasks_and_decoding():
    from icml26.papers.rl_vs_sft_forgetting import sequence as sq

    t = sq.make_tasks(np.random.default_rng(0), 8)
    assert len(sq.VOCAB) == 64 and len(set(sq.VOCAB)) == 64
    assert {len(p) for p in t["old_prompts"]} == {7} and {len(p) for p in t["new_prompts"]} == {6}
    for a, e, c, v in zip(t["a"], t["e"], t["new_correct"], t["new_values"], strict=True):
        assert a in c and e in c and a != e and c[0] == str(v)
    ids = np.array([[sq.INDEX["4"], sq.INDEX["2"], sq.EOS, 5], [sq.INDEX["4"]] * 4])
    assert sq.decode_answers(ids) == ["42", None]


def test_sequence_scores_are_exact_and_methods_run():
    import torch
    import torch.nn.functional as F

    from icml26.papers.rl_vs_sft_forgetting import sequence as sq

    t = sq.make_tasks(np.random.default_rng(1), 8)
    base = sq.pretrain(torch, F, t, TINY_SEQ, 3)
    b = sq.Batcher(torch, 16)
    x, y, m = b.pairs(["O12+34="], ["46"])
    assert m.sum() == 3                                    # "4", "6", <eos>
    lp, logp = sq.answer_logprob(base, F, x, y, m)
    lp, logp = lp.detach(), logp.detach()
    manual = sum(float(logp[0, k, y[0, k]]) for k in range(x.shape[1]) if m[0, k] > 0)
    assert float(lp[0]) == pytest.approx(manual, rel=1e-5)
    ev = sq.Evaluator(torch, F, t, b, 6, seed=0)
    old, new, kl = ev(base, base)
    assert 0 <= old <= 1 and 0 <= new <= 1 and kl == pytest.approx(0.0, abs=1e-6)
    for method in experiment.SEQUENCE_METHODS:
        steps = []
        sq.post_train(method, base, t, TINY_SEQ, 5, lambda s, o, n, k, out=steps: out.append(s))
        assert steps == [0, 1, 2]


def test_sequence_setting_through_the_stages():
    cfg = pipeline.resolve(SLUG, "smoke")
    cfg["settings"] = {"sequence": {"part": "sequence"}}
    cfg["params"]["sequence"] = TINY_SEQ
    runs = [grid.Run("rl", "sequence", 0), grid.Run("sft", "sequence", 0)]
    _, curves = experiment.train(cfg, {}, runs)
    frame = pd.DataFrame(curves)
    rows = experiment.evaluate(cfg, {}, runs, {}, frame)
    first = frame[frame["step"] == 0].groupby(["method", "metric"])["value"].first().unstack()
    assert np.allclose(first.loc["rl"], first.loc["sft"])  # one shared base model per seed
    assert all(np.isfinite(r["drop_final"]) for r in rows)
