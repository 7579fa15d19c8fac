"""Claims 1-5 of the spec, thresholds as written.

Statistics (decided from the wording before any result): "mean over 5 seeds" comparisons
between two methods are paired per seed (same data and init) and checked with check_mean on
the per-seed difference (A - B >= thr); "calibration error <= c x local-only" is the paired
difference A - c B <= 0 (the same as mean(A) <= c mean(B)), check_mean; "in at least 4 of 5
seeds" is the fraction of seeds with w >= 0.8, check_fraction with at_least = 0.8 (so it
means the same at 20 seeds). Notes state what the data show, computed at report time; the
lambda = 10 rerun of claim 5 is a side experiment outside the pipeline (side_lambda.py).

Selection and premises. No hyper-parameter of this paper is picked from a grid (lambda is the
spec's fixed 1); the one value chosen on validation data is the early-stopping epoch, under the
grid-edge rule (net.extend_caps). Each note says which of the runs it reads had their epoch cap
extended and which choices are still on the edge after the cap. ``premises`` checks what the
spec states as fact against the run, with readings fixed here: "~" is within ABOUT of the
stated value, "exponentially small weight" is a weight <= SMALL_WEIGHT.
"""

from __future__ import annotations

import numpy as np

from icml26.claims import Claim, check_fraction, check_mean

ABOUT = 0.25         # the spec's "~ v": within 25% of v
SMALL_WEIGHT = 0.01  # "misspecified teachers get exponentially small weight": w <= 0.01


def _col(metrics, method, setting, col):
    part = metrics[(metrics["method"] == method) & (metrics["setting"] == setting)]
    return part.sort_values("seed").set_index("seed")[col]


def _paired(metrics, a, b, setting, col, scale=1.0):
    """Per-seed a - scale * b, a Series indexed by seed (a failed run is named by its seed)."""
    x, y = _col(metrics, a, setting, col), _col(metrics, b, setting, col)
    seeds = x.index.intersection(y.index)
    return (x.loc[seeds] - scale * y.loc[seeds]).astype(float)


def _mean(metrics, method, setting, col):
    """Seed mean of one column (NaN when absent); for the notes only."""
    x = _col(metrics, method, setting, col).to_numpy(dtype=float) if col in metrics else []
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x)]
    return float(x.mean()) if x.size else float("nan")


def _has(metrics, setting, *methods):
    return all(((metrics["method"] == m) & (metrics["setting"] == setting)).any()
               for m in methods)


def _runs_of(metrics, methods, settings):
    part = metrics[metrics["method"].isin(methods) & metrics["setting"].isin(settings)]
    if "local-only" in methods:   # one model per seed, reported in every setting: count once
        loc = part[part["method"] == "local-only"]
        part = part[(part["method"] != "local-only")
                    | (part["setting"] == (loc["setting"].iloc[0] if len(loc) else None))]
    return part


def epoch_status(cfg, metrics, methods, settings) -> dict | None:
    """The early-stopping epoch choice of the runs of ``methods`` in ``settings`` (local-only
    once per seed): which were extended by the grid-edge rule and which are still on the edge
    (best epoch = final cap) after it. None when the metrics have no epoch columns."""
    if "best_epoch" not in metrics:
        return None
    part = _runs_of(metrics, methods, settings)
    best = part["best_epoch"].to_numpy(dtype=float)
    cap = part["epoch_cap"].to_numpy(dtype=float)
    spec = np.where(part["method"] == "teacher-only", float(cfg["params"]["teacher_epochs"]),
                    float(cfg["params"]["epochs"]))
    names = [f"{m} {s} seed {d}" for m, s, d in zip(part["method"], part["setting"],
                                                    part["seed"], strict=True)]
    ext = cap > spec
    edge = best >= cap
    return {"n": len(part),
            "extended": [f"{n} (cap {int(c)}, best {int(b)})"
                         for n, c, b, e in zip(names, cap, best, ext, strict=True) if e],
            "edge": [n for n, e in zip(names, edge, strict=True) if e]}


def teacher_fits(metrics) -> list[dict]:
    """One row per (teacher type, seed) that the run trained: its best epoch and final cap."""
    out = []
    for t in ("compatible", "incompatible", "coarse"):
        col = f"teacher_best_epoch_{t}"
        if col not in metrics:
            continue
        part = metrics[metrics[col].notna()].drop_duplicates("seed").sort_values("seed")
        out += [{"teacher": t, "seed": int(d), "best_epoch": float(b), "epoch_cap": float(c)}
                for d, b, c in zip(part["seed"], part[col], part[f"teacher_epoch_cap_{t}"],
                                   strict=True)]
    return out


