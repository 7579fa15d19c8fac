"""Behaviour tests of vdw-gnn: transport invariances, exact equivariance of the VDW filter bank and
of the VDW-GNN / EGNN outputs (float64), the operator's spectrum and frame bounds, the claim
checkers on metrics built to fail, and the pipeline end to end."""

import json

import numpy as np
import pandas as pd
import pytest

from icml26 import pipeline
from icml26.claims import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED
from icml26.papers.vdw_gnn import claims, experiment
from icml26.papers.vdw_gnn import geometry as geo

P = {"J": 4, "k": 10, "second_order": False, "frame_vectors": 20, "noise_std": 0.5,
     "mask_frac": 0.2, "n_points": 48}


def _cloud(n=3, N=48, seed=0):
    X, normals, _ = geo.sample_ellipsoids(np.random.default_rng(seed), n, N)
    return X, normals


def _rot(seed=1):
    return geo.random_rotations(np.random.default_rng(seed), 1)[0]


def test_polar2_matches_svd():
    G = np.random.default_rng(0).standard_normal((500, 2, 2))
    U, _, Vt = np.linalg.svd(G)
    assert np.allclose(geo.polar2(G), U @ Vt, atol=1e-12)


def test_transport_basis_free_symmetric_and_rank2():
    X, _ = _cloud()
    W, M = geo.knn_weights(X, 10)
    O, _ = geo.local_frames(X, W)
    T = geo.transport(O)
    rng = np.random.default_rng(2)
    # O_i -> O_i S_i, S_i in O(2) (rotations and reflections / sign flips)
    th = rng.uniform(0, 2 * np.pi, O.shape[:2])
    S = np.stack([np.stack([np.cos(th), -np.sin(th)], -1), np.stack([np.sin(th), np.cos(th)],
                                                                  -1)], -2)
    S[..., 1] *= rng.choice([-1.0, 1.0], O.shape[:2])[..., None]
    T2 = geo.transport(O @ S)
    assert np.abs(T - T2).max() < 1e-10
    assert np.abs(T - T.transpose(0, 2, 1, 4, 3)).max() < 1e-12          # T_ji = T_ij^T
    assert np.allclose(np.linalg.matrix_rank(T[0, 0, 1]), 2)
    # the edge-only version equals the all-pairs one on the edges
    Te = geo.transport(O, M)
    assert np.abs((Te - T)[M]).max() < 1e-14 and np.abs(Te[~M]).max() == 0


def test_full_3x3_frames_collapse_to_identity():
    """The spec's warning: with full 3x3 frames O_i^T O_j is already orthogonal."""
    O3 = geo.random_rotations(np.random.default_rng(0), 2)
    U, _, Vt = np.linalg.svd(O3[0].T @ O3[1])
    assert np.allclose(O3[0] @ (U @ Vt) @ O3[1].T, np.eye(3))


def test_transport_rotates_with_the_cloud():
    X, _ = _cloud(n=1)
    R = _rot()
    W, M = geo.knn_weights(X, 10)
    T = geo.transport(geo.local_frames(X, W)[0], M)
    XR = X @ R.T + np.array([3.0, -1.0, 2.0])
    W2, M2 = geo.knn_weights(XR, 10)
    T2 = geo.transport(geo.local_frames(XR, W2)[0], M2)
    assert (M == M2).all()
    assert np.abs(T2 - R @ T @ R.T).max() < 1e-10


def test_lazy_operator_spectrum_and_normal_kernel():
    X, _ = _cloud(n=2)
    W, M = geo.knn_weights(X, 10)
    O, _ = geo.local_frames(X, W)
    Q = geo.vector_operator(W, geo.transport(O, M))
    assert np.abs(Q - Q.transpose(0, 2, 1)).max() < 1e-14
    ev = np.linalg.eigvalsh(Q)
    assert ev.min() >= -1e-12 and ev.max() <= 1 + 1e-12
    # A = 2Q - I kills every normal direction: eigenvalue 1/2 of Q with multiplicity >= N
    assert (np.abs(ev - 0.5) < 1e-9).sum(1).min() >= X.shape[1]
    evp = np.linalg.eigvalsh(geo.scalar_operator(W))
    assert evp.min() >= -1e-12 and evp.max() <= 1 + 1e-12


