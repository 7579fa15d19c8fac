"""MCC and Amari distance on known mixtures."""

from __future__ import annotations

import numpy as np
import pytest

from icml26.identifiability import amari_distance, mcc


def test_recovery_up_to_permutation_and_scale_is_perfect():
    rng = np.random.default_rng(0)
    s = rng.laplace(size=(2000, 4))
    a = rng.normal(size=(4, 4))
    perm_scale = np.eye(4)[[2, 0, 3, 1]] * np.array([2.0, -0.5, 3.0, 1.5])[:, None]
    w = perm_scale @ np.linalg.inv(a)
    assert amari_distance(w, a) == pytest.approx(0.0, abs=1e-12)
    est = (w @ (s @ a.T).T).T
    assert mcc(s, est) == pytest.approx(1.0)


def test_mixed_estimates_score_worse_and_bounds_hold():
    rng = np.random.default_rng(1)
    s = rng.normal(size=(5000, 3))
    mixed = s @ np.array([[1, 1, 0], [0, 1, 1], [1, 0, 1.0]]).T
    assert mcc(s, mixed) < 0.9
    # P all ones: every row/column sum / max - 1 = d - 1, the maximum -> distance 1
    assert amari_distance(np.ones((3, 3)), np.eye(3)) == pytest.approx(1.0)
    assert 0 < amari_distance(np.eye(3) + 0.1, np.eye(3)) < 0.2
    with pytest.raises(ValueError, match="equal"):
        mcc(s, s[:, :2])
