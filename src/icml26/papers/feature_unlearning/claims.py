"""Claims 1-7 of the spec, thresholds as written.

Statistics (fixed from the wording before any result). The ODE is deterministic (one
computation per cell, copied to every seed), so its parts use check_value on the single value.
"Non-decreasing" / "non-increasing" of integrated quantities allow MONO_TOL for the integrator's
rounding (the spec's own tolerance of claim 6). Claim 4 is the fraction of the beta > 0 cells
where "D > 0.01" agrees with "a0 < a_eq" (all must agree: >= 1). The network parts: "means over
seeds" of one cell are check_mean; a comparison of means across cells or with the ODE is a
statistic pooled over seeds (check_pooled, seeds resampled jointly, paired by seed); claim 6's
network part must hold in every network run (check_every over all runs, named cell/seed).
Notes state what the data show, computed at report time.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from icml26.claims import Claim, check_every, check_mean, check_pooled, check_value

from .experiment import with_cells

MONO_TOL = 1e-9        # rounding allowance of "non-decreasing" for integrated trajectories
DROP_ON = 0.01         # claim 4: "D > 0.01" is a drop
BETAS = (0.0, 0.25, 0.5, 1.0)        # claim 2, at a0 = 0.1
A0S = (0.1, 0.3, 1.0, 2.0)           # claim 3, at beta = 0.5
NAN = float("nan")


def _ode(metrics, cfg, beta, a0, eps=None, tanh=False):
    """The metrics row of an ODE cell (deterministic: the first seed's), or None."""
    eps = float(cfg["params"]["eps"]) if eps is None else eps
    part = metrics[(metrics["method"] == "ode") & np.isclose(metrics["beta"], beta)
                   & np.isclose(metrics["a0"], a0) & np.isclose(metrics["eps"], eps)
                   & (metrics.get("tanh", 0.0) == float(tanh))]
    return None if part.empty else part.sort_values("seed").iloc[0]


def ode_cells(metrics, cfg, tanh=False) -> pd.DataFrame:
    """One row per ODE cell at the default eps (and activation), sorted by (beta, a0)."""
    eps = float(cfg["params"]["eps"])
    part = metrics[(metrics["method"] == "ode") & np.isclose(metrics["eps"], eps)
                   & (metrics.get("tanh", 0.0) == float(tanh))]
    return part.sort_values(["beta", "a0", "seed"]).drop_duplicates(["beta", "a0"])


def _v(row, col):
    return NAN if row is None or col not in row else float(row[col])


def _net(metrics, beta, a0, col) -> pd.Series:
    """Per-seed values of a network cell, indexed by seed."""
    part = metrics[(metrics["method"] == "network") & np.isclose(metrics["beta"], beta)
                   & np.isclose(metrics["a0"], a0)]
    if col not in part:
        return pd.Series(dtype=float)
    return part.sort_values("seed").set_index("seed")[col].astype(float)


def _steps(values, sign=1.0):
    """Largest sign * (next - previous) over a sequence (NaN if a value is missing)."""
    v = np.asarray(values, dtype=float)
    if v.size < 2 or not np.all(np.isfinite(v)):
        return NAN
    return float(np.max(sign * np.diff(v))) + 0.0     # + 0.0: never -0.0 in the files


def _f(x, fmt=".4f"):
    return "n/a" if not np.isfinite(x) else format(x, fmt)


def _n_seeds(metrics):
    return int(metrics["seed"].nunique())


def claim1(cfg, metrics):
    b0, b5 = _ode(metrics, cfg, 0.0, 0.1), _ode(metrics, cfg, 0.5, 0.1)
    c = Claim("1-dichotomy", "Dichotomy (ODE): at beta = 0 the alignment m(t) is non-decreasing "
              "after t = 1 and ends at m(T) >= 0.99; at beta = 0.5, a0 = 0.1 it drops by "
              "Delta = m_peak - m(T) >= 0.08.", ">= / <=",
              {"beta0 largest fall of m after t=1": MONO_TOL, "beta0 m(T)": 0.99,
               "beta0.5 Delta": 0.08}, n_seeds=1)
    c.add("beta0 largest fall of m after t=1",
          check_value(_v(b0, "m_max_fall_after_1"), "<=", MONO_TOL))
    c.add("beta0 m(T)", check_value(_v(b0, "m_final"), ">=", 0.99))
    c.add("beta0.5 Delta", check_value(_v(b5, "delta"), ">=", 0.08))
    c.note = (f"beta = 0, a0 = 0.1: m(T) = {_f(_v(b0, 'm_final'))}, largest fall after t = 1 "
              f"{_f(_v(b0, 'm_max_fall_after_1'), '.2e')}; beta = 0.5, a0 = 0.1: m peaks at "
              f"{_f(_v(b5, 'm_peak'))} (t = {_f(_v(b5, 't_peak'), '.2f')}) and ends at "
              f"{_f(_v(b5, 'm_final'))}.")
    return c


def claim2(cfg, metrics):
    D = [_v(_ode(metrics, cfg, b, 0.1), "D") for b in BETAS]
    c = Claim("2-nonlinear-term", "The nonlinear term induces unlearning (ODE, a0 = 0.1): the "
              "relative drop D is non-decreasing in beta over {0, 0.25, 0.5, 1} and "
              "D(1) >= D(0.25) + 0.05.", ">=",
              {"smallest step of D in beta": -MONO_TOL, "D(1) - D(0.25)": 0.05}, n_seeds=1)
    c.add("smallest step of D in beta", check_value(-_steps(D, -1.0) + 0.0, ">=", -MONO_TOL))
    c.add("D(1) - D(0.25)", check_value(D[3] - D[1], ">=", 0.05))
    c.note = "D over beta = 0, 0.25, 0.5, 1: " + ", ".join(_f(x) for x in D) + "."
    return c


def claim3(cfg, metrics):
    rows = [_ode(metrics, cfg, 0.5, a) for a in A0S]
    D = [_v(r, "D") for r in rows]
    a_eq = _v(rows[0], "a_eq") if rows[0] is not None else NAN
    # a cell of the spec's grid that did not run (smoke) leaves its D NaN: inconclusive
    above = [d for a, d in zip(A0S, D, strict=True) if np.isfinite(a_eq) and a >= a_eq]
    n_above = sum(1 for a, r in zip(A0S, rows, strict=True)
                  if r is not None and np.isfinite(a_eq) and a >= a_eq)
    c = Claim("3-initial-scale", "A larger initial second-layer scale mitigates (ODE, beta = "
              "0.5): D is non-increasing in a0 over {0.1, 0.3, 1, 2}, and D <= 0.005 for every "
              "a0 >= a_eq.", "<=",
              {"largest step of D in a0": MONO_TOL, "largest D with a0 >= a_eq": 0.005},
              n_seeds=1)
    c.add("largest step of D in a0", check_value(_steps(D), "<=", MONO_TOL))
    c.add("largest D with a0 >= a_eq", check_value(max(above) if above else NAN, "<=", 0.005))
    c.note = (f"a_eq = {_f(a_eq)}; D over a0 = 0.1, 0.3, 1, 2: " + ", ".join(_f(x) for x in D)
              + f"; {n_above} of the cells run have a0 >= a_eq.")
    return c


def claim4(cfg, metrics):
    cells = ode_cells(metrics, cfg)
    cells = cells[cells["beta"] > 0]
    agree = (cells["D"] > DROP_ON) == (cells["a0"] < cells["a_eq"])
    agree &= np.isfinite(cells["D"]) & np.isfinite(cells["a_eq"])
    frac = float(agree.mean()) if len(cells) else NAN
    c = Claim("4-critical-manifold", "Critical-manifold prediction (ODE): over every cell with "
              "beta > 0, 'D > 0.01' holds exactly when a0 < a_eq (the direction of the slow flow "
              "on the manifold decides).", ">=", 1.0, n_seeds=1)
    c.add("value", check_value(frac, ">=", 1.0))
    bad = [f"beta {b:g} a0 {a:g} (D {d:.4f}, a_eq {e:.4f})" for b, a, d, e, ok in
           zip(cells["beta"], cells["a0"], cells["D"], cells["a_eq"], agree, strict=True)
           if not ok]
    c.note = (f"Fraction of the {len(cells)} cells where the prediction holds; "
              + ("it fails in: " + "; ".join(bad) if bad else "it holds in all of them") + ".")
    return c


def claim5(cfg, metrics):
    r = _ode(metrics, cfg, 0.5, 0.1)
    a0, a_eq, a3 = 0.1, _v(r, "a_eq"), _v(r, "a_at_3")
    c = Claim("5-two-time-scales", "Two time scales (ODE, beta = 0.5): m*(a) is strictly "
              "decreasing on a in [0.4, 2]; for a0 = 0.1 the fast transient ends early, "
              "|m(t) - m*(a(t))| <= 0.03 for all t >= 3, while a(3) <= a0 + 0.7 (a_eq - a0), "
              "so the later loss of alignment is the slow drift along the manifold.", "< / <=",
              {"largest step of m* on [0.4, 2]": 0.0, "max |m - m*(a)| for t >= 3": 0.03,
               "a(3) - a0 - 0.7 (a_eq - a0)": 0.0}, n_seeds=1)
    c.add("largest step of m* on [0.4, 2]", check_value(_v(r, "mstar_max_step"), "<", 0.0))
    c.add("max |m - m*(a)| for t >= 3", check_value(_v(r, "dev_after_3"), "<=", 0.03))
    c.add("a(3) - a0 - 0.7 (a_eq - a0)", check_value(a3 - a0 - 0.7 * (a_eq - a0), "<=", 0.0))
    c.note = (f"m*(0.4) = {_f(_v(r, 'mstar_a0.4'))}, m*(0.8) = {_f(_v(r, 'mstar_a0.8'))}, "
              f"m*(2) = {_f(_v(r, 'mstar_a2'))}; a(3) = {_f(a3)}, a_eq = {_f(a_eq)}; "
              f"largest |m - m*(a)| over the whole path {_f(_v(r, 'dev_max'))}.")
    step_ex = _v(r, "mstar_max_step_exact")
    if np.isfinite(step_ex):
        holds = "holds" if step_ex < 0 else "does not hold"
        c.note += (f" Check of the quadrature: with the exact ReLU loss the largest step of m* on "
                   f"[0.4, 2] is {step_ex:.2e}, so the strict decrease {holds} there (exactly, "
                   f"m* = 1 for a <= 1 - 2 beta / sqrt(pi) = {1 - 2 * 0.5 / np.sqrt(np.pi):.4f}; "
                   "the spec's 81 Gauss-Hermite nodes smooth the ReLU kink near m = 1, which "
                   "puts m* below 1 there). The verdict follows the spec's quadrature.")
    return c


def claim6(cfg, metrics):
    ode = metrics[metrics["method"] == "ode"]
    rise = float(ode["L_max_rise"].max()) if len(ode) else NAN
    net = metrics[metrics["method"] == "network"].sort_values(["beta", "a0", "seed"])
    vals = pd.Series(net["loss_T_minus_peak"].to_numpy(dtype=float) if len(net) else [],
                     index=[f"{s}/{d}" for s, d in zip(net["setting"], net["seed"],
                                                       strict=True)], dtype=float)
    c = Claim("6-population-effect", "Population effect: along every ODE trajectory L(t) is "
              "non-increasing (tolerance 1e-9), so the alignment drop happens while the "
              "population loss still decreases; in the online network runs the evaluation "
              "loss at T is below its value at t_peak.", "<= / <",
              {"largest rise of L (ODE)": 1e-9, "L(T) - L(t_peak) (every network run)": 0.0},
              n_seeds=_n_seeds(metrics))
    c.add("largest rise of L (ODE)", check_value(rise, "<=", 1e-9))
    c.add("L(T) - L(t_peak) (every network run)", check_every(vals, "<", 0.0))
    per_cell = []
    for setting, g in net.groupby("setting", sort=False):
        x = g.set_index("seed")["loss_T_minus_peak"].astype(float)
        miss = [f"{int(d)} (t_peak {float(g.set_index('seed').loc[d, 't_peak']):.1f}, "
                f"{v:+.2e})" for d, v in x.items() if not v < 0]
        per_cell.append(f"{setting}: below in {int((x < 0).sum())} of {len(x)}"
                        + (" (not below in seeds " + ", ".join(miss) + ")" if miss else ""))
    c.note = (f"{len(ode.drop_duplicates(['setting']))} ODE cells; {len(vals)} network runs, "
              "L(T) - L(t_peak) per cell: " + "; ".join(per_cell) + ". A run whose m_net "
              "peaks at or near T, or that has converged before its peak so that L(T) and "
              "L(t_peak) differ by SGD noise only, has no drop to put against the loss.")
    return c


def _pooled(series_list, fn):
    """A statistic of per-cell seed means, resampling the seeds common to all cells."""
    seeds = sorted(set.intersection(*(set(s.index) for s in series_list))) if series_list else []
    arr = np.array([[s.loc[d] for d in seeds] for s in series_list], dtype=float)

    def stat(idx):
        return fn(*(row[idx].mean() for row in arr))
    return stat, len(seeds)


def claim7(cfg, metrics):
    A, B, C = (_net(metrics, b, a, "delta") for b, a in ((0.5, 0.1), (0.0, 0.1), (0.5, 2.0)))
    c = Claim("7-network-validation", "Network validation (means over seeds): for beta = 0.5, "
              "a0 = 0.1, Delta_net >= 0.10 and Delta_net >= 3 x max(Delta_net(beta = 0, "
              "a0 = 0.1), Delta_net(beta = 0.5, a0 = 2)); both control runs have Delta_net <= "
              "0.04; for both beta = 0.5 runs |m_net(50) - m_ODE(50)| <= 0.08.", ">= / <=",
              {"Delta_net(0.5, 0.1)": 0.10, "Delta_net(0.5,0.1) - 3 max(controls)": 0.0,
               "Delta_net(0, 0.1)": 0.04, "Delta_net(0.5, 2)": 0.04,
               "|m_net - m_ODE| (0.5, 0.1)": 0.08, "|m_net - m_ODE| (0.5, 2)": 0.08},
              n_seeds=_n_seeds(metrics))
    c.add("Delta_net(0.5, 0.1)", check_mean(A, ">=", 0.10))
    stat, n = _pooled([A, B, C], lambda a, b, cc: a - 3 * max(b, cc))
    c.add("Delta_net(0.5,0.1) - 3 max(controls)", check_pooled(stat, n, ">=", 0.0))
    c.add("Delta_net(0, 0.1)", check_mean(B, "<=", 0.04))
    c.add("Delta_net(0.5, 2)", check_mean(C, "<=", 0.04))
    gaps = []
    for a0 in (0.1, 2.0):
        ode = _v(_ode(metrics, cfg, 0.5, a0), "m_at_net_T")
        mT = _net(metrics, 0.5, a0, "m_T")
        stat, n = _pooled([mT], lambda x, o=ode: abs(x - o))
        c.add(f"|m_net - m_ODE| (0.5, {a0:g})", check_pooled(stat, n, "<=", 0.08))
        gaps.append(f"a0 = {a0:g}: m_net(T) mean {_f(mT.mean())} vs ODE {_f(ode)}")
    c.note = (f"Mean Delta_net: {_f(A.mean())} (beta 0.5, a0 0.1), {_f(B.mean())} (beta 0), "
              f"{_f(C.mean())} (beta 0.5, a0 2); at beta = 0.5, " + "; ".join(gaps) + ".")
    # per seed of the unlearning cell: the network's end state against the ODE's ansatz
    L_ode = _v(_ode(metrics, cfg, 0.5, 0.1), "L_at_net_T")
    mT, LT = _net(metrics, 0.5, 0.1, "m_T"), _net(metrics, 0.5, 0.1, "loss_T")
    sd = _net(metrics, 0.5, 0.1, "a_unit_sd_T")
    if len(mT) and np.isfinite(L_ode):
        c.note += (" Per seed at beta = 0.5, a0 = 0.1 (m_net(T), evaluation loss(T) - ODE "
                   "L(T), s.d. of the a_j over units at T): " + "; ".join(
                       f"{int(d)}: {mT.loc[d]:.3f}, {LT.loc[d] - L_ode:+.3f}, {sd.loc[d]:.3f}"
                       for d in mT.index if d in LT.index and d in sd.index) + ".")
    return c


def check(cfg, metrics: pd.DataFrame, curves: pd.DataFrame) -> list[Claim]:
    metrics = with_cells(cfg, metrics)
    return [f(cfg, metrics) for f in (claim1, claim2, claim3, claim4, claim5, claim6, claim7)]
