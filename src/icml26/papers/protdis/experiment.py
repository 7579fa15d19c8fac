"""Stages of protdis: the synthetic proteins (prepare), pretraining of KON / MT-ENT, PCA and
every downstream head (train), metrics per run (evaluate).

A run is (representation, split, seed). One train job does everything of its seeds: the
encoders of a seed are trained once (stacked over seeds) and shared by the runs that read
them, and all downstream heads of one task are one stacked batch. Streams derive from
names: the generator from (paper, "data", seed); the encoders from (paper, encoder, seed);
pretraining mini-batches from (paper, "pretrain-batches", seed), shared by KON and MT-ENT;
head mini-batches from (paper, seed, split, task), shared by every representation; head
initialisations from (paper, method, split, seed, task, candidate). Nothing depends on how
the grid is sharded.
"""

from __future__ import annotations

import numpy as np

from icml26.errors import ConfigError
from icml26.seeding import derive_seed

from . import data as D

METHODS = ("raw", "pca", "mt-ent", "protdis-all", "protdis-sel", "protdis-foldholdout")
SPLITS = ("structure", "random")
PCA_DIM = 32
# ProtDiS feature layout: [sk_ss, sk_asa, sk_packing, sk_curvature, sk_flexibility, sk_hydro,
# ck2] (4 dims each, ck2 8); MT-ENT's 32-d bottleneck is read as 8 contiguous 4-d chunks
KON_BLOCKS = [list(range(4 * k, 4 * k + 4)) for k in range(len(D.FACTORS))] + [list(range(24, 32))]
KON_BLOCK_NAMES = [f"sk_{f}" for f in D.FACTORS] + ["ck2"]
MT_BLOCKS = [list(range(4 * k, 4 * k + 4)) for k in range(8)]
MT_BLOCK_NAMES = [f"chunk{k}" for k in range(8)]
ENCODER_OF = {"mt-ent": "mt", "protdis-all": "kon", "protdis-sel": "kon",
              "protdis-foldholdout": "fh"}


def check_params(cfg) -> None:
    p = cfg["params"]
    paper = cfg["paper"]
    if int(p["n_pool"]) >= int(p["n_proteins"]):
        raise ConfigError(f"{paper}: params.n_pool ({p['n_pool']}) must be below n_proteins "
                          f"({p['n_proteins']}): the rest is the pretraining corpus")
    if not 0 < int(p["struct_val_folds"]) < int(p["struct_train_folds"]) < int(p["n_folds"]):
        raise ConfigError(f"{paper}: need 0 < struct_val_folds < struct_train_folds < n_folds, "
                          f"got {p['struct_val_folds']}, {p['struct_train_folds']}, "
                          f"{p['n_folds']}")
    if int(p["eval_every"]) * (int(p["n_last"]) - 1) >= int(p["head_steps"]):
        raise ConfigError(f"{paper}: eval_every * (n_last - 1) must be below head_steps")
    if int(p["x_dim"]) != D.X_DIM:
        raise ConfigError(f"{paper}: params.x_dim must be {D.X_DIM} (the generator's width)")
    for s in cfg["settings"]:
        if s not in SPLITS:
            raise ConfigError(f"{paper}: setting {s!r} is unknown; allowed: "
                              f"{', '.join(SPLITS)}")


def _residue_rows(proteins: np.ndarray, L: int) -> np.ndarray:
    return (np.asarray(proteins)[:, None] * L + np.arange(L)[None, :]).reshape(-1)


