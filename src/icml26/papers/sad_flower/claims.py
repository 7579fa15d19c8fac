"""The four claims of the spec, with its thresholds.

Statistics (chosen from the wording before any result was seen):
- "X >= thr (mean over seeds)": check_mean of the per-seed values (95% t-interval).
- "A exceeds B by >= d points (mean over seeds)": check_mean of the paired per-seed difference
  A - B against d (methods share problems and initial noise per seed).
- "X >= 5 x Y (mean consistency error)": check_mean of the paired difference X - 5 Y >= 0,
  which is the spec's inequality of means.
- "median goal error of SAD <= median of FM + 0.05": per seed, the median over the plans;
  check_mean of the paired difference (median_SAD - median_FM) <= 0.05.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from icml26.claims import Claim, check_mean

SAD = "SAD-Flower"
BASELINES = ("FM", "FM+proj", "GradGuide", "CBF-states-only")


def _per_seed(metrics, method, column, setting=None):
    part = metrics[metrics["method"] == method]
    if setting is not None:
        part = part[part["setting"] == setting]
    return part.set_index("seed")[column].sort_index()


def _paired(metrics, a, b, column, setting):
    x = _per_seed(metrics, a, column, setting).to_frame("x")
    y = _per_seed(metrics, b, column, setting).to_frame("y")
    j = x.join(y, how="inner").astype(float)
    return j["x"], j["y"]   # Series indexed by seed: failed runs are named by their seed


def _fmt(x):
    return f"{x:.3g}" if np.isfinite(x) else "n/a"


def _c1_diagnosis(cfg, metrics, curves, setting) -> str:
    """Where the consistency guarantee stands: V at tau_on and the prescribed-time bound."""
    p = cfg["params"]
    tau_on, c, delta = float(p["tau_on"]), float(p["c"]), float(p["delta"])
    slack = _per_seed(metrics, SAD, "slack_mean", setting).mean()
    text = f"mean CLF slack {_fmt(slack)}"
    if curves is None or not len(curves) or "metric" not in curves:
        return text
    cur = curves[(curves["method"] == SAD) & (curves["setting"] == setting)]
    tau = cur[cur["metric"] == "tau"].set_index(["seed", "step"])["value"]
    V = cur[cur["metric"] == "median_V"].set_index(["seed", "step"])["value"]
    if not len(V):
        return text
    joined = pd.concat([tau.rename("tau"), V.rename("V")], axis=1).reset_index()
    on = joined[joined["tau"] >= tau_on - 1e-9].sort_values("step").groupby("seed").first()
    end = joined.sort_values("step").groupby("seed").last()
    v_on, v_end = float(on["V"].mean()), float(end["V"].mean())
    bound = v_on * (delta / (1 - tau_on + delta)) ** c
    return (f"{text}; median V (sum of squared one-step residuals) at tau_on {_fmt(v_on)}, at "
            f"tau = 1 {_fmt(v_end)}; the continuous-time prescribed-time bound with delta = "
            f"{delta:g}, c = {c:g} only guarantees V(1) <= {_fmt(bound)} (a residual up to "
            f"{_fmt(np.sqrt(bound))}); with {int(p['n_steps'])} Euler steps the last (capped) "
            "step asks V = 0 only to first order, and the second-order change of the large "
            "last flow step is what remains; so consistency <= 1e-2 is not implied by the "
            "construction with these constants (the safety and admissibility parts are met)")


def _ceiling_note(metrics, settings, suffix) -> str:
    """The demonstrations' own ceiling under the test bounds, from this run's metrics."""
    cols = ("demo_clipped_success", "demo_outside_b1", "demo_outside_b2")
    if not all(c in metrics for c in cols):
        return ""
    out = []
    for s in settings:
        part = metrics[metrics["setting"] == s]
        if not len(part):
            continue
        row = part.iloc[0]
        out.append(f"even the demonstrations' own actions clipped to the tighter test bounds "
                   f"reach the goal in {row['demo_clipped_success']:.0%} of cases{suffix(s)} "
                   f"(the demonstrations use actions outside the test bounds on "
                   f"{row['demo_outside_b1']:.0%} (first action component) and "
                   f"{row['demo_outside_b2']:.0%} (second) of steps)")
    return "; ".join(out)


def _gradguide_note(metrics, settings, suffix) -> str:
    """What gradient guidance did: finite plans and residual violations (computed)."""
    out = []
    for s in settings:
        part = metrics[(metrics["method"] == "GradGuide") & (metrics["setting"] == s)]
        if not len(part) or "diverged_rate" not in part:
            continue
        out.append(f"GradGuide{suffix(s)}: diverged plans {part['diverged_rate'].mean():.0%}, "
                   f"safety {part['safety_rate'].mean():.2f}, admissibility "
                   f"{part['admissibility_rate'].mean():.2f}, mean consistency error "
                   f"{part['consistency_mean'].mean():.3g} (mean over seeds)")
    return "; ".join(out)


def check(cfg, metrics, curves) -> list[Claim]:
    settings = list(cfg["settings"])
    n_seeds = len(cfg["seeds"])
    suffix = (lambda s: "") if len(settings) == 1 else (lambda s: f" [{s}]")

    c1 = Claim("C1", "Guarantees hold in practice: SAD-Flower has safety rate >= 0.99, "
               "admissibility rate >= 0.99 and mean consistency error <= 1e-2 (mean over seeds).",
               ">= / >= / <=", {"safety": 0.99, "admissibility": 0.99, "consistency": 0.01},
               n_seeds=n_seeds)
    c2 = Claim("C2", "SAD-Flower's executed success exceeds every baseline (FM, FM+proj, "
               "GradGuide, CBF-states-only) by >= 20 points (mean over seeds).",
               "SAD - baseline >=", 0.20, n_seeds=n_seeds)
    c3 = Claim("C3", "Dynamic consistency needs the CLF: SAD-noCLF's mean consistency error is "
               ">= 5 x SAD-Flower's and its executed success is lower by >= 10 points.",
               "noCLF - 5 SAD >= 0 / SAD - noCLF >=", {"ratio": 5.0, "success_gap": 0.10},
               n_seeds=n_seeds)
    c4 = Claim("C4", "Test-time adaptation keeps goal error: median plan goal error of "
               "SAD-Flower <= median of FM + 0.05.", "SAD - FM <=", 0.05, n_seeds=n_seeds)
    notes = {c.id: [] for c in (c1, c2, c3, c4)}
    for s in settings:
        sfx = suffix(s)
        for col, op, thr, label in (("safety_rate", ">=", 0.99, "safety"),
                                    ("admissibility_rate", ">=", 0.99, "admissibility"),
                                    ("consistency_mean", "<=", 0.01, "consistency")):
            c1.add(label + sfx, check_mean(_per_seed(metrics, SAD, col, s).astype(float),
                                           op, thr))
        for b in BASELINES:
            x, y = _paired(metrics, SAD, b, "executed_success", s)
            c2.add(f"vs {b}{sfx}", check_mean(x - y, ">=", 0.20))
            notes["C2"].append(f"{b}{sfx}: {_fmt(y.mean())}")
        x, y = _paired(metrics, "SAD-noCLF", SAD, "consistency_mean", s)
        c3.add("consistency ratio" + sfx, check_mean(x - 5.0 * y, ">=", 0.0))
        notes["C3"].append(f"consistency noCLF {_fmt(x.mean())} vs SAD {_fmt(y.mean())} "
                           f"(ratio {_fmt(x.mean() / y.mean())})")
        x, y = _paired(metrics, SAD, "SAD-noCLF", "executed_success", s)
        c3.add("success gap" + sfx, check_mean(x - y, ">=", 0.10))
        notes["C3"].append(f"executed success SAD {_fmt(x.mean())} vs noCLF {_fmt(y.mean())}")
        notes["C2"].insert(0, f"executed success SAD-Flower{sfx}: {_fmt(x.mean())}; baselines")
        x, y = _paired(metrics, SAD, "FM", "goal_error_median", s)
        c4.add("median goal error" + sfx, check_mean(x - y, "<=", 0.05))
        notes["C4"].append(f"median goal error SAD {_fmt(x.mean())} vs FM {_fmt(y.mean())}")
        notes["C1"].append(_c1_diagnosis(cfg, metrics, curves, s))
    mechanism = ("executed success depends on the planned actions only; grad_u V is ~Dt "
                 "times grad_x V, so the minimum-norm QP restores consistency mostly by moving "
                 "the planned states, and executions barely differ between methods")
    ceiling = _ceiling_note(metrics, settings, suffix)
    if ceiling:
        mechanism += "; " + ceiling
    notes["C2"].append(_gradguide_note(metrics, settings, suffix))
    notes["C2"].append(mechanism)
    notes["C3"].append(mechanism)
    for c in (c1, c2, c3, c4):
        c.note = "; ".join(n for n in notes[c.id] if n)
    return [c1, c2, c3, c4]
