"""Stages of the fedqueue paper: prepare (data sets), train (simulate runs), evaluate (metrics).

A run is (method, setting, seed) and simulates one federation over the horizon T_max on the
event clock of simulator.py. What a (setting, seed) fixes is identical for every method
(paired comparisons), all derived with ``icml26.seeding.derive_seed`` from names:
- the stratified 70/30 train/test split: (paper, "split", seed, task);
- the Dirichlet(alpha) partition over facilities (min 10 samples): (paper, "partition",
  seed, task, alpha, N);
- the initial model: (paper, "init", seed, task, model);
- the queue delays: (paper, "queue", seed, i) per facility i, consumed in job order
  (simulator.QueueModel), so the k-th job of facility i waits the same under every method.
None of these names the method, and the settings of one seed that share a task/alpha/N share
them too (common random numbers across queue-variance settings). Only the local mini-batch
order is method randomness: run.rng_seed(paper, "local-i") per facility.

A setting gives sigma_q (queue log-sd), spike_prob (5x spikes), alpha (Dirichlet), and
optionally n_facilities (N > 8 tiles the spec's 8-facility profile - our choice), model
(mlp | cnn), task (digits | synthetic) and target (accuracy of the time-to-target).
"""

from __future__ import annotations

import math

import numpy as np

from icml26 import fed
from icml26.seeding import derive_seed

from . import baselines
from . import model as models
from .fedqueue import FedQueueConfig, fedqueue
from .simulator import QueueModel, Simulation, accuracy_at, normalised_auc, time_to_target

FEDQUEUE_VARIANTS = {
    "fedqueue": {},                               # params.fedqueue (official rule by default)
    "fedqueue-inferred": {"rule": "inferred"},    # the spec's earlier INFERRED reading
    "fedqueue-nopred": {"predict": False},
    "fedqueue-nostale": {"stale_weight": False},
    "fedqueue-nocutoff": {"cutoff": False},
}
JOB_COLUMNS = ("facility", "index", "t_submit", "delay", "steps", "t_done", "predicted",
               "status", "staleness", "round", "lr")


def setting_params(cfg: dict, setting: str) -> dict:
    return {**cfg["params"], **(cfg["settings"][setting] or {})}


def facility_profile(p: dict) -> tuple[np.ndarray, np.ndarray]:
    """Median queue delay m_i and compute time per step c_i of N facilities.

    N > len(profile) repeats the spec's 8-facility profile (full profile; our choice).
    """
    m, c = np.asarray(p["medians"], float), np.asarray(p["compute"], float)
    n = int(p.get("n_facilities", len(m)))
    return m[np.arange(n) % len(m)], c[np.arange(n) % len(c)]


