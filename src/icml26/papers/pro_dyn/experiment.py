"""Stages of pro-dyn: synthetic series (prepare), the five forecasters (train), test errors.

A setting is one cell of the grid: a data set, a lookback L and a horizon H. Every data set is
generated once in prepare from a fixed data seed (data id 0) and shared by all methods and
seeds, as a benchmark is; a seed changes the initialisation and the minibatches. Train cuts
the windows of each setting once and trains every run of its shard on them: Adam (lr, batch,
steps, gradient clip from params) on random training windows, the validation MSE checked every
`eval_every` steps and the best checkpoint kept (as the shared icml26.timeseries.models.fit).
All runs of one method whose cells have equal shapes train as one stacked computation
(stacking.fit_stacked: each run keeps its own initialisation, minibatches and best checkpoint,
all drawn from run.rng_seed, so no result depends on how runs are sharded or stacked).
Errors are measured on the standardised scale, averaged over test windows, channels and steps.
"""

from __future__ import annotations

import numpy as np

from icml26.seeding import rng as named_rng
from icml26.timeseries.linear import ridge_fit
from icml26.timeseries.windows import instance_normalise

from . import METHODS
from .data import DATASETS, make_dataset, split_windows

EXAMPLE_CHANNEL = 0  # the channel of the example-forecast figure


def setting_of(cfg: dict, setting: str) -> dict:
    """dataset, lookback, horizon of a setting (the spec's cell)."""
    s = cfg["settings"][setting]
    return {"dataset": s["dataset"], "lookback": int(s["lookback"]), "horizon": int(s["horizon"])}


def check_params(cfg: dict) -> None:
    """What the params schema cannot say: every setting's data set has a channel count, the
    DYN-first output patch divides the horizon, the patch fits the lookback."""
    from icml26.errors import ConfigError

    p = cfg["params"]
    for name in cfg["settings"]:
        s = setting_of(cfg, name)
        if s["dataset"] not in p["channels"]:
            raise ConfigError(f"pro-dyn params.channels has no entry for data set "
                              f"{s['dataset']!r} (setting {name})")
        if s["horizon"] % int(p["dynfirst_patch"]):
            raise ConfigError(f"pro-dyn params.dynfirst_patch={p['dynfirst_patch']} does not "
                              f"divide the horizon {s['horizon']} of setting {name}")
        if s["lookback"] < int(p["patch_len"]) or s["lookback"] < int(p["label_len"]):
            raise ConfigError(f"pro-dyn setting {name}: lookback {s['lookback']} is shorter than "
                              f"params.patch_len or params.label_len")
    if int(p["d_model"]) % int(p["n_heads"]):
        raise ConfigError(f"pro-dyn params.n_heads={p['n_heads']} does not divide "
                          f"params.d_model={p['d_model']}")


def least_squares_reference(z, bounds, lookback: int, horizon: int, ridge: float) -> dict:
    """The optimum of LINEAR's own model class in closed form: one map (L -> H) shared by the
    channels, fitted by (nearly unregularised) ridge least squares on the instance-normalised
    training windows, scored on the test windows (standardised scale). It checks the spec's
    premise that a longer lookback carries information a 48-step lookback lacks, and shows how
    far 150 Adam steps leave LINEAR from its optimum."""
    def normalised(part, stride):
        past, fut = split_windows(z, bounds, part, lookback, horizon, stride)
        zp, mean, sd = instance_normalise(past, eps=1e-5)
        return zp, fut, mean, sd

    zp, fut, mean, sd = normalised("train", 1)
    X = zp.reshape(-1, lookback)
    Y = ((fut - mean) / (sd + 1e-5)).reshape(-1, horizon)
    w, b = ridge_fit(X, Y, ridge)
    zt, futt, mt, st = normalised("test", 8)
    pred = (zt @ w + b) * (st + 1e-5) + mt
    return {"mse": float(np.mean((pred - futt) ** 2)), "mae": float(np.mean(np.abs(pred - futt)))}


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    check_params(cfg)
    p = cfg["params"]
    used = [d for d in DATASETS if any(setting_of(cfg, s)["dataset"] == d for s in cfg["settings"])]
    out = {}
    for name in used:
        # one data set per name from a fixed data seed: every method and seed sees the same series
        r = named_rng(cfg["paper"], name, 0, "data")
        z, bounds = make_dataset(name, r, int(p["channels"][name]), int(p["length"]), p["split"])
        out[f"{name}/series"], out[f"{name}/bounds"] = z, bounds
    for setting in cfg["settings"]:
        s = setting_of(cfg, setting)
        ref = least_squares_reference(out[f"{s['dataset']}/series"], out[f"{s['dataset']}/bounds"],
                                      s["lookback"], s["horizon"], float(p["reference_ridge"]))
        out[f"{setting}/ls_mse"] = np.array(ref["mse"])
        out[f"{setting}/ls_mae"] = np.array(ref["mae"])
    return out


def windows(cfg, data, setting):
    p, s = cfg["params"], setting_of(cfg, setting)
    z, bounds = data[f"{s['dataset']}/series"], data[f"{s['dataset']}/bounds"]
    L, H = s["lookback"], s["horizon"]
    return {"train": split_windows(z, bounds, "train", L, H, int(p["train_stride"])),
            "val": split_windows(z, bounds, "val", L, H, int(p["eval_stride"])),
            "test": split_windows(z, bounds, "test", L, H, int(p["eval_stride"]))}


