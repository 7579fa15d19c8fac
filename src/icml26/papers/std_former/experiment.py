"""Stages of std-former: textures (prepare), the six methods (train), accuracies and geometry.

prepare draws the class definitions once (a global stream) and, per seed, the train / val /
clean test images and the shifted test sets (numpy only). train (one torch process) computes
the frozen backbone's tokens once per image, then trains every run of the shard stacked over
runs: stage 1 (Texton Coverage Loss) once per seed, shared by STD-Former and STD-Former+;
stage 2 for the STD family (STD-Former, STD-Former+, STD-noStage1), Deep-TEN and GAP-MLP;
BoVW with scikit-learn. It stores the predicted labels on every test set, the clean-test
embeddings and the trained weights. evaluate (numpy) computes accuracies, the robustness drop
and the MST separation ratio.

Random streams: method-specific ones come from run.rng_seed; the streams a comparison pairs
(the TDE's initial weights, stage 1, the head's initial weights, the batch order and the
dropout masks) come from (paper, setting, seed, stream) only, so STD-Former, STD-Former+ and
STD-noStage1 of a seed differ only by what the spec says they differ by (common random
numbers). Neither depends on how the grid is sharded.
"""

from __future__ import annotations

import numpy as np

from icml26.seeding import derive_seed
from icml26.seeding import rng as named_rng

from . import data as texdata

METHODS = ("bovw", "deep-ten", "gap-mlp", "std-former", "std-former-plus", "std-nostage1")
STD_FAMILY = ("std-former", "std-former-plus", "std-nostage1")
WITH_STAGE1 = ("std-former", "std-former-plus")
TORCH_HEADS = STD_FAMILY + ("deep-ten", "gap-mlp")


def _p(cfg, setting) -> dict:
    p = dict(cfg["params"])
    p.update(cfg["settings"][setting] or {})
    return p


def test_splits(p) -> list[str]:
    return ["test"] + [f"test_{s}" for s in p["shifts"]]


def shared_seed(cfg, setting, seed, stream) -> int:
    """A stream shared by every method of (setting, seed): paired comparisons."""
    return derive_seed(cfg["paper"], setting, int(seed), stream)


def check_params(p) -> None:
    """What the schema cannot say."""
    from icml26.errors import ConfigError

    if int(p["image_size"]) % int(p["patch"]):
        raise ConfigError(f"std-former params.image_size={p['image_size']} is not a multiple "
                          f"of params.patch={p['patch']}")
    if len(set(p["shifts"])) != len(p["shifts"]):
        raise ConfigError("std-former params.shifts: a shift is listed twice")


# ------------------------------------------------------------------------------------------
# prepare
# ------------------------------------------------------------------------------------------
def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    p = cfg["params"]
    check_params(p)
    # class definitions from one global stream: the same classes for every seed
    classes = texdata.class_definitions(named_rng(cfg["paper"], "classes"), p)
    out = {"protos": classes["protos"], "density": classes["density"], "mix": classes["mix"]}
    for seed in cfg["seeds"]:
        r = named_rng(cfg["paper"], "data", int(seed))
        for key, val in texdata.make_seed_data(classes, r, p).items():
            out[f"s{seed}/{key}"] = val
    return out


