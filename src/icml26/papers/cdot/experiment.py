"""Stages of the CDOT reproduction.

Settings have a ``kind``:
- ``matching`` (G1, G2, L1, L2, L3): recover the correspondence between a 2-D spiral and its
  rotated, perturbed, shuffled copy; every method runs from the product coupling and from
  random permutation couplings (the same starts for every method).
- ``graphs``: 3-NN leave-one-out classification of networkx graph classes with each
  method's pairwise discrepancy; alpha picked per held-out graph by LOO on the others.
- ``pseudometric``: all ordered pairs of random attributed clouds, to test symmetry, the
  triangle inequality and d(X, X) = 0 numerically.

Instances are drawn from (paper, setting, seed) only, never from the method, so that every
method sees the same instances and starts and comparisons are paired per seed.
"""

from __future__ import annotations

import numpy as np

from icml26.seeding import derive_seed

from . import data as D
from . import transport as T

# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def kind(cfg: dict, setting: str) -> str:
    return cfg["settings"][setting].get("kind", "matching")


def perturbation(cfg: dict, setting: str) -> str:
    """The perturbation family of a matching setting (its name unless given, e.g. at full)."""
    return cfg["settings"][setting].get("perturbation", setting)


def _rng(cfg: dict, *parts) -> np.random.Generator:
    return np.random.default_rng(derive_seed(cfg["paper"], *parts))


def _uniform(n: int) -> np.ndarray:
    return np.full(n, 1.0 / n)


def _matching_n(cfg: dict, setting: str) -> int:
    return int(cfg["settings"][setting].get("n", cfg["params"]["n_points"]))


def _matching_problem(inst: dict, k: int) -> T.Problem:
    """Per-pair max normalisation of C_X, C_Y and M, as in the method description."""
    x, y, f, g = inst["x"][k], inst["y"][k], inst["f"][k], inst["g"][k]
    n = x.shape[0]
    return T.Problem(
        D.scaled(D.euclidean(x)), D.scaled(D.euclidean(y)), D.scaled(D.feature_cost(f, g)),
        _uniform(n), _uniform(n),
    )


def _starts(cfg: dict, setting: str, seed: int, k: int, n: int) -> list:
    """Product coupling (None) + random permutation couplings, shared by all methods."""
    rng = _rng(cfg, setting, seed, "starts", k)
    return [None] + [T.random_permutation_coupling(n, rng)
                     for _ in range(int(cfg["params"]["starts"]) - 1)]


def _solver_kw(cfg: dict, setting: str | None = None) -> dict:
    p = cfg["params"]
    max_iter = p["max_iter"]
    if setting is not None and kind(cfg, setting) == "graphs":
        max_iter = p.get("graph_max_iter", max_iter)
    return {"max_iter": int(max_iter), "tol": float(p["gap_tol"])}


# ---------------------------------------------------------------------------------------------
# prepare: every instance of every (setting, seed), and alpha for matching
# ---------------------------------------------------------------------------------------------


ALPHA_METHODS = ("FGW", "CDOT")  # the methods with a trade-off alpha
MAX_EXTENSIONS = 2  # a choice on the grid's edge extends it at most twice (same ratio in 1-alpha)


def _edge_extension(grid: list[float], best: int) -> float | None:
    """The next alpha beyond the edge the choice landed on: one more step of the same ratio
    in 1 - alpha as the two grid values at that edge (None if it leaves (0, 1))."""
    if len(grid) < 2 or 0 < best < len(grid) - 1:
        return None
    a, b = (grid[-2], grid[-1]) if best == len(grid) - 1 else (grid[1], grid[0])
    if a >= 1 or b >= 1:
        return None
    nxt = 1 - (1 - b) * (1 - b) / (1 - a)
    return nxt if 0 < nxt < 1 else None


