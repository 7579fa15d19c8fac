"""Stages of codemamba: synthetic IR sequences (prepare), the six detectors and the classical
baseline (train), IRSTD metrics (evaluate).

One data set (data seed ``params.data_seed``, fixed as in the spec) is shared by every method and
seed, so seeds differ only in initialisation, minibatch order and Monte-Carlo noise.
Every run of the grid trains in one process (``shard_by: []`` at smoke and default).
"""

from __future__ import annotations

import math
import time

import numpy as np

from icml26.seeding import rng as named_rng

from . import data as gen
from . import scoring

METHODS = ("sf-cnn", "mf-cnn", "implicit-only", "explicit-only", "mean-fusion", "codemamba",
           "classical")
SPLITS = ("train", "val", "test")
LABEL_KEYS = ("mask", "present", "centre", "sigma_t", "scr", "drift", "slow", "spots", "bgmask")


def check_params(p) -> None:
    """What the params schema cannot say: ranges are ordered, the lr grid increases."""
    from icml26.errors import ConfigError

    for key in ("drift_speed", "still_speed", "slow_speed", "fast_speed", "target_sigma", "scr",
                "blob_sigma", "blob_amp", "spot_sigma", "n_blobs", "n_spots"):
        lo, hi = p[key]
        if lo > hi:
            raise ConfigError(f"codemamba params.{key}: lower end {lo} above upper end {hi}")
    if sorted(p["lr_grid"]) != list(p["lr_grid"]) or len(set(p["lr_grid"])) != len(p["lr_grid"]):
        raise ConfigError("codemamba params.lr_grid: values must increase strictly")
    if 2 * p["target_margin"] >= p["frame_size"] - 1:
        raise ConfigError("codemamba params.target_margin: leaves no room for the target")
    if p["n_spots"][1] > gen.MAX_SPOTS:
        raise ConfigError(f"codemamba params.n_spots: at most {gen.MAX_SPOTS} static spots")


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    p = cfg["params"]
    check_params(p)
    r = named_rng(cfg["paper"], "data", int(p["data_seed"]))
    out = {}
    for split in SPLITS:
        d = gen.make_sequences(r, int(p[f"n_{split}"]), p)
        for k, v in d.items():
            out[f"{split}/{k}"] = v
    return out


def split(data, name) -> dict:
    pre = f"{name}/"
    return {k[len(pre):]: v for k, v in data.items() if k.startswith(pre)}


# ------------------------------------------------------------------------------------------
# train
# ------------------------------------------------------------------------------------------
def cosine_lr(lr: float, step: int, steps: int) -> float:
    """Cosine decay from lr to 0 over ``steps`` (step counted from 0)."""
    return 0.5 * lr * (1.0 + math.cos(math.pi * step / steps))


def predict(model, frames, dev, chunk: int, keep=("z",)):
    """Model outputs over a whole split in chunks (no grad): numpy float32 (N, H, W) per key."""
    import torch

    outs = {k: [] for k in keep}
    with torch.no_grad():
        for s in range(0, len(frames), chunk):
            x = torch.as_tensor(frames[s:s + chunk], device=dev)
            o = model(x)
            for k in keep:
                outs[k].append(o[k][:, 0].float().cpu().numpy())
    return {k: np.concatenate(v) for k, v in outs.items()}


