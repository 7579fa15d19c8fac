"""Claims 1-5 of the spec, thresholds as written; pass@1 in percentage points.

Statistics (fixed from the wording before any result): comparisons of two training sets are
paired per seed (same challenges, teacher runs and base weights) and checked with check_mean on
the per-seed difference; "on each of the three benchmarks (mean over seeds)" is one check_mean
part per benchmark; "and in every seed on average" is check_every on the per-seed gain averaged
over the benchmarks; "yield with hints >= 1.5 x the yield without" is the per-seed paired
difference yield_hint - 1.5 yield_plain >= 0 (check_mean). A sanity claim checks that the
scripted solver solves every benchmark challenge in every seed (the world's oracle premise).
"""
from __future__ import annotations

import numpy as np

from icml26.claims import Claim, check_every, check_mean

BENCHES = ("intercode", "nyu", "cybench")


def _col(metrics, method, col):
    part = metrics[metrics["method"] == method]
    return part.sort_values("seed").set_index("seed")[col].astype(float)


def _has(metrics, *methods):
    return all((metrics["method"] == m).any() for m in methods)


def _diff(metrics, a, b, col, scale=1.0):
    x, y = _col(metrics, a, col), _col(metrics, b, col)
    seeds = x.index.intersection(y.index)
    return x.loc[seeds] - scale * y.loc[seeds]


def _mean(metrics, method, col) -> float:
    if not _has(metrics, method) or col not in metrics:
        return float("nan")
    x = _col(metrics, method, col).to_numpy()
    x = x[np.isfinite(x)]
    return float(x.mean()) if x.size else float("nan")


def _data_note(cfg, metrics) -> str:
    """What the collection produced (computed from the run)."""
    if not _has(metrics, "verified"):
        return ""
    n_target = cfg["params"]["n_scaling"][-1]
    got = _col(metrics, "verified", "n_verified")
    short = got[got < n_target]
    txt = (f" Verified trajectories collected per seed: target N = {n_target}, reached in "
           f"{len(got) - len(short)} of {len(got)} seeds")
    if len(short):
        txt += " (short: " + ", ".join(f"seed {int(s)}: {int(v)}" for s, v in short.items()) + ")"
    return txt + "."


