"""The spec's four claims, thresholds exactly as written, plus two sanity checks.

Telescope is the authors' statistic, log TPPL with higher -> machine (ChrisNassif/Telescope:
llm_text_detectors.py ``_compute_telescope_perplexity``; orientation from
scripts/compute_roc_and_f1score_from_metrics.py); the spec's INFERRED ratio log PPL / log TPPL is
the labelled variant Telescope-ratio, reported in the notes. Machine text is sampled as the
authors sampled theirs (T 1.0, no nucleus); the spec's sampling is the variant setting
white-box-spec-sampling, reported in the notes.

Statistic per claim, fixed from the spec's wording before any result was seen:
- C1 "AUROC >= 0.75 (mean over 3 seeds) and >= 0.65 in every seed": check_mean on the per-seed
  white-box Telescope AUROC, and check_every.
- C2 "Telescope >= LogLik - 0.02 and >= Entropy - 0.02, white-box, mean over seeds": paired
  per-seed differences AUROC(Telescope) - AUROC(baseline), check_mean >= -0.02. Black-box
  numbers, Binoculars, Fast-DetectGPT and DetectLLM LRR are reported in the note, without a
  threshold.
- C3 "1 forward pass of 1 model (Binoculars 2 models) and measured scoring time <= 0.6 x
  Binoculars'": the counted passes / models are single numbers (check_value); the time ratio
  CPU(Telescope) / CPU(Binoculars) is a per-seed quantity, check_mean <= 0.6 in each setting
  where both were run (the claim names no setting, so it must hold in every one).
- C4 "A <= 0.5 at the 20% checkpoint and at every later checkpoint (all seeds)": check_every
  over seeds, one part per checkpoint fraction >= 0.2, black-box scorer S. The spec's reason
  ("a causal LM learns bigram statistics within the first few hundred steps") is a premise
  checked in the run: an untrained, near-uniform scorer has A ~ (1/V) / mean u << 1 and passes
  "A <= 0.5" trivially. So each of those checkpoints also needs the scorer to have left the
  unigram plateau: its validation loss below the cross-entropy of the training unigram
  distribution on the same validation tokens (both computed in the run), check_mean of the
  per-seed difference < 0 (the 95% interval must lie below 0, so "clearly below"). The authors'
  own emergence measurement (log TPPL, under the final S, of text sampled by G's checkpoints)
  has no threshold in their code; the note reports it.
Sanity (category "sanity"): the spec's expected direction (machine text has larger log TPPL and
smaller log PPL under G) as paired per-seed differences, check_mean; and the corpus statistic
behind claim 4 (empirical immediate-repetition rate below the unigram-implied rate), a ratio of
means pooled over seeds, check_pooled (bootstrap over seeds: each seed has its own split).
"""

from __future__ import annotations

import numpy as np

from icml26.claims import Claim, check_every, check_mean, check_pooled, check_value

TEL, RATIO, LL, ENT, BINO, FDG = ("Telescope", "Telescope-ratio", "LogLik", "Entropy",
                                  "Binoculars", "Fast-DetectGPT")
WHITE, BLACK, SPEC = "white-box", "black-box", "white-box-spec-sampling"


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


def checkpoint_table(curves, metric: str = "ckpt_A", setting: str = BLACK):
    """DataFrame seed x checkpoint fraction of a checkpoint metric of the scorer S (ckpt_A:
    the aversion index; ckpt_val_loss: the validation loss)."""
    c = curves[(curves["setting"] == setting) & (curves["metric"].isin([metric, "ckpt_frac"]))]
    if not len(c) or metric not in set(c["metric"]):
        return None
    c = c.drop_duplicates(["seed", "step", "metric"])
    wide = c.pivot_table(index=["seed", "step"], columns="metric", values="value",
                         dropna=False).reset_index()
    return wide.pivot_table(index="seed", columns="ckpt_frac", values=metric, dropna=False)


def _share(part, whole) -> str:
    """Pooled share sum(part) / sum(whole) over seeds, as a percentage."""
    den = float(np.sum(whole))
    return f"{100 * float(np.sum(part)) / den:.0f}%" if den > 0 else "n/a"