def train_one(cfg, run, sets, dev, lr: float, every: int | None = None):
    """One detector: Adam (icml26.rl.optim) with cosine decay from ``lr`` on minibatches of
    whole sequences (fresh permutation each epoch); the validation IoU every ``every`` steps
    (default params.eval_every) and at the end. Returns (model, curve rows, failed)."""
    import torch

    from icml26.rl.optim import Adam

    from . import models

    p = cfg["params"]
    gen_init = torch.Generator().manual_seed(run.rng_seed(cfg["paper"], "init") % 2**63)
    model = models.build(run.method, p, gen_init).to(dev)
    params = [q for q in model.parameters()]
    opt = Adam(params, lr=lr)
    order = np.random.default_rng(run.rng_seed(cfg["paper"], "batches"))
    gen_mc = torch.Generator().manual_seed(run.rng_seed(cfg["paper"], "mc") % 2**63)
    tr, va = sets["train"], sets["val"]
    n, S = len(tr["frames"]), int(p["frame_size"])
    B, K = int(p["batch_size"]), int(p["mc_draws"])
    steps, every = int(p["steps"]), int(every or p["eval_every"])
    rows, losses, failed = [], [], False
    perm, pos = order.permutation(n), 0
    for step in range(steps):
        if pos + B > n:                                  # a fresh permutation each epoch
            perm, pos = order.permutation(n), 0
        idx = perm[pos:pos + B]
        pos += B
        x = torch.as_tensor(tr["frames"][idx], device=dev)
        target = torch.as_tensor(tr["mask"][idx, None], dtype=torch.float32, device=dev)
        bgmask = torch.as_tensor(tr["bgmask"][idx, None], dtype=torch.float32, device=dev)
        eps = torch.randn((2, K, B, 1, S, S), generator=gen_mc).to(dev)
        opt.lr = cosine_lr(lr, step, steps)
        out = model(x)
        loss = models.loss(out, target, bgmask, x[:, -1:], p, eps)
        if not torch.isfinite(loss):
            failed = True
            break
        opt.step(torch.autograd.grad(loss, params))
        losses.append(float(loss.detach()))
        if (step + 1) % every == 0 or step + 1 == steps:
            prob = 1.0 / (1.0 + np.exp(-predict(model, va["frames"], dev,
                                                 int(p["eval_chunk"]))["z"]))
            base = {**run.as_dict(), "step": step + 1}
            rows += [{**base, "metric": "val_iou",
                      "value": scoring.iou(prob >= float(p["threshold"]), va["mask"])},
                     {**base, "metric": "train_loss", "value": float(np.mean(losses))}]
            losses = []
    return model, rows, failed


def select_lr(cfg, sets, dev) -> tuple[float, list[float], list[float]]:
    """The learning rate every learned detector uses, by a rule fixed in config: the pilot
    method (params.lr_pilot, a baseline) is trained once per value of params.lr_grid with the
    run budget on its own seed stream (seed -1, independent of the grid's seeds), and the value
    with the best validation IoU is kept; a choice on the grid's edge extends the grid by one
    step of the same ratio in that direction, at most twice. A one-value grid is used as is.
    Returns (lr, final grid, validation IoU per grid value)."""
    from icml26.grid import Run

    p = cfg["params"]
    grid = [float(v) for v in p["lr_grid"]]
    if len(grid) == 1:
        return grid[0], grid, [float("nan")]
    ratio = grid[1] / grid[0]
    pilot = Run(p["lr_pilot"], next(iter(cfg["settings"])), -1)
    done: dict[float, float] = {}
    for _ in range(3):
        for lr in grid:
            if lr not in done:
                model, rows, failed = train_one(cfg, pilot, sets, dev, lr, every=p["steps"])
                val = [r["value"] for r in rows if r["metric"] == "val_iou"]
                done[lr] = float("nan") if failed or not val else float(val[-1])
        scores = [done[lr] for lr in grid]
        best = int(np.nanargmax(scores)) if np.isfinite(scores).any() else 0
        if 0 < best < len(grid) - 1:
            break
        if best == 0:
            grid = [grid[0] / ratio] + grid
        else:
            grid = grid + [grid[-1] * ratio]
    grid = [lr for lr in grid if lr in done]
    scores = [done[lr] for lr in grid]
    best = int(np.nanargmax(scores)) if np.isfinite(scores).any() else 0
    return grid[best], grid, scores


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list[dict]]:
    import torch

    from icml26.seeding import torch_device

    torch.set_num_threads(1)
    dev = torch_device(cfg["device"])
    p = cfg["params"]
    sets = {s: split(data, s) for s in SPLITS}
    te = sets["test"]
    state, curves = {}, []
    classical = None
    if any(r.method != "classical" for r in runs):
        lr, lr_grid, lr_scores = select_lr(cfg, sets, dev)
    else:
        lr, lr_grid, lr_scores = float("nan"), [], []
    state["lr_chosen"] = np.array(lr)
    state["lr_grid"] = np.array(lr_grid, dtype=float)
    state["lr_val_iou"] = np.array(lr_scores, dtype=float)
    for run in runs:
        start = time.process_time()
        if run.method == "classical":
            if classical is None:        # untrained and deterministic: the same for every seed
                sv = scoring.classical_score(sets["val"]["frames"], int(p["tophat"]))
                thr, level, grid = scoring.classical_threshold(sv, sets["val"], p)
                st = scoring.classical_score(te["frames"], int(p["tophat"]))
                classical = ((st >= thr).astype(np.float16), thr, level, grid)
            prob, thr, level, grid = classical
            state[f"{run.key}/prob"] = prob
            state[f"{run.key}/n_params"] = np.array(0)
            state[f"{run.key}/failed"] = np.array(False)
            state[f"{run.key}/classical_level"] = np.array(level)
            state[f"{run.key}/classical_grid"] = grid
            state[f"{run.key}/cpu_s_train"] = np.array(time.process_time() - start)
            continue
        model, rows, failed = train_one(cfg, run, sets, dev, lr)
        curves += rows
        keep = ("z", "v1", "v2") if run.method == "codemamba" else ("z",)
        out = predict(model, te["frames"], dev, int(p["eval_chunk"]), keep)
        prob = 1.0 / (1.0 + np.exp(-out["z"].astype(np.float64)))
        if failed or not np.isfinite(prob).all():
            failed = True
            prob = np.full_like(prob, np.nan)
        state[f"{run.key}/prob"] = prob.astype(np.float16)
        state[f"{run.key}/failed"] = np.array(failed)
        state[f"{run.key}/n_params"] = np.array(sum(q.numel() for q in model.parameters()))
        if run.method == "codemamba":
            # per test sequence: mean predicted variance of each stream at its target pixels
            m = te["mask"]
            cnt = m.sum(axis=(1, 2))
            for k in ("v1", "v2"):
                s = (out[k] * m).sum(axis=(1, 2))
                state[f"{run.key}/{k}_target"] = np.where(cnt > 0, s / np.maximum(cnt, 1),
                                                          np.nan)
        # measured CPU time (the only number allowed to differ between reruns)
        state[f"{run.key}/cpu_s_train"] = np.array(time.process_time() - start)
    return state, curves


