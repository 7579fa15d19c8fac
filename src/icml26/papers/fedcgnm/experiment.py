"""Stages of the fedcgnm paper: prepare (digits), train (tune + federated runs), evaluate.

A run is (method, setting, seed). Data, client partition and initial model of a (setting,
seed) are identical for every method (paired comparisons; see data.py).

Step-size selection (the spec's protocol, done here by the pipeline, never by hand): for each
(method, setting), train runs the method's 3-value step-size grid on the tuning seed (the first
seed of the config, seed 0 unless seeds are offset), and keeps the step size with the best
final validation balanced accuracy (ties: the first, i.e. smallest, value). That step size is
used for every seed; the tuning seed's run at that step size is the tuning run itself. A shard
without the tuning seed recomputes the (deterministic) tuning runs, so the selection and all
results do not depend on sharding. Each run records the chosen step size, the whole grid and the
grid's validation scores (state arrays and metrics ``lr``, ``tune_val_*``).

All runs of a shard are simulated together, in one vectorised computation per (setting,
client-optimizer family): first the tuning grid, then the other seeds at their chosen step size.
Accuracies are in percent (points).
"""

from __future__ import annotations

import numpy as np

from icml26 import fed
from icml26.grid import Run

from .data import make_dataset, n_classes, setting_params
from .federation import METHOD_SPECS, Job, family, simulate

PARAM_NAMES = ("w1", "b1", "w2", "b2")
CURVE_METRICS = ("val_bacc", "test_bacc", "grad_ratio", "share_ratio", "mom_ratio", "hoo_qa",
                 "hoo_qb")
PERCENT = ("val_bacc", "test_bacc")


def lr_grid(cfg: dict, method: str) -> list[float]:
    return [float(v) for v in cfg["params"]["lr_grid"][METHOD_SPECS[method]["kind"]]]


