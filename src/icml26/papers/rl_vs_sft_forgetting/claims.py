"""Claims 1-5 of the spec, with its thresholds.

Arms under the official settings (issue 15): the official default RL (scripts/rl.sh) has a k2
KL penalty (beta 0.05), so claim 2 reads `rl` (with KL) and claim 3's "RL without KL" is
`rl-nokl`; "RL+KL's drop within 0.05 of RL's" is drop_rl - drop_rl-nokl in [-0.05, 0.05].
Claim 1 keeps the spec's reading point, the last iteration (official: 200); the official
simulation's own reading (the first iteration whose gain reaches 0.9) is reported in its note.

Statistics (chosen from the wording, before any result was seen):
- Claim 1 ("mean Acc(T') of SFT <= 0.40 ...", Part A): check_mean of the per-seed final values,
  one part per quantity.
- Claims 2-5 compare methods on the same seeds and base models, so each comparison is a
  per-seed paired difference with check_mean. "Drop of SFT >= 2x drop of RL" becomes
  drop_SFT - 2 drop_RL >= 0; "drop < SFT's drop / 2" becomes drop_X - drop_SFT / 2 < 0.
  "Within 0.05" becomes two one-sided parts on drop_RL+KL - drop_RL (<= 0.05 and >= -0.05).
  "RL reaches new accuracy >= 0.95 by the end" is check_mean of the per-seed final accuracy.
Drops are measured at matched new-task accuracy 0.9 (experiment.run_metrics). A seed in which a
method never reaches 0.9 is censored, not dropped: its matched drop enters at its final drop
(drop_matched_bound), marked as a lower bound of the true value (check_mean's censored signs:
+1 where the censored drop enters the difference with a positive weight, -1 with a negative
one). A difference in which both drops are censored is unbounded either way, so it is entered
with both signs in turn and a verdict stands only if both agree. The claim's note names them.
Claims use the settings named "mixture" (Part A) and "policy" (Part B), the spec's main setting
of each part. The full profile's other settings are reported, not claimed.
"""

from __future__ import annotations

import numpy as np

from icml26.claims import INCONCLUSIVE, REPRODUCED, Claim, check_mean

MIXTURE, POLICY = "mixture", "policy"
def spec_reading_note(metrics) -> str:
    """Where a Part B verdict is not reproduced: the earlier reading of the spec (sft-spec,
    rl-spec: SGD, lr 0.5 / 2.0, 64 samples per step, no KL), read from the data. Empty when
    the variants did not run."""
    if not (_has(metrics, "sft-spec", POLICY) and _has(metrics, "rl-spec", POLICY)):
        return ""
    mean = {m: float(per_seed(metrics, m, POLICY, "drop_matched_bound").mean())
            for m in ("sft", "rl", "sft-spec", "rl-spec") if _has(metrics, m, POLICY)}
    diff = paired(metrics, "sft-spec", "rl-spec", "drop_matched_bound", wb=2.0)
    return (". Earlier reading of the spec (labelled variants, no claim; SGD with RL's lr 4x "
            "SFT's): mean matched drop " + ", ".join(f"{m} {v:.3f}" for m, v in mean.items())
            + f"; drop_sft-spec - 2 drop_rl-spec per seed has mean {diff.mean():.3f} "
            f"({int((diff >= 0).sum())}/{len(diff)} seeds >= 0)")


def gain_note(metrics) -> str:
    """Part A at the official simulation's reading point (run.py, --gain_thresholds 0.9): the
    first iteration whose gain in Acc(T) reaches 0.9, and the drop of Acc(T') there, per
    method (mean over seeds; censored seeds, which never reach the gain, at the last one)."""
    parts = []
    for m in ("sft", "rl", "sft-replay", "sft-small-lr"):
        if not _has(metrics, m, MIXTURE) or "drop_gain" not in metrics:
            continue
        drop = per_seed(metrics, m, MIXTURE, "drop_gain")
        it = per_seed(metrics, m, MIXTURE, "iter_gain")
        cens = per_seed(metrics, m, MIXTURE, "gain_censored")
        txt = f"{m} drop {drop.mean():.3f}"
        if np.isfinite(it).any():
            txt += f" at iteration {np.nanmean(it):.0f}"
        if (cens > 0).any():
            txt += f" (gain never reached in {int((cens > 0).sum())}/{len(cens)} seeds: read " \
                   "at the last iteration)"
        parts.append(txt)
    if not parts:
        return ""
    return ("; official reading (first iteration with gain Acc(T) - Acc_0(T) >= 0.9, no "
            "claim threshold reads it): " + "; ".join(parts))


def per_seed(metrics, method: str, setting: str, column: str):
    """Series seed -> value of one method in one setting."""
    part = metrics[(metrics["method"] == method) & (metrics["setting"] == setting)]
    return part.set_index("seed")[column].astype(float).sort_index()


