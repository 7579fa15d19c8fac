"""Behaviour tests of std-former: the MST / 0-D persistence identity against single linkage,
the Sparse Topological Loss, the TDE, coverage loss and residual encoding on hand cases (and the
fast training path against the direct one), BoVW's histogram, the texture shifts, the claim
checkers on metrics built to pass and to fail, params validation and the smoke pipeline."""

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.cluster.hierarchy import linkage
from scipy.spatial.distance import cdist, pdist

from icml26 import pipeline
from icml26.claims import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED
from icml26.config import check_params
from icml26.errors import ConfigError
from icml26.papers.std_former import bovw, claims, experiment
from icml26.papers.std_former import data as texdata
from icml26.papers.std_former import models as M
from icml26.papers.std_former import topology as topo

REPO_CONFIG = Path(__file__).resolve().parents[2] / "config"


# ------------------------------------------------------------------------------------------
# MST = 0-D persistence
# ------------------------------------------------------------------------------------------
def test_mst_lengths_equal_single_linkage_merge_heights():
    X = np.random.default_rng(0).standard_normal((40, 5))
    deaths = topo.persistence_deaths(X)
    assert len(deaths) == 39
    assert np.allclose(deaths, np.sort(linkage(pdist(X), "single")[:, 2]), atol=1e-12)


def test_mst_by_hand_and_with_coincident_points():
    # points on a line at 0, 1, 3, 3: tree edges 0-1 (1), 1-2 (2), 2-3 (0, coincident)
    X = np.array([[0.0], [1.0], [3.0], [3.0]])
    i, j, d = topo.mst_edges(cdist(X, X))
    assert np.allclose(np.sort(d), [0.0, 1.0, 2.0])
    assert (2, 3) in set(zip(i.tolist(), j.tolist(), strict=True))  # the coincident pair
    parent = list(range(4))                                         # the edges span all points

    def root(a):
        while parent[a] != a:
            a = parent[a]
        return a

    for a, b in zip(i, j, strict=True):
        parent[root(a)] = root(b)
    assert len({root(a) for a in range(4)}) == 1


def test_separation_ratio_by_hand():
    # two classes on a line: 0, 1 | 4, 6 -> MST edges 1 (same), 3 (different), 2 (same)
    X = np.array([[0.0], [1.0], [4.0], [6.0]])
    assert math.isclose(topo.separation_ratio(X, np.array([0, 0, 1, 1])), 3.0 / 1.5)
    assert math.isnan(topo.separation_ratio(np.full((4, 1), np.nan), np.array([0, 0, 1, 1])))


def test_topological_loss_by_hand_and_gradient_only_on_mst_edges():
    # points 0, 0.5 (class 0) and 2 (class 1): MST edges (0,1) length 0.5, (1,2) length 1.5
    e = torch.tensor([[0.0, 0.0], [0.5, 0.0], [2.0, 0.0]], requires_grad=True)
    y = torch.tensor([0, 0, 1])
    loss = M.topological_loss(e, y, margin=1.0)
    assert math.isclose(float(loss.detach()), (0.5**2 + 0.0) / 2, rel_tol=1e-5)
    loss.backward()
    # only the same-class edge pulls: d/de0 of 0.25 d^2 ... = -(0.5) for e0, +0.5 for e1
    assert torch.allclose(e.grad, torch.tensor([[-0.5, 0.0], [0.5, 0.0], [0.0, 0.0]]),
                          atol=1e-5)
    # a different-class edge shorter than the margin is pushed apart
    e2 = torch.tensor([[0.0, 0.0], [0.4, 0.0]])
    assert math.isclose(float(M.topological_loss(e2, torch.tensor([0, 1]), 1.0)), 0.36,
                        rel_tol=1e-5)


