"""Stages of outformer: the fixed evaluation suites (prepare), PFN pretraining (train),
AUROC and inference time of every method on every task (evaluate).

The suites are built once from streams of the paper only (never of a run's seed), so every
method and seed is scored on the same tasks:
- held-out synthetic tasks per prior type (context 128 inliers; test 96 inliers + 24
  outliers; d ~ U{2..D_max});
- real tasks from scikit-learn's shipped datasets (inliers split 50/50 into context and test,
  context capped; outliers subsampled to 10% of the test inliers, at least 10).
A run is (method, setting ``bench``, seed). The PFN methods pretrain per seed; the classical
detectors do not depend on the seed (the suites are fixed and IsolationForest's random_state
is fixed per task, as the spec says), so evaluate fits each of them once per task and repeats
the row for every seed.
"""

from __future__ import annotations

import time

import numpy as np

from icml26.errors import ConfigError
from icml26.seeding import derive_seed

from . import priors

PFN_METHODS = ("outformer", "fomo", "mix")
CLASSICAL = ("iforest", "lof", "knn")
SUITE_KEYS = {"gmm": "eval_gmm", "dependence_copula": "eval_dependence_copula",
              "probabilistic_copula": "eval_probabilistic_copula",
              "measure_scm": "eval_measure_scm", "structure_scm": "eval_structure_scm"}
REAL_TASKS = ("breast_cancer-0", "breast_cancer-1", "breast_cancer-2", "wine-0", "wine-1",
              "iris", "digits-0", "digits-1", "digits-3")
SUITES = ("gmm", "copula", "scm", "real")


def check_params(cfg) -> None:
    p = cfg["params"]
    if int(p["heads"]) < 1 or int(p["width"]) % int(p["heads"]):
        raise ConfigError(f"{cfg['paper']}: params.width ({p['width']}) must be a multiple of "
                          f"params.heads ({p['heads']})")
    if int(p["ctx_min"]) > int(p["ctx_max"]):
        raise ConfigError(f"{cfg['paper']}: params.ctx_min ({p['ctx_min']}) exceeds "
                          f"params.ctx_max ({p['ctx_max']})")
    unknown = [t for t in p["real_tasks"] if t not in REAL_TASKS]
    if unknown:
        raise ConfigError(f"{cfg['paper']}: params.real_tasks has {unknown}; allowed: "
                          f"{', '.join(REAL_TASKS)}")
    if int(p["d_max"]) < 8 and any(not t.startswith("iris") for t in p["real_tasks"]):
        raise ConfigError(f"{cfg['paper']}: the real tasks have 8 features (iris 4); "
                          f"params.d_max must be >= 8, got {p['d_max']}")


# ------------------------------------------------------------------------------------------
# prepare
# ------------------------------------------------------------------------------------------
def _split_real(X_in, X_out, rng, cap):
    """Inliers shuffled and split 50/50 into context (capped at ``cap``) and test; outliers
    subsampled to 10% of the test inliers, at least 10."""
    idx = rng.permutation(len(X_in))
    half = len(idx) // 2
    ctx, test_in = X_in[idx[:half][:cap]], X_in[idx[half:]]
    n_out = max(10, int(round(0.1 * len(test_in))))
    out = X_out[rng.choice(len(X_out), size=min(n_out, len(X_out)), replace=False)]
    return ctx, np.concatenate([test_in, out]), np.r_[np.zeros(len(test_in)), np.ones(len(out))]