# ------------------------------------------------------------------------------------------
# train
# ------------------------------------------------------------------------------------------
def _stage1(cfg, p, setting, seeds, tok, dev, curves_for):
    """Stage 1 for each seed in ``seeds`` (stacked): Adam on the Texton Coverage Loss over
    unlabelled training images. Returns per-seed pretrained TDE params (CPU tensors), their
    initial params and the coverage loss before / after on the validation images."""
    import torch

    from . import models as M

    K, D = int(p["K"]), int(p["token_dim"])
    inits = [M.tde_init(torch.Generator().manual_seed(
        shared_seed(cfg, setting, s, "tde-init") % 2**63), K, D) for s in seeds]
    params = M.leaves(M.stack_dicts(inits), dev)
    si = np.arange(len(seeds))
    Vtr = torch.stack([tok[s]["train"] for s in seeds])
    Vva = torch.stack([tok[s]["val"] for s in seeds])
    Str = torch.stack([tok[s]["train/S2"] for s in seeds])
    Sva = torch.stack([tok[s]["val/S2"] for s in seeds])
    tf, beta = float(p["tau_frac"]), float(p["beta"])

    def val_loss():
        with torch.no_grad():
            loss, mean_d = M.std_coverage(params, Vva, Sva, tf, beta)
        return loss.double().cpu().numpy(), (loss / mean_d.clamp_min(1e-30)).double().cpu().numpy()

    before, before_rel = val_loss()
    wv0 = params["Wv"].detach().norm(dim=(1, 2)).double().cpu().numpy()
    opt = torch.optim.Adam(list(params.values()), lr=float(p["stage1_lr"]))
    streams = [M.EpochBatches(shared_seed(cfg, setting, s, "stage1-batches"), Vtr.shape[1],
                              int(p["batch"])) for s in seeds]
    log_every = int(p["log_every"])
    for step in range(1, int(p["stage1_steps"]) + 1):
        idx = torch.as_tensor(M.batch_indices(streams), device=dev)
        sit = torch.as_tensor(si, device=dev)
        loss, _ = M.std_coverage(params, M.gather(Vtr, sit, idx), M.gather(Str, sit, idx), tf,
                                 beta)
        opt.zero_grad()
        loss.sum().backward()
        opt.step()
        if step % log_every == 0 or step == int(p["stage1_steps"]):
            vals = loss.detach().double().cpu().numpy()
            for k, s in enumerate(seeds):
                curves_for(s, step, "stage1_coverage", float(vals[k]))
    after, after_rel = val_loss()
    wv1 = params["Wv"].detach().norm(dim=(1, 2)).double().cpu().numpy()
    out = {}
    for k, s in enumerate(seeds):
        out[s] = {"tde": {n: v[k].detach().cpu() for n, v in params.items()},
                  "cov_before": before[k], "cov_after": after[k],
                  "cov_rel_before": before_rel[k], "cov_rel_after": after_rel[k],
                  "wv_norm_ratio": wv1[k] / wv0[k]}
    return out, {s: inits[k] for k, s in enumerate(seeds)}


