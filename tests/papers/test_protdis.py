"""Behaviour tests of protdis: the generator and its splits, the metrics and probes against
scikit-learn, PCA against scikit-learn, the KON losses against hand-written references
(KL, decorrelation, class-weighted CE, gradient reversal), per-seed clipping and seed
stacking invariance of pretraining, the head optimiser against torch.optim.Adam, heads on
solvable cases, the claim checkers on metrics built to pass and to fail, and params
validation."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F

from icml26.claims import NOT_REPRODUCED, REPRODUCED
from icml26.config import check_params as check_schema
from icml26.config import resolve_paper
from icml26.errors import ConfigError
from icml26.papers.protdis import analysis, claims, heads, kon
from icml26.papers.protdis import data as D
from icml26.papers.protdis import experiment as E

CONFIG = Path(__file__).resolve().parents[2] / "config"


@pytest.fixture(scope="module")
def cfg():
    return resolve_paper("protdis", {"scale": "smoke", "device": "cpu"}, CONFIG)


# --- generator and splits ---------------------------------------------------------------
def test_generator_premise_and_structure(cfg):
    p = dict(cfg["params"], n_proteins=200, n_pool=100)
    g = D.generate(p, np.random.default_rng(0))
    L = p["n_residues"]
    x, cont = g["x"], g["cont"]
    assert x.shape == (200 * L, 64) and np.all(np.abs(x) < 1.5)
    # packing <- packing - 0.5 asa: a negative asa / packing correlation
    assert np.corrcoef(cont[:, 0], cont[:, 1])[0, 1] < -0.2
    # the premise: fold identity explains more of x than the residue factors
    fold_share, factor_share = analysis.variance_shares(x, np.repeat(g["fold"], L), g["ss"],
                                                        cont)
    assert fold_share > factor_share


def test_splits_follow_folds_and_sizes(cfg):
    p = dict(cfg["params"], n_folds=20, struct_train_folds=14, struct_val_folds=3)
    fold = np.random.default_rng(1).integers(0, 20, 300)
    sp = D.splits(fold, p, np.random.default_rng(2))
    assert set(fold[sp["structure/train"]]) <= set(range(11))
    assert set(fold[sp["structure/val"]]) <= {11, 12, 13}
    assert set(fold[sp["structure/test"]]) <= set(range(14, 20))
    n_tr = len(sp["structure/train"])
    assert len(sp["random/train"]) == n_tr
    assert len(sp["random/val"]) == round(n_tr * 15 / 60)
    allr = np.concatenate([sp[f"random/{k}"] for k in ("train", "val", "test")])
    assert len(np.unique(allr)) == len(allr)


def test_task_labels_follow_their_rules(cfg):
    p = dict(cfg["params"])
    g = D.generate(p, np.random.default_rng(3))
    lab = D.tasks(g, p, np.random.default_rng(4))
    n = p["n_pool"] * p["n_residues"]
    z = D.zscore(g["cont"][:n], np.arange(n))
    assert np.array_equal(lab["interface"], ((z[:, 4] > 0.3) & (z[:, 0] > 0)).astype(int))
    rule = ((z[:, 0] > 0.5) & (z[:, 2] < 0)).astype(int)
    assert 0.0 < np.mean(lab["binding"] != rule) < 0.12         # 5% flips
    assert set(np.unique(lab["enzyme"])) <= set(range(4))


# --- metrics, probes, PCA against scikit-learn -------------------------------------------
def test_mcc_matches_sklearn():
    from sklearn.metrics import matthews_corrcoef

    rng = np.random.default_rng(0)
    for _ in range(5):
        y, pr = rng.integers(0, 2, 300), rng.integers(0, 2, 300)
        assert heads.mcc(y, pr) == pytest.approx(matthews_corrcoef(y, pr), abs=1e-12)
    assert heads.mcc(np.ones(10), np.ones(10)) == 0.0


def test_ridge_and_probes_match_sklearn():
    from sklearn.linear_model import Ridge, RidgeClassifier
    from sklearn.metrics import r2_score

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 6))
    Y = X @ rng.normal(size=(6, 5)) + rng.normal(size=(400, 5))
    ss = np.argmax(X[:, :3] + 0.5 * rng.normal(size=(400, 3)), 1)
    ref = Ridge(alpha=1.0).fit(X[:300], Y[:300]).predict(X[300:])
    assert np.allclose(analysis.ridge_fit_predict(X[:300], Y[:300], X[300:], 1.0), ref,
                       atol=1e-8)
    sc = analysis.probe_scores(X[:300], X[300:], ss[:300], ss[300:], Y[:300], Y[300:],
                               [[0, 1, 2], [3, 4, 5]], 1.0)
    for b, cols in enumerate(([0, 1, 2], [3, 4, 5])):
        mu, sd = X[:300, cols].mean(0), X[:300, cols].std(0)
        a, t = (X[:300, cols] - mu) / sd, (X[300:, cols] - mu) / sd
        acc = RidgeClassifier(alpha=1.0).fit(a, ss[:300]).score(t, ss[300:])
        r2 = r2_score(Y[300:], Ridge(alpha=1.0).fit(a, Y[:300]).predict(t),
                      multioutput="raw_values")
        assert sc[b, 0] == pytest.approx(acc, abs=1e-9)
        assert np.allclose(sc[b, 1:], r2, atol=1e-8)


def test_pca_matches_sklearn_up_to_sign():
    from sklearn.decomposition import PCA

    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 10)) @ rng.normal(size=(10, 10))
    ours = analysis.pca_transform(X[:400], X[400:], 4)
    ref = PCA(4).fit(X[:400]).transform(X[400:])
    assert np.allclose(np.abs(ours), np.abs(ref), atol=1e-6)


def test_specificity_and_independence_by_hand():
    S = np.array([[0.9, 0.1], [0.2, 0.7], [0.3, 0.4]])
    # owner: block 0 -> factor 0, block 1 -> factor 1: (0.9-0.3 + 0.7-0.4) / 2
    assert analysis.specificity(S, [0, 1]) == pytest.approx(0.45)
    # best-chunk matching gives the same here
    assert analysis.specificity(S) == pytest.approx(0.45)
    rng = np.random.default_rng(0)
    a = rng.normal(size=(20000, 1))
    feat = np.concatenate([a, a + rng.normal(size=(20000, 1)), rng.normal(size=(20000, 2))], 1)
    # blocks {0,1} and {2,3}: cross pairs are independent -> mean |r| near 0
    assert analysis.independence(feat, [[0, 1], [2, 3]]) < 0.03
    # blocks {0} and {1,...}: pair (0,1) has r = 1/sqrt(2), others ~0 -> about 0.707 / 3
    assert analysis.independence(feat, [[0], [1, 2, 3]]) == pytest.approx(0.707 / 3, abs=0.03)
    feat[:, 2] = 1.0
    assert np.isnan(analysis.independence(feat, [[0, 1], [2, 3]]))


# --- KON pieces --------------------------------------------------------------------------
def test_gradient_reversal_scales_and_flips():
    x = torch.randn(5, requires_grad=True)
    kon.grad_reverse(x, 0.3).sum().backward()
    assert torch.allclose(x.grad, torch.full((5,), -0.3))


def test_kl_bottleneck_matches_formula_and_vanishes_at_standard_moments():
    z = torch.randn(2, 3, 4000, 4, dtype=torch.float64) * 2 + 1
    mu, var = z.mean(-2), z.var(-2, unbiased=False) + 1e-6
    ref = -0.5 * (1 + torch.log(var) - mu ** 2 - var).mean(-1)
    assert torch.allclose(kon.kl_bottleneck(z), ref)
    zs = (z - z.mean(-2, keepdim=True)) / z.std(-2, unbiased=False, keepdim=True)
    assert kon.kl_bottleneck(zs).abs().max() < 1e-5


def test_decorrelation_matches_pairwise_reference():
    g = torch.Generator().manual_seed(0)
    blocks = [torch.randn(2, 64, d, generator=g, dtype=torch.float64) for d in (8, 4, 4)]
    blocks[1] = blocks[1] + 0.5 * blocks[0][..., :4]
    pw = torch.as_tensor(kon.block_pair_weights([8, 4, 4]))
    got = kon.decorrelation(blocks, 0.1, 1.0, pw)
    for s in range(2):
        zs, var = [], 0.0
        for b in blocks:
            z = b[s] - b[s].mean(0)
            sd = z.std(0, unbiased=False) + 1e-4
            zs.append(z / sd)
            var += ((sd - 1) ** 2).mean()
        cov = [((zs[i].T @ zs[j] / 64) ** 2).mean() for i in range(3) for j in range(i + 1, 3)]
        assert float(got[s]) == pytest.approx(float(0.1 * var + sum(cov) / 3), rel=1e-10)


def test_weighted_ce_matches_torch():
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(3, 50, 4, generator=g)
    y = torch.randint(0, 4, (3, 50), generator=g)
    w = torch.tensor([0.2, 1.0, 0.5, 0.7])
    got = kon.weighted_ce(logits, y, w)
    for s in range(3):
        assert float(got[s]) == pytest.approx(float(F.cross_entropy(logits[s], y[s], weight=w)),
                                              rel=1e-5)


def test_lr_schedule_and_adversary_ramp(cfg):
    p = dict(cfg["params"], warmup_frac=0.1, decay_frac=0.5, decay_rate=0.1)
    assert kon.lr_factor(0, 100, p) == 0.0
    assert kon.lr_factor(10, 100, p) == pytest.approx(1.0)
    assert kon.lr_factor(50, 100, p) == pytest.approx(0.1)
    assert kon.lr_factor(100, 100, p) == pytest.approx(0.01)
    p = dict(p, adv_start_frac=0.25, adv_ramp_frac=0.5)
    assert kon.adv_scale(2, 20, p) == 0.0 and kon.adv_scale(10, 20, p) == pytest.approx(0.5)
    assert kon.adv_scale(19, 20, p) == 1.0


def test_clip_is_per_seed():
    a = torch.zeros(2, 3, requires_grad=True)
    a.grad = torch.tensor([[3.0, 4.0, 0.0], [0.3, 0.4, 0.0]])
    kon.clip_per_seed([a], 1.0)
    assert torch.allclose(a.grad[0], torch.tensor([0.6, 0.8, 0.0]), atol=1e-6)
    assert torch.allclose(a.grad[1], torch.tensor([0.3, 0.4, 0.0]))


def _tiny_pretrain(cfg, seeds, kind="kon"):
    p = dict(cfg["params"], epochs=2, batch=64)
    xs, labs = [], {"ss": [], "z": [], "bins": []}
    for s in seeds:
        g = D.generate(dict(p, n_proteins=20, n_residues=10), np.random.default_rng(s))
        rows = np.arange(100, 200)
        t = D.knowledge_targets(g, rows, p["n_bins"])
        xs.append(g["x"][rows])
        labs["ss"].append(g["ss"][rows])
        labs["z"].append(t["z"][rows])
        labs["bins"].append(t["bins"][rows])
    x = torch.as_tensor(np.stack(xs))
    lab = {k: torch.as_tensor(np.stack(v)) for k, v in labs.items()}
    return kon.pretrain(kind, x, lab, seeds, [s + 100 for s in seeds], p, "cpu",
                        torch.ones(3))


def test_pretraining_a_seed_alone_or_stacked_gives_the_same_encoder(cfg):
    both, _ = _tiny_pretrain(cfg, [3, 7])
    alone, curves = _tiny_pretrain(cfg, [7])
    for k in both:
        assert torch.allclose(both[k][1], alone[k][0], atol=1e-5), k
    # curves record every loss term per epoch, the adversary weight included
    names = {c["metric"] for c in curves}
    assert {"knowledge", "restore", "adversary", "kl", "decorrelation", "lambda_adv"} <= names


def test_kon_learns_its_knowledge_targets(cfg):
    _, curves = _tiny_pretrain(cfg, [0], "mt")
    know = [c["value"] for c in curves if c["metric"] == "knowledge"]
    assert know[-1] < know[0]


# --- downstream heads ---------------------------------------------------------------------
def test_head_update_matches_torch_adam():
    from icml26.lm.optim import adamw_update

    g = torch.Generator().manual_seed(0)
    w0 = torch.randn(4, 3, generator=g)
    ours = w0.clone().requires_grad_(True)
    ref = w0.clone().requires_grad_(True)
    opt = torch.optim.Adam([ref], lr=3e-3, weight_decay=1e-4)
    m, v = [torch.zeros_like(ours)], [torch.zeros_like(ours)]
    for t in range(1, 6):
        for w in (ours, ref):
            w.grad = None
            (w ** 3).sum().backward()
        with torch.no_grad():
            grads = [ours.grad + 1e-4 * ours]
        adamw_update([ours], grads, m, v, t, 3e-3, (0.9, 0.999), 1e-8, 0.0, [False])
        opt.step()
    assert torch.allclose(ours, ref, atol=1e-7)


def test_batch_stream_visits_every_row_once_per_pass():
    rows = np.arange(100, 130)
    b = heads.batch_stream(rows, 6, 10, seed=0)
    assert b.shape == (6, 10)
    assert sorted(b[:3].ravel()) == list(rows) and sorted(b[3:].ravel()) == list(rows)
    assert heads.batch_stream(rows, 4, 64, seed=0).shape == (4, 30)     # full batch


def test_heads_solve_separable_tasks(cfg):
    p = dict(cfg["params"], head_steps=150, head_batch=128, eval_every=10, n_last=3)
    rng = np.random.default_rng(0)
    bank = rng.normal(size=(1, 1200, 5)).astype(np.float32)
    tr, va, te = np.arange(600), np.arange(600, 900), np.arange(900, 1200)
    stream = {"s": {"seed": 0, "train": tr, "val": va, "test": te,
                    "batches": heads.batch_stream(tr, 150, 128, 1)}}
    yb = (bank[0, :, 1] > 0).astype(np.float32)[None]
    hs = [{"stream": "s", "cols": [1, 3], "init": 1}, {"stream": "s", "cols": [0], "init": 2}]
    _, test = heads.train_heads(bank, yb, "binary", 1, hs, stream, p, "cpu")
    assert test[0].mean() > 0.9 and abs(test[1].mean()) < 0.2     # informative vs useless column
    yr = (2 * bank[0, :, 2] + 0.1 * rng.normal(size=1200))[None]
    _, test = heads.train_heads(bank, yr, "regression", 1, [hs[0], {**hs[1], "cols": [2]}],
                                stream, p, "cpu")
    assert test[1].mean() > 0.95
    yc = np.argmax(bank[0, :, :3], 1)[None]
    _, test = heads.train_heads(bank, yc, "multiclass", 3,
                                [{"stream": "s", "cols": [0, 1, 2], "init": 3}], stream, p, "cpu")
    assert test[0].mean() > 0.85


# --- claims -------------------------------------------------------------------------------
def _metrics(sel_gain_struct, sel_gain_rand, ind_all, ind_mt, spec_all, spec_mt, seeds=5):
    rng = np.random.default_rng(0)
    rows = []
    for s in range(seeds):
        e = 0.005 * rng.normal()
        for split, gain in (("structure", sel_gain_struct), ("random", sel_gain_rand)):
            base = 0.5 + e
            vals = {"raw": base, "pca": base - 0.01, "mt-ent": base, "protdis-all": base + gain,
                    "protdis-sel": base + gain}
            for m, v in vals.items():
                row = {"method": m, "setting": split, "seed": s, "mean_score": v + 0.002 * e}
                if m == "protdis-all":
                    row.update(independence=ind_all + 0.01 * e, specificity=spec_all + e)
                if m == "mt-ent":
                    row.update(independence=ind_mt + 0.01 * e, specificity=spec_mt + e)
                rows.append(row)
    return pd.DataFrame(rows)


def _verdicts(m, cfg):
    return {c.id: c.verdict for c in claims.check(cfg, m, None)}


def test_claims_pass_on_data_built_to_pass(cfg):
    v = _verdicts(_metrics(0.1, 0.0, 0.05, 0.3, 0.5, 0.1), cfg)
    assert all(x == REPRODUCED for x in v.values()), v


def test_claims_fail_on_data_built_to_fail(cfg):
    v = _verdicts(_metrics(-0.05, 0.05, 0.3, 0.3, 0.1, 0.1), cfg)
    assert all(x == NOT_REPRODUCED for x in v.values()), v


# --- params -------------------------------------------------------------------------------
def test_bad_params_are_one_clear_error(cfg):
    for bad in ({"epochs": -1}, {"typo_key": 1}, {"head_steps": 0}):
        c = dict(cfg, params={**cfg["params"], **bad})
        with pytest.raises(ConfigError):
            check_schema(c, CONFIG)
    c = dict(cfg, params={k: v for k, v in cfg["params"].items() if k != "lr"})
    with pytest.raises(ConfigError):
        check_schema(c, CONFIG)
    with pytest.raises(ConfigError, match="n_pool"):
        E.check_params(dict(cfg, params={**cfg["params"], "n_pool": 500}))
    with pytest.raises(ConfigError, match="setting"):
        E.check_params(dict(cfg, settings={"weird": {}}))


def test_block_ranking_is_threshold_free_for_imbalanced_binary_labels():
    # two weak blocks on a rare positive class: a thresholded MCC ties both at 0, the
    # ranking score still orders the more informative block first
    rng = np.random.default_rng(0)
    z = rng.normal(size=2000)
    y = (z > 1.3).astype(int)
    strong = (z + 1.5 * rng.normal(size=2000))[:, None]
    weak = (z + 4.0 * rng.normal(size=2000))[:, None]
    s_strong = heads.ridge_val_score("binary", strong[:1000], y[:1000], strong[1000:], y[1000:],
                                     1.0)
    s_weak = heads.ridge_val_score("binary", weak[:1000], y[:1000], weak[1000:], y[1000:], 1.0)
    pred = analysis.ridge_fit_predict(strong[:1000], y[:1000, None].astype(float),
                                      strong[1000:], 1.0)
    assert heads.mcc(y[1000:], pred[:, 0] > 0.5) == 0.0
    assert s_strong > s_weak > 0
