"""Behaviour tests of codemamba: the sequence generator against the shared image blocks, the
vectorised detection against icml26.vision.metrics.detect, the classical detector against
scipy, the selective scan / fusion / heteroscedastic loss against hand-written formulas, the lr
rule, the claim checkers on metrics built to fail and to pass, and the pipeline end to end."""

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import ndimage

from icml26 import pipeline
from icml26.claims import NOT_REPRODUCED, REPRODUCED
from icml26.papers.codemamba import claims, experiment, scoring
from icml26.papers.codemamba import data as gen
from icml26.vision.images import gaussian_spots, shift
from icml26.vision.metrics import detect


def _params(**kw):
    p = pipeline.resolve("codemamba", "smoke")["params"]
    p.update(kw)
    return p


# ------------------------------------------------------------------------------------------
# data
# ------------------------------------------------------------------------------------------
def test_translate_equals_shifting_the_whole_canvas():
    rng = np.random.default_rng(0)
    S, pad = 16, 9
    scene = rng.standard_normal((S + 2 * pad, S + 2 * pad))
    disp = np.array([[0.3, 0.7], [1.5, -2.2], [3.1, -4.6], [4.6, -6.9]])
    full = np.stack([shift(scene, *d, order=1)[pad:pad + S, pad:pad + S] for d in disp])
    assert np.allclose(gen.translate(scene, disp, pad, S), full, atol=1e-12)


def test_psf_frames_match_gaussian_spots():
    c = np.array([[3.2, 4.7], [8.0, 1.1]])
    got = gen.psf_frames(12, c, 0.8)
    for k in range(2):
        assert np.allclose(got[k], gaussian_spots((12, 12), c[k:k + 1], 0.8, 1.0))


def test_sequences_masks_regimes_and_normalisation():
    p = _params(frame_size=16, n_blobs=[1, 1], n_spots=[1, 1])
    d = gen.make_sequences(np.random.default_rng(1), 200, p)
    f = d["frames"]
    assert np.allclose(f.min(axis=(1, 2, 3)), 0) and np.allclose(f.max(axis=(1, 2, 3)), 1)
    px = d["mask"].sum(axis=(1, 2))
    # pixels within 1.18 sigma_t (<= 1.18 px) of the centre: 1 to 6 (the spec says "1-5")
    assert (px[d["present"]] >= 1).all() and (px[d["present"]] <= 6).all()
    assert (px[~d["present"]] == 0).all()
    assert 0.75 < d["present"].mean() < 0.95 and 0.35 < d["drift"].mean() < 0.65
    # the mask holds the target centre's pixel; the bg mask excludes a 5 x 5 dilation of it
    i = np.nonzero(d["present"])[0][0]
    cy, cx = np.round(d["centre"][i]).astype(int)
    assert d["mask"][i, cy, cx] and not d["bgmask"][i, cy, cx]
    assert not d["bgmask"][i, min(cy + 2, 15), cx]
    # one static spot per sequence, inside the last frame
    assert (np.isfinite(d["spots"][:, 0, 0])).all() and np.isnan(d["spots"][:, 1:]).all()


def test_static_spot_moves_with_the_camera():
    """A scene point placed as make_sequences places a static spot (canvas position
    pos_T + pad - disp_T) appears at pos_T in the last frame and at pos_T - (disp_T - disp_t)
    in frame t: it moves with the camera."""
    S, pad = 20, 9
    disp = np.array([0.4, 0.2])[None] + np.array([1.0, -0.5])[None] * np.arange(5)[:, None]
    pos_T = np.array([10.0, 6.0])
    scene = gaussian_spots((S + 2 * pad,) * 2, [pos_T + pad - disp[-1]], 0.8, 1.0)
    frames = gen.translate(scene, disp, pad, S)
    for t in range(5):
        want = pos_T - (disp[-1] - disp[t])
        com = np.array(ndimage.center_of_mass(frames[t]))
        assert np.hypot(*(com - want)) < 0.05