def real_task(name: str, paper: str, cap: int):
    """(context, test, labels) of one scikit-learn task (see the module docstring)."""
    from sklearn import datasets

    rng = np.random.default_rng(derive_seed(paper, "real", name))
    base = name.split("-")[0]
    if base == "breast_cancer":
        ds = datasets.load_breast_cancer()
        inl, out = ds.data[ds.target == 1], ds.data[ds.target == 0]   # benign vs malignant
        cols = np.sort(rng.choice(ds.data.shape[1], size=8, replace=False))
        return _split_real(inl[:, cols], out[:, cols], rng, cap)
    if base == "wine":
        ds = datasets.load_wine()
        inl, out = ds.data[ds.target <= 1], ds.data[ds.target == 2]
        cols = np.sort(rng.choice(ds.data.shape[1], size=8, replace=False))
        return _split_real(inl[:, cols], out[:, cols], rng, cap)
    if base == "iris":
        ds = datasets.load_iris()
        return _split_real(ds.data[ds.target <= 1], ds.data[ds.target == 2], rng, cap)
    if base == "digits":
        from sklearn.decomposition import PCA

        digit = int(name.split("-")[1])
        ds = datasets.load_digits()
        ctx, test, y = _split_real(ds.data[ds.target == digit], ds.data[ds.target != digit],
                                   rng, cap)
        pca = PCA(n_components=8, svd_solver="full").fit(ctx)          # fitted on the context
        return pca.transform(ctx), pca.transform(test), y
    raise ConfigError(f"unknown real task {name!r}; allowed: {', '.join(REAL_TASKS)}")


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    check_params(cfg)
    paper, p = cfg["paper"], cfg["params"]
    n_ctx, n_in, n_out = int(p["eval_ctx"]), int(p["eval_test_inliers"]), int(
        p["eval_test_outliers"])
    names, kinds, data = [], [], {}
    for prior, key in SUITE_KEYS.items():
        for i in range(int(p[key])):
            g = np.random.default_rng(derive_seed(paper, "suite", prior, i))
            d = int(g.integers(2, int(p["d_max"]) + 1))
            inl, out = priors.draw(prior, d, n_ctx + n_in, n_out, g)
            name = f"{prior}-{i:02d}"
            data[f"task/{name}/ctx"] = inl[:n_ctx]
            data[f"task/{name}/test"] = np.concatenate([inl[n_ctx:], out])
            data[f"task/{name}/y"] = np.r_[np.zeros(n_in), np.ones(n_out)]
            names.append(name)
            kinds.append(priors.FAMILY[prior])
    for name in p["real_tasks"]:
        ctx, test, y = real_task(name, paper, int(p["real_ctx_cap"]))
        data[f"task/{name}/ctx"], data[f"task/{name}/test"], data[f"task/{name}/y"] = ctx, test, y
        names.append(name)
        kinds.append("real")
    data["task_names"] = np.array(names)
    data["task_suite"] = np.array(kinds)
    return data


def tasks(data) -> list[tuple[str, str]]:
    return list(zip([str(n) for n in data["task_names"]], [str(s) for s in data["task_suite"]],
                    strict=True))


# ------------------------------------------------------------------------------------------
# train
# ------------------------------------------------------------------------------------------
def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list[dict]]:
    check_params(cfg)
    pfn_runs = [r for r in runs if r.method in PFN_METHODS]
    if not pfn_runs:
        return {}, []
    import torch

    from icml26.seeding import torch_device

    from . import pretrain

    torch.set_num_threads(1)
    dev = torch_device(cfg["device"])
    params, curves = pretrain.pretrain(cfg, pfn_runs, dev)
    state = {}
    for i, r in enumerate(pfn_runs):
        for name, t in params.items():
            state[f"{r.key}/{name}"] = t[i].cpu().numpy()
    return state, curves


# ------------------------------------------------------------------------------------------
# evaluate
# ------------------------------------------------------------------------------------------
def zscore(ctx, test):
    """Both sets standardised with the context's mean and s.d. (the classical detectors get
    the same per-feature scaling as the PFN; INFERRED)."""
    mu, sd = ctx.mean(0), ctx.std(0)
    sd = np.where(sd > 1e-8, sd, 1.0)
    return (ctx - mu) / sd, (test - mu) / sd


