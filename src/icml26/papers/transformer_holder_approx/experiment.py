"""Stages of transformer-holder-approx.

A run is (method, target, seed): method transformer or mlp, a setting is a target (alpha, d0).
The target's phases come from derive_seed(paper, setting, seed, "phases") and its samples from
derive_seed(paper, setting, seed, ...), so the Transformer and the MLP of a seed see the same
function and data. A Transformer run trains
  Experiment A (approximation): one network per N in params.blocks on n_approx noiseless
      samples, evaluated on the dense grid (L2 and max error) and on its training set;
  Experiment B (excess risk): one network with reg_blocks blocks per n in params.n_grid on
      y = f(x) + N(0, noise_sd^2), early-stopped on a validation set of n * val_frac samples,
      excess risk R(n) = mean (f_hat - f)^2 on the dense grid.
An MLP run trains Experiment A only, at N in params.mlp_blocks (2N hidden layers, the width
whose parameter count matches the Transformer with N blocks).
Networks that share (method, experiment, d0, N) train as one stack over targets, seeds and n:
a network's numbers do not depend on which others share its stack (its own init, data and
minibatch streams; per-model clipping; elementwise Adam).
"""

from __future__ import annotations

import numpy as np

from icml26.errors import ConfigError
from icml26.seeding import derive_seed, torch_device

from . import targets

TRANSFORMER, MLP = "transformer", "mlp"