def test_frame_ratio_within_analytic_bounds_and_powers_agree():
    X, _ = _cloud(n=2)
    W, M = geo.knn_weights(X, 10)
    Q = geo.vector_operator(W, geo.transport(geo.local_frames(X, W)[0], M))
    V = np.random.default_rng(0).standard_normal((2, Q.shape[1], 50))
    # repeated application == repeated squaring
    pw = geo.dyadic_powers(Q, 4)
    qv = geo.dyadic_apply(Q, V, 4)
    assert all(np.allclose(p @ V, q) for p, q in zip(pw, qv, strict=True))
    lo = geo.lower_frame_bound(4)
    assert 0.18 < lo < 0.19
    fr = geo.frame_ratio(Q, V, 4)
    assert fr.min() >= lo - 1e-12 and fr.max() <= 1 + 1e-12
    # eigenvectors at the extremes of the polynomial reach the bounds' side of the spectrum
    w, vecs = np.linalg.eigh(Q[0])
    g = geo.frame_ratio(Q[:1], vecs[None], 4)[0]
    lam = w
    poly = (1 - lam) ** 2 + lam**32 + sum((lam ** (2 ** (j - 1)) - lam ** (2**j)) ** 2
                                          for j in range(1, 5))
    assert np.allclose(g, poly, atol=1e-10)


def _probe(kind="s1", seed=0):
    X, normals = _cloud(n=1, seed=seed)
    R, t = _rot(seed + 5), np.array([1.0, 2.0, -3.0])
    Xs = np.concatenate([X, X @ R.T + t])
    ns = np.concatenate([normals, normals @ R.T])
    field = None
    if kind == "s2":
        f = np.random.default_rng(3).standard_normal(X.shape)
        field = (np.concatenate([f, f @ R.T]),) * 2
    return experiment.process(kind, Xs, ns, field, None, dict(P, second_order=True)), R


@pytest.mark.parametrize("kind", ["s1", "s2"])
def test_vdw_coefficients_rotate_exactly_and_are_translation_invariant(kind):
    out, R = _probe(kind)
    for name in ("U_vdw", "U_sdw"):
        err = experiment.equivariance_error(out[name], R[None])
        assert err < 1e-10
    assert np.abs(out["S_coef"][1] - out["S_coef"][0]).max() < 1e-10
    # S1 target rotates too (the analytic normal, modulated by a rotation-invariant eigvec)
    if kind == "s1":
        assert np.abs(out["Y"][1] - out["Y"][0] @ R.T).max() < 1e-8


def _torch_models():
    torch = pytest.importorskip("torch")
    from icml26.papers.vdw_gnn import models
    return torch, models


def test_vdw_gnn_output_equivariant_gcn_not():
    torch, models = _torch_models()
    out, R = _probe("s1")
    gen = torch.Generator().manual_seed(0)
    for method in ("vdw-gnn", "scalar-dw"):
        inp, _ = experiment.readout_inputs(method, out)
        p = models.readout_init(gen, inp["Z"].shape[-1], inp["U"].shape[-1], 64, torch.float64)
        y = models.readout_forward(p, {k: torch.as_tensor(v) for k, v in inp.items()}).numpy()
        assert experiment.equivariance_error(y, R[None]) < 1e-5
    inp = experiment.gcn_inputs(out)
    p = models.gcn_init(gen, inp["H"].shape[-1], 64, torch.float64)
    y = models.gcn_forward(p, {k: torch.as_tensor(v) for k, v in inp.items()}).numpy()
    assert experiment.equivariance_error(y, R[None]) > 0.1