def gen_checkpoint_table(curves, setting: str = BLACK):
    """The authors' emergence measurement: (DataFrame seed x fraction of G's steps of the mean
    log TPPL under the final S of G-checkpoint samples, Series seed -> the same of the human
    continuations), or None."""
    names = ["gen_ckpt_frac", "gen_ckpt_log_tppl", "gen_ckpt_log_tppl_human"]
    c = curves[(curves["setting"] == setting) & curves["metric"].isin(names)]
    if not len(c) or "gen_ckpt_log_tppl" not in set(c["metric"]):
        return None
    wide = c.drop_duplicates(["seed", "step", "metric"]).pivot_table(
        index=["seed", "step"], columns="metric", values="value", dropna=False).reset_index()
    m = wide.pivot_table(index="seed", columns="gen_ckpt_frac", values="gen_ckpt_log_tppl")
    h = wide.groupby("seed")["gen_ckpt_log_tppl_human"].first()
    return m, h


def checkpoint_A(curves, setting: str = BLACK):
    """DataFrame seed x checkpoint fraction of the aversion index A of the scorer S."""
    return checkpoint_table(curves, "ckpt_A", setting)


def final_val_loss(curves, role: str):
    """Per seed: the last validation loss of model ``role`` (G, S, P), or an empty Series."""
    import pandas as pd

    c = curves[curves["metric"] == f"val_loss_{role}"]
    if not len(c):
        return pd.Series(dtype=float)
    c = c.drop_duplicates(["seed", "step"]).sort_values(["seed", "step"])
    return c.groupby("seed")["value"].last()


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
    c.add("mean", check_mean(a, ">=", 0.75))
    c.add("every seed", check_every(a, ">=", 0.65))
    note = (f"white-box Telescope (log TPPL) AUROC per seed: {np.round(a.to_numpy(), 3).tolist()}"
            f"; black-box Telescope {_fmt(per_seed(metrics, TEL, BLACK, 'auroc'))}; "
            f"variant Telescope-ratio (the spec's INFERRED log PPL / log TPPL, lower -> machine) "
            f"white-box {_fmt(per_seed(metrics, RATIO, WHITE, 'auroc'))}.")
    if SPEC in settings:
        note += (" With the spec's sampling (T 0.9, nucleus 0.95; variant setting), white-box "
                 f"Telescope {_fmt(per_seed(metrics, TEL, SPEC, 'auroc'))}, Telescope-ratio "
                 f"{_fmt(per_seed(metrics, RATIO, SPEC, 'auroc'))}.")
    c.note = note + (" Orientation fixed a priori, the authors': higher log TPPL -> machine "
                     "(AUROC < 0.5: machine text has the lower log TPPL; see S1).")
    claims.append(c)

    # 2. competitive --------------------------------------------------------------------------
    c = Claim("C2-competitive",
              "White-box, mean over seeds: AUROC(Telescope) >= AUROC(LogLik) - 0.02 and "
              ">= AUROC(Entropy) - 0.02 (paired per-seed differences).",
              ">=", -0.02, n_seeds=n_seeds)
    for base in (LL, ENT):
        c.add(f"Telescope - {base}", check_mean(paired(metrics, TEL, base, WHITE), ">=", -0.02))
    report = []
    for s in (WHITE, BLACK, SPEC):
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
            c.add(f"time ratio {s}", check_mean(r, "<=", 0.6))
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
              "and at every later checkpoint, in every seed; the spec's premise that S has "
              "learned more than unigram statistics there is checked: its validation loss lies "
              "below the unigram cross-entropy (mean over seeds, 95% interval).",
              "<=", {"A": 0.5, "val loss - unigram cross-entropy": 0.0}, n_seeds=n_seeds)
    table = checkpoint_A(curves)
    losses = checkpoint_table(curves, "ckpt_val_loss")
    uni = metrics.drop_duplicates("seed").set_index("seed")["unigram_xent"].astype(float) \
        if "unigram_xent" in metrics else None
    if table is not None:
        later = [f for f in table.columns if f >= 0.2 - 1e-9]
        for frac in later:
            c.add(f"{int(round(frac * 100))}%", check_every(table[frac], "<=", 0.5))
        if losses is not None and uni is not None:
            for frac in later:
                gap = losses[frac] - uni.reindex(losses.index)
                c.add(f"S past unigram at {int(round(frac * 100))}%",
                      check_mean(gap, "<", 0.0))
        note = ("A = mean tau_i / mean u(s_i) per checkpoint (mean over seeds): "
                + ", ".join(f"{int(round(f * 100))}%: {table[f].mean():.3f}"
                            for f in table.columns) + ".")
        if losses is not None and uni is not None:
            s_final = final_val_loss(curves, "S")
            note += (" Validation loss of S minus the unigram cross-entropy "
                     f"({uni.mean():.3f} nats), mean over seeds: "
                     + ", ".join(f"{int(round(f * 100))}%: {(losses[f] - uni).mean():+.3f}"
                                 for f in losses.columns)
                     + (f"; final S loss {s_final.mean():.3f}" if len(s_final) else "")
                     + ". An untrained (near-uniform) model has A ~ (1/V)/mean u << 1, so "
                     "\"A <= 0.5\" alone holds trivially before S has learned any statistics; "
                     "the parts 'S past unigram' test the spec's premise that it has.")
            early = [f for f in later if not (losses[f] - uni).mean() < 0]
            if early:
                note += (" The premise fails here: at "
                         + ", ".join(f"{int(round(f * 100))}%" for f in early)
                         + " S is not below the unigram plateau on average, so A <= 0.5 "
                         "there is not the learned repeat aversion the claim is about.")
        gen = gen_checkpoint_table(curves)
        if gen is not None:
            m, h = gen
            note += (" The authors' own measurement (reported, no threshold): mean log TPPL under "
                     "the fully trained S of text sampled by G's checkpoints (T 0.7, nucleus "
                     "0.9), mean over seeds: "
                     + ", ".join(f"{int(round(f * 100))}%: {m[f].mean():.3f}" for f in m.columns)
                     + f"; the same passages' human text: {h.mean():.3f}.")
            above = [f for f in m.columns if m[f].mean() > h.mean()]
            note += (" The samples' log TPPL lies above the human text's (the paper's "
                     f"direction) at {len(above)} of {len(m.columns)} checkpoints"
                     + (" (" + ", ".join(f"{int(round(f * 100))}%" for f in above) + ")"
                        if above else "") + ".")
        c.note = note
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
    c.add("log TPPL machine - human", check_mean(t, ">", 0.0))
    c.add("log PPL human - machine", check_mean(p, ">", 0.0))
    if {"rep_human", "rep_machine"} <= set(metrics.columns):
        rh, rm = (per_seed(metrics, TEL, WHITE, k) for k in ("rep_human", "rep_machine"))
        c.note = (f"immediate-repeat rate of the scored tokens, mean over seeds: human "
                  f"{rh.mean():.4f}, machine (sampled from G) {rm.mean():.4f}")
        shares = []
        for name, label in (("pipe", "'| |' (grid-table pipes)"), ("unk", "'<unk> <unk>'")):
            cols = [f"rep_{name}_human", f"rep_{name}_machine"]
            if set(cols) <= set(metrics.columns):
                ph, pm = (per_seed(metrics, TEL, WHITE, k) for k in cols)
                shares.append(f"{label} {_share(ph, rh)} of the human and {_share(pm, rm)} of "
                              "the machine repeats")
        if shares:
            c.note += "; of them " + "; ".join(shares)
    claims.append(c)

    # sanity: corpus repetition statistic ------------------------------------------------------
    c = Claim("S2-corpus-repeats",
              "Immediate repeats are rarer in the training corpus than its unigram frequencies "
              "imply (spec: ~0.65% vs ~1.7%).",
              "<", 1.0, category="sanity", n_seeds=n_seeds)
    per = metrics.drop_duplicates("seed").set_index("seed").sort_index()
    emp_s = per["corpus_rep_rate"].astype(float).to_numpy()
    uni_s = per["unigram_rep_rate"].astype(float).to_numpy()

    def ratio(idx):
        den = uni_s[idx].mean()
        return emp_s[idx].mean() / den if den > 0 else np.nan

    c.add("empirical / unigram rate", check_pooled(ratio, len(per), "<", 1.0))
    c.note = (f"empirical rate {emp_s.mean():.4f}, unigram-implied rate {uni_s.mean():.4f} "
              "(means over seeds; each seed has its own topic split)")
    if {"corpus_rep_pipe", "corpus_rep_unk"} <= set(per.columns):
        emp = per["corpus_rep_rate"].astype(float)
        c.note += (f"; of the corpus' repeats, '| |' (grid-table pipes) are "
                   f"{_share(per['corpus_rep_pipe'].astype(float), emp)} and '<unk> <unk>' "
                   f"{_share(per['corpus_rep_unk'].astype(float), emp)}")
    claims.append(c)
    return claims