def _train_heads(cfg, p, setting, runs, tok, dev, pretrained, inits, curves_add):
    """Stage 2 of a group of runs of one method family, stacked over runs. Returns per run
    the predictions (int) on the test sets, clean-test embeddings and weights."""
    import torch

    from icml26 import stacked

    from . import models as M

    family = runs[0].method if runs[0].method in ("deep-ten", "gap-mlp") else "std"
    K, D, C = int(p["K"]), int(p["token_dim"]), int(p["n_classes"])
    H = int(p["hidden"])
    seeds = sorted({r.seed for r in runs})
    si_np = np.array([seeds.index(r.seed) for r in runs])
    si = torch.as_tensor(si_np, device=dev)
    splits = ["train"] + test_splits(p)
    Tok = {sp: torch.stack([tok[s][sp] for s in seeds]) for sp in splits}
    S2 = ({sp: torch.stack([tok[s][f"{sp}/S2"] for s in seeds]) for sp in splits}
          if family == "std" else None)
    Y = {sp: torch.stack([tok[s][f"{sp}/y"] for s in seeds]) for sp in splits}

    enc_params, groups = {}, []
    if family == "std":
        tde0 = [pretrained[r.seed]["tde"] if r.method in WITH_STAGE1 else inits[r.seed]
                for r in runs]
        enc_params = M.leaves(M.stack_dicts(tde0), dev)
        groups.append({"params": list(enc_params.values()), "lr": float(p["tde_lr"])})
        in_dim = K * (1 + D)
    elif family == "deep-ten":
        # projection W (the TDE's value-projection init of the seed) and codewords c_k drawn
        # as K random projected training tokens, smoothing exp(log s_k) = 1 / mean squared
        # distance at init (INFERRED initialisation)
        W, cw, ls = [], [], []
        for r in runs:
            W0 = M.tde_init(torch.Generator().manual_seed(
                shared_seed(cfg, setting, r.seed, "tde-init") % 2**63), K, D)["Wv"]
            g = np.random.default_rng(r.rng_seed(cfg["paper"], "codewords"))
            V = tok[r.seed]["train"].cpu()
            n, N = V.shape[:2]
            pick = g.choice(n * N, size=K, replace=False)
            U = V.reshape(n * N, D) @ W0
            c = U[torch.as_tensor(pick)]
            d = ((U[:, None, :] - c[None]) ** 2).sum(-1).mean()
            W.append(W0)
            cw.append(c)
            ls.append(torch.full((K,), -float(torch.log(d))))
        enc_params = M.leaves({"Wv": torch.stack(W), "codewords": torch.stack(cw),
                               "log_smooth": torch.stack(ls)}, dev)
        groups.append({"params": list(enc_params.values()), "lr": float(p["lr"])})
        in_dim = K * (1 + D)
    else:
        in_dim = D
        G = {sp: Tok[sp].mean(dim=2) for sp in splits}          # GAP of the frozen tokens
    head = stacked.uniform_init([in_dim, H, C], [shared_seed(cfg, setting, r.seed, "head")
                                                 for r in runs], device=dev)
    groups.append({"params": stacked.parameters(head), "lr": float(p["lr"])})
    opt = torch.optim.Adam(groups)

    def features(split, idx):
        """idx: (R, B) image indices in each run's own seed data."""
        if family == "gap-mlp":
            return M.gather(G[split], si, idx)
        V = M.gather(Tok[split], si, idx)
        if family == "std":
            return M.std_encoding(enc_params, V, M.gather(S2[split], si, idx))
        U = M.project(V, enc_params["Wv"])
        return M.encode(U, enc_params["codewords"][:, None], enc_params["log_smooth"])

    gamma = torch.tensor([float(p["gamma"]) if r.method == "std-former-plus" else 0.0
                          for r in runs], device=dev)
    topo_runs = [k for k, r in enumerate(runs) if r.method == "std-former-plus"]
    streams = [M.EpochBatches(shared_seed(cfg, setting, r.seed, "batches"),
                              Tok["train"].shape[1], int(p["batch"])) for r in runs]
    drop_gens = [torch.Generator().manual_seed(shared_seed(cfg, setting, r.seed, "dropout")
                                               % 2**63) for r in runs]
    B = min(int(p["batch"]), Tok["train"].shape[1])
    steps, log_every = int(p["steps"]), int(p["log_every"])
    margin = float(p["margin"])
    ok = torch.ones(len(runs), dtype=torch.bool, device=dev)
    for step in range(1, steps + 1):
        idx = torch.as_tensor(M.batch_indices(streams), device=dev)
        y = M.gather(Y["train"], si, idx)
        mask = M.dropout_masks(drop_gens, (B, H), float(p["dropout"]), dev)
        logits, e = M.head(head, features("train", idx), mask)
        ce = torch.nn.functional.cross_entropy(logits.reshape(-1, C), y.reshape(-1),
                                               reduction="none").reshape(len(runs), -1).mean(1)
        parts = [torch.zeros((), device=dev)] * len(runs)
        for k in topo_runs:
            if bool(torch.isfinite(e[k]).all()):
                parts[k] = M.topological_loss(e[k], y[k], margin)
        topo = torch.stack(parts)
        loss = ce + gamma * topo
        ok &= torch.isfinite(loss.detach())
        opt.zero_grad()
        # a run that diverged stops contributing (its gradient would be NaN); it is failed
        torch.where(ok, loss, torch.zeros_like(loss)).sum().backward()
        opt.step()
        if step % log_every == 0 or step == steps:
            ce_np = ce.detach().double().cpu().numpy()
            tp_np = topo.detach().double().cpu().numpy()
            for k, r in enumerate(runs):
                curves_add(r, step, "train_ce", float(ce_np[k]))
                if r.method == "std-former-plus":
                    curves_add(r, step, "train_topo", float(tp_np[k]))

    out = {r.key: {} for r in runs}
    chunk = int(p["eval_chunk"])
    with torch.no_grad():
        for split in test_splits(p):
            n = Tok[split].shape[1]
            preds, embs = [], []
            for s in range(0, n, chunk):
                idx = torch.arange(s, min(s + chunk, n), device=dev).expand(len(runs), -1)
                logits, e = M.head(head, features(split, idx))
                ok &= M.all_finite(logits)
                preds.append(logits.argmax(-1))
                embs.append(e)
            pred = torch.cat(preds, dim=1).cpu().numpy().astype(np.int16)
            emb = torch.cat(embs, dim=1).cpu().numpy().astype(np.float32)
            for k, r in enumerate(runs):
                out[r.key][f"pred_{split}"] = pred[k]
                if split == "test":
                    out[r.key]["emb_test"] = emb[k]
    weights = {**{f"enc_{n}": v for n, v in enc_params.items()},
               **{f"head_{i}": t for i, t in enumerate(stacked.parameters(head))}}
    ok_np = ok.cpu().numpy()
    for k, r in enumerate(runs):
        for n, v in weights.items():
            out[r.key][f"w/{n}"] = v[k].detach().cpu().numpy().astype(np.float32)
        out[r.key]["failed"] = np.array(0 if ok_np[k] else 1)
    return out


