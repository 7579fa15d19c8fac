"""The spec's eight claims, thresholds exactly as written.

How each one is checked (see icml26.claims):
- slopes fitted to mean-over-seeds curves are statistics pooled over seeds: check_pooled, a
  95% bootstrap interval resampling seeds (claims 1, 3; the statistic is |slope - target|);
- eps_hat "mean over seeds" within 0.2 of 2/d: check_mean of the per-seed eps_hat, two parts
  (mean >= 2/d - 0.2 and mean <= 2/d + 0.2) (2);
- "geometric mean over (d, k, seed)" cost ratios pool seeds: check_pooled resampling seeds,
  each seed carrying its ratios at every d and k (4, 7, 8a; 5b over seeds at d = 4, k_headline);
- claim 5's evaluation ratio is a per-seed quantity whose mean the spec bounds: check_mean
  (the 95% interval of the mean must lie below 0.30);
- "in every seed": check_every (6);
- claim 8's "LSH uses fewer evaluations than exact" is a paired per-seed ratio: check_mean.
Manifold settings are the flat tori without noise (the d of each is in its setting); digits
enter no claim. The curves use the smallest config's k-list: slope_k and k_headline are
params (32..256 and 256 at default). Seeds are paired across settings by their seed number.
"""

from __future__ import annotations

import numpy as np

from icml26.claims import INCONCLUSIVE, Check, Claim, check_every, check_mean, check_pooled
from icml26.stats import loglog_slope

EXACT, LSH, KPP, UNIFORM = "qkmeans-exact", "qkmeans-lsh", "kmeans++", "uniform"


def manifold_settings(cfg: dict) -> dict[int, str]:
    """d -> setting name, for flat-torus settings without noise (first one per d)."""
    out: dict[int, str] = {}
    for name, p in cfg["settings"].items():
        p = p or {}
        if "d" in p and float(p.get("sigma", cfg["params"].get("sigma", 0.0))) == 0.0:
            out.setdefault(int(p["d"]), name)
    return dict(sorted(out.items()))


def curve_table(curves, method: str, setting: str, metric: str):
    """DataFrame seed x k of one curve (empty if the run is absent)."""
    part = curves[(curves["method"] == method) & (curves["setting"] == setting)
                  & (curves["metric"] == metric)]
    return part.pivot_table(index="seed", columns="step", values="value", aggfunc="first")


def fitted_slope(curves, method: str, setting: str, metric: str, ks, reduce: str = "mean"):
    """Log-log slope of the mean (or min) over seeds of a curve, over the given ks."""
    table = curve_table(curves, method, setting, metric)
    ks = [k for k in ks if k in table.columns]
    if len(ks) < 2:
        return np.nan
    y = table[ks].min(axis=0) if reduce == "min" else table[ks].mean(axis=0)
    return loglog_slope(ks, y.to_numpy())


def seed_list(curves, methods, settings) -> list:
    """Seeds that every (method, setting) of the list ran: the units the bootstrap resamples."""
    out = None
    for m in methods:
        for st in settings:
            seeds = set(curve_table(curves, m, st, "cost").index)
            out = seeds if out is None else out & seeds
    return sorted(out or [])


def slope_stat(curves, method: str, setting: str, metric: str, ks, seeds, target: float,
               reduce: str = "mean"):
    """stat(idx) = |log-log slope of the mean (or min) over seeds idx of a curve - target|."""
    table = curve_table(curves, method, setting, metric)
    ks = [k for k in ks if k in table.columns]
    vals = table.loc[seeds, ks].to_numpy(dtype=float) if len(ks) >= 2 else None

    def stat(idx):
        if vals is None:
            return np.nan
        y = vals[np.asarray(idx)]
        y = y.min(axis=0) if reduce == "min" else y.mean(axis=0)
        return abs(loglog_slope(ks, y) - target)
    return stat


def paired_ratio(curves, num: str, den: str, setting: str, metric: str, ks=None):
    """metric(num)/metric(den) per seed (rows, a DataFrame) and k (columns) on the same data."""
    a = curve_table(curves, num, setting, metric)
    b = curve_table(curves, den, setting, metric)
    seeds = a.index.intersection(b.index)
    cols = a.columns.intersection(b.columns)
    if ks is not None:
        cols = [k for k in cols if k in set(ks)]
    return a.loc[seeds, cols] / b.loc[seeds, cols]


def geo_stat(curves, num: str, den: str, settings, seeds, ks=None):
    """stat(idx) = geometric mean over (setting, k, seed in idx) of cost(num)/cost(den)."""
    logs = [np.log(paired_ratio(curves, num, den, st, "cost", ks).reindex(seeds)
                   .to_numpy(dtype=float)) for st in settings]
    logs = np.concatenate(logs, axis=1) if logs else np.empty((len(seeds), 0))

    def stat(idx):
        x = logs[np.asarray(idx)]
        return float(np.exp(x.mean())) if x.size else np.nan
    return stat