# ------------------------------------------------------------------------------------------
# evaluate
# ------------------------------------------------------------------------------------------
def threshold_name(t: float) -> str:
    return f"{round(100 * t):02d}"


def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    p = cfg["params"]
    te = split(data, "test")
    cells = scoring.regime_cells(te)
    rows = []
    for run in runs:
        prob = state[f"{run.key}/prob"].astype(np.float32)
        failed = bool(state[f"{run.key}/failed"])
        row = scoring.scores(prob, te, p)
        if run.method != "classical":
            pd_, fa = scoring.sweep(prob, te, p["sweep"], float(p["match_radius"]))
            for t, a, b in zip(p["sweep"], pd_, fa, strict=True):
                row[f"pd_t{threshold_name(t)}"], row[f"fa_t{threshold_name(t)}"] = a, b
        else:
            row["classical_level"] = float(state[f"{run.key}/classical_level"])
        if run.method == "codemamba":
            for k in ("v1", "v2"):
                v = state[f"{run.key}/{k}_target"]
                for name, cell in cells.items():
                    row[f"{k}_{name}"] = float(np.nanmean(v[cell])) if np.isfinite(
                        v[cell]).any() else np.nan
                drift = te["drift"].astype(bool)
                slow = te["slow"].astype(bool)
                row[f"{k}_drift"] = float(np.nanmean(v[drift]))
                row[f"{k}_nodrift"] = float(np.nanmean(v[~drift]))
                row[f"{k}_slow"] = float(np.nanmean(v[slow]))
                row[f"{k}_fast"] = float(np.nanmean(v[~slow]))
        own = curves[(curves["method"] == run.method) & (curves["seed"] == run.seed)]
        val = own[own["metric"] == "val_iou"].sort_values("step")["value"].to_numpy(float)
        row["val_iou_final"] = float(val[-1]) if len(val) else np.nan
        row["val_iou_gain_last"] = float(val[-1] - val[-2]) if len(val) > 1 else np.nan
        row["n_params"] = float(state[f"{run.key}/n_params"])
        row["lr"] = float(state["lr_chosen"]) if run.method != "classical" else np.nan
        for g, v in zip(state["lr_grid"], state["lr_val_iou"], strict=True):
            row[f"pilot_val_iou_lr{g:.4g}"] = float(v)   # the lr selection, shown in the report
        row["cpu_s_train"] = float(state[f"{run.key}/cpu_s_train"])
        if failed:       # a diverged run: every metric of it is a failed value
            row = {k: (np.nan if k not in ("n_params", "cpu_s_train") else v)
                   for k, v in row.items()}
        rows.append(row)
    return rows