def _embedding_rows(run, emb, labels, curves_add) -> None:
    """2-D PCA of the clean-test embeddings and their MST edges (Fig. 2), as curve rows."""
    from .topology import mst_edges

    X = emb.astype(float)
    if not np.isfinite(X).all():
        return
    Xc = X - X.mean(0)
    _, _, Vt = np.linalg.svd(Xc, full_matrices=False)
    P = Xc @ Vt[:2].T
    P *= np.sign(P[np.argmax(np.abs(P), axis=0), range(2)])     # a sign fixed by the data
    from scipy.spatial.distance import cdist
    i, j, _ = mst_edges(cdist(X, X))
    for n in range(len(X)):
        curves_add(run, n, "pca_x", float(P[n, 0]))
        curves_add(run, n, "pca_y", float(P[n, 1]))
        curves_add(run, n, "label", float(labels[n]))
    for n in range(len(i)):
        curves_add(run, n, "mst_i", float(i[n]))
        curves_add(run, n, "mst_j", float(j[n]))


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list[dict]]:
    import torch

    from icml26.seeding import torch_device

    from . import models as M
    from .bovw import BoVW

    torch.set_num_threads(1)
    dev = torch_device(cfg["device"])
    p0 = cfg["params"]
    net = M.backbone(derive_seed(cfg["paper"], "backbone"), int(p0["patch"]),
                     int(p0["token_hidden"]), int(p0["token_dim"]), dev)
    splits = ["train", "val"] + test_splits(p0)
    tok = {}
    for s in sorted({r.seed for r in runs}):
        tok[s] = {}
        for sp in splits:
            x = torch.as_tensor(data[f"s{s}/{sp}/x"], dtype=torch.float32, device=dev)
            tok[s][sp] = M.tokens(net, x, int(p0["patch"]))
            tok[s][f"{sp}/S2"] = M.second_moments(tok[s][sp])
            tok[s][f"{sp}/y"] = torch.as_tensor(data[f"s{s}/{sp}/y"], device=dev)

    state, curves = {}, []

    def curves_add(run, step, metric, value):
        curves.append({**run.as_dict(), "step": int(step), "metric": metric,
                       "value": float(value)})

    for setting in cfg["settings"]:
        p = _p(cfg, setting)
        mine = [r for r in runs if r.setting == setting]
        if not mine:
            continue
        stage1_seeds = sorted({r.seed for r in mine if r.method in WITH_STAGE1})
        std_seeds = sorted({r.seed for r in mine if r.method in STD_FAMILY})
        pretrained, inits = {}, {}
        if stage1_seeds:
            users = {s: [r for r in mine if r.method in WITH_STAGE1 and r.seed == s]
                     for s in stage1_seeds}

            def stage1_rows(seed, step, metric, value, users=users):
                for r in users[seed]:
                    curves_add(r, step, metric, value)

            pretrained, inits = _stage1(cfg, p, setting, stage1_seeds, tok, dev, stage1_rows)
        for s in std_seeds:
            if s not in inits:
                inits[s] = M.tde_init(torch.Generator().manual_seed(
                    shared_seed(cfg, setting, s, "tde-init") % 2**63), int(p["K"]),
                    int(p["token_dim"]))
        for family in (STD_FAMILY, ("deep-ten",), ("gap-mlp",)):
            group = [r for r in mine if r.method in family]
            if not group:
                continue
            res = _train_heads(cfg, p, setting, group, tok, dev, pretrained, inits, curves_add)
            for r in group:
                for k, v in res[r.key].items():
                    state[f"{r.key}/{k}"] = v
                if r.method in WITH_STAGE1:
                    for k in ("cov_before", "cov_after", "cov_rel_before", "cov_rel_after",
                              "wv_norm_ratio"):
                        state[f"{r.key}/{k}"] = np.array(pretrained[r.seed][k])
        for r in (r for r in mine if r.method == "bovw"):
            V = {sp: tok[r.seed][sp].double().cpu().numpy() for sp in ["train"] + test_splits(p)}
            y = data[f"s{r.seed}/train/y"]
            model = BoVW(int(p["bovw_words"]), float(p["bovw_C"]), int(p["bovw_max_iter"]),
                         int(p["kmeans_n_init"]), r.rng_seed(cfg["paper"], "kmeans")).fit(
                             V["train"], y)
            for sp in test_splits(p):
                state[f"{r.key}/pred_{sp}"] = model.predict(V[sp]).astype(np.int16)
            state[f"{r.key}/emb_test"] = model.features(V["test"]).astype(np.float32)
            state[f"{r.key}/w/centres"] = model.centres_.astype(np.float32)
            state[f"{r.key}/w/coef"] = model.clf_.coef_.astype(np.float32)
            state[f"{r.key}/failed"] = np.array(0)
        # Fig. 2: PCA + MST of the clean-test embeddings, first seed, STD-Former(+) only
        first = cfg["seeds"][0]
        for r in mine:
            if r.method in WITH_STAGE1 and r.seed == first:
                _embedding_rows(r, state[f"{r.key}/emb_test"], data[f"s{r.seed}/test/y"],
                                curves_add)
    return state, curves


