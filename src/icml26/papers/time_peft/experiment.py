"""Stages of time-peft: data, complexities and the pretrained backbone (prepare), the stacked
fine-tuning of every method (train), test errors on the normalised scale (evaluate).

A setting is one target dataset D(T, M) (keys T, M; optional channels, horizon and kind for the
full profile). A seed is one realisation of every dataset plus the fine-tuning initialisation;
the backbone is pretrained once, in prepare, with backbone seed 0 (spec), whatever the seeds.
Only prepare and train import torch; evaluate and the report stay numpy.
"""
from __future__ import annotations

import numpy as np

from icml26.seeding import derive_seed
from icml26.seeding import rng as named_rng

from . import data as D

METHODS = ("zero-shot", "linear-probe", "lora", "time-peft", "time-peft-nofreq",
           "time-peft-nochan")
BACKBONE_SEED = 0


def setting_params(cfg: dict, setting: str) -> dict:
    """The setting's dataset keys with the paper defaults filled in."""
    s = dict(cfg["settings"][setting] or {})
    p = cfg["params"]
    s.setdefault("kind", "grid")
    s.setdefault("channels", p["channels"])
    s.setdefault("horizon", p["horizon"])
    s.setdefault("T", "mid")
    return s


def horizons(cfg: dict) -> list[int]:
    return sorted({setting_params(cfg, s)["horizon"] for s in cfg["settings"]})


def _series(data, setting, seed) -> np.ndarray:
    return np.asarray(data[f"{setting}/{seed}/series"], dtype=np.float64)


def prepare(cfg: dict, rng: np.random.Generator) -> dict:
    from icml26.seeding import torch_device

    from . import peft

    p, paper = cfg["params"], cfg["paper"]
    out = {}
    for setting in cfg["settings"]:
        sp = setting_params(cfg, setting)
        for seed in cfg["seeds"]:
            x = D.target_series(named_rng(paper, "data", setting, seed), sp, p)
            train = x[:, D.split_slices(x.shape[1], p)["train"]]
            out[f"{setting}/{seed}/series"] = x.astype(np.float32)
            out[f"{setting}/{seed}/tc"] = D.temporal_complexity(train, p["tc_window"])
            out[f"{setting}/{seed}/mc"] = D.multichannel_complexity(
                train, p["mc_lags"], p["mc_alpha"], p["mc_fit_frac"])
    device = torch_device(cfg["device"])
    for H in horizons(cfg):
        corpus = D.pretrain_corpus(named_rng(paper, "pretrain-corpus", BACKBONE_SEED, H),
                                   p["pretrain_windows"], p["lookback"] + H, p)
        weights, hist = peft.pretrain(p, corpus, H, derive_seed(paper, "pretrain",
                                                                 BACKBONE_SEED, H), device)
        for k, v in weights.items():
            out[f"backbone/H{H}/{k}"] = v
        out[f"backbone/H{H}/loss"] = np.asarray(hist["train_loss"], dtype=np.float64)
    return out


def backbone_weights(data, H: int) -> dict:
    pre = f"backbone/H{H}/"
    return {k[len(pre):]: np.asarray(data[k]) for k in data
            if k.startswith(pre) and not k.endswith("/loss")}


def eval_windows(series: np.ndarray, p: dict, part: str, H: int):
    starts = D.eval_starts(series.shape[1], p, part, p["lookback"], H)
    return D.windows_at(series, starts, p["lookback"], H)


def train(cfg: dict, data, runs: list) -> tuple[dict, list[dict]]:
    import torch

    from icml26.seeding import torch_device

    from . import peft

    p, paper = cfg["params"], cfg["paper"]
    device = torch_device(cfg["device"])
    # runs of one method with equal shapes (horizon, channels) train stacked
    groups: dict[tuple, list] = {}
    for run in runs:
        sp = setting_params(cfg, run.setting)
        groups.setdefault((run.method, sp["horizon"], sp["channels"]), []).append(run)
    state, curves = {}, []
    backbones = {}
    # what the methods compute from a window without trained tensors (backbone tokens of
    # zero-shot, linear probe and -freq; harmonics of Time-PEFT and -chan), per (dataset, seed)
    # and window set, computed once and shared by the methods that need it
    frozen_cache = peft.FrozenCache()
    for (method, H, C), members in groups.items():
        if H not in backbones:
            backbones[H] = peft.load_backbone(p, H, backbone_weights(data, H), device)
        bb = backbones[H]
        for lo in range(0, len(members), p["max_stack"]):
            chunk = members[lo:lo + p["max_stack"]]
            series = [_series(data, r.setting, r.seed) for r in chunk]
            val = [eval_windows(x, p, "val", H) for x in series]
            test = [eval_windows(x, p, "test", H) for x in series]
            f32 = lambda a: torch.tensor(np.stack(a), dtype=torch.float32, device=device)  # noqa: E731
            m = peft.Method(method, bb, len(chunk), C, p,
                            [r.rng_seed(paper, "init") for r in chunk], device)
            # the same minibatch sequence for every method on one (dataset, seed): paired runs
            rngs = [np.random.default_rng(derive_seed(paper, "batches", r.setting, r.seed))
                    for r in chunk]
            res = peft.run_method(m, f32(series), D.train_starts(series[0].shape[1], p,
                                                                 p["lookback"], H),
                                  rngs, (f32([v[0] for v in val]), f32([v[1] for v in val])),
                                  f32([t[0] for t in test]), p,
                                  keys=[(r.setting, r.seed) for r in chunk], cache=frozen_cache)
            for i, run in enumerate(chunk):
                state[f"{run.key}/pred"] = res["pred"][i]
                for k, v in res["params"].items():
                    state[f"{run.key}/param/{k}"] = v[i].astype(np.float32)
                base = run.as_dict()
                for step, v in zip(res["val_steps"], res["val_mse"][i], strict=True):
                    curves.append({**base, "step": int(step), "metric": "val_mse",
                                   "value": float(v)})
                curves.append({**base, "step": int(res["best_step"][i]), "metric": "best_step",
                               "value": float(res["best_step"][i])})
                curves.append({**base, "step": 0, "metric": "n_trainable",
                               "value": float(m.n_trainable())})
    return state, curves


