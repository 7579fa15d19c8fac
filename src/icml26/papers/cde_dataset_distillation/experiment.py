"""Stages of cde-dataset-distillation: digits and splits (prepare), distillation plus the
evaluation trainings (train), gaps per run (evaluate).

A setting is one of the two laws: ``law1`` (one configuration c0 distilled for, every method,
evaluated on c0 and the shifted c1, c2, or on all 18 configurations at full) or ``cover``
(DM distilled for the family F_m = the first m configurations of the farthest-point order,
evaluated on every member of F_m). One train job runs everything: all DM runs are one
batched distillation, GM and TM one each, and every evaluation training of one
(architecture, optimizer, IPC) is one stacked model set.

Common random numbers (pairing): the split of a seed, its random real subsets (the start of
every distilled set, and the random baseline itself), the three evaluation initialisations of
a (configuration, seed) and the evaluation mini-batches / augmentation draws are derived from
(paper, seed, configuration, IPC, init) only, so every method of a seed is compared on the
same split, starts and evaluation networks, and the reference full-data training shares the
initialisations. Streams never depend on sharding.
"""

from __future__ import annotations

import numpy as np

from icml26.errors import ConfigError
from icml26.seeding import derive_seed

from . import configs as C

METHODS = ("dm", "gm", "tm", "random")
N_CLASSES = 10
SMALLEST_CLASS = 174      # images of the rarest digit in load_digits (of 1797)


def setting_params(cfg, setting) -> dict:
    s = dict(cfg["settings"][setting] or {})
    s.setdefault("resolution", 8)
    s.setdefault("eval", "shift")
    return s


def family(cfg, setting) -> list[tuple]:
    """Configurations a setting distils for: [c0] (law1) or the first m of the FPS order."""
    s = setting_params(cfg, setting)
    if s["kind"] == "law1":
        return [C.C0]
    return C.farthest_point_order()[: int(s["m"])]


def eval_configs(cfg, setting) -> list[tuple]:
    """Configurations a setting's sets are evaluated on."""
    s = setting_params(cfg, setting)
    if s["kind"] == "cover":
        return family(cfg, setting)
    if s["eval"] == "all":
        return [C.C0, C.C1, C.C2] + [c for c in C.CONFIGS if c not in C.SHIFT]
    return list(C.SHIFT)


# ------------------------------------------------------------------------------------------
# prepare: digits, the 28x28 rendering (full), stratified splits per seed
# ------------------------------------------------------------------------------------------
def stratified_split(y: np.ndarray, n_train: int, rng: np.random.Generator):
    """(train rows, test rows): each class split in proportion (largest remainders), so the
    class counts of the split are the same for every seed."""
    counts = np.bincount(y, minlength=N_CLASSES)
    share = counts * n_train / len(y)
    take = np.floor(share).astype(int)
    order = np.argsort(-(share - take), kind="stable")
    take[order[: n_train - take.sum()]] += 1
    train, test = [], []
    for c in range(N_CLASSES):
        members = rng.permutation(np.flatnonzero(y == c))
        train.append(members[: take[c]])
        test.append(members[take[c]:])
    return np.sort(np.concatenate(train)), np.sort(np.concatenate(test))


def render28(X8: np.ndarray, rng: np.random.Generator, alpha: float, sigma: float) -> np.ndarray:
    """MNIST-like 28x28 digits: bicubic upsampling of the 8x8 images (scipy.ndimage.zoom,
    order 3) and an elastic distortion (Simard et al. 2003: a Gaussian-smoothed random
    displacement field of scale ``alpha`` pixels, smoothing ``sigma``; INFERRED values),
    clipped to [0, 1]."""
    from scipy import ndimage

    out = np.empty((len(X8), 28 * 28), dtype=np.float32)
    grid = np.mgrid[0:28, 0:28].astype(float)
    for i, img in enumerate(X8.reshape(-1, 8, 8)):
        big = ndimage.zoom(img.astype(float), 3.5, order=3)
        dy = ndimage.gaussian_filter(rng.uniform(-1, 1, (28, 28)), sigma) * alpha
        dx = ndimage.gaussian_filter(rng.uniform(-1, 1, (28, 28)), sigma) * alpha
        warped = ndimage.map_coordinates(big, [grid[0] + dy, grid[1] + dx], order=1,
                                         mode="constant")
        out[i] = np.clip(warped, 0.0, 1.0).ravel()
    return out