# ------------------------------------------------------------------------------------------
# TDE, coverage loss, encoding
# ------------------------------------------------------------------------------------------
def _tde_case(R=2, B=3, N=10, D=6, K=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    V = torch.randn(R, B, N, D, generator=g, dtype=torch.float64)
    P = M.stack_dicts([{k: v.double() for k, v in M.tde_init(g, K, D).items()}
                       for _ in range(R)])
    S2 = M.second_moments(V.reshape(R * B, N, D)).reshape(R, B, D, D)
    return V, P, S2


def test_tde_with_zero_queries_gives_mean_token_textons():
    V, P, _ = _tde_case()
    P["q"] = torch.zeros_like(P["q"])
    U, T = M.tde(P, V)
    assert torch.allclose(U, torch.einsum("rbnd,rde->rbne", V, P["Wv"]))
    assert torch.allclose(T, U.mean(2, keepdim=True).expand_as(T))


def test_encoding_by_hand_with_one_codeword():
    # K = 1: a_n1 = 1, pi = 1, r = mean_n u_n - t; x = [1, r/|r|] / sqrt(2)
    U = torch.tensor([[[[1.0, 0.0], [3.0, 2.0]]]], dtype=torch.float64)
    T = torch.tensor([[[[0.0, 0.0]]]], dtype=torch.float64)
    x = M.encode(U, T)[0, 0]
    r = np.array([2.0, 1.0]) / np.sqrt(5.0)
    assert np.allclose(x.numpy(), np.concatenate([[1.0], r]) / np.sqrt(2.0), atol=1e-6)


def test_encoding_soft_assignment_by_hand():
    # two tokens, two textons: d = [[0, 4], [4, 0]] -> s = 2, a = softmax([0, -2])
    U = torch.tensor([[[[0.0, 0.0], [2.0, 0.0]]]], dtype=torch.float64)
    T = torch.tensor([[[[0.0, 0.0], [2.0, 0.0]]]], dtype=torch.float64)
    x = M.encode(U, T)[0, 0].numpy()
    a = np.exp([0.0, -2.0]) / np.exp([0.0, -2.0]).sum()
    pi = np.array([a[0] + a[1], a[1] + a[0]]) / 2                  # symmetric: 1/2 each
    r1 = np.array([a[1] * 2.0, 0.0]) / 1.0                         # (sum a (u - t1)) / mass
    r2 = np.array([-a[1] * 2.0, 0.0]) / 1.0
    want = np.concatenate([pi, r1 / np.linalg.norm(r1), r2 / np.linalg.norm(r2)])
    assert np.allclose(x, want / np.linalg.norm(want), atol=1e-6)


def test_coverage_loss_by_hand():
    # one image, tokens u = 0 and 2 (1-D), textons at 0 and 2: d = [[0, 4], [4, 0]],
    # tau = 0.1 * mean d = 0.2; cover = -tau log(1 + e^-20); repulsion exp(-4 / 0.2)
    U = torch.tensor([[[[0.0], [2.0]]]], dtype=torch.float64)
    T = torch.tensor([[[[0.0], [2.0]]]], dtype=torch.float64)
    loss, mean_d = M.coverage_loss(U, T, tau_frac=0.1, beta=0.1)
    cover = -0.2 * math.log(1 + math.exp(-20.0))
    assert math.isclose(float(mean_d), 2.0)
    assert math.isclose(float(loss), cover + 0.1 * math.exp(-20.0), rel_tol=1e-9)


def test_fast_training_path_equals_the_direct_one():
    V, P, S2 = _tde_case()
    U, T = M.tde(P, V)
    assert torch.allclose(M.std_encoding(P, V, S2), M.encode(U, T), atol=1e-12)
    a, da = M.coverage_loss(U, T, 0.1, 0.1)
    b, db = M.std_coverage(P, V, S2, 0.1, 0.1)
    assert torch.allclose(a, b, atol=1e-12) and torch.allclose(da, db, atol=1e-12)


def test_deep_ten_smoothing_by_hand():
    # one token at distance^2 1 and 4 from two codewords, smoothing s = (1, 0.5)
    U = torch.tensor([[[[1.0, 0.0]]]], dtype=torch.float64)
    C = torch.tensor([[[[0.0, 0.0], [3.0, 0.0]]]], dtype=torch.float64)
    ls = torch.log(torch.tensor([[1.0, 0.5]], dtype=torch.float64))
    x = M.encode(U, C, ls)[0, 0].numpy()
    a = np.exp([-1.0, -2.0]) / np.exp([-1.0, -2.0]).sum()
    want = np.concatenate([a, [1.0, 0.0], [-1.0, 0.0]])
    assert np.allclose(x, want / np.linalg.norm(want), atol=1e-6)


def test_backbone_weights_and_tokens():
    net = M.backbone(7, patch=4, hidden=64, dim=32, device="cpu")
    w = net[0].weight.detach().numpy()
    assert abs(w.std() * 4.0 - 1.0) < 0.1 and not net[0].weight.requires_grad
    imgs = torch.rand(3, 32, 32)
    V = M.tokens(net, imgs, 4)
    # token 1 is the patch at rows 0-3, columns 4-7
    assert torch.allclose(V[:, 1], net(imgs[:, 0:4, 4:8].reshape(3, 16)), atol=1e-6)


def test_gather_and_epoch_batches():
    X = torch.arange(2 * 5 * 3).reshape(2, 5, 3)
    si, idx = torch.tensor([1, 0]), torch.tensor([[4, 0], [2, 2]])
    assert torch.equal(M.gather(X, si, idx), X[si[:, None], idx])
    b = M.EpochBatches(0, 10, 4)
    seen = np.concatenate([b.next() for _ in range(5)])
    assert sorted(seen[:10].tolist()) == list(range(10))      # first epoch: a permutation


# ------------------------------------------------------------------------------------------
# BoVW and the textures
# ------------------------------------------------------------------------------------------
def test_soft_histogram_by_hand():
    V = np.array([[[0.0], [2.0]]])
    C = np.array([[0.0], [2.0]])
    a = np.exp([0.0, -2.0]) / np.exp([0.0, -2.0]).sum()            # s = mean d = 2
    assert np.allclose(bovw.soft_histogram(V, C), [[0.5, 0.5]])
    V1 = np.array([[[0.0]]])
    d = np.array([0.0, 4.0])
    want = np.exp(-d / d.mean()) / np.exp(-d / d.mean()).sum()
    assert np.allclose(bovw.soft_histogram(V1, C), want[None])
    assert np.allclose(a.sum(), 1.0)


def test_bovw_separates_two_token_clouds():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 20)
    V = rng.normal(0, 0.1, (40, 16, 2)) + np.where(y[:, None, None] == 0, -2.0, 2.0)
    model = bovw.BoVW(n_words=4, seed=0).fit(V, y)
    assert (model.predict(V) == y).all()


