"""Stages of the qkmeans paper: prepare (digits), train (seed every k), evaluate (k_max row).

A run is (method, setting, seed). Its data are a flat torus regenerated from
derive_seed(paper, setting, seed, "data"), identical for every method of that setting and
seed (paired comparisons), or the standardised digits set saved by prepare. One run seeds
every k of the setting's k-list and writes curve rows {step = k, metric, value} with
metric in cost (cost/n), evals (distance-equivalents), trials and eps_hat.
"""

from __future__ import annotations

import numpy as np

from icml26.seeding import derive_seed

from . import data as datasets
from .lsh import pilot_eps, qkmeans_lsh
from .seeding import afkmc2, kmeans_pp, lloyd, prefix_costs, qkmeans_exact, uniform

LSH_PREFIX = "qkmeans-lsh"


def setting_params(cfg: dict, setting: str) -> dict:
    """The paper's params overridden by the setting's own (d, sigma, k, dataset, ...)."""
    return {**cfg["params"], **(cfg["settings"][setting] or {})}


def k_list(cfg: dict, setting: str) -> list[int]:
    p = setting_params(cfg, setting)
    return sorted(int(k) for k in (p.get("k") or p["k_list"]))


def is_digits(cfg: dict, setting: str) -> bool:
    return setting_params(cfg, setting).get("dataset") == "digits"


def dataset(cfg: dict, setting: str, seed: int, data: dict) -> np.ndarray:
    """The points of one (setting, seed): digits, or a freshly generated flat torus."""
    if is_digits(cfg, setting):
        return data["digits"]
    p = setting_params(cfg, setting)
    rng = np.random.default_rng(derive_seed(cfg["paper"], setting, seed, "data"))
    return datasets.flat_torus(int(p["n"]), int(p["D"]), int(p["d"]), float(p.get("sigma", 0)),
                               rng)


def lsh_rho(method: str, params: dict) -> float:
    """rho of a Qkmeans-LSH method id: "qkmeans-lsh" uses params.rho, "qkmeans-lsh-0.25" 0.25."""
    if method == LSH_PREFIX:
        return float(params["rho"])
    return float(method[len(LSH_PREFIX) + 1:])