def check_params(cfg) -> None:
    p = cfg["params"]
    ipc = list(p["ipc"])
    if sorted(set(ipc)) != ipc:
        raise ConfigError(f"{cfg['paper']}: params.ipc must be strictly increasing, got {ipc}")
    per_class_min = SMALLEST_CLASS * int(p["n_train"]) // 1797 - 1
    if ipc[-1] > per_class_min:
        raise ConfigError(f"{cfg['paper']}: params.ipc max {ipc[-1]} exceeds the training "
                          f"images of the smallest class")
    for s in cfg["settings"]:
        sp = setting_params(cfg, s)
        if sp["kind"] == "cover" and "m" not in sp:
            raise ConfigError(f"{cfg['paper']}: setting {s!r} (kind cover) needs m")
        if sp["kind"] == "cover" and int(sp["m"]) > len(C.CONFIGS):
            raise ConfigError(f"{cfg['paper']}: setting {s!r}: m must be <= 18")


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    from sklearn.datasets import load_digits

    check_params(cfg)
    p = cfg["params"]
    digits = load_digits()
    X8 = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    data = {"X8": X8, "y": y}
    if any(setting_params(cfg, s)["resolution"] == 28 for s in cfg["settings"]):
        g = np.random.default_rng(derive_seed(cfg["paper"], "render28"))
        data["X28"] = render28(X8, g, p["elastic_alpha"], p["elastic_sigma"])
    for seed in cfg["seeds"]:
        g = np.random.default_rng(derive_seed(cfg["paper"], "split", seed))
        tr, te = stratified_split(y, int(p["n_train"]), g)
        data[f"train/{seed}"] = tr
        data[f"test/{seed}"] = te
    return data


# ------------------------------------------------------------------------------------------
# train
# ------------------------------------------------------------------------------------------
def _distil_all(cfg, data, runs, res, dev, torch):
    """Synthetic sets (N, d) per run key of one resolution, and curve rows."""
    from . import distill, nets

    paper, p = cfg["paper"], cfg["params"]
    ipcs = [int(q) for q in p["ipc"]]
    X = torch.as_tensor(data[f"X{res}"])
    y = data["y"]
    side = res
    seeds = sorted({r.seed for r in runs})
    tr = {s: data[f"train/{s}"] for s in seeds}
    start = {s: tr[s][distill.initial_subset(
        y[tr[s]], ipcs, [derive_seed(paper, "subset", s, q) for q in ipcs])] for s in seeds}
    sets, curves = {}, []

    def add_curve(batch, curve, metric_of):
        for it, per in curve:
            for j, run in enumerate(batch):
                for i, q in enumerate(ipcs):
                    curves.append({**run.as_dict(), "step": it, "metric": metric_of(q),
                                   "value": float(per[j, i])})

    for run in runs:
        if run.method == "random":
            sets[run.key] = X[start[run.seed]].numpy()

    def stack(batch):
        S0 = torch.stack([X[start[r.seed]] for r in batch]).to(dev)
        Xtr = torch.stack([X[tr[r.seed]] for r in batch]).to(dev)
        return S0, Xtr, [y[tr[r.seed]] for r in batch]

    dm = [r for r in runs if r.method == "dm"]
    if dm:
        S0, Xtr, ytr = stack(dm)
        S, curve = distill.distill_dm(S0, ipcs, Xtr, ytr, [family(cfg, r.setting) for r in dm],
                                      [r.rng_seed(paper, "dm") for r in dm], p, side, dev)
        for j, r in enumerate(dm):
            sets[r.key] = S[j].cpu().numpy()
        add_curve(dm, curve, lambda q: f"dm_loss_ipc{q}")
    for method in ("gm", "tm"):
        batch = [r for r in runs if r.method == method]
        for fam in sorted({tuple(family(cfg, r.setting)) for r in batch}):
            if len(fam) != 1:
                raise ConfigError(f"{paper}: {method} distils for one configuration only")
            part = [r for r in batch if tuple(family(cfg, r.setting)) == fam]
            S0, Xtr, ytr = stack(part)
            if method == "gm":
                S, curve = distill.distill_gm(S0, ipcs, Xtr, ytr, fam[0],
                                              [r.rng_seed(paper, "gm") for r in part], p,
                                              side, dev)
            else:
                experts = _experts(cfg, data, part, fam[0], X, dev, torch, nets, distill)
                S, curve = distill.distill_tm(S0, ipcs, experts, fam[0],
                                              [r.rng_seed(paper, "tm") for r in part], p, dev)
            for j, r in enumerate(part):
                sets[r.key] = S[j].cpu().numpy()
            add_curve(part, curve, lambda q, m=method: f"{m}_loss_ipc{q}")
    return sets, curves


