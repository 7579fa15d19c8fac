"""The spec's four claims (thresholds exactly as written) and one sanity check of the grid.

How each one is checked (fixed before any result was seen):
1. Complexity predicts gain: per dataset, the seed means of TC, MC and of each method's gain
   G_m = 1 - MSE_m / MSE_zero-shot (paired per seed); G*(D) = max_m of the seed-mean gains
   over {linear probe, LoRA, Time-PEFT}. Spearman rho over the nine grid datasets of
   z(TC) + z(MC) (z-scored across the datasets) and of TC and MC alone against G*. These
   statistics pool seeds, so check_pooled resamples seeds (bootstrap) and recomputes the
   seed means: rho(z(TC) + z(MC), G*) >= 0.6, rho(TC, G*) > 0, rho(MC, G*) > 0.
2. Headline: per seed, the mean over the five complex datasets of 1 - MSE_TP / MSE_LoRA;
   check_mean >= 0.10. "Time-PEFT < LoRA on >= 4 of 5 datasets (mean over seeds)" is a count
   over datasets: check_fraction of the per-dataset seed-mean differences MSE_TP - MSE_LoRA
   < 0 with at_least 0.8.
3. Adapters: per seed MSE_-chan / MSE_TP - 1 >= 0.10 on D(T-low, M-high) and D(T-mid,
   M-high); MSE_-freq / MSE_TP - 1 >= 0.05 on D(T-high, M-none) and D(T-high, M-mid);
   check_mean per dataset (every part must hold).
4. No harm on D(T-low, M-none): G* <= 0.2 (pooled over seeds as in 1, check_pooled) and
   |MSE_TP / MSE_LoRA - 1| <= 0.10 as two one-sided check_means of the per-seed ratio
   (<= 1.10 and >= 0.90).
S. Sanity (a premise of the grid, not a paper claim): the T level raises TC and the M level
   raises MC (per seed, the mean over the other factor's levels; check_mean of the
   differences mid - low, high - mid, high - low of TC and high - none of MC > 0, and
   check_every of the smaller TC step: T-low < T-mid < T-high on every seed).
A failed run (NaN/inf MSE) is NaN in every ratio it enters, counted and named by seed.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from icml26.claims import Claim, check_every, check_fraction, check_mean, check_pooled
from icml26.stats import spearman

ZS, LP, LORA, TP, NOFREQ, NOCHAN = ("zero-shot", "linear-probe", "lora", "time-peft",
                                    "time-peft-nofreq", "time-peft-nochan")
GAIN_METHODS = (LP, LORA, TP)
LEVELS_T = ("low", "mid", "high")
LEVELS_M = ("none", "mid", "high")


def grid_settings(cfg) -> dict:
    """The 3x3 grid datasets (default channels and horizon, grid kind): name -> (T, M)."""
    p = cfg.get("params", {})
    out = {}
    for s, sp in cfg["settings"].items():
        sp = sp or {}
        if sp.get("kind", "grid") != "grid" or "T" not in sp:
            continue
        if sp.get("channels", p.get("channels")) != p.get("channels"):
            continue
        if sp.get("horizon", p.get("horizon")) != p.get("horizon"):
            continue
        out[s] = (sp["T"], sp["M"])
    return out


def is_complex(tm) -> bool:
    return tm[0] == "high" or tm[1] == "high"


def find(grid: dict, T: str, M: str):
    return next((s for s, tm in grid.items() if tm == (T, M)), None)


def table(metrics: pd.DataFrame, col: str = "test_mse") -> pd.DataFrame:
    """(setting, seed) x method table of a metric."""
    if not len(metrics):
        return pd.DataFrame()
    return metrics.pivot_table(index=["setting", "seed"], columns="method", values=col,
                               aggfunc="first", dropna=False)


def gains(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per (setting, seed) gain 1 - MSE_m / MSE_zero-shot of each fine-tuning method."""
    t = table(metrics)
    if ZS not in t:
        return pd.DataFrame()
    with np.errstate(divide="ignore", invalid="ignore"):
        return pd.DataFrame({m: 1.0 - t[m] / t[ZS] for m in GAIN_METHODS if m in t})


