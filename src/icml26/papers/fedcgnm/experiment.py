"""Stages of the fedcgnm paper: prepare (digits), train (tune + federated runs), evaluate.

A run is (method, setting, seed). Data, client partition and initial model of a (setting,
seed) are identical for every method (paired comparisons; see data.py).

Step-size selection (the spec's protocol plus the project's grid-edge rule, done here by the
pipeline, never by hand): for each (method, setting), train runs the method's spec grid on the
tuning seed (the first seed of the config, seed 0 unless seeds are offset) and keeps the step
size with the best final validation balanced accuracy (ties, to 1e-9: the smallest value).
If that value is the grid's smallest or largest, the grid is extended in that direction by one
more step of the ratio of the spec grid's two values at that edge, and the selection is redone
over the extended grid; at most ``MAX_EXTENSIONS`` times (``select_step_sizes``). The rule is
the same for every method; only validation data of the tuning seed enter it. A choice still
on the edge after the last extension is recorded as such (``lr_on_edge``): the best step size
may lie beyond the grid. The chosen step size is used for every seed; the tuning seed's run at
that step size is the tuning run itself. A shard without the tuning seed recomputes the
(deterministic) tuning runs, so the selection and all results do not depend on sharding. Each
run records the chosen step size, the final grid and its validation scores (state arrays
``lr``, ``tune_lr``, ``tune_val``; curves ``tune_lr``, ``tune_val`` by grid position; metrics
``lr``, ``lr_extensions``, ``lr_on_edge``).

All runs of a shard are simulated together, in one vectorised computation per (setting,
client-optimizer family): first the tuning grid, then the other seeds at their chosen step size.
Accuracies are in percent (points).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from icml26 import fed
from icml26.grid import Run

from .data import make_dataset, n_classes, setting_params
from .federation import METHOD_SPECS, Job, family, simulate

PARAM_NAMES = ("w1", "b1", "w2", "b2")
CURVE_METRICS = ("val_bacc", "test_bacc", "grad_ratio", "share_ratio", "mom_ratio", "hoo_qa",
                 "hoo_qb")
PERCENT = ("val_bacc", "test_bacc")
# The project's grid-edge rule (PAPER-CHECKLIST): a choice on the grid's edge extends the grid
# in that direction by one step of the same ratio, at most twice, for every method alike.
MAX_EXTENSIONS = 2
TIE_DIGITS = 9           # scores (fractions) equal to 9 decimals are a tie
EXT_DIGITS = 4           # extended step sizes rounded to 4 significant digits (0.1 -> 0.3333)


def lr_grid(cfg: dict, method: str) -> list[float]:
    """The spec's grid of the method's family, ascending (the starting guess)."""
    return sorted(float(v) for v in cfg["params"]["lr_grid"][METHOD_SPECS[method]["kind"]])


@dataclass
class Selection:
    """Final step-size grid of one (method, setting) on the tuning seed and its choice."""

    lrs: list[float]          # ascending
    scores: list[float]       # final validation balanced accuracy per step size
    extensions: int           # grid values added past the spec grid's edge

    @property
    def chosen(self) -> int:
        # first maximum: the smaller step size. Scores equal to 1e-9 tie (a balanced accuracy
        # summed in another order can differ in its last bits); a NaN score never wins.
        v = np.round(np.nan_to_num(np.asarray(self.scores, float), nan=-np.inf), TIE_DIGITS)
        return int(np.argmax(v))

    @property
    def lr(self) -> float:
        return self.lrs[self.chosen]

    @property
    def on_edge(self) -> bool:
        """The choice is the smallest or largest value of a grid of two values or more."""
        return len(self.lrs) > 1 and self.chosen in (0, len(self.lrs) - 1)


def next_step_size(sel: Selection, spec_grid: list[float]) -> float | None:
    """The value the grid-edge rule adds, or None (choice inside the grid, a single-value
    grid, or the cap reached). Ratio: the spec grid's two values at that edge."""
    if not sel.on_edge or sel.extensions >= MAX_EXTENSIONS or len(spec_grid) < 2:
        return None
    if sel.chosen == 0:
        v = sel.lrs[0] * spec_grid[0] / spec_grid[1]
    else:
        v = sel.lrs[-1] * spec_grid[-1] / spec_grid[-2]
    return float(f"{v:.{EXT_DIGITS}g}")