def setting_params(cfg: dict, setting: str) -> dict:
    return {**cfg["params"], **(cfg["settings"][setting] or {})}


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Theory reference exponents per target (data are drawn inside train, per seed)."""
    out = {}
    for s, p in cfg["settings"].items():
        a, d0 = float(p["alpha"]), int(p["d0"])
        out[f"{s}/approx_exponent"] = np.array(a / d0)
        out[f"{s}/minimax_slope"] = np.array(-2 * a / (2 * a + d0))
    return out


def make_target(cfg: dict, setting: str, seed: int) -> tuple[targets.Target, np.ndarray]:
    p = setting_params(cfg, setting)
    d0 = int(p["d0"])
    grid = targets.dense_grid(d0, int(p["grid_1d"]), int(p["grid_2d"]))
    ph = targets.phases(np.random.default_rng(derive_seed(cfg["paper"], setting, seed, "phases")),
                        int(p["octaves"]))
    return targets.Target(float(p["alpha"]), d0, ph, grid), grid


def draw(cfg, setting, seed, stream, n, f, noise_sd):
    rng = np.random.default_rng(derive_seed(cfg["paper"], setting, seed, stream))
    x = rng.uniform(0.0, 1.0, size=(n, f.d0))
    y = f(x)
    if noise_sd > 0:
        y = y + noise_sd * rng.standard_normal(n)
    return x, y


def _jobs(cfg, runs):
    """Every network to train: dicts with the run, experiment, blocks, n and its group key."""
    p = cfg["params"]
    jobs = []
    for run in runs:
        d0 = int(setting_params(cfg, run.setting)["d0"])
        blocks = p["blocks"] if run.method == TRANSFORMER else p["mlp_blocks"]
        for N in blocks:
            # one stack per (method, d0, N): mixing d0 in one masked stack was measured slower
            jobs.append({"run": run, "exp": "A", "N": int(N), "n": int(p["n_approx"]), "d0": d0,
                         "group": (run.method, "A", d0, int(N))})
        if run.method == TRANSFORMER:
            for n in p["n_grid"]:
                jobs.append({"run": run, "exp": "B", "N": int(p["reg_blocks"]), "n": int(n),
                             "d0": d0, "group": (run.method, "B", d0, int(p["reg_blocks"]))})
    return jobs


def _tag(job) -> str:
    return f"A_N{job['N']}" if job["exp"] == "A" else f"B_n{job['n']}"


def train(cfg: dict, data, runs):
    import torch

    from . import models
    from .train import fit, predict

    torch.set_num_threads(1)
    dev = torch_device(cfg["device"])
    p = cfg["params"]
    if int(p["width"]) % int(p["heads"]):
        raise ConfigError(f"{cfg['paper']}: params.width={p['width']} is not divisible by "
                          f"params.heads={p['heads']}")
    jobs = _jobs(cfg, runs)
    tf = {}
    for run in runs:
        if (run.setting, run.seed) not in tf:
            tf[(run.setting, run.seed)] = make_target(cfg, run.setting, run.seed)
    state, curves = {}, []
    for key in dict.fromkeys(j["group"] for j in jobs):
        group = [j for j in jobs if j["group"] == key]
        method, exp, _, N = key
        d0 = max(j["d0"] for j in group)
        seeds = [j["run"].rng_seed(cfg["paper"], f"init-{_tag(j)}") for j in group]
        if method == TRANSFORMER:
            tokens = 1 + d0
            model = models.transformer_init(seeds, [j["d0"] for j in group], N, int(p["width"]),
                                            int(p["heads"]), dev, tokens=tokens)
        else:
            width = models.matched_mlp_width(d0, N, int(p["width"]))
            model = models.mlp_init(seeds, d0, 2 * N, width, dev)
        xs, ys, xv, yv, nv = [], [], [], [], []
        for j in group:
            f, _ = tf[(j["run"].setting, j["run"].seed)]
            noise = 0.0 if exp == "A" else float(p["noise_sd"])
            x, y = draw(cfg, j["run"].setting, j["run"].seed, f"train-{_tag(j)}", j["n"], f, noise)
            xs.append(x), ys.append(y)
            if exp == "B":
                m = max(1, int(round(j["n"] * float(p["val_frac"]))))
                x, y = draw(cfg, j["run"].setting, j["run"].seed, f"val-{_tag(j)}", m, f, noise)
                xv.append(x), yv.append(y), nv.append(m)

        def pad(arrs, d0=d0):
            """(M, n_max[, d0_max]) zero-padded stack of per-network arrays."""
            L = max(len(a) for a in arrs)
            shape = (len(arrs), L) + ((d0,) if arrs[0].ndim == 2 else ())
            out = np.zeros(shape, dtype=np.float32)
            for r, a in enumerate(arrs):
                out[(r, slice(0, len(a))) + ((slice(0, a.shape[1]),) if a.ndim == 2 else ())] = a
            return torch.from_numpy(out).to(dev)

        rngs = [np.random.default_rng(j["run"].rng_seed(cfg["paper"], f"batches-{_tag(j)}"))
                for j in group]
        steps = int(p["steps_approx"] if exp == "A" else p["steps_reg"])
        curve, best_step, best_val = fit(
            model, pad(xs), pad(ys), [j["n"] for j in group], rngs, steps=steps,
            batch=int(p["batch"]), lr=float(p["lr"]), clip=float(p["clip"]),
            eval_every=int(p["eval_every"]),
            Xval=pad(xv) if exp == "B" else None, Yval=pad(yv) if exp == "B" else None,
            nval=nv if exp == "B" else None)
        grids = [tf[(j["run"].setting, j["run"].seed)][1] for j in group]
        pred = predict(model, pad(grids)).cpu().numpy().astype(np.float64)
        train_pred = (predict(model, pad(xs)).cpu().numpy().astype(np.float64) if exp == "A"
                      else None)
        for r, j in enumerate(group):
            run, tag = j["run"], _tag(j)
            f, grid = tf[(run.setting, run.seed)]
            g = pred[r, : len(grid)]
            state[f"{run.key}/pred_{tag}"] = g.astype(np.float32)
            state[f"{run.key}/best_step_{tag}"] = np.array(best_step[r])
            state[f"{run.key}/best_val_{tag}"] = np.array(best_val[r])
            if exp == "A":
                state[f"{run.key}/train_mse_{tag}"] = np.array(
                    np.mean((train_pred[r, : len(xs[r])] - ys[r]) ** 2))
            for step, loss, val in curve:
                curves.append({**run.as_dict(), "step": int(step), "metric": f"loss_{tag}",
                               "value": float(loss[r])})
                if val is not None:
                    curves.append({**run.as_dict(), "step": int(step),
                                   "metric": f"val_mse_{tag}", "value": float(val[r])})
    for (s, seed), (f, grid) in tf.items():
        for run in runs:
            if (run.setting, run.seed) == (s, seed):
                state[f"{run.key}/target"] = f(grid).astype(np.float32)
    return state, curves


def evaluate(cfg: dict, data, runs, state, curves) -> list[dict]:
    """Per run: for every network its grid L2 / max error (A) or excess risk (B); a network
    whose predictions or losses are not finite is a failed run (NaN metrics)."""
    from .models import count_mlp, count_transformer, matched_mlp_width

    p = cfg["params"]
    out = []
    for run in runs:
        d0 = int(setting_params(cfg, run.setting)["d0"])
        f = state[f"{run.key}/target"].astype(np.float64)
        row = {}
        for j in _jobs(cfg, [run]):
            tag = _tag(j)
            g = state[f"{run.key}/pred_{tag}"].astype(np.float64)
            ok = np.all(np.isfinite(g))
            err = g - f
            if j["exp"] == "A":
                tr = float(state[f"{run.key}/train_mse_{tag}"])
                ok = ok and np.isfinite(tr)
                row[f"l2_N{j['N']}"] = float(np.sqrt(np.mean(err ** 2))) if ok else np.nan
                row[f"max_N{j['N']}"] = float(np.max(np.abs(err))) if ok else np.nan
                row[f"train_rmse_N{j['N']}"] = float(np.sqrt(tr)) if ok else np.nan
                if run.method == TRANSFORMER:
                    row[f"params_N{j['N']}"] = float(count_transformer(d0, j["N"], p["width"]))
                else:
                    w = matched_mlp_width(d0, j["N"], int(p["width"]))
                    row[f"params_N{j['N']}"] = float(count_mlp(d0, 2 * j["N"], w))
            else:
                ok = ok and np.isfinite(float(state[f"{run.key}/best_val_{tag}"]))
                row[f"R_n{j['n']}"] = float(np.mean(err ** 2)) if ok else np.nan
                row[f"stop_n{j['n']}"] = float(state[f"{run.key}/best_step_{tag}"])
        out.append(row)
    return out
