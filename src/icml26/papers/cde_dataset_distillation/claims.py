"""The spec's five claims (thresholds exactly as written) and one sanity check.

How each is checked (fixed before any result was seen):
1. Diminishing returns with a floor, for DM and GM on c0: the seed-mean gap curve is
   non-increasing within 0.5 points (max over consecutive IPC of Delta(k_next) - Delta(k)
   <= 0.005), and the last doubling (IPC 20 -> 40) reduces the gap by less than 25% of the
   first (IPC 1 -> 2), written as (D20 - D40) - 0.25 (D1 - D2) < 0 so that it is defined
   whatever the sign of the first drop. Both are statistics of the seed-mean curve:
   check_pooled (bootstrap over seeds).
2. Rate: the free fit A k^-alpha + F of the seed-mean c0 curve has R^2 >= 0.9 and
   alpha >= 0.4, and every grid point lies under the k^-1/2 envelope through the first
   point: max_k [Delta(k) - (Delta(k_min) - F)(k/k_min)^-1/2 - F - 0.01] <= 0. Pooled
   statistics of the refitted seed-mean curve: check_pooled.
3. Configuration mismatch, for the DM set distilled for c0 (the spec's Fig. 2): per seed,
   the mean gap on c1, c2 minus the gap on c0 at each IPC <= 10, check_mean >= 0.01 (paired
   per seed: the same set evaluated on three configurations). The fitted floors per
   configuration with bootstrap intervals over seeds are reported in the note, not claimed.
4. Coverage law: k*(m) from the seed-mean family gap curve of each m (seeds resampled
   together for all m): non-decreasing in m, k*(m_max) >= 2 k*(m_min), R^2 >= 0.8 and
   slope > 0 of the least-squares line in m. check_pooled; a k* never reached enters at the
   largest k (censored above), one reached at the smallest k at that k (censored below), and
   a verdict the censored values could overturn is inconclusive.
5. Interchangeable surrogates: at every IPC >= 5, |Delta_DM - Delta_GM| <= 0.03 on c0, as
   an equivalence test: the 95% interval of the per-seed paired difference lies within
   [-0.03, 0.03] (two check_mean parts); and at every IPC <= 10 both beat the random subset
   by >= 3 points (per-seed paired random - method, check_mean >= 0.03).
S1 (sanity): the farthest-point families F_m have covering number m at radius 0.5.
"""

from __future__ import annotations

import numpy as np

from icml26.claims import (
    INCONCLUSIVE,
    NOT_REPRODUCED,
    REPRODUCED,
    Check,
    Claim,
    check_mean,
    check_pooled,
    check_value,
)
from icml26.stats import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED

from . import configs as C
from . import fit

DM, GM, RANDOM, TM = "dm", "gm", "random", "tm"


def _ipcs(cfg, metrics):
    ipcs = cfg.get("params", {}).get("ipc")
    if ipcs is None:
        ipcs = sorted({int(c.rsplit("ipc", 1)[1]) for c in metrics.columns
                       if c.startswith("gap:")})
    return [int(q) for q in ipcs]


def _settings(cfg, kind):
    out = []
    for s, sp in cfg["settings"].items():
        if (sp or {}).get("kind") == kind:
            out.append(s)
    return out


def seed_curves(metrics, method, setting, column_of, ipcs):
    """DataFrame seeds x IPC of one method and setting (columns ``column_of(q)``)."""
    part = metrics[(metrics["method"] == method) & (metrics["setting"] == setting)]
    cols = [column_of(q) for q in ipcs]
    if not len(part) or any(c not in part for c in cols):
        return None
    frame = part.set_index("seed").sort_index()[cols]
    frame.columns = ipcs
    return frame


def _gap(name):
    return lambda q: f"gap:{name}:ipc{q}"


