"""Behaviour tests of cryoace: the chain generator and maps, real-space refinement on a single
Gaussian atom, the soft-argmax read-out, the atom-centric features against hand-made maps, the
stacked model's independence across seeds and its stop-gradient, the dynamics metrics on
hand-made samples, the claim checkers, params validation, and the pipeline end to end."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from icml26 import pipeline
from icml26.claims import NOT_REPRODUCED, REPRODUCED, VERDICTS
from icml26.config import check_params
from icml26.errors import ConfigError
from icml26.papers.cryoace import claims, data, experiment, models, refine

REPO_CONFIG = Path(__file__).resolve().parents[2] / "config"
P = {"n_atoms": 20, "grid": 48, "box": 40.0, "max_turn_deg": 100.0, "res_min": 2.5,
     "res_max": 6.0, "sigma_per_res": 0.35, "noise": 0.08, "n_flex": 8, "flex_res": 5.0,
     "theta_min_deg": 30.0, "theta_max_deg": 45.0}


# ------------------------------------------------------------------------------------------
# world
# ------------------------------------------------------------------------------------------
def test_chain_generator_bonds_clashes_box_and_turns():
    X = data.chains(np.random.default_rng(0), 200, 20, 48)
    bonds = np.linalg.norm(np.diff(X, axis=1), axis=-1)
    assert np.allclose(bonds, 3.8, atol=1e-9)                       # exactly 3.8
    assert data.min_nonadjacent_distance(X).min() >= 4.0            # no clashes
    assert (np.abs(X - 23.5) <= 20.0).all()                         # central 40 x 40 square
    b = np.diff(X, axis=1)
    cos = (b[:, 1:] * b[:, :-1]).sum(-1) / 3.8**2
    assert np.degrees(np.arccos(np.clip(cos, -1, 1))).max() <= 100.0 + 1e-6
    # rejection is real: candidates do clash or leave the box sometimes
    c = data._candidates(np.random.default_rng(1), 500, 20, 48, 100.0)
    assert not data.valid(c, 48).all()


def test_resolution_profiles_span_and_smoothness():
    R = data.resolution_profiles(np.random.default_rng(0), 50, 20)
    assert np.allclose(R.min(1), 2.5) and np.allclose(R.max(1), 6.0)
    # smooth along the chain: neighbouring atoms differ much less than the full range
    assert np.abs(np.diff(R, axis=1)).mean() < 1.0


def test_density_by_hand_and_standardised():
    X = np.array([[[10.0, 20.0], [30.0, 12.0]]])
    R = np.array([[2.0, 5.0]])
    M = data.clean_density(X, R, 48)[0]
    y, x = 11, 22
    want = (np.exp(-((y - 10) ** 2 + (x - 20) ** 2) / (2 * 0.7**2))
            + np.exp(-((y - 30) ** 2 + (x - 12) ** 2) / (2 * 1.75**2)))
    assert np.isclose(M[y, x], want)
    F = data.finish(data.clean_density(X, R, 48), np.random.default_rng(0))
    assert np.isclose(F.mean(), 0.0, atol=1e-12) and np.isclose(F.std(), 1.0)


def test_heterogeneous_states_rotate_the_tail_rigidly():
    het = data.heterogeneous_maps(np.random.default_rng(0), 10, P)
    X, A, B, th = het["X"], het["XA"], het["XB"], het["theta"]
    assert np.array_equal(A[:, :12], X[:, :12]) and np.array_equal(B[:, :12], X[:, :12])
    for S in (A, B):
        assert np.allclose(np.linalg.norm(np.diff(S, axis=1), axis=-1), 3.8)
        assert data.valid(S, 48).all()
    # atom 19 turned by +theta / -theta about atom 11
    u, a = X[:, 19] - X[:, 11], A[:, 19] - X[:, 11]
    ang = np.arctan2(a[:, 1], a[:, 0]) - np.arctan2(u[:, 1], u[:, 0])
    ang = (ang + np.pi) % (2 * np.pi) - np.pi
    # rotate_about turns (y, x) by +theta in the (y, x) frame, i.e. -theta as atan2(x, y)
    assert np.allclose(np.abs(ang), th)
    assert ((np.degrees(th) >= 30) & (np.degrees(th) <= 45)).all()
    assert (het["R"][:, 12:] == 5.0).all() and (het["R"][:, :12] <= 6.0).all()


# ------------------------------------------------------------------------------------------
# baselines and metrics
# ------------------------------------------------------------------------------------------
def test_real_space_refinement_pulls_a_single_atom_to_the_peak():
    peak = np.array([20.3, 25.7])
    # a noise-free, standardised map (as the refinement sees them)
    M = data.finish(data.clean_density(peak[None, None], np.array([[4.0]]), 48),
                    np.random.default_rng(0), noise=0.0)
    X0 = np.array([[[22.4, 23.9]]])
    X = refine.real_space_refine(M, X0, steps=60, step=0.3)
    assert np.linalg.norm(X[0, 0] - peak) < 0.05
    # the step is clipped at 0.3 A: after one step the atom moved at most 0.3 A
    X1 = refine.real_space_refine(M * 100, X0, steps=1, step=0.3)
    assert np.linalg.norm(X1 - X0) <= 0.3 + 1e-12


def test_bond_gradient_matches_finite_differences():
    X = np.random.default_rng(0).normal(size=(1, 5, 2)) * 3

    def f(Z):
        return ((np.linalg.norm(np.diff(Z, axis=1), axis=-1) - 3.8) ** 2).sum()

    g = refine.bond_gradient(X)
    num = np.zeros_like(X)
    for i in range(5):
        for k in range(2):
            e = np.zeros_like(X)
            e[0, i, k] = 1e-6
            num[0, i, k] = (f(X + e) - f(X - e)) / 2e-6
    assert np.allclose(g, num, atol=1e-6)


def test_soft_argmax_by_hand_and_against_brute_force():
    lg = np.full((1, 48, 48), -50.0)
    lg[0, 10, 12] = 10.0                                  # one sharp peak 2.2 A from the atom
    X = refine.soft_argmax(lg, np.array([[[11.0, 14.0]]]), radius=4.0, repeats=2)
    assert np.allclose(X, [[[10.0, 12.0]]], atol=1e-6)
    # a peak outside the 4 A disk is ignored: the atom stays near the disk's mean
    X = refine.soft_argmax(lg, np.array([[[10.0, 18.0]]]), radius=4.0, repeats=1)
    assert np.allclose(X, [[[10.0, 18.0]]], atol=1e-9)
    rng = np.random.default_rng(0)
    lg, X0 = 3 * rng.standard_normal((2, 48, 48)), rng.uniform(2, 46, (2, 4, 2))
    yy, xx = np.mgrid[:48, :48]
    pix = np.stack([yy.ravel(), xx.ravel()], -1).astype(float)
    Y = X0.copy()
    for _ in range(2):
        out = np.zeros_like(Y)
        for n in range(2):
            for a in range(4):
                m = ((pix - Y[n, a]) ** 2).sum(-1) <= 16
                w = np.exp(lg[n].ravel()[m] - lg[n].ravel()[m].max())
                out[n, a] = (w[:, None] * pix[m]).sum(0) / w.sum()
        Y = out
    assert np.allclose(refine.soft_argmax(lg, X0), Y, atol=1e-10)


def test_static_metrics_by_hand():
    T = np.zeros((1, 4, 2))
    T[0, :, 1] = [0.0, 3.8, 7.6, 11.4]
    P_ = T.copy()
    P_[0, 0] += [0.5, 0.0]          # 0.5 A off
    P_[0, 3] += [0.0, 2.0]          # 2 A off, last bond 5.8 A
    assert np.isclose(refine.rmsd(P_, T)[0], np.sqrt((0.25 + 4.0) / 4))
    assert refine.recall(P_, T, 1.0) == 0.75
    d01 = np.hypot(0.5, 3.8)        # 3.83: valid; 3.8 valid; 5.8 invalid
    assert 3.5 <= d01 <= 4.1
    assert np.isclose(refine.bond_validity(P_), 2 / 3)


def test_dynamics_metrics_on_hand_made_samples():
    L, F = 6, 3
    A = np.zeros((1, L, 2))
    A[0, :, 1] = np.arange(L) * 3.8
    B = A.copy()
    B[0, -F:, 0] += 4.0                               # state B: tail shifted by 4 A
    both = np.stack([A[0], B[0]])[None]               # one sample in each state
    d = refine.dynamics(both, A, B, F)
    assert d["coverage_rmsd"] == 0.0 and d["both_resolved"] == 1.0 and d["rigid_rmsd"] == 0.0
    mid = 0.5 * (A + B)                               # samples at the consensus midpoint
    d = refine.dynamics(np.repeat(mid[:, None], 3, 1), A, B, F)
    assert np.isclose(d["coverage_rmsd"], 2.0) and d["both_resolved"] == 0.0
    one = np.stack([A[0], A[0]])[None]                # all samples in state A
    one[0, 1, 0, 0] += 1.0                            # one rigid atom of sample 2 off by 1 A
    d = refine.dynamics(one, A, B, F)
    assert np.isclose(d["coverage_rmsd"], 0.5 * 4.0) and d["both_resolved"] == 0.0
    assert np.isclose(d["rigid_rmsd"], 0.5 * np.sqrt(1 / (L - F)))


def test_flops_by_hand():
    p = {"grid": 48, "voxel_channels": 24, "voxel_layers": 4, "voxel_radius": 4.0,
         "voxel_repeats": 2, "n_atoms": 20, "hidden": 64, "conv_kernel": 5, "conv_rounds": 2}
    conv = ((2 * 9 * 24 + 24) + 2 * (2 * 9 * 24 * 24 + 24) + (2 * 9 * 24 + 1)) * 48 * 48
    assert np.isclose(refine.flops_voxel(p), conv + 2 * 20 * np.pi * 16 * 6)
    per_atom = ((2 * 23 * 64 + 64) + (2 * 64 * 64 + 64) + (2 * 8 * 64 + 64) + 64
                + 2 * (2 * 320 * 64 + 64 + 64) + (2 * 64 * 3 + 3) + 2)
    assert refine.flops_atom_centric(p, 4) == 20 * 4 * (21 * 11 + 12 + per_atom)


# ------------------------------------------------------------------------------------------
# CryoACE-mini
# ------------------------------------------------------------------------------------------
def test_sample_map_is_bilinear_in_pixels():
    rng = np.random.default_rng(0)
    maps = rng.standard_normal((2, 12, 16))
    pts = rng.uniform(0, 11, (2, 7, 2))
    pts[0, 0] = [3.0, 5.0]                           # a pixel centre reads the pixel
    got = models.sample_map(torch.as_tensor(maps), torch.as_tensor(pts)).numpy()
    assert np.isclose(got[0, 0], maps[0, 3, 5])
    assert np.allclose(got, refine.bilinear(maps, pts), atol=1e-10)


def test_atom_features_on_a_ramp_and_neighbours_by_hand():
    yy, xx = np.mgrid[:32, :32].astype(float)
    maps = torch.as_tensor((0.7 * yy - 0.2 * xx)[None])
    X = torch.tensor([[[[10.0, 10.0], [10.0, 13.8], [13.8, 13.8]]]], dtype=torch.float64)
    f = models.atom_features(maps, X, models.sample_offsets()).numpy()[0, 0]
    assert f.shape[-1] == models.N_FEATURES == 23
    assert np.allclose(f[:, 17:19], [0.7, -0.2])                 # gradient of the ramp
    assert np.isclose(f[0, 0], 0.7 * 10 - 0.2 * 10)             # centre sample
    assert np.isclose(f[0, 1], 0.7 * 10 - 0.2 * 11.5)           # ring 1.5 A, direction +x
    assert np.isclose(f[0, 3], 0.7 * 11.5 - 0.2 * 10)           # ring 1.5 A, direction +y
    assert np.isclose(f[0, 9 + 4], 0.7 * 10 - 0.2 * 7.0)        # ring 3.0 A, direction -x
    assert np.allclose(f[0, 19:], [0, 0, 0, 1])                  # no prev, next +x / 3.8
    assert np.allclose(f[1, 19:], [0, -1, 1, 0])
    assert np.allclose(f[2, 19:], [-1, 0, 0, 0])


def test_stacked_seeds_are_independent_and_recycling_stops_gradients():
    torch.manual_seed(0)
    m = models.CryoACEMini(hidden=16)
    off = models.sample_offsets().float()
    both, alone = m.init([11, 12], None), m.init([11], None)
    maps = torch.randn(2 * 3, 48, 48)
    X = torch.rand(2, 3, 20, 2) * 30 + 9
    d2, r2 = m.step(both, maps, X, off)
    d1, r1 = m.step(alone, maps[:3], X[:1], off)
    assert torch.allclose(d2[:1], d1, atol=1e-6) and torch.allclose(r2[:1], r1, atol=1e-6)
    # stop-gradient: the last recycle's gradient equals one step from its detached input
    xs, _ = m.recycle(alone, maps[:3], X[:1], 3, off)
    leaves = m.leaves(alone)
    g_rec = torch.autograd.grad(xs[-1].sum(), leaves)
    d, _ = m.step(alone, maps[:3], xs[-2].detach(), off)
    g_one = torch.autograd.grad(d.sum(), leaves)
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(g_rec, g_one, strict=True))
    assert (xs[1] - xs[0]).abs().max() <= 3.0            # displacement bounded by 3 A


def test_cryoace_learns_to_refine_a_coarse_start():
    """100 Adam steps on 64 maps: the model's refinement beats the coarse start."""
    from icml26.rl.optim import Adam

    p = dict(P, n_atoms=20)
    rng = np.random.default_rng(0)
    d = data.static_maps(rng, 64, p)
    m = models.CryoACEMini(hidden=32)
    params = m.init([5], None)
    leaves = m.leaves(params)
    opt = Adam(leaves, lr=2e-3)
    off = models.sample_offsets().float()
    M = torch.as_tensor(d["M"])
    Xt = torch.as_tensor(d["X"], dtype=torch.float32)[None]
    R = torch.as_tensor(d["R"], dtype=torch.float32)[None]
    gen = torch.Generator().manual_seed(0)
    for _ in range(100):
        X0 = Xt + 2.0 * torch.randn(Xt.shape, generator=gen)
        xs, rs = m.recycle(params, M, X0, 3, off)
        opt.step(torch.autograd.grad(models.cryoace_loss(xs, rs, Xt, R), leaves))
    X0 = Xt + 2.0 * torch.randn(Xt.shape, generator=gen)
    with torch.no_grad():
        xs, _ = m.recycle(params, M, X0, 4, off)
    start = refine.rmsd(X0[0].numpy(), d["X"]).mean()
    assert refine.rmsd(xs[-1][0].numpy(), d["X"]).mean() < 0.8 * start


