"""Behaviour tests of lamp: the minimum-norm affine mixing (by hand and against numpy's
least-squares minimum-norm solution), LAMP-local, DNI, nearest and guided mixing, the analytic
SDF family and its measurements, the safety metric and AUROC (against scikit-learn), the
stacked decoders (batched training equals separate training, flat weights round-trip), the
claim checkers on metrics built to pass and to fail, params validation, and the pipeline."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from icml26 import pipeline
from icml26.claims import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED
from icml26.papers.lamp import claims, mixing
from icml26.papers.lamp import shapes as sh

FAM = sh.family("profile2d")


# ------------------------------------------------------------------------------------------
# mixing
# ------------------------------------------------------------------------------------------
def test_min_norm_alpha_by_hand():
    # three exemplars on a line, target at the middle: alpha = (1/3, 1/3, 1/3) + t (1, -2, 1)
    # solves the constraints for every t; the minimum norm is at t = 0
    P = np.array([[0.0], [1.0], [2.0]])
    assert np.allclose(mixing.min_norm_alpha(P, np.array([1.0])), [1 / 3, 1 / 3, 1 / 3])
    # two exemplars, extrapolating to 2: the unique affine solution (-1, 2) (negative weight)
    assert np.allclose(mixing.min_norm_alpha(P[:2], np.array([2.0])), [-1.0, 2.0])


def test_min_norm_alpha_matches_lstsq_minimum_norm_solution():
    rng = np.random.default_rng(0)
    P = rng.uniform(0.5, 2.0, (12, 3))
    target = np.array([2.5, 0.1, 1.0])           # outside the exemplars' hull
    alpha = mixing.min_norm_alpha(P, target)
    A = np.vstack([P.T, np.ones(len(P))])
    ref = np.linalg.lstsq(A, np.r_[target, 1.0], rcond=None)[0]   # minimum-norm solution
    assert np.allclose(alpha, ref, atol=1e-9)
    assert np.allclose(alpha @ P, target, atol=1e-10) and np.isclose(alpha.sum(), 1.0)
    # constraining a subset C: the same against lstsq on the smaller system
    alpha_c = mixing.min_norm_alpha(P, target, [0])
    ref_c = np.linalg.lstsq(np.vstack([P[:, 0], np.ones(12)]), np.r_[target[0], 1.0],
                            rcond=None)[0]
    assert np.allclose(alpha_c, ref_c, atol=1e-9)
    assert np.linalg.norm(alpha_c) < np.linalg.norm(alpha)


def test_min_norm_alpha_ridge_on_degenerate_exemplars():
    P = np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]])   # identical exemplars: A A^T singular
    alpha = mixing.min_norm_alpha(P, np.array([1.0, 2.0]))
    assert np.all(np.isfinite(alpha)) and np.allclose(alpha, 1 / 3, atol=1e-4)


def test_local_alpha_uses_only_the_k_nearest_and_meets_the_constraints():
    rng = np.random.default_rng(1)
    P = sh.latin_hypercube(rng, 20, FAM)
    target = FAM["centre"] + 0.1 * FAM["width"]
    alpha = mixing.local_alpha(P, target, FAM["width"], 8)
    d = mixing.scaled_distance(P, target, FAM["width"])
    assert set(np.flatnonzero(alpha)) <= set(np.argsort(d)[:8])
    assert np.allclose(alpha @ P, target) and np.isclose(alpha.sum(), 1.0)


def test_dni_picks_the_pair_whose_line_passes_through_the_target():
    width = np.ones(2)
    P = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [5.0, 5.0]])
    # (2, 0) lies on the line through exemplars 0 and 1, beyond exemplar 1: t = 2 (unclamped)
    alpha = mixing.dni_alpha(P, np.array([2.0, 0.0]), width, k=3)
    assert np.allclose(alpha, [-1.0, 2.0, 0.0, 0.0])
    # off every line: the projection on the closest line, one degree of freedom only
    alpha = mixing.dni_alpha(P, np.array([0.5, 0.1]), width, k=3)
    assert np.allclose(alpha, [0.5, 0.5, 0.0, 0.0])
    assert np.allclose(mixing.nearest_alpha(P, np.array([0.9, 0.2]), width), [0, 1, 0, 0])


def test_guided_alpha_is_feasible_and_solves_the_kkt_system():
    rng = np.random.default_rng(2)
    P = sh.latin_hypercube(rng, 15, FAM)
    target = FAM["centre"]
    gain, mu = np.array([0.0, 1.0, 1.0]), 0.5
    alpha = mixing.guided_alpha(P, target, [0], gain, mu)
    A = np.vstack([P[:, 0], np.ones(15)])
    b = np.r_[target[0], 1.0]
    # KKT of min g^T P^T a + mu |a|^2 s.t. A a = b: [2 mu I, A^T; A, 0] [a; l] = [-P g; b]
    K = np.block([[2 * mu * np.eye(15), A.T], [A, np.zeros((2, 2))]])
    ref = np.linalg.solve(K, np.r_[-P @ gain, b])[:15]
    assert np.allclose(alpha, ref, atol=1e-9)
    base = mixing.min_norm_alpha(P, target, [0])
    assert (alpha @ P) @ gain < (base @ P) @ gain


def test_linearity_mismatch_and_auroc():
    mixture = np.array([[0.1, -0.1, 0.5, 0.15]])
    mixed = np.array([[0.2, -0.1, 5.0, 0.05]])
    # band |mixture| < 0.2: points 0, 1, 3 -> (0.1 + 0 + 0.1) / 3
    assert np.allclose(mixing.linearity_mismatch(mixed, mixture, 0.2), [0.2 / 3])
    assert np.isnan(mixing.linearity_mismatch(mixed, mixture + 1.0, 0.2)[0])
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(3)
    score = np.round(rng.random(200), 1)           # with ties
    label = rng.random(200) < 0.3
    assert np.isclose(mixing.auroc(score, label), roc_auc_score(label, score))
    assert np.isnan(mixing.auroc(score, np.zeros(200, bool)))


# ------------------------------------------------------------------------------------------
# shapes and measurements
# ------------------------------------------------------------------------------------------
def test_sdf_by_hand():
    p = np.array([[1.5, 0.4, 0.2]])
    pts = np.array([[0.0, 0.0], [0.85, 0.0], [0.0, -0.3], [-0.075, 0.5], [0.7, 0.35]])
    s = sh.sdf(FAM, p, pts)[0]
    # centre: 0.2 from the bottom face; 0.1 right of the side; 0.1 below the bottom;
    # 0.1 above the cabin roof (cabin centred at x = -0.075, roof at h/2 + c = 0.4)
    assert np.allclose(s[:4], [-0.2, 0.1, 0.1, 0.1])
    # (0.7, 0.35): outside, above the body's top right part (body top at 0.2) and right of
    # the cabin (x up to -0.075 + 0.45 = 0.375)
    assert np.isclose(s[4], min(0.15, np.hypot(0.7 - 0.375, 0.0)))


def test_measurement_is_exact_on_analytic_shapes_and_sub_cell():
    rng = np.random.default_rng(4)
    T, _, _ = sh.targets(rng, FAM, 5, 3, [0.25, 1.0])
    pts, shape = sh.grid_points(FAM)
    fields = sh.sdf(FAM, T, pts).reshape((len(T),) + shape)
    m = sh.measure(FAM, fields)
    assert np.abs(m - T).max() < 1e-9
    assert sh.param_error(m, T).max() < 1e-6
    # the field shifted by +0.01 (a shape shrunk by 0.01 on every side): length - 0.02
    m2 = sh.measure(FAM, fields + 0.01)
    assert np.allclose(m2[:, 0], T[:, 0] - 0.02, atol=1e-9)
    # empty designs measure 0: a 100% error
    assert np.allclose(sh.param_error(sh.measure(FAM, np.ones((1,) + shape)), T[:1]), 100.0)


def test_targets_interpolation_inside_extrapolation_beyond_by_e_widths():
    T, lev, which = sh.targets(np.random.default_rng(5), FAM, 40, 30, [0.5])
    inside = T[:40]
    assert ((inside >= FAM["lo"]) & (inside <= FAM["hi"])).all() and (which[:40] == -1).all()
    for p, j in zip(T[40:], which[40:], strict=True):
        off = np.r_[p[j] - FAM["hi"][j], FAM["lo"][j] - p[j]]
        assert np.isclose(off.max(), 0.5 * FAM["width"][j])
        others = np.delete(np.arange(3), j)
        assert ((p[others] >= FAM["lo"][others]) & (p[others] <= FAM["hi"][others])).all()
        if j == 2:   # cabin only upward
            assert p[j] > FAM["hi"][j]


def test_latin_hypercube_one_point_per_stratum():
    P = sh.latin_hypercube(np.random.default_rng(6), 10, FAM)
    u = (P - FAM["lo"]) / FAM["width"]
    for k in range(3):
        assert sorted(np.floor(u[:, k] * 10).astype(int)) == list(range(10))


def test_validity_single_component_without_holes():
    good = np.zeros((1, 20, 20), bool)
    good[0, 5:15, 5:15] = True
    ring = good.copy()
    ring[0, 9:11, 9:11] = False
    two = np.zeros((1, 20, 20), bool)
    two[0, 2:5, 2:5] = two[0, 10:15, 10:15] = True
    assert sh.valid(np.concatenate([good, ring, two])).tolist() == [True, False, False]


def test_surface_points_lie_on_the_zero_level_set_and_not_on_the_seam():
    P = np.array([[1.5, 0.4, 0.2], [1.8, 0.5, 0.3]])
    pts = sh.surface_points(np.random.default_rng(7), FAM, P, 500)
    assert np.abs(sh.sdf(FAM, P, pts)).max() < 1e-6
    # none inside the shape on the body-cabin junction (y = h/2 under the cabin)
    for p, q in zip(P, pts, strict=True):
        under = (np.abs(q[:, 1] - p[1] / 2) < 1e-6) & (q[:, 0] > -0.35 * p[0] + 0.05) & \
            (q[:, 0] < 0.25 * p[0] - 0.05)
        assert not under.any()


def test_vehicle3d_measurement_recovers_parameters():
    fam = sh.family("vehicle3d")
    P = sh.latin_hypercube(np.random.default_rng(8), 2, fam)
    pts, shape = sh.grid_points(fam, (48, 40, 36))
    fields = sh.sdf(fam, P, pts).reshape((2,) + shape)
    m = sh.measure(fam, fields)
    assert np.abs(m[:, :4] - P[:, :4]).max() < 1e-9       # flat faces: exact
    assert np.abs(m[:, 4] - P[:, 4]).max() < 0.01          # arch: circle between two columns
    assert sh.valid(fields < 0).all()


# ------------------------------------------------------------------------------------------
# decoders
# ------------------------------------------------------------------------------------------
def test_decoder_size_flatten_and_mixing_in_weight_space():
    import torch

    from icml26.papers.lamp import decoders as dec

    sizes = dec.sdf_sizes(2, 32)
    assert dec.n_params(sizes) == 1185
    layers = dec.init(sizes, [1, 2, 3], "cpu")
    flat = dec.flatten(layers)
    assert flat.shape == (3, 1185)
    x = torch.rand(3, 50, 2)
    assert torch.equal(dec.forward(dec.unflatten(flat, sizes), x), dec.forward(layers, x))
    # a mixed weight vector decodes as the network with the mixed weights
    alpha = torch.tensor([[-0.5, 1.0, 0.5]])
    w = alpha @ flat
    mixed = [[(alpha[0, :, None, None] * a).sum(0, keepdim=True),
              (alpha[0, :, None, None] * b).sum(0, keepdim=True)] for a, b in layers]
    pts = torch.rand(40, 2)
    ref = dec.forward(mixed, pts[None]).detach().numpy()
    assert np.allclose(dec.decode(w, sizes, pts), ref, atol=1e-6)
    # the output layer starts small (inside the loss clamp)
    assert float(layers[-1][1].abs().max()) == 0.0


def test_batched_fit_equals_separate_fits():
    """Stacked decoders train as separate ones would (the loss is a sum of per-decoder losses
    and Adam is elementwise)."""
    import torch

    from icml26.papers.lamp import decoders as dec

    sizes = dec.sdf_sizes(2, 8)
    g = torch.Generator().manual_seed(0)
    x, s = torch.rand(2, 64, 2, generator=g), torch.rand(2, 64, generator=g) * 0.3 - 0.15

    def run(rows):
        layers = dec.init(sizes, [10 + r for r in rows], "cpu")
        logs = dec.fit(layers, lambda step: (x[rows], s[rows]), 30, 1e-2, 0.1, 10)
        return dec.flatten(layers), logs

    both, logs = run([0, 1])
    one, _ = run([1])
    assert torch.allclose(both[1], one[0], atol=1e-6)
    assert logs[-1].mean() < logs[0].mean()


def test_chunked_fit_and_decode_equal_one_pass():
    """Training and decoding a few decoders at a time (for cache use) gives the same numbers
    as one pass over all of them: gradients, weights, logged losses and decoded fields."""
    import torch

    from icml26.papers.lamp import decoders as dec

    sizes = dec.sdf_sizes(2, 8)
    g = torch.Generator().manual_seed(1)
    x, s = torch.rand(11, 48, 2, generator=g), torch.rand(11, 48, generator=g) * 0.3 - 0.15

    def run(chunk):
        layers = dec.init(sizes, list(range(11)), "cpu")
        logs = dec.fit(layers, lambda step: (x, s), 12, 1e-2, 0.1, 5, chunk=chunk)
        return dec.flatten(layers), logs

    (one, logs_one), (parts, logs_parts) = run(64), run(4)
    assert torch.equal(one, parts) and np.array_equal(logs_one, logs_parts)
    pts = torch.rand(300, 2, generator=g)
    assert np.array_equal(dec.decode(one, sizes, pts, chunk=3), dec.decode(one, sizes, pts,
                                                                            chunk=64))


def test_conditional_decode_matches_forward():
    import torch

    from icml26 import stacked
    from icml26.papers.lamp import decoders as dec

    layers = dec.init([5, 16, 16, 1], [3, 4], "cpu")
    pts, T = torch.rand(30, 2), torch.rand(4, 3)
    out = dec.decode_conditional(layers, 1, pts, T, chunk=3)
    x = torch.cat([pts.expand(4, -1, -1), T[:, None, :].expand(-1, 30, -1)], -1)
    model = [[w[1:2], b[1:2]] for w, b in layers]
    ref = stacked.forward(model, x.reshape(1, -1, 5), torch.nn.functional.silu)
    assert np.allclose(out, ref.detach().numpy().reshape(4, 30), atol=1e-6)


# ------------------------------------------------------------------------------------------
# claims
# ------------------------------------------------------------------------------------------
CFG = {"settings": {"N10": {"n_exemplars": 10}, "N25": {"n_exemplars": 25},
                    "N50": {"n_exemplars": 50}}, "params": {"fail_iou": 0.85}}


def _metrics(good: bool, n_seeds: int = 5):
    rows, curves = [], []
    rng = np.random.default_rng(9)
    for seed in range(n_seeds):
        e = 0.002 * seed
        lamp = {"iou_interp": 0.95 + e, "perr_interp": 2.0, "iou_e50": 0.9, "iou_e100": 0.85,
                "perr_e50": 3.0, "perr_e100": 5.0, "exemplar_iou": 0.97, "lm_interp": 0.01,
                "alpha_l1_e50": 2.0, "alpha_l1_e100": 3.0, "gt_perr_max": 1e-12,
                "constraint_residual_max": 1e-14}
        worse = {"iou_interp": 0.85 + e if good else 0.96 + e,
                 "perr_interp": 6.0, "iou_e50": 0.8 if good else 0.95,
                 "iou_e100": 0.7 if good else 0.95, "perr_e50": 10.0 if good else 1.0,
                 "perr_e100": 20.0 if good else 1.0, "exemplar_iou": 0.9, "lm_interp": 0.3}
        if not good:
            lamp.update(iou_interp=0.8 + e, perr_interp=8.0, gt_perr_max=2.0,
                        constraint_residual_max=1e-3)
        for s in CFG["settings"]:
            rows.append({"method": "lamp", "setting": s, "seed": seed, **lamp})
            for m in ("cond-decoder", "dni"):
                rows.append({"method": m, "setting": s, "seed": seed, **worse})
        rows.append({"method": "lamp-noalign", "setting": "N10", "seed": seed,
                     "iou_interp": (0.3 if good else 0.79) + e, "exemplar_iou": 0.8,
                     "lm_interp": 0.5})
        for s in CFG["settings"]:
            iou = rng.uniform(0.5, 1.0, 60)
            lm = (1 - iou) + 0.02 * rng.random(60) if good else rng.random(60)
            if not good:
                iou = 1 - 0.5 * lm                  # LM large on the *good* designs
                lm = lm[::-1].copy()
            for t in range(60):
                curves += [{"method": "lamp", "setting": s, "seed": seed, "step": t,
                            "metric": "design_iou", "value": iou[t]},
                           {"method": "lamp", "setting": s, "seed": seed, "step": t,
                            "metric": "design_lm", "value": lm[t]}]
    return pd.DataFrame(rows), pd.DataFrame(curves)


def test_claims_pass_on_metrics_built_to_pass():
    metrics, curves = _metrics(True)
    out = claims.check(CFG, metrics, curves)
    assert [c.id for c in out] == ["C1-interpolation-N10", "C2-safe-extrapolation",
                                   "C3-alignment", "C4-safety-metric", "S1-measurement",
                                   "S2-affine-constraints"]
    for c in out:
        assert c.verdict == REPRODUCED, (c.id, {k: v.verdict for k, v in c.parts.items()})
    assert len(out[1].parts) == 8


def test_claims_fail_on_metrics_built_to_fail():
    metrics, curves = _metrics(False)
    for c in claims.check(CFG, metrics, curves):
        assert c.verdict == NOT_REPRODUCED, (c.id, {k: v.verdict for k, v in c.parts.items()})


def test_failed_runs_never_help_and_missing_auroc_is_a_failure():
    metrics, curves = _metrics(True)
    bad = metrics.copy()
    bad.loc[(bad["method"] == "lamp") & (bad["seed"] == 0), "iou_interp"] = np.nan
    c1 = claims.check(CFG, bad, curves)[0]
    assert c1.parts["lamp_iou>=0.90"].verdict == INCONCLUSIVE
    assert "0" in c1.parts["lamp_iou>=0.90"].failed
    # a seed whose designs all succeed has no AUROC: a failed value, not a pass
    cv = curves.copy()
    sel = (cv["seed"] == 1) & (cv["metric"] == "design_iou")
    cv.loc[sel, "value"] = 0.99
    c4 = claims.check(CFG, metrics, cv)[3]
    assert c4.parts["auroc>=0.75"].verdict == INCONCLUSIVE
    assert c4.parts["auroc>=0.75"].failed == ("1",)


# ------------------------------------------------------------------------------------------
# config and pipeline
# ------------------------------------------------------------------------------------------
def test_bad_params_are_one_config_error_line_naming_the_key():
    from icml26.config import check_params
    from icml26.errors import ConfigError

    root = Path(__file__).resolve().parents[2] / "config"
    for key, value in (("overfit_steps", -1), ("lm_band", 0.0), ("typo_key", 1),
                       ("partial_constrained", ["wheelbase"])):
        cfg = pipeline.resolve("lamp", "default")
        cfg["params"][key] = value
        with pytest.raises(ConfigError) as info:
            check_params(cfg, root)
        assert "\n" not in str(info.value) and key in str(info.value)
    cfg = pipeline.resolve("lamp", "default")
    cfg["settings"]["N10"] = {"n_exemplars": 1}
    with pytest.raises(ConfigError, match="n_exemplars"):
        check_params(cfg, root)


def test_pipeline_smoke(tmp_path):
    out = pipeline.run_inprocess(pipeline.resolve("lamp", "smoke"), tmp_path)
    doc = json.loads(out["claims"].read_text())
    by_id = {c["id"]: c for c in doc["claims"]}
    assert by_id["S1-measurement"]["verdict"] == "reproduced"
    assert by_id["S2-affine-constraints"]["verdict"] == "reproduced"
    metrics = pd.read_csv(out["metrics"])
    assert set(metrics["method"]) == {"lamp", "lamp-local", "cond-decoder", "dni", "nearest",
                                      "lamp-noalign"}
    # nearest exemplar reuses the exemplar decoder: its LM is exactly 0
    assert metrics.loc[metrics["method"] == "nearest", "lm_all"].abs().max() == 0.0
