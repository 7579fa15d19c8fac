"""The shared claim statistics: intervals against scipy, verdicts on data built to pass or fail."""
import numpy as np
import pytest
from scipy import stats as sps

from icml26 import claims as C
from icml26.stats import geometric_mean, loglog_slope, mean_ci, paired_diff_ci, t975


@pytest.mark.parametrize("df", [1, 2, 4, 9, 29, 30])
def test_t_quantiles_match_scipy(df):
    assert t975(df) == pytest.approx(sps.t.ppf(0.975, df), abs=1e-3)


def test_mean_ci_matches_scipy_interval():
    x = np.array([1.0, 2.5, 1.7, 3.1, 2.2])
    iv = mean_ci(x)
    lo, hi = sps.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=sps.sem(x))
    assert (iv.lo, iv.hi) == pytest.approx((lo, hi), abs=1e-3)
    assert mean_ci([3.0]).n == 1 and np.isnan(mean_ci([3.0]).lo)


def test_paired_difference_uses_pairs():
    a = np.array([10.0, 20.0, 30.0])
    b = a - 1.0 + np.array([0.01, -0.01, 0.0])
    iv = paired_diff_ci(a, b)
    assert iv.lo > 0.9 and iv.hi < 1.1  # unpaired spread (10) would make this wide
    with pytest.raises(ValueError):
        paired_diff_ci([1, 2], [1, 2, 3])


def test_slope_and_geometric_mean():
    k = np.array([16, 32, 64, 128])
    assert loglog_slope(k, 3.0 * k ** -0.5) == pytest.approx(-0.5)
    assert geometric_mean([1, 4]) == pytest.approx(2.0)


def test_check_mean_three_way():
    assert C.check_mean([0.10, 0.11, 0.09, 0.10], "<=", 0.2).verdict == C.REPRODUCED
    assert C.check_mean([0.50, 0.52, 0.49, 0.51], "<=", 0.2).verdict == C.NOT_REPRODUCED
    assert C.check_mean([0.0, 0.4, 0.1, 0.3], "<=", 0.2).verdict == C.INCONCLUSIVE
    assert C.check_mean([0.1], "<=", 0.2).verdict == C.INCONCLUSIVE


def test_check_value_and_every():
    assert C.check_value(1.0, ">=", 0.5).verdict == C.REPRODUCED
    assert C.check_value(0.1, ">=", 0.5).verdict == C.NOT_REPRODUCED
    assert C.check_value(float("nan"), ">=", 0.5).verdict == C.INCONCLUSIVE
    assert C.check_every([1, 2, 3], ">", 0).verdict == C.REPRODUCED
    failing = C.check_every([1, -2, 3], ">", 0)
    assert failing.verdict == C.NOT_REPRODUCED and failing.measured == -2
    with pytest.raises(ValueError):
        C.check_value(1.0, "=~", 1.0)


def test_claim_combines_parts_and_serialises():
    claim = C.Claim("x", "all settings", "<=", 0.2, n_seeds=4)
    claim.add("G1", C.check_mean([0.1, 0.1, 0.11, 0.09], "<=", 0.2))
    assert claim.verdict == C.REPRODUCED
    claim.add("L3", C.check_mean([0.5, 0.5, 0.51, 0.49], "<=", 0.2))
    doc = claim.to_dict()
    assert doc["verdict"] == C.NOT_REPRODUCED
    assert set(doc["measured"]) == {"G1", "L3"} and set(doc["intervals"]) == {"G1", "L3"}
    assert C.combine([]) == C.INCONCLUSIVE
    assert C.combine([C.REPRODUCED, C.INCONCLUSIVE]) == C.INCONCLUSIVE
    with pytest.raises(ValueError):
        C.Claim("y", "s", "<=", 1, category="headline").to_dict()
