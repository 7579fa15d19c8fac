"""Behaviour tests of the muloco paper: the stacked replicas against the shared icml26.lm model and
optimizers, DiLoCo at K = 1 against plain training, the outer Nesterov step on a hand case, the
pseudogradient cosine at K = 1, the data shards, the claim checkers on data built to fail, and
the pipeline end to end."""

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F

from icml26 import pipeline
from icml26.claims import NOT_REPRODUCED, REPRODUCED
from icml26.lm.model import GPT, GPTConfig
from icml26.lm.optim import AdamW, MuonAdamW, clip_grad_norm, newton_schulz5, warmup_cosine
from icml26.papers.muloco import claims, experiment
from icml26.papers.muloco.diloco import Plan, outer_nesterov, train_plans
from icml26.papers.muloco.fleet import Fleet, Inner, make_model, newton_schulz5_batched

CONFIG = GPTConfig(vocab_size=11, context=8, d_model=16, n_heads=2, n_layers=2)
HP = {"betas": [0.9, 0.95], "eps": 1e-8, "wd": 0.1, "muon_momentum": 0.95, "muon_wd": 0.1,
      "lr_adamw": 3e-3, "lr_muon": 0.02}


def _init(seed):
    return {n: p.detach().clone() for n, p in make_model(CONFIG, seed).named_parameters()}


def _ids(n=400, seed=0):
    return torch.as_tensor(np.random.default_rng(seed).integers(0, CONFIG.vocab_size, n))


def test_math_attention_matches_the_shared_gpt():
    torch.manual_seed(3)
    ref = GPT(CONFIG)
    ours = make_model(CONFIG, 0)
    ours.load_state_dict(ref.state_dict())
    x = _ids(32).view(4, 8)
    torch.testing.assert_close(ours(x), ref(x), atol=1e-5, rtol=1e-5)


def test_fleet_gradients_equal_separate_backward_passes():
    inits = [_init(s) for s in (1, 2, 3)]
    template = make_model(CONFIG, 0)
    fleet = Fleet(template, inits)
    x = _ids(3 * 2 * 9).view(3, 2, 9)
    fleet.backward(x[..., :-1], x[..., 1:])
    for r, init in enumerate(inits):
        model = GPT(CONFIG)
        model.load_state_dict({**init, "head.weight": init["tok.weight"]}, strict=False)
        logits = model(x[r, :, :-1])
        F.cross_entropy(logits.reshape(-1, CONFIG.vocab_size), x[r, :, 1:].reshape(-1)).backward()
        for n, p in model.named_parameters():
            torch.testing.assert_close(fleet.params[n].grad[r], p.grad, atol=1e-5, rtol=1e-4)


def test_batched_newton_schulz_equals_shared():
    g = torch.randn(3, 12, 5)
    out = newton_schulz5_batched(g)
    for r in range(3):
        torch.testing.assert_close(out[r], newton_schulz5(g[r]), atol=1e-5, rtol=1e-5)
    # singular values pushed into roughly [0.7, 1.2]
    s = torch.linalg.svdvals(out)
    assert s.min() > 0.5 and s.max() < 1.3