def _batch_rows(n_rows, batch, steps, seeds) -> np.ndarray:
    """(steps, R, batch) mini-batch rows, each model from its own generator (no repeats
    within a batch)."""
    out = np.empty((steps, len(seeds), batch), dtype=np.int64)
    for r, s in enumerate(seeds):
        g = np.random.default_rng(int(s))
        for t in range(steps):
            out[t, r] = g.choice(n_rows, size=batch, replace=False)
    return out


def _experts(cfg, data, runs, config, X, dev, torch, nets, distill):
    """Expert trajectories of each run's seed: ``tm_experts`` trainings of the configuration on
    the full training set, mini-batches of 128, one checkpoint per epoch (ceil(n / 128)
    steps). Returns per run a tensor (E, T + 1, n_params)."""
    paper, p = cfg["paper"], cfg["params"]
    arch, opt, aug = config
    seeds = sorted({r.seed for r in runs})
    E = int(p["tm_experts"])
    n = int(p["n_train"])
    spe = -(-n // int(p["full_batch"]))
    T = int(p["tm_max_start"]) + int(p["tm_horizon"])
    models = [(s, e) for s in seeds for e in range(E)]
    Xtr = torch.stack([X[data[f"train/{s}"]] for s, _ in models]).to(dev)
    ytr = torch.stack([torch.as_tensor(data["y"][data[f"train/{s}"]]) for s, _ in models]).to(dev)
    bidx = _batch_rows(n, int(p["full_batch"]), T * spe,
                       [derive_seed(paper, "expert-batch", s, e) for s, e in models])
    ckpts = []

    def keep(step, layers):
        if step % spe == 0:
            ckpts.append(distill.flatten(layers).cpu())

    nets.train_models(arch, opt, p, Xtr, ytr, [derive_seed(paper, "expert", s, e)
                                               for s, e in models],
                      [aug] * len(models), [derive_seed(paper, "expert-aug", s, e)
                                            for s, e in models],
                      int(round(np.sqrt(X.shape[1]))), dev,
                      batch_idx=torch.as_tensor(bidx, device=dev), steps=T * spe,
                      checkpoint=keep)
    traj = torch.stack(ckpts, 1)                                  # (models, T + 1, n_params)
    by_seed = {s: traj[[i for i, (s2, _) in enumerate(models) if s2 == s]] for s in seeds}
    return [by_seed[r.seed] for r in runs]


def _evaluate_sets(cfg, data, runs, sets, res, dev, torch):
    """Test error of train_c(S) for every run, evaluated configuration, IPC and init, and of
    the reference train_c(D_full) for every (configuration, seed, init)."""
    from . import distill, nets

    paper, p = cfg["paper"], cfg["params"]
    ipcs = [int(q) for q in p["ipc"]]
    inits = int(p["inits"])
    X = torch.as_tensor(data[f"X{res}"])
    y = torch.as_tensor(data["y"])
    _, _, offs = distill.layout(ipcs)
    side = res
    err = {r.key: np.full((len(eval_configs(cfg, r.setting)), len(ipcs), inits), np.nan)
           for r in runs}
    # distilled sets: one stacked model set per (arch, opt, IPC)
    items = {}
    for r in runs:
        for ci, c in enumerate(eval_configs(cfg, r.setting)):
            for qi, q in enumerate(ipcs):
                items.setdefault((c[0], c[1], qi), []).append((r, ci, c, qi, q))
    for (arch, opt, qi), group in sorted(items.items()):
        q = ipcs[qi]
        rows = slice(offs[qi], offs[qi + 1])
        labels = torch.arange(N_CLASSES).repeat_interleave(q)
        Xs, ys, Xte, yte, init_s, aug_k, aug_s = [], [], [], [], [], [], []
        for r, _, c, _, _ in group:
            S = torch.as_tensor(sets[r.key][rows])
            te = data[f"test/{r.seed}"]
            for i in range(inits):
                Xs.append(S)
                ys.append(labels)
                Xte.append(X[te])
                yte.append(y[te])
                init_s.append(derive_seed(paper, "init", C.name(c), r.seed, i))
                aug_k.append(c[2])
                aug_s.append(derive_seed(paper, "eval-aug", C.name(c), r.seed, q, i))
        layers = nets.train_models(arch, opt, p, torch.stack(Xs).to(dev),
                                   torch.stack(ys).to(dev), init_s, aug_k, aug_s, side, dev)
        e = nets.test_error(layers, arch, torch.stack(Xte).to(dev), torch.stack(yte).to(dev))
        for j, (r, ci, _, _, _) in enumerate(group):
            err[r.key][ci, qi] = e[j * inits:(j + 1) * inits]
    # references: one stacked model set per (arch, opt), mini-batches on the full set
    pairs = sorted({(c, r.seed) for r in runs for c in eval_configs(cfg, r.setting)})
    ref = {}
    n = int(p["n_train"])
    steps = int(p["eval_steps"])
    for arch, opt in sorted({(c[0], c[1]) for c, _ in pairs}):
        part = [(c, s) for c, s in pairs if c[0] == arch and c[1] == opt]
        models = [(c, s, i) for c, s in part for i in range(inits)]
        Xtr = torch.stack([X[data[f"train/{s}"]] for _, s, _ in models]).to(dev)
        ytr = torch.stack([y[data[f"train/{s}"]] for _, s, _ in models]).to(dev)
        bidx = _batch_rows(n, int(p["full_batch"]), steps,
                           [derive_seed(paper, "ref-batch", C.name(c), s, i)
                            for c, s, i in models])
        layers = nets.train_models(
            arch, opt, p, Xtr, ytr, [derive_seed(paper, "init", C.name(c), s, i)
                                     for c, s, i in models],
            [c[2] for c, _, _ in models],
            [derive_seed(paper, "ref-aug", C.name(c), s, i) for c, s, i in models], side, dev,
            batch_idx=torch.as_tensor(bidx, device=dev))
        Xte = torch.stack([X[data[f"test/{s}"]] for _, s, _ in models]).to(dev)
        yte = torch.stack([y[data[f"test/{s}"]] for _, s, _ in models]).to(dev)
        e = nets.test_error(layers, arch, Xte, yte)
        for j, (c, s) in enumerate(part):
            ref[(c, s)] = e[j * inits:(j + 1) * inits]
    refs = {r.key: np.stack([ref[(c, r.seed)] for c in eval_configs(cfg, r.setting)])
            for r in runs}
    return err, refs


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list[dict]]:
    import torch

    from icml26.seeding import torch_device

    torch.set_num_threads(1)
    check_params(cfg)
    dev = torch_device(cfg["device"])
    state, curves = {}, []
    for res in sorted({setting_params(cfg, r.setting)["resolution"] for r in runs}):
        part = [r for r in runs if setting_params(cfg, r.setting)["resolution"] == res]
        sets, cur = _distil_all(cfg, data, part, res, dev, torch)
        err, refs = _evaluate_sets(cfg, data, part, sets, res, dev, torch)
        curves += cur
        for r in part:
            state[f"{r.key}/syn"] = sets[r.key].astype(np.float32)
            state[f"{r.key}/err"] = err[r.key]
            state[f"{r.key}/ref"] = refs[r.key]
            state[f"{r.key}/configs"] = np.array([C.index(c) for c in
                                                  eval_configs(cfg, r.setting)])
    return state, curves


