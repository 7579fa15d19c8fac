"""Stages of lamp: exemplar and target parameters (prepare), decoders + generation (train),
per-run metrics (evaluate).

A setting is an exemplar budget N of a shape family ({n_exemplars, family}). Everything a
seed needs is shared by the settings and methods of that seed and trained once per train job:
the shared initialisation w0, the batched overfitting of the seed's exemplar pool (the N of a
setting are the first N of a Latin-hypercube pool: nested subsets), the no-alignment ablation
and one conditional decoder per (seed, N). Random streams are derived from (paper, family,
purpose, seed[, index]) names, never from the shard, so sharding changes no number.

Train also generates every design of its runs (decoding on the evaluation grid) and measures
them there, since the decoded fields are too large to store: per run and target it keeps IoU,
parameter error, validity, the linearity mismatch LM and ||alpha||_1; evaluate averages them
per target set. Per-design values also go to the curves (claim 4, Fig. 3), with the fields
of the +100%-length gallery target for the first seed.
"""

from __future__ import annotations

import numpy as np

from icml26 import grid as gridlib
from icml26.seeding import derive_seed
from icml26.seeding import rng as named_rng

from . import mixing
from . import shapes as sh

METHODS = ("lamp", "lamp-local", "cond-decoder", "dni", "nearest", "lamp-noalign")
MIXING = ("lamp", "lamp-local", "dni", "nearest", "lamp-noalign")   # methods with an alpha


def setting_of(cfg, setting) -> dict:
    s = cfg["settings"][setting] or {}
    return {"family": s.get("family", "profile2d"), "n": int(s["n_exemplars"])}


def pool_size(cfg, family: str) -> int:
    """Exemplars per seed of a family: the largest N of its settings (config-wide, so every
    shard draws the same pool)."""
    return max(setting_of(cfg, s)["n"] for s in cfg["settings"]
               if setting_of(cfg, s)["family"] == family)


def set_names(levels) -> list[str]:
    return ["interp"] + [f"e{int(round(100 * e))}" for e in levels]


def set_index(level: np.ndarray, levels) -> np.ndarray:
    """Target-set index (0 interp, 1.. the extrapolation levels) of each target."""
    out = np.zeros(len(level), dtype=int)
    for k, e in enumerate(levels):
        out[np.isclose(level, e)] = k + 1
    return out


def gallery_target(fam: dict, level: float) -> np.ndarray:
    """The gallery design: every parameter at the centre of its range, length +level beyond."""
    p = fam["centre"].copy()
    p[0] = fam["hi"][0] + level * fam["width"][0]
    return p


# ------------------------------------------------------------------------------------------
# prepare
# ------------------------------------------------------------------------------------------
def prepare(cfg: dict, rng: np.random.Generator) -> dict:
    hp = cfg["params"]
    out = {}
    families = sorted({setting_of(cfg, s)["family"] for s in cfg["settings"]})
    for family in families:
        fam = sh.family(family)
        n_pool = pool_size(cfg, family)
        for seed in cfg["seeds"]:
            key = f"{family}/s{seed}"
            # nested subsets: setting N uses the first N of this Latin-hypercube pool
            out[f"{key}/P"] = sh.latin_hypercube(
                named_rng(cfg["paper"], family, "exemplars", seed), n_pool, fam)
            T, lev, which = sh.targets(named_rng(cfg["paper"], family, "targets", seed), fam,
                                       int(hp["n_interp"]), int(hp["n_extrap"]), hp["levels"])
            out[f"{key}/targets"], out[f"{key}/level"], out[f"{key}/which"] = T, lev, which
            if int(hp["n_partial"]):
                g = named_rng(cfg["paper"], family, "partial", seed)
                out[f"{key}/partial"] = fam["lo"] + g.random((int(hp["n_partial"]),
                                                               len(fam["lo"]))) * fam["width"]
    return out


# ------------------------------------------------------------------------------------------
# train
# ------------------------------------------------------------------------------------------
def _curve(run, step, metric, value):
    return {**run.as_dict(), "step": int(step), "metric": metric, "value": float(value)}


def _log_steps(steps: int, every: int) -> list[int]:
    return [s for s in range(steps) if s % every == 0 or s == steps - 1]


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list[dict]]:
    import torch

    from icml26.seeding import torch_device

    torch.set_num_threads(1)
    # decoders, pools and grids live on the device; random numbers come from CPU generators
    dev = torch_device(cfg["device"])
    state, curves = {}, []
    families = {}
    for run in runs:
        families.setdefault(setting_of(cfg, run.setting)["family"], []).append(run)
    for family, fruns in families.items():
        s, c = _train_family(cfg, data, fruns, family, dev)
        state.update(s)
        curves += c
    return state, curves


