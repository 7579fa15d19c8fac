"""Behaviour tests of stage-accountability: schedules, data construction, the optimisers against
torch.optim, HVPs against the autograd Hessian, E2's propagation against finite differences of
retraining, the counterfactual branches against separate runs, the baselines' known answers,
the claim checkers on metrics built to pass and to fail, bad params, and the smoke pipeline."""

import copy
import json

import numpy as np
import pandas as pd
import pytest
import torch

from icml26 import pipeline, seeding
from icml26.claims import NOT_REPRODUCED, REPRODUCED
from icml26.papers.stage_accountability import accountability as A
from icml26.papers.stage_accountability import claims, experiment
from icml26.papers.stage_accountability import data as D

torch.set_num_threads(1)


# --- data -----------------------------------------------------------------------------------
def test_schedule_warmup_then_cosine_by_hand():
    eta = D.schedule(20, 0.5, 0.1)      # warm-up 2 steps, cosine over the other 18
    assert np.allclose(eta[:2], [0.25, 0.5])
    t = np.arange(2, 20)
    assert np.allclose(eta[2:], 0.25 * (1 + np.cos(np.pi * (t - 2) / 18)))
    assert eta.max() == 0.5 and eta[-1] > 0 and np.all(np.diff(eta[2:]) < 0)


def test_batch_order_is_shuffled_epochs():
    b = D.batch_order(10, 7, 4, np.random.default_rng(0))      # 28 draws: 2 epochs + 8
    flat = b.ravel()
    assert b.shape == (7, 4)
    assert sorted(flat[:10]) == list(range(10)) and sorted(flat[10:20]) == list(range(10))


def test_spurious_flags_and_patch():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 400)
    f = D.spurious_flags(y, 0.95, rng)
    aligned = f == (y == 1)
    assert aligned.sum() == 380                                 # exactly round(0.95 n)
    r = D.spurious_flags(y, None, rng)                         # random: independent of y
    assert abs(r[y == 1].mean() - r[y == 0].mean()) < 0.15
    X = np.zeros((3, 64))
    out = D.apply_feature(X, np.array([True, False, True]), "digits")
    assert out[0, [0, 1, 8, 9]].tolist() == [1.0] * 4 and out[1].sum() == 0
    assert out[0].sum() == 4.0
    t = D.apply_feature(np.ones((2, 5)), np.array([True, False]), "text")
    assert t[:, 0].tolist() == [1.0, 0.0] and t[:, 1:].sum() == 8


def test_clean_resample_is_balanced_and_from_the_pool():
    rng = np.random.default_rng(2)
    y = np.array([0] * 30 + [1] * 70)
    pick, flags = D.clean_resample(y, 101, rng)
    assert len(pick) == 101 and (y[pick] == 0).sum() == 50 and (y[pick] == 1).sum() == 51
    assert pick.min() >= 0 and pick.max() < 100 and flags.dtype == bool


def test_make_task_pools_groups_and_probes():
    X, y = D.digits_base()
    assert X.shape == (1797, 64) and X.max() == 1.0 and set(np.unique(y)) == {0, 1}
    stages = [{"n": 700, "steps": 5, "eta": 0.1, "wd": 0, "aligned": None},
              {"n": 400, "steps": 5, "eta": 0.1, "wd": 0, "aligned": 0.95}]
    t = D.make_task(X, y, "digits", stages, 347, 10, 32, 0.1, np.random.default_rng(3))
    g = t["test_group"]
    assert (g == 1).sum() == 173 and (g == 0).sum() == 174
    patch = (t["test_X"][:, [0, 1, 8, 9]] == 1.0).all(1)
    # aligned group: patch iff label 1; counter group: patch iff label 0 (pixels there are < 1
    # in the raw digits, so the patch test is exact)
    assert np.array_equal(patch[g == 0], t["test_y"][g == 0] == 1)
    assert np.array_equal(patch[g == 1], t["test_y"][g == 1] == 0)
    p2 = (t["s2_X"][:, [0, 1, 8, 9]] == 1.0).all(1)
    assert (p2 == (t["s2_y"] == 1)).sum() == 380
    assert (g[t["probe"][:10]] == 1).all() and (g[t["probe"][10:]] == 0).all()
    assert len(np.unique(t["probe"])) == 20
    assert D.spurious_stage(stages) == 2


