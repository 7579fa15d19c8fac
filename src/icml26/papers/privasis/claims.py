"""The spec's five claims, thresholds exactly as written.

How each one is checked (decided before any result was seen):
1. Headline, "(mean over seeds)": paired per-seed differences of vanilla full success,
   proposed - rule-based >= 0.30 and proposed - one-pass >= 0.10: check_mean (95% t-interval).
2. proposed - small-data >= 0.10 on the vanilla test, paired per seed: check_mean.
3. Hard test, "highest of all methods by >= 0.05 over the best baseline": per seed,
   proposed - max over every baseline run (rule-based, one-pass, small-data, and the
   attribute tagger where it runs): check_mean.
4. Retention (the spec's entity-span retention on the vanilla test): proposed >= 0.95 and
   rule-based <= 0.85, each check_mean over seeds.
5. Length: the direct-leak rate of the longest vanilla length tercile over the shortest,
   pooled over seeds (sum of leaking records / records per tercile), one-pass >= 1.5 and
   proposed <= 1.5: check_pooled, resampling seeds. 0/0 (no leak in either tercile) counts
   as 1 (no growth); x/0 with x > 0 is infinite.
Full success is the official rule (every drop and abstract target free of direct, inference
and proximity leaks, every explicit keep attribute retained); the spec's variant (retention
>= 0.9 instead) is reported in the table, not claimed.
"""

from __future__ import annotations

import numpy as np

from icml26.claims import Claim, check_mean, check_pooled

P, RULE, ONE, SMALL, ATTR = "proposed", "rule-based", "one-pass", "small-data", "attr-tagger"
BASELINES = (RULE, ONE, SMALL, ATTR)


def _col(metrics, method, col):
    part = metrics[metrics["method"] == method]
    if col not in part:
        import pandas as pd

        return pd.Series(np.nan, index=part["seed"].to_numpy(), dtype=float)
    return part.set_index("seed")[col].sort_index().astype(float)


def _diff(metrics, a, b, col):
    x, y = _col(metrics, a, col), _col(metrics, b, col)
    seeds = x.index.intersection(y.index)
    return x.loc[seeds] - y.loc[seeds]


def length_ratio(metrics, method):
    """(statistic over seed indices, number of seeds) of the pooled t3/t1 direct-leak ratio."""
    part = metrics[metrics["method"] == method].sort_values("seed")
    if not len(part) or "direct_t1" not in part:
        return (lambda idx: np.nan), 0
    leak1 = (part["direct_t1"] * part["n_t1"]).to_numpy(float)
    leak3 = (part["direct_t3"] * part["n_t3"]).to_numpy(float)
    n1, n3 = part["n_t1"].to_numpy(float), part["n_t3"].to_numpy(float)

    def stat(idx):
        idx = np.asarray(idx)
        r1 = leak1[idx].sum() / n1[idx].sum()
        r3 = leak3[idx].sum() / n3[idx].sum()
        if not (np.isfinite(r1) and np.isfinite(r3)):
            return np.nan
        if r1 == 0:
            return 1.0 if r3 == 0 else np.inf
        return r3 / r1

    return stat, len(part)


def _mean(metrics, method, col):
    v = _col(metrics, method, col)
    return f"{np.nanmean(v):.3f}" if len(v) and np.isfinite(v).any() else "n/a"


