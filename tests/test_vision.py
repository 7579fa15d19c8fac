"""Shared image blocks: generators match closed forms, metrics match hand-made masks and
scikit-learn, and the convolution stacks keep the size and reach exactly their receptive field."""
import numpy as np
import pytest

from icml26.vision import images, metrics


def test_smooth_field_is_standardised_and_spatially_correlated():
    f = images.smooth_field(np.random.default_rng(0), (64, 64), sigma=4.0, n=3)
    assert f.shape == (3, 64, 64)
    assert np.allclose(f.mean(axis=(1, 2)), 0) and np.allclose(f.std(axis=(1, 2)), 1)
    neighbour = np.mean(f[:, :, 1:] * f[:, :, :-1])
    assert neighbour > 0.9  # a 4-px Gaussian makes adjacent pixels nearly equal
    white = images.smooth_field(np.random.default_rng(0), (64, 64), sigma=0.01)
    assert abs(np.mean(white[:, 1:] * white[:, :-1])) < 0.05


def test_gaussian_spots_closed_form():
    img = images.gaussian_spots((9, 11), [[4, 5], [0, 0]], [1.5, 1.0], [2.0, 1.0])
    yy, xx = np.mgrid[:9, :11]
    ref = 2 * np.exp(-((yy - 4) ** 2 + (xx - 5) ** 2) / (2 * 1.5 ** 2))
    ref += np.exp(-(yy ** 2 + xx ** 2) / 2.0)
    assert np.allclose(img, ref)
    # the discrete mass of a well-sampled spot is 2 pi s^2 a
    big = images.gaussian_spots((60, 60), [[30, 30]], 3.0, 1.0)
    assert big.sum() == pytest.approx(2 * np.pi * 9, rel=1e-6)


def test_ellipse_area_and_rotation():
    m = images.ellipse_mask((200, 200), (100, 100), (30, 12))
    assert m.sum() == pytest.approx(np.pi * 30 * 12, rel=0.01)
    assert m[100, 110] and not m[100, 115] and m[125, 100]
    r = images.ellipse_mask((200, 200), (100, 100), (30, 12), angle=np.pi / 2)
    assert r[100, 125] and not r[125, 100]


def test_stroke_covers_the_segment_and_nothing_far_from_it():
    img = images.draw_stroke(np.zeros((8, 8)), (1, 1), (1, 6), width=1.0)
    assert np.allclose(img[1, 1:7], 1.0) and np.allclose(img[3:], 0.0)
    assert np.allclose(img[0, 2:6], 0.0)  # distance 1 px: coverage width/2 + 0.5 - 1 = 0


def test_paste_crops_at_the_border():
    out = images.paste(np.zeros((4, 4)), np.ones((3, 3)), 2, -1)
    assert out.sum() == 4 and np.all(out[2:, :2] == 1)
    assert images.paste(np.ones((2, 2)), np.full((2, 2), 3.0), 0, 0, mode="max").max() == 3
    assert images.paste(np.zeros((2, 2)), np.ones((2, 2)), 5, 5).sum() == 0


def test_shift_moves_mass_subpixel_and_zoom_keeps_the_centre():
    img = np.zeros((9, 9))
    img[4, 4] = 1.0
    s = images.shift(img, 0.5, 1.0)
    assert s[4, 5] == pytest.approx(0.5) and s[5, 5] == pytest.approx(0.5)
    grid = np.add.outer(np.arange(10.0), np.arange(10.0))
    z = images.zoom_centre_crop(grid, 1.3)
    assert z.shape == (10, 10)
    assert z[4:6, 4:6].mean() == pytest.approx(9.0)  # the centre (4.5, 4.5) stays put
    assert z[4, 5] - z[4, 4] == pytest.approx(1 / 1.3)  # slopes shrink by the zoom
    with pytest.raises(ValueError, match=">= 1"):
        images.zoom_centre_crop(grid, 0.5)


def test_affine_jitter_identity_and_quarter_turn():
    img = np.zeros((9, 9))
    img[2, 4] = 1.0
    assert np.allclose(images.affine_jitter(img, 0.0, 1.0, 0.0, 0.0), img)
    turned = images.affine_jitter(img, np.pi / 2, 1.0, 0.0, 0.0)
    assert turned.sum() == pytest.approx(1.0) and np.isclose(turned, 1.0).sum() == 1
    assert np.isclose(images.affine_jitter(img, 0.0, 1.0, 1.0, 2.0)[3, 6], 1.0)


def test_box_sdf_known_values():
    p = np.array([[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.5, 0.0]])
    d = images.box_sdf(p, (0, 0), (1.0, 0.5))
    assert np.allclose(d, [-0.5, 1.0, np.hypot(1.0, 1.5), -0.5])
    rounded = images.box_sdf(np.array([[2.0, 2.0]]), (0, 0), (1.0, 1.0), radius=0.2)
    assert rounded[0] == pytest.approx(np.hypot(1.2, 1.2) - 0.2)