def test_behaviour_weights_by_hand():
    W = experiment.behaviour_weights(np.array([0, 1, 1, 0]), np.array([2, 0]))
    assert np.allclose(W, [[0, .5, .5, 0], [.5, 0, 0, .5], [0, 0, 1, 0], [1, 0, 0, 0]])


# --- optimisers, HVPs ---------------------------------------------------------------------------
def test_sgdm_and_adamw_match_torch_optim():
    g = torch.Generator().manual_seed(0)
    theta0 = torch.randn(1, 6, generator=g, dtype=torch.float64)
    grads = [torch.randn(1, 6, generator=g, dtype=torch.float64) for _ in range(5)]
    for kind in ("sgdm", "adamw"):
        p = torch.nn.Parameter(theta0.clone())
        ref = (torch.optim.SGD([p], lr=0.1, momentum=0.9) if kind == "sgdm" else
               torch.optim.AdamW([p], lr=0.1, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.3))
        opt = A.Optimiser(kind, theta0.shape, theta0)
        th = theta0.clone()
        for gr in grads:
            p.grad = gr.clone()
            ref.step()
            th = opt.step(th, gr, 0.1, 0.0 if kind == "sgdm" else 0.3)
        assert torch.allclose(th, p.detach(), rtol=1e-12, atol=1e-12), kind
    # decoupled decay of SGD by hand: theta1 = (1 - eta lam) theta0 - eta g (v0 = 0)
    opt = A.Optimiser("sgdm", theta0.shape, theta0)
    assert torch.allclose(opt.step(theta0, grads[0], 0.1, 0.5), 0.95 * theta0 - 0.1 * grads[0])


def test_hvp_matches_the_autograd_hessian():
    net = A.FlatMLP(3, 2)
    g = torch.Generator().manual_seed(1)
    theta = torch.randn(1, net.n_params, generator=g, dtype=torch.float64)
    X = torch.randn(1, 7, 3, generator=g, dtype=torch.float64)
    y = torch.randint(0, 2, (1, 7), generator=g)
    v = torch.randn(1, net.n_params, generator=g, dtype=torch.float64)
    H = torch.autograd.functional.hessian(
        lambda t: A.minibatch_loss(net, t[None], X, y), theta[0])
    assert torch.allclose(A.hvp(net, theta, X, y, v)[0], H @ v[0], atol=1e-12)


