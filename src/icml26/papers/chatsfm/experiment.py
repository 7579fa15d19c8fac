"""Stages of chatsfm: datasets (prepare, numpy), TSFM + adapters (train, torch), metrics and
LOCAL-VAR (evaluate, numpy).

A setting is a frozen backbone ("TSFM": mlp at every scale, patch at full). A seed draws its
own pre-training collection and held-out datasets and initialises the adapters; the TSFM is
shared by all seeds (fixed seed, like a public checkpoint). One train job trains CHADA,
CHADA-NODESC and DENSE-NOGATE of every seed as one stacked model.

Time layout of a series of T = 1200 points: the first 20% gives the descriptor, the next 50%
fits LOCAL-VAR, test windows (stride 8) lie in the last 30%. TSFM forecasts are computed once
at every origin of a stride-4 grid, so the backtest residuals the features need (origins
o - 24, o - 48, o - 72) are looked up, never recomputed.
"""

from __future__ import annotations

import time

import numpy as np

from icml26.seeding import derive_seed
from icml26.seeding import rng as named_rng
from icml26.timeseries.linear import ridge_fit, ridge_predict
from icml26.timeseries.windows import chrono_split

from . import data as D
from .features import descriptor, pair_features

ADAPTERS = ("chada", "chada-nodesc", "dense-nogate")
METHODS = ("tsfm",) + ADAPTERS + ("local-var",)
FLAGS = {"chada": (True, True, True), "chada-nodesc": (False, True, True),
         "dense-nogate": (True, False, False)}          # use_desc, sparse, gated
GRID = 4          # stride of the origins at which TSFM forecasts are precomputed


def _p(cfg, setting):
    p = dict(cfg["params"])
    p.update(cfg["settings"][setting] or {})
    return p


def heldout_names(p) -> list[str]:
    draws = int(p["heldout_draws"])
    return [f"{t}.{d}" for t in p["heldout"] for d in range(draws)]


def check_params(p) -> None:
    """What the schema cannot say: the window grids must line up with the forecast grid."""
    from icml26.errors import ConfigError

    L, H, T = int(p["lookback"]), int(p["horizon"]), int(p["length"])
    for key in ("collection_stride", "test_stride"):
        if int(p[key]) % GRID:
            raise ConfigError(f"chatsfm params.{key} must be a multiple of {GRID}")
    if H % GRID:
        raise ConfigError(f"chatsfm params.horizon must be a multiple of {GRID}")
    first = L + int(p["backtest_windows"]) * H
    need = first + (int(p["windows_per_dataset"]) - 1) * int(p["collection_stride"]) + H
    if need > T:
        raise ConfigError(f"chatsfm params.windows_per_dataset: {p['windows_per_dataset']} "
                          f"windows at stride {p['collection_stride']} need {need} > length {T}")
    if not np.isclose(sum(p["split"]), 1.0):
        raise ConfigError("chatsfm params.split must sum to 1")
    lo, hi = p["collection_channels"]
    if lo > hi:
        raise ConfigError("chatsfm params.collection_channels must be [min, max] with min <= max")


# ------------------------------------------------------------------------------------------
# prepare: the datasets of every seed (numpy)
# ------------------------------------------------------------------------------------------
def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    p = cfg["params"]
    check_params(p)
    T = int(p["length"])
    fit_until = chrono_split(T, p["split"])[1].stop
    lo, hi = (int(c) for c in p["collection_channels"])
    out = {}
    for seed in cfg["seeds"]:
        kinds = [k for k in D.COLLECTION_TYPES for _ in range(int(p["collection_per_type"]))]
        for i, kind in enumerate(kinds):
            r = named_rng(cfg["paper"], "collection", seed, i)
            C = int(r.integers(lo, hi + 1))
            x, roles = D.make_dataset(kind, r, C, T, p)
            out[f"{seed}/coll/{i}/x"] = D.standardise(x, fit_until).astype(np.float32)
        out[f"{seed}/coll_kinds"] = np.array(kinds)
        for name in heldout_names(p):
            kind = name.split(".")[0]
            r = named_rng(cfg["paper"], "heldout", seed, name)
            x, roles = D.make_dataset(kind, r, int(p["heldout_channels"]), T, p, heldout=True)
            out[f"{seed}/held/{name}/x"] = D.standardise(x, fit_until).astype(np.float32)
            out[f"{seed}/held/{name}/roles"] = roles
    return out


