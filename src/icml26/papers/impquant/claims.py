"""The spec's five claims, thresholds exactly as written (accuracy points: 1 pt = 0.01).

How each one is checked (decided before any result was seen):
1. Sanity: the FP model's test accuracy (one per seed) >= 0.90: check_mean.
2. Headline at W3A16: "IMPQUANT >= GPTQ + 1.0 pt and >= MODALITY-W + 0.5 pt (mean over
   seeds)": check_mean of the paired per-seed differences (same model, calibration and test
   set); "IMPQUANT >= GPTQ in at least 2 of 3 seeds": check_fraction at_least 2/3.
3. Hallucination at W3A16: false-yes rate of IMPQUANT <= GPTQ's and <= MODALITY-W's (mean over
   seeds): check_mean of the paired differences <= 0. RTN's rate is in the note.
4. W4A6: IMPQUANT >= GPTQ + 2.0 pt and IMPQUANT >= IMPQ-NOIMP - 0.3 pt: check_mean of the
   paired differences.
5. Diagnostic: mean ImpQuant weight on background visual tokens <= 0.5 x that on object visual
   tokens "in every seed": check_every on the per-seed ratio.
A missing method or setting (smoke runs W3A16 only) leaves that part out.
"""

from __future__ import annotations

import numpy as np

from icml26.claims import Claim, check_every, check_fraction, check_mean

IMP, GPTQ, MOD, NOIMP, RTN = "impquant", "gptq", "modality-w", "impq-noimp", "rtn"


def col(metrics, method, setting, name):
    part = metrics[(metrics["method"] == method) & (metrics["setting"] == setting)]
    if name not in part:
        return part.set_index("seed").iloc[:0, :0].sum(axis=1).astype(float)  # empty
    return part.set_index("seed")[name].sort_index().astype(float)


def paired(metrics, a, b, setting, name):
    """Per-seed a - b on the seeds both ran (a Series indexed by seed)."""
    x, y = col(metrics, a, setting, name), col(metrics, b, setting, name)
    seeds = x.index.intersection(y.index)
    return x.loc[seeds] - y.loc[seeds]


def _mean(s) -> str:
    return f"{np.nanmean(s):.4f}" if len(s) else "n/a"


def _room(metrics, setting, gain) -> str:
    """How much accuracy GPTQ loses against the FP model (the most any reweighting can win
    back), from the data."""
    g = col(metrics, GPTQ, setting, "degradation")
    if not len(g):
        return ""
    lost = float(np.nanmean(g))
    verdict = ("smaller than" if lost < gain else "at least")
    out = (f" GPTQ's mean degradation against the FP model at {setting} is {lost:.4f} "
           f"({verdict} the claimed gain of {gain:.3f})")
    if lost < gain:
        out += ": quantisation costs GPTQ less accuracy than the claimed gain, so there is "
        out += "little damage for any reweighting to repair"
    return out + "."


