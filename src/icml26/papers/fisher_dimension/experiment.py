"""Stages of the fisher-dimension paper: one run = one SEM instance (setting = family x regime,
seed = instance seed) with its Fisher dimensions, baseline predictors and observed sample
complexity n* of PC.

Per instance (the spec's pseudo-code):
    A = sample_dag(family, p); B, D = sample_params(A, regime); Sigma = cov(B, D)
    F_edge, F_all = fisher_dims(A, Sigma)
    n* = bisect(grid, lambda n: success(A, Sigma, n, trials, alpha) >= threshold)
The instance comes from derive_seed(paper, setting, seed, "instance"); the data sets at a given
n from run.rng_seed(paper, "data-n<n>"), so success(n) is the same whichever path the bisection
takes and whatever the sharding. The success at every evaluated n is written as a curve row
(step = n, metric = success); the per-instance numbers are state arrays read by evaluate.
"""

from __future__ import annotations

import numpy as np

from icml26.scaling import bisect_grid, geometric_grid
from icml26.seeding import derive_seed

from . import sem
from .pc import success_rate

SCALARS = ("F_edge", "F_all", "rho_edge", "rho_all", "n_star", "n_star_found", "n_edges",
           "max_indeg", "max_deg", "naive", "minimax", "p", "pc_evaluations")


def setting_params(cfg: dict, setting: str) -> dict:
    """Paper params overridden by the setting's own (family, regime, optional p)."""
    return {**cfg["params"], **(cfg["settings"][setting] or {})}


def n_grid(params: dict) -> np.ndarray:
    g = params["grid"]
    return geometric_grid(float(g["start"]), float(g["stop"]), int(g["num"]))


def thresholds(params: dict) -> list[float]:
    """Success thresholds: the primary one first, then any others (full profile)."""
    primary = float(params["threshold"])
    extra = [float(t) for t in params.get("extra_thresholds", []) if float(t) != primary]
    return [primary] + extra


def threshold_name(t: float) -> str:
    return f"n_star_t{t:g}"


def instance(cfg: dict, setting: str, seed: int):
    """(A, B, D, Sigma) of one (setting, seed), the same for every method."""
    prm = setting_params(cfg, setting)
    regime = prm["regimes"][prm["regime"]]
    rng = np.random.default_rng(derive_seed(cfg["paper"], setting, seed, "instance"))
    A = sem.sample_dag(prm["family"], int(prm["p"]), rng, float(prm["er_prob"]))
    B, D = sem.sample_params(A, regime["b"], regime["d"], rng)
    return A, B, D, sem.covariance(B, D)


def solve_instance(cfg: dict, run) -> tuple[dict[str, np.ndarray], dict[str, float], dict]:
    """Arrays, scalars and the evaluated success curve {n: success} of one run."""
    prm = setting_params(cfg, run.setting)
    if run.method != "pc-fisherz":
        raise ValueError(f"unknown method {run.method!r}; allowed: pc-fisherz")
    A, B, D, Sigma = instance(cfg, run.setting, run.seed)
    f_edge, rho_edge = sem.fisher_edge(A, Sigma)
    f_all, rho_all = sem.fisher_all(A, Sigma)
    grid = n_grid(prm)
    trials, alpha = int(prm["trials"]), float(prm["alpha"])
    curve: dict[int, float] = {}

    def success(n: float) -> float:
        n = int(n)
        if n not in curve:                    # cached: thresholds share evaluations
            rng = np.random.default_rng(run.rng_seed(cfg["paper"], f"data-n{n}"))
            curve[n] = success_rate(A, B, D, n, trials, alpha, rng)
        return curve[n]

    n_star = {}
    for t in thresholds(prm):
        n_star[t], _ = bisect_grid(grid, lambda n, t=t: success(n) >= t)
    primary = thresholds(prm)[0]
    scalars = {
        "F_edge": f_edge, "F_all": f_all, "rho_edge": rho_edge, "rho_all": rho_all,
        "n_star": n_star[primary], "n_star_found": float(np.isfinite(n_star[primary])),
        **sem.structural_predictors(A),
        "naive": sem.naive_predictor(A, B),
        "minimax": sem.minimax_predictor(prm["regimes"][prm["regime"]]["b"]),
        "p": float(A.shape[0]), "pc_evaluations": float(len(curve)),
    }
    for t in thresholds(prm)[1:]:
        scalars[threshold_name(t)] = n_star[t]
    arrays = {"A": A, "B": B, "D": D}
    return arrays, scalars, curve


# ---------------------------------------------------------------------------------------------
def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Nothing to precompute: instances are regenerated from their seeds. Saves the n-grid per
    setting for the record."""
    return {f"grid/{s}": n_grid(setting_params(cfg, s)) for s in cfg["settings"]}


def train(cfg: dict, data: dict, runs: list) -> tuple[dict[str, np.ndarray], list[dict]]:
    state: dict[str, np.ndarray] = {}
    curves: list[dict] = []
    for run in runs:
        arrays, scalars, curve = solve_instance(cfg, run)
        for name, arr in arrays.items():
            state[f"{run.key}/{name}"] = np.asarray(arr)
        for name, value in scalars.items():
            state[f"{run.key}/{name}"] = np.array(float(value))
        for n in sorted(curve):
            curves.append({**run.as_dict(), "step": int(n), "metric": "success",
                           "value": float(curve[n])})
    return state, curves


def evaluate(cfg: dict, data: dict, runs: list, state: dict, curves) -> list[dict]:
    """The per-instance scalars, plus log10 F_edge (used by the structure-vs-parameters claims)."""
    out = []
    for run in runs:
        prm = setting_params(cfg, run.setting)
        names = list(SCALARS) + [threshold_name(t) for t in thresholds(prm)[1:]]
        row = {name: float(state[f"{run.key}/{name}"]) for name in names}
        row["log10_F_edge"] = float(np.log10(row["F_edge"]))
        row["log10_F_all"] = float(np.log10(row["F_all"]))
        out.append(row)
    return out