# ------------------------------------------------------------------------------------------
# claims
# ------------------------------------------------------------------------------------------
def _metrics(good: bool, seeds=(0, 1, 2, 3, 4)):
    rng = np.random.default_rng(0)
    rows = []
    for s in seeds:
        e = 0.01 * rng.standard_normal()
        ace = 0.8 + e if good else 1.9 + e
        rows += [
            {"method": "cryoace", "setting": "L20", "seed": s, "rmsd": ace,
             "bond_validity": 0.97 if good else 0.7, "flops_per_map": 1e6 if good else 3e7,
             "flops_sampling_per_map": 1e4, "cpu_s_per_map": 1e-4 if good else 1e-2,
             "spearman_res": 0.8 + e if good else 0.3 + e, "start_rmsd": 2.5,
             "coverage_rmsd": 2.0 + e if good else 5.0 + e,
             "both_resolved": 0.6 + e if good else 0.1 + e, "rigid_rmsd": 0.9 + e,
             "flex_rmsd_to_parent": 3.0},
            {"method": "cryoace-k1", "setting": "L20", "seed": s, "rmsd": 1.5 + e,
             "bond_validity": 0.8},
            {"method": "cryoace-unguided", "setting": "L20", "seed": s,
             "coverage_rmsd": 5.0 + e, "both_resolved": 0.1 + e, "rigid_rmsd": 0.9,
             "flex_rmsd_to_parent": 2.0},
            {"method": "cryoace-consensus", "setting": "L20", "seed": s,
             "coverage_rmsd": 5.5, "both_resolved": 0.0, "rigid_rmsd": 0.8},
            {"method": "voxel-cnn", "setting": "L20", "seed": s, "rmsd": 1.6 + e,
             "bond_validity": 0.6, "flops_per_map": 5e7, "cpu_s_per_map": 2e-3},
            {"method": "rsr", "setting": "L20", "seed": s, "rmsd": 1.4, "bond_validity": 0.8,
             "cpu_s_per_map": 5e-4}]
    return pd.DataFrame(rows)