# ------------------------------------------------------------------------------------------
# metrics and the classical detector
# ------------------------------------------------------------------------------------------
def test_detect_stack_equals_the_shared_detect():
    rng = np.random.default_rng(0)
    pred = rng.random((60, 16, 16)) > 0.93
    present = rng.random(60) < 0.8
    centres = np.where(present[:, None], rng.uniform(0, 15, (60, 2)), np.nan)
    mine = scoring.detect_stack(pred, centres, present, 3.0)
    targets = [c[None] if ok else np.zeros((0, 2))
               for c, ok in zip(centres, present, strict=True)]
    ref = detect(pred, targets, radius=3.0)
    assert mine["pd"] == pytest.approx(ref["pd"]) and mine["fa"] == pytest.approx(ref["fa"])
    assert (mine["hits"][present] == ref["hits"]).all()


def test_scores_by_hand():
    gt = np.zeros((2, 8, 8), bool)
    gt[0, 2, 2] = gt[0, 2, 3] = True
    pred = np.zeros((2, 8, 8), float)
    pred[0, 2, 2] = 0.9                   # half of the target: IoU 1/2, detected
    pred[1, 6, 6] = pred[1, 6, 5] = 0.8   # 2 false-alarm pixels in the empty image
    data = {"mask": gt, "present": np.array([True, False]),
            "centre": np.array([[2.0, 2.5], [np.nan, np.nan]]), "sigma_t": np.array([0.5, np.nan]),
            "drift": np.array([False, True]), "slow": np.array([False, False]),
            "spots": np.array([[[7.0, 7.0]], [[6.0, 5.5]]])}
    s = scoring.scores(pred, data, {"threshold": 0.5, "match_radius": 3.0, "point_sigma": 0.6})
    assert s["iou"] == pytest.approx(1 / 4)          # 1 / (2 gt + 2 false pixels)
    assert s["niou"] == pytest.approx(0.5) and s["pd"] == 1.0 and s["pd_point"] == 1.0
    assert s["fa"] == pytest.approx(2 / 128)
    assert s["clutter_hit"] == pytest.approx(0.5)    # the spot at (6, 5.5) was flagged
    assert s["iou_nodrift_fast"] == pytest.approx(0.5) and s["iou_drift_fast"] == 0.0


def test_classical_score_matches_scipy_and_threshold_rule():
    rng = np.random.default_rng(0)
    frames = rng.random((3, 5, 12, 12))
    want = ndimage.white_tophat(frames[1, -1], size=(5, 5)) * np.abs(
        frames[1, -1] - np.median(frames[1, :4], axis=0))
    assert np.allclose(scoring.classical_score(frames)[1], want)
    # threshold rule: the smallest grid threshold whose validation Fa <= target_fa
    score = rng.random((40, 16, 16))
    val = {"centre": np.full((40, 2), np.nan), "present": np.zeros(40, bool)}
    p = {"classical_grid": [1.0, 4.0, 13], "target_fa": 0.01, "match_radius": 3.0}
    thr, level, levels = scoring.classical_threshold(score, val, p)
    fa = scoring.detect_stack(score >= thr, val["centre"], val["present"])["fa"]
    assert fa <= 0.01 and level > 0.9
    below = np.quantile(score, levels[list(levels).index(level) - 1])
    assert scoring.detect_stack(score >= below, val["centre"], val["present"])["fa"] > 0.01


# ------------------------------------------------------------------------------------------
# models and losses
# ------------------------------------------------------------------------------------------
torch = pytest.importorskip("torch")
from icml26.papers.codemamba import models  # noqa: E402


