"""Claims 1-6 of the spec, thresholds as written.

Statistics (fixed from the wording before any result):
- "for every mediator" (claims 1, 5): one part per mediator or per comparison, all must hold.
- Per-seed quantities (a gap, a paired difference between mediators of the same seed, a mean
  entropy): check_mean, the 95% t-interval over seeds. Mediators of a seed share the data, so
  orderings (claims 3, 5) are paired per-seed differences tested against 0.
- "for >= 3 of the 5 mediators, max/min HM >= 2.0" (claim 2): the ratio of each mediator's
  seed-mean HMs across the four accessibility classes, then the fraction of mediators whose
  ratio is >= 2 (3 of 5 -> 0.6, so it means the same with any number of mediators);
  check_pooled resamples seeds. A smallest HM of exactly 0 makes the ratio +inf (it holds);
  all HMs 0 make it undefined (it does not hold); the note names such mediators.
- "IP is non-increasing in severity (tolerance 0.02) for every mediator and noise class"
  (claim 5): the largest rise of the seed-mean IP curve between consecutive severities over
  every mediator and class (the five classes, generic included), check_pooled over seeds.
Notes are computed from the data at report time.
"""

from __future__ import annotations

import numpy as np

from icml26.claims import Claim, check_mean, check_pooled

from .noise import ACCESS, CLASSES

HM_RATIO = 2.0
MOSTLY = 0.5     # the spec's "garbled motor input mostly triggers clarification": share > 0.5


def _col(metrics, method, col):
    part = metrics[metrics["method"] == method]
    return part.sort_values("seed").set_index("seed")[col].astype(float)


def _diff(metrics, a, b, col):
    x, y = _col(metrics, a, col), _col(metrics, b, col)
    seeds = x.index.intersection(y.index)
    return x.loc[seeds] - y.loc[seeds]


def _has(metrics, *methods):
    return all((metrics["method"] == m).any() for m in methods)


def hm_ratio(hm) -> float:
    """max/min of HM across classes: +inf when the smallest is 0 and the largest is not,
    NaN when every HM is 0."""
    hm = np.asarray(hm, dtype=float)
    lo, hi = hm.min(), hm.max()
    if lo > 0:
        return float(hi / lo)
    return float("inf") if hi > 0 else float("nan")


def hm_table(metrics, methods):
    """(seeds, HM array (seed, mediator, access class)) of the mediators present."""
    seeds = sorted(metrics["seed"].unique())
    arr = np.full((len(seeds), len(methods), len(ACCESS)), np.nan)
    for j, m in enumerate(methods):
        for k, c in enumerate(ACCESS):
            col = _col(metrics, m, f"hm_{c}")
            arr[:, j, k] = col.reindex(seeds).to_numpy(dtype=float)
    return seeds, arr


def ratio_fraction(hm_arr, idx) -> float:
    """Fraction of mediators whose seed-mean HM ratio over the access classes is >= 2."""
    mean = hm_arr[idx].mean(axis=0)              # (mediator, class)
    ratios = np.array([hm_ratio(r) for r in mean])
    return float(np.mean(ratios >= HM_RATIO))      # NaN (every HM 0) does not hold


def ip_curves(cfg, curves, methods):
    """(seeds, severities in percent, IP array (seed, mediator, class, severity))."""
    cur = curves[curves["metric"].str.startswith("ip/")]
    seeds = sorted(cur["seed"].unique())
    steps = sorted(cur["step"].unique())
    arr = np.full((len(seeds), len(methods), len(CLASSES), len(steps)), np.nan)
    for (m, seed, metric, step), v in cur.groupby(
            ["method", "seed", "metric", "step"])["value"].mean().items():
        if m in methods:
            arr[seeds.index(seed), methods.index(m), CLASSES.index(metric.split("/")[1]),
                steps.index(step)] = v
    return seeds, steps, arr


def max_rise(arr, idx) -> float:
    """Largest increase of the seed-mean IP curve between consecutive severities."""
    mean = arr[idx].mean(axis=0)
    return float(np.max(np.diff(mean, axis=-1))) if mean.shape[-1] > 1 else float("nan")