# ------------------------------------------------------------------------------------------
# windows, features and descriptors (numpy, given the TSFM's forecasts)
# ------------------------------------------------------------------------------------------
def forecast_grid(p) -> np.ndarray:
    L, H, T = int(p["lookback"]), int(p["horizon"]), int(p["length"])
    return np.arange(L, T - H + 1, GRID)


def collection_origins(p) -> np.ndarray:
    first = int(p["lookback"]) + int(p["backtest_windows"]) * int(p["horizon"])
    return first + int(p["collection_stride"]) * np.arange(int(p["windows_per_dataset"]))


def test_origins(p) -> np.ndarray:
    L, H, T = int(p["lookback"]), int(p["horizon"]), int(p["length"])
    start = chrono_split(T, p["split"])[2].start
    return np.arange(start + L, T - H + 1, int(p["test_stride"]))


def windows(S, Fc, origins, p) -> dict:
    """Per-window arrays of one dataset S (C, T) with its forecasts Fc (C, n_grid, H):
    look (N, C, L), future, yhat (dataset scale), the instance-normalised recent / yhat /
    future, the normalisation stats and the pair features."""
    L, H, nb = int(p["lookback"]), int(p["horizon"]), int(p["backtest_windows"])
    gi = lambda o: (o - L) // GRID  # noqa: E731
    look = np.stack([S[:, o - L:o] for o in origins])
    fut = np.stack([S[:, o:o + H] for o in origins])
    yhat = np.moveaxis(Fc[:, gi(origins)], 1, 0)
    resid = np.concatenate(
        [np.stack([S[:, o - k * H:o - k * H + H] for o in origins])
         - np.moveaxis(Fc[:, gi(origins - k * H)], 1, 0) for k in range(nb, 0, -1)], axis=-1)
    mu = look.mean(-1, keepdims=True)
    sd = look.std(-1, keepdims=True) + 1e-5
    return {"look": look, "future": fut, "yhat": yhat, "mu": mu, "sd": sd,
            "recent": ((look - mu) / sd)[..., -int(p["recent"]):],
            "yhat_n": (yhat - mu) / sd, "future_n": (fut - mu) / sd,
            "feats": pair_features(look, resid, int(p["max_lag"]))}