def test_selective_scan_matches_the_recurrence_by_hand():
    g = torch.Generator().manual_seed(0)
    scan = models.SelectiveScan(3).double()
    with torch.no_grad():
        for q in scan.parameters():
            q.copy_(torch.randn(q.shape, generator=g, dtype=torch.float64))
    T, B = 4, 2
    xs = torch.randn(T * B, 3, 2, 2, generator=g, dtype=torch.float64)
    y = scan(xs, B).detach().numpy()
    Wab, bab = scan.ab.weight[:, :, 0, 0].detach().numpy(), scan.ab.bias.detach().numpy()
    Wc, bc = scan.c.weight[:, :, 0, 0].detach().numpy(), scan.c.bias.detach().numpy()
    D = scan.D.detach().numpy().reshape(3)
    x = xs.numpy().reshape(T, B, 3, 2, 2)
    h = np.zeros((B, 3, 2, 2))
    for t in range(T):
        a = 1 / (1 + np.exp(-(np.einsum("oc,bcij->boij", Wab[:3], x[t]) + bab[:3, None, None])))
        u = np.einsum("oc,bcij->boij", Wab[3:], x[t])          # W_b x_t, no bias
        h = a * h + (1 - a) * u
    want = np.einsum("oc,bcij->boij", Wc, h) + bc[:, None, None] + D[:, None, None] * x[-1]
    assert np.allclose(y, want, atol=1e-12)


def _scan_sliced(scan, xs, B):
    """The scan as first written (gate and input sliced from one 1 x 1 conv): the reference of
    the faster forward, which splits the conv's output instead."""
    gates = scan.ab(xs)
    a = torch.sigmoid(gates[:, :scan.ch])
    u = gates[:, scan.ch:] - scan.ab.bias[scan.ch:].view(1, -1, 1, 1)
    h = None
    for a_t, u_t in zip(a.split(B), u.split(B), strict=True):
        h = (1 - a_t) * u_t if h is None else a_t * h + (1 - a_t) * u_t
    return scan.c(h) + scan.D * xs[-B:]


def test_split_scan_equals_the_sliced_one_bit_for_bit_with_gradients():
    p = _params(frame_size=8)
    m = models.build("codemamba", p, torch.Generator().manual_seed(3))
    xs = torch.randn(5 * 4, int(p["channels"]), 8, 8, generator=torch.Generator().manual_seed(4))
    xs = xs.contiguous(memory_format=models.CL)
    params = list(m.scan.parameters())
    got, want = m.scan(xs, 4), _scan_sliced(m.scan, xs, 4)
    assert torch.equal(got, want)
    g_got = torch.autograd.grad((got ** 2).sum(), params)
    g_want = torch.autograd.grad((want ** 2).sum(), params)
    for a, b in zip(g_got, g_want, strict=True):
        assert torch.equal(a, b)


def test_bayesian_fusion_is_the_precision_weighted_mean():
    p = _params(frame_size=8)
    m = models.build("codemamba", p, torch.Generator().manual_seed(0))
    x = torch.rand(2, 5, 8, 8, generator=torch.Generator().manual_seed(1))
    o = m(x)
    w1, w2 = 1 / o["v1"], 1 / o["v2"]
    assert torch.allclose(o["z"], (o["z1"] * w1 + o["z2"] * w2) / (w1 + w2))
    assert torch.allclose(o["v1"], torch.nn.functional.softplus(o["s1"]) + 1e-3)
    mean = models.build("mean-fusion", p, torch.Generator().manual_seed(0))(x)
    assert torch.allclose(mean["z"], (mean["z1"] + mean["z2"]) / 2) and "v1" not in mean
    assert set(models.build("implicit-only", p, torch.Generator().manual_seed(0))(x)) >= {
        "z1", "bg"}
    # same generator seed, same weights
    a = models.build("codemamba", p, torch.Generator().manual_seed(5)).state_dict()
    b = models.build("codemamba", p, torch.Generator().manual_seed(5)).state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_heteroscedastic_loss_formula_and_its_incentive():
    eps = torch.tensor([-1.0, 0.5, 2.0]).view(3, 1, 1, 1, 1)
    z, v, y = torch.tensor(-3.0).view(1, 1, 1, 1), torch.tensor(4.0).view(1, 1, 1, 1), \
        torch.ones(1, 1, 1, 1)
    got = float(models.heteroscedastic_bce(z, v, y, eps))
    probs = [1 / (1 + math.exp(-(-3.0 + 2.0 * e))) for e in (-1.0, 0.5, 2.0)]
    assert got == pytest.approx(-math.log(sum(probs) / 3))
    # Kendall & Gal: on a confidently wrong pixel, more variance lowers the loss; the mean of
    # BCE over draws never does (Jensen), which is why the K&G form is the default
    e = torch.randn(64, 1, 1, 1, 1, generator=torch.Generator().manual_seed(0))
    small, big = torch.tensor(0.01).view(1, 1, 1, 1), torch.tensor(9.0).view(1, 1, 1, 1)
    assert models.heteroscedastic_bce(z, big, y, e) < models.heteroscedastic_bce(z, small, y, e)
    assert models.mean_bce(z, big, y, e) > models.mean_bce(z, small, y, e) - 1e-6