P_DATA = {"n_classes": 4, "proto_size": 5, "proto_sigma": 1.0, "densities": [10, 20],
          "mix_ratios": [0.3, 0.7], "image_size": 32, "amp_range": [0.8, 1.2],
          "pixel_noise": 0.0, "illum_gain_low": [0.6, 0.8], "illum_gain_high": [1.25, 1.5],
          "illum_offset": 0.15, "blur_sigma": 0.8, "zoom": 1.3, "quant_levels": 8,
          "quant_noise": 0.0}


def test_class_definitions_and_images():
    cls = texdata.class_definitions(np.random.default_rng(0), P_DATA)
    assert np.allclose(cls["protos"].min(axis=(2, 3)), -0.5)
    assert np.allclose(cls["protos"].max(axis=(2, 3)), 0.5)
    assert cls["density"].tolist() == [10, 10, 20, 20]
    assert cls["mix"].tolist() == [0.3, 0.7, 0.3, 0.7]
    # density scales with the area at 64x64
    assert texdata.class_definitions(np.random.default_rng(0), {**P_DATA, "image_size": 64})[
        "density"].tolist() == [40, 40, 80, 80]
    imgs = texdata.texture_images(np.random.default_rng(1), cls, np.array([0, 3]), P_DATA)
    assert imgs.shape == (2, 32, 32) and imgs.min() >= 0 and imgs.max() <= 1
    assert (np.abs(imgs - 0.5) > 1e-6).mean() > 0.2                 # copies were pasted


def test_shifts_follow_their_definitions():
    x = np.random.default_rng(0).random((3, 32, 32)).astype(np.float32)
    q = texdata.apply_shift(np.random.default_rng(0), x, "compression", P_DATA)
    assert np.allclose(q * 7, np.round(q * 7), atol=1e-5)          # 8 grey levels
    from scipy import ndimage

    b = texdata.apply_shift(np.random.default_rng(0), x, "blur", P_DATA)
    assert np.allclose(b, ndimage.gaussian_filter(x.astype(float), (0, 0.8, 0.8)), atol=1e-6)
    il = texdata.apply_shift(np.random.default_rng(5), x, "illumination", P_DATA)
    r = np.random.default_rng(5)
    low = r.random(3) < 0.5
    g = np.where(low, r.uniform(0.6, 0.8, 3), r.uniform(1.25, 1.5, 3))
    o = r.uniform(-0.15, 0.15, 3)
    assert np.allclose(il, np.clip(g[:, None, None] * x + o[:, None, None], 0, 1), atol=1e-6)
    z = texdata.apply_shift(np.random.default_rng(0), x, "scale", P_DATA)
    assert not np.allclose(z, x) and z.shape == x.shape


