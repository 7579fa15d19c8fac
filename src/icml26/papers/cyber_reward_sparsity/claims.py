"""Claims 1-6 of the spec plus the environment sanity check, thresholds exactly as written.

Statistics (fixed before looking at results):
- "mean X of SP exceeds / is at least / is below that of B" (claims 1, 2, 4, 5, 6): the per-seed
  paired difference SP - B (same evaluation episodes at the same (setting, seed)) checked with
  ``check_mean`` (95% t-interval of its mean) against the spec's margin; one part per network
  size where the spec says "both N".
- Claim 3 compares two dispersion numbers computed from all seeds together (IQR across seeds,
  then the mean of the two sizes' IQRs): ``check_value`` on IQR(SP) - IQR(DYT) < 0.
- Sanity: the greedy heuristic's and random policy's per-seed GT with ``check_mean`` against the
  spec's 0.85 / 0.6 (category ``sanity``).
The claims use the PPO settings at N = 6 and N = 12 (and DQN at N = 6) with the default red skill
and full observability; other settings of the full scale are reported in figures and tables only.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from icml26.claims import Check, Claim, check_mean, check_value

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


def paired(metrics, setting, a, b, metric) -> np.ndarray:
    """Per-seed differences a - b over the seeds both methods ran."""
    if setting is None:
        return np.array([])
    x, y = per_seed(metrics, setting, a, metric), per_seed(metrics, setting, b, metric)
    seeds = x.index.intersection(y.index)
    return (x[seeds] - y[seeds]).to_numpy(float)


def iqr(values) -> float:
    v = np.asarray(values, float)
    if v.size < 2:
        return float("nan")
    q75, q25 = np.percentile(v, [75, 25])
    return float(q75 - q25)


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
        for n in SIZES if ppo[n])
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

    iqr_sp = [iqr(per_seed(metrics, ppo[n], "SP", "gt")) if ppo[n] else np.nan for n in SIZES]
    iqr_dyt = [iqr(per_seed(metrics, ppo[n], "DYT", "gt")) if ppo[n] else np.nan for n in SIZES]
    diff = float(np.mean(iqr_sp) - np.mean(iqr_dyt))
    c = Claim("3-reliability",
              "PPO: across-seed IQR of final GT of SP < that of DYT (mean of the IQRs at "
              "N = 6 and N = 12); measured: IQR(SP) - IQR(DYT)", "<", 0.0, n_seeds=n_ppo,
              note=f"mean IQR SP = {np.mean(iqr_sp):.4f}, DYT = {np.mean(iqr_dyt):.4f} "
                   f"(per N: SP {np.round(iqr_sp, 4).tolist()}, "
                   f"DYT {np.round(iqr_dyt, 4).tolist()}). A low IQR can also mean that every "
                   "seed converges to the same degenerate policy (see the costly-action and "
                   "restore/reduce rates in the table).")
    c.add("value", check_value(diff, "<", 0.0))
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