def test_loss_terms_by_hand():
    p = _params()
    g = torch.Generator().manual_seed(0)
    out = {"z": torch.randn(2, 1, 4, 4, generator=g), "bg": torch.randn(2, 1, 4, 4, generator=g)}
    y = (torch.rand(2, 1, 4, 4, generator=g) > 0.8).float()
    mask = (torch.rand(2, 1, 4, 4, generator=g) > 0.3).float()
    last = torch.rand(2, 1, 4, 4, generator=g)
    prob = torch.sigmoid(out["z"])
    inter = (prob * y).sum()
    soft = 1 - (inter + 1) / (prob.sum() + y.sum() - inter + 1)
    bce = torch.nn.functional.binary_cross_entropy_with_logits(out["z"], y, reduction="none")
    pt = prob * y + (1 - prob) * (1 - y)
    focal = ((0.75 * y + 0.25 * (1 - y)) * (1 - pt) ** 2 * bce).mean()
    bg = ((out["bg"] - last) ** 2 * mask).sum() / mask.sum()
    want = soft + 0.5 * focal + 0.1 * bg
    got = models.loss(out, y, mask, last, p, [None, None])
    assert float(got) == pytest.approx(float(want), rel=1e-6)


def test_cosine_lr():
    assert experiment.cosine_lr(0.01, 0, 100) == pytest.approx(0.01)
    assert experiment.cosine_lr(0.01, 50, 100) == pytest.approx(0.005)


def test_lr_rule_extends_the_grid_at_its_edge(monkeypatch):
    """Validation IoU peaks at lr 0.1: from [0.001, 0.003, 0.01] the rule extends upwards
    twice (0.03, 0.09) and picks the edge it reached; a peak inside is picked at once."""
    def fake(cfg, run, sets, dev, lr, every=None):
        return None, [{"metric": "val_iou", "value": -abs(math.log(lr / 0.1))}], False

    monkeypatch.setattr(experiment, "train_one", fake)
    cfg = {"params": {"lr_grid": [0.001, 0.003, 0.01], "lr_pilot": "mf-cnn", "steps": 5},
           "settings": {"synthetic-ir": {}}}
    lr, grid, scores = experiment.select_lr(cfg, None, None)
    assert grid == pytest.approx([0.001, 0.003, 0.01, 0.03, 0.09]) and lr == pytest.approx(0.09)
    cfg["params"]["lr_grid"] = [0.03, 0.09, 0.27]
    lr, grid, _ = experiment.select_lr(cfg, None, None)
    assert lr == pytest.approx(0.09) and len(grid) == 3