def tuning_seed(cfg: dict) -> int:
    return int(cfg["seeds"][0])


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The digits set (if a setting uses it) and the list of settings; Gaussian data are
    regenerated per (setting, seed) where needed (cheap and deterministic)."""
    names = list(cfg["settings"])
    out = {"settings": np.array(names)}
    if any(setting_params(cfg, s)["kind"] == "digits" for s in names):
        out["digits_x"], out["digits_y"] = fed.load_digits_scaled()
    return out


def _simulate_all(cfg: dict, data: dict, jobs: list[Job], cache: dict) -> None:
    """Group jobs by (setting, family) and simulate each group in one vectorised call."""
    groups: dict = {}
    for job in jobs:
        key = (job.setting, family(job.method, n_classes(cfg, job.setting)))
        groups.setdefault(key, []).append(job)
    for (setting, _), group in groups.items():
        for job in group:
            if (setting, job.seed) not in cache:
                cache[(setting, job.seed)] = make_dataset(cfg, setting, job.seed, data)
        datasets = {job.seed: cache[(setting, job.seed)] for job in group}
        simulate(group, datasets, {**setting_params(cfg, setting)})


def _job(cfg: dict, method: str, setting: str, seed: int, lr: float) -> Job:
    stream = Run(method, setting, seed).rng_seed(cfg["paper"], "batches")
    return Job(method, setting, seed, lr, stream)


def train(cfg: dict, data: dict, runs: list) -> tuple[dict[str, np.ndarray], list[dict]]:
    tseed = tuning_seed(cfg)
    pairs = list(dict.fromkeys((r.method, r.setting) for r in runs))
    cache: dict = {}
    tune = {(m, s): [_job(cfg, m, s, tseed, lr) for lr in lr_grid(cfg, m)] for m, s in pairs}
    _simulate_all(cfg, data, [j for js in tune.values() for j in js], cache)
    chosen = {}
    for pair, jobs in tune.items():
        finals = np.array([j.result["val_bacc"][-1] for j in jobs])
        chosen[pair] = int(np.argmax(finals))          # first maximum: the smaller step size
    others = {r: _job(cfg, r.method, r.setting, r.seed,
                      tune[(r.method, r.setting)][chosen[(r.method, r.setting)]].lr)
              for r in runs if r.seed != tseed}
    _simulate_all(cfg, data, list(others.values()), cache)

    state: dict[str, np.ndarray] = {}
    curves: list[dict] = []
    for run in runs:
        pair = (run.method, run.setting)
        job = tune[pair][chosen[pair]] if run.seed == tseed else others[run]
        for name, arr in zip(PARAM_NAMES, job.result["params"], strict=True):
            state[f"{run.key}/{name}"] = arr
        state[f"{run.key}/lr"] = np.array([job.lr])
        state[f"{run.key}/tune_lr"] = np.array([j.lr for j in tune[pair]])
        state[f"{run.key}/tune_val"] = np.array([100 * j.result["val_bacc"][-1]
                                                 for j in tune[pair]])
        if "groups" in job.result:
            state[f"{run.key}/groups"] = job.result["groups"]
        for metric in CURVE_METRICS:
            if metric not in job.result:
                continue
            scale = 100.0 if metric in PERCENT else 1.0
            for r, v in enumerate(job.result[metric]):
                if np.isfinite(v):
                    curves.append({**run.as_dict(), "step": r + 1, "metric": metric,
                                   "value": float(scale * v)})
        ds = cache[(run.setting, run.seed)]
        recall = _test_recall(job.result["params"], ds)
        for rank, label in enumerate(ds["rank"]):
            curves.append({**run.as_dict(), "step": rank, "metric": "test_recall",
                           "value": float(100 * recall[label])})
            curves.append({**run.as_dict(), "step": rank, "metric": "class_count",
                           "value": float(ds["counts"][label])})
    return state, curves


def _test_recall(params, ds: dict) -> np.ndarray:
    pred = fed.predict(params, ds["xt"])
    return fed.per_class_recall(ds["yt"], pred, len(ds["counts"]))


def evaluate(cfg: dict, data: dict, runs: list, state: dict, curves) -> list[dict]:
    """Final test balanced / head / tail accuracy (points) from each run's final model.

    head: mean recall of the ``head_tail_k`` most frequent classes; tail: of the rarest ones.
    Also the final validation balanced accuracy, the chosen step size and the tuning grid's
    validation scores, and (FedCGNM runs with G > 1) the geometric means over rounds of the
    head- to tail-group ratio of raw group-gradient norms (``grad_ratio``) and of the groups'
    shares of the batch gradient (``share_ratio``); after normalisation it is 1 by construction.
    """
    k = int(cfg["params"]["head_tail_k"])
    out = []
    cache: dict = {}
    for run in runs:
        if (run.setting, run.seed) not in cache:
            cache[(run.setting, run.seed)] = make_dataset(cfg, run.setting, run.seed, data)
        ds = cache[(run.setting, run.seed)]
        params = [state[f"{run.key}/{n}"] for n in PARAM_NAMES]
        recall = 100 * _test_recall(params, ds)
        part = curves[(curves["method"] == run.method) & (curves["setting"] == run.setting)
                      & (curves["seed"] == run.seed)]
        val = part[part["metric"] == "val_bacc"].sort_values("step")["value"].to_numpy()

        def geo(metric, part=part):
            v = part[part["metric"] == metric]["value"].to_numpy(dtype=float)
            return float(np.exp(np.mean(np.log(v)))) if v.size else np.nan

        row = {
            "bacc": float(recall.mean()),
            "head_acc": float(recall[ds["rank"][:k]].mean()),
            "tail_acc": float(recall[ds["rank"][-k:]].mean()),
            "val_bacc": float(val[-1]),
            "lr": float(state[f"{run.key}/lr"][0]),
            "grad_ratio": geo("grad_ratio"),
            "share_ratio": geo("share_ratio"),
        }
        for i, v in enumerate(state[f"{run.key}/tune_val"]):
            row[f"tune_val_{i}"] = float(v)
        out.append(row)
    return out