def check(cfg, metrics, curves) -> list[Claim]:
    n = len(cfg["seeds"])
    methods = [m for m in cfg["methods"] if _has(metrics, m)]
    out = []

    c = Claim("C1-overestimation", "Standard metrics overestimate assistive reliability: at "
              "s = 0.3, averaged over the four accessibility classes and languages, task "
              "accuracy - IP >= 0.10 for every mediator.", ">=", 0.10, n_seeds=n)
    for m in methods:
        c.add(f"{m}: acc-IP", check_mean(_col(metrics, m, "gap_access"), ">=", 0.10))
    out.append(c)

    c = Claim("C2-hm-by-noise-type", "Hallucination depends strongly on the noise type: for "
              ">= 3 of the 5 mediators (fraction >= 0.6), max/min of HM across the four "
              "accessibility classes at s = 0.3 is >= 2.0.", ">=", {"frac_mediators": 0.6},
              n_seeds=n)
    if methods:
        seeds, arr = hm_table(metrics, methods)
        ratios = {m: hm_ratio(arr[:, j].mean(axis=0)) for j, m in enumerate(methods)}
        c.add("frac_mediators", check_pooled(lambda idx: ratio_fraction(arr, idx), len(seeds),
                                             ">=", 0.6))
        hi = {m: ACCESS[int(np.argmax(arr[:, j].mean(axis=0)))] for j, m in enumerate(methods)}
        lo = {m: ACCESS[int(np.argmin(arr[:, j].mean(axis=0)))] for j, m in enumerate(methods)}
        c.note = ("Seed-mean HM ratio (max/min over the accessibility classes) per mediator: "
                  + "; ".join(f"{m} {ratios[m]:.3g} (max {hi[m]}, min {lo[m]})"
                              for m in methods) + ".")
        zero = [m for m in methods if ratios[m] == np.inf]
        undef = [m for m in methods if not np.isfinite(ratios[m]) and ratios[m] != np.inf]
        if zero:
            c.note += f" Smallest HM exactly 0 (ratio +inf, counted as holding): {zero}."
        if undef:
            c.note += f" Every HM 0 (ratio undefined, counted as not holding): {undef}."
    out.append(c)

    c = Claim("C3-tradeoff", "Trade-off: at s = 0.3 (mean over accessibility classes), the "
              "mediators sharing one predictor are ordered M4 > M2 > M5 in IP and in HM, and "
              "M4 < M2 < M5 in CB (paired per-seed differences > 0).", ">", 0.0, n_seeds=n)
    if _has(metrics, "M2", "M4", "M5"):
        for label, a, b, col in (("IP M4-M2", "M4", "M2", "ip_access"),
                                 ("IP M2-M5", "M2", "M5", "ip_access"),
                                 ("HM M4-M2", "M4", "M2", "hm_access"),
                                 ("HM M2-M5", "M2", "M5", "hm_access"),
                                 ("CB M2-M4", "M2", "M4", "cb_access"),
                                 ("CB M5-M2", "M5", "M2", "cb_access")):
            c.add(label, check_mean(_diff(metrics, a, b, col), ">", 0.0))
        spread = max(float(np.nanmax(np.abs(_diff(metrics, a, "M2", "acc_access"))))
                     for a in ("M4", "M5"))
        c.note = ("Built in by construction: M2, M4 and M5 share one predictor and differ only "
                  "in thresholds. Task accuracy cannot see the trade-off: its largest per-seed "
                  f"difference between M4 or M5 and M2 is {spread:.3g}.")
    out.append(c)

    c = Claim("C4-generic-not-access", "Generic robustness is not accessibility robustness: "
              "for M2, IP under generic noise at s = 0.3 exceeds its mean IP under the four "
              "accessibility classes at s = 0.3 by >= 0.05.", ">=", 0.05, n_seeds=n)
    if _has(metrics, "M2"):
        d = _col(metrics, "M2", "ip_generic") - _col(metrics, "M2", "ip_access")
        c.add("value", check_mean(d, ">=", 0.05))
        per = {cl: float(_col(metrics, "M2", f"ip_{cl}").mean()) for cl in CLASSES}
        c.note = ("M2's seed-mean IP at s = 0.3 per class: "
                  + ", ".join(f"{cl} {v:.3f}" for cl, v in per.items()) + ".")
        if per["generic"] < float(_col(metrics, "M2", "ip_access").mean()):
            c.note += (" Generic IP is below the accessibility mean here: at the same s the "
                       "generic noise replaces that share of all letters by random ones, "
                       "a harsher corruption than the word-level speech and cognitive classes; "
                       "the claim depends on how severity is calibrated across classes "
                       "(INFERRED in the spec).")
    out.append(c)

    c = Claim("C5-curves", "Sensitivity curves are well behaved: IP is non-increasing in "
              "severity (tolerance 0.02) for every mediator and noise class, and among M1, M2, "
              "M3 the accessibility-aware M3 has the highest mean IP over accessibility classes "
              "at s = 0.3.", "<= (largest rise), > (M3 - other)",
              {"max_rise": 0.02, "M3-M1": 0.0, "M3-M2": 0.0}, n_seeds=n)
    if methods and len(curves):
        seeds, steps, arr = ip_curves(cfg, curves, methods)
        c.add("max_rise", check_pooled(lambda idx: max_rise(arr, idx), len(seeds), "<=", 0.02))
        mean = arr.mean(axis=0)
        rise = np.diff(mean, axis=-1) if mean.shape[-1] > 1 else np.zeros((0,))
        if rise.size:
            j, k, s = np.unravel_index(int(np.argmax(rise)), rise.shape)
            c.note = (f"Largest rise of a seed-mean IP curve: {methods[j]}, {CLASSES[k]}, "
                      f"severity {steps[s] / 100:g} -> {steps[s + 1] / 100:g}.")
    for other in ("M1", "M2"):
        if _has(metrics, "M3", other):
            c.add(f"M3-{other}", check_mean(_diff(metrics, "M3", other, "ip_access"), ">", 0.0))
    out.append(c)

    c = Claim("C6-entropy", "Bounded decision entropy: the mean normalised decision entropy "
              "over all (mediator, class, severity) cells is < 0.81 (per seed, mean over "
              "cells).", "<", 0.81, n_seeds=n)
    if methods:
        ent = metrics[metrics["method"].isin(methods)].groupby("seed")["entropy_mean"].mean()
        c.add("value", check_mean(ent.astype(float), "<", 0.81))
        per = {m: float(_col(metrics, m, "entropy_mean").mean()) for m in methods}
        c.note = ("Seed-mean entropy per mediator (mean over its cells): "
                  + ", ".join(f"{m} {v:.3f}" for m, v in per.items()) + ".")
    out.append(c)
    return out