def _train_family(cfg, data, runs, family, dev):
    import torch

    from . import decoders as dec

    hp, paper = cfg["params"], cfg["paper"]
    fam = sh.family(family)
    d = fam["dim"]
    f32 = torch.float32
    seeds = sorted({r.seed for r in runs})
    n_pool = pool_size(cfg, family)
    n_noalign = max([setting_of(cfg, r.setting)["n"] for r in runs
                     if r.method == "lamp-noalign"], default=0)
    sizes = dec.sdf_sizes(d, int(hp["hidden"]), int(hp["layers"]))
    half = int(hp["points"]) // 2
    delta = float(hp["clamp"])
    every = int(hp["log_every"])

    # --- point pools (DeepSDF style: fixed per-shape samples, a fresh subset every step) ------
    def pools(P, stream):
        u, n = sh.training_pool(named_rng(paper, family, stream), fam, P, int(hp["pool_points"]),
                                int(hp["pool_points"]), float(hp["near_noise"]))
        return (torch.as_tensor(u, dtype=f32, device=dev),
                torch.as_tensor(n, dtype=f32, device=dev))

    P = {s: data[f"{family}/s{s}/P"] for s in seeds}
    uni, near = zip(*[pools(P[s], f"pool-{s}") for s in seeds], strict=True)
    uni, near = torch.cat(uni), torch.cat(near)               # (seeds * n_pool, M, d + 1)

    def gather(pool, rows, idx):
        """pool[rows[r(, j)], idx[r, j]] as (R, B, d + 1), one index_select on the flat pool."""
        rows = rows[:, None] if rows.ndim == 1 else rows
        flat_idx = (rows * pool.shape[1] + idx).reshape(-1)
        return pool.reshape(-1, pool.shape[2]).index_select(0, flat_idx).reshape(
            idx.shape + (pool.shape[2],))

    # --- 1. shared initialisation w0 per seed: fit the centre-of-range shape ----------------
    cu, cn = zip(*[pools(fam["centre"][None], f"w0-pool-{s}") for s in seeds], strict=True)
    cu, cn = torch.cat(cu), torch.cat(cn)
    w0 = dec.init(sizes, [derive_seed(paper, family, "w0", s) for s in seeds], dev)
    g_w0 = [named_rng(paper, family, "w0-batches", s) for s in seeds]
    rows_w0 = torch.arange(len(seeds), device=dev)
    M = cu.shape[1]

    def batch_w0(step):
        iu = torch.as_tensor(np.stack([g.integers(0, M, half) for g in g_w0]), device=dev)
        inn = torch.as_tensor(np.stack([g.integers(0, M, half) for g in g_w0]), device=dev)
        pts = torch.cat([gather(cu, rows_w0, iu), gather(cn, rows_w0, inn)], 1)
        return pts[..., :d], pts[..., d]

    w0_logs = dec.fit(w0, batch_w0, int(hp["w0_steps"]), float(hp["w0_lr"]), delta, every)
    w0_flat = dec.flatten(w0)                                     # (seeds, n_params)

    # --- 2. alignment by overfitting (+ the no-alignment ablation, same steps and points) ----
    k = len(seeds)
    init_a = w0_flat.repeat_interleave(n_pool, 0)                  # every exemplar starts at w0
    noalign_seeds = [derive_seed(paper, family, "noalign", s, i) for s in seeds
                     for i in range(n_noalign)]
    init_n = (dec.flatten(dec.init(sizes, noalign_seeds, dev)) if n_noalign
              else init_a[:0])
    layers = [[w.detach().clone().requires_grad_(True), b.detach().clone().requires_grad_(True)]
              for w, b in dec.unflatten(torch.cat([init_a, init_n]), sizes)]
    # network -> row of its exemplar in the pools; a no-alignment net sees its exemplar's points
    ex_a = np.arange(k * n_pool)
    ex_n = np.array([j * n_pool + i for j in range(k) for i in range(n_noalign)], dtype=int)
    net_rows = torch.as_tensor(np.r_[ex_a, ex_n], device=dev)
    g_fit = [named_rng(paper, family, "overfit-batches", s) for s in seeds]
    M = uni.shape[1]

    def batch_fit(step):
        # per seed one draw per exemplar (n_pool, half): paired across aligned / not aligned
        iu = np.concatenate([g.integers(0, M, (n_pool, half)) for g in g_fit])
        inn = np.concatenate([g.integers(0, M, (n_pool, half)) for g in g_fit])
        iu = torch.as_tensor(np.r_[iu, iu[ex_n]], device=dev)
        inn = torch.as_tensor(np.r_[inn, inn[ex_n]], device=dev)
        pts = torch.cat([gather(uni, net_rows, iu), gather(near, net_rows, inn)], 1)
        return pts[..., :d], pts[..., d]

    fit_logs = dec.fit(layers, batch_fit, int(hp["overfit_steps"]), float(hp["overfit_lr"]),
                       delta, every)
    flat = dec.flatten(layers)
    W_a = flat[:k * n_pool].reshape(k, n_pool, -1)
    W_n = flat[k * n_pool:].reshape(k, n_noalign, -1)
    init_n = init_n.reshape(k, n_noalign, -1)

    # --- 3. conditional decoders, one per (seed, N) ------------------------------------------
    cond_runs = sorted({(r.seed, setting_of(cfg, r.setting)["n"]) for r in runs
                        if r.method == "cond-decoder"})
    cond_sizes = [d + len(fam["lo"])] + [int(hp["cond_hidden"])] * int(hp["cond_layers"]) + [1]
    cond, cond_logs = None, None
    if cond_runs:
        cond = dec.init(cond_sizes, [derive_seed(paper, family, "cond", s, n)
                                                 for s, n in cond_runs], dev)
        g_c = [named_rng(paper, family, "cond-batches", s, n) for s, n in cond_runs]
        base = torch.as_tensor([seeds.index(s) * n_pool for s, _ in cond_runs], device=dev)
        Pt = torch.as_tensor(np.concatenate([P[s] for s in seeds]), dtype=f32, device=dev)
        nb = int(hp["cond_batch"]) // 2

        def batch_cond(step):
            # batch points across the N shapes: a random shape and pool point per point
            e = np.stack([np.r_[g.integers(0, n, nb), g.integers(0, n, nb)]
                          for g, (_, n) in zip(g_c, cond_runs, strict=True)])
            iu = np.stack([g.integers(0, M, nb) for g in g_c])
            inn = np.stack([g.integers(0, M, nb) for g in g_c])
            rows = base[:, None] + torch.as_tensor(e, device=dev)
            pts = torch.cat([gather(uni, rows[:, :nb], torch.as_tensor(iu, device=dev)),
                             gather(near, rows[:, nb:], torch.as_tensor(inn, device=dev))], 1)
            return torch.cat([pts[..., :d], Pt[rows]], -1), pts[..., d]

        cond_logs = dec.fit(cond, batch_cond, int(hp["cond_steps"]), float(hp["cond_lr"]),
                            delta, every)

    # --- 4. generation and measurement ------------------------------------------------------
    pts_np, shape = sh.grid_points(fam)
    pts = torch.as_tensor(pts_np, dtype=f32, device=dev)
    state, curves = {}, []
    gallery = _gallery_runs(cfg, family)
    for j, seed in enumerate(seeds):
        key = f"{family}/s{seed}"
        T = data[f"{key}/targets"]
        Tg = np.vstack([T, gallery_target(fam, float(hp["gallery_level"]))])
        gt_sdf = sh.sdf(fam, Tg, pts_np)                        # shared by every run of the seed
        gt = gt_sdf < 0
        gt_perr = None                                           # measured once per seed
        F_a = dec.decode(W_a[j], sizes, pts)                      # exemplar decoders on the grid
        F_n = dec.decode(W_n[j], sizes, pts) if n_noalign else None
        gt_ex = sh.sdf(fam, P[seed], pts_np) < 0
        ex_iou_a = sh.iou_each(F_a < 0, gt_ex)
        ex_iou_n = sh.iou_each(F_n < 0, gt_ex[:n_noalign]) if n_noalign else None
        drift_a = (torch.linalg.norm(W_a[j] - w0_flat[j], dim=1)
                   / torch.linalg.norm(w0_flat[j])).cpu().numpy()
        drift_n = ((torch.linalg.norm(W_n[j] - init_n[j], dim=1)
                    / torch.linalg.norm(init_n[j], dim=1)).cpu().numpy() if n_noalign else None)
        for run in [r for r in runs if r.seed == seed]:
            n = setting_of(cfg, run.setting)["n"]
            Pn = P[seed][:n]
            if run.method == "cond-decoder":
                r = cond_runs.index((seed, n))
                f = dec.decode_conditional(cond, r, pts, torch.as_tensor(Tg, dtype=f32,
                                                                          device=dev))
                alpha, lm = None, np.full(len(Tg), np.nan)
                for step, v in zip(_log_steps(int(hp["cond_steps"]), every), cond_logs[:, r],
                                   strict=True):
                    curves.append(_curve(run, step, "train_loss", v))
            else:
                alpha = np.stack([_alpha(run.method, Pn, t, fam, hp) for t in Tg])
                W, Fx = (W_n[j, :n], F_n[:n]) if run.method == "lamp-noalign" else \
                    (W_a[j, :n], F_a[:n])
                if run.method == "nearest":   # the exemplar's own decoder, already decoded
                    f = Fx[np.argmax(alpha, 1)]
                else:
                    w = torch.as_tensor(alpha, dtype=f32, device=dev) @ W
                    f = dec.decode(w, sizes, pts)
                lm = mixing.linearity_mismatch(f, alpha @ Fx.astype(float), float(hp["lm_band"]))
                ex_iou, drift, logs = ((ex_iou_n, drift_n, fit_logs[:, k * n_pool + j *
                                                                     n_noalign:][:, :n])
                                       if run.method == "lamp-noalign" else
                                       (ex_iou_a, drift_a, fit_logs[:, j * n_pool:][:, :n]))
                state[f"{run.key}/exemplar_iou"] = ex_iou[:n]
                state[f"{run.key}/weight_drift"] = drift[:n]
                if run.method in ("lamp", "lamp-noalign"):
                    for step, v in zip(_log_steps(int(hp["overfit_steps"]), every),
                                       logs.mean(1), strict=True):
                        curves.append(_curve(run, step, "train_loss", v))
                if run.method == "lamp":
                    for step, v in zip(_log_steps(int(hp["w0_steps"]), every), w0_logs[:, j],
                                       strict=True):
                        curves.append(_curve(run, step, "w0_loss", v))
            fields = f.reshape((len(Tg),) + shape)
            occ = fields < 0
            measured = sh.measure(fam, fields)
            row = {"iou": sh.iou_each(occ, gt.reshape(occ.shape)),
                   "perr": sh.param_error(measured, Tg),
                   "valid": sh.valid(occ).astype(float),
                   "lm": lm,
                   "alpha_l1": (np.abs(alpha).sum(1) if alpha is not None
                                else np.full(len(Tg), np.nan)),
                   "empty": (~occ.reshape(len(Tg), -1).any(1)).astype(float)}
            if alpha is not None:   # the affine constraints P^T alpha = p*, 1^T alpha = 1
                res = np.abs(np.c_[alpha @ Pn, alpha.sum(1)] - np.c_[Tg, np.ones(len(Tg))])
                row["constraint_residual"] = res.max(1)
            if run.method == "lamp":   # the measurement itself, on the analytic fields
                if gt_perr is None:
                    gt_perr = sh.param_error(sh.measure(fam, gt_sdf.reshape(fields.shape)), Tg)
                row["gt_perr"] = gt_perr
            for name, v in row.items():
                state[f"{run.key}/{name}"] = np.asarray(v[:-1], dtype=float)
            for t in range(len(T)):
                curves.append(_curve(run, t, "design_iou", row["iou"][t]))
                curves.append(_curve(run, t, "design_perr", row["perr"][t]))
                if run.method in MIXING:
                    curves.append(_curve(run, t, "design_lm", row["lm"][t]))
            if run in gallery:   # the +100%-length design's field, slice z = 0 in 3-D
                g = fields[-1] if d == 2 else fields[-1][fields.shape[1] // 2]
                curves += [_curve(run, i, "gallery_field", round(float(v), 5))
                           for i, v in enumerate(g.ravel())]
            if run.method == "lamp" and int(hp["n_partial"]):
                state.update(_partial(cfg, data, run, fam, key, Pn, W_a[j, :n], F_a[:n], sizes,
                                      pts, pts_np, shape, dev))
    return state, curves


def _alpha(method, P, target, fam, hp):
    if method in ("lamp", "lamp-noalign"):
        return mixing.min_norm_alpha(P, target)
    if method == "lamp-local":
        return mixing.local_alpha(P, target, fam["width"], min(int(hp["local_k"]), len(P)))
    if method == "dni":
        return mixing.dni_alpha(P, target, fam["width"], int(hp["dni_k"]))
    if method == "nearest":
        return mixing.nearest_alpha(P, target, fam["width"])
    raise ValueError(f"unknown mixing method {method!r}")


def _gallery_runs(cfg, family) -> set:
    """Per method, its run at the largest N of the family for the first seed of the config."""
    best = {}
    for run in gridlib.runs(cfg):
        if run.seed != cfg["seeds"][0] or setting_of(cfg, run.setting)["family"] != family:
            continue
        n = setting_of(cfg, run.setting)["n"]
        if run.method not in best or n > best[run.method][0]:
            best[run.method] = (n, run)
    return {r for _, r in best.values()}


def frontal_gain(fam) -> np.ndarray:
    """Gradient of the drag proxy (INFERRED sketch): frontal height h + c."""
    g = np.zeros(len(fam["lo"]))
    g[1] = g[2] = 1.0
    return g


def _partial(cfg, data, run, fam, key, P, W, F, sizes, pts, pts_np, shape, dev):
    """Full profile: partial constraints (|C| < d) and performance-guided selection in the
    feasible alpha set. The ground truth of a partially constrained design is the analytic
    shape at the mixture's implied parameters P^T alpha (with p_C = p*_C by construction)."""
    import torch

    from . import decoders as dec

    hp = cfg["params"]
    names = list(fam["names"])
    C = [names.index(c) for c in hp["partial_constrained"]]
    targets = data[f"{key}/partial"]
    gain = frontal_gain(fam)
    out = {}
    for tag, fn in (("partial", lambda t: mixing.min_norm_alpha(P, t, C)),
                    ("guided", lambda t: mixing.guided_alpha(P, t, C, gain,
                                                             float(hp["guided_mu"])))):
        alpha = np.stack([fn(t) for t in targets])
        implied = alpha @ P
        implied[:, C] = targets[:, C]
        w = torch.as_tensor(alpha, dtype=torch.float32, device=dev) @ W
        f = dec.decode(w, sizes, pts)
        fields = f.reshape((len(targets),) + shape)
        gt = (sh.sdf(fam, implied, pts_np) < 0).reshape(fields.shape)
        measured = sh.measure(fam, fields)
        out[f"{run.key}/{tag}_iou"] = sh.iou_each(fields < 0, gt)
        out[f"{run.key}/{tag}_perr"] = sh.param_error(measured, targets, C)
        out[f"{run.key}/{tag}_lm"] = mixing.linearity_mismatch(f, alpha @ F.astype(float),
                                                               float(hp["lm_band"]))
        out[f"{run.key}/{tag}_proxy"] = measured @ gain
        out[f"{run.key}/{tag}_alpha_l1"] = np.abs(alpha).sum(1)
    return out


# ------------------------------------------------------------------------------------------
# evaluate
# ------------------------------------------------------------------------------------------
def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    hp = cfg["params"]
    names = set_names(hp["levels"])
    rows = []
    for run in runs:
        family = setting_of(cfg, run.setting)["family"]
        idx = set_index(data[f"{family}/s{run.seed}/level"], hp["levels"])
        row = {}
        for metric in ("iou", "perr", "valid", "lm", "alpha_l1"):
            v = state[f"{run.key}/{metric}"]
            for k, name in enumerate(names):
                part = v[idx == k]
                row[f"{metric}_{name}"] = float(part.mean()) if len(part) else np.nan
            row[f"{metric}_all"] = float(v.mean())
        row["n_empty"] = float(state[f"{run.key}/empty"].sum())
        for name in ("constraint_residual", "gt_perr"):
            k = f"{run.key}/{name}"
            row[f"{name}_max"] = float(state[k].max()) if k in state else np.nan
        for name in ("exemplar_iou", "weight_drift"):
            k = f"{run.key}/{name}"
            row[name] = float(state[k].mean()) if k in state else np.nan
        for tag in ("partial", "guided"):
            for metric in ("iou", "perr", "lm", "proxy", "alpha_l1"):
                k = f"{run.key}/{tag}_{metric}"
                row[f"{tag}_{metric}"] = float(state[k].mean()) if k in state else np.nan
        if f"{run.key}/guided_proxy" in state:
            row["guided_proxy_drop"] = float(np.mean(state[f"{run.key}/partial_proxy"]
                                                     - state[f"{run.key}/guided_proxy"]))
        else:
            row["guided_proxy_drop"] = np.nan
        rows.append(row)
    return rows