# ------------------------------------------------------------------------------------------
# claims
# ------------------------------------------------------------------------------------------
def _metrics(good: bool, n_seeds: int = 5) -> pd.DataFrame:
    rows = []
    for seed in range(n_seeds):
        e = 0.3 * seed
        acc = {"bovw": (70, 50), "deep-ten": (72, 52), "gap-mlp": (40, 30),
               "std-former": (73 + e, 70 + e) if good else (60 + e, 35 + e),
               "std-former-plus": (73 + e, 70) if good else (50 + e, 40),
               "std-nostage1": (70, 65) if good else (75 + e, 65)}
        sep = {"std-former": 1.5 + 0.01 * seed,
               "std-former-plus": (2.2 if good else 1.5) + 0.01 * seed}
        for m, (clean, shift) in acc.items():
            rows.append({"method": m, "setting": "K8", "seed": seed, "acc_clean": clean,
                         "acc_shift": shift, "robust_drop": clean - shift,
                         "acc_illumination": shift, "mst_sep_ratio": sep.get(m, 1.1),
                         "cov_drop_frac": (0.5 if good else 0.1) + 0.01 * seed
                         if m in ("std-former", "std-former-plus") else np.nan,
                         "cov_rel_drop_frac": 0.2, "wv_norm_ratio": 0.9})
    return pd.DataFrame(rows)


CFG = {"settings": {"K8": {"K": 8}}, "params": {"shifts": ["illumination"]}}


def test_claims_pass_on_metrics_built_to_pass():
    out = claims.check(CFG, _metrics(True), None)
    assert len(out) == 5
    for c in out:
        assert c.verdict == REPRODUCED, (c.id, {k: v.verdict for k, v in c.parts.items()})


def test_claims_fail_on_metrics_built_to_fail():
    for c in claims.check(CFG, _metrics(False), None):
        assert c.verdict == NOT_REPRODUCED, (c.id, {k: v.verdict for k, v in c.parts.items()})


def test_failed_runs_never_help_and_few_seeds_are_inconclusive():
    m = _metrics(True)
    bad = m.copy()
    sel = (bad["method"] == "std-former") & (bad["seed"] == 0)
    bad.loc[sel, ["acc_clean", "acc_shift", "robust_drop", "mst_sep_ratio"]] = np.nan
    out = {c.id: c for c in claims.check(CFG, bad, None)}
    for cid in ("C1-clean-accuracy", "C2-shift-accuracy", "C4-topological-separation"):
        assert out[cid].verdict != REPRODUCED, cid
    assert "0" in out["C4-topological-separation"].gaps()
    # C3 counts the failed seed as a failure: 4 of 5 still holds; two failed seeds do not
    assert out["C3-robustness-drop"].verdict == REPRODUCED
    sel2 = (bad["method"] == "std-former") & (bad["seed"] == 1)
    bad.loc[sel2, "robust_drop"] = np.nan
    assert claims.check(CFG, bad, None)[2].verdict == NOT_REPRODUCED
    few = claims.check(CFG, m[m["seed"] < 2], None)
    assert few[2].verdict == INCONCLUSIVE


# ------------------------------------------------------------------------------------------
# params and pipeline
# ------------------------------------------------------------------------------------------
def test_bad_params_are_one_line_naming_the_key():
    cfg = pipeline.resolve("std-former", "smoke")
    for key, value in (("steps", -1), ("tau_frac", 0.0), ("shifts", ["fog"])):
        bad = {**cfg, "params": {**cfg["params"], key: value}}
        with pytest.raises(ConfigError, match=key):
            check_params(bad, REPO_CONFIG)
    bad = {**cfg, "params": {**cfg["params"], "image_size": 30}}
    with pytest.raises(ConfigError, match="image_size"):
        experiment.check_params(bad["params"])


def test_pipeline_smoke(tmp_path):
    out = pipeline.run_inprocess(pipeline.resolve("std-former", "smoke"), tmp_path)
    doc = json.loads(out["claims"].read_text())
    assert [c["id"] for c in doc["claims"]] == ["C1-clean-accuracy", "C2-shift-accuracy",
                                                "C3-robustness-drop",
                                                "C4-topological-separation", "C5-stage1"]
    metrics = pd.read_csv(out["metrics"])
    assert set(metrics["method"]) == {"deep-ten", "std-former"}
    assert metrics["acc_clean"].between(0, 100).all()
    # one seed: nothing can be decided
    assert all(c["verdict"] == "inconclusive" for c in doc["claims"])