# ------------------------------------------------------------------------------------------
# prepare
# ------------------------------------------------------------------------------------------
def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Per seed: factors, folds, downstream labels and splits (x is regenerated in train
    from the same seed, so data.npz stays small)."""
    check_params(cfg)
    p, out = cfg["params"], {}
    for seed in cfg["seeds"]:
        g = D.generate(p, np.random.default_rng(derive_seed(cfg["paper"], "data", seed)))
        lab = D.tasks(g, p, np.random.default_rng(derive_seed(cfg["paper"], "tasks", seed)))
        sp = D.splits(g["fold"][: int(p["n_pool"])], p,
                      np.random.default_rng(derive_seed(cfg["paper"], "random-split", seed)))
        out[f"{seed}/fold"] = g["fold"]
        out[f"{seed}/ss"] = g["ss"]
        out[f"{seed}/cont"] = g["cont"].astype(np.float32)
        for t in D.TASKS:
            out[f"{seed}/task/{t}"] = lab[t]
        for k, v in sp.items():
            out[f"{seed}/split/{k}"] = v
    return out


# ------------------------------------------------------------------------------------------
# train
# ------------------------------------------------------------------------------------------
def _pretrain(cfg, kind, gens, seeds, dev, torch, rows_of):
    """Encoder ``kind`` for each seed, stacked when all seeds have the same corpus size."""
    from . import kon

    paper, p = cfg["paper"], cfg["params"]
    nb = int(p["n_bins"])
    groups = {}
    for s in seeds:
        groups.setdefault(len(rows_of(s)), []).append(s)
    params, curves = {}, []
    for part in groups.values():
        xs, labs = [], {"ss": [], "z": [], "bins": []}
        for s in part:
            g, rows = gens[s], rows_of(s)
            t = D.knowledge_targets(g, rows, nb)
            xs.append(g["x"][rows])
            labs["ss"].append(g["ss"][rows])
            labs["z"].append(t["z"][rows])
            labs["bins"].append(t["bins"][rows])
        x = torch.as_tensor(np.stack(xs), device=dev)
        lab = {k: torch.as_tensor(np.stack(v), device=dev) for k, v in labs.items()}
        # class weights of ss: median frequency / frequency, scaled to max 1 (data_utils.py)
        freq = np.bincount(np.concatenate(labs["ss"]), minlength=D.SS_CLASSES) / sum(
            len(v) for v in labs["ss"])
        w = np.median(freq) / np.maximum(freq, 1e-12)
        w = torch.as_tensor(w / w.max(), dtype=torch.float32, device=dev)
        best, cur = kon.pretrain(
            "mt" if kind == "mt" else "kon", x, lab,
            [derive_seed(paper, kind, "init", s) for s in part],
            [derive_seed(paper, "pretrain-batches", s) for s in part], p, dev, w)
        for i, s in enumerate(part):
            params[s] = {k: v[i:i + 1] for k, v in best.items()}
        for c in cur:
            curves.append({"seed": part[c["seed_index"]], "epoch": c["epoch"],
                           "metric": c["metric"], "value": c["value"]})
    return params, curves


def _stream_key(seed, split, task):
    return f"{seed}|{split}|{task}"


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list[dict]]:
    import torch

    from icml26.seeding import torch_device

    from . import analysis, heads, kon

    torch.set_num_threads(1)
    check_params(cfg)
    dev = torch_device(cfg["device"])
    paper, p = cfg["paper"], cfg["params"]
    L, n_pool = int(p["n_residues"]), int(p["n_pool"])
    seeds = sorted({r.seed for r in runs})
    methods = {r.method for r in runs}
    gens = {}
    for s in seeds:
        g = D.generate(p, np.random.default_rng(derive_seed(paper, "data", s)))
        if not (np.array_equal(g["fold"], data[f"{s}/fold"])
                and np.array_equal(g["ss"], data[f"{s}/ss"])):
            raise ConfigError(f"{paper}: data.npz does not match the generator for seed {s}; "
                              "delete results/protdis and rerun")
        gens[s] = g
    pool = np.arange(n_pool * L)
    pre_all = np.arange(n_pool * L, int(p["n_proteins"]) * L)

    def pre_rows(s):
        return pre_all

    def pre_rows_holdout(s):
        # PROTDIS-FOLDHOLDOUT: pretraining proteins of the structure split's training folds
        fold = gens[s]["fold"]
        prots = np.arange(n_pool, int(p["n_proteins"]))
        return _residue_rows(prots[fold[prots] < int(p["struct_train_folds"])], L)

    encoders, curves_by = {}, {}
    kinds = sorted({ENCODER_OF[m] for m in methods if m in ENCODER_OF})
    for kind in kinds:
        enc, cur = _pretrain(cfg, kind, gens, seeds, dev, torch,
                             pre_rows_holdout if kind == "fh" else pre_rows)
        encoders[kind] = enc
        curves_by[kind] = cur
    # feature bank per seed: [raw 64 | pca 32 | encoders 32 each | zero pad]
    layout, width = {"raw": list(range(D.X_DIM))}, D.X_DIM
    if "pca" in methods:
        layout["pca"] = list(range(width, width + PCA_DIM))
        width += PCA_DIM
    for kind in kinds:
        layout[kind] = list(range(width, width + 32))
        width += 32
    bank = np.zeros((len(seeds), n_pool * L, width + 1), np.float32)
    state = {}
    for i, s in enumerate(seeds):
        x = gens[s]["x"]
        bank[i][:, layout["raw"]] = x[pool]
        if "pca" in methods:
            # fitted on the pretraining corpus (unsupervised), as the encoders are
            bank[i][:, layout["pca"]] = analysis.pca_transform(x[pre_all], x[pool], PCA_DIM)
        for kind in kinds:
            f = kon.encode("mt" if kind == "mt" else "kon", encoders[kind][s],
                           torch.as_tensor(x[pool][None], device=dev))[0].cpu().numpy()
            bank[i][:, layout[kind]] = f
    seed_index = {s: i for i, s in enumerate(seeds)}
    # ----- downstream heads ------------------------------------------------------------------
    split_rows = {}
    for s in seeds:
        for sp in SPLITS:
            for part in ("train", "val", "test"):
                prots = data[f"{s}/split/{sp}/{part}"]
                split_rows[(s, sp, part, "protein")] = prots
                split_rows[(s, sp, part, "residue")] = _residue_rows(prots, L)
    prot_bank = bank.reshape(len(seeds), n_pool, L, -1).mean(2)
    steps, B = int(p["head_steps"]), int(p["head_batch"])
    results = {}          # (method, split, seed, task) -> dict
    for task in D.TASKS:
        level, kind = D.TASK_LEVEL[task], D.TASK_KIND[task]
        n_out = D.ENZYME_CLASSES if kind == "multiclass" else 1
        y = np.stack([data[f"{s}/task/{task}"] for s in seeds])
        tbank = prot_bank if level == "protein" else bank
        streams = {}
        for r in runs:
            key = _stream_key(r.seed, r.setting, task)
            if key not in streams:
                rs = {part: split_rows[(r.seed, r.setting, part, level)]
                      for part in ("train", "val", "test")}
                streams[key] = {**rs, "seed": seed_index[r.seed],
                                "batches": heads.batch_stream(
                                    rs["train"], steps, B,
                                    derive_seed(paper, "head-batches", r.seed, r.setting, task))}
        todo, owners = [], []
        for r in runs:
            st = streams[_stream_key(r.seed, r.setting, task)]
            if r.method in ("protdis-sel", "protdis-foldholdout"):
                # selective fusion: rank the blocks by a ridge read-out's validation score
                # (INFERRED ranking; threshold-free for binary tasks), then nested prefixes
                # of 1..max_blocks ranked blocks (the repo's structure_{1..9}f configs)
                base = layout[ENCODER_OF[r.method]]
                Xb = tbank[st["seed"]]
                yy = y[st["seed"]]
                val_b = [heads.ridge_val_score(
                    kind, Xb[st["train"]][:, [base[c] for c in cols]], yy[st["train"]],
                    Xb[st["val"]][:, [base[c] for c in cols]], yy[st["val"]],
                    float(p["probe_alpha"]), D.ENZYME_CLASSES) for cols in KON_BLOCKS]
                val_b = [v if np.isfinite(v) else -np.inf for v in val_b]
                order = sorted(range(len(KON_BLOCKS)), key=lambda b: (-val_b[b], b))
                for n in range(1, int(p["max_blocks"]) + 1):
                    cols = [base[c] for b in order[:n] for c in KON_BLOCKS[b]]
                    todo.append({"stream": _stream_key(r.seed, r.setting, task), "cols": cols,
                                 "init": derive_seed(paper, r.method, r.setting, r.seed, task,
                                                     f"prefix{n}")})
                    owners.append((r, n, order))
            else:
                cols = layout[ENCODER_OF.get(r.method, r.method)]
                todo.append({"stream": _stream_key(r.seed, r.setting, task), "cols": cols,
                             "init": derive_seed(paper, r.method, r.setting, r.seed, task)})
                owners.append((r, 0, None))
        val, test = heads.train_heads(tbank, y, kind, n_out, todo, streams, p, dev)
        prefixes = {}
        for (r, n, order), h, v, t in zip(owners, todo, val, test, strict=True):
            if n == 0:
                results[(r.method, r.setting, r.seed, task)] = {
                    "val": v.mean(), "test": t.mean(), "dims": len(h["cols"]),
                    "blocks": np.zeros(len(KON_BLOCKS), np.int64)}
            else:
                prefixes.setdefault(r, {})[n] = (v.mean(), t.mean(), len(h["cols"]), order)
        for r, cand in prefixes.items():
            chosen = 1
            for n in range(2, int(p["max_blocks"]) + 1):
                # a longer prefix replaces the kept one only if it gains min_gain on val
                if cand[n][0] >= cand[chosen][0] + float(p["min_gain"]):
                    chosen = n
            blocks = np.zeros(len(KON_BLOCKS), np.int64)
            blocks[cand[chosen][3][:chosen]] = 1
            results[(r.method, r.setting, r.seed, task)] = {
                "val": cand[chosen][0], "test": cand[chosen][1], "dims": cand[chosen][2],
                "blocks": blocks}
    # ----- encoder diagnostics on the structure split (fit: train residues, score: test) ------
    diag = {}
    for s in seeds:
        g, i = gens[s], seed_index[s]
        tr = split_rows[(s, "structure", "train", "residue")]
        te = split_rows[(s, "structure", "test", "residue")]
        fold_share, factor_share = analysis.variance_shares(
            g["x"][pool], np.repeat(g["fold"][:n_pool], L), g["ss"][pool], g["cont"][pool])
        diag[(s, "premise")] = np.array([fold_share, factor_share])
        for kind in kinds:
            feat = bank[i][:, layout[kind]]
            blocks = MT_BLOCKS if kind == "mt" else KON_BLOCKS
            sc = analysis.probe_scores(feat[tr], feat[te], g["ss"][pool][tr], g["ss"][pool][te],
                                       g["cont"][pool][tr], g["cont"][pool][te], blocks,
                                       float(p["probe_alpha"]))
            owner = None if kind == "mt" else list(range(len(D.FACTORS)))
            diag[(s, kind)] = (sc, analysis.specificity(sc, owner),
                               analysis.independence(feat[te], blocks))
    # ----- state and curves --------------------------------------------------------------------
    curves = []
    for r in runs:
        key = r.key
        res = [results[(r.method, r.setting, r.seed, t)] for t in D.TASKS]
        state[f"{key}/val"] = np.array([x["val"] for x in res])
        state[f"{key}/test"] = np.array([x["test"] for x in res])
        state[f"{key}/dims"] = np.array([x["dims"] for x in res], dtype=np.int64)
        state[f"{key}/blocks"] = np.stack([x["blocks"] for x in res])
        state[f"{key}/premise"] = diag[(r.seed, "premise")]
        kind = ENCODER_OF.get(r.method)
        if kind is not None:
            sc, spec, ind = diag[(r.seed, kind)]
            state[f"{key}/probe"] = sc
            state[f"{key}/specificity"] = np.array(spec)
            state[f"{key}/independence"] = np.array(ind)
            for name, v in encoders[kind][r.seed].items():
                state[f"{key}/encoder/{name}"] = v[0].detach().cpu().numpy()
            for c in curves_by[kind]:
                if c["seed"] == r.seed:
                    curves.append({**r.as_dict(), "step": c["epoch"],
                                   "metric": f"pretrain_{c['metric']}", "value": c["value"]})
    return state, curves


# ------------------------------------------------------------------------------------------
# evaluate
# ------------------------------------------------------------------------------------------
def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    out = []
    for r in runs:
        key = r.key
        test, val = state[f"{key}/test"], state[f"{key}/val"]
        dims = state[f"{key}/dims"]
        row = {f"{D.TASK_METRIC[t]}:{t}": float(test[i]) for i, t in enumerate(D.TASKS)}
        row["mean_score"] = float(np.mean(test))
        row["val_mean_score"] = float(np.mean(val))
        row["dims_used"] = float(np.mean(dims))
        row["info_efficiency"] = float(np.mean(test) / np.mean(dims))
        fold_share, factor_share = state[f"{key}/premise"]
        row["premise_fold_var_share"] = float(fold_share)
        row["premise_factor_var_share"] = float(factor_share)
        if f"{key}/probe" in state:
            row["specificity"] = float(state[f"{key}/specificity"])
            row["independence"] = float(state[f"{key}/independence"])
            sc = state[f"{key}/probe"]
            names = MT_BLOCK_NAMES if r.method == "mt-ent" else KON_BLOCK_NAMES
            for b, bn in enumerate(names):
                for k, f in enumerate(D.FACTORS):
                    row[f"probe:{bn}:{f}"] = float(sc[b, k])
        if r.method in ("protdis-sel", "protdis-foldholdout"):
            blocks = state[f"{key}/blocks"]
            for b, bn in enumerate(KON_BLOCK_NAMES):
                row[f"selected:{bn}"] = float(blocks[:, b].mean())
        out.append(row)
    return out