# ------------------------------------------------------------------------------------------
# evaluate: gaps Delta(S, c) = err_test(train_c(S)) - err_test(train_c(D_full))
# ------------------------------------------------------------------------------------------
def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    from . import fit

    p = cfg["params"]
    ipcs = [int(q) for q in p["ipc"]]
    k = np.array(ipcs, dtype=float) * N_CLASSES
    out = []
    for r in runs:
        err, ref = state[f"{r.key}/err"], state[f"{r.key}/ref"]
        cfgs = [C.CONFIGS[i] for i in state[f"{r.key}/configs"]]
        gap = err.mean(2) - ref.mean(1)[:, None]                        # (configs, IPC)
        row = {}
        for ci, c in enumerate(cfgs):
            row[f"ref_err:{C.name(c)}"] = float(ref[ci].mean())
            for qi, q in enumerate(ipcs):
                row[f"gap:{C.name(c)}:ipc{q}"] = float(gap[ci, qi])
        sp = setting_params(cfg, r.setting)
        if sp["kind"] == "cover":
            fam = gap.mean(0)
            for qi, q in enumerate(ipcs):
                row[f"gapF:ipc{q}"] = float(fam[qi])
            kstar, cens = fit.required_size(k, fam, float(p["eps"]))
            row["kstar"] = kstar
            row["kstar_censored"] = float(cens)
        else:
            g0 = gap[cfgs.index(C.C0)]
            f = fit.fit_power_floor(k, g0, (p["alpha_min"], p["alpha_max"]))
            half = fit.fit_power_floor(k, g0, alpha=0.5)
            row.update({"c0_alpha": f["alpha"], "c0_A": f["A"], "c0_floor": f["F"],
                        "c0_r2": f["r2"], "c0_r2_half": half["r2"]})
        out.append(row)
    return out