class CurveFits:
    """Fits of the seed-mean curve for the point estimate and every bootstrap resample.

    The resamples are the ones ``icml26.stats.bootstrap_ci`` draws (fixed generator), fitted
    in one vectorised call and looked up by their indices; any other index set is fitted
    on the spot, so the statistics never depend on this cache.
    """

    def __init__(self, k, G, bounds, n_boot=BOOTSTRAP_RESAMPLES, seed=BOOTSTRAP_SEED):
        self.k, self.G, self.bounds = np.asarray(k, float), np.asarray(G, float), bounds
        n = len(self.G)
        draws = np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
        self.rows = {d.tobytes(): i for i, d in enumerate(draws)}
        means = self.G[draws].mean(1)
        self.boot = fit.fit_resamples(self.k, self.G, draws, bounds)
        self.boot["excess"] = np.array([fit.half_rate_excess(self.k, m, f)
                                        for m, f in zip(means, self.boot["F"], strict=True)])
        self.point = self.fit(np.arange(n))

    def fit(self, idx) -> dict:
        mean = self.G[np.asarray(idx)].mean(0)
        f = fit.fit_power_floor(self.k, mean, self.bounds)
        f["excess"] = fit.half_rate_excess(self.k, mean, f["F"])
        f["r2_half"] = fit.fit_power_floor(self.k, mean, alpha=0.5)["r2"]
        return f

    def get(self, idx, key) -> float:
        idx = np.asarray(idx, dtype=np.int64)
        i = self.rows.get(idx.tobytes())
        if i is None:
            return float(self.fit(idx)[key])
        return float(self.boot[key][i])

    def stat(self, key):
        return lambda idx: self.get(idx, key)


def _pooled(G, stat, op, thr):
    """check_pooled of a statistic of the per-seed curves G (n_seeds, n_k)."""
    n = len(G)
    return check_pooled(lambda idx: stat(G[np.asarray(idx)].mean(0)), n, op, thr)


def _censor_guard(check: Check, directions: set) -> Check:
    """Lower a verdict of a ">=" / ">" statistic that censored values could overturn to
    inconclusive. ``directions``: the signs (+1 larger, -1 smaller) in which the unknown
    true values of the censored k* could move the statistic."""
    hurts = ((check.verdict == REPRODUCED and -1 in directions)
             or (check.verdict == NOT_REPRODUCED and 1 in directions))
    if hurts:
        check.verdict = INCONCLUSIVE
        check.why = "censored values could overturn it"
    return check


def _kstars(k, curves_by_m, eps):
    """k*(m) and censoring signs from the seed-mean family gap curves."""
    out, signs = [], []
    for G in curves_by_m:
        v, s = fit.required_size(k, G.mean(0), eps)
        out.append(v)
        signs.append(s)
    return np.array(out), np.array(signs)