def stack_groups(cfg, runs, wins: dict) -> dict[tuple, list]:
    """Runs of one method whose cells have equal shapes (L, H, channels and window counts, from
    `wins`: setting -> its windows) train as one stack: at default each method's 5 seeds x 2
    data sets per lookback."""
    p, groups = cfg["params"], {}
    for run in runs:
        if run.method not in METHODS:
            raise ValueError(f"unknown method {run.method!r}")
        s = setting_of(cfg, run.setting)
        shape = (s["lookback"], s["horizon"], int(p["channels"][s["dataset"]]),
                 *(len(wins[run.setting][k][0]) for k in ("train", "val", "test")))
        groups.setdefault((run.method, *shape), []).append(run)
    return groups


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list[dict]]:
    import torch

    from icml26.seeding import seed_torch, torch_device

    from . import models
    from .stacking import fit_stacked, predict_stacked, stack

    torch.set_num_threads(1)
    dev = torch_device(cfg["device"])
    p = cfg["params"]
    state, curves = {}, []
    first_seed = min(r.seed for r in runs)
    wins = {c: windows(cfg, data, c) for c in dict.fromkeys(r.setting for r in runs)}
    stacked_windows = {}
    for (method, L, H, channels, *_), group in stack_groups(cfg, runs, wins).items():
        cells = tuple(dict.fromkeys(r.setting for r in group))
        if cells not in stacked_windows:
            # built on the CPU in numpy, then moved (float32): (cells, windows, C, L or H)
            stacked_windows[cells] = {
                part: tuple(torch.as_tensor(np.stack([wins[c][part][i] for c in cells]),
                                            dtype=torch.float32, device=dev) for i in (0, 1))
                for part in ("train", "val", "test")}
        tens = stacked_windows[cells]
        built = []
        for run in group:
            seed_torch(run.rng_seed(cfg["paper"], "init"))  # own initial weights, on the CPU
            built.append(models.build(method, L, H, channels, p))
        n_params = sum(q.numel() for q in built[0].parameters())
        model = stack(built).to(dev)
        gens = [torch.Generator().manual_seed(run.rng_seed(cfg["paper"], "batches") % 2**63)
                for run in group]
        member_data = torch.tensor([cells.index(r.setting) for r in group])
        hists = fit_stacked(model, *tens["train"], member_data, gens, steps=int(p["steps"]),
                            batch=int(p["batch"]), lr=float(p["lr"]), val=tens["val"],
                            eval_every=int(p["eval_every"]), clip=float(p["clip"]))
        model.eval()
        preds = predict_stacked(model, tens["test"][0][member_data.to(dev)]).double().cpu().numpy()
        for r, (run, hist) in enumerate(zip(group, hists, strict=True)):
            pred, fut = preds[r], wins[run.setting]["test"][1]
            err = pred - fut
            state[f"{run.key}/test_se"] = np.mean(err ** 2, axis=-1)   # (windows, C)
            state[f"{run.key}/test_ae"] = np.mean(np.abs(err), axis=-1)
            state[f"{run.key}/n_params"] = np.array(n_params)
            state[f"{run.key}/best_step"] = np.array(hist["best_step"])
            state[f"{run.key}/pred_first"] = pred[0]
            base = run.as_dict()
            curves += [{**base, "step": i + 1, "metric": "train_mse", "value": v}
                       for i, v in enumerate(hist["train_loss"])]
            curves += [{**base, "step": st, "metric": "val_mse", "value": v}
                       for st, v in zip(hist["val_steps"], hist["val_mse"], strict=True)]
            # the first test window of one channel, for the example-forecast figure
            curves += [{**base, "step": h, "metric": "forecast",
                        "value": float(pred[0, EXAMPLE_CHANNEL, h])} for h in range(H)]
            if run.seed == first_seed:
                past = wins[run.setting]["test"][0][0, EXAMPLE_CHANNEL]
                truth = np.concatenate([past, fut[0, EXAMPLE_CHANNEL]])
                curves += [{**base, "step": h - L, "metric": "truth", "value": float(v)}
                           for h, v in enumerate(truth)]
    return state, curves


def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    rows = []
    for run in runs:
        se, ae = state[f"{run.key}/test_se"], state[f"{run.key}/test_ae"]
        own = curves[(curves["method"] == run.method) & (curves["setting"] == run.setting)
                     & (curves["seed"] == run.seed) & (curves["metric"] == "val_mse")]
        val = own["value"].to_numpy(float)
        s = setting_of(cfg, run.setting)
        rows.append({
            "test_mse": float(np.mean(se)),
            "test_mae": float(np.mean(ae)),
            "val_mse_best": float(np.nanmin(val)) if np.isfinite(val).any() else np.nan,
            "best_step": float(state[f"{run.key}/best_step"]),
            "n_params": float(state[f"{run.key}/n_params"]),
            "lookback": float(s["lookback"]),
            "horizon": float(s["horizon"]),
            # the closed-form optimum of LINEAR's model class on this cell (no seed)
            "ls_test_mse": float(data[f"{run.setting}/ls_mse"]),
        })
    return rows