def test_gcn_layer_matches_formula():
    torch, models = _torch_models()
    out, _ = _probe("s1")
    inp = experiment.gcn_inputs(out)
    A = out["adj"][0].astype(float) + np.eye(out["adj"].shape[1])
    d = A.sum(1)
    assert np.allclose(inp["A"][0], A / np.sqrt(np.outer(d, d)))
    p = models.gcn_init(torch.Generator().manual_seed(1), inp["H"].shape[-1], 8, torch.float64)
    h = inp["H"][0]
    for layer in range(3):
        h = np.maximum(inp["A"][0] @ h @ p[f"w{layer}"].numpy() + p[f"b{layer}"].numpy(), 0)
    ref = h @ p["wo"].numpy() + p["bo"].numpy()
    y = models.gcn_forward(p, {k: torch.as_tensor(v) for k, v in inp.items()}).numpy()[0]
    assert np.allclose(y, ref)


def test_egnn_equivariant_and_translation_invariant():
    torch, models = _torch_models()
    for kind in ("s1", "s2"):
        out, R = _probe(kind)
        inp = experiment.egnn_inputs(out)
        p = models.egnn_init(torch.Generator().manual_seed(2), inp["s"].shape[-1],
                             inp["vdst"].shape[-1], 32, torch.float64)
        y = models.egnn_forward(p, {k: torch.as_tensor(v) for k, v in inp.items()}).numpy()
        y = y.reshape(2, -1, 3)
        assert np.linalg.norm(y[0]) > 1e-3
        assert experiment.equivariance_error(y, R[None]) < 1e-5


def test_egnn_output_on_tiny_graph_by_hand():
    """One edge pair: y_0 = (x_0 - x_1) phi(m_01) + v_1 psi(m_01) (mean over 1 neighbour)."""
    torch, models = _torch_models()
    p = models.egnn_init(torch.Generator().manual_seed(0), 1, 1, 4, torch.float64, n_layers=1)
    x = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 0.5]])
    v = np.array([[[1.0], [0.0], [0.0]], [[0.0], [1.0], [0.0]]])
    d = {"X": x[None], "Vin": v[None], "Sin": np.ones((1, 2, 1)),
         "adj": ~np.eye(2, dtype=bool)[None]}
    inp = experiment.egnn_inputs(d)
    y = models.egnn_forward(p, {k: torch.as_tensor(q) for k, q in inp.items()}).numpy()
    h = p["we"].numpy()[0] + p["be"].numpy()
    w = p["e0_w"].numpy()
    pre = h @ w[:4] + h @ w[4:8] + np.array([(x[0] - x[1]) @ (x[0] - x[1]), 0.0]) @ w[8:] \
        + p["e0_b"].numpy()
    m = pre / (1 + np.exp(-pre))
    ref = (x[0] - x[1]) * (m @ p["wx"].numpy()) + v[1, :, 0] * (m @ p["wv"].numpy())
    assert np.allclose(y[0], ref)