def check(cfg: dict, metrics, curves) -> list:
    params = cfg.get("params", {})
    ipcs = _ipcs(cfg, metrics)
    k = np.array(ipcs, float) * 10
    bounds = (params.get("alpha_min", 0.05), params.get("alpha_max", 2.0))
    eps = float(params.get("eps", 0.04))
    n_seeds = int(metrics["seed"].nunique()) if len(metrics) else 0
    law1 = _settings(cfg, "law1")
    c0, c1, c2 = (C.name(c) for c in C.SHIFT)
    claims = []

    # 1. diminishing returns -------------------------------------------------------------
    c = Claim("C1-diminishing-returns",
              "For DM and GM on c0 the gap is non-increasing in k (tolerance 0.5 points) and "
              "the last doubling (IPC 20 -> 40) reduces the gap by less than 25% of the first "
              "(IPC 1 -> 2).",
              "<= / <", {"max rise": 0.005, "(D20 - D40) - 0.25 (D1 - D2)": 0.0},
              n_seeds=n_seeds,
              note="Statistics of the seed-mean gap curve on c0, 95% bootstrap intervals "
                   "over seeds.")
    notes = []
    for s in law1:
        for m in (DM, GM):
            G = seed_curves(metrics, m, s, _gap(c0), ipcs)
            if G is None:
                continue
            G = G.to_numpy(float)
            c.add(f"{s}:{m}:max_rise<=0.005",
                  _pooled(G, lambda g: float(np.max(np.diff(g))), "<=", 0.005))
            if all(q in ipcs for q in (1, 2, 20, 40)):
                i1, i2, i20, i40 = (ipcs.index(q) for q in (1, 2, 20, 40))

                def last_vs_first(g, i1=i1, i2=i2, i20=i20, i40=i40):
                    return float((g[i20] - g[i40]) - 0.25 * (g[i1] - g[i2]))

                c.add(f"{s}:{m}:last-0.25first<0", _pooled(G, last_vs_first, "<", 0.0))
                g = G.mean(0)
                notes.append(f"{s} {m}: first drop {g[i1] - g[i2]:.4f}, last drop "
                             f"{g[i20] - g[i40]:.4f}")
    if notes:
        c.note += " Seed-mean drops: " + "; ".join(notes) + "."
    claims.append(c)

    # 2. rate ------------------------------------------------------------------------------
    c = Claim("C2-rate-k^-1/2",
              "The free fit Delta = A k^-alpha + F on c0 has R^2 >= 0.9 and alpha >= 0.4 for "
              "DM and GM, and every grid point satisfies Delta(k) <= (Delta(k_min) - F) "
              "(k / k_min)^-1/2 + F + 0.01.",
              ">= / >= / <=", {"R2": 0.9, "alpha": 0.4, "excess over envelope": 0.0},
              n_seeds=n_seeds,
              note="Bounded least-squares fit of the seed-mean c0 curve (A, F >= 0, alpha in "
                   "[0.05, 2]); 95% bootstrap intervals over seeds (each resample refitted).")
    notes = []
    for s in law1:
        for m in (DM, GM):
            G = seed_curves(metrics, m, s, _gap(c0), ipcs)
            if G is None or len(ipcs) < 4:
                continue
            fits = CurveFits(k, G.to_numpy(float), bounds)
            c.add(f"{s}:{m}:R2>=0.9", check_pooled(fits.stat("r2"), len(G), ">=", 0.9))
            c.add(f"{s}:{m}:alpha>=0.4", check_pooled(fits.stat("alpha"), len(G), ">=", 0.4))
            c.add(f"{s}:{m}:envelope_excess<=0",
                  check_pooled(fits.stat("excess"), len(G), "<=", 0.0))
            f = fits.point
            notes.append(f"{s} {m}: A {f['A']:.3g}, alpha {f['alpha']:.3f}, floor "
                         f"{f['F']:.4f}, R^2 {f['r2']:.3f}, R^2 with alpha fixed at 0.5 "
                         f"{f['r2_half']:.3f}")
    if notes:
        c.note += " Point fits: " + "; ".join(notes) + "."
    claims.append(c)

    # 3. configuration mismatch -------------------------------------------------------------
    c = Claim("C3-configuration-mismatch",
              "At every IPC <= 10, the gap of the c0-distilled set on the shifted "
              "configurations (mean of c1, c2) exceeds its within-configuration gap by >= 1 "
              "point.",
              ">=", 0.01, n_seeds=n_seeds,
              note="DM set distilled for c0 (the spec's Fig. 2); per seed the paired "
                   "difference mean(gap c1, gap c2) - gap c0, check_mean per IPC. c1 = "
                   f"{c1}, c2 = {c2}.")
    notes = []
    for s in law1:
        cols = {n: seed_curves(metrics, DM, s, _gap(n), ipcs) for n in (c0, c1, c2)}
        if any(v is None for v in cols.values()):
            continue
        shift = (cols[c1] + cols[c2]) / 2 - cols[c0]
        for q in ipcs:
            if q <= 10:
                c.add(f"{s}:ipc{q}", check_mean(shift[q], ">=", 0.01))
        part = metrics[(metrics["method"] == DM) & (metrics["setting"] == s)]
        refs = [f"{n} {part[f'ref_err:{n}'].mean():.4f}" for n in (c0, c1, c2)
                if f"ref_err:{n}" in part]
        if refs:
            notes.append(f"{s}: full-data test error " + ", ".join(refs))
        if 40 in ipcs:
            notes.append(f"{s}: shift penalty at IPC 40 {shift[40].mean():+.4f} (not claimed)")
        for m in (DM, GM, RANDOM):
            for n in (c0, c1, c2):
                G = seed_curves(metrics, m, s, _gap(n), ipcs)
                if G is None or len(G) < 3 or len(ipcs) < 4:
                    continue
                f0, lo, hi = fit.floor_interval(k, G.to_numpy(float), bounds)
                notes.append(f"{s} {m} floor on {n}: {f0:.4f} [{lo:.4f}, {hi:.4f}]")
    if notes:
        c.note += " Reported: " + "; ".join(notes) + " (floor 95% intervals: bootstrap " \
                                                      "over seeds)."
    claims.append(c)

    # 4. coverage law ------------------------------------------------------------------------
    c = Claim("C4-coverage-law",
              "k*(m) is non-decreasing in m, k*(8) >= 2 x k*(1), and the linear fit of k*(m) "
              "in m has R^2 >= 0.8 with positive slope.",
              ">= / >= / >= / >", {"min step": 0.0, "k*(max m) / k*(min m)": 2.0, "R2": 0.8,
                                   "slope": 0.0},
              n_seeds=n_seeds,
              note=f"k*(m): smallest k whose seed-mean family gap is <= eps = {eps} "
                   "(interpolated in log k); 95% bootstrap over seeds, all m resampled "
                   "together.")
    cover = sorted(_settings(cfg, "cover"), key=lambda s: int(cfg["settings"][s]["m"]))
    ms = np.array([int(cfg["settings"][s]["m"]) for s in cover], float)
    Gs = [seed_curves(metrics, DM, s, lambda q: f"gapF:ipc{q}", ipcs) for s in cover]
    if len(cover) >= 2 and all(G is not None for G in Gs):
        seeds = sorted(set.intersection(*[set(G.index) for G in Gs]))
        arr = [G.loc[seeds].to_numpy(float) for G in Gs]
        kst, signs = _kstars(k, arr, eps)

        memo = {}

        def kstar_at(idx):
            key = np.sort(np.asarray(idx)).tobytes()     # a mean ignores the order of seeds
            if key not in memo:
                memo[key] = _kstars(k, [a[np.asarray(idx)] for a in arr], eps)[0]
            return memo[key]

        cens = {int(s) for s in signs if s}
        c.add("min_step>=0", _censor_guard(check_pooled(
            lambda idx: float(np.min(np.diff(kstar_at(idx)))), len(seeds), ">=", 0.0),
            {1, -1} if cens else set()))
        # ratio: k*(max m) censored above or k*(min m) censored below make it larger
        dirs = set()
        if signs[-1]:
            dirs.add(int(signs[-1]))
        if signs[0]:
            dirs.add(-int(signs[0]))
        c.add("ratio>=2", _censor_guard(check_pooled(
            lambda idx: float(kstar_at(idx)[-1] / kstar_at(idx)[0]), len(seeds), ">=", 2.0),
            dirs))
        c.add("R2>=0.8", _censor_guard(check_pooled(
            lambda idx: fit.linear_fit(ms, kstar_at(idx))[2], len(seeds), ">=", 0.8),
            {1, -1} if cens else set()))
        c.add("slope>0", _censor_guard(check_pooled(
            lambda idx: fit.linear_fit(ms, kstar_at(idx))[0], len(seeds), ">", 0.0),
            {1, -1} if cens else set()))
        a, b, r2 = fit.linear_fit(ms, kst)
        desc = ", ".join(f"m={int(m)}: {v:.1f}" + (" (never reached, >=)" if s > 0 else
                                                   " (reached at k_min, <=)" if s < 0 else "")
                         for m, v, s in zip(ms, kst, signs, strict=True))
        big = metrics[(metrics["method"] == DM) & (metrics["setting"] == cover[-1])]
        q_mid = min(ipcs, key=lambda q: abs(q - 10))
        members = []
        for cf in C.farthest_point_order()[: int(ms.max())]:
            n = C.name(cf)
            if f"gap:{n}:ipc{q_mid}" in big and f"ref_err:{n}" in big:
                members.append(f"{n} (full-data error {big[f'ref_err:{n}'].mean():.4f}, "
                               f"gap {big[f'gap:{n}:ipc{q_mid}'].mean():+.4f})")
        if members:
            c.note += (f" Largest family {cover[-1]}, per member at IPC {q_mid}: "
                       + "; ".join(members) + ".")
        c.note += (f" k*(m): {desc}; line k* = {a:.2f} m + {b:.2f}, R^2 {r2:.3f}. Family "
                   "members: " + "; ".join(f"F_{int(m)} adds {C.name(cf)}" for m, cf in
                                            zip(range(1, int(ms.max()) + 1),
                                                C.farthest_point_order(), strict=False)) + ".")
    claims.append(c)

    # 5. interchangeable surrogates -----------------------------------------------------------
    c = Claim("C5-interchangeable-surrogates",
              "At every IPC >= 5, |Delta_DM - Delta_GM| <= 0.03 on c0, and both beat random "
              "subsets by >= 3 points at every IPC <= 10.",
              "within / >=", {"|DM - GM|": 0.03, "random - method": 0.03}, n_seeds=n_seeds,
              note="Per-seed paired differences on c0 (same split, start and evaluation "
                   "networks), check_mean; |DM - GM| <= 0.03 as an equivalence test "
                   "(interval within [-0.03, 0.03]).")
    for s in law1:
        D, Gm, Rn = (seed_curves(metrics, m, s, _gap(c0), ipcs) for m in (DM, GM, RANDOM))
        if D is not None and Gm is not None:
            diff = D - Gm
            for q in ipcs:
                if q >= 5:
                    c.add(f"{s}:ipc{q}:DM-GM<=0.03", check_mean(diff[q], "<=", 0.03))
                    c.add(f"{s}:ipc{q}:DM-GM>=-0.03", check_mean(diff[q], ">=", -0.03))
        if Rn is not None:
            for m, M in ((DM, D), (GM, Gm)):
                if M is None:
                    continue
                adv = Rn - M
                for q in ipcs:
                    if q <= 10:
                        c.add(f"{s}:ipc{q}:random-{m}>=0.03", check_mean(adv[q], ">=", 0.03))
    claims.append(c)

    # S1. covering numbers ----------------------------------------------------------------
    c = Claim("S1-covering-number",
              "Each farthest-point family F_m has covering number m at radius 0.5.",
              "==", 0, category="sanity", n_seeds=n_seeds,
              note="max over the run's families of |covering number - m| (greedy cover, exact "
                   "with integer distances).")
    order = C.farthest_point_order()
    if len(cover):
        dev = max(abs(C.covering_number(order[: int(m)]) - int(m)) for m in ms)
        c.add("value", check_value(float(dev), "<=", 0.0))
    claims.append(c)
    return claims