# ---------------------------------------------------------------------------------------------
def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The real-data set (digits) if a setting uses it, and the list of settings.

    Synthetic manifolds are regenerated per (setting, seed) in train: cheaper than writing
    n x D arrays for every seed to disk, and just as deterministic.
    """
    names = list(cfg["settings"])
    out = {"settings": np.array(names)}
    if any(is_digits(cfg, s) for s in names):
        out["digits"] = datasets.load_digits_standardised()
    return out


def seed_run(method: str, X: np.ndarray, ks: list[int], params: dict, rng_for) -> dict:
    """Seed X with one method for every k in ks.

    Returns {"rows": {k: {metric: value}}, "centres": {name: indices}}. Sequential samplers
    (k-means++, uniform, AFK-MC^2, Qkmeans-exact) seed once to k_max and read the prefixes
    (see seeding.py); Qkmeans-LSH depends on k through its number of tables L = ceil(k^rho),
    so it seeds each k separately (one pilot per run, charged to every k).
    """
    kmax = max(ks)
    rows: dict[int, dict] = {k: {} for k in ks}
    centres: dict[str, np.ndarray] = {}
    n = X.shape[0]
    rng = rng_for("seeding")
    if method in ("kmeans++", "uniform", "afkmc2", "qkmeans-exact"):
        if method == "kmeans++":
            s = kmeans_pp(X, kmax, rng)[0]
        elif method == "uniform":
            s = uniform(X, kmax, rng)
        elif method == "afkmc2":
            s = afkmc2(X, kmax, rng, m=int(params["chain_m"]))
        else:
            s = qkmeans_exact(X, kmax, rng, batch=int(params["batch"]))
        costs = prefix_costs(X, s.centres, ks)
        for k in ks:
            rows[k] = {"cost": costs[k], "evals": float(s.evals[k - 1])}
            if s.trials is not None:
                rows[k]["trials"] = float(s.trials[k - 1])
        centres["centres"] = s.centres
    elif method.startswith(LSH_PREFIX):
        rho = lsh_rho(method, params)
        eps_hat, pilot_cost = pilot_eps(X, rng_for("pilot"), n_sub=int(params["pilot_n"]),
                                        ks=tuple(params["pilot_k"]))
        for k in ks:
            s = qkmeans_lsh(X, k, rng_for(f"seeding-k{k}"), rho=rho, hashes=int(params["hashes"]),
                            batch=int(params["batch"]), eps_hat=eps_hat, pilot_evals=pilot_cost)
            rows[k] = {"cost": prefix_costs(X, s.centres, [k])[k], "evals": float(s.evals[-1]),
                       "trials": float(s.trials[-1]), "eps_hat": eps_hat}
            centres[f"centres_k{k}"] = s.centres
    elif method == "kmeans++lloyd":
        # full-profile OPT proxy: k-means++ (prefix of one seeding) + Lloyd from each prefix
        iters = int(params.get("lloyd_iters", 5))
        s = kmeans_pp(X, kmax, rng)[0]
        for k in ks:
            d2 = lloyd(X, X[s.centres[:k]], iters)
            rows[k] = {"cost": float(d2.mean()), "evals": float(n * k * (1 + iters))}
        centres["centres"] = s.centres
    else:
        raise ValueError(f"unknown method {method!r}")
    return {"rows": rows, "centres": centres}


def train(cfg: dict, data: dict, runs: list) -> tuple[dict[str, np.ndarray], list[dict]]:
    state: dict[str, np.ndarray] = {}
    curves: list[dict] = []
    cache: dict[tuple[str, int], np.ndarray] = {}
    # runs grouped by (setting, seed) so that each dataset is generated once and only one is
    # held in memory; results do not depend on the order (every run has its own streams)
    for run in sorted(runs, key=lambda r: (r.setting, r.seed)):
        key = (run.setting, run.seed)
        if key not in cache:
            cache = {key: dataset(cfg, run.setting, run.seed, data)}
        X = cache[key]
        params = setting_params(cfg, run.setting)

        def rng_for(stream, run=run):
            return np.random.default_rng(run.rng_seed(cfg["paper"], stream))

        out = seed_run(run.method, X, k_list(cfg, run.setting), params, rng_for)
        for name, idx in out["centres"].items():
            state[f"{run.key}/{name}"] = np.asarray(idx, dtype=np.int64)
        for k, metrics in out["rows"].items():
            for metric, value in metrics.items():
                curves.append({**run.as_dict(), "step": int(k), "metric": metric,
                               "value": float(value)})
    return state, curves


def evaluate(cfg: dict, data: dict, runs: list, state: dict, curves) -> list[dict]:
    """Headline metrics per run at k = k_max of its setting.

    cost (= cost/n), evals (distance-equivalents), evals_frac (evals / (n k), i.e. relative
    to k-means++), trials and eps_hat (NaN where a method has none).
    """
    out = []
    for run in runs:
        ks = k_list(cfg, run.setting)
        kmax = ks[-1]
        n = data["digits"].shape[0] if is_digits(cfg, run.setting) else int(
            setting_params(cfg, run.setting)["n"])
        part = curves[(curves["method"] == run.method) & (curves["setting"] == run.setting)
                      & (curves["seed"] == run.seed) & (curves["step"] == kmax)]
        values = dict(zip(part["metric"], part["value"].astype(float), strict=True))
        row = {m: values.get(m, np.nan) for m in ("cost", "evals", "trials", "eps_hat")}
        row["evals_frac"] = row["evals"] / (n * kmax)
        out.append(row)
    return out