def paired(metrics, a: str, b: str, column: str, setting: str = POLICY, wa=1.0, wb=1.0):
    """Per-seed wa * a - wb * b over the seeds both methods ran (a Series indexed by seed)."""
    x, y = per_seed(metrics, a, setting, column), per_seed(metrics, b, setting, column)
    seeds = x.index.intersection(y.index)
    return wa * x.loc[seeds] - wb * y.loc[seeds]


def paired_drop(metrics, a: str, b: str, wa=1.0, wb=1.0):
    """(per-seed wa drop_a - wb drop_b at matched accuracy, censoring signs per seed).

    A censored drop (0.9 never reached) enters at its bound, a lower bound of the true drop;
    its sign in the difference is that of its weight; 2 marks a seed where both are censored."""
    diff = paired(metrics, a, b, "drop_matched_bound", wa=wa, wb=wb)
    ca = per_seed(metrics, a, POLICY, "matched_censored").loc[diff.index].to_numpy() > 0
    cb = per_seed(metrics, b, POLICY, "matched_censored").loc[diff.index].to_numpy() > 0
    signs = np.where(ca & cb, 2, np.where(ca, int(np.sign(wa)), np.where(cb, -int(np.sign(wb)),
                                                                           0)))
    return diff, signs


def check_censored(values, signs, op: str, threshold: float):
    """check_mean with censored signs; a seed censored both ways (2) is tried at +1 and -1
    and a decisive verdict must survive both."""
    signs = np.asarray(signs, dtype=int)
    if not (signs == 2).any():
        return check_mean(values, op, threshold, censored=signs)
    up = check_mean(values, op, threshold, censored=np.where(signs == 2, 1, signs))
    down = check_mean(values, op, threshold, censored=np.where(signs == 2, -1, signs))
    if up.verdict != down.verdict:
        return up if up.verdict == INCONCLUSIVE else down
    return up


def reached_note(metrics, methods) -> str:
    parts = []
    for m in methods:
        s = per_seed(metrics, m, POLICY, "drop_matched")
        bound = per_seed(metrics, m, POLICY, "drop_matched_bound")
        never = [str(k) for k in s.index[~np.isfinite(s.to_numpy())]]
        txt = f"{m}: reached 0.9 in {int(np.isfinite(s).sum())}/{len(s)} seeds"
        if never:
            txt += (f" (censored, entered at the final drop: seeds {', '.join(never)})")
        parts.append(txt + f", mean drop {bound.mean():.3f}")
    return "Matched drops per method (censored ones at their bound): " + "; ".join(parts)


def _has(metrics, method, setting) -> bool:
    return bool(((metrics["method"] == method) & (metrics["setting"] == setting)).any())


def claim_rl_vs_sft(metrics, cid: str, statement: str, n_seeds: int, rl: str = "rl") -> Claim:
    c = Claim(cid, statement, ">= (both)",
              {f"drop_sft - 2 drop_{rl}": 0.0, f"{rl}_new_acc_final": 0.95}, n_seeds=n_seeds)
    c.add(f"drop_sft - 2 drop_{rl}",
          check_censored(*paired_drop(metrics, "sft", rl, wb=2.0), ">=", 0.0))
    c.add(f"{rl}_new_acc_final",
          check_mean(per_seed(metrics, rl, POLICY, "new_acc_final"), ">=", 0.95))
    return c


