"""The spec's five claims, thresholds exactly as written.

Statistic (chosen from the spec's wording before any result): the spec defines its metrics
as pooled over all deployment runs (early/late violation rate: crash fraction over the
window, pooled; time-to-stop: mean over successful episodes 6-20; mean alpha over episodes
6-20), and quotes single pooled numbers. Each part is therefore a `check_value` on the pooled
statistic. "A <= c x B" is checked as the pooled difference A - c * B <= 0, which is defined
even when B = 0.
"""

from __future__ import annotations

import numpy as np

from icml26.claims import Claim, check_value

HARD, BENIGN = "REAL-HARD", "REAL-BENIGN"


def pooled(metrics, method: str, setting: str, stat: str) -> float:
    """Pooled statistic over all runs (critic seeds) of (method, setting); NaN if absent."""
    m = metrics[(metrics["method"] == method) & (metrics["setting"] == setting)]
    if m.empty:
        return np.nan
    num, den = {
        "early_violation": ("early_crashes", "early_episodes"),
        "late_violation": ("late_crashes", "late_episodes"),
        "time_to_stop": ("tts_sum", "tts_count"),
        "alpha": ("alpha_sum", "adapted_episodes"),
        "margin": ("margin_sum", "adapted_episodes"),
    }[stat]
    d = float(m[den].sum())
    return float(m[num].sum()) / d if d > 0 else np.nan


def _all(metrics, setting: str, stat: str) -> str:
    methods = list(dict.fromkeys(metrics["method"]))
    return ", ".join(f"{k} {pooled(metrics, k, setting, stat):.3f}" for k in methods)


def _ratio_part(claim: Claim, metrics, setting, stat, other, c) -> None:
    a = pooled(metrics, "PROPOSED", setting, stat)
    b = pooled(metrics, other, setting, stat)
    claim.add(f"PROPOSED - {c:g} x {other}", check_value(a - c * b, "<=", 0.0))


def check(cfg: dict, metrics, curves) -> list[Claim]:
    n_seeds = len(cfg["seeds"]) * int(cfg["params"]["n_deploy"])

    c1 = Claim("safe-early",
               "Headline (safe early): in REAL-HARD, PROPOSED's early violation rate (episodes "
               "1-3, pooled) is <= 0.5 x CTX-NEUTRAL's and <= 0.5 x DR's.",
               "<=", "0.5 x CTX-NEUTRAL and 0.5 x DR (pooled difference <= 0)",
               n_seeds=n_seeds)
    for other in ("CTX-NEUTRAL", "DR"):
        _ratio_part(c1, metrics, HARD, "early_violation", other, 0.5)
    c1.note = f"Early violation rate in REAL-HARD: {_all(metrics, HARD, 'early_violation')}."

    c2 = Claim("efficient-after-adaptation",
               "Efficient after adaptation: in REAL-BENIGN, PROPOSED's time-to-stop (successful "
               "episodes 6-20) is <= 0.8 x ROB's and <= 0.9 x DR's.",
               "<=", "0.8 x ROB and 0.9 x DR (pooled difference <= 0)", n_seeds=n_seeds)
    _ratio_part(c2, metrics, BENIGN, "time_to_stop", "ROB", 0.8)
    _ratio_part(c2, metrics, BENIGN, "time_to_stop", "DR", 0.9)
    c2.note = f"Time-to-stop (s) in REAL-BENIGN: {_all(metrics, BENIGN, 'time_to_stop')}."

    c3 = Claim("no-efficiency-penalty",
               "No efficiency penalty vs the risk-neutral contextual agent: in REAL-BENIGN, "
               "PROPOSED's time-to-stop is <= 1.05 x CTX-NEUTRAL's.",
               "<=", "1.05 x CTX-NEUTRAL (pooled difference <= 0)", n_seeds=n_seeds)
    _ratio_part(c3, metrics, BENIGN, "time_to_stop", "CTX-NEUTRAL", 1.05)
    c3.note = (f"Time-to-stop (s) in REAL-BENIGN: {_all(metrics, BENIGN, 'time_to_stop')}. "
               "The fixed-averse CTX-AVERSE is compared in the table (not a claim).")

    c4 = Claim("risk-tracks-accuracy",
               "Risk tracks estimation accuracy: PROPOSED's mean alpha over episodes 6-20 is "
               ">= 0.85 in REAL-BENIGN and <= 0.75 in REAL-HARD.",
               ">= / <=", {"REAL-BENIGN": ">= 0.85", "REAL-HARD": "<= 0.75"},
               n_seeds=n_seeds)
    c4.add("alpha REAL-BENIGN", check_value(pooled(metrics, "PROPOSED", BENIGN, "alpha"),
                                            ">=", 0.85))
    c4.add("alpha REAL-HARD", check_value(pooled(metrics, "PROPOSED", HARD, "alpha"),
                                          "<=", 0.75))

    c5 = Claim("late-safety-vs-dr",
               "Late safety relative to domain randomisation: in REAL-HARD, PROPOSED's late "
               "violation rate (episodes 4-20, pooled) is <= 0.5 x DR's.",
               "<=", "0.5 x DR (pooled difference <= 0)", n_seeds=n_seeds)
    _ratio_part(c5, metrics, HARD, "late_violation", "DR", 0.5)
    c5.note = (f"Late violation rate in REAL-HARD: {_all(metrics, HARD, 'late_violation')}. "
               "The spec expects PROPOSED and CTX-NEUTRAL to be similar here.")
    return [c1, c2, c3, c4, c5]
