"""The spec's eight claims, thresholds exactly as written.

How each one is checked (see icml26.claims):
- slopes fitted to mean-over-seeds curves are single numbers: check_value (claims 1, 3);
- eps_hat "mean over seeds" is compared directly as a mean: check_value on |mean - 2/d| (2);
- "geometric mean over (d, k, seed)" cost ratios are single numbers: check_value (4, 7, 8a);
- claim 5's evaluation ratio is a per-seed quantity whose mean the spec bounds: check_mean
  (the 95% interval of the mean must lie below 0.30); its cost ratio is the spec's metric
  "cost ratio" (geometric mean over seeds) at d = 4 and the headline k: check_value;
- "in every seed": check_every (6);
- claim 8's "LSH uses fewer evaluations than exact" is a paired per-seed ratio: check_mean.
Manifold settings are the flat tori without noise (the d of each is in its setting); digits
enter no claim. The curves use the smallest config's k-list: slope_k and k_headline are
params (32..256 and 256 at default).
"""

from __future__ import annotations

import numpy as np

from icml26.claims import Claim, check_every, check_mean, check_value
from icml26.stats import geometric_mean, loglog_slope

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


def paired_ratio(curves, num: str, den: str, setting: str, metric: str, ks=None):
    """cost(num)/cost(den) (or another metric) per (seed, k) on the same data and seed."""
    a = curve_table(curves, num, setting, metric)
    b = curve_table(curves, den, setting, metric)
    seeds = a.index.intersection(b.index)
    cols = a.columns.intersection(b.columns)
    if ks is not None:
        cols = [k for k in cols if k in set(ks)]
    return (a.loc[seeds, cols] / b.loc[seeds, cols]).to_numpy().ravel()


def pooled_ratio(curves, num: str, den: str, settings) -> float:
    """Geometric mean over (d, k, seed) of cost(num)/cost(den)."""
    ratios = [paired_ratio(curves, num, den, s, "cost") for s in settings]
    ratios = np.concatenate(ratios) if ratios else np.array([])
    return geometric_mean(ratios) if ratios.size else np.nan


