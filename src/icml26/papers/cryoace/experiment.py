"""Stages of cryoace: toy cryo-EM maps (prepare), CryoACE-mini / Voxel-CNN / real-space
refinement and the guided sampler (train), static and dynamics metrics (evaluate).

A setting is one world (chain length, grid). Its maps do not depend on the seed: the spec fixes
the test set, and the seed controls network initialisation and data order. prepare draws every
split from its own stream (paper, setting, split). train (one torch process) trains CryoACE-mini
stacked over the seeds of the shard and the Voxel-CNN seed by seed, refines with the
training-free baseline, and stores predictions, samples and weights. evaluate is numpy only.

Runs: ``cryoace`` (K_test recycles; its row also carries the guided-sampling metrics),
``cryoace-k1`` (the same trained model read after 1 recycle), ``cryoace-unguided`` (the
sampler with g = 0) and ``cryoace-consensus`` (one deterministic run) all read the model
trained for (setting, seed) under the ``cryoace`` run's streams, so the result does not depend
on how the grid is sharded; ``voxel-cnn`` and ``rsr`` are the baselines.
"""

from __future__ import annotations

import time

import numpy as np

from icml26.grid import Run
from icml26.seeding import rng as named_rng

from . import data as world
from . import refine

METHODS = ("cryoace", "cryoace-k1", "cryoace-unguided", "cryoace-consensus", "voxel-cnn", "rsr")
ACE_FAMILY = ("cryoace", "cryoace-k1", "cryoace-unguided", "cryoace-consensus")
STATIC = ("cryoace", "cryoace-k1", "voxel-cnn", "rsr")
DYNAMICS = ("cryoace", "cryoace-unguided", "cryoace-consensus")


def _p(cfg, setting) -> dict:
    p = dict(cfg["params"])
    p.update(cfg["settings"][setting] or {})
    return p


def check_params(p) -> None:
    """What the params schema cannot say."""
    from icml26.errors import ConfigError

    if p["res_max"] <= p["res_min"]:
        raise ConfigError(f"cryoace params.res_max={p['res_max']} must exceed "
                          f"params.res_min={p['res_min']}")
    if p["theta_max_deg"] < p["theta_min_deg"]:
        raise ConfigError("cryoace params.theta_max_deg must be >= params.theta_min_deg")
    if int(p["n_flex"]) > int(p["n_atoms"]) - 2:
        raise ConfigError(f"cryoace params.n_flex={p['n_flex']} leaves no rigid part of "
                          f"{p['n_atoms']} atoms")
    if int(p["k_test"]) > int(p["k_max_curve"]):
        raise ConfigError("cryoace params.k_test must be <= params.k_max_curve")
    if int(p["voxel_crop"]) > int(p["grid"]):
        raise ConfigError(f"cryoace params.voxel_crop={p['voxel_crop']} exceeds the grid "
                          f"{p['grid']}")


# ------------------------------------------------------------------------------------------
# prepare
# ------------------------------------------------------------------------------------------
def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    out = {}
    for setting in cfg["settings"]:
        p = _p(cfg, setting)
        check_params(p)
        for split in ("train", "val", "test"):
            d = world.static_maps(named_rng(cfg["paper"], setting, split), int(p[f"n_{split}"]), p)
            for k, v in d.items():
                out[f"{setting}/{split}/{k}"] = v
        het = world.heterogeneous_maps(named_rng(cfg["paper"], setting, "het"),
                                       int(p["n_het"]), p)
        for k, v in het.items():
            out[f"{setting}/het/{k}"] = v
        # the coarse placement every method starts from (identical for every method and seed);
        # for two-state maps it is the noisy parent chain, the angular midpoint of the states
        # (INFERRED "consensus start")
        for split, key in (("val", "X"), ("test", "X"), ("het", "X")):
            out[f"{setting}/{split}/X0"] = world.coarse_start(
                named_rng(cfg["paper"], setting, split, "start"), out[f"{setting}/{split}/{key}"],
                float(p["init_sigma"]))
    return out


def _split(data, setting, split) -> dict:
    pre = f"{setting}/{split}/"
    return {k[len(pre):]: v for k, v in data.items() if k.startswith(pre)}


# ------------------------------------------------------------------------------------------
# train
# ------------------------------------------------------------------------------------------
def _ace_run(cfg, setting, seed) -> Run:
    """The run whose streams train the model shared by the CryoACE family of (setting, seed)."""
    return Run("cryoace", setting, int(seed))


