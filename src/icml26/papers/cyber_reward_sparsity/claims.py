"""Claims 1-6 of the spec plus the environment sanity check, thresholds exactly as written.

Statistics (fixed before looking at results):
- "mean X of SP exceeds / is at least / is below that of B" (claims 1, 2, 4, 5, 6): the per-seed
  paired difference SP - B (same evaluation episodes at the same (setting, seed)) checked with
  ``check_mean`` (95% t-interval of its mean) against the spec's margin; one part per network
  size where the spec says "both N".
- Claim 3 compares two dispersion numbers computed from all seeds together (IQR across seeds,
  then the mean of the two sizes' IQRs): a statistic pooled over seeds, so ``check_pooled`` on
  IQR(SP) - IQR(DYT) < 0 with a 95% bootstrap interval that resamples seeds (the same seed
  draw for SP and DYT and for both sizes, since a seed's runs share evaluation episodes).
- Sanity: the greedy heuristic's and random policy's per-seed GT with ``check_mean`` against the
  spec's 0.85 / 0.6 (category ``sanity``).
The claims use the PPO settings at N = 6 and N = 12 (and DQN at N = 6) with the default red skill
and full observability; other settings of the full scale are reported in figures and tables only.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from icml26.claims import Check, Claim, check_mean, check_pooled

SIZES = (6, 12)


def main_setting(cfg: dict, algo: str, n: int) -> str | None:
    """The setting of (algo, n) at the spec's red skill with full observability, if run."""
    skill = float(cfg["params"]["red_skill"])
    for name, s in cfg["settings"].items():
        if (s.get("algo") == algo and int(s.get("n", -1)) == n
                and float(s.get("skill", skill)) == skill
                and s.get("observe", "full") == "full"):
            return name
    return None


def per_seed(metrics: pd.DataFrame, setting, method: str, metric: str) -> pd.Series:
    rows = metrics[(metrics["setting"] == setting) & (metrics["method"] == method)]
    return rows.set_index("seed")[metric].sort_index()


def paired(metrics, setting, a, b, metric) -> pd.Series:
    """Per-seed differences a - b over the seeds both methods ran (indexed by seed, so a failed
    run is named by its seed in the claim's note)."""
    if setting is None:
        return pd.Series(dtype=float)
    x, y = per_seed(metrics, setting, a, metric), per_seed(metrics, setting, b, metric)
    seeds = x.index.intersection(y.index)
    return (x[seeds] - y[seeds]).astype(float)


def iqr(values) -> float:
    v = np.asarray(values, float)
    if v.size < 2:
        return float("nan")
    q75, q25 = np.percentile(v, [75, 25])
    return float(q75 - q25)


def iqr_table(metrics, settings):
    """Per-seed final GT of SP and of DYT as (n_sizes, n_seeds) arrays over the seeds every
    size and both methods ran (None if a size is missing)."""
    if any(s is None for s in settings):
        return None
    series = [per_seed(metrics, s, m, "gt") for s in settings for m in ("SP", "DYT")]
    seeds = series[0].index
    for x in series[1:]:
        seeds = seeds.intersection(x.index)
    if not len(seeds):
        return None
    arr = np.array([x[seeds].to_numpy(float) for x in series])
    return arr[0::2], arr[1::2]


def iqr_collapse_share(n: int) -> float:
    """Share of bootstrap resamples of n seeds whose IQR is 0 whatever the values: one seed
    drawn c times fills ranks [floor(q), ceil(3q)] (q = (n - 1) / 4, linear-interpolated
    quartiles) wherever its block of c ranks lies, when n - c <= floor(q) and
    c - 1 >= ceil(3q). Exact when 2c > n (the events of different seeds are disjoint)."""
    from math import ceil, comb, floor

    if n < 2:
        return 1.0
    q = (n - 1) / 4
    c = max(n - floor(q), ceil(3 * q) + 1)
    p_one = sum(comb(n, k) * (1 / n) ** k * (1 - 1 / n) ** (n - k) for k in range(c, n + 1))
    return float(min(1.0, n * p_one))


def _n_seeds(metrics, settings) -> int:
    rows = metrics[metrics["setting"].isin([s for s in settings if s is not None])]
    return int(rows["seed"].nunique()) if len(rows) else 0


