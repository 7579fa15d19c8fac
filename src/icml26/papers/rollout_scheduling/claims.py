"""The spec's five claims, thresholds exactly as written, plus its premises as sanity checks.

How each one is checked (fixed before any result was seen), per setting (q) of the run:
1. Headline: per-seed paired difference final clean training accuracy CBS-C512 - GRPO
   (same seed: same split, SFT policy and random numbers), check_mean >= 0.03.
2. Noise-aware selection: per seed, the false-positive rate among the reward-1 rollouts
   CBS-C512 used divided by the rate in its fresh batches (both pooled over the last
   ``fp_window`` steps), check_mean <= 0.7. Not defined at q = 0 (no false positives).
3. Buffer helps: paired per-seed differences of final training accuracy, check_mean:
   C128 - C0 >= -0.01, C512 - C128 >= -0.01 (each step may dip by at most 1 point), and
   C512 - C0 >= 0.01.
4. Efficiency: per seed, fresh rollouts until CBS-C512's training accuracy first reaches
   0.8 x GRPO's final accuracy, divided by GRPO's own count; check_mean <= 0.8. A CBS run that
   never reaches the target enters at the budget, censored above. A seed where GRPO reaches
   the target at step 0 (the SFT policy already does) has no defined ratio: it is a failed
   value, counted and named.
5. The scheduler learns: per seed, Spearman(predicted, observed gain) over CBS-C512's selected
   arms in the second half of training, check_mean >= 0.2.
Sanity (the spec's premises): the SFT warm start gives 25-35% greedy accuracy over all prompts;
every method generates the same number of fresh rollouts; false-positive rollouts have a
negative expected gain (GRPO's on-policy fresh rollouts, second half of training).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from icml26.claims import Claim, check_mean, check_value

GRPO, C0, C128, C512 = "grpo", "cbs-intra", "cbs-c128", "cbs-c512"


def _col(metrics, method, setting, col):
    part = metrics[(metrics["method"] == method) & (metrics["setting"] == setting)]
    if col not in part:
        return pd.Series(np.nan, index=part["seed"].to_numpy()).sort_index()
    return part.set_index("seed")[col].astype(float).sort_index()


def _diff(metrics, a, b, setting, col):
    x, y = _col(metrics, a, setting, col), _col(metrics, b, setting, col)
    seeds = x.index.intersection(y.index)
    return x.loc[seeds] - y.loc[seeds]


def _q(cfg, s):
    return float((cfg["settings"][s] or {}).get("q", cfg["params"].get("q", 0.0)))


def check(cfg: dict, metrics, curves) -> list[Claim]:
    n_seeds = int(metrics["seed"].nunique()) if len(metrics) else 0
    settings = [s for s in cfg["settings"] if (metrics["setting"] == s).any()]
    methods = set(metrics["method"]) if len(metrics) else set()
    claims = []

    def have(*ms):
        return all(m in methods for m in ms)

    c = Claim("C1-headline",
              "CBS-C512's final clean training accuracy is at least GRPO's + 3 points (mean over "
              "seeds), with the same number of fresh rollouts.", ">=", 0.03, n_seeds=n_seeds,
              note="Paired per-seed difference CBS-C512 - GRPO of the mean of the last 3 "
                   "evaluations. CBS also draws a probe batch (probe_rollouts) for its arm "
                   "rewards, never used in an update.")
    for s in settings:
        if have(C512, GRPO):
            c.add(f"{s}:C512-GRPO", check_mean(_diff(metrics, C512, GRPO, s, "final_train_acc"),
                                               ">=", 0.03))
            rise = (_col(metrics, GRPO, s, "final_train_acc")
                    - _col(metrics, GRPO, s, "sft_train_acc"))
            c.note += (f" {s}: GRPO's own final training accuracy is {rise.mean():+.3f} above "
                       f"its SFT start (mean over seeds), the room RL found in "
                       f"{cfg['params'].get('steps', '?')} steps.")
    claims.append(c)

    c = Claim("C2-noise-aware",
              "The false-positive rate among the reward-1 rollouts CBS uses is <= 0.7 x the rate "
              "in the fresh batches (last 100 steps, mean over seeds).", "<=", 0.7,
              n_seeds=n_seeds,
              note="Per seed: CBS-C512's used FP rate / fresh FP rate, each pooled over the last "
                   "fp_window steps (buffer rollouts included among the used ones).")
    for s in settings:
        if have(C512) and _q(cfg, s) > 0:
            c.add(f"{s}:C512", check_mean(_col(metrics, C512, s, "fp_ratio"), "<=", 0.7))
            others = [f"{m} {_col(metrics, m, s, 'fp_ratio').mean():.3f}" for m in (C0, C128)
                      if have(m)]
            if others:
                c.note += (f" {s}: the same ratio for the other CBS variants (not part of the "
                           f"verdict, means over seeds): {', '.join(others)}.")
    claims.append(c)

    c = Claim("C3-buffer",
              "Mean final accuracy is non-decreasing in buffer capacity 0 -> 128 -> 512 (each "
              "step may dip by at most 1 point) and C512 - C0 >= 1 point.", ">=",
              {"C128-C0": -0.01, "C512-C128": -0.01, "C512-C0": 0.01}, n_seeds=n_seeds,
              note="Paired per-seed differences of final clean training accuracy.")
    for s in settings:
        if have(C0, C128, C512):
            for lab, a, b, thr in (("C128-C0", C128, C0, -0.01), ("C512-C128", C512, C128, -0.01),
                                   ("C512-C0", C512, C0, 0.01)):
                c.add(f"{s}:{lab}", check_mean(_diff(metrics, a, b, s, "final_train_acc"), ">=",
                                               thr))
    claims.append(c)

    c = Claim("C4-efficiency",
              "CBS-C512 reaches 0.8 x GRPO's final accuracy with <= 0.8 x GRPO's fresh "
              "rollouts.", "<=", 0.8, n_seeds=n_seeds,
              note="Per seed: fresh rollouts to the target for CBS-C512 / for GRPO (accuracy "
                   "evaluated every eval_every steps; a CBS run that never reaches it enters at "
                   "the budget, censored above).")
    for s in settings:
        if have(C512, GRPO):
            ratio = _col(metrics, C512, s, "rollouts_ratio_vs_grpo")
            cens = _col(metrics, C512, s, "target_censored").reindex(ratio.index).fillna(0)
            c.add(f"{s}:C512/GRPO", check_mean(ratio, "<=", 0.8,
                                               censored=(cens.to_numpy() > 0).astype(int)))
            g0 = _col(metrics, GRPO, s, "rollouts_to_target")
            at0 = [int(k) for k, v in g0.items() if v == 0]
            if at0:
                c.note += (f" {s}: in seeds {at0} the SFT policy already met GRPO's target at "
                           f"step 0, so the ratio is undefined there (counted as failed).")
    claims.append(c)

    c = Claim("C5-scheduler-learns",
              "Spearman(predicted gain, observed gain) over the selected arms is >= 0.2 in the "
              "second half of training.", ">=", 0.2, n_seeds=n_seeds,
              note="Per seed, over CBS-C512's selected arms of the second half of training "
                   "(bandit feedback: only selected arms are observed).")
    for s in settings:
        if have(C512):
            c.add(f"{s}:C512", check_mean(_col(metrics, C512, s, "gain_spearman"), ">=", 0.2))
            snr = _col(metrics, C512, s, "obs_gain_mean_over_sd")
            if np.isfinite(snr).any():
                c.note += (f" {s}: the observed gains of the selected arms have mean / s.d. "
                           f"{snr.mean():+.3f} (mean over seeds): how much signal the arm "
                           f"rewards carry beyond the probe batch's sampling noise.")
    claims.append(c)

    # ------------------------------------------------------------------ premises (sanity) -----
    p = cfg["params"]
    n_all = int(p["n_operands"]) ** 2
    n_tr = int(p["n_train_prompts"])
    c = Claim("S1-sft-premise",
              "Premise: the SFT warm start gives partial competence, roughly 25-35% greedy "
              "accuracy over all prompts.", "in", [0.25, 0.35], n_seeds=n_seeds,
              category="sanity",
              note="Per seed, the SFT policy's greedy accuracy over train and held-out prompts "
                   "(identical for every method of a seed; read from GRPO's runs).")
    ref = GRPO if have(GRPO) else (sorted(methods)[0] if methods else GRPO)
    for s in settings:
        tr = _col(metrics, ref, s, "sft_train_acc")
        he = _col(metrics, ref, s, "sft_held_acc")
        overall = (tr * n_tr + he * (n_all - n_tr)) / n_all
        c.add(f"{s}:>=0.25", check_mean(overall, ">=", 0.25))
        c.add(f"{s}:<=0.35", check_mean(overall, "<=", 0.35))
        if len(tr):
            c.note += (f" {s}: SFT accuracy {tr.mean():.3f} on the training prompts, "
                       f"{he.mean():.3f} on the held-out ones (means over seeds).")
        spread = _col(metrics, ref, s, "sft_spread_frac")
        if np.isfinite(spread).any():
            lo, hi = p.get("premise_band", [0.1, 0.9])
            c.note += (f" Warm-start premise (Table 2, not a claim): {spread.mean():.3f} of the "
                       f"training prompts have a pass rate in [{lo}, {hi}] (mean over seeds).")
    claims.append(c)

    c = Claim("S2-same-rollouts",
              "Every method generates exactly the same number of fresh rollouts.", "<=", 0.0,
              n_seeds=n_seeds, category="sanity",
              note="Spread (max - min) over runs of the fresh rollouts generated (by "
                   "construction).")
    if len(metrics):
        fr = metrics["fresh_rollouts"].to_numpy(float)
        c.add("spread", check_value(float(fr.max() - fr.min()), "<=", 0.0))
    claims.append(c)

    c = Claim("S3-fp-negative-gain",
              "Premise: false-positive rollouts have a negative expected gain.", "<", 0.0,
              n_seeds=n_seeds, category="sanity",
              note="Per seed, the mean first-order gain <g_x, g_probe> of GRPO's fresh "
                   "false-positive rollouts in the second half of training.")
    for s in settings:
        if have(GRPO) and _q(cfg, s) > 0:
            c.add(f"{s}:GRPO", check_mean(_col(metrics, GRPO, s, "gain_fp_mean"), "<", 0.0))
            tp = _col(metrics, GRPO, s, "gain_tp_mean")
            c.note += (f" {s}: the true positives' mean gain in the same runs is "
                       f"{tp.mean():.3g} (mean over seeds).")
    claims.append(c)
    return claims
