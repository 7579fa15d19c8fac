"""The spec's four claims (thresholds exactly as written), a sanity check of the spec's premise,
and the premise rows of the report.

How each is checked (fixed before any result was seen); every claim has one part per setting:
1. "mean Pearson correlation with ground truth >= 0.9": check_mean of E2's per-seed Pearson
   correlation over the 22 behaviours x S stages.
2. "E2's correlation exceeds both B1 and B2 by >= 0.1; also E2 >= E1": paired per-seed
   differences of Pearson correlations, check_mean against 0.1, 0.1 and 0.
3. "E2 identifies stage 2 ... in >= 4 of 5 seeds": check_fraction (at_least 0.8) of seeds
   where argmax_s of E2's effect on f_counter is the spurious stage (stage 2; the stage with
   the largest aligned fraction in a recipe).
4. "cleaning the stage chosen by E2 raises worst-group accuracy by >= 10 points over the
   original model and by more than cleaning a random stage (mean over seeds)": check_mean of
   the paired per-seed gains in points, >= 10 and > 0; the random stage is the expectation
   over a uniform choice (the mean of the S cleaned runs).
S. The spec's premise "the true effect argmax is stage 2 by construction": check_every of
   the seeds (a sanity claim: it checks the construction, not the paper).
"""

from __future__ import annotations

import numpy as np

from icml26.claims import Claim, check_every, check_fraction, check_mean

E2, E1, B1, B2, B3 = "e2-trajectory", "e1-decay-delta", "naive-delta", "tracin", "loss-diff"


def _col(metrics, method, setting, col):
    part = metrics[(metrics["method"] == method) & (metrics["setting"] == setting)]
    if col not in part:
        return part.set_index("seed").iloc[:, :0].sum(1) * np.nan
    return part.sort_values("seed").set_index("seed")[col].astype(float)


def _paired(metrics, a, b, setting, col, scale=1.0):
    x, y = _col(metrics, a, setting, col), _col(metrics, b, setting, col)
    seeds = x.index.intersection(y.index)
    return scale * (x.loc[seeds] - y.loc[seeds])


def _mean(s) -> float:
    v = np.asarray(s, dtype=float)
    return float(np.nanmean(v)) if np.isfinite(v).any() else float("nan")


def _settings(cfg, metrics):
    return [s for s in cfg["settings"] if (metrics["setting"] == s).any()]


def premises(cfg, metrics) -> list[dict]:
    """What the spec states as fact, checked against this run (rows for the report)."""
    rows = []
    for s in _settings(cfg, metrics):
        spur = int(_col(metrics, E2, s, "spurious_stage").iloc[0])
        S = len(cfg["settings"][s]["stages"])
        true_arg = _col(metrics, E2, s, "true_argmax_spurious")
        rows.append({"setting": s,
                     "premise (spec)": f"the true effect on f_counter peaks at stage {spur} "
                                       "(by construction)",
                     "measured": f"true argmax stage per seed: "
                                 f"{_col(metrics, E2, s, 'argmax_true').astype(int).tolist()}",
                     "held": _held(true_arg.to_numpy() == 1.0)})
        imm = _col(metrics, B3, s, f"est_counter_s{spur}")
        true = _col(metrics, E2, s, f"true_counter_s{spur}")
        rows.append({"setting": s,
                     "premise (spec)": f"stage {spur} (spurious) raises the counter-group loss "
                                       "while it trains",
                     "measured": f"f_counter(end) - f_counter(start) of stage {spur}: mean "
                                 f"{_mean(imm):.4f}",
                     "held": _held(imm.to_numpy() > 0)})
        undo = (true.to_numpy() > 0) & (true.to_numpy() < imm.to_numpy())
        rows.append({"setting": s,
                     "premise (spec)": f"later stages partially undo stage {spur} "
                                       "(0 < true effect < its immediate effect)",
                     "measured": f"true effect on f_counter: mean {_mean(true):.4f} "
                                 f"(immediate {_mean(imm):.4f}); fully undone or reversed "
                                 f"(true <= 0) in {int((true.to_numpy() <= 0).sum())} of "
                                 f"{len(true)} seeds",
                     "held": _held(undo)})
        dec = [_mean(_col(metrics, E2, s, f"decay_after_s{k}")) for k in range(1, S + 1)]
        rows.append({"setting": s,
                     "premise (spec)": "later weight decay shrinks early-stage contributions",
                     "measured": "D_{>s} per stage: " + ", ".join(f"{d:.4f}" for d in dec),
                     "held": "yes" if dec[0] < 1 else "no"})
        gap = _col(metrics, E2, s, "acc_aligned") - _col(metrics, E2, s, "acc_counter")
        rows.append({"setting": s,
                     "premise (spec, implied)": "the original model relies on the spurious "
                                                "feature (worst-group accuracy well below the "
                                                "aligned group's)",
                     "measured": f"aligned - counter accuracy: mean {100 * _mean(gap):.2f} "
                                 f"points; worst-group accuracy mean "
                                 f"{100 * _mean(_col(metrics, E2, s, 'wga_orig')):.2f}",
                     "held": _held(gap.to_numpy() >= 0.10)})
    for r in rows:   # one column name for both kinds of premise
        if "premise (spec, implied)" in r:
            r["premise (spec)"] = r.pop("premise (spec, implied)") + " [implied]"
    return rows