def check(cfg: dict, metrics: pd.DataFrame, curves: pd.DataFrame) -> list[Claim]:
    ppo = {n: main_setting(cfg, "ppo", n) for n in SIZES}
    dqn6 = main_setting(cfg, "dqn", 6)
    n_ppo = _n_seeds(metrics, ppo.values())
    out = []

    c = Claim("1-sparse-beats-dyt",
              "PPO, N = 6 and N = 12: mean GT of SP exceeds mean GT of DYT by >= 0.03 "
              "(paired per-seed difference SP - DYT)", ">=", 0.03, n_seeds=n_ppo)
    for n in SIZES:
        c.add(f"N={n}", check_mean(paired(metrics, ppo[n], "SP", "DYT", "gt"), ">=", 0.03))
    c.note = "mean GT per N (SP / DYT / random / greedy): " + "; ".join(
        f"N={n}: " + " / ".join(f"{_mean(metrics, ppo[n], m, 'gt'):.3f}"
                                for m in ("SP", "DYT", "random", "greedy"))
        for n in SIZES if ppo[n]) + "."
    out.append(c)

    c = Claim("2-sparse-vs-aligned-dense",
              "PPO, both N: mean GT of SP >= mean GT of DS - 0.01 (paired difference SP - DS)",
              ">=", -0.01, n_seeds=n_ppo)
    for n in SIZES:
        c.add(f"N={n}", check_mean(paired(metrics, ppo[n], "SP", "DS", "gt"), ">=", -0.01))
    c.note = "mean GT SP / DS: " + "; ".join(
        f"N={n}: {_mean(metrics, ppo[n], 'SP', 'gt'):.3f} / "
        f"{_mean(metrics, ppo[n], 'DS', 'gt'):.3f}"
        for n in SIZES if ppo[n]) + (". With PPO and no reward normalisation, DS's large returns "
                                     "give large critic gradients, and the joint gradient-norm "
                                     "clip then also shrinks the actor's steps.")
    out.append(c)

    c = Claim("3-reliability",
              "PPO: across-seed IQR of final GT of SP < that of DYT (mean of the IQRs at "
              "N = 6 and N = 12); measured: IQR(SP) - IQR(DYT), 95% bootstrap interval "
              "resampling seeds", "<", 0.0, n_seeds=n_ppo)
    table = iqr_table(metrics, [ppo[n] for n in SIZES])
    if table is None:
        c.add("value", check_pooled(lambda idx: np.nan, 0, "<", 0.0))
    else:
        sp, dyt = table  # (n_sizes, n_seeds) each

        def stat(idx):
            return float(np.mean([iqr(row[idx]) for row in sp])
                         - np.mean([iqr(row[idx]) for row in dyt]))

        c.add("value", check_pooled(stat, sp.shape[1], "<", 0.0))
        every = np.arange(sp.shape[1])
        c.note = (f"mean IQR SP = {np.mean([iqr(r[every]) for r in sp]):.4f}, DYT = "
                  f"{np.mean([iqr(r[every]) for r in dyt]):.4f} (per N: SP "
                  f"{[round(iqr(r), 4) for r in sp]}, DYT {[round(iqr(r), 4) for r in dyt]}, "
                  f"over {sp.shape[1]} seeds). A low IQR can also mean that every seed "
                  "converges to the same degenerate policy (see the costly-action and "
                  "restore/reduce rates in the table).")
        share = iqr_collapse_share(sp.shape[1])
        if share > 0.025:
            c.note += (f" At {sp.shape[1]} seeds, {100 * share:.1f}% of bootstrap resamples "
                       "draw one seed so often that every method's IQR is 0; that is more than "
                       "the interval's 2.5% tail, so its upper bound cannot fall below 0 and "
                       "this claim cannot be reproduced at this seed count.")
    out.append(c)

    c = Claim("4-lower-risk",
              "PPO, both N: CVaR10 of GT of SP >= that of DYT (paired difference SP - DYT)",
              ">=", 0.0, n_seeds=n_ppo)
    for n in SIZES:
        c.add(f"N={n}", check_mean(paired(metrics, ppo[n], "SP", "DYT", "cvar10"), ">=", 0.0))
    out.append(c)

    c = Claim("5-sparing-costly-actions",
              "PPO, both N: costly-action rate (restore or reduce_vulnerability) of SP < that "
              "of DYT (paired difference SP - DYT)", "<", 0.0, n_seeds=n_ppo)
    for n in SIZES:
        c.add(f"N={n}", check_mean(paired(metrics, ppo[n], "SP", "DYT", "costly_rate"), "<",
                                   0.0))
    c.note = "costly-action rate SP / DYT, restore and reduce rates, wasted restores of SP: " + \
        "; ".join(
            f"N={n}: {_mean(metrics, ppo[n], 'SP', 'costly_rate'):.3f} / "
            f"{_mean(metrics, ppo[n], 'DYT', 'costly_rate'):.3f} (DYT restore "
            f"{_mean(metrics, ppo[n], 'DYT', 'restore_rate'):.3f}, reduce "
            f"{_mean(metrics, ppo[n], 'DYT', 'reduce_rate'):.3f}; SP wasted restores "
            f"{_mean(metrics, ppo[n], 'SP', 'wasted_restore_rate'):.3f})"
            for n in SIZES if ppo[n]) + \
        ". Under SP a restore of a safe node changes nothing and costs nothing, so the " \
        "reward does not separate it from do_nothing."
    out.append(c)

    c = Claim("6-dqn-generality",
              "DQN, N = 6: mean GT of SP >= mean GT of DYT (paired difference SP - DYT)",
              ">=", 0.0, n_seeds=_n_seeds(metrics, [dqn6]))
    c.add("N=6", check_mean(paired(metrics, dqn6, "SP", "DYT", "gt"), ">=", 0.0))
    out.append(c)

    c = Claim("S-env-sanity",
              "MiniTitan sanity: greedy heuristic GT >= 0.85 and random policy GT <= 0.6 "
              "(PPO settings, both N; per-seed GT)", ">= / <=", {"greedy": 0.85, "random": 0.6},
              category="sanity", n_seeds=n_ppo)
    for n in SIZES:
        g = per_seed(metrics, ppo[n], "greedy", "gt") if ppo[n] else []
        r = per_seed(metrics, ppo[n], "random", "gt") if ppo[n] else []
        c.add(f"greedy N={n}", check_mean(g, ">=", 0.85) if len(g) else _missing())
        c.add(f"random N={n}", check_mean(r, "<=", 0.6) if len(r) else _missing())
    out.append(c)
    return out


def _mean(metrics, setting, method, metric) -> float:
    v = per_seed(metrics, setting, method, metric) if metric in metrics else []
    return float(np.mean(v)) if len(v) else float("nan")


def _missing() -> Check:
    return check_mean([], ">=", 0.0)