def _epoch_note(cfg, metrics, methods, settings) -> str:
    st = epoch_status(cfg, metrics, methods, settings)
    if st is None or not st["n"]:
        return ""
    ext = "; ".join(st["extended"]) if st["extended"] else "none"
    edge = ", ".join(st["edge"]) if st["edge"] else "none"
    return (f" Early-stopping epoch (grid-edge rule, cap doubled at most twice) of the "
            f"{st['n']} runs read here: extended: {ext}; still on the edge after the cap: "
            f"{edge}.")


def _weight_note(metrics, setting) -> str:
    """The spec's premise that a misspecified teacher gets exponentially small weight."""
    part = metrics[(metrics["method"] == "diskd") & (metrics["setting"] == setting)]
    if "w_incompatible" not in part or not part["w_incompatible"].notna().any():
        return ""
    w = part.set_index("seed")["w_incompatible"].astype(float)
    big = w[~(w <= SMALL_WEIGHT)]
    txt = (f" Premise 'a misspecified teacher gets exponentially small weight' (read as w <= "
           f"{SMALL_WEIGHT:g}): DiSKD's weight on it in {setting} is <= {SMALL_WEIGHT:g} in "
           f"{len(w) - len(big)} of {len(w)} seeds")
    if len(big):
        txt += ("; it did not hold in seeds " + ", ".join(
            f"{int(s)} (w = {v:.3g})" for s, v in big.items())
            )
    return txt + "."


def premises(cfg, metrics) -> list[dict]:
    """What the spec states as fact, checked against this run (rows for the report)."""
    rows = []
    seeds = metrics.drop_duplicates("seed")

    def about(x, v):
        return bool(np.isfinite(x) and abs(x - v) <= ABOUT * v)

    if "true_cif1_T" in seeds:
        c1, c2 = float(seeds["true_cif1_T"].mean()), float(seeds["true_cif2_T"].mean())
        rows.append({"premise (spec)": "rare events: CIF_1(10) ~ 0.08, CIF_2(10) ~ 0.05",
                     "measured": f"test-set mean true CIF_1(T) {c1:.4f}, CIF_2(T) {c2:.4f} "
                                 "(mean over seeds)",
                     "reading": f"each within {ABOUT:.0%} of the stated value",
                     "held": "yes" if about(c1, 0.08) and about(c2, 0.05) else "no"})
    if "n_events1_train" in seeds:
        ev = seeds["n_events1_train"].astype(float)
        target = 40.0 * float(cfg["params"]["n_train"]) / 500.0
        rows.append({"premise (spec)": "~40 local cause-1 events (n = 500 training subjects)",
                     "measured": f"observed cause-1 events in the local training cohort: mean "
                                 f"{ev.mean():.1f} (min {ev.min():.0f}, max {ev.max():.0f}) over "
                                 "seeds",
                     "reading": f"seed mean within {ABOUT:.0%} of {target:g} (40 x n_train/500)",
                     "held": "yes" if about(float(ev.mean()), target) else "no"})
    for setting in ("S2", "S3"):
        part = metrics[(metrics["method"] == "diskd") & (metrics["setting"] == setting)]
        if "w_incompatible" not in part or not part["w_incompatible"].notna().any():
            continue
        w = part["w_incompatible"].astype(float)
        k = int((w <= SMALL_WEIGHT).sum())
        rows.append({"premise (spec)": f"misspecified teacher gets exponentially small weight "
                                       f"({setting})",
                     "measured": f"DiSKD weight <= {SMALL_WEIGHT:g} in {k} of {len(w)} seeds "
                                 f"(max {w.max():.3g})",
                     "reading": f"w <= {SMALL_WEIGHT:g} in every seed",
                     "held": "yes" if k == len(w) else f"no ({len(w) - k} seeds)"})
    return rows