def per_dataset(cfg, metrics, seeds=None) -> pd.DataFrame:
    """Seed means per grid dataset of TC, MC, each gain and G* (max over methods of the
    seed-mean gains), over the given seeds (with repeats, for the bootstrap)."""
    grid = grid_settings(cfg)
    g = gains(metrics)
    cx = metrics[metrics["method"] == ZS].set_index(["setting", "seed"])[["tc", "mc"]]
    both = g.join(cx, how="inner")
    rows = {}
    for s in grid:
        if s not in both.index.get_level_values(0):
            continue
        part = both.xs(s, level="setting")
        if seeds is not None:
            part = part.reindex(seeds)
        mean = part.mean(skipna=False)
        row = mean.to_dict()
        row["G*"] = float(mean[[m for m in GAIN_METHODS if m in mean]].max(skipna=False))
        rows[s] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def _rho(a, b) -> float:
    """Spearman rho; NaN when any value is not finite (a failed run never supports a claim)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return spearman(a, b) if np.isfinite(a).all() and np.isfinite(b).all() else np.nan


def _z(x):
    x = np.asarray(x, float)
    sd = x.std()
    return (x - x.mean()) / sd if sd > 0 else np.zeros_like(x)


def _seed_list(metrics):
    return sorted(metrics["seed"].unique()) if len(metrics) else []


def seed_arrays(cfg, metrics):
    """Grid datasets, seeds and (dataset, seed) arrays of TC, MC and each method's gain, for
    fast bootstrap resampling of seeds (NaN where a run is missing or failed)."""
    grid = grid_settings(cfg)
    seeds = _seed_list(metrics)
    g = gains(metrics)
    cx = metrics[metrics["method"] == ZS].set_index(["setting", "seed"])[["tc", "mc"]]
    names = [s for s in grid if len(g) and s in g.index.get_level_values(0)]
    idx = pd.MultiIndex.from_product([names, seeds], names=["setting", "seed"])
    arr = {col: cx[col].reindex(idx).to_numpy(float).reshape(len(names), len(seeds))
           for col in ("tc", "mc")}
    for m in GAIN_METHODS:
        if m in g:
            arr[m] = g[m].reindex(idx).to_numpy(float).reshape(len(names), len(seeds))
    return names, seeds, arr


def _means(arr, idx):
    """Seed means per dataset over the resampled seeds `idx`, and G* (NaN if any run failed)."""
    out = {k: v[:, idx].mean(axis=1) for k, v in arr.items()}
    gm = [out[m] for m in GAIN_METHODS if m in out]
    out["G*"] = np.max(np.stack(gm), axis=0) if gm else np.full(len(out["tc"]), np.nan)
    return out


def _pooled(cfg, metrics, fn, op, thr):
    names, seeds, arr = seed_arrays(cfg, metrics)

    def stat(idx):
        return fn(_means(arr, idx)) if len(names) >= 3 else np.nan
    return check_pooled(stat, len(seeds), op, thr)


def _ratio(metrics, setting, num, den) -> pd.Series:
    t = table(metrics)
    if num not in t or den not in t or setting not in t.index.get_level_values(0):
        return pd.Series(dtype=float)
    part = t.xs(setting, level="setting")
    with np.errstate(divide="ignore", invalid="ignore"):
        return (part[num] / part[den]).astype(float)


def check(cfg: dict, metrics: pd.DataFrame, curves: pd.DataFrame) -> list[Claim]:
    n_seeds = int(metrics["seed"].nunique()) if len(metrics) else 0
    grid = grid_settings(cfg)
    complex_ = [s for s, tm in grid.items() if is_complex(tm)]
    tab = per_dataset(cfg, metrics) if len(metrics) else pd.DataFrame()
    claims = []

    # 1 ---------------------------------------------------------------------------------------
    c = Claim("C1-complexity-predicts-gain",
              "Complexity predicts fine-tuning gain: Spearman rho(z(TC) + z(MC), G*) >= 0.6 "
              "across the nine datasets (mean gains over seeds), and rho(TC, G*) > 0 and "
              "rho(MC, G*) > 0.",
              ">= / > / >", {"rho(TC+MC,G*)": 0.6, "rho(TC,G*)": 0.0, "rho(MC,G*)": 0.0},
              n_seeds=n_seeds,
              note="Spearman over the grid datasets of seed means; 95% bootstrap over seeds.")
    c.add("rho(TC+MC,G*)", _pooled(cfg, metrics, lambda t: _rho(
        _z(t["tc"]) + _z(t["mc"]), t["G*"]), ">=", 0.6))
    c.add("rho(TC,G*)", _pooled(cfg, metrics, lambda t: _rho(t["tc"], t["G*"]), ">", 0.0))
    c.add("rho(MC,G*)", _pooled(cfg, metrics, lambda t: _rho(t["mc"], t["G*"]), ">", 0.0))
    if len(tab) >= 3:
        zs = table(metrics)[ZS].groupby(level="setting").mean().reindex(tab.index)
        c.note += (f" Premise 'zero-shot error rises with both complexities': rho(TC, zero-shot "
                   f"MSE) = {spearman(tab['tc'], zs):.2f}, rho(MC, zero-shot MSE) = "
                   f"{spearman(tab['mc'], zs):.2f}. Which method attains G* per dataset: "
                   + ", ".join(f"{s}: {tab.loc[s, list(GAIN_METHODS)].astype(float).idxmax()}"
                               for s in tab.index if tab.loc[s, list(GAIN_METHODS)].notna().any())
                   + ".")
    claims.append(c)

    # 2 ---------------------------------------------------------------------------------------
    c = Claim("C2-time-peft-beats-lora",
              "On the 5 complex datasets (T-high or M-high), the mean improvement of Time-PEFT "
              "over LoRA, 1 - MSE_TP / MSE_LoRA, is >= 10%, and Time-PEFT < LoRA on >= 4 of 5 "
              "datasets (mean over seeds).",
              ">= / fraction >=", {"mean_improvement": 0.10, "fraction_better": 0.8},
              n_seeds=n_seeds,
              note="Improvement per seed averaged over the complex datasets (check_mean); the "
                   "count is over datasets of seed-mean MSEs (check_fraction, 4 of 5 -> 0.8).")
    imp = pd.concat({s: 1.0 - _ratio(metrics, s, TP, LORA) for s in complex_}, axis=1) \
        if complex_ else pd.DataFrame()
    if len(imp.columns):
        c.add("mean_improvement", check_mean(imp.mean(axis=1, skipna=False), ">=", 0.10))
        t = table(metrics)
        diff = pd.Series({s: float(t.xs(s, level="setting")[TP].mean(skipna=False)
                                   - t.xs(s, level="setting")[LORA].mean(skipna=False))
                          for s in complex_})
        c.add("fraction_better", check_fraction(diff, "<", 0.0, at_least=0.8))
        c.note += " Per dataset: " + ", ".join(
            f"{s} {imp[s].mean():+.1%}" for s in complex_) + "."
    bs = metrics[metrics["method"].isin([LORA, TP])]
    if len(bs) and "best_step" in bs and "last_eval_step" in bs:
        frac = bs.groupby("method").apply(
            lambda d: float((d["best_step"] == d["last_eval_step"]).mean()), include_groups=False)
        c.note += (f" Premise check ({cfg.get('params', {}).get('steps')} steps): share of "
                   "runs whose best validation is at the last step (still improving): " + ", ".join(
                       f"{m} {v:.0%}" for m, v in frac.items()) + ".")
    claims.append(c)

    # 3 ---------------------------------------------------------------------------------------
    c = Claim("C3-adapters-do-their-job",
              "Removing the channel adapter raises Time-PEFT's MSE by >= 10% on D(T-low, M-high) "
              "and D(T-mid, M-high); removing the frequency adapter raises it by >= 5% on "
              "D(T-high, M-none) and D(T-high, M-mid).",
              ">=", {"-chan": 0.10, "-freq": 0.05}, n_seeds=n_seeds,
              note="check_mean of the per-seed MSE ratio - 1 on each dataset.")
    for (T, M), abl, thr in ((("low", "high"), NOCHAN, 0.10), (("mid", "high"), NOCHAN, 0.10),
                             (("high", "none"), NOFREQ, 0.05), (("high", "mid"), NOFREQ, 0.05)):
        s = find(grid, T, M)
        if s is not None:
            r = _ratio(metrics, s, abl, TP) - 1.0
            if len(r):
                c.add(f"{s}:{'-chan' if abl == NOCHAN else '-freq'}", check_mean(r, ">=", thr))
    claims.append(c)

    # 4 ---------------------------------------------------------------------------------------
    c = Claim("C4-no-harm-on-simple",
              "On D(T-low, M-none): the achievable gain G* <= 0.2 and "
              "|MSE_Time-PEFT / MSE_LoRA - 1| <= 0.10.",
              "<= / in", {"G*": 0.2, "ratio": [0.9, 1.1]}, n_seeds=n_seeds,
              note="G* as in claim 1 (bootstrap over seeds); the ratio per seed, check_mean "
                   "against both bounds.")
    simple = find(grid, "low", "none")
    if simple is not None:
        names, seeds, arr = seed_arrays(cfg, metrics)

        def gstar(idx):
            return float(_means(arr, idx)["G*"][names.index(simple)]) if simple in names \
                else np.nan
        c.add("G*", check_pooled(gstar, len(seeds), "<=", 0.2))
        r = _ratio(metrics, simple, TP, LORA)
        c.add("ratio<=1.1", check_mean(r, "<=", 1.1))
        c.add("ratio>=0.9", check_mean(r, ">=", 0.9))
        t = table(metrics)
        if simple in t.index.get_level_values(0):
            mean = t.xs(simple, level="setting").mean()
            c.note += (" Seed-mean test MSE on the simple dataset: " + ", ".join(
                f"{m} {mean[m]:.3f}" for m in (ZS, LP, LORA, TP) if m in mean) + " (an MSE of "
                "1 is that of forecasting the lookback mean). The claim presumes a backbone "
                "that is already good on simple data; Time-PEFT keeps the pretrained head "
                "frozen and corrects it only through its zero-initialised adapters, while the "
                "linear probe and LoRA retrain or adapt the head.")
    claims.append(c)

    # S ---------------------------------------------------------------------------------------
    rule = cfg.get("params", {}).get("amplitude_rule", "equal-variance")
    c = Claim("S1-grid-levels",
              "Sanity (premise of the grid): the T level raises temporal complexity TC "
              "(T-low < T-mid < T-high, in the mean and on every seed) and the M level raises "
              "multichannel complexity MC (M-high > M-none), per seed averaged over the other "
              "factor.",
              ">", 0.0, category="sanity", n_seeds=n_seeds,
              note="check_mean of per-seed differences of TC (MC) between consecutive T levels "
                   "(M-high and M-none); check_every of the per-seed smaller TC step "
                   f"min(mid - low, high - mid). Amplitude rule of the targets: {rule}.")
    zs = metrics[(metrics["method"] == ZS) & metrics["setting"].isin(list(grid))].copy()
    if len(zs):
        zs["T"] = zs["setting"].map(lambda s: grid[s][0])
        zs["M"] = zs["setting"].map(lambda s: grid[s][1])
        tc = zs.groupby(["seed", "T"])["tc"].mean().unstack("T")
        for hi, lo in (("mid", "low"), ("high", "mid"), ("high", "low")):
            if hi in tc and lo in tc:
                c.add(f"tc:T-{hi}>T-{lo}", check_mean(tc[hi] - tc[lo], ">", 0.0))
        if all(lev in tc for lev in LEVELS_T):
            step = np.minimum(tc["mid"] - tc["low"], tc["high"] - tc["mid"])
            c.add("tc:low<mid<high every seed", check_every(step, ">", 0.0))
        mc = zs.groupby(["seed", "M"])["mc"].mean().unstack("M")
        if "high" in mc and "none" in mc:
            c.add("mc:M-high>M-none", check_mean(mc["high"] - mc["none"], ">", 0.0))
        lv = zs.groupby("T")["tc"].mean().reindex(LEVELS_T)
        mv = zs.groupby("M")["mc"].mean().reindex(LEVELS_M)
        c.note += (" Mean TC by T level: " + ", ".join(f"{k} {v:.3f}" for k, v in lv.items())
                   + "; mean MC by M level: " + ", ".join(f"{k} {v:.3f}" for k, v in mv.items())
                   + ".")
    claims.append(c)
    return claims