def _cfg():
    return {"settings": {"L20": {}}, "params": {"k_test": 4}}


def test_claims_pass_on_metrics_built_to_pass():
    out = claims.check(_cfg(), _metrics(True), None)
    assert [c.id for c in out] == ["C1-atom-centric-vs-voxel", "C2-recycling",
                                   "C3-bond-validity", "C4-efficiency", "C5-guidance-dynamics",
                                   "C6-resolution-head"]
    assert all(c.verdict == REPRODUCED for c in out), [(c.id, c.verdict) for c in out]
    assert all(c.category == "result" for c in out)


def test_claims_fail_on_metrics_built_to_fail():
    out = claims.check(_cfg(), _metrics(False), None)
    assert all(c.verdict == NOT_REPRODUCED for c in out), [(c.id, c.verdict) for c in out]


def test_failed_run_cannot_help_a_claim():
    m = _metrics(True)
    m.loc[(m["method"] == "cryoace") & (m["seed"] == 2), "rmsd"] = np.nan
    c = {c.id: c for c in claims.check(_cfg(), m, None)}["C1-atom-centric-vs-voxel"]
    assert c.verdict == NOT_REPRODUCED           # every-seed parts count the failed seed
    assert "2" in c.to_dict()["note"]


# ------------------------------------------------------------------------------------------
# config and pipeline
# ------------------------------------------------------------------------------------------
def test_bad_params_are_one_line_naming_the_key():
    cfg = pipeline.resolve("cryoace", "smoke")
    for key, value in (("n_atoms", 2), ("voxel_crop", -1), ("lr", 0.0), ("epochs", "5")):
        bad = {**cfg, "params": {**cfg["params"], key: value}}
        with pytest.raises(ConfigError, match=key):
            check_params(bad, REPO_CONFIG)
    bad = {**cfg, "params": {**cfg["params"], "typo_key": 1}}
    with pytest.raises(ConfigError, match="typo_key"):
        check_params(bad, REPO_CONFIG)
    for key, value in (("res_max", 2.0), ("n_flex", 19), ("voxel_crop", 64)):
        with pytest.raises(ConfigError, match=key):
            experiment.check_params({**cfg["params"], key: value})


def test_pipeline_smoke(tmp_path):
    out = pipeline.run_inprocess(pipeline.resolve("cryoace", "smoke"), tmp_path)
    doc = json.loads(out["claims"].read_text())
    by_id = {c["id"]: c for c in doc["claims"]}
    assert len(by_id) == 6 and all(c["verdict"] in VERDICTS for c in by_id.values())
    # the analytic FLOPs part is deterministic and decided even with one seed
    assert by_id["C4-efficiency"]["measured"]["L20:flops_ratio"] <= 0.2
    metrics = pd.read_csv(out["metrics"])
    ace = metrics[metrics["method"] == "cryoace"].iloc[0]
    assert ace["rmsd"] < ace["start_rmsd"]            # even 2 epochs refine the coarse start
    assert (out["figures"] / "static_benchmark.png").exists()