def _batches(n: int, bs: int, order: np.random.Generator) -> list[np.ndarray]:
    perm = order.permutation(n)
    return [perm[s:s + bs] for s in range(0, n, bs)]


def train_cryoace(cfg, p, setting, seeds, sp, dev, curves, shard_runs=()):
    """Train CryoACE-mini stacked over ``seeds``; returns (model, params, offsets). Curve rows
    are written for the ``cryoace`` runs among ``shard_runs``."""
    import torch

    from icml26.rl.optim import Adam

    from . import models

    runs = [_ace_run(cfg, setting, s) for s in seeds]
    model = models.CryoACEMini(p["hidden"], p["conv_kernel"], p["conv_rounds"], p["max_step"],
                               p["res_floor"])
    params = model.init([r.rng_seed(cfg["paper"], "init") for r in runs], dev)
    leaves = model.leaves(params)
    opt = Adam(leaves, lr=float(p["lr"]))
    off = models.sample_offsets().to(dev, torch.float32)
    tr, va = sp["train"], sp["val"]
    M = torch.as_tensor(tr["M"], device=dev)
    X = torch.as_tensor(tr["X"], dtype=torch.float32, device=dev)
    R = torch.as_tensor(tr["R"], dtype=torch.float32, device=dev)
    Mv = torch.as_tensor(va["M"], device=dev)
    Xv = torch.as_tensor(va["X"], dtype=torch.float32, device=dev)
    X0v = torch.as_tensor(va["X0"], dtype=torch.float32, device=dev)
    order = [np.random.default_rng(r.rng_seed(cfg["paper"], "batches")) for r in runs]
    noise = [np.random.default_rng(r.rng_seed(cfg["paper"], "noise")) for r in runs]
    S, n, bs = len(seeds), len(X), int(p["batch_size"])
    lo, hi = p["train_sigma"]
    for epoch in range(1, int(p["epochs"]) + 1):
        per_seed = [_batches(n, bs, o) for o in order]
        losses = []
        for b in range(len(per_seed[0])):
            idx = np.stack([ps[b] for ps in per_seed])                          # (S, B)
            # training inputs: X* + N(0, sigma0^2), sigma0 ~ U(lo, hi) per map
            z = np.stack([nz.uniform(lo, hi, (idx.shape[1], 1, 1))
                          * nz.standard_normal((idx.shape[1], X.shape[1], 2)) for nz in noise])
            it = torch.as_tensor(idx, device=dev)
            Xt = X[it]
            X0 = Xt + torch.as_tensor(z, dtype=torch.float32, device=dev)
            xs, rs = model.recycle(params, M[it.reshape(-1)], X0, int(p["k_train"]), off)
            loss = models.cryoace_loss(xs, rs, Xt, R[it], p["bond_weight"], p["res_weight"])
            opt.step(torch.autograd.grad(loss, leaves))
            losses.append(float(loss.detach()) / S)
        with torch.no_grad():
            xs, _ = model.recycle(params, Mv.repeat(S, 1, 1), X0v.expand(S, -1, -1, -1),
                                  int(p["k_test"]), off)
            val = ((xs[-1] - Xv) ** 2).sum(-1).mean(-1).sqrt().mean(-1)        # (S,)
        for i, r in enumerate(runs):
            if r not in shard_runs:
                continue
            base = {"method": "cryoace", "setting": setting, "seed": r.seed, "step": epoch}
            curves += [{**base, "metric": "train_loss_mean_seeds", "value": float(np.mean(losses))},
                       {**base, "metric": "val_rmsd", "value": float(val[i])}]
    return model, params, off


def _predict(model, params, maps, X0, K, off, dev, chunk=512):
    """Recycle K times from X0 (S, n, L, 2) on maps (n, H, W), in chunks of maps: the
    trajectory (S, n, K+1, L, 2) and R_hat of every pass (S, n, K, L)."""
    import torch

    S = X0.shape[0]
    trs, res = [], []
    with torch.no_grad():
        for s in range(0, maps.shape[0], chunk):
            m = maps[s:s + chunk]
            xs, rs = model.recycle(params, m.repeat(S, 1, 1), X0[:, s:s + chunk], K, off)
            trs.append(torch.stack(xs, 2))
            res.append(torch.stack(rs, 2))
    return torch.cat(trs, 1).double().cpu().numpy(), torch.cat(res, 1).double().cpu().numpy()