def _held(ok) -> str:
    ok = np.asarray(ok, bool)
    if ok.all():
        return "yes"
    return "no" if not ok.any() else f"no ({int((~ok).sum())} of {ok.size} seeds)"


def check(cfg: dict, metrics, curves) -> list[Claim]:
    n_seeds = int(metrics["seed"].nunique()) if len(metrics) else 0
    settings = _settings(cfg, metrics)
    claims = []

    c = Claim("C1-e2-tracks-counterfactual",
              "E2 (trajectory-propagated) tracks the counterfactual: its mean Pearson "
              "correlation with the retrained ground-truth stage effects is >= 0.9.",
              ">=", 0.9, n_seeds=n_seeds,
              note="check_mean (95% t-interval over seeds) of the per-seed Pearson correlation "
                   "over all (stage, behaviour) pairs.")
    notes = []
    for s in settings:
        c.add(s, check_mean(_col(metrics, E2, s, "pearson"), ">=", 0.9))
        n_eff = int(_col(metrics, E2, s, "n_effects").iloc[0])
        notes.append(f"{s}: {n_eff} effects per seed; Pearson means "
                     + ", ".join(f"{m} {_mean(_col(metrics, m, s, 'pearson')):.3f}"
                                 for m in cfg["methods"])
                     + "; Spearman means "
                     + ", ".join(f"{m} {_mean(_col(metrics, m, s, 'spearman')):.3f}"
                                 for m in cfg["methods"]))
    c.note += " " + "; ".join(notes) + "."
    claims.append(c)

    c = Claim("C2-dynamics-matter",
              "Optimiser dynamics matter: E2's correlation exceeds both B1 (naive delta) and B2 "
              "(TracIn-style) by >= 0.1, and E2 >= E1 (decay-aware delta).",
              ">= / >= / >=", {"E2-B1": 0.1, "E2-B2": 0.1, "E2-E1": 0.0}, n_seeds=n_seeds,
              note="check_mean of the paired per-seed differences of Pearson correlations.")
    for s in settings:
        for other, label, thr in ((B1, "E2-B1", 0.1), (B2, "E2-B2", 0.1), (E1, "E2-E1", 0.0)):
            c.add(f"{s}:{label}", check_mean(_paired(metrics, E2, other, s, "pearson"), ">=",
                                             thr))
    claims.append(c)

    c = Claim("C3-identifies-spurious-stage",
              "Accountability: E2 identifies stage 2 (the spurious fine-tuning) as the main "
              "contributor to the counter-group loss in >= 4 of 5 seeds.",
              "fraction >=", 0.8, n_seeds=n_seeds,
              note="check_fraction: seeds where argmax_s of E2's effect on f_counter is the "
                   "spurious stage.")
    notes = []
    for s in settings:
        c.add(s, check_fraction(_col(metrics, E2, s, "picks_spurious"), ">=", 1.0, 0.8))
        notes.append(f"{s}: E2 argmax per seed "
                     f"{_col(metrics, E2, s, 'argmax_est').astype(int).tolist()}, true argmax "
                     f"{_col(metrics, E2, s, 'argmax_true').astype(int).tolist()}; "
                     "identification rate (E2 argmax = true argmax) "
                     + ", ".join(f"{m} {_mean(_col(metrics, m, s, 'ident')):.2f}"
                                 for m in cfg["methods"]))
    c.note += " " + "; ".join(notes) + "."
    claims.append(c)

    c = Claim("C4-actionable",
              "Actionable: cleaning the stage chosen by E2 raises worst-group accuracy by >= 10 "
              "points over the original model and by more than cleaning a random stage (mean "
              "over seeds).",
              ">= / >", {"vs_original_points": 10.0, "vs_random_points": 0.0},
              n_seeds=n_seeds,
              note="check_mean of the paired per-seed gains in accuracy points; the random "
                   "stage is the expectation over a uniform choice of stage.")
    notes = []
    for s in settings:
        c.add(f"{s}:vs_original", check_mean(_paired_cols(metrics, s, "wga_chosen", "wga_orig"),
                                             ">=", 10.0))
        c.add(f"{s}:vs_random", check_mean(_paired_cols(metrics, s, "wga_chosen", "wga_random"),
                                           ">", 0.0))
        notes.append(f"{s}: worst-group accuracy (points) original "
                     f"{100 * _mean(_col(metrics, E2, s, 'wga_orig')):.2f}, E2-chosen "
                     f"{100 * _mean(_col(metrics, E2, s, 'wga_chosen')):.2f}, random stage "
                     f"{100 * _mean(_col(metrics, E2, s, 'wga_random')):.2f} (one drawn stage "
                     f"{100 * _mean(_col(metrics, E2, s, 'wga_random_draw')):.2f})")
    c.note += " " + "; ".join(notes) + "."
    claims.append(c)

    c = Claim("S-premise-true-argmax",
              "Premise of the spec: the true effect on the counter-group loss peaks at the "
              "spurious stage (stage 2) in every seed, by construction.",
              ">=", 1.0, category="sanity", n_seeds=n_seeds,
              note="check_every of the indicator true argmax = spurious stage.")
    for s in settings:
        c.add(s, check_every(_col(metrics, E2, s, "true_argmax_spurious"), ">=", 1.0))
    claims.append(c)
    failed = {s: _col(metrics, E2, s, "true_argmax_spurious") for s in settings}
    for s, ok in failed.items():
        bad = [str(k) for k, v in ok.items() if v != 1.0]
        if not bad:
            continue
        spur = int(_col(metrics, E2, s, "spurious_stage").iloc[0])
        true = _col(metrics, E2, s, f"true_counter_s{spur}")
        imm = _col(metrics, B3, s, f"est_counter_s{spur}")
        text = (f" {s}: the spec's premise (true effect on f_counter peaks at stage {spur}) did "
                f"not hold in seeds {', '.join(bad)}; stage {spur} raised f_counter by "
                f"{_mean(imm):.4f} while it trained (mean), but its retrained effect on the "
                f"final model is {_mean(true):.4f} (mean): the later stages undid "
                f"{100 * (1 - _mean(true) / _mean(imm)):.0f}% of it.")
        for cl in claims[2:5]:
            cl.note += text
    return claims


def _paired_cols(metrics, setting, a, b):
    """Per-seed E2 run's column a - column b, in accuracy points."""
    x, y = _col(metrics, E2, setting, a), _col(metrics, E2, setting, b)
    return 100.0 * (x - y)