def dataset_descriptor(S, Fc, p) -> np.ndarray:
    """delta from the first 20% only: context S[:, :T0] and the TSFM residuals of the
    non-overlapping one-horizon-ahead backtests at origins L, L + H, ... inside it."""
    L, H, T = int(p["lookback"]), int(p["horizon"]), int(p["length"])
    T0 = chrono_split(T, p["split"])[0].stop
    origins = np.arange(L, T0 - H + 1, H)
    resid = np.concatenate([S[:, o:o + H] - Fc[:, (o - L) // GRID] for o in origins], axis=1)
    return descriptor(S[:, :T0], resid, int(p["max_lag"]), float(p["channel_scale"]))


def _pad(a, C, axis, fill=0.0):
    widths = [(0, 0)] * a.ndim
    widths[axis] = (0, C - a.shape[axis])
    return np.pad(a, widths, constant_values=fill)


def seed_arrays(model, backbone, data, seed, p, dev):
    """The collection's training windows (padded to the largest C) and the held-out test
    windows of one seed, under one frozen backbone."""
    from . import tsfm

    L = int(p["lookback"])
    grid = forecast_grid(p)
    Cpad = int(p["collection_channels"][1])
    parts = {k: [] for k in ("feats", "desc", "recent", "yhat_n", "future_n", "valid")}
    n_coll = len(data[f"{seed}/coll_kinds"])
    co = collection_origins(p)
    for i in range(n_coll):
        S = data[f"{seed}/coll/{i}/x"].astype(np.float64)
        Fc = tsfm.forecast_origins(model, backbone, S, grid, L, dev)
        w = windows(S, Fc, co, p)
        C = S.shape[0]
        parts["feats"].append(_pad(_pad(w["feats"], Cpad, 1), Cpad, 2))
        parts["desc"].append(np.repeat(dataset_descriptor(S, Fc, p)[None], len(co), 0))
        for key in ("recent", "yhat_n", "future_n"):
            parts[key].append(_pad(w[key], Cpad, 1))
        parts["valid"].append(np.repeat((np.arange(Cpad) < C)[None], len(co), 0))
    coll = {k: np.concatenate(v) for k, v in parts.items()}
    held = {}
    to = test_origins(p)
    for name in heldout_names(p):
        S = data[f"{seed}/held/{name}/x"].astype(np.float64)
        Fc = tsfm.forecast_origins(model, backbone, S, grid, L, dev)
        w = windows(S, Fc, to, p)
        w["desc"] = np.repeat(dataset_descriptor(S, Fc, p)[None], len(to), 0)
        w["valid"] = np.ones(w["yhat"].shape[:2], dtype=bool)
        held[name] = w
    return coll, held


# ------------------------------------------------------------------------------------------
# train (torch)
# ------------------------------------------------------------------------------------------
def _flags(methods, dev):
    import torch

    f = np.array([FLAGS[m] for m in methods], dtype=bool)
    return {k: torch.as_tensor(f[:, i], device=dev)
            for i, k in enumerate(("use_desc", "sparse", "gated"))}


def _tensors(d, keys, dev):
    import torch

    return {k: (torch.as_tensor(d[k], device=dev) if d[k].dtype == bool else
                torch.as_tensor(d[k], dtype=torch.float32, device=dev)) for k in keys}


KEYS = ("feats", "desc", "recent", "yhat_n", "future_n", "valid")


def adapter_predict(P, flags, w, p, dev, gate_off=False):
    """One run's (P, flags sliced to R = 1) outputs on one dataset's windows w."""
    import torch

    t = _tensors(w, KEYS, dev)
    with torch.no_grad():
        out, g, s, a = adapter_forward(P, flags, {k: v[None] for k, v in t.items()}, p,
                                       gate_off)
    return out[0].cpu().numpy().astype(np.float64), g[0].cpu().numpy(), s[0].cpu().numpy()


def adapter_forward(P, flags, b, p, gate_off=False):
    from . import adapter

    return adapter.forward(P, flags, b["feats"], b["desc"], b["recent"], b["yhat_n"],
                           b["valid"], int(p["top_k"]), gate_off)


def _slice(P, r):
    return {k: v[r:r + 1] for k, v in P.items()}


def _timing(P, flags, model, backbone, paper, p, dev, C):
    """CPU seconds per 1000 channel-windows of the adapter at inference (pair features +
    forward; the TSFM's own forecasts are given) on a held-out-like MIXED dataset with C
    channels; measured, so a `cpu_s` metric."""
    from . import tsfm

    r = np.random.default_rng(derive_seed(paper, "timing", C))
    S = D.standardise(D.make_dataset("mixed", r, C, int(p["length"]), p, heldout=True)[0],
                      chrono_split(int(p["length"]), p["split"])[1].stop)
    Fc = tsfm.forecast_origins(model, backbone, S, forecast_grid(p), int(p["lookback"]), dev)
    to = test_origins(p)
    t0 = time.process_time()
    w = windows(S, Fc, to, p)
    w["desc"] = np.repeat(dataset_descriptor(S, Fc, p)[None], len(to), 0)
    w["valid"] = np.ones(w["yhat"].shape[:2], dtype=bool)
    adapter_predict(P, flags, w, p, dev)
    return (time.process_time() - t0) / (len(to) * C) * 1000.0


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list[dict]]:
    import torch

    from icml26.rl.optim import Adam
    from icml26.seeding import torch_device

    from . import adapter, tsfm

    torch.set_num_threads(1)
    dev = torch_device(cfg["device"])
    paper = cfg["paper"]
    state, curves = {}, []
    for setting in sorted({r.setting for r in runs}):
        p = _p(cfg, setting)
        check_params(p)
        here = [r for r in runs if r.setting == setting]
        backbone = p["backbone"]
        model, hist = tsfm.pretrain(paper, backbone, p, dev)
        seeds = sorted({r.seed for r in here if r.method != "local-var"})
        arrays = {s: seed_arrays(model, backbone, data, s, p, dev) for s in seeds}
        for run in here:
            if run.method == "tsfm":
                for step, tr, va in hist:
                    curves += [{**run.as_dict(), "step": step, "metric": "tsfm_train_mse",
                                "value": tr},
                               {**run.as_dict(), "step": step, "metric": "tsfm_val_mse",
                                "value": va}]
                for name, w in arrays[run.seed][1].items():
                    state[f"{run.key}/pred/{name}"] = w["yhat"]
                    state[f"{run.key}/naive/{name}"] = np.repeat(w["look"][..., -1:],
                                                                 w["yhat"].shape[-1], -1)
        ad = [r for r in here if r.method in ADAPTERS]
        if not ad:
            continue
        # -- all adapters of this setting as one stacked model --------------------------
        R = len(ad)
        flags = _flags([r.method for r in ad], dev)
        gen = torch.Generator()
        Ps = []
        for r in ad:   # each run's own init stream, so results do not depend on the shard
            gen.manual_seed(r.rng_seed(paper, "init") % 2**63)
            Ps.append(adapter.init_params(gen, {k: v[[ad.index(r)]].cpu()
                                                for k, v in flags.items()}, p))
        P = {k: torch.cat([q[k] for q in Ps]).to(dev) for k in Ps[0]}
        learn = [P[k].requires_grad_(True) for k in adapter.TRAINABLE]
        opt = Adam(learn, lr=float(p["lr"]))
        coll = {s: _tensors(arrays[s][0], KEYS, dev) for s in seeds}
        n_win = {s: len(arrays[s][0]["valid"]) for s in seeds}
        # one batch stream per seed, shared by the three adapters (paired comparison)
        streams = {s: np.random.default_rng(derive_seed(paper, setting, s, "batches"))
                   for s in seeds}
        B, steps = int(p["batch"]), int(p["steps"])
        every = max(1, steps // 20)
        acc = np.zeros(R)
        n_acc = 0
        for step in range(1, steps + 1):
            idx = {s: torch.as_tensor(streams[s].integers(0, n_win[s], B), device=dev)
                   for s in seeds}
            batch = {k: torch.stack([coll[r.seed][k][idx[r.seed]] for r in ad]) for k in KEYS}
            out, g, _, _ = adapter_forward(P, flags, batch, p)
            m = batch["valid"][..., None].float()
            per_run = ((out - batch["future_n"]) ** 2 * m).sum((1, 2, 3)) / (
                m.sum((1, 2, 3)) * out.shape[-1])
            grads = torch.autograd.grad(per_run.sum(), learn)
            opt.step(grads)
            acc += per_run.detach().cpu().numpy()
            n_acc += 1
            if step % every == 0 or step == steps:
                for i, r in enumerate(ad):
                    curves.append({**r.as_dict(), "step": step, "metric": "train_mse",
                                   "value": float(acc[i] / n_acc)})
                acc[:] = 0.0
                n_acc = 0
        for q in learn:
            q.requires_grad_(False)
        for i, r in enumerate(ad):
            Pr = _slice(P, i)
            fr = {k: v[i:i + 1] for k, v in flags.items()}
            for name, w in arrays[r.seed][1].items():
                out, g, s = adapter_predict(Pr, fr, w, p, dev)
                state[f"{r.key}/pred/{name}"] = out * w["sd"] + w["mu"]
                state[f"{r.key}/gate/{name}"] = g
                # chosen neighbours: the top-k of s_ij (for DENSE-NOGATE: its k largest)
                state[f"{r.key}/nbrs/{name}"] = np.argsort(-s, axis=-1, kind="stable")[
                    ..., :int(p["top_k"])]
            state[f"{r.key}/n_params"] = np.array(adapter.n_parameters(P, i))
            for C in p["timing_channels"]:
                state[f"{r.key}/cpu_s_1k/{C}"] = np.array(
                    _timing(Pr, fr, model, backbone, paper, p, dev, int(C)))
    return state, curves


# ------------------------------------------------------------------------------------------
# evaluate (numpy): errors, gates, neighbour precision, LOCAL-VAR
# ------------------------------------------------------------------------------------------
def local_var_design(S, origins, recent: int, H: int):
    """All channels' last `recent` values -> every channel's next H values (flattened)."""
    X = np.stack([S[:, o - recent:o].reshape(-1) for o in origins])
    Y = np.stack([S[:, o:o + H].reshape(-1) for o in origins])
    return X, Y


def local_var(S, p):
    """LOCAL-VAR fitted on the dataset's own 50% fit part. alpha: the grid value with the
    lowest MSE on the last `val_frac` of the fit part (fitted on the earlier windows, a gap of
    one window between), the grid extended by its own ratio at a chosen edge (at most
    `alpha_extend` times); refitted on the whole fit part. Returns (test preds (N, C, H),
    alpha, final grid)."""
    H, T = int(p["horizon"]), int(p["length"])
    rec = int(p["local_var_recent"])
    part = chrono_split(T, p["split"])[1]
    origins = np.arange(part.start + rec, part.stop - H + 1)
    n_val = int(round(len(origins) * float(p["local_var_val_frac"])))
    val_o = origins[-n_val:]
    tr_o = origins[origins + H <= val_o[0] - rec]
    Xtr, Ytr = local_var_design(S, tr_o, rec, H)
    Xva, Yva = local_var_design(S, val_o, rec, H)
    grid = [float(a) for a in p["alpha_grid"]]
    ratio = grid[1] / grid[0] if len(grid) > 1 else 10.0

    def score(a):
        w, b = ridge_fit(Xtr, Ytr, a)
        return float(np.mean((ridge_predict(Xva, w, b) - Yva) ** 2))

    scores = {a: score(a) for a in grid}
    for _ in range(int(p["alpha_extend"])):
        best = min(grid, key=lambda a: scores[a])
        if best == grid[0]:
            grid.insert(0, grid[0] / ratio)
            scores[grid[0]] = score(grid[0])
        elif best == grid[-1]:
            grid.append(grid[-1] * ratio)
            scores[grid[-1]] = score(grid[-1])
        else:
            break
    alpha = min(grid, key=lambda a: scores[a])
    Xall, Yall = local_var_design(S, origins, rec, H)
    w, b = ridge_fit(Xall, Yall, alpha)
    Xte, _ = local_var_design(S, test_origins(p), rec, H)
    C = S.shape[0]
    return ridge_predict(Xte, w, b).reshape(-1, C, H), alpha, grid


def neighbour_precision(nbrs, roles) -> float:
    """Fraction of the followers' chosen neighbours that are leaders."""
    foll = roles == D.FOLLOWER
    if not foll.any():
        return np.nan
    return float((roles[nbrs[:, foll]] == D.LEADER).mean())


def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    rows = []
    for run in runs:
        p = _p(cfg, run.setting)
        H = int(p["horizon"])
        to = test_origins(p)
        row = {}
        per = {}
        for name in heldout_names(p):
            kind = name.split(".")[0]
            S = data[f"{run.seed}/held/{name}/x"].astype(np.float64)
            fut = np.stack([S[:, o:o + H] for o in to])
            vals = {}
            if run.method == "local-var":
                pred, alpha, grid = local_var(S, p)
                vals["log10_alpha"] = np.log10(alpha)
                vals["alpha_at_edge"] = float(alpha in (grid[0], grid[-1]))
            else:
                pred = state[f"{run.key}/pred/{name}"]
            vals["mse"] = float(np.mean((pred - fut) ** 2))
            vals["mae"] = float(np.mean(np.abs(pred - fut)))
            if run.method == "tsfm":
                naive = state[f"{run.key}/naive/{name}"]
                vals["naive_mse"] = float(np.mean((naive - fut) ** 2))
            if run.method in ADAPTERS:
                vals["gate"] = float(np.mean(state[f"{run.key}/gate/{name}"]))
                vals["nprec"] = neighbour_precision(state[f"{run.key}/nbrs/{name}"],
                                                    data[f"{run.seed}/held/{name}/roles"])
            for k, v in vals.items():
                per.setdefault((k, kind), []).append(v)
        for (k, kind), v in per.items():   # mean over the draws of a type (full: 3)
            row[f"{k}_{kind}"] = float(np.mean(v))
        row["mse_mean"] = float(np.mean([row[f"mse_{t}"] for t in p["heldout"]]))
        if run.method in ADAPTERS:
            row["n_params"] = float(state[f"{run.key}/n_params"])
            for C in p["timing_channels"]:
                row[f"cpu_s_per_1k_cw_C{C}"] = float(state[f"{run.key}/cpu_s_1k/{C}"])
        own = curves[(curves["method"] == run.method) & (curves["setting"] == run.setting)
                     & (curves["seed"] == run.seed)]
        for metric in ("train_mse", "tsfm_val_mse"):
            v = own.loc[own["metric"] == metric].sort_values("step")["value"]
            if len(v):
                row[f"final_{metric}"] = float(v.iloc[-1])
        rows.append(row)
    return rows