def sample_dynamics(model, params, maps, X0, off, dev, streams, p):
    """Training-free local-resolution guidance (INFERRED reading of the abstract).

    R_hat from one forward pass at the consensus start X0; for each of S samples:
    X <- X0 + N(0, base^2) + N(0, (g relu(R_hat - R_ref))^2), then K_test recycles each
    followed by N(0, (0.5^k g relu(R_hat - R_ref))^2). Unguided is the same loop with g = 0 and
    the same draws (paired). Returns guided, unguided (S_seeds, n, S, L, 2) and the
    deterministic consensus run (S_seeds, n, 1, L, 2).
    """
    import torch

    S_seeds, n, L, _ = X0.shape
    ns, K = int(p["n_samples"]), int(p["k_test"])
    mapsT = torch.as_tensor(maps, device=dev)
    X0t = torch.as_tensor(X0, dtype=torch.float32, device=dev)
    with torch.no_grad():
        _, rhat = model.step(params, mapsT.repeat(S_seeds, 1, 1), X0t, off)     # (S, n, L)
    scale = torch.relu(rhat - float(p["r_ref"]))[:, :, None, :, None]         # (S, n, 1, L, 1)
    # draws per seed: base, initial guided, and one per recycle (from the seed's own stream)
    base = np.stack([r.standard_normal((n, ns, L, 2)) for r in streams])
    extra = np.stack([r.standard_normal((K + 1, n, ns, L, 2)) for r in streams])
    base = torch.as_tensor(base, dtype=torch.float32, device=dev)
    extra = torch.as_tensor(extra, dtype=torch.float32, device=dev)
    rep = mapsT.repeat_interleave(ns, 0)                                      # (n*ns, H, W)
    out = {}
    for name, g in (("guided", float(p["guidance"])), ("unguided", 0.0)):
        X = X0t[:, :, None] + float(p["sample_sigma"]) * base + g * scale * extra[:, 0]

        def noise(k, Xk, g=g):
            e = extra[:, k].reshape(S_seeds, n * ns, L, 2)
            sc = scale.expand(-1, -1, ns, -1, -1).reshape(S_seeds, n * ns, L, 1)
            return (0.5 ** k) * g * sc * e

        with torch.no_grad():
            xs, _ = model.recycle(params, rep.repeat(S_seeds, 1, 1),
                                  X.reshape(S_seeds, n * ns, L, 2), K, off,
                                  noise=noise if g > 0 else None)
        out[name] = xs[-1].reshape(S_seeds, n, ns, L, 2).double().cpu().numpy()
    with torch.no_grad():
        xs, _ = model.recycle(params, mapsT.repeat(S_seeds, 1, 1), X0t, K, off)
    out["consensus"] = xs[-1][:, :, None].double().cpu().numpy()
    out["rhat0"] = rhat.double().cpu().numpy()
    return out