def check(cfg, metrics, curves) -> list[Claim]:
    n = len(cfg["seeds"])
    out = []

    c = Claim("C1-headline", "S1 (compatible teacher): DiSKD cause-1 C-index >= local-only + "
              "0.02 and calibration error <= 0.8 x local-only (mean over seeds).",
              ">= (C-index diff), <= (calib diskd - 0.8 local)",
              {"cindex_diff": 0.02, "calib_diskd-0.8*local": 0.0}, n_seeds=n,
              note=_epoch_note(cfg, metrics, ["diskd", "local-only"], ["S1"]).strip())
    if _has(metrics, "S1", "diskd", "local-only"):
        c.add("cindex_diff", check_mean(_paired(metrics, "diskd", "local-only", "S1",
                                                "cindex_1"), ">=", 0.02))
        c.add("calib_diskd-0.8*local", check_mean(
            _paired(metrics, "diskd", "local-only", "S1", "calib_1", 0.8), "<=", 0.0))
    out.append(c)

    c = Claim("C2-misspecified", "S2 (misspecified teacher): DiSKD C-index >= local-only - "
              "0.005, and naive KD is lower than DiSKD by >= 0.02.",
              ">=", {"diskd-local": -0.005, "diskd-naive": 0.02}, n_seeds=n,
              note=(_weight_note(metrics, "S2")
                    + _epoch_note(cfg, metrics, ["diskd", "local-only", "naive-kd"],
                                  ["S2"])).strip())
    if _has(metrics, "S2", "diskd", "local-only", "naive-kd"):
        c.add("diskd-local", check_mean(_paired(metrics, "diskd", "local-only", "S2",
                                                "cindex_1"), ">=", -0.005))
        c.add("diskd-naive", check_mean(_paired(metrics, "diskd", "naive-kd", "S2",
                                                "cindex_1"), ">=", 0.02))
    out.append(c)

    c = Claim("C3-adaptive-weights", "S3 (both teachers): DiSKD's weight on the compatible "
              "teacher >= 0.8 in at least 4 of 5 seeds (fraction of seeds >= 0.8), and DiSKD "
              "C-index >= naive KD + 0.01.", ">=",
              {"frac_seeds_w>=0.8": 0.8, "diskd-naive": 0.01}, n_seeds=n,
              note=(_weight_note(metrics, "S3")
                    + _epoch_note(cfg, metrics, ["diskd", "naive-kd"], ["S3"])).strip())
    if _has(metrics, "S3", "diskd", "naive-kd"):
        w = _col(metrics, "diskd", "S3", "w_compatible").astype(float)
        c.add("frac_seeds_w>=0.8", check_fraction(w, ">=", 0.8, at_least=0.8))
        c.add("diskd-naive", check_mean(_paired(metrics, "diskd", "naive-kd", "S3",
                                                "cindex_1"), ">=", 0.01))
    out.append(c)

    c = Claim("C4-coarse-teacher", "S4 (any-event teacher): DiSKD cause-1 calibration error "
              "<= 0.9 x local-only's.", "<=", {"calib_diskd-0.9*local": 0.0}, n_seeds=n,
              note=_epoch_note(cfg, metrics, ["diskd", "local-only"], ["S4"]).strip())
    if _has(metrics, "S4", "diskd", "local-only"):
        c.add("calib_diskd-0.9*local", check_mean(
            _paired(metrics, "diskd", "local-only", "S4", "calib_1", 0.9), "<=", 0.0))
    out.append(c)

    c = Claim("C5-not-collapsed", "Sanity, S1: DiSKD C-index >= teacher-only - 0.01.", ">=",
              {"diskd-teacher": -0.01}, category="sanity", n_seeds=n,
              note="Seed-mean cause-1 C-index in S1: DiSKD "
                   f"{_mean(metrics, 'diskd', 'S1', 'cindex_1'):.3f}, teacher-only "
                   f"{_mean(metrics, 'teacher-only', 'S1', 'cindex_1'):.3f}, local-only "
                   f"{_mean(metrics, 'local-only', 'S1', 'cindex_1'):.3f} (lambda = 1, the "
                   "spec's fixed value, not selected)."
                   + _epoch_note(cfg, metrics, ["diskd", "teacher-only"], ["S1"])
                   + " Side experiment, not part of the pipeline: the same S1 with lambda = 10, "
                   "`python -m icml26.papers.diskd.side_lambda --lam 10 --seeds 0 1 2 3 4`. "
                   "The KL term itself is tested against the direct KL of the joint (time, "
                   "cause) laws.")
    if _has(metrics, "S1", "diskd", "teacher-only"):
        c.add("diskd-teacher", check_mean(_paired(metrics, "diskd", "teacher-only", "S1",
                                                  "cindex_1"), ">=", -0.01))
    out.append(c)
    return out