def _select_matching_alpha(cfg: dict, method: str) -> tuple[float, list, np.ndarray]:
    """alpha of one method by ITS OWN accuracy (product start) on a separate validation
    instance (ties: lower barycentric MSE): the same rule for FGW and CDOT, fixed before the
    run, on data no claim reads. A choice on the grid's edge extends the grid beyond that edge
    (same ratio in 1 - alpha, at most twice). Returns (alpha, final grid, accuracies)."""
    p = cfg["params"]
    val = dict(p["validation"])
    n = int(val.get("n", p["n_points"]))
    inst = D.matching_instance(n, val, _rng(cfg, "validation-instance"))
    inst = {k: v[None] for k, v in inst.items()}
    pb = _matching_problem(inst, 0)
    y, truth = inst["y"][0], inst["truth"][0]
    grid = sorted(float(a) for a in p["alpha_grid"])
    scores: dict[float, tuple] = {}
    for extended in range(MAX_EXTENSIONS + 1):
        for alpha in grid:
            if alpha not in scores:
                sol = T.solve(method, alpha, pb, **_solver_kw(cfg))
                acc = float(np.mean(sol.pi.argmax(1) == truth))
                mse = float(np.mean(np.sum((sol.pi @ y * n - y[truth]) ** 2, axis=1)))
                scores[alpha] = (acc, -mse)
        best = max(range(len(grid)), key=lambda i: scores[grid[i]])
        nxt = _edge_extension(grid, best)
        if nxt is None or extended == MAX_EXTENSIONS:
            break
        grid = sorted(grid + [nxt])
    best = max(range(len(grid)), key=lambda i: scores[grid[i]])
    return grid[best], grid, np.array([scores[a][0] for a in grid])


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Instances per (setting, seed), seeded by name so that they do not depend on the grid."""
    del rng  # every stream is derived from (paper, setting, seed) instead
    p = cfg["params"]
    out: dict[str, np.ndarray] = {}
    for setting, sp in cfg["settings"].items():
        for seed in cfg["seeds"]:
            pre = f"{setting}/{seed}"
            srng = _rng(cfg, setting, seed, "instance")
            if kind(cfg, setting) == "matching":
                n = _matching_n(cfg, setting)
                insts = [D.matching_instance(n, sp, srng)
                         for _ in range(int(sp.get("instances", p["instances"])))]
                for key in ("x", "y", "f", "g", "truth"):
                    out[f"{pre}/{key}"] = np.stack([i[key] for i in insts])
            elif kind(cfg, setting) == "graphs":
                graphs, labels = D.graph_classes(
                    int(sp["per_class"]), int(sp.get("classes", 3)), int(sp["n_min"]),
                    int(sp["n_max"]), srng)
                spaces = [D.graph_space(g, srng) for g in graphs]
                out[f"{pre}/sizes"] = np.array([c.shape[0] for c, _ in spaces])
                out[f"{pre}/dist"] = np.concatenate([c.ravel() for c, _ in spaces])
                out[f"{pre}/feat"] = np.concatenate([f for _, f in spaces])
                out[f"{pre}/labels"] = labels
            elif kind(cfg, setting) == "pseudometric":
                clouds = [D.mixture_cloud(int(sp["n"]), srng) for _ in range(int(sp["clouds"]))]
                out[f"{pre}/pos"] = np.stack([c[0] for c in clouds])
                out[f"{pre}/feat"] = np.stack([c[1] for c in clouds])
            else:
                raise ValueError(f"setting {setting!r}: unknown kind {kind(cfg, setting)!r}; "
                                 "allowed: matching, graphs, pseudometric")
    if any(kind(cfg, s) == "matching" for s in cfg["settings"]):
        for method in ALPHA_METHODS:
            if method in cfg["methods"]:
                alpha, grid, val_acc = _select_matching_alpha(cfg, method)
                out[f"alpha_matching/{method}"] = np.array(alpha)
                out[f"alpha_grid/{method}"] = np.array(grid)
                out[f"alpha_validation_acc/{method}"] = val_acc
    return out


# ---------------------------------------------------------------------------------------------
# train
# ---------------------------------------------------------------------------------------------


def matching_alpha(data, method: str) -> float:
    """The matching alpha of a method, chosen on the validation instance (NaN: no alpha)."""
    key = f"alpha_matching/{method}"
    return float(data[key]) if method in ALPHA_METHODS and key in data else np.nan


def _load_matching(data, setting, seed) -> dict:
    return {k: data[f"{setting}/{seed}/{k}"] for k in ("x", "y", "f", "g", "truth")}


def _train_matching(cfg, data, run, cache) -> tuple[dict, list]:
    inst = _load_matching(data, run.setting, run.seed)
    n_inst, n = inst["truth"].shape
    n_starts = int(cfg["params"]["starts"])
    alpha = matching_alpha(data, run.method)
    shape = (n_inst, n_starts)
    res = {"match": np.zeros(shape + (n,), dtype=np.int64), "bary": np.zeros(shape + (n, 2)),
           "obj": np.zeros(shape), "gw": np.zeros(shape), "delta": np.zeros(shape),
           "gap": np.zeros(shape), "iters": np.zeros(shape, dtype=np.int64)}
    rows = []
    base = {"method": run.method, "setting": run.setting, "seed": run.seed}
    for k in range(n_inst):
        ck = (run.setting, run.seed, k)
        if ck not in cache:  # distances and starts are shared by every method of the shard
            cache[ck] = (_matching_problem(inst, k), _starts(cfg, run.setting, run.seed, k, n))
        pb, starts = cache[ck]
        for s, start in enumerate(starts):
            if run.method == "W" and s > 0:  # no start: the LP solution is copied
                for key in res:
                    res[key][k, s] = res[key][k, 0]
                continue
            sol = T.solve(run.method, alpha, pb, start=start, keep_trace=(k == 0 and s == 0),
                          **_solver_kw(cfg))
            res["match"][k, s] = sol.pi.argmax(1)
            res["bary"][k, s] = (sol.pi @ inst["y"][k]) / pb.mu[:, None]
            res["obj"][k, s] = sol.value
            res["gw"][k, s] = T.gw_objective(sol.pi, pb.cx, pb.cy, pb.mu, pb.nu)
            res["delta"][k, s] = T.delta(sol.pi, pb.cx, pb.cy, pb.mu, pb.nu)
            res["gap"][k, s] = sol.gap
            res["iters"][k, s] = sol.iters
            for i, v in enumerate(sol.trace):
                rows.append({**base, "step": i, "metric": "fw_objective", "value": float(v)})
        acc = np.mean(res["match"][k] == inst["truth"][k][None, :], axis=1)
        for s in range(n_starts):
            step = k * n_starts + s
            rows.append({**base, "step": step, "metric": "acc_start", "value": float(acc[s])})
            rows.append({**base, "step": step, "metric": "obj_start",
                         "value": float(res["obj"][k, s])})
    return {f"{run.key}/{k}": v for k, v in res.items()}, rows


def _graph_spaces(data, setting, seed) -> list:
    sizes = data[f"{setting}/{seed}/sizes"]
    dist, feat = data[f"{setting}/{seed}/dist"], data[f"{setting}/{seed}/feat"]
    spaces, d0, f0 = [], 0, 0
    for n in sizes:
        spaces.append((D.scaled(dist[d0:d0 + n * n].reshape(n, n)), feat[f0:f0 + n]))
        d0, f0 = d0 + n * n, f0 + n
    return spaces


def _pair_problems(spaces, c_scale=None, m_scale=None, ordered=False) -> dict:
    """Problems of all pairs (i < j, or all ordered i != j and i == j when ``ordered``).

    C is normalised per space (already done for graphs) or by one global constant
    (``c_scale``, pseudometric); M per pair by its maximum or by ``m_scale``.
    """
    out = {}
    for i, (cx, fx) in enumerate(spaces):
        for j, (cy, fy) in enumerate(spaces):
            if ordered or i < j:
                m = D.scaled(D.feature_cost(fx, fy), m_scale)
                out[i, j] = T.Problem(D.scaled(cx, c_scale), D.scaled(cy, c_scale), m,
                                      _uniform(cx.shape[0]), _uniform(cy.shape[0]))
    return out


def _train_graphs(cfg, data, run, cache) -> tuple[dict, list]:
    ck = (run.setting, run.seed, "pairs")
    if ck not in cache:
        cache[ck] = _pair_problems(_graph_spaces(data, run.setting, run.seed))
    pairs = cache[ck]
    n_graphs = len(data[f"{run.setting}/{run.seed}/labels"])
    alphas = [np.nan] if run.method == "W" else [float(a) for a in cfg["params"]["alpha_grid"]]
    dist = np.zeros((len(alphas), n_graphs, n_graphs))
    gaps = np.zeros_like(dist)
    for a, alpha in enumerate(alphas):
        for (i, j), pb in pairs.items():
            sol = T.solve(run.method, alpha, pb, **_solver_kw(cfg, run.setting))
            dist[a, i, j] = dist[a, j, i] = np.sqrt(max(sol.value, 0.0))
            gaps[a, i, j] = gaps[a, j, i] = sol.gap
    return {f"{run.key}/dist": dist, f"{run.key}/gap": gaps,
            f"{run.key}/alphas": np.array(alphas)}, []


def _train_pseudometric(cfg, data, run, cache) -> tuple[dict, list]:
    ck = (run.setting, run.seed, "pairs")
    if ck not in cache:
        pos, feat = data[f"{run.setting}/{run.seed}/pos"], data[f"{run.setting}/{run.seed}/feat"]
        spaces = [(D.euclidean(p), f) for p, f in zip(pos, feat, strict=True)]
        # one global constant for all C and one for all M: per-pair rescaling would break the
        # triangle inequality
        c_scale = max(float(c.max()) for c, _ in spaces)
        allf = feat.reshape(-1, feat.shape[-1])
        m_scale = float(D.feature_cost(allf, allf).max())
        cache[ck] = _pair_problems(spaces, c_scale, m_scale, ordered=True)
    pairs = cache[ck]
    n_clouds = data[f"{run.setting}/{run.seed}/pos"].shape[0]
    alpha = float(cfg["params"]["pseudometric_alpha"])
    dist = np.zeros((n_clouds, n_clouds))
    gaps = np.zeros_like(dist)
    for (i, j), pb in pairs.items():
        sol = T.solve(run.method, alpha, pb, **_solver_kw(cfg, run.setting))
        dist[i, j] = np.sqrt(max(sol.value, 0.0))
        gaps[i, j] = sol.gap
    return {f"{run.key}/dist": dist, f"{run.key}/gap": gaps}, []


_TRAIN = {"matching": _train_matching, "graphs": _train_graphs,
          "pseudometric": _train_pseudometric}


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list]:
    state, curves, cache = {}, [], {}
    for run in runs:
        s, rows = _TRAIN[kind(cfg, run.setting)](cfg, data, run, cache)
        state.update(s)
        curves.extend(rows)
    return state, curves


# ---------------------------------------------------------------------------------------------
# evaluate
# ---------------------------------------------------------------------------------------------


def _eval_matching(cfg, data, run, state) -> dict:
    st = {k: state[f"{run.key}/{k}"] for k in ("match", "bary", "obj", "gw", "delta", "gap",
                                                 "iters")}
    inst = _load_matching(data, run.setting, run.seed)
    truth, y = inst["truth"], inst["y"]
    acc = np.mean(st["match"] == truth[:, None, :], axis=2)  # (instances, starts)
    partner = np.take_along_axis(y, truth[:, :, None], axis=1)  # y_{true(i)}, (instances, n, 2)
    mse = np.mean(np.sum((st["bary"][:, 0] - partner) ** 2, axis=2), axis=1)
    return {
        "acc": float(acc[:, 0].mean()),  # product (POT default) start
        "acc_avg": float(acc.mean()),  # averaged over the starts
        # sample s.d. over the starts per instance, then averaged over instances
        "acc_sd": float(np.std(acc, axis=1, ddof=1).mean()) if acc.shape[1] > 1 else np.nan,
        "mse": float(mse.mean()),
        "obj_spread": float(np.mean(st["obj"].max(1) - st["obj"].min(1))),
        "objective": float(st["obj"][:, 0].mean()),
        "disp_gap": float(np.mean(st["gw"][:, 0] - st["delta"][:, 0])),
        "fw_iters": float(st["iters"].mean()),
        "fw_gap": float(st["gap"].mean()),
        "alpha": matching_alpha(data, run.method),
    }


def knn_predict(dist_row, labels, k: int) -> int:
    """Majority vote of the k nearest; a tie goes to the tied class met first (nearest)."""
    order = np.argsort(dist_row, kind="stable")[:k]
    votes = np.bincount(labels[order], minlength=int(labels.max()) + 1)
    winners = set(np.flatnonzero(votes == votes.max()).tolist())
    return int(next(c for c in labels[order] if c in winners))


def loo_accuracy(dist, labels, idx, k: int) -> float:
    """Leave-one-out k-NN accuracy within the graphs ``idx``."""
    idx = np.asarray(idx)
    hits = [knn_predict(dist[i, np.delete(idx, t)], labels[np.delete(idx, t)], k) == labels[i]
            for t, i in enumerate(idx)]
    return float(np.mean(hits))


def nested_loo_knn(dists, labels, k: int) -> tuple[float, np.ndarray]:
    """3-NN LOO accuracy; for each held-out graph alpha maximises LOO accuracy on the others.

    ``dists``: (alphas, graphs, graphs). Returns (accuracy, index of the alpha chosen per graph).
    """
    n = len(labels)
    hits, chosen = [], []
    for i in range(n):
        train = np.delete(np.arange(n), i)
        if dists.shape[0] > 1:
            scores = [loo_accuracy(d, labels, train, k) for d in dists]
            a = int(np.argmax(scores))  # first best in grid order
        else:
            a = 0
        chosen.append(a)
        hits.append(knn_predict(dists[a, i, train], labels[train], k) == labels[i])
    return float(np.mean(hits)), np.array(chosen)


def svm_cv_accuracy(dists, labels, folds: int, seed: int, k: int) -> float:
    """Full scale: stratified k-fold SVM on the kernel exp(-d / gamma) (gamma: median train d);
    alpha per fold by LOO 3-NN on the training fold."""
    from sklearn.model_selection import StratifiedKFold
    from sklearn.svm import SVC

    hits = np.zeros(len(labels), dtype=bool)
    for tr, te in StratifiedKFold(folds, shuffle=True, random_state=seed % 2**32).split(
            np.zeros(len(labels)), labels):
        a = int(np.argmax([loo_accuracy(d, labels, tr, k) for d in dists]))
        d = dists[a]
        gamma = float(np.median(d[np.ix_(tr, tr)][np.triu_indices(len(tr), 1)])) or 1.0
        clf = SVC(kernel="precomputed").fit(np.exp(-d[np.ix_(tr, tr)] / gamma), labels[tr])
        hits[te] = clf.predict(np.exp(-d[np.ix_(te, tr)] / gamma)) == labels[te]
    return float(hits.mean())


def _eval_graphs(cfg, data, run, state) -> dict:
    dists = state[f"{run.key}/dist"]
    alphas = state[f"{run.key}/alphas"]
    labels = data[f"{run.setting}/{run.seed}/labels"]
    k = int(cfg["params"].get("knn", 3))
    acc, chosen = nested_loo_knn(dists, labels, k)
    out = {"knn_acc": acc, "alpha": float(np.mean(alphas[chosen])),
           "fw_gap": float(state[f"{run.key}/gap"].max())}
    if cfg["params"].get("graph_svm_folds"):
        out["svm_acc"] = svm_cv_accuracy(
            dists, labels, int(cfg["params"]["graph_svm_folds"]),
            derive_seed(cfg["paper"], run.setting, run.seed, "folds"), k)
    return out


def pseudometric_errors(dist, rel_tol: float = 1e-3) -> dict:
    """Symmetry error, self-distance and triangle-violation rate of an ordered distance table."""
    n = dist.shape[0]
    iu = np.triu_indices(n, 1)
    pair_mean = 0.5 * (dist[iu] + dist.T[iu])
    sym = np.abs(dist[iu] - dist.T[iu]) / np.maximum(pair_mean, 1e-300)
    # triple (x, y, z): d(x, z) > (d(x, y) + d(y, z)) (1 + tol) is a violation
    lhs = dist[:, None, :]
    rhs = dist[:, :, None] + dist[None, :, :]
    distinct = ((np.arange(n)[:, None, None] != np.arange(n)[None, :, None])
                & (np.arange(n)[None, :, None] != np.arange(n)[None, None, :])
                & (np.arange(n)[:, None, None] != np.arange(n)[None, None, :]))
    viol = (lhs > rhs * (1 + rel_tol)) & distinct
    ratio = np.where(distinct, lhs / np.maximum(rhs, 1e-300), 0.0)
    return {"tri_viol": float(viol.sum() / distinct.sum()), "sym_err": float(sym.max()),
            "self_dist": float(np.max(np.abs(np.diag(dist)))),
            "tri_ratio_max": float(ratio.max())}  # < 1: every triangle holds with slack


def _eval_pseudometric(cfg, data, run, state) -> dict:
    dist = state[f"{run.key}/dist"]
    out = pseudometric_errors(dist)
    out["fw_gap"] = float(state[f"{run.key}/gap"].max())
    out["alpha"] = float(cfg["params"]["pseudometric_alpha"])
    return out


_EVAL = {"matching": _eval_matching, "graphs": _eval_graphs, "pseudometric": _eval_pseudometric}


def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    return [_EVAL[kind(cfg, run.setting)](cfg, data, run, state) for run in runs]