def floors_table(cfg, metrics):
    """Per (setting, method, evaluated configuration): the seed-mean fit and a bootstrap
    interval of its floor."""
    import pandas as pd

    params = cfg.get("params", {})
    ipcs = _ipcs(cfg, metrics)
    k = np.array(ipcs, float) * 10
    bounds = (params.get("alpha_min", 0.05), params.get("alpha_max", 2.0))
    rows = []
    for s in _settings(cfg, "law1"):
        names = sorted({col.split(":")[1] for col in metrics.columns if col.startswith("gap:")},
                       key=lambda n: (n != C.name(C.C0), n != C.name(C.C1),
                                      n != C.name(C.C2), n))
        for m in cfg["methods"]:
            for n in names:
                G = seed_curves(metrics, m, s, _gap(n), ipcs)
                if G is None or len(ipcs) < 4 or not np.isfinite(G.to_numpy(float)).any():
                    continue                       # not evaluated on this configuration
                G = G.to_numpy(float)
                mean = G.mean(0)
                f = fit.fit_power_floor(k, mean, bounds)
                half = fit.fit_power_floor(k, mean, alpha=0.5)
                _, lo, hi = fit.floor_interval(k, G, bounds)
                ci = f"[{lo:.4f}, {hi:.4f}]" if np.isfinite(lo) else "—"
                rows.append({"setting": s, "method": m, "evaluated on": n,
                             "alpha": round(f["alpha"], 3), "A": round(f["A"], 4),
                             "floor F": round(f["F"], 4), "floor 95% CI": ci,
                             "R^2": round(f["r2"], 3), "R^2 (alpha = 0.5)": round(half["r2"], 3),
                             "gap at largest k": round(float(mean[-1]), 4)})
    return pd.DataFrame(rows)