# ------------------------------------------------------------------------------------------
# claims, params, pipeline
# ------------------------------------------------------------------------------------------
def _metrics(good: bool, n: int = 5):
    rows = []
    for s in range(n):
        e = 0.003 * s
        cm_iou = 0.50 + e if good else 0.30 + e
        base = {"seed": s, "lr": 0.006, "pilot_val_iou_lr0.006": 0.2}
        cells = {f"iou_{k}": 0.4 for k in ("nodrift_fast", "nodrift_slow", "drift_fast",
                                           "drift_slow")}
        rows += [
            {**base, **cells, "method": "codemamba", "iou": cm_iou, "pd": 0.9 if good else 0.5,
             "fa": 1e-4 if good else 5e-4, "pd_point": 0.8 if good else 0.4,
             "clutter_hit": 0.05 if good else 0.6,
             "v1_drift": 2.0 + e if good else 1.0, "v1_nodrift": 1.0 if good else 2.0 + e,
             "v2_slow": 3.0 + e if good else 1.0, "v2_fast": 1.0 if good else 3.0 + e},
            {**base, **cells, "method": "sf-cnn", "iou": 0.2, "pd": 0.6 + e, "fa": 3e-4,
             "pd_point": 0.3, "clutter_hit": 0.5 if good else 0.1},
            {**base, **cells, "method": "mf-cnn", "iou": 0.3, "pd": 0.7, "fa": 2e-4,
             "pd_point": 0.6 + e, "clutter_hit": 0.3},
            {**base, "method": "implicit-only", "iou": 0.40 + e, "pd": 0.7, "fa": 2e-4,
             "pd_point": 0.5, "clutter_hit": 0.2,
             "iou_nodrift_fast": 0.6, "iou_nodrift_slow": 0.6,
             "iou_drift_fast": 0.2 if good else 0.8, "iou_drift_slow": 0.2 if good else 0.8},
            {**base, "method": "explicit-only", "iou": 0.42, "pd": 0.7, "fa": 2e-4,
             "pd_point": 0.5, "clutter_hit": 0.2,
             "iou_nodrift_fast": 0.6, "iou_drift_fast": 0.6,
             "iou_nodrift_slow": 0.2 if good else 0.8, "iou_drift_slow": 0.2 if good else 0.8},
            {**base, **cells, "method": "mean-fusion", "iou": 0.45 + e / 2, "pd": 0.8,
             "fa": 2e-4, "pd_point": 0.6, "clutter_hit": 0.1},
        ]
    return pd.DataFrame(rows)


def test_claims_fail_on_metrics_built_to_fail():
    out = claims.check({}, _metrics(False), None)
    assert len(out) == 7
    for c in out:
        assert c.verdict == NOT_REPRODUCED, (c.id, {k: v.verdict for k, v in c.parts.items()})


def test_claims_pass_on_metrics_built_to_pass_and_failed_runs_never_help():
    m = _metrics(True)
    for c in claims.check({}, m, None):
        assert c.verdict == REPRODUCED, (c.id, {k: v.verdict for k, v in c.parts.items()})
    bad = m.copy()
    bad.loc[(bad["method"] == "codemamba") & (bad["seed"] == 2), "iou"] = np.nan
    c3 = claims.check({}, bad, None)[2]
    assert c3.verdict != REPRODUCED and "2" in c3.to_dict()["note"]


def test_bad_params_are_one_config_error_line():
    from pathlib import Path

    from icml26.config import check_params
    from icml26.errors import ConfigError

    root = Path(__file__).resolve().parents[2] / "config"
    for key, bad in (("steps", 0), ("het_form", "bce"), ("lr_grid", []), ("batch_sise", 8),
                     ("lr_pilot", "classical")):
        cfg = pipeline.resolve("codemamba", "default")
        cfg["params"][key] = bad
        with pytest.raises(ConfigError) as info:
            check_params(cfg, root)
        assert "\n" not in str(info.value) and key in str(info.value)
    p = pipeline.resolve("codemamba", "default")["params"]
    with pytest.raises(ConfigError, match="drift_speed"):
        experiment.check_params({**p, "drift_speed": [1.5, 0.8]})
    with pytest.raises(ConfigError, match="lr_grid"):
        experiment.check_params({**p, "lr_grid": [0.01, 0.002]})


def test_train_is_deterministic_and_the_pipeline_runs(tmp_path):
    from icml26 import grid

    cfg = pipeline.resolve("codemamba", "smoke")
    cfg["seeds"] = [0]
    cfg["params"].update(n_train=40, n_val=20, n_test=20, steps=4, eval_every=2, batch_size=4)
    data = experiment.prepare(cfg, None)
    runs = [r for r in grid.runs(cfg) if r.method in ("codemamba", "classical")]
    a, _ = experiment.train(cfg, data, runs)
    b, _ = experiment.train(cfg, data, runs)
    for k in a:
        if "cpu_s" not in k:
            assert np.array_equal(a[k], b[k], equal_nan=True), k
    out = pipeline.run_inprocess(cfg, tmp_path)
    doc = json.loads(out["claims"].read_text())
    assert {c["id"] for c in doc["claims"]} >= {"C1-multiframe-sensitivity", "C5-point-targets"}
