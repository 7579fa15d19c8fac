"""Scaling-law helpers (icml26.scaling) on cases with known answers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from icml26 import scaling


def test_loglog_fit_recovers_a_power_law():
    x = np.array([10, 100, 1000.0])
    slope, intercept = scaling.loglog_fit(x, 3.0 * x ** -0.5)
    assert slope == pytest.approx(-0.5) and math.exp(intercept) == pytest.approx(3.0)
    with pytest.raises(ValueError, match="positive"):
        scaling.loglog_fit([1, 2], [0, 1])


def test_slope_interval_over_seeds():
    rows = [{"seed": s, "n": n, "err": (1 + 0.1 * s) * n ** (-1.0 - 0.05 * s)}
            for s in range(3) for n in (10, 20, 40, 80)]
    frame = pd.DataFrame(rows)
    per_seed = scaling.seed_slopes(frame, "n", "err")
    assert per_seed[0] == pytest.approx(-1.0) and per_seed[2] == pytest.approx(-1.1)
    iv = scaling.slope_interval(frame, "n", "err")
    assert iv.mean == pytest.approx(-1.05) and iv.lo < -1.05 < iv.hi and iv.n == 3


def test_samples_to_reach_interpolates_in_log_n():
    ns = [10, 100, 1000]
    assert scaling.samples_to_reach(ns, [0.2, 0.6, 0.9], 0.75) == pytest.approx(
        10 ** 2.5)                                           # halfway between 100 and 1000
    assert scaling.samples_to_reach(ns, [0.8, 0.9, 0.95], 0.75) == 10
    assert math.isnan(scaling.samples_to_reach(ns, [0.1, 0.2, 0.3], 0.75))
    assert scaling.samples_to_reach(ns, [0.5, 0.3, 0.1], 0.3, higher_is_better=False) == 100
    with pytest.raises(ValueError, match="increasing"):
        scaling.samples_to_reach([10, 5], [0, 1], 0.5)


def test_bisect_grid_finds_the_threshold_with_few_calls():
    grid = scaling.geometric_grid(20, 40000, 24)
    assert grid[0] == 20 and grid[-1] == 40000 and len(grid) == 24
    calls = []

    def pred(n):
        calls.append(n)
        return n >= 1000

    value, n_calls = scaling.bisect_grid(grid, pred)
    assert value == grid[grid >= 1000][0] and n_calls == len(calls) <= 6
    assert math.isnan(scaling.bisect_grid(grid, lambda n: False)[0])


def test_fit_power_floor_recovers_a_known_law_and_batches():
    from icml26.scaling import fit_power_floor
    k = np.array([1, 2, 4, 8, 16, 32, 64], dtype=float)
    y = 3.0 * k ** -0.7 + 0.25
    f = fit_power_floor(k, y)
    assert abs(f["A"] - 3.0) < 1e-4 and abs(f["alpha"] - 0.7) < 1e-4 and abs(f["F"] - 0.25) < 1e-4
    assert f["r2"] > 1 - 1e-9
    # alpha fixed; a curve with a NaN gives NaN; a batch equals the curves fitted one by one
    assert abs(fit_power_floor(k, y, alpha=0.7)["F"] - 0.25) < 1e-9
    Y = np.stack([y, 2.0 * k ** -0.3 + 0.1, np.where(k == 4, np.nan, y)])
    batch = fit_power_floor(k, Y)
    for i in range(2):
        one = fit_power_floor(k, Y[i])
        assert np.isclose(batch["alpha"][i], one["alpha"]) and np.isclose(batch["F"][i], one["F"])
    assert np.isnan(batch["alpha"][2])
    # the floor is never negative: a curve that falls below its power part is fitted with F = 0
    assert fit_power_floor(k, 2.0 * k ** -0.5 - 0.01)["F"] >= 0.0
