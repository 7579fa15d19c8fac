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


# --- failed runs, censored values, pooled statistics, "every" and fractions (issue 13) ---

def test_a_failed_seed_is_counted_and_never_helps_a_claim_pass():
    import pandas as pd

    good = pd.Series([0.10, 0.11, 0.09, 0.10, 0.10], index=[0, 1, 2, 3, 4])
    assert C.check_mean(good, "<=", 0.2).verdict == C.REPRODUCED
    bad = good.copy()
    bad[3] = np.nan  # a diverged run
    check = C.check_mean(bad, "<=", 0.2)
    assert check.verdict == C.INCONCLUSIVE and check.failed == ("3",) and check.n == 4
    assert mean_ci(bad).n_failed == 1 and mean_ci(bad).n == 4
    # a failure cannot rescue a claim that the finite seeds already contradict
    worse = pd.Series([0.5, 0.52, np.inf, 0.49, 0.51])
    assert C.check_mean(worse, "<=", 0.2).verdict == C.NOT_REPRODUCED
    # named in the claim's note, with the seed
    claim = C.Claim("c", "s", "<=", 0.2, n_seeds=5)
    claim.add("A", check)
    assert "seeds 3" in claim.to_dict()["note"] and "Failed runs" in claim.to_dict()["note"]
    # in "every seed" a failed seed is one where the comparison does not hold
    every = C.check_every([1.0, 2.0, np.nan, 3.0], ">", 0.0)
    assert every.verdict == C.NOT_REPRODUCED and every.failed == ("#2",)


def test_censored_values_are_conservative():
    # m* never reached inside the grid: recorded at the grid's top (64), truly >= 64
    values = np.array([8.0, 9.0, 64.0, 8.5, 9.5])
    above = np.array([0, 0, 1, 0, 0])
    # a claim that m* is small: the censored seed could only make it worse -> not decisive
    small = C.check_mean(np.array([8.0, 9.0, 10.0, 8.5, 9.5]), "<=", 40.0)
    assert small.verdict == C.REPRODUCED
    near = np.array([30.0, 31.0, 32.0, 30.5, 31.5])
    cens = C.check_mean(near, "<=", 40.0, censored=above)
    assert cens.verdict == C.INCONCLUSIVE and cens.censored == ("#2",)
    # a claim that m* is large: the censored seed can only strengthen it -> verdict stands
    assert C.check_mean(near, ">=", 20.0, censored=above).verdict == C.REPRODUCED
    # not reproduced stays when the unknown values can only make it worse
    far = np.array([80.0, 90.0, 100.0, 85.0, 95.0])
    assert C.check_mean(far, "<=", 40.0, censored=above).verdict == C.NOT_REPRODUCED
    with pytest.raises(ValueError, match="signs"):
        C.check_mean(values, "<=", 1.0, censored=above.astype(bool))
    with pytest.raises(ValueError, match="values in"):
        C.check_mean(values, "<=", 1.0, censored=[0, 2, 0, 0, 0])


def test_pooled_statistic_gets_a_deterministic_bootstrap_interval():
    rng = np.random.default_rng(0)
    x = rng.normal(size=40)
    y = 0.75 * x + 0.66 * rng.normal(size=40)  # correlation about 0.75, noisy over 40 units

    def corr(idx):
        return float(np.corrcoef(x[idx], y[idx])[0, 1])

    point = corr(np.arange(40))
    # a borderline pooled value: decisive under check_value, inconclusive with its interval
    assert C.check_value(point, ">=", point - 0.02).verdict == C.REPRODUCED
    borderline = C.check_pooled(corr, 40, ">=", point - 0.02)
    assert borderline.verdict == C.INCONCLUSIVE and borderline.lo < point - 0.02 < borderline.hi
    assert C.check_pooled(corr, 40, ">=", 0.2).verdict == C.REPRODUCED
    assert C.check_pooled(corr, 40, ">=", 0.98).verdict == C.NOT_REPRODUCED
    again = C.check_pooled(corr, 40, ">=", 0.2)
    assert (again.lo, again.hi) == (C.check_pooled(corr, 40, ">=", 0.2).lo, again.hi)
    # the percentile interval of the mean agrees with the t interval for a large sample
    z = rng.normal(size=200)
    boot = C.check_pooled(lambda i: float(z[i].mean()), 200, ">=", -1.0)
    t = mean_ci(z)
    assert boot.lo == pytest.approx(t.lo, abs=0.03) and boot.hi == pytest.approx(t.hi, abs=0.03)
    assert C.check_pooled(corr, 2, ">=", 0.0).verdict == C.INCONCLUSIVE


def test_every_and_fraction_need_three_seeds():
    one = C.check_every([5.0], ">", 0.0)
    assert one.verdict == C.INCONCLUSIVE and "at least 3" in one.why
    assert C.check_every([5.0, 6.0, 7.0], ">", 0.0).verdict == C.REPRODUCED
    four_of_five = [1.0, 1.0, -1.0, 1.0, 1.0]
    frac = C.check_fraction(four_of_five, ">", 0.0, at_least=0.8)
    assert frac.verdict == C.REPRODUCED and frac.measured == pytest.approx(0.8)
    assert C.check_fraction([1.0, -1.0, -1.0, 1.0, 1.0], ">", 0.0, 0.8).verdict == \
        C.NOT_REPRODUCED
    assert C.check_fraction([1.0, 1.0, np.nan, 1.0, 1.0], ">", 0.0, 1.0).verdict == \
        C.NOT_REPRODUCED
    assert C.check_fraction([1.0, 1.0], ">", 0.0, 0.5).verdict == C.INCONCLUSIVE


@pytest.mark.parametrize("df", [1, 2, 4, 9, 29, 30, 31, 100, 1000])
def test_t_quantile_is_scipys_beyond_the_old_table(df):
    assert t975(df) == pytest.approx(sps.t.ppf(0.975, df), rel=1e-12)


def test_rankdata_and_spearman_match_scipy_with_ties():
    from scipy.stats import rankdata as scipy_rankdata
    from scipy.stats import spearmanr

    from icml26.stats import rankdata, spearman

    assert rankdata([3, 1, 3, 2]).tolist() == [3.5, 1.0, 3.5, 2.0]
    assert rankdata([]).size == 0
    rng = np.random.default_rng(0)
    for _ in range(30):
        x = rng.integers(0, 6, 40).astype(float)
        y = np.where(rng.random(40) < 0.5, x, rng.normal(size=40))
        assert np.array_equal(rankdata(x), scipy_rankdata(x))
        assert spearman(x, y) == pytest.approx(spearmanr(x, y)[0], abs=1e-12)
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert np.isnan(spearman([1, 1, 1], [1, 2, 3])) and np.isnan(spearman([1, 2], [2, 1]))