def _plain_training(kind, init, ids, starts, steps, clip, warmup):
    """The reference: one shared GPT, the shared optimizers and clip, batch by batch."""
    model = GPT(CONFIG)
    model.load_state_dict({**init, "head.weight": init["tok.weight"]}, strict=False)
    if kind == "adamw":
        opt = AdamW(list(model.parameters()), HP["lr_adamw"], tuple(HP["betas"]), HP["eps"],
                    HP["wd"])
    else:
        opt = MuonAdamW(model, HP["lr_muon"], HP["lr_adamw"], HP["muon_momentum"], HP["muon_wd"],
                        tuple(HP["betas"]), HP["eps"], HP["wd"])
    T = CONFIG.context
    for step in range(steps):
        chunk = ids[torch.as_tensor(starts[step, 0])[:, None] + torch.arange(T + 1)]
        logits = model(chunk[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, CONFIG.vocab_size), chunk[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        clip_grad_norm(opt.params, clip)
        opt.step(warmup_cosine(step, steps, warmup, 0.1))
    return {n: p.detach() for n, p in model.named_parameters()}


@pytest.mark.parametrize("kind", ["adamw", "muon"])
def test_diloco_k1_outer_lr1_momentum0_equals_plain_inner_training(kind):
    ids, steps = _ids(), 12
    init = _init(5)
    starts = experiment.worker_starts(len(ids), 1, 4, steps, CONFIG.context,
                                      np.random.default_rng(0))
    plan = Plan("a", "m", kind, True, 1, init, starts)
    hp = {**HP, "steps": steps, "H": 3, "context": CONFIG.context, "warmup": 2,
          "final_frac": 0.1, "clip": 0.5, "outer_lr": 1.0, "outer_momentum": 0.0,
          "measure_every": 1, "eval_every": 100}
    val = ids[:36].view(4, 9)
    train_plans(make_model(CONFIG, 0), [plan], ids, val, hp)
    ref = _plain_training(kind, init, ids, starts, steps, 0.5, 2)
    for n, p in ref.items():
        torch.testing.assert_close(plan.final[n], p, atol=2e-5, rtol=1e-4)


def test_dp_plan_equals_plain_training_and_outer_step_changes_diloco():
    ids, steps = _ids(seed=1), 8
    init = _init(6)
    starts = experiment.worker_starts(len(ids), 1, 4, steps, CONFIG.context,
                                      np.random.default_rng(1))
    dp = Plan("dp", "dp", "adamw", False, 1, init, starts)
    dl = Plan("dl", "dl", "adamw", True, 1, init, starts)
    hp = {**HP, "steps": steps, "H": 4, "context": CONFIG.context, "warmup": 2,
          "final_frac": 0.1, "clip": 1.0, "outer_lr": 0.7, "outer_momentum": 0.9,
          "measure_every": 1, "eval_every": 1}
    train_plans(make_model(CONFIG, 0), [dp, dl], ids, ids[:36].view(4, 9), hp)
    ref = _plain_training("adamw", init, ids, starts, steps, 1.0, 2)
    for n, p in ref.items():
        torch.testing.assert_close(dp.final[n], p, atol=2e-5, rtol=1e-4)
    assert not torch.allclose(dl.final["tok.weight"], dp.final["tok.weight"])


def test_outer_nesterov_hand_case():
    theta, mom = {"w": torch.tensor([1.0, -2.0])}, {"w": torch.zeros(2)}
    delta = {"w": torch.tensor([0.5, 1.0])}
    outer_nesterov(theta, mom, delta, lr=0.7, mu=0.9)
    # m = Δ; θ = θ - 0.7 (Δ + 0.9 Δ) = θ - 1.33 Δ
    torch.testing.assert_close(mom["w"], torch.tensor([0.5, 1.0]))
    torch.testing.assert_close(theta["w"], torch.tensor([1 - 0.665, -2 - 1.33]))
    outer_nesterov(theta, mom, delta, lr=0.7, mu=0.9)
    # m = 0.9 Δ + Δ = 1.9 Δ; θ -= 0.7 (Δ + 0.9 * 1.9 Δ) = 0.7 * 2.71 Δ
    torch.testing.assert_close(mom["w"], torch.tensor([0.95, 1.9]))
    torch.testing.assert_close(theta["w"], torch.tensor([0.335 - 0.9485, -3.33 - 1.897]))


@pytest.mark.parametrize("kind", ["adamw", "muon"])
def test_cosine_is_one_at_k1_and_below_one_at_k4(kind):
    ids, steps = _ids(800, seed=2), 6
    init = _init(7)
    rng = np.random.default_rng(2)
    p1 = Plan("k1", "m", kind, True, 1, init,
              experiment.worker_starts(len(ids), 1, 8, steps, CONFIG.context, rng))
    p4 = Plan("k4", "m", kind, True, 4, init,
              experiment.worker_starts(len(ids), 4, 2, steps, CONFIG.context, rng))
    hp = {**HP, "steps": steps, "H": 3, "context": CONFIG.context, "warmup": 2,
          "final_frac": 0.1, "clip": 1.0, "outer_lr": 0.7, "outer_momentum": 0.9,
          "measure_every": 1, "eval_every": 10, "measure_k1": True}
    template = make_model(CONFIG, 0)
    for plan in (p1, p4):
        train_plans(template, [plan], ids, ids[:36].view(4, 9), {**hp})
    cos1 = [v for _, m, v in p1.curves if m == "cos"]
    cos4 = [v for _, m, v in p4.curves if m == "cos"]
    assert len(cos1) == 2 and len(cos4) == 2
    assert cos1 == pytest.approx([1.0, 1.0], abs=1e-6)
    assert all(0.0 < c < 0.999 for c in cos4)


def test_reference_replica_starts_from_worker1_state():
    template = make_model(CONFIG, 0)
    fleet = Fleet(template, [_init(1)] * 3)
    inner = Inner("muon", template, 0, 3, HP)
    x = _ids(3 * 2 * 9).view(3, 2, 9)
    fleet.backward(x[..., :-1], x[..., 1:])
    inner.step(fleet, 1.0)
    copy = inner.gather([1], 0, 1)
    torch.testing.assert_close(copy.muon.m[0][0], inner.muon.m[0][1])
    torch.testing.assert_close(copy.adam.v[0][0], inner.adam.v[0][1])
    copy.muon.m[0].zero_()  # a copy, not a view
    assert inner.muon.m[0][1].abs().sum() > 0


def test_worker_shards_are_contiguous_slices():
    s = experiment.worker_starts(1000, 4, 3, 50, 10, np.random.default_rng(0))
    assert s.shape == (50, 4, 3)
    for k in range(4):
        assert s[:, k].min() >= 250 * k and s[:, k].max() + 11 <= 250 * (k + 1)


def test_lr_grid_extends_at_an_edge_at_most_twice():
    calls = []

    def run_one(lr):  # loss falls with lr forever: the top edge keeps winning
        calls.append(lr)
        return -lr

    lrs, loss = experiment.extend_at_edge([0.01, 0.02, 0.05], [-0.01, -0.02, -0.05], run_one)
    assert calls == pytest.approx([0.125, 0.3125])  # two steps of the grid's top ratio 2.5
    assert lrs == pytest.approx([0.01, 0.02, 0.05, 0.125, 0.3125])
    assert loss[-1] == pytest.approx(-0.3125)
    # a bottom-edge choice extends downwards with the bottom ratio (1e-3 / 3e-3)
    lrs, _ = experiment.extend_at_edge([1e-3, 3e-3, 1e-2], [1.0, 2.0, 3.0],
                                       lambda lr: 0.5 if lr > 1e-4 else 9.0)
    assert lrs == pytest.approx([1e-3, 3e-3, 1e-2, 1e-3 / 3, 1e-3 / 9])
    # an interior choice runs nothing more
    lrs, _ = experiment.extend_at_edge([1e-3, 3e-3, 1e-2], [2.0, 1.0, 3.0], run_one)
    assert lrs == [1e-3, 3e-3, 1e-2] and len(calls) == 2


def test_spec_corpus_module_list():
    assert "os.path" not in experiment.SPEC_MODULES and "asyncio" in experiment.SPEC_MODULES
    assert len(experiment.SPEC_MODULES) == 27


# --------------------------------------------------------------------------------------------
def _metrics(loss, cos):
    """loss / cos: {(method, K): per-seed list}; DP methods at K = 1."""
    rows = []
    for (m, K), values in loss.items():
        for seed, v in enumerate(values):
            c = cos.get((m, K), [np.nan] * len(values))[seed]
            rows.append({"method": m, "setting": f"K{K}", "seed": seed, "final_val_loss": v,
                         "mean_cos": c})
    return pd.DataFrame(rows)


CFG = {"params": {"H": 8}, "settings": {"K1": {"K": 1}, "K4": {"K": 4}, "K8": {"K": 8}}}


def test_claims_reproduce_and_fail_on_built_data():
    good = _metrics(
        {("dp-adamw", 1): [2.0, 2.01, 2.02], ("dp-muon", 1): [1.9, 1.91, 1.92],
         ("diloco", 1): [2.1, 2.11, 2.12], ("muloco", 1): [1.9, 1.905, 1.91],
         ("diloco", 4): [2.3, 2.31, 2.33], ("muloco", 4): [2.0, 2.01, 2.0],
         ("diloco", 8): [2.5, 2.52, 2.51], ("muloco", 8): [2.1, 2.1, 2.11]},
        {("diloco", 1): [1, 1, 1], ("muloco", 1): [1, 1, 1],
         ("diloco", 8): [0.6, 0.62, 0.61], ("muloco", 8): [0.9, 0.91, 0.9]})
    verdicts = {c.id: c.verdict for c in claims.check(CFG, good, None)}
    assert all(v == REPRODUCED for v in verdicts.values()), verdicts
    # swap the roles of the two inner optimizers: every claim must fail
    bad = good.copy()
    swap = {"diloco": "muloco", "muloco": "diloco", "dp-adamw": "dp-muon", "dp-muon": "dp-adamw"}
    bad["method"] = bad["method"].map(swap)
    verdicts = {c.id: c.verdict for c in claims.check(CFG, bad, None)}
    assert all(v == NOT_REPRODUCED for v in verdicts.values()), verdicts


def test_a_diverged_seed_is_named_and_cannot_support_a_claim():
    loss = {("diloco", 1): [2.1, 2.11, 2.12, 2.1, 2.13], ("muloco", 1): [1.9, np.nan, 1.91,
                                                                         1.9, 1.92]}
    c2 = [c for c in claims.check(CFG, _metrics(loss, {}), None) if c.id == "C2-headline-loss"][0]
    assert c2.verdict == "inconclusive"  # the four finite seeds alone would reproduce it
    d = c2.to_dict()
    assert d["n_seeds"] == 5 and "seeds 1" in d["note"]


def test_claim4_threshold_is_0_01():
    m = _metrics({("dp-muon", 1): [2.0, 2.0, 2.0], ("muloco", 1): [2.03, 2.031, 2.029]}, {})
    c4 = [c for c in claims.check(CFG, m, None) if c.id == "C4-K1-vs-dp"][0]
    assert c4.verdict == NOT_REPRODUCED
    m = _metrics({("dp-muon", 1): [2.0, 2.0, 2.0], ("muloco", 1): [2.005, 2.004, 2.006]}, {})
    c4 = [c for c in claims.check(CFG, m, None) if c.id == "C4-K1-vs-dp"][0]
    assert c4.verdict == REPRODUCED


def test_pipeline_smoke_end_to_end(tmp_path):
    cfg = pipeline.resolve("muloco", "smoke")
    out = pipeline.run_inprocess(cfg, tmp_path)
    metrics = pd.read_csv(out["metrics"])
    assert len(metrics) == 6
    assert np.isfinite(metrics["final_val_loss"]).all()
    k1 = metrics[(metrics["setting"] == "K1") & metrics["method"].isin(["diloco", "muloco"])]
    assert (k1["mean_cos"] == 1.0).all()
    k2 = metrics[metrics["setting"] == "K2"]
    assert ((k2["mean_cos"] > 0) & (k2["mean_cos"] < 1)).all()
    # the inner lrs were selected by the pipeline from the spec's candidates (extended by at
    # most two steps beyond an edge)
    assert 1e-3 / 9 * 0.999 <= metrics["lr_adamw"].iloc[0] <= 1e-2 * (10 / 3) ** 2 * 1.001
    assert 0.01 / 4 * 0.999 <= metrics["lr_muon"].iloc[0] <= 0.05 * 2.5 ** 2 * 1.001
    assert (out["figures"] / "loss_vs_k.png").exists()


@pytest.mark.parametrize("kind", ["adamw", "muon"])
def test_identical_worker_batches_give_the_reference_update(kind):
    """K workers on the same batches move identically; the reference replica on their
    concatenation (K copies) has the same mean-loss gradient, so cos = 1 and the norm ratio 1."""
    ids, steps = _ids(600, seed=4), 6
    one = experiment.worker_starts(len(ids), 1, 2, steps, CONFIG.context,
                                   np.random.default_rng(4))
    plan = Plan("k3", "m", kind, True, 3, _init(8), np.repeat(one, 3, axis=1))
    hp = {**HP, "steps": steps, "H": 3, "context": CONFIG.context, "warmup": 2,
          "final_frac": 0.1, "clip": 1.0, "outer_lr": 0.7, "outer_momentum": 0.9,
          "measure_every": 1, "eval_every": 10}
    train_plans(make_model(CONFIG, 0), [plan], ids, ids[:36].view(4, 9), hp)
    cos = [v for _, m, v in plan.curves if m == "cos"]
    ratio = [v for _, m, v in plan.curves if m == "norm_ratio"]
    assert cos == pytest.approx([1.0, 1.0], abs=1e-5)
    assert ratio == pytest.approx([1.0, 1.0], abs=1e-4)


def test_plans_trained_together_equal_plans_trained_alone():
    """Stacking runs of different methods in one fleet (one train job) changes nothing."""
    ids, steps = _ids(600, seed=5), 6
    rng = np.random.default_rng(5)
    starts = [experiment.worker_starts(len(ids), 2, 2, steps, CONFIG.context, rng)
              for _ in range(2)]
    hp = {**HP, "steps": steps, "H": 3, "context": CONFIG.context, "warmup": 2,
          "final_frac": 0.1, "clip": 1.0, "outer_lr": 0.7, "outer_momentum": 0.9,
          "measure_every": 1, "eval_every": 1}
    template, val = make_model(CONFIG, 0), ids[:36].view(4, 9)

    def plans():
        return [Plan("a", "diloco", "adamw", True, 2, _init(9), starts[0]),
                Plan("b", "muloco", "muon", True, 2, _init(10), starts[1])]

    together = plans()
    train_plans(template, together, ids, val, hp)
    for alone in plans():
        train_plans(template, [alone], ids, val, hp)
        ref = next(p for p in together if p.key == alone.key)
        for n, t in alone.final.items():
            torch.testing.assert_close(ref.final[n], t, atol=1e-6, rtol=1e-5)
        assert [m for _, m, _ in ref.curves] == [m for _, m, _ in alone.curves]