def select_step_sizes(grids: dict, score: Callable[[dict], dict]) -> dict:
    """The grid-edge rule for many (method, setting) pairs at once.

    grids: pair -> spec grid (ascending). score: {pair: [lr, ...]} -> {pair: [score, ...]}
    (one batched evaluation per pass; here the final validation balanced accuracy on the
    tuning seed). Returns pair -> Selection.
    """
    first = score({k: list(v) for k, v in grids.items()})
    sel = {k: Selection(list(grids[k]), [float(x) for x in first[k]], 0) for k in grids}
    while True:
        todo = {k: v for k in grids if (v := next_step_size(sel[k], grids[k])) is not None}
        if not todo:
            return sel
        got = score({k: [v] for k, v in todo.items()})
        for k, v in todo.items():
            s = sel[k]
            pairs = sorted(zip(s.lrs + [v], s.scores + [float(got[k][0])], strict=True))
            sel[k] = Selection([a for a, _ in pairs], [b for _, b in pairs], s.extensions + 1)


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
    tuned: dict = {}                                     # (method, setting, lr) -> Job

    def score(todo: dict) -> dict:
        jobs = {k: [_job(cfg, k[0], k[1], tseed, lr) for lr in lrs] for k, lrs in todo.items()}
        _simulate_all(cfg, data, [j for js in jobs.values() for j in js], cache)
        for js in jobs.values():
            tuned.update({(j.method, j.setting, j.lr): j for j in js})
        return {k: [j.result["val_bacc"][-1] for j in js] for k, js in jobs.items()}

    sel = select_step_sizes({pair: lr_grid(cfg, pair[0]) for pair in pairs}, score)
    others = {r: _job(cfg, r.method, r.setting, r.seed, sel[(r.method, r.setting)].lr)
              for r in runs if r.seed != tseed}
    _simulate_all(cfg, data, list(others.values()), cache)

    state: dict[str, np.ndarray] = {}
    curves: list[dict] = []
    for run in runs:
        pair = (run.method, run.setting)
        sp = sel[pair]
        job = tuned[(*pair, sp.lr)] if run.seed == tseed else others[run]
        for name, arr in zip(PARAM_NAMES, job.result["params"], strict=True):
            state[f"{run.key}/{name}"] = arr
        state[f"{run.key}/lr"] = np.array([job.lr])
        state[f"{run.key}/tune_lr"] = np.array(sp.lrs)
        state[f"{run.key}/tune_val"] = 100 * np.array(sp.scores)
        state[f"{run.key}/tune_ext"] = np.array([sp.extensions])
        for i, (lr, v) in enumerate(zip(sp.lrs, sp.scores, strict=True)):
            curves.append({**run.as_dict(), "step": i, "metric": "tune_lr", "value": lr})
            curves.append({**run.as_dict(), "step": i, "metric": "tune_val",
                           "value": float(100 * v)})
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
    Also the final validation balanced accuracy, the chosen step size, the number of values
    the grid-edge rule added (``lr_extensions``), whether the choice is still on the final
    grid's edge (``lr_on_edge``, 1 or 0), and (FedCGNM runs with G > 1) the geometric means
    over rounds of the head- to tail-group ratio of raw group-gradient norms (``grad_ratio``)
    and of the groups' shares of the batch gradient (``share_ratio``); after normalisation it
    is 1 by construction.
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
        lrs = state[f"{run.key}/tune_lr"]
        row["lr_extensions"] = float(state[f"{run.key}/tune_ext"][0])
        row["lr_on_edge"] = float(len(lrs) > 1 and row["lr"] in (lrs[0], lrs[-1]))
        out.append(row)
    return out