def pooled(stat, seeds, op: str, threshold: float) -> Check:
    if not seeds:
        return Check(INCONCLUSIVE, np.nan, why="no seeds ran every method")
    return check_pooled(stat, len(seeds), op, threshold)


def per_d_note(curves, num: str, den: str, tori: dict) -> str:
    """The pooled ratio split by d, for the claim's note (not used by the verdict)."""
    out = []
    for d, st in tori.items():
        seeds = seed_list(curves, (num, den), [st])
        out.append(f"d={d}: {geo_stat(curves, num, den, [st], seeds)(np.arange(len(seeds))):.3f}")
    return ", ".join(out)


def check(cfg: dict, metrics, curves) -> list[Claim]:
    params = cfg["params"]
    tori = manifold_settings(cfg)
    slope_k = [int(k) for k in params["slope_k"]]
    kh = int(params["k_headline"])
    proxy = params.get("scaling_proxy", KPP)
    reduce = "min" if proxy == "kmeans++lloyd" else "mean"  # spec: "best cost" of the Lloyd proxy
    n_seeds = int(metrics["seed"].nunique()) if len(metrics) else 0
    claims = []

    # 1. quantization scaling law ------------------------------------------------------------
    c = Claim("C1-scaling-law",
              "Quantization scaling law: the log-log slope s_d of cost vs k (k in slope_k) is "
              "-2/d: |s_d + 2/d| <= 0.12 for d = 2, 4 and <= 0.15 for d = 3.",
              "<=", {"d=2": 0.12, "d=3": 0.15, "d=4": 0.12}, n_seeds=n_seeds)
    fitted = {}
    for d, tol in ((2, 0.12), (3, 0.15), (4, 0.12)):
        if d in tori:
            seeds = seed_list(curves, [proxy], [tori[d]])
            st = slope_stat(curves, proxy, tori[d], "cost", slope_k, seeds, -2.0 / d, reduce)
            c.add(f"d={d}", pooled(st, seeds, "<=", tol))
            fitted[d] = fitted_slope(curves, proxy, tori[d], "cost", slope_k, reduce)
    c.note = ("check_pooled (95% bootstrap over seeds) on |slope + 2/d| of the slope fitted to "
              f"the {reduce}-over-seeds cost of {proxy}; fitted slopes: "
              + ", ".join(f"d={d}: {s:.3f} (target {-2 / d:.3f})" for d, s in fitted.items()))
    claims.append(c)

    # 2. predictability of eps -----------------------------------------------------------------
    c = Claim("C2-eps-pilot",
              "The pilot estimate eps_hat (Qkmeans-LSH) predicts eps = 2/d: "
              "|mean over seeds of eps_hat - 2/d| <= 0.2 for d in {2, 3, 4}.",
              "<=", 0.2, n_seeds=n_seeds)
    means = {}
    for d in (2, 3, 4):
        if d in tori:
            part = metrics[(metrics["method"] == LSH) & (metrics["setting"] == tori[d])]
            eh = part.set_index("seed")["eps_hat"].astype(float).sort_index()
            means[d] = float(eh.mean()) if len(eh) else np.nan
            c.add(f"d={d} lower", check_mean(eh, ">=", 2.0 / d - 0.2))
            c.add(f"d={d} upper", check_mean(eh, "<=", 2.0 / d + 0.2))
    c.note = ("check_mean over seeds of eps_hat against 2/d - 0.2 and 2/d + 0.2 (two parts per "
              "d); mean eps_hat: "
              + ", ".join(f"d={d}: {m:.3f} (2/d = {2 / d:.3f})" for d, m in means.items()))
    claims.append(c)

    # 3. trial complexity -----------------------------------------------------------------------
    c = Claim("C3-trials",
              "Trials of Qkmeans-exact grow like k^(1+eps): the log-log slope t_d of mean "
              "trials vs k satisfies |t_d - (1 + 2/d)| <= 0.2 for d = 2 and d = 4.",
              "<=", 0.2, n_seeds=n_seeds)
    fitted = {}
    for d in (2, 4):
        if d in tori:
            seeds = seed_list(curves, [EXACT], [tori[d]])
            st = slope_stat(curves, EXACT, tori[d], "trials", slope_k, seeds, 1.0 + 2.0 / d)
            c.add(f"d={d}", pooled(st, seeds, "<=", 0.2))
            fitted[d] = fitted_slope(curves, EXACT, tori[d], "trials", slope_k)
    c.note = ("check_pooled (95% bootstrap over seeds) on |t_d - (1 + 2/d)| of the slope of "
              "mean-over-seeds trials; fitted: "
              + ", ".join(f"d={d}: {t:.3f} (target {1 + 2 / d:.3f})" for d, t in fitted.items()))
    claims.append(c)

    # 4. exactness of the rejection sampler -----------------------------------------------------
    seeds = seed_list(curves, (EXACT, KPP), list(tori.values()))
    st = geo_stat(curves, EXACT, KPP, list(tori.values()), seeds)
    c = Claim("C4-exactness",
              "The rejection sampler is exact D^2 sampling: the geometric-mean cost ratio "
              "Qkmeans-exact / k-means++ over (d, k, seed) lies in [0.95, 1.05].",
              "in", [0.95, 1.05], n_seeds=n_seeds,
              note="check_pooled on the pooled geometric mean (95% bootstrap over seeds; two "
                   "parts: lower, upper bound); per d: " + per_d_note(curves, EXACT, KPP, tori))
    c.add("ratio>=0.95", pooled(st, seeds, ">=", 0.95))
    c.add("ratio<=1.05", pooled(st, seeds, "<=", 1.05))
    claims.append(c)

    # 5. headline speed/quality at d = 4 --------------------------------------------------------
    c = Claim("C5-speedup-d4",
              f"At d = 4, k = {kh}, Qkmeans-exact uses <= 0.30 x the distance evaluations of "
              "k-means++ (mean over seeds) with cost ratio <= 1.05.",
              "<=", {"evals_ratio": 0.30, "cost_ratio": 1.05}, n_seeds=n_seeds,
              note="evals: check_mean of per-seed ratios (95% interval below 0.30); cost: "
                   "check_pooled on the geometric mean over seeds of per-seed cost ratios "
                   "(95% bootstrap over seeds)")
    if 4 in tori:
        ev = paired_ratio(curves, EXACT, KPP, tori[4], "evals", [kh])
        c.add("evals_ratio", check_mean(ev[kh] if kh in ev.columns else [], "<=", 0.30))
        seeds4 = seed_list(curves, (EXACT, KPP), [tori[4]])
        c.add("cost_ratio", pooled(geo_stat(curves, EXACT, KPP, [tori[4]], seeds4, [kh]),
                                   seeds4, "<=", 1.05))
    claims.append(c)

    # 6. speed-up depends on eps ----------------------------------------------------------------
    c = Claim("C6-speedup-vs-eps",
              f"The evaluation ratio Qkmeans-exact / k-means++ at k = {kh} is strictly larger "
              "for d = 2 than for d = 4 in every seed.",
              ">", 0.0, n_seeds=n_seeds,
              note="check_every on the per-seed difference ratio(d=2) - ratio(d=4) > 0 "
                   "(seed s of d=2 paired with seed s of d=4)")
    if 2 in tori and 4 in tori:
        r2 = paired_ratio(curves, EXACT, KPP, tori[2], "evals")
        r4 = paired_ratio(curves, EXACT, KPP, tori[4], "evals")
        seeds = r2.index.intersection(r4.index)
        if kh in r2.columns and kh in r4.columns:
            c.add("value", check_every(r2.loc[seeds, kh] - r4.loc[seeds, kh], ">", 0.0))
    claims.append(c)

    # 7. seeding matters ------------------------------------------------------------------------
    seeds = seed_list(curves, (UNIFORM, KPP), list(tori.values()))
    c = Claim("C7-seeding-matters",
              "Seeding matters: the geometric-mean cost ratio uniform / k-means++ over "
              "(d, k, seed) is >= 1.15.",
              ">=", 1.15, n_seeds=n_seeds,
              note="check_pooled on the pooled geometric mean (95% bootstrap over seeds); per "
                   "d: " + per_d_note(curves, UNIFORM, KPP, tori))
    c.add("value", pooled(geo_stat(curves, UNIFORM, KPP, list(tori.values()), seeds), seeds,
                          ">=", 1.15))
    claims.append(c)

    # 8. LSH trade-off knob ---------------------------------------------------------------------
    seeds = seed_list(curves, (LSH, KPP), list(tori.values()))
    c = Claim("C8-lsh-tradeoff",
              "Qkmeans-LSH(0.5) keeps the geometric-mean cost ratio to k-means++ <= 1.5 and, "
              f"at d = 4, k = {kh}, uses fewer distance-equivalents than Qkmeans-exact.",
              "<= (cost), < (evals)", {"cost_ratio": 1.5, "evals_lsh/exact": 1.0},
              n_seeds=n_seeds,
              note="cost: check_pooled on the pooled geometric mean over (d, k, seed) (95% "
                   "bootstrap over seeds); evals: check_mean of the per-seed ratio LSH / exact "
                   "(95% interval below 1); cost ratio per d: "
                   + per_d_note(curves, LSH, KPP, tori))
    c.add("cost_ratio", pooled(geo_stat(curves, LSH, KPP, list(tori.values()), seeds), seeds,
                               "<=", 1.5))
    if 4 in tori:
        ev = paired_ratio(curves, LSH, EXACT, tori[4], "evals", [kh])
        c.add("evals_lsh/exact", check_mean(ev[kh] if kh in ev.columns else [], "<", 1.0))
    claims.append(c)
    return claims