def check(cfg, metrics, curves) -> list[Claim]:
    n = len(cfg["seeds"])
    N = cfg["params"]["n_scaling"]
    out = []

    c = Claim("C1-headline",
              f"Fine-tuning on N = {N[-1]} execution-verified trajectories raises pass@1 over "
              "the base policy by >= 10 points on each of the three benchmarks (mean over "
              "seeds), and in every seed on average over the benchmarks.", ">=",
              {**{f"gain_{b}": 10.0 for b in BENCHES}, "every_seed_avg_gain": 10.0},
              n_seeds=n,
              note=(f"Seed-mean pass@1 averaged over the benchmarks: verified "
                    f"{_mean(metrics, 'verified', 'pass1_avg'):.1f}, base "
                    f"{_mean(metrics, 'base', 'pass1_avg'):.1f}."
                    + _data_note(cfg, metrics)))
    if _has(metrics, "verified", "base"):
        for b in BENCHES:
            c.add(f"gain_{b}", check_mean(_diff(metrics, "verified", "base", f"pass1_{b}"),
                                          ">=", 10.0))
        c.add("every_seed_avg_gain", check_every(_diff(metrics, "verified", "base",
                                                       "pass1_avg"), ">=", 10.0))
    out.append(c)

    c = Claim("C2-verification", "Verified SFT >= unverified SFT (same N) + 5 points, pass@1 "
              "averaged over the benchmarks (mean over seeds).", ">=",
              {"verified-unverified": 5.0}, n_seeds=n,
              note=("Seed-mean share of successful trajectories in the unverified set: "
                    f"{_mean(metrics, 'unverified', 'unverified_success'):.1f}%; invalid-call "
                    f"rate of the students: verified "
                    f"{_mean(metrics, 'verified', 'invalid_rate'):.3f}, unverified "
                    f"{_mean(metrics, 'unverified', 'invalid_rate'):.3f}."))
    if _has(metrics, "verified", "unverified"):
        c.add("verified-unverified", check_mean(
            _diff(metrics, "verified", "unverified", "pass1_avg"), ">=", 5.0))
    out.append(c)

    c = Claim("C3-execution-grounding", "Verified SFT >= simulated (Cyber-Zero-style, "
              "runtime-free) SFT + 3 points, pass@1 averaged over the benchmarks (mean over "
              "seeds).", ">=", {"verified-simulated": 3.0}, n_seeds=n,
              note=("Following the official Cyber-Zero code, simulated trajectories are kept "
                    "only when they submit the true flag; they lack execution, not the flag "
                    "check. Seed-mean share of non-submit steps in the kept simulated "
                    "trajectories whose imagined observation differs from the runtime's: "
                    f"{_mean(metrics, 'simulated', 'sim_wrong_obs_rate'):.3f}; simulator "
                    f"yield {_mean(metrics, 'simulated', 'sim_yield'):.1f} per 100 attempts."))
    if _has(metrics, "verified", "simulated"):
        c.add("verified-simulated", check_mean(
            _diff(metrics, "verified", "simulated", "pass1_avg"), ">=", 3.0))
    out.append(c)

    c = Claim("C4-data-scaling",
              f"Average pass@1 increases from N = {N[0]} to {N[1]} to {N[2]}: each step >= -1 "
              f"point, and N = {N[2]} >= N = {N[0]} + 5 points (mean over seeds).", ">=",
              {"n2-n1": -1.0, "n3-n2": -1.0, "n3-n1": 5.0}, n_seeds=n,
              note=("Seed-mean average pass@1: " + ", ".join(
                  f"N = {k}: {_mean(metrics, m, 'pass1_avg'):.1f}" for k, m in
                  zip(N, ("verified-n1", "verified-n2", "verified"), strict=True)) + "."))
    if _has(metrics, "verified-n1", "verified-n2", "verified"):
        c.add("n2-n1", check_mean(_diff(metrics, "verified-n2", "verified-n1", "pass1_avg"),
                                  ">=", -1.0))
        c.add("n3-n2", check_mean(_diff(metrics, "verified", "verified-n2", "pass1_avg"),
                                  ">=", -1.0))
        c.add("n3-n1", check_mean(_diff(metrics, "verified", "verified-n1", "pass1_avg"),
                                  ">=", 5.0))
    out.append(c)

    c = Claim("C5-hint-yield", "Hints raise the yield of verified data: teacher yield "
              "(verified trajectories per 100 attempts) with write-up hints >= 1.5 x the "
              "yield without (per-seed yield_hint - 1.5 yield_plain >= 0, mean over seeds).",
              ">=", {"yield_hint-1.5*yield_plain": 0.0}, n_seeds=n,
              note=(f"Seed-mean yield: with hints {_mean(metrics, 'verified', 'yield_hint'):.1f}"
                    f", without {_mean(metrics, 'verified', 'yield_plain'):.1f} per 100 "
                    "attempts (eps 0.12 vs 0.35, the spec's INFERRED noise levels; a wrong "
                    "submit does not end an episode, as in the official runtime)."))
    if _has(metrics, "verified"):
        c.add("yield_hint-1.5*yield_plain", check_mean(
            _col(metrics, "verified", "yield_hint") - 1.5 * _col(metrics, "verified",
                                                                 "yield_plain"), ">=", 0.0))
    out.append(c)

    c = Claim("S1-scripted-solver", "Sanity: the scripted solver solves every benchmark "
              "challenge within the step limit in every seed (pass@1 = 100 on each).", ">=",
              {f"scripted_{b}": 100.0 for b in BENCHES}, category="sanity", n_seeds=n)
    if _has(metrics, "scripted"):
        for b in BENCHES:
            c.add(f"scripted_{b}", check_every(_col(metrics, "scripted", f"pass1_{b}"), ">=",
                                               100.0))
    out.append(c)
    return out