# --- staged training, E2, branches ----------------------------------------------------------------
def _toy(R=2, n=20, d=6, steps=15, etas=(0.3, 0.3, 0.3), wd=0.05, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for eta in etas:
        X, Xc = (torch.tensor(rng.random((R, n, d))) for _ in range(2))
        y, yc = (torch.tensor(rng.integers(0, 2, (R, n))) for _ in range(2))
        b = torch.tensor(np.stack([D.batch_order(n, steps, 5, rng) for _ in range(R)]))
        out.append(A.Stage(X, y, Xc, yc, b, D.schedule(steps, eta, 0.1), wd))
    return A.FlatMLP(d, 4), out


@pytest.mark.parametrize("opt", [{"kind": "sgdm"}, {"kind": "adamw", "eps": 100.0}])
def test_e2_is_the_tangent_of_retraining(opt):
    """delta_T of E2 = d theta_T / d eps when theta_end(s) moves by eps * delta_0 (finite
    differences of retraining the later stages). Exact for SGD with momentum; for AdamW with
    a large eps the preconditioner is nearly constant, so freezing it is nearly exact."""
    net, st = _toy(etas=(0.3, 0.3, 0.3) if opt["kind"] == "sgdm" else (3.0, 3.0, 3.0))
    run = A.train_stages(net, net.init([1, 2], "cpu"), st, opt)
    for s in (0, 1):
        eps = 1e-6
        d0 = run["end"][:, s] - run["start"][:, s]
        base = A.train_stages(net, run["end"][:, s], st[s + 1:], opt, propagate=False)["final"]
        pert = A.train_stages(net, run["end"][:, s] - eps * d0, st[s + 1:], opt,
                              propagate=False)["final"]
        fd = (pert - base) / eps
        assert torch.equal(base, run["final"])
        assert float((fd - run["deltas"][:, s]).norm() / fd.norm()) < 1e-3
    # the last stage has no later steps: delta_T = -Delta theta_S
    assert torch.equal(run["deltas"][:, 2], -(run["end"][:, 2] - run["start"][:, 2]))


def test_branches_equal_separate_runs():
    net, st = _toy()
    opt = {"kind": "sgdm"}
    theta0 = net.init([3, 4], "cpu")
    run = A.train_stages(net, theta0, st, opt)
    # without stage 2 (index 1): stages 1 and 3 in order, same data order
    alone = A.train_stages(net, theta0, [st[0], st[2]], opt, propagate=False)["final"]
    assert torch.allclose(run["minus"][:, 1], alone, rtol=0, atol=1e-13)
    # stage 1 cleaned: its clean resample replaces its data, later stages unchanged
    cleaned = copy.copy(st[0])
    cleaned.X, cleaned.y = st[0].Xc, st[0].yc
    alone = A.train_stages(net, theta0, [cleaned, st[1], st[2]], opt, propagate=False)["final"]
    assert torch.allclose(run["clean"][:, 0], alone, rtol=0, atol=1e-13)
    # the full run is the plain sequence
    alone = A.train_stages(net, theta0, st, opt, propagate=False)["final"]
    assert torch.allclose(run["final"], alone, rtol=0, atol=1e-13)


def _estimate(net, st, opt, seed=0):
    theta0 = net.init([5, 6], "cpu")
    run = A.train_stages(net, theta0, st, opt)
    rng = np.random.default_rng(seed)
    R, d = st[0].X.shape[0], st[0].X.shape[-1]
    X = torch.tensor(rng.random((R, 12, d)))
    y = torch.tensor(rng.integers(0, 2, (R, 12)))
    W = torch.tensor(np.stack([experiment.behaviour_weights(np.arange(12) % 2,
                                                            np.array([0, 1, 2, 3]))] * R))
    decay = A.decay_after([s.eta for s in st], [s.wd for s in st])
    return run, A.estimates(net, run, X, y, W, decay), decay


def test_baselines_known_answers():
    """Without momentum and decay, Delta theta_s = -sum eta_t g_t, so TracIn = naive delta =
    E1; with later decay, E1 = D_{>s} x naive delta with D by hand; for the last stage E2 =
    naive delta (nothing to propagate through)."""
    net, st = _toy(wd=0.0)
    _, est, decay = _estimate(net, st, {"kind": "sgdm", "momentum": 0.0})
    assert np.allclose(decay, 1.0)
    assert np.allclose(est["tracin"], est["naive-delta"], atol=1e-12)
    assert np.allclose(est["e1-decay-delta"], est["naive-delta"])
    net, st = _toy(wd=0.2)
    run, est, decay = _estimate(net, st, {"kind": "sgdm"})
    by_hand = np.prod([1 - e * 0.2 for e in st[1].eta]) * np.prod([1 - e * 0.2
                                                                   for e in st[2].eta])
    assert np.isclose(decay[0], by_hand) and decay[2] == 1.0
    assert np.allclose(est["e1-decay-delta"][:, 0], by_hand * est["naive-delta"][:, 0])
    assert np.allclose(est["e2-trajectory"][:, 2], est["naive-delta"][:, 2], atol=1e-12)


def test_e2_recovers_the_truth_for_a_small_stage():
    """A stage with a tiny update is in the first-order regime: E2 matches the retrained
    effect closely, while the naive delta (no propagation through later stages) does not."""
    net, st = _toy(etas=(0.05, 1e-4, 0.05), wd=0.05, steps=30)
    _, est, _ = _estimate(net, st, {"kind": "sgdm"})
    true, e2, b1 = est["true"][:, 1], est["e2-trajectory"][:, 1], est["naive-delta"][:, 1]
    assert np.abs(e2 - true).max() < 0.01 * np.abs(true).max()     # error O(update^2)
    assert np.abs(b1 - true).max() > 0.5 * np.abs(true).max()


def test_evaluate_metrics_by_hand():
    assert np.isclose(experiment._relerr(np.array([1.0, 2.0]), np.array([2.0, 2.0])), 0.25)
    assert experiment._argmax(np.array([0.1, 0.5, -1.0])) == 2.0
    assert np.isnan(experiment._pearson([1, np.nan], [1, 2]))


def test_results_do_not_depend_on_which_seeds_share_the_job():
    cfg = pipeline.resolve("stage-accountability", "smoke", device="cpu")
    for st in cfg["settings"]["digits"]["stages"]:
        st["steps"] = 6
    cfg["seeds"] = [0, 1]
    data = experiment.prepare(cfg, seeding.rng("x"))
    both = experiment.run_setting(cfg, data, "digits", [0, 1])
    one = experiment.run_setting(cfg, data, "digits", [1])
    for k in ("true", "e2-trajectory", "tracin", "clean_acc_counter"):
        assert np.array_equal(both[k][1], one[k][0]), k


# --- claims -----------------------------------------------------------------------------------
def _metrics(good: bool):
    rows = []
    for seed in range(5):
        for m in experiment.METHODS:
            e2 = m == "e2-trajectory"
            pear = (0.95 if e2 else 0.7) if good else (0.6 if e2 else 0.7)
            rows.append({"method": m, "setting": "digits", "seed": seed,
                         "pearson": pear + 0.01 * seed, "spearman": pear, "n_effects": 88.0,
                         "argmax_est": 2.0 if good else 3.0, "argmax_true": 2.0,
                         "ident": 1.0 if good else 0.0,
                         "picks_spurious": 1.0 if good else 0.0, "spurious_stage": 2.0,
                         "true_argmax_spurious": 1.0 if good else 0.0,
                         "wga_orig": 0.5, "wga_chosen": (0.7 if good else 0.52) + 0.001 * seed,
                         "wga_random": 0.6 if good else 0.55, "wga_random_draw": 0.6,
                         "acc_aligned": 0.95, "acc_counter": 0.5,
                         **{f"{p}_s{k}": 0.1 * k for k in range(1, 5)
                            for p in ("true_counter", "est_counter", "decay_after")}})
    return pd.DataFrame(rows)


def test_claims_pass_and_fail():
    cfg = pipeline.resolve("stage-accountability", "default")
    good = {c.id: c.verdict for c in claims.check(cfg, _metrics(True), None)}
    bad = {c.id: c.verdict for c in claims.check(cfg, _metrics(False), None)}
    assert set(good.values()) == {REPRODUCED}
    assert set(bad.values()) == {NOT_REPRODUCED}
    assert len(claims.premises(cfg, _metrics(True))) == 5


def test_failed_run_cannot_pass_claim_1():
    cfg = pipeline.resolve("stage-accountability", "default")
    m = _metrics(True)
    m.loc[(m["method"] == "e2-trajectory") & (m["seed"] == 3), "pearson"] = np.nan
    c1 = next(c for c in claims.check(cfg, m, None) if c.id.startswith("C1"))
    assert c1.verdict != REPRODUCED and "3" in c1.to_dict()["note"]


# --- config -----------------------------------------------------------------------------------
def test_bad_params_are_one_config_error_line():
    from pathlib import Path

    from icml26.config import check_params
    from icml26.errors import ConfigError

    root = Path(__file__).resolve().parents[2] / "config"
    for key, bad in (("hidden", 0), ("momentum", 1.5), ("warmup_frac", 0), ("n_test", "x")):
        cfg = pipeline.resolve("stage-accountability", "default")
        cfg["params"][key] = bad
        with pytest.raises(ConfigError) as info:
            check_params(cfg, root)
        assert "\n" not in str(info.value) and key in str(info.value)
    cfg = pipeline.resolve("stage-accountability", "default")
    cfg["settings"]["digits"]["stages"][0]["steps"] = -1
    with pytest.raises(ConfigError, match="steps"):
        check_params(cfg, root)


def test_pipeline_smoke(tmp_path):
    cfg = pipeline.resolve("stage-accountability", "smoke", device="cpu")
    for st in cfg["settings"]["digits"]["stages"]:
        st["steps"] = 20
    out = pipeline.run_inprocess(cfg, tmp_path)
    doc = json.loads(out["claims"].read_text())
    assert [c["id"] for c in doc["claims"]][:4] == ["C1-e2-tracks-counterfactual",
                                                    "C2-dynamics-matter",
                                                    "C3-identifies-spurious-stage",
                                                    "C4-actionable"]
    m = pd.read_csv(out["metrics"])
    assert set(m["method"]) == set(experiment.METHODS)
    assert (m["n_effects"] == 2 * 22).all()
    # the ground truth is shared: the same for every estimator
    assert m.groupby("seed")["true_counter_s2"].nunique().max() == 1
    assert (out["figures"] / "effects.png").exists()
    assert "premises" in out["report_md"].read_text()
