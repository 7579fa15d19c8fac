"""The spec's five claims, thresholds exactly as written.

Statistic (chosen from the spec's wording before any result): the spec defines its metrics
as pooled over all deployment runs (early/late violation rate: crash fraction over the
window, pooled; time-to-stop: mean over successful episodes 6-20; mean alpha over episodes
6-20), and quotes single pooled numbers. Each part is therefore the pooled statistic, checked
with `check_pooled`: its 95% bootstrap interval resamples the critic seeds (the unit the
deployments of a seed share: one critic, one set of roads), each resampled seed bringing all
its deployment runs. "A <= c x B" is the pooled difference A - c * B <= 0 on the same
resampled seeds, which is defined even when B = 0.

Claim 4 rests on reading the spec's observation noise as a total s.d. of 0.5 (FIDELITY). The
run also deploys PROPOSED with the literal reading (sensor noise ``literal_obs_sd`` on top of
the actuation noise, same roads); claim 4's note gives that reading's pooled alphas and the
verdict they would give, computed here from the metrics.
"""

from __future__ import annotations

import numpy as np

from icml26.claims import Claim, check_pooled, combine

HARD, BENIGN = "REAL-HARD", "REAL-BENIGN"


STATS = {  # statistic -> (numerator, denominator) columns, pooled by summing over runs
    "early_violation": ("early_crashes", "early_episodes"),
    "late_violation": ("late_crashes", "late_episodes"),
    "time_to_stop": ("tts_sum", "tts_count"),
    "alpha": ("alpha_sum", "adapted_episodes"),
    "margin": ("margin_sum", "adapted_episodes"),
    # the literal noise reading (PROPOSED only)
    "early_violation_literal": ("early_crashes_literal", "early_episodes"),
    "time_to_stop_literal": ("tts_sum_literal", "tts_count_literal"),
    "alpha_literal": ("alpha_sum_literal", "adapted_episodes"),
}


def seeds_of(metrics) -> list:
    """The critic seeds of the run, in order (the bootstrap's units)."""
    return sorted(metrics["seed"].unique().tolist()) if len(metrics) else []


def per_seed(metrics, method: str, setting: str, stat: str, seeds: list):
    """(numerator, denominator) per critic seed of (method, setting); NaN where absent."""
    num_col, den_col = STATS[stat]
    m = metrics[(metrics["method"] == method) & (metrics["setting"] == setting)]
    if m.empty or num_col not in m:
        return np.full(len(seeds), np.nan), np.full(len(seeds), np.nan)
    g = m.groupby("seed")[[num_col, den_col]].sum(min_count=1).reindex(seeds)
    return g[num_col].to_numpy(float), g[den_col].to_numpy(float)


def _ratio(num, den, idx) -> float:
    d = float(np.sum(den[idx]))
    return float(np.sum(num[idx])) / d if d > 0 else np.nan


def pooled(metrics, method: str, setting: str, stat: str) -> float:
    """Pooled statistic over all runs (critic seeds) of (method, setting); NaN if absent."""
    seeds = seeds_of(metrics)
    num, den = per_seed(metrics, method, setting, stat, seeds)
    return _ratio(num, den, np.arange(len(seeds)))


def pooled_check(metrics, method: str, setting: str, stat: str, op: str, thr: float):
    """check_pooled of one pooled statistic, resampling critic seeds."""
    seeds = seeds_of(metrics)
    num, den = per_seed(metrics, method, setting, stat, seeds)
    return check_pooled(lambda idx: _ratio(num, den, idx), len(seeds), op, thr)


def _all(metrics, setting: str, stat: str) -> str:
    methods = list(dict.fromkeys(metrics["method"]))
    return ", ".join(f"{k} {pooled(metrics, k, setting, stat):.3f}" for k in methods)


def _ratio_part(claim: Claim, metrics, setting, stat, other, c) -> None:
    seeds = seeds_of(metrics)
    na, da = per_seed(metrics, "PROPOSED", setting, stat, seeds)
    nb, db = per_seed(metrics, other, setting, stat, seeds)

    def diff(idx):
        return _ratio(na, da, idx) - c * _ratio(nb, db, idx)

    claim.add(f"PROPOSED - {c:g} x {other}", check_pooled(diff, len(seeds), "<=", 0.0))


def _interval(chk) -> str:
    return f"{chk.measured:.3f} [{chk.lo:.3f}, {chk.hi:.3f}] ({chk.verdict.replace('_', ' ')})"


def literal_note(metrics, sd: float = 0.5) -> str:
    """Claim 4 under the literal noise reading, computed from the metrics (empty if absent)."""
    if "alpha_sum_literal" not in metrics or not np.isfinite(
            pooled(metrics, "PROPOSED", BENIGN, "alpha_literal")):
        return ""
    b = pooled_check(metrics, "PROPOSED", BENIGN, "alpha_literal", ">=", 0.85)
    h = pooled_check(metrics, "PROPOSED", HARD, "alpha_literal", "<=", 0.75)
    verdict = combine([b.verdict, h.verdict]).replace("_", " ")
    return ("Literal reading of the observation noise (PROPOSED deployed again on the same "
            f"roads with sensor noise of s.d. {sd:g} on top of the actuation noise, measured in "
            f"this run): mean alpha REAL-BENIGN {_interval(b)}, REAL-HARD {_interval(h)}; "
            f"claim 4 would be {verdict} under that reading. Its early violation rate in "
            f"REAL-HARD is {pooled(metrics, 'PROPOSED', HARD, 'early_violation_literal'):.3f} "
            f"and its time-to-stop in REAL-BENIGN "
            f"{pooled(metrics, 'PROPOSED', BENIGN, 'time_to_stop_literal'):.3f} s.")


def check(cfg: dict, metrics, curves) -> list[Claim]:
    n_seeds = len(seeds_of(metrics))   # critic seeds, each with n_deploy deployment runs

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
    c4.add("alpha REAL-BENIGN", pooled_check(metrics, "PROPOSED", BENIGN, "alpha", ">=", 0.85))
    c4.add("alpha REAL-HARD", pooled_check(metrics, "PROPOSED", HARD, "alpha", "<=", 0.75))
    p = cfg["params"]
    total = float(np.hypot(p["acc_sd"], p["obs_sd"]))
    c4.note = (f"The verdict uses the total observation noise s.d. {total:.2g} around the "
               f"achieved deceleration (actuation {p['acc_sd']:g}, sensor {p['obs_sd']:g}; "
               "INFERRED reading, see FIDELITY). "
               + literal_note(metrics, float(p.get("literal_obs_sd") or 0.5)))

    c5 = Claim("late-safety-vs-dr",
               "Late safety relative to domain randomisation: in REAL-HARD, PROPOSED's late "
               "violation rate (episodes 4-20, pooled) is <= 0.5 x DR's.",
               "<=", "0.5 x DR (pooled difference <= 0)", n_seeds=n_seeds)
    _ratio_part(c5, metrics, HARD, "late_violation", "DR", 0.5)
    c5.note = (f"Late violation rate in REAL-HARD: {_all(metrics, HARD, 'late_violation')}. "
               "The spec expects PROPOSED and CTX-NEUTRAL to be similar here.")
    return [c1, c2, c3, c4, c5]