# --- data -------------------------------------------------------------------------------------
# scikit-learn's shipped digits in [0, 1], read without importing scikit-learn
load_digits_scaled = fed.load_digits_scaled


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Digits (scaled to [0, 1]) and, if a setting asks for it, the synthetic 50-class task."""
    x, y = load_digits_scaled()
    out = {"digits_x": x, "digits_y": y}
    tasks = {setting_params(cfg, s).get("task", "digits") for s in cfg["settings"]}
    if "synthetic" in tasks:
        from sklearn.datasets import make_classification

        p = cfg["params"]
        xs, ys = make_classification(
            n_samples=int(p.get("synthetic_n", 5000)), n_features=200, n_informative=40,
            n_redundant=20, n_classes=50, n_clusters_per_class=1, class_sep=2.0,
            random_state=int(rng.integers(2**31)))
        # standardised (our choice: min-max scaling trains this 200-feature task far slower)
        out["synthetic_x"] = (xs - xs.mean(axis=0)) / xs.std(axis=0)
        out["synthetic_y"] = ys.astype(np.int64)
    return out


def stratified_split(y: np.ndarray, test_frac: float, rng: np.random.Generator):
    """Per class, a random round(test_frac n_c) of the samples go to the test set."""
    train, test = [], []
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        k = int(round(test_frac * len(idx)))
        test.append(idx[:k])
        train.append(idx[k:])
    return np.sort(np.concatenate(train)), np.sort(np.concatenate(test))


def federation(cfg: dict, data: dict, setting: str, seed: int) -> dict:
    """Everything a (setting, seed) fixes for all methods: split, partition, init, profile."""
    paper, p = cfg["paper"], setting_params(cfg, setting)
    task = p.get("task", "digits")
    x, y = data[f"{task}_x"], data[f"{task}_y"]
    tr, te = stratified_split(y, float(p["test_frac"]),
                              np.random.default_rng(derive_seed(paper, "split", seed, task)))
    medians, compute = facility_profile(p)
    n_fac, alpha = len(medians), float(p["alpha"])
    part_rng = np.random.default_rng(derive_seed(paper, "partition", seed, task, alpha, n_fac))
    parts = fed.dirichlet_partition(y[tr], n_fac, alpha, part_rng, min_size=int(p["min_size"]))
    n_classes = int(y.max()) + 1
    net = models.build(p.get("model", "mlp"), x.shape[1], n_classes, int(p["hidden"]))
    theta0 = net.init(np.random.default_rng(
        derive_seed(paper, "init", seed, task, p.get("model", "mlp"))))
    return {"x": x[tr], "y": y[tr], "x_test": x[te], "y_test": y[te], "clients": parts,
            "medians": medians, "compute": compute, "model": net, "theta0": theta0}


def fedqueue_config(p: dict, method: str) -> FedQueueConfig:
    return FedQueueConfig(**{**p.get("fedqueue", {}), **FEDQUEUE_VARIANTS[method]})


def build_simulation(cfg: dict, fedn: dict, run) -> Simulation:
    p = setting_params(cfg, run.setting)
    horizon = float(p["horizon"])
    # enough pre-drawn delays for the shortest possible jobs (no queue wait, the fewest local
    # steps any rule can give). The same cap for every method: the queue stream's draws
    # depend on it.
    fq = fedqueue_config(p, "fedqueue")
    fewest = min(fq.k_min, fq.warm_up_steps, fq.k_ref, int(p["local_steps"]))
    cap = int(math.ceil(horizon / (fewest * fedn["compute"].min()))) + 2
    queue = QueueModel.for_run(cfg["paper"], run.seed, fedn["medians"], float(p["sigma_q"]),
                               float(p["spike_prob"]), float(p["spike_factor"]), cap)
    rngs = [np.random.default_rng(run.rng_seed(cfg["paper"], f"local-{i}"))
            for i in range(len(fedn["clients"]))]
    return Simulation(fedn["model"], fedn["x"], fedn["y"], fedn["x_test"], fedn["y_test"],
                      fedn["clients"], fedn["compute"], queue, horizon, float(p["lr"]),
                      int(p["batch"]), fedn["theta0"], rngs)


def simulate(cfg: dict, fedn: dict, run) -> Simulation:
    """One run of one method on the shared clock; returns the finished simulation."""
    p = setting_params(cfg, run.setting)
    sim = build_simulation(cfg, fedn, run)
    k = int(p["local_steps"])
    if run.method == "fedavg-sync":
        baselines.fedavg_sync(sim, k)
    elif run.method == "fedasync":
        baselines.fedasync(sim, k, float(p["fedasync_alpha"]), float(p["staleness_exponent"]))
    elif run.method == "fedbuff":
        baselines.fedbuff(sim, k, int(p["fedbuff_buffer"]), float(p["staleness_exponent"]))
    elif run.method in FEDQUEUE_VARIANTS:
        fedqueue(sim, fedn["medians"], fedqueue_config(p, run.method))
    else:
        raise ValueError(f"unknown method {run.method!r}")
    return sim


def job_table(sim: Simulation) -> np.ndarray:
    return np.array([[j.facility, j.index, j.t_submit, j.delay, j.steps, j.t_done, j.predicted,
                      j.status, j.staleness, j.round, j.lr] for j in sim.trace.jobs],
                    dtype=float).reshape(-1, len(JOB_COLUMNS))


def train(cfg: dict, data: dict, runs: list) -> tuple[dict[str, np.ndarray], list[dict]]:
    state: dict[str, np.ndarray] = {}
    curves: list[dict] = []
    cache: dict = {}
    for run in sorted(runs, key=lambda r: (r.setting, r.seed)):
        key = (run.setting, run.seed)
        if key not in cache:
            cache = {key: federation(cfg, data, run.setting, run.seed)}
        p = setting_params(cfg, run.setting)
        sim = simulate(cfg, cache[key], run)
        tr = sim.trace
        state[f"{run.key}/t"] = np.asarray(tr.times)
        state[f"{run.key}/acc"] = np.asarray(tr.accs)
        state[f"{run.key}/staleness"] = np.asarray(tr.staleness, dtype=np.int64)
        state[f"{run.key}/jobs"] = job_table(sim)
        state[f"{run.key}/dropped"] = np.array([tr.dropped])
        grid = np.arange(0.0, float(p["horizon"]) + 1e-9, float(p["curve_dt"]))
        for t, a in zip(grid, accuracy_at(tr.times, tr.accs, grid), strict=True):
            curves.append({**run.as_dict(), "step": float(t), "metric": "acc", "value": float(a)})
        for tau, count in enumerate(np.bincount(np.asarray(tr.staleness, dtype=int))):
            curves.append({**run.as_dict(), "step": tau, "metric": "stale_count",
                           "value": float(count)})
        jobs = state[f"{run.key}/jobs"]
        for i in range(len(cache[key]["clients"])):
            mine = jobs[jobs[:, 0] == i, 4]
            curves.append({**run.as_dict(), "step": i, "metric": "local_steps",
                           "value": float(mine.mean()) if mine.size else math.nan})
    return state, curves


def evaluate(cfg: dict, data: dict, runs: list, state: dict, curves) -> list[dict]:
    """Per run: TTT (censored at T_max), final accuracy, AUC/T_max, staleness, drops, errors."""
    out = []
    for run in runs:
        p = setting_params(cfg, run.setting)
        horizon, target = float(p["horizon"]), float(p["target"])
        t, acc = state[f"{run.key}/t"], state[f"{run.key}/acc"]
        stale = state[f"{run.key}/staleness"].astype(float)
        jobs = state[f"{run.key}/jobs"]
        dropped = float(state[f"{run.key}/dropped"][0])
        ttt = time_to_target(t, acc, target, horizon)
        done = jobs[jobs[:, 5] <= horizon]
        # prediction error over returned jobs with a positive prediction (the official EWMA
        # starts at q_init = 0, whose log is -inf)
        err = done[np.isfinite(done[:, 6]) & (done[:, 6] > 0)]
        out.append({
            "ttt": ttt,
            "censored": float(not np.any(acc >= target)),
            "final_acc": float(acc[-1]),
            "auc": normalised_auc(t, acc, horizon),
            "stale_max": float(stale.max()) if stale.size else math.nan,
            "stale_p95": float(np.percentile(stale, 95)) if stale.size else math.nan,
            "stale_mean": float(stale.mean()) if stale.size else math.nan,
            "updates": float(len(t) - 1),
            "applied": float(stale.size),
            "dropped": dropped,
            "drop_frac": dropped / (stale.size + dropped) if stale.size + dropped else 0.0,
            "jobs": float(len(jobs)),
            "mean_steps": float(jobs[:, 4].mean()) if len(jobs) else math.nan,
            "pred_err": (float(np.mean(np.abs(np.log(err[:, 6]) - np.log(err[:, 3]))))
                         if len(err) else math.nan),
        })
    return out