def premises(cfg, metrics, curves) -> list[dict]:
    """What the spec states as fact, checked against the run with readings fixed here."""
    rows = []
    card = curves[curves["metric"].str.startswith("card/")]

    def cardval(name):
        v = card[card["metric"] == f"card/{name}"].groupby("seed")["value"].first()
        return v.astype(float)

    rw = {c: cardval(f"real_word_rate/{c}") for c in CLASSES}
    if len(rw["speech"]):
        rows.append({"premise (spec)": "speech-recognition errors are real words",
                     "measured": "share of lexicon words among the noisy words at s = 0.3: "
                                 + ", ".join(f"{c} {rw[c].mean():.3f}" for c in CLASSES
                                             if len(rw[c])),
                     "reading": "speech: 1.0 in every seed",
                     "held": "yes" if bool((rw["speech"] == 1.0).all()) else "no"})
    dm = [m for m in ("M1", "M2", "M3") if _has(metrics, m)]
    if dm:
        ask = {m: float(_col(metrics, m, "ask_motor").mean()) for m in dm}
        rows.append({"premise (spec)": "garbled motor input mostly triggers clarification "
                                       "(default thresholds)",
                     "measured": "share of clarify or decline under motor noise at s = 0.3: "
                                 + ", ".join(f"{m} {v:.3f}" for m, v in ask.items()),
                     "reading": f"> {MOSTLY} for each of M1, M2, M3 (seed mean)",
                     "held": "yes" if all(v > MOSTLY for v in ask.values()) else "no"})
        hs = {m: (float(_col(metrics, m, "hm_speech").mean()),
                  float(_col(metrics, m, "hm_motor").mean())) for m in dm}
        rows.append({"premise (spec)": "real-word substitutions from speech errors produce "
                                       "confident wrong slots",
                     "measured": "HM speech vs motor at s = 0.3: "
                                 + ", ".join(f"{m} {a:.3f} vs {b:.3f}"
                                             for m, (a, b) in hs.items()),
                     "reading": "HM(speech) > HM(motor) for each of M1, M2, M3 (seed mean)",
                     "held": "yes" if all(a > b for a, b in hs.values()) else "no"})
    from .world import N_VALUES, SLOT_TYPES
    seen = {t: cardval(f"values_seen_in_train/{t}") for t in SLOT_TYPES}
    if len(seen["time"]):
        ok = all(bool((seen[t] == N_VALUES[t]).all()) for t in SLOT_TYPES)
        tpl = card[card["metric"].str.startswith("card/templates_seen_in_train/")]["value"]
        ok_t = bool((tpl == 24).all()) if len(tpl) else False
        rows.append({"premise (spec)": "every slot value and template occurs in training",
                     "measured": f"values seen: all {sum(N_VALUES.values())} in every seed: "
                                 f"{'yes' if ok else 'no'}; (action, template) pairs per "
                                 f"language: {int(tpl.min()) if len(tpl) else 0}-"
                                 f"{int(tpl.max()) if len(tpl) else 0} of 24",
                     "reading": "all values and all 24 (action, template) pairs, every "
                                "language and seed",
                     "held": "yes" if ok and ok_t else "no"})
    loss = curves[curves["metric"] == "train_loss"]
    if len(loss):
        last = loss.groupby(["method", "seed"])["value"].apply(lambda v: v.iloc[-1])
        prev = loss.groupby(["method", "seed"])["value"].apply(
            lambda v: v.iloc[-2] if len(v) > 1 else np.nan)
        rel = ((prev - last) / prev).astype(float).to_numpy()
        rel = rel[np.isfinite(rel)]
        drop = (f"{rel.min():.3f}-{rel.max():.3f}" if rel.size
                else "not measurable (one logged block)")
        rows.append({"premise (spec)": "the intent predictors are fitted (trained "
                                       "classifiers)",
                     "measured": f"final training loss (sum of six heads) "
                                 f"{last.min():.3f}-{last.max():.3f}; relative drop over the "
                                 f"last logged block {drop}",
                     "reading": "relative drop over the last block < 0.1 (flat curve)",
                     "held": "yes" if rel.size and bool(rel.max() < 0.1) else "no"})
    return rows