def train_voxel(cfg, p, run, sp, dev, curves):
    """One seed's Voxel-CNN: per-pixel BCE against Gaussian bumps at the true atoms, the same
    training maps, epochs, batch size and optimiser as CryoACE-mini. With voxel_crop > 0 each
    map contributes one random voxel_crop x voxel_crop window per step (budget cut at default,
    see FIDELITY)."""
    import torch
    from torch.nn import functional as F

    from icml26.rl.optim import Adam

    from . import models

    gen = torch.Generator().manual_seed(run.rng_seed(cfg["paper"], "init") % 2**63)
    net = models.voxel_cnn(p["voxel_channels"], p["voxel_layers"], gen).to(dev)
    net = net.to(memory_format=torch.channels_last)
    leaves = list(net.parameters())
    opt = Adam(leaves, lr=float(p["lr"]))
    tr = sp["train"]
    G = int(p["grid"])
    M = torch.as_tensor(tr["M"], device=dev)
    T = torch.as_tensor(models.heat_targets(tr["X"], G, p["voxel_target_sigma"]), device=dev)
    order = np.random.default_rng(run.rng_seed(cfg["paper"], "batches"))
    crops = np.random.default_rng(run.rng_seed(cfg["paper"], "crops"))
    c = int(p["voxel_crop"]) or G
    ar = torch.arange(c, device=dev)
    for epoch in range(1, int(p["epochs"]) + 1):
        losses = []
        for idx in _batches(len(M), int(p["batch_size"]), order):
            it = torch.as_tensor(idx, device=dev)
            if c < G:
                y0, x0 = (torch.as_tensor(crops.integers(0, G - c + 1, len(idx)), device=dev)
                          for _ in range(2))
                rows = (y0[:, None] + ar)[:, :, None]
                cols = (x0[:, None] + ar)[:, None, :]
                m, t = M[it[:, None, None], rows, cols], T[it[:, None, None], rows, cols]
            else:
                m, t = M[it], T[it]
            logit = net(m[:, None].contiguous(memory_format=torch.channels_last))[:, 0]
            loss = F.binary_cross_entropy_with_logits(logit, t)
            opt.step(torch.autograd.grad(loss, leaves))
            losses.append(float(loss.detach()))
        curves.append({**run.as_dict(), "step": epoch, "metric": "train_bce",
                       "value": float(np.mean(losses))})
    return net


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list[dict]]:
    import torch

    from icml26.seeding import torch_device

    from . import models

    torch.set_num_threads(1)
    dev = torch_device(cfg["device"])
    state, curves = {}, []
    for setting in sorted({r.setting for r in runs}):
        p = _p(cfg, setting)
        sp = {s: _split(data, setting, s) for s in ("train", "val", "test", "het")}
        mine = [r for r in runs if r.setting == setting]
        test, het = sp["test"], sp["het"]
        n_test = len(test["X"])
        K, Kmax = int(p["k_test"]), int(p["k_max_curve"])
        # ---- CryoACE-mini: one model per seed, stacked -------------------------------------
        ace_seeds = sorted({r.seed for r in mine if r.method in ACE_FAMILY})
        if ace_seeds:
            model, params, off = train_cryoace(cfg, p, setting, ace_seeds, sp, dev, curves,
                                                set(mine))
            S = len(ace_seeds)
            Mt = torch.as_tensor(test["M"], device=dev)
            X0 = torch.as_tensor(test["X0"], dtype=torch.float32, device=dev).expand(S, -1, -1, -1)
            traj, rh = _predict(model, params, Mt, X0, Kmax, off, dev)
            # measured inference time per map: K_test recycles from X0, all seeds at once
            t0 = time.process_time()
            _predict(model, params, Mt, X0, K, off, dev)
            ace_cpu = (time.process_time() - t0) / (S * n_test)
            streams = [np.random.default_rng(_ace_run(cfg, setting, s).rng_seed(cfg["paper"],
                                                                                 "samples"))
                       for s in ace_seeds]
            X0h = np.repeat(het["X0"][None], S, axis=0)
            dyn = sample_dynamics(model, params, het["M"], X0h, off, dev, streams, p)
            have = {(r.method, r.seed) for r in mine}
            first = min(int(x) for x in cfg["seeds"])
            for i, seed in enumerate(ace_seeds):
                key = {m: Run(m, setting, seed).key for m in ACE_FAMILY}
                per_run = {
                    "cryoace": {"pred": traj[i, :, K], "trajectory": traj[i],
                                "rhat": rh[i, :, K - 1], "cpu_s_per_map": np.array(ace_cpu),
                                "samples": dyn["guided"][i], "rhat_het": dyn["rhat0"][i]},
                    "cryoace-k1": {"pred": traj[i, :, 1]},
                    "cryoace-unguided": {"samples": dyn["unguided"][i]},
                    "cryoace-consensus": {"samples": dyn["consensus"][i]}}
                for m, arrays in per_run.items():
                    if (m, seed) in have:
                        state.update({f"{key[m]}/{k}": v for k, v in arrays.items()})
                if ("cryoace", seed) not in have:
                    continue
                for name in sorted(params):
                    for j, t in enumerate(models.stacked.parameters(params[name])):
                        state[f"{key['cryoace']}/weights/{name}/{j}"] = \
                            t[i].detach().cpu().numpy()
                base = {"method": "cryoace", "setting": setting, "seed": seed}
                for k in range(Kmax + 1):
                    r = refine.rmsd(traj[i, :, k], test["X"]).mean()
                    curves.append({**base, "step": k, "metric": "rmsd_vs_recycle",
                                   "value": float(r)})
                if seed == first:   # Fig. 2's example: the first two-state map
                    ex = {"state_A": het["XA"][0], "state_B": het["XB"][0]}
                    for j in range(dyn["guided"].shape[2]):
                        ex[f"guided_{j}"] = dyn["guided"][i, 0, j]
                        ex[f"unguided_{j}"] = dyn["unguided"][i, 0, j]
                    for name, pts in ex.items():
                        curves += [{**base, "step": t, "metric": f"example_{name}",
                                    "value": float(v)} for t, v in enumerate(pts.ravel())]
        # ---- Voxel-CNN, seed by seed ------------------------------------------------------
        for run in [r for r in mine if r.method == "voxel-cnn"]:
            net = train_voxel(cfg, p, run, sp, dev, curves)
            t0 = time.process_time()
            logits = models.voxel_logits(net, torch.as_tensor(test["M"], device=dev))
            pred = refine.soft_argmax(logits.double().cpu().numpy(), test["X0"],
                                      p["voxel_radius"], p["voxel_repeats"])
            state[f"{run.key}/cpu_s_per_map"] = np.array((time.process_time() - t0) / n_test)
            state[f"{run.key}/pred"] = pred
            for name, t in net.state_dict().items():
                state[f"{run.key}/weights/{name}"] = t.detach().cpu().numpy()
        # ---- real-space refinement (training-free, identical for every seed) ---------------
        rsr = [r for r in mine if r.method == "rsr"]
        if rsr:
            t0 = time.process_time()
            pred = refine.real_space_refine(test["M"], test["X0"], p["rsr_steps"],
                                            p["rsr_step"], p["rsr_smooth"], p["rsr_restraint"])
            cpu = (time.process_time() - t0) / n_test
            for run in rsr:
                state[f"{run.key}/pred"] = pred
                state[f"{run.key}/cpu_s_per_map"] = np.array(cpu)
    return state, curves