def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    p = cfg["params"]
    rows = []
    for run in runs:
        sp = setting_params(cfg, run.setting)
        series = _series(data, run.setting, run.seed)
        _, y = eval_windows(series, p, "test", sp["horizon"])
        pred = np.asarray(state[f"{run.key}/pred"], dtype=np.float64)
        err = pred - y
        row = {"test_mse": float(np.mean(err ** 2)), "test_mae": float(np.mean(np.abs(err))),
               "tc": float(np.mean(data[f"{run.setting}/{run.seed}/tc"])),
               "mc": float(np.mean(data[f"{run.setting}/{run.seed}/mc"]))}
        own = curves[(curves["method"] == run.method) & (curves["setting"] == run.setting)
                     & (curves["seed"] == run.seed)]
        val = own.loc[own["metric"] == "val_mse", "value"].to_numpy(float)
        row["val_mse_best"] = float(val.min()) if len(val) else np.nan
        row["val_mse_start"] = float(val[0]) if len(val) else np.nan
        for name in ("best_step", "n_trainable"):
            v = own.loc[own["metric"] == name, "value"].to_numpy(float)
            row[name] = float(v[0]) if len(v) else np.nan
        row["last_eval_step"] = float(own.loc[own["metric"] == "val_mse", "step"].max())
        loss = np.asarray(data[f"backbone/H{sp['horizon']}/loss"])
        tail = max(1, len(loss) // 10)
        row["pretrain_loss_end"] = float(loss[-tail:].mean()) if len(loss) else np.nan
        for c, v in enumerate(np.mean(err ** 2, axis=(0, 2))):
            row[f"mse_ch{c}"] = float(v)
        for c, v in enumerate(np.mean(np.abs(err), axis=(0, 2))):
            row[f"mae_ch{c}"] = float(v)
        rows.append(row)
    return rows


# ------------------------------------------------------------------------------------------
# side experiment outside the pipeline: the effect of the default's batch cut
# ------------------------------------------------------------------------------------------
def batch_effect(data_path: str, seed: int, batches: list[int]) -> dict:
    """Fine-tune every method of the default grid on one seed at each batch size (everything
    else as in the default config) from a default run's data.npz; returns batch -> (dataset x
    method) test MSE. Run: `python -m icml26.papers.time_peft.experiment DATA.npz SEED B ...`
    (e.g. results/time-peft/data.npz 0 32 4)."""
    import pandas as pd

    from icml26 import grid, io, pipeline

    data = io.load_npz(data_path)
    out = {}
    for b in batches:
        cfg = pipeline.resolve("time-peft", "default")
        cfg["seeds"], cfg["params"]["batch"] = [seed], int(b)
        runs = grid.runs_in_shard(cfg, grid.shards(cfg)[0])
        state, curves = train(cfg, data, runs)
        rows = evaluate(cfg, data, runs, state, pd.DataFrame(curves))
        frame = pd.DataFrame([{**r.as_dict(), **row} for r, row in zip(runs, rows, strict=True)])
        out[b] = frame.pivot_table(index="setting", columns="method", values="test_mse")
    return out


if __name__ == "__main__":
    import sys

    for b, tab in batch_effect(sys.argv[1], int(sys.argv[2]), sys.argv[3:]).items():
        print(f"batch {b}: test MSE per dataset and method (seed {sys.argv[2]})")
        print(tab[[m for m in METHODS if m in tab]].round(4).to_string(), end="\n\n")