def _metrics(good: bool, n_seeds: int = 5):
    """Metrics and frame-ratio curves built to pass (good) or to fail every claim part."""
    rows, curves = [], []
    for seed in range(n_seeds):
        e = 0.01 * seed
        base = {"seed": seed, "vdw_coef_equiv_err": 1e-12 if good else 1e-3,
                "q_eig_min": 0.0, "q_eig_max": 1.0}
        vdw_ratio, gcn_ratio = (1.0 + e, 5.0 + e) if good else (2.0 + 10 * e, 1.2 + 10 * e)
        rows += [
            {**base, "method": "vdw-gnn", "setting": "S1", "rot_ratio": vdw_ratio,
             "relmse_test_rot": (0.2 if good else 0.9) + e, "relmse_test": 0.2,
             "equiv_err": 1e-12 if good else 0.5},
            {**base, "method": "gcn-xyz", "setting": "S1", "rot_ratio": gcn_ratio,
             "relmse_test_rot": (0.9 if good else 0.5) + e, "relmse_test": 0.2,
             "equiv_err": 0.5 if good else 0.01},
            {**base, "method": "egnn", "setting": "S1", "rot_ratio": 1.0,
             "relmse_test_rot": 0.19 + e + 0.03 * (seed % 2), "relmse_test": 0.2,
             "equiv_err": 0.0},
        ]
        for m in ("vdw-gnn", "scalar-dw"):
            rows.append({**base, "method": m, "setting": "S2",
                         "relmse_test": (0.2 if good else 0.6) + e, "noisy_relmse": 0.7,
                         "equiv_err": 1e-12 if good else 0.5, "rot_ratio": np.nan})
        for setting in ("S1", "S2"):
            for cloud in range(8):  # per-cloud frame ratios; one cloud out of bounds if bad
                lo, hi = (0.5, 1.0) if good or cloud else (0.1, 1.2)
                curves += [{"method": "vdw-gnn", "setting": setting, "seed": seed,
                            "step": cloud, "metric": "frame_min", "value": lo},
                           {"method": "vdw-gnn", "setting": setting, "seed": seed,
                            "step": cloud, "metric": "frame_max", "value": hi}]
    return pd.DataFrame(rows), pd.DataFrame(curves)


CFG = {"settings": {"S1": {"kind": "s1"}, "S2": {"kind": "s2"}}, "params": {}}


def test_claims_fail_on_metrics_built_to_fail():
    metrics, curves = _metrics(good=False)
    out = claims.check(CFG, metrics, curves)
    assert len(out) == 4
    for c in out:
        assert c.verdict == NOT_REPRODUCED, (c.id, c.verdict)
        for check in c.parts.values():
            assert check.verdict == NOT_REPRODUCED, (c.id, check)


def test_claims_pass_on_metrics_built_to_pass():
    metrics, curves = _metrics(good=True)
    out = claims.check(CFG, metrics, curves)
    for c in out:
        assert c.verdict == REPRODUCED, (c.id, c.verdict, {k: v.verdict for k, v in
                                                            c.parts.items()})
    # the frame check counts each distinct cloud once (clouds shared by the seeds)
    assert out[0].parts["min_ratio>=0.18"].n == 16
    # EGNN on only 2 seeds cannot decide the EGNN comparison
    few = metrics[~((metrics["method"] == "egnn") & (metrics["seed"] >= 2))]
    c3 = claims.check(CFG, few, curves)[2]
    assert c3.parts["S1:vdw/egnn_rotated"].verdict == INCONCLUSIVE
    # a diverged EGNN seed (NaN) never helps the claim pass
    bad = metrics.copy()
    bad.loc[(bad["method"] == "egnn") & (bad["seed"] == 0), "relmse_test_rot"] = np.inf
    c3 = claims.check(CFG, bad, curves)[2]
    assert c3.parts["S1:vdw/egnn_rotated"].verdict != REPRODUCED


def test_pipeline_smoke(tmp_path):
    out = pipeline.run_inprocess(pipeline.resolve("vdw-gnn", "smoke"), tmp_path)
    doc = json.loads(out["claims"].read_text())
    by_id = {c["id"]: c for c in doc["claims"]}
    assert by_id["C1-frame-bounds"]["verdict"] == "reproduced"
    # one seed at smoke: the per-model "every seed" parts need 3 seeds and cannot decide, but
    # the measured errors are on the claimed sides and the coefficient part is exact
    c2 = by_id["C2-symmetry"]
    assert c2["verdict"] == "inconclusive"
    assert c2["measured"]["vdw_coefficients"] < 1e-5
    assert c2["measured"]["vdw-gnn_outputs"] < 1e-5
    assert c2["measured"]["gcn-xyz_outputs"] > 0.1