# ------------------------------------------------------------------------------------------
# evaluate
# ------------------------------------------------------------------------------------------
def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    from icml26.stats import spearman

    rows = []
    for run in runs:
        p = _p(cfg, run.setting)
        test, het = _split(data, run.setting, "test"), _split(data, run.setting, "het")
        row = {}
        pred = state.get(f"{run.key}/pred")
        if pred is not None:
            row["rmsd"] = float(refine.rmsd(pred, test["X"]).mean())
            row["recall_1A"] = refine.recall(pred, test["X"], 1.0)
            row["bond_validity"] = refine.bond_validity(pred)
            bl = np.linalg.norm(np.diff(pred, axis=-2), axis=-1)
            row["bond_length_mean"], row["bond_length_sd"] = float(bl.mean()), float(bl.std())
        if run.method in ("cryoace", "voxel-cnn", "rsr"):
            row["cpu_s_per_map"] = float(state[f"{run.key}/cpu_s_per_map"])
        if run.method == "cryoace":
            row["flops_per_map"] = refine.flops_atom_centric(p, int(p["k_test"]))
            row["flops_sampling_per_map"] = refine.flops_sampling(p, int(p["k_test"]))
            row["start_rmsd"] = float(refine.rmsd(test["X0"], test["X"]).mean())
            R_hat = state[f"{run.key}/rhat"]
            row["spearman_res"] = spearman(R_hat.ravel(), test["R"].ravel())
            # the guidance's premise: R_hat at the consensus start flags the flexible atoms
            rh, F = state[f"{run.key}/rhat_het"], int(p["n_flex"])
            row["rhat_het_flex"] = float(rh[:, -F:].mean())
            row["rhat_het_rigid"] = float(rh[:, :-F].mean())
            row["guided_frac_flex"] = float((rh[:, -F:] > p["r_ref"]).mean())
            row["guided_frac_rigid"] = float((rh[:, :-F] > p["r_ref"]).mean())
            row["het_state_gap_flex"] = float(np.linalg.norm(het["XA"] - het["XB"],
                                                             axis=-1)[:, -F:].mean())
        elif run.method == "cryoace-k1":
            row["flops_per_map"] = refine.flops_atom_centric(p, 1)
        elif run.method == "voxel-cnn":
            row["flops_per_map"] = refine.flops_voxel(p)
        samples = state.get(f"{run.key}/samples")
        if samples is not None:
            d = refine.dynamics(samples, het["XA"], het["XB"], int(p["n_flex"]),
                                p["resolved_cutoff"])
            row.update(d)
            # where the samples' flexible tail ends up: distance to the consensus (parent) chain
            flex = slice(-int(p["n_flex"]), None)
            row["flex_rmsd_to_parent"] = float(refine.rmsd(samples[:, :, flex],
                                                           het["X"][:, None, flex]).mean())
        rows.append(row)
    return rows
