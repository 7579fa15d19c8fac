"""The spec's four claims, thresholds exactly as written, plus two sanity checks.

Statistic per claim, fixed from the spec's wording before any result was seen:
- C1 "AUROC >= 0.75 (mean over 3 seeds) and >= 0.65 in every seed": check_mean on the per-seed
  white-box Telescope AUROC, and check_every.
- C2 "Telescope >= LogLik - 0.02 and >= Entropy - 0.02, white-box, mean over seeds": paired
  per-seed differences AUROC(Telescope) - AUROC(baseline), check_mean >= -0.02. Black-box
  numbers, Binoculars and Fast-DetectGPT are reported in the note, without a threshold.
- C3 "1 forward pass of 1 model (Binoculars 2 models) and measured scoring time <= 0.6 x
  Binoculars'": the counted passes / models are single numbers (check_value); the time ratio
  CPU(Telescope) / CPU(Binoculars) is a per-seed quantity, check_mean <= 0.6 in each setting
  where both were run (the claim names no setting, so it must hold in every one).
- C4 "A <= 0.5 at the 20% checkpoint and at every later checkpoint (all seeds)": check_every
  over seeds, one part per checkpoint fraction >= 0.2, black-box scorer S.
Sanity (category "sanity"): the spec's expected direction (machine text has larger log TPPL and
smaller log PPL under G) as paired per-seed differences, check_mean; and the corpus statistic
behind claim 4 (empirical immediate-repetition rate below the unigram-implied rate), a pooled
number, check_value.
"""

from __future__ import annotations

import numpy as np

from icml26.claims import Claim, check_every, check_mean, check_value

TEL, RAW, LL, ENT, BINO, FDG = ("Telescope", "Telescope-raw", "LogLik", "Entropy", "Binoculars",
                                "Fast-DetectGPT")
WHITE, BLACK = "white-box", "black-box"


def per_seed(metrics, method: str, setting: str, column: str):
    """pandas Series seed -> value of one run's metric (empty if absent)."""
    part = metrics[(metrics["method"] == method) & (metrics["setting"] == setting)]
    return part.set_index("seed")[column].sort_index().astype(float)


def paired(metrics, a: str, b: str, setting: str, column: str = "auroc", op: str = "-"):
    """Per-seed a - b (or a / b) over the seeds where both runs exist."""
    x, y = per_seed(metrics, a, setting, column), per_seed(metrics, b, setting, column)
    seeds = x.index.intersection(y.index)
    return (x[seeds] - y[seeds]) if op == "-" else (x[seeds] / y[seeds])


def _fmt(values) -> str:
    v = np.asarray(values, float)
    if v.size == 0:
        return "n/a"
    return f"{v.mean():.3f}" + (f" ± {v.std(ddof=1):.3f}" if v.size > 1 else "")


def checkpoint_A(curves, setting: str = BLACK):
    """DataFrame seed x checkpoint fraction of the aversion index A of the scorer S."""
    c = curves[(curves["setting"] == setting) & (curves["metric"].isin(["ckpt_A", "ckpt_frac"]))]
    if not len(c):
        return None
    c = c.drop_duplicates(["seed", "step", "metric"])
    wide = c.pivot_table(index=["seed", "step"], columns="metric", values="value").reset_index()
    return wide.pivot_table(index="seed", columns="ckpt_frac", values="ckpt_A")