def check(cfg: dict, metrics, curves) -> list[Claim]:
    n_seeds = int(metrics["seed"].nunique()) if len(metrics) else 0
    settings = list(cfg["settings"])
    claims = []

    c = Claim("C1-fp-accuracy", "Sanity: the FP model's test accuracy is >= 0.90.", ">=", 0.90,
              category="sanity", n_seeds=n_seeds,
              note="check_mean over seeds of the FP model's accuracy on the 4 question types.")
    fp = metrics.groupby("seed")["fp_acc"].first() if len(metrics) else metrics
    c.add("fp_acc", check_mean(fp, ">=", 0.90))
    if len(metrics):
        per = metrics.groupby("seed")[[f"fp_acc_{t}" for t in
                                       ("exist", "colour", "count", "where")]].first().mean()
        c.note += (" Mean FP accuracy per type: " + ", ".join(
            f"{k[7:]} {v:.3f}" for k, v in per.items()) + ". When below 0.90, the spec's "
            "premise that the FP model is well trained did not hold at this scale's training "
            "budget, and the PTQ comparisons below are on a weaker model.")
        if {"fp_steps", "fp_val_acc"} <= set(metrics.columns):
            tr = metrics.groupby("seed")[["fp_steps", "fp_val_acc", "fp_val_loss"]].first()
            cap = (int(cfg["params"]["n_train"]) // int(cfg["params"]["batch"])
                   * int(cfg["params"]["epochs"]))
            c.note += (f" FP training (early stop at validation accuracy >= "
                       f"{cfg['params']['stop_acc']}, cap {cap} steps): "
                       f"{int((tr['fp_steps'] < cap).sum())} of {len(tr)} seeds stopped early; "
                       f"mean steps {tr['fp_steps'].mean():.0f}, final validation accuracy "
                       f"{tr['fp_val_acc'].mean():.3f} (loss {tr['fp_val_loss'].mean():.3f}) on "
                       "the seeds' own validation streams, read by no claim.")
    claims.append(c)

    s = "W3A16"
    c = Claim("C2-headline-w3a16",
              "At W3A16, IMPQUANT accuracy >= GPTQ + 1.0 pt and >= MODALITY-W + 0.5 pt (mean "
              "over seeds), and IMPQUANT >= GPTQ in at least 2 of 3 seeds.",
              ">= / >= / fraction >=", {"impquant-gptq": 0.01, "impquant-modality-w": 0.005,
                                        "frac_seeds_impquant>=gptq": 2 / 3},
              n_seeds=n_seeds,
              note="check_mean of the paired per-seed accuracy differences; check_fraction of "
                   "seeds with IMPQUANT >= GPTQ (at least 2/3).")
    if s in settings:
        d_g = paired(metrics, IMP, GPTQ, s, "acc")
        d_m = paired(metrics, IMP, MOD, s, "acc")
        if len(d_g):
            c.add("impquant-gptq", check_mean(d_g, ">=", 0.01))
            c.add("frac_seeds_impquant>=gptq", check_fraction(d_g, ">=", 0.0, 2 / 3))
        if len(d_m):
            c.add("impquant-modality-w", check_mean(d_m, ">=", 0.005))
        c.note += (" Mean accuracy: " + ", ".join(
            f"{m} {_mean(col(metrics, m, s, 'acc'))}" for m in (RTN, GPTQ, MOD, IMP)) + ".")
        c.note += _room(metrics, s, 0.01)
        eo = {m: _mean(col(metrics, m, s, "err_obj")) for m in (GPTQ, IMP)}
        eb = {m: _mean(col(metrics, m, s, "err_bg")) for m in (GPTQ, IMP)}
        c.note += (f" Mean relative layer-output error on object tokens: GPTQ {eo[GPTQ]}, "
                   f"ImpQuant {eo[IMP]}; on background tokens: GPTQ {eb[GPTQ]}, ImpQuant "
                   f"{eb[IMP]} (the premise: reweighting cuts the object-token error).")
    claims.append(c)

    c = Claim("C3-hallucination-w3a16",
              "At W3A16, IMPQUANT's false-yes rate on absent EXIST probes is <= GPTQ's and <= "
              "MODALITY-W's (mean over seeds).",
              "<=", {"impquant-gptq": 0.0, "impquant-modality-w": 0.0}, n_seeds=n_seeds,
              note="check_mean of the paired per-seed differences of the false-yes rate.")
    if s in settings:
        for m in (GPTQ, MOD):
            d = paired(metrics, IMP, m, s, "false_yes")
            if len(d):
                c.add(f"impquant-{m}", check_mean(d, "<=", 0.0))
        c.note += (" Mean false-yes rate: " + ", ".join(
            f"{m} {_mean(col(metrics, m, s, 'false_yes'))}" for m in (RTN, GPTQ, MOD, IMP))
                   + f"; FP {_mean(metrics.groupby('seed')['fp_false_yes'].first())}"
                   " (RTN reported, not gated).")
    claims.append(c)

    s = "W4A6"
    c = Claim("C4-activation-w4a6",
              "At W4A6, IMPQUANT accuracy >= GPTQ + 2.0 pt, and IMPQUANT >= IMPQ-NOIMP - 0.3 pt.",
              ">=", {"impquant-gptq": 0.02, "impquant-impq-noimp": -0.003}, n_seeds=n_seeds,
              note="check_mean of the paired per-seed accuracy differences.")
    if s in settings:
        d = paired(metrics, IMP, GPTQ, s, "acc")
        if len(d):
            c.add("impquant-gptq", check_mean(d, ">=", 0.02))
        d = paired(metrics, IMP, NOIMP, s, "acc")
        if len(d):
            c.add("impquant-impq-noimp", check_mean(d, ">=", -0.003))
        c.note += (" Mean accuracy: " + ", ".join(
            f"{m} {_mean(col(metrics, m, s, 'acc'))}" for m in (RTN, GPTQ, MOD, NOIMP, IMP))
                   + ".")
        c.note += _room(metrics, s, 0.02)
    claims.append(c)

    c = Claim("C5-weight-diagnostic",
              "The mean ImpQuant weight on background visual tokens is <= 0.5 x the mean weight "
              "on object visual tokens, in every seed.",
              "<=", 0.5, n_seeds=n_seeds,
              note="check_every over seeds of mean w(background) / mean w(object) on the "
                   "calibration set (object patches known from the generator).")
    if len(metrics):
        per = metrics.groupby("seed")[["imp_w_bg", "imp_w_obj"]].first()
        ratio = per["imp_w_bg"] / per["imp_w_obj"]
        c.add("w_bg/w_obj", check_every(ratio, "<=", 0.5))
        c.note += (f" Mean weights: background {per['imp_w_bg'].mean():.3f}, object "
                   f"{per['imp_w_obj'].mean():.3f}.")
        if {"red_bg", "red_obj"} <= set(metrics.columns):
            red = metrics.groupby("seed")[["red_bg", "red_obj"]].first().mean()
            c.note += (f" Why: the mean contextual redundancy r (cosine similarity on the LM "
                       f"input to the {cfg['params']['k_similar']} most similar other visual "
                       f"tokens) is {red['red_bg']:.3f} on background and {red['red_obj']:.3f} "
                       f"on object tokens, so 1 - r on background is "
                       f"{(1 - red['red_bg']) / max(1 - red['red_obj'], 1e-12):.3f} x that on "
                       "objects before the floor and the renormalisation")
            if "bg_at_floor" in metrics.columns:
                c.note += (f"; {metrics.groupby('seed')['bg_at_floor'].first().mean():.3f} of "
                           "background tokens sit at the floor")
            c.note += "."
    claims.append(c)
    return claims