def check(cfg: dict, metrics, curves) -> list[Claim]:
    n_seeds = int(metrics["seed"].nunique()) if len(metrics) else 0
    present = set(metrics["method"]) if len(metrics) else set()
    claims = []

    c = Claim("C1-headline",
              "On the vanilla test, proposed full success >= rule-based + 0.30 and >= one-pass "
              "+ 0.10 (mean over seeds).",
              ">=", {"proposed-rule": 0.30, "proposed-onepass": 0.10}, n_seeds=n_seeds,
              note="check_mean of the paired per-seed differences of vanilla full success "
                   "(official rule: no direct / inference / proximity leak of any target and "
                   "every explicit keep attribute retained).")
    c.add("proposed-rule", check_mean(_diff(metrics, P, RULE, "success_vanilla"), ">=", 0.30))
    c.add("proposed-onepass", check_mean(_diff(metrics, P, ONE, "success_vanilla"), ">=",
                                         0.10))
    c.note += (f" Means: proposed {_mean(metrics, P, 'success_vanilla')}, rule-based "
               f"{_mean(metrics, RULE, 'success_vanilla')}, one-pass "
               f"{_mean(metrics, ONE, 'success_vanilla')}. Inference-leak rates (linked "
               f"attributes): proposed {_mean(metrics, P, 'inference_vanilla')}, one-pass "
               f"{_mean(metrics, ONE, 'inference_vanilla')}.")
    claims.append(c)

    c = Claim("C2-data-scale",
              "Scale of synthetic data helps: proposed full success >= small-data + 0.10.",
              ">=", 0.10, n_seeds=n_seeds,
              note="check_mean of the paired per-seed difference of vanilla full success; "
                   "small-data trains the same model for the same number of steps on the "
                   "first 2% of the records.")
    c.add("value", check_mean(_diff(metrics, P, SMALL, "success_vanilla"), ">=", 0.10))
    c.note += (f" Means: proposed {_mean(metrics, P, 'success_vanilla')}, small-data "
               f"{_mean(metrics, SMALL, 'success_vanilla')}.")
    claims.append(c)

    c = Claim("C3-hard-test",
              "Hard test: proposed has the highest full success of all methods, by >= 0.05 "
              "over the best baseline.",
              ">=", 0.05, n_seeds=n_seeds,
              note="check_mean over seeds of proposed - max over baselines (per seed) of "
                   "hard-test full success.")
    base = [b for b in BASELINES if b in present]
    if base:
        import pandas as pd

        # a failed baseline run (NaN) cannot make the margin look larger: it counts as 1
        best = pd.concat([_col(metrics, b, "success_hard") for b in base], axis=1)
        best = best.fillna(1.0).max(axis=1)
        pr = _col(metrics, P, "success_hard")
        seeds = pr.index.intersection(best.index)
        c.add("value", check_mean(pr.loc[seeds] - best.loc[seeds], ">=", 0.05))
        c.note += " Means: " + ", ".join(f"{m} {_mean(metrics, m, 'success_hard')}"
                                         for m in [P] + base) + "."
    claims.append(c)

    c = Claim("C4-retention",
              "Selective sanitization keeps utility: proposed retention >= 0.95 while "
              "rule-based retention <= 0.85.",
              ">= / <=", {"proposed": 0.95, "rule-based": 0.85}, n_seeds=n_seeds,
              note="Retention: share of keep entity spans (the subject's non-target "
                   "attributes, third-party and public entities) reproduced exactly, vanilla "
                   "test; check_mean over seeds.")
    c.add("proposed", check_mean(_col(metrics, P, "retention_vanilla"), ">=", 0.95))
    c.add("rule-based", check_mean(_col(metrics, RULE, "retention_vanilla"), "<=", 0.85))
    c.note += (f" Third-party and public spans alone: proposed "
               f"{_mean(metrics, P, 'retention_third_vanilla')}, rule-based "
               f"{_mean(metrics, RULE, 'retention_third_vanilla')} (the premise that the "
               f"scrubber over-redacts third parties). Official explicit keep-attribute "
               f"retention: proposed {_mean(metrics, P, 'keep_retention_vanilla')}, "
               f"rule-based {_mean(metrics, RULE, 'keep_retention_vanilla')}.")
    claims.append(c)

    c = Claim("C5-length",
              "One-pass's direct-leak rate in the longest length tercile is >= 1.5 x its rate "
              "in the shortest, whereas for the proposed model that ratio is <= 1.5.",
              ">= (one-pass) / <= (proposed)", {"one-pass": 1.5, "proposed": 1.5},
              n_seeds=n_seeds,
              note="Ratio of pooled direct-leak rates (longest / shortest vanilla tercile by "
                   "sentences), check_pooled with seeds resampled; 0/0 counts as 1. The "
                   "taggers run on whole records (official test protocol).")
    for m, op in ((ONE, ">="), (P, "<=")):
        stat, n = length_ratio(metrics, m)
        c.add(m, check_pooled(stat, n, op, 1.5))
    rates = []
    for m in (P, ONE):
        part = metrics[metrics["method"] == m]
        if len(part) and "direct_t1" in part:
            rates.append(f"{m}: shortest {part['direct_t1'].mean():.3f}, longest "
                         f"{part['direct_t3'].mean():.3f}")
    if rates:
        c.note += " Mean direct-leak rates per tercile: " + "; ".join(rates) + "."
    part = metrics[metrics["method"] == ONE]
    if len(part) and "direct_t1" in part and part["direct_t1"].mean() > 0:
        # a rate cannot exceed 1: a high shortest-tercile rate caps the ratio
        c.note += (f" One-pass's shortest-tercile rate caps its ratio at "
                   f"{1.0 / part['direct_t1'].mean():.2f}. Its training misses depend on the "
                   "record's length but the tagger sees only a few tokens around each mention,"
                   " so they lower its per-mention accuracy everywhere; both taggers read "
                   "whole records, so longer records leak more for both through more target "
                   "mentions.")
    claims.append(c)
    return claims