# ------------------------------------------------------------------------------------------
# evaluate
# ------------------------------------------------------------------------------------------
def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    from .topology import separation_ratio

    rows = []
    for run in runs:
        p = _p(cfg, run.setting)
        failed = bool(state[f"{run.key}/failed"])
        row = {}
        accs = {}
        for sp in test_splits(p):
            y = data[f"s{run.seed}/{sp}/y"]
            acc = 100.0 * float(np.mean(state[f"{run.key}/pred_{sp}"] == y))
            accs[sp] = np.nan if failed else acc
        row["acc_clean"] = accs["test"]
        for name in texdata.SHIFTS:
            row[f"acc_{name}"] = accs.get(f"test_{name}", np.nan)
        shifted = [accs[f"test_{s}"] for s in p["shifts"]]
        row["acc_shift"] = float(np.mean(shifted)) if shifted else np.nan
        row["robust_drop"] = row["acc_clean"] - row["acc_shift"]
        row["mst_sep_ratio"] = (np.nan if failed else separation_ratio(
            state[f"{run.key}/emb_test"], data[f"s{run.seed}/test/y"]))
        for k in ("cov_before", "cov_after", "cov_rel_before", "cov_rel_after",
                  "wv_norm_ratio"):
            key = f"{run.key}/{k}"
            row[k] = float(state[key]) if key in state else np.nan
        row["cov_drop_frac"] = ((row["cov_before"] - row["cov_after"]) / row["cov_before"]
                                if np.isfinite(row["cov_before"]) else np.nan)
        row["cov_rel_drop_frac"] = ((row["cov_rel_before"] - row["cov_rel_after"])
                                    / row["cov_rel_before"]
                                    if np.isfinite(row["cov_rel_before"]) else np.nan)
        row["failed"] = float(failed)
        rows.append(row)
    return rows