def test_iou_hand_case():
    a = np.zeros((2, 6, 6), dtype=bool)
    b = np.zeros((2, 6, 6), dtype=bool)
    a[0, 0:2, 0:2] = True          # 4 pixels
    b[0, 1:3, 1:3] = True          # 4 pixels, overlap 1
    a[1, 3:5, 3:5] = b[1, 3:5, 3:5] = True  # identical, 4 pixels
    assert metrics.iou(a, b) == pytest.approx(5 / 11)
    assert np.allclose(metrics.iou_per_image(a, b), [1 / 7, 1.0])
    assert np.isnan(metrics.iou_per_image(np.zeros((1, 2, 2)), np.zeros((1, 2, 2)))[0])


def test_f1_and_kappa_match_scikit_learn():
    from sklearn.metrics import cohen_kappa_score, f1_score
    rng = np.random.default_rng(1)
    t = rng.random(500) < 0.3
    p = np.where(rng.random(500) < 0.8, t, ~t)
    assert metrics.f1_binary(p, t) == pytest.approx(f1_score(t, p))
    assert metrics.cohen_kappa(p, t) == pytest.approx(cohen_kappa_score(t, p))
    y, q = rng.integers(0, 4, 300), rng.integers(0, 4, 300)
    assert metrics.cohen_kappa(q, y) == pytest.approx(cohen_kappa_score(y, q))


def test_detection_pd_fa_hand_case():
    masks = np.zeros((2, 10, 10), dtype=bool)
    masks[0, 2:4, 2:4] = True      # hits the target at (3, 3)
    masks[0, 8, 8] = True          # a 1-pixel false alarm
    masks[1, 0, 9] = masks[1, 1, 8] = True  # one diagonal (8-connected) component, far away
    targets = [np.array([[3.0, 3.0]]), np.array([[7.0, 2.0]])]
    out = metrics.detect(masks, targets, radius=3.0)
    assert out["pd"] == 0.5 and out["hits"].tolist() == [True, False]
    assert out["false_pixels"] == 3 and out["fa"] == pytest.approx(3 / 200)
    assert metrics.components(masks[1])[1] == 1
    assert metrics.components(masks[1], connectivity=4)[1] == 2
    cube = np.zeros((3, 3, 3), dtype=bool)
    cube[0, 0, 0] = cube[1, 1, 1] = True  # corner-touching voxels: one component only in 26
    assert metrics.count_components(cube)[1] == 1
    assert metrics.count_components(cube, connectivity=4)[1] == 2
    with pytest.raises(ValueError, match="4 or 8"):
        metrics.count_components(cube, connectivity=6)
    none = metrics.detect(np.zeros((1, 4, 4), dtype=bool), [np.zeros((0, 2))])
    assert np.isnan(none["pd"]) and none["fa"] == 0


torch = pytest.importorskip("torch")
from icml26.vision import nets  # noqa: E402


def test_conv_stack_keeps_size_and_reaches_its_receptive_field():
    torch.manual_seed(0)
    net = nets.conv_stack(1, 4, 4, kernel=3, dilations=[1, 2, 4, 1], out_channels=1)
    x = torch.zeros(1, 1, 41, 41, requires_grad=True)
    y = net(x)
    assert y.shape == (1, 1, 41, 41)
    y[0, 0, 20, 20].backward()
    reach = np.argwhere(x.grad[0, 0].abs().numpy() > 0)
    # receptive field 1 + 2 * (1 + 2 + 4 + 1) = 17: offsets -8..8
    assert reach.min() == 20 - 8 and reach.max() == 20 + 8
    with pytest.raises(ValueError, match="odd"):
        nets.conv_stack(1, 4, 2, kernel=4)


def test_mlp_and_patchify():
    m = nets.mlp([16, 64, 32], activation=torch.nn.GELU)
    assert [type(x).__name__ for x in m] == ["Linear", "GELU", "Linear"]
    img = torch.arange(64.0).reshape(1, 8, 8)
    p = nets.patchify(img, 4)
    assert p.shape == (1, 4, 16)
    assert torch.equal(p[0, 1], img[0, :4, 4:].reshape(-1))
    with pytest.raises(ValueError, match="divisible"):
        nets.patchify(torch.zeros(1, 6, 8), 4)


def test_soft_iou_and_focal_losses_hand_values():
    t = torch.tensor([1.0, 0.0, 0.0, 1.0])
    assert nets.soft_iou_loss(t, t, eps=0.0) == 0
    assert nets.soft_iou_loss(1 - t, t, eps=0.0) == pytest.approx(1.0)
    logits = torch.tensor([2.0, -1.0])
    target = torch.tensor([1.0, 0.0])
    p = torch.sigmoid(logits)
    ref = (0.75 * (1 - p[0]) ** 2 * -torch.log(p[0]) + 0.25 * p[1] ** 2 * -torch.log(1 - p[1])) / 2
    assert nets.focal_loss(logits, target).item() == pytest.approx(ref.item(), rel=1e-5)
    # gamma = 0 and alpha = 0.5 give half the BCE
    bce = torch.nn.functional.binary_cross_entropy_with_logits(logits, target)
    assert nets.focal_loss(logits, target, 0.0, 0.5).item() == pytest.approx(0.5 * bce.item())