def per_d_note(curves, num: str, den: str, tori: dict) -> str:
    """The pooled ratio split by d, for the claim's note (not used by the verdict)."""
    return ", ".join(f"d={d}: {pooled_ratio(curves, num, den, [s]):.3f}" for d, s in tori.items())


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
            s = fitted_slope(curves, proxy, tori[d], "cost", slope_k, reduce)
            fitted[d] = s
            c.add(f"d={d}", check_value(abs(s + 2.0 / d), "<=", tol))
    c.note = ("check_value on the slope fitted to the mean-over-seeds cost of " + proxy
              + "; fitted slopes: " + ", ".join(f"d={d}: {s:.3f} (target {-2 / d:.3f})"
                                                for d, s in fitted.items()))
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
            m = float(part["eps_hat"].mean()) if len(part) else np.nan
            means[d] = m
            c.add(f"d={d}", check_value(abs(m - 2.0 / d), "<=", 0.2))
    c.note = ("check_value on |mean eps_hat - 2/d|; mean eps_hat: "
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
            t = fitted_slope(curves, EXACT, tori[d], "trials", slope_k)
            fitted[d] = t
            c.add(f"d={d}", check_value(abs(t - (1.0 + 2.0 / d)), "<=", 0.2))
    c.note = ("check_value on the slope of mean-over-seeds trials; fitted: "
              + ", ".join(f"d={d}: {t:.3f} (target {1 + 2 / d:.3f})" for d, t in fitted.items()))
    claims.append(c)

    # 4. exactness of the rejection sampler -----------------------------------------------------
    r = pooled_ratio(curves, EXACT, KPP, tori.values())
    c = Claim("C4-exactness",
              "The rejection sampler is exact D^2 sampling: the geometric-mean cost ratio "
              "Qkmeans-exact / k-means++ over (d, k, seed) lies in [0.95, 1.05].",
              "in", [0.95, 1.05], category="sanity", n_seeds=n_seeds,
              note="check_value on the pooled geometric mean (two parts: lower, upper bound); "
                   "per d: " + per_d_note(curves, EXACT, KPP, tori))
    c.add("ratio>=0.95", check_value(r, ">=", 0.95))
    c.add("ratio<=1.05", check_value(r, "<=", 1.05))
    claims.append(c)

    # 5. headline speed/quality at d = 4 --------------------------------------------------------
    c = Claim("C5-speedup-d4",
              f"At d = 4, k = {kh}, Qkmeans-exact uses <= 0.30 x the distance evaluations of "
              "k-means++ (mean over seeds) with cost ratio <= 1.05.",
              "<=", {"evals_ratio": 0.30, "cost_ratio": 1.05}, n_seeds=n_seeds,
              note="evals: check_mean of per-seed ratios (95% interval below 0.30); cost: "
                   "check_value on the geometric mean over seeds of per-seed cost ratios")
    if 4 in tori:
        ev = paired_ratio(curves, EXACT, KPP, tori[4], "evals", [kh])
        cost = paired_ratio(curves, EXACT, KPP, tori[4], "cost", [kh])
        c.add("evals_ratio", check_mean(ev, "<=", 0.30))
        c.add("cost_ratio", check_value(geometric_mean(cost) if cost.size else np.nan,
                                        "<=", 1.05))
    claims.append(c)

    # 6. speed-up depends on eps ----------------------------------------------------------------
    c = Claim("C6-speedup-vs-eps",
              f"The evaluation ratio Qkmeans-exact / k-means++ at k = {kh} is strictly larger "
              "for d = 2 than for d = 4 in every seed.",
              ">", 0.0, n_seeds=n_seeds,
              note="check_every on the per-seed difference ratio(d=2) - ratio(d=4) > 0 "
                   "(seed s of d=2 paired with seed s of d=4)")
    if 2 in tori and 4 in tori:
        r2 = curve_table(curves, EXACT, tori[2], "evals") / curve_table(curves, KPP, tori[2],
                                                                        "evals")
        r4 = curve_table(curves, EXACT, tori[4], "evals") / curve_table(curves, KPP, tori[4],
                                                                        "evals")
        seeds = r2.index.intersection(r4.index)
        if kh in r2.columns and kh in r4.columns:
            c.add("value", check_every((r2.loc[seeds, kh] - r4.loc[seeds, kh]).to_numpy(),
                                       ">", 0.0))
    claims.append(c)

    # 7. seeding matters ------------------------------------------------------------------------
    c = Claim("C7-seeding-matters",
              "Seeding matters: the geometric-mean cost ratio uniform / k-means++ over "
              "(d, k, seed) is >= 1.15.",
              ">=", 1.15, n_seeds=n_seeds,
              note="check_value on the pooled geometric mean; per d: "
                   + per_d_note(curves, UNIFORM, KPP, tori))
    c.add("value", check_value(pooled_ratio(curves, UNIFORM, KPP, tori.values()), ">=", 1.15))
    claims.append(c)

    # 8. LSH trade-off knob ---------------------------------------------------------------------
    c = Claim("C8-lsh-tradeoff",
              "Qkmeans-LSH(0.5) keeps the geometric-mean cost ratio to k-means++ <= 1.5 and, "
              f"at d = 4, k = {kh}, uses fewer distance-equivalents than Qkmeans-exact.",
              "<= (cost), < (evals)", {"cost_ratio": 1.5, "evals_lsh/exact": 1.0},
              n_seeds=n_seeds,
              note="cost: check_value on the pooled geometric mean over (d, k, seed); evals: "
                   "check_mean of the per-seed ratio LSH / exact (95% interval below 1); cost "
                   "ratio per d: " + per_d_note(curves, LSH, KPP, tori))
    c.add("cost_ratio", check_value(pooled_ratio(curves, LSH, KPP, tori.values()), "<=", 1.5))
    if 4 in tori:
        ev = paired_ratio(curves, LSH, EXACT, tori[4], "evals", [kh])
        c.add("evals_lsh/exact", check_mean(ev, "<", 1.0))
    claims.append(c)
    return claims
