"""icml26.dynamics.integrate against ODEs solved by hand."""

import numpy as np
import pytest

from icml26.dynamics import IntegrationError, integrate


def test_linear_decay_matches_exponential():
    k, t = 0.7, np.linspace(0.0, 5.0, 51)
    y = integrate(lambda _t, y: -k * y, [2.0, -1.0], t)
    assert y.shape == (51, 2)
    assert np.allclose(y[:, 0], 2.0 * np.exp(-k * t), rtol=0, atol=1e-8)
    assert np.allclose(y[:, 1], -np.exp(-k * t), rtol=0, atol=1e-8)


def test_rotation_keeps_the_radius_and_the_phase():
    omega = 2.0
    t = np.linspace(0.0, 2 * np.pi, 101)
    y = integrate(lambda _t, y: omega * np.array([-y[1], y[0]]), [1.0, 0.0], t,
                  method="DOP853")
    assert np.allclose(y[:, 0], np.cos(omega * t), atol=1e-7)
    assert np.allclose(y[:, 1], np.sin(omega * t), atol=1e-7)
    assert np.allclose(np.hypot(y[:, 0], y[:, 1]), 1.0, atol=1e-7)


def test_time_dependent_field_and_grid_start():
    # dy/dt = t  =>  y(t) = y0 + (t^2 - t0^2) / 2, starting at t0 = 1
    t = np.array([1.0, 1.5, 3.0])
    y = integrate(lambda s, y: np.array([s]), 4.0, t)
    assert np.allclose(y[:, 0], 4.0 + (t ** 2 - 1.0) / 2, atol=1e-9)


def test_bad_grid_and_blow_up_are_reported():
    with pytest.raises(ValueError):
        integrate(lambda _t, y: -y, [1.0], [0.0, 0.0])
    # dy/dt = y^2, y(0) = 1 blows up at t = 1
    with pytest.raises(IntegrationError):
        integrate(lambda _t, y: y ** 2, [1.0], [0.0, 0.5, 2.0])