def classical_scores(method: str, ctx, test, p, seed: int) -> np.ndarray:
    """Outlier scores (higher = more outlying) of a detector fitted on the context."""
    from sklearn.ensemble import IsolationForest
    from sklearn.neighbors import LocalOutlierFactor, NearestNeighbors

    c, t = zscore(ctx, test)
    if method == "iforest":
        model = IsolationForest(n_estimators=int(p["iforest_trees"]), random_state=seed).fit(c)
        return -model.score_samples(t)
    if method == "lof":
        k = min(int(p["lof_neighbors"]), len(c) - 1)
        model = LocalOutlierFactor(n_neighbors=k, novelty=True).fit(c)
        return -model.score_samples(t)
    if method == "knn":
        dist, _ = NearestNeighbors(n_neighbors=int(p["knn_k"])).fit(c).kneighbors(t)
        return dist.mean(1)
    raise ConfigError(f"unknown classical method {method!r}; allowed: {', '.join(CLASSICAL)}")


def ensemble_perms(paper: str, name: str, d: int, members: int) -> list[np.ndarray]:
    """Column orders of the context ensemble: the identity, then random permutations of the
    d real columns (padding stays last, as in pretraining; INFERRED)."""
    g = np.random.default_rng(derive_seed(paper, "ensemble", name))
    return [np.arange(d)] + [g.permutation(d) for _ in range(members - 1)]


def _row(aucs: dict, suite_of: dict, cpu: list) -> dict:
    row = {f"auroc:{n}": a for n, a in aucs.items()}
    for s in SUITES:
        vals = [a for n, a in aucs.items() if suite_of[n] == s]
        if vals:
            row[f"auroc_{s}"] = float(np.mean(vals))
    row["auroc_all"] = float(np.mean(list(aucs.values())))
    row["cpu_s_per_task"] = float(np.mean(cpu))
    return row


def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    from sklearn.metrics import roc_auc_score

    paper, p = cfg["paper"], cfg["params"]
    task_list = tasks(data)
    suite_of = dict(task_list)
    out: dict = {}
    for method in sorted({r.method for r in runs if r.method in CLASSICAL}):
        aucs, cpu = {}, []
        for name, _ in task_list:
            ctx, test, y = (data[f"task/{name}/{k}"] for k in ("ctx", "test", "y"))
            t0 = time.process_time()
            s = classical_scores(method, ctx, test, p, derive_seed(paper, method, name) % 2**32)
            cpu.append(time.process_time() - t0)
            aucs[name] = float(roc_auc_score(y, s))
        out[method] = _row(aucs, suite_of, cpu)
    pfn_runs = [r for r in runs if r.method in PFN_METHODS]
    if pfn_runs:
        import torch

        from icml26.seeding import torch_device

        from . import pfn

        torch.set_num_threads(1)
        dev = torch_device(cfg["device"])
        names = list(pfn.param_shapes(int(p["width"]), int(p["layers"]), int(p["ffn"]),
                                      int(p["d_max"])))
        for r in pfn_runs:
            params = {n: torch.as_tensor(state[f"{r.key}/{n}"][None], device=dev) for n in names}
            aucs, cpu = {}, []
            for name, _ in task_list:
                ctx, test, y = (data[f"task/{name}/{k}"] for k in ("ctx", "test", "y"))
                perms = ensemble_perms(paper, name, ctx.shape[1], int(p["ensemble"]))
                t0 = time.process_time()
                s = pfn.scores(params, ctx, test, int(p["d_max"]), int(p["heads"]), perms, dev)[0]
                cpu.append(time.process_time() - t0)
                aucs[name] = float(roc_auc_score(y, s)) if np.isfinite(s).all() else float("nan")
            row = _row(aucs, suite_of, cpu)
            if curves is not None and len(curves):
                c = curves[(curves["method"] == r.method) & (curves["seed"] == r.seed)
                           & (curves["metric"] == "train_loss")]
                if len(c):
                    row["final_train_loss"] = float(c.sort_values("step")["value"].iloc[-1])
            out[r.key] = row
    return [dict(out[r.method] if r.method in CLASSICAL else out[r.key]) for r in runs]