def check(cfg: dict, metrics, curves) -> list[Claim]:
    n_seeds = int(metrics["seed"].nunique()) if len(metrics) else 0
    settings = list(cfg["settings"])
    claims = []

    # 1. headline -----------------------------------------------------------------------------
    c = Claim("C1-headline",
              "Telescope detects zero-shot: white-box Telescope AUROC >= 0.75 (mean over seeds) "
              "and >= 0.65 in every seed.",
              ">=", {"mean": 0.75, "every seed": 0.65}, n_seeds=n_seeds)
    a = per_seed(metrics, TEL, WHITE, "auroc")
    c.add("mean", check_mean(a.to_numpy(), ">=", 0.75))
    c.add("every seed", check_every(a.to_numpy(), ">=", 0.65))
    c.note = (f"white-box Telescope AUROC per seed: {np.round(a.to_numpy(), 3).tolist()}; "
              f"Telescope-raw {_fmt(per_seed(metrics, RAW, WHITE, 'auroc'))}; black-box "
              f"Telescope {_fmt(per_seed(metrics, TEL, BLACK, 'auroc'))}. Orientation fixed "
              "a priori (lower log PPL / log TPPL -> machine).")
    claims.append(c)

    # 2. competitive --------------------------------------------------------------------------
    c = Claim("C2-competitive",
              "White-box, mean over seeds: AUROC(Telescope) >= AUROC(LogLik) - 0.02 and "
              ">= AUROC(Entropy) - 0.02 (paired per-seed differences).",
              ">=", -0.02, n_seeds=n_seeds)
    for base in (LL, ENT):
        c.add(f"Telescope - {base}", check_mean(paired(metrics, TEL, base, WHITE).to_numpy(),
                                                ">=", -0.02))
    report = []
    for s in (WHITE, BLACK):
        if s in settings:
            report.append(s + ": " + ", ".join(
                f"{m} {_fmt(per_seed(metrics, m, s, 'auroc'))}"
                for m in cfg["methods"]))
    c.note = "AUROC mean ± s.d. over seeds (reported without threshold) — " + "; ".join(report)
    claims.append(c)

    # 3. cheaper than Binoculars ---------------------------------------------------------------
    c = Claim("C3-cost",
              "Telescope uses 1 forward pass of 1 model (Binoculars: 2 models) and its measured "
              "scoring CPU time is <= 0.6 x Binoculars' time (per-seed ratio, every setting).",
              "<=", {"Telescope passes": 1, "Telescope models": 1, "Binoculars models >=": 2,
                     "time ratio": 0.6}, n_seeds=n_seeds, timing=True)
    tel = metrics[metrics["method"] == TEL]
    bino = metrics[metrics["method"] == BINO]
    c.add("Telescope passes", check_value(tel["forward_passes"].max(), "<=", 1))
    c.add("Telescope models", check_value(tel["models"].max(), "<=", 1))
    c.add("Binoculars models >=", check_value(bino["models"].min(), ">=", 2))
    ratios = {}
    for s in settings:
        r = paired(metrics, TEL, BINO, s, "cpu_s", op="/")
        if len(r):
            ratios[s] = r
            c.add(f"time ratio {s}", check_mean(r.to_numpy(), "<=", 0.6))
    prm = cfg["params"]
    c.note = ("process_time of each detector end to end (its own forward passes + statistic) "
              f"on {prm['time_texts']} human + {prm['time_texts']} machine texts, minimum of "
              f"{prm['time_repeats']} repeat(s); a timing claim, noisy on a shared machine. "
              "Ratios: "
              + "; ".join(f"{s}: {np.round(r.to_numpy(), 3).tolist()}" for s, r in ratios.items())
              + ". CPU s per 100 texts: " + ", ".join(
                  f"{m} {_fmt(per_seed(metrics, m, BLACK, 'cpu_s_per_100'))}"
                  for m in cfg["methods"] if BLACK in settings))
    claims.append(c)

    # 4. aversion emerges early ----------------------------------------------------------------
    c = Claim("C4-aversion-early",
              "On human text the aversion index A of scorer S is <= 0.5 at the 20% checkpoint "
              "and at every later checkpoint, in every seed.",
              "<=", 0.5, n_seeds=n_seeds)
    table = checkpoint_A(curves)
    if table is not None:
        for frac in [f for f in table.columns if f >= 0.2 - 1e-9]:
            c.add(f"{int(round(frac * 100))}%", check_every(table[frac].dropna().to_numpy(),
                                                           "<=", 0.5))
        c.note = ("A = mean tau_i / mean u(s_i) per checkpoint (mean over seeds): "
                  + ", ".join(f"{int(round(f * 100))}%: {table[f].mean():.3f}"
                              for f in table.columns)
                  + ". An untrained (near-uniform) model has A ~ (1/V)/mean u << 1, so the "
                  "early checkpoints pass trivially; a unigram-level model has A ~ 1.")
    claims.append(c)

    # sanity: expected direction ---------------------------------------------------------------
    c = Claim("S1-direction",
              "Expected mechanism (white-box): machine text has larger log TPPL and smaller "
              "log PPL than human text (paired per-seed differences of the means).",
              ">", 0.0, category="sanity", n_seeds=n_seeds)
    t = per_seed(metrics, TEL, WHITE, "log_tppl_machine") - \
        per_seed(metrics, TEL, WHITE, "log_tppl_human")
    p = per_seed(metrics, TEL, WHITE, "log_ppl_human") - \
        per_seed(metrics, TEL, WHITE, "log_ppl_machine")
    c.add("log TPPL machine - human", check_mean(t.to_numpy(), ">", 0.0))
    c.add("log PPL human - machine", check_mean(p.to_numpy(), ">", 0.0))
    claims.append(c)

    # sanity: corpus repetition statistic ------------------------------------------------------
    c = Claim("S2-corpus-repeats",
              "Immediate repeats are rarer in the training corpus than its unigram frequencies "
              "imply (spec: ~0.65% vs ~1.7%).",
              "<", 1.0, category="sanity", n_seeds=n_seeds)
    emp, uni = float(metrics["corpus_rep_rate"].mean()), float(metrics["unigram_rep_rate"].mean())
    c.add("empirical / unigram rate", check_value(emp / uni if uni > 0 else np.nan, "<", 1.0))
    c.note = f"empirical rate {emp:.4f}, unigram-implied rate {uni:.4f}"
    claims.append(c)
    return claims
