"""Claims 1-4 of the spec, thresholds as written.

Every claim compares ALSO with a baseline "by at least x points" of mean episode score in the
adversarial setting, over seeds (the spec's "means over 5 seeds"). All methods of a seed meet
the same environment and episodes, so each part is the per-seed paired difference
score(ALSO) - score(baseline) and check_mean puts its 95% t-interval against the threshold.
A missing baseline (smoke runs only ALSO and the static persona) leaves its part
inconclusive. Notes are written from the data at report time.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from icml26.claims import Claim, check_mean

SETTING = "adversarial"
PROPOSED = "also"


def scores(metrics: pd.DataFrame, method: str, setting: str = SETTING,
           col: str = "score") -> pd.Series:
    part = metrics[(metrics["method"] == method) & (metrics["setting"] == setting)]
    if col not in part:
        return pd.Series(dtype=float)
    return part.set_index("seed")[col].astype(float).sort_index()


def paired(metrics, baseline, col="score") -> pd.Series:
    """score(ALSO) - score(baseline) per seed, over the seeds both ran (a NaN stays NaN)."""
    a, b = scores(metrics, PROPOSED, col=col), scores(metrics, baseline, col=col)
    seeds = sorted(set(a.index) & set(b.index))
    return pd.Series([a.loc[s] - b.loc[s] for s in seeds], index=seeds, dtype=float)


def _means(metrics, methods) -> str:
    parts = []
    for m in methods:
        s = scores(metrics, m)
        parts.append(f"{m} {s.mean():.2f}" if len(s) else f"{m} not run")
    return "mean episode scores: " + ", ".join(parts)


def _claim(cid, statement, metrics, parts: list[tuple[str, float]]) -> Claim:
    c = Claim(cid, statement, ">=", {f"ALSO - {b}": thr for b, thr in parts},
              n_seeds=int(metrics["seed"].nunique()))
    wins = []
    for baseline, thr in parts:
        d = paired(metrics, baseline)
        c.add(f"ALSO - {baseline}", check_mean(d, ">=", thr))
        if len(d):
            wins.append(f"ALSO ahead of {baseline} in {int((d > 0).sum())} of {len(d)} seeds")
    c.note = (_means(metrics, [PROPOSED] + [b for b, _ in parts]) + "; "
              + "; ".join(wins) + ".")
    return c


def check(cfg: dict, metrics: pd.DataFrame, curves: pd.DataFrame) -> list[Claim]:
    out = [
        _claim("1-headline", "Adversarial setting: ALSO's mean episode score exceeds the static "
               "persona by >= 1.5 points and the best static (offline-optimised) strategy by "
               ">= 0.5 point.", metrics, [("static", 1.5), ("best-static", 0.5)]),
        _claim("2-non-surrogate-stationary", "ALSO beats the non-surrogate and stationary "
               "optimisers: ALSO > EXP3 by >= 1.0 and > UCB1 by >= 0.3 (adversarial, means over "
               "seeds).", metrics, [("exp3", 1.0), ("ucb1", 0.3)]),
        _claim("3-history-surrogate", "The history-conditioned surrogate matters: ALSO > "
               "ALSO-no-history by >= 0.2 (adversarial).", metrics, [("also-nohist", 0.2)]),
        _claim("4-vs-linucb", "Competitive with a strong contextual baseline: ALSO >= LinUCB - 0.1 "
               "(adversarial).", metrics, [("linucb", -0.1)]),
    ]
    # context for the reader, computed now: how well ALSO's surrogate predicts, and how often
    # each method is on the best arm
    mse = scores(metrics, PROPOSED, col="surrogate_mse")
    var = scores(metrics, PROPOSED, col="reward_var")
    orc = {m: scores(metrics, m, col="oracle_frac").mean()
           for m in ("also", "also-pooled", "linucb", "random")
           if len(scores(metrics, m, col="oracle_frac"))}
    if len(mse) and np.isfinite(mse).any():
        worse = "above" if np.nanmean(mse) > np.nanmean(var) else "below"
        surrogate = (f" ALSO's surrogate squared error on each newly observed reward: mean "
                     f"{np.nanmean(mse):.4f}, {worse} the reward variance {np.nanmean(var):.4f} "
                     "(the error of a constant predictor at the mean); fraction of turns on "
                     "the noiseless best arm: "
                     + ", ".join(f"{m} {v:.3f}" for m, v in orc.items()) + ".")
        context = ""
        pooled = scores(metrics, "also-pooled")
        if len(pooled):
            d = paired(metrics, "also-pooled")
            context += (f" The spec's own design (one ridge surrogate pooled over all episodes, "
                        f"z-scored predictions, eta 10, gamma 0.05; reported, not claimed) "
                        f"scores {pooled.mean():.2f}, ahead of ALSO in "
                        f"{int((d < 0).sum())} of {len(d)} seeds.")
            lin = scores(metrics, "also-lin")
            context += (" It differs from ALSO in pooling its records across episodes (the "
                        "reference code builds a new bandit per scenario, so ALSO's surrogate "
                        "has at most T - 1 records to learn from) and in its selection rule "
                        "(z-score, eta 10, gamma 0.05)"
                        + (f"; the same ridge surrogate per episode with ALSO's rule "
                           f"(ALSO-lin) scores {lin.mean():.2f}." if len(lin) else "."))
        out[0].note += surrogate + context
        for c in out[1:]:
            c.note += surrogate if c.id.startswith("3") else context
    return out