def check(cfg, metrics, curves) -> list:
    n_seeds = len(cfg["seeds"])
    claims = []

    # 1. Part A: mass forgetting under SFT, not under RL -------------------------------------
    if all(_has(metrics, m, MIXTURE) for m in ("sft", "rl", "sft-replay")):
        c = Claim("C1-mixture-mass-forgetting",
                  "Part A, after the last iteration: mean Acc(T') of SFT <= 0.40 and of RL >= "
                  "0.60, both with Acc(T) >= 0.95; pi_SFT < 0.3 while pi_RL > 0.5; SFT with "
                  "replay keeps Acc(T') >= 0.9.",
                  "see parts",
                  {"sft_old_acc": "<= 0.40", "rl_old_acc": ">= 0.60", "sft_new_acc": ">= 0.95",
                   "rl_new_acc": ">= 0.95", "sft_pi": "< 0.3", "rl_pi": "> 0.5",
                   "replay_old_acc": ">= 0.9"},
                  n_seeds=int(metrics.loc[metrics["setting"] == MIXTURE, "seed"].nunique()),
                  note="check_mean (95% t-interval over seeds) of each final value"
                  + gain_note(metrics))
        for label, method, col, op, thr in (
            ("sft_old_acc", "sft", "old_acc_final", "<=", 0.40),
            ("rl_old_acc", "rl", "old_acc_final", ">=", 0.60),
            ("sft_new_acc", "sft", "new_acc_final", ">=", 0.95),
            ("rl_new_acc", "rl", "new_acc_final", ">=", 0.95),
            ("sft_pi", "sft", "pi_final", "<", 0.3),
            ("rl_pi", "rl", "pi_final", ">", 0.5),
            ("replay_old_acc", "sft-replay", "old_acc_final", ">=", 0.9),
        ):
            c.add(label, check_mean(per_seed(metrics, method, MIXTURE, col), op, thr))
        claims.append(c)

    if not _has(metrics, "sft", POLICY):
        return claims
    note_all = reached_note(metrics, [m for m in ("sft", "rl", "rl-nokl", "rl-mean", "self-sft",
                                                  "iter-self-sft", "sft-spec", "rl-spec")
                                      if _has(metrics, m, POLICY)])

    # 2. Headline: SFT forgets >= 2x more than RL at matched accuracy ------------------------
    if _has(metrics, "rl", POLICY):
        c = claim_rl_vs_sft(
            metrics, "C2-headline-rl-forgets-less",
            "Part B: at matched new-task accuracy 0.9 the old-task drop of SFT is >= 2x the drop "
            "of RL (the official default RL, with its k2 KL; mean over seeds), and RL reaches "
            "new-task accuracy >= 0.95 by the end.",
            n_seeds)
        c.note = "paired per-seed drop_SFT - 2 drop_RL, check_mean; " + note_all
        if c.verdict != REPRODUCED:
            c.note += spec_reading_note(metrics)
        claims.append(c)

    # 3. On-policy data, not KL ---------------------------------------------------------------
    if _has(metrics, "rl", POLICY) and _has(metrics, "rl-nokl", POLICY):
        base = claim_rl_vs_sft(metrics, "tmp", "", n_seeds, rl="rl-nokl")
        c = Claim("C3-not-kl",
                  "RL without KL (rl-nokl; the official default RL has a k2 KL, so the spec's "
                  "'default RL without KL' is its ablation here) already satisfies claim 2, and "
                  "RL+KL's drop at matched accuracy (rl, the official default) is within 0.05 "
                  "of it.",
                  "claim-2 parts >= ; |drop_rl - drop_rl-nokl| <= 0.05",
                  {**base.threshold, "drop_rl - drop_rl-nokl (upper)": 0.05,
                   "drop_rl - drop_rl-nokl (lower)": -0.05}, n_seeds=n_seeds,
                  note="claim 2's parts for rl-nokl plus the paired per-seed difference "
                       "drop_RL+KL - drop_RL-noKL, whose 95% interval must lie inside "
                       "[-0.05, 0.05] (two one-sided check_mean parts); " + note_all)
        c.parts.update(base.parts)
        diff, signs = paired_drop(metrics, "rl", "rl-nokl")
        c.add("drop_rl - drop_rl-nokl (upper)", check_censored(diff, signs, "<=", 0.05))
        c.add("drop_rl - drop_rl-nokl (lower)", check_censored(diff, signs, ">=", -0.05))
        if c.verdict != REPRODUCED:
            c.note += spec_reading_note(metrics)
        claims.append(c)

    # 4. Not the advantage estimator ----------------------------------------------------------
    if _has(metrics, "rl-mean", POLICY):
        c = Claim("C4-not-advantage-estimator",
                  "RL with the mean baseline only (no std normalisation) also has a drop at "
                  "matched accuracy < SFT's drop / 2.",
                  "<", {"drop_rl-mean - drop_sft/2": 0.0}, n_seeds=n_seeds,
                  note="paired per-seed drop_RL-mean - drop_SFT / 2, check_mean; " + note_all)
        c.add("drop_rl-mean - drop_sft/2",
              check_censored(*paired_drop(metrics, "rl-mean", "sft", wb=0.5), "<", 0.0))
        claims.append(c)

    # 5. Approximately on-policy data helps ---------------------------------------------------
    self_methods = [m for m in ("self-sft", "iter-self-sft") if _has(metrics, m, POLICY)]
    if self_methods:
        c = Claim("C5-approx-on-policy",
                  "Self-SFT's and iterative Self-SFT's drops at matched accuracy are < half of "
                  "SFT's drop.",
                  "<", {f"drop_{m} - drop_sft/2": 0.0 for m in self_methods}, n_seeds=n_seeds,
                  note="paired per-seed drop_X - drop_SFT / 2, check_mean; " + note_all)
        for m in self_methods:
            c.add(f"drop_{m} - drop_sft/2",
                  check_censored(*paired_drop(metrics, m, "sft", wb=0.5), "<", 0.0))
        claims.append(c)
    return claims
