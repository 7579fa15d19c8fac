"""Stages of kmm-dataset-valuation: prepare (the synthetic task per seed), train (checkpoint
w_0, gradient features, every valuation method, selection under budget k, post-training of
the selected mixture, all batched), evaluate (accuracy, coverage, duplicates, overhead).

Runs are (method, setting, seed); a setting is a budget k. Per seed, everything the methods
share is computed once in the job from seed-named streams (the checkpoint w_0, the gradient
features, leave-one-in utilities, the task vectors, the datamodel's training rows), so a
run's result does not depend on how runs are sharded. Post-training streams are named by
(seed, subset index) only: two methods that select the same mixture get the same model
(common random numbers), so paired differences between methods measure the selection.
"""

from __future__ import annotations

import time

import numpy as np

from icml26 import seeding
from icml26.errors import ConfigError
from icml26.npoptim import Adam
from icml26.stats import spearman

from . import data, mlp
from . import valuation as V

KMM_METHODS = ("kmm", "kmm-weighted", "kmm-normalized", "kmm-kshot")
NO_SCORES = ("random", "target-only", "all")   # no score per dataset (Spearman undefined)
METRICS = ("test_acc", "dev_acc", "n_selected", "n_duplicates", "coverage",
           "valuation_cpu_s", "spearman_loi")


def P(cfg):
    return cfg["params"]


def budget(cfg, setting) -> int:
    return int(cfg["settings"][setting]["k"])


def dataset_names(cfg) -> list[str]:
    return [d["name"] for d in P(cfg)["pool"]]


def duplicate_mask(cfg) -> np.ndarray:
    names = dataset_names(cfg)
    return np.array([n in P(cfg)["duplicate_group"] for n in names])


def coverage_sets(cfg) -> list[set]:
    """The target sub-populations each auxiliary dataset covers (its own sub-populations
    that the target uses; the broad noisy mixture covers all it samples)."""
    target = set(P(cfg)["target_subpops"])
    return [set(d["subpops"]) & target for d in P(cfg)["pool"]]


def sizes(cfg) -> list[int]:
    p = P(cfg)
    return [p["dim"], p["hidden"], p["n_classes"]]


def check_params(cfg) -> None:
    """What the schema cannot say: consistent lengths, names and ranges across keys."""
    p, paper = P(cfg), cfg["paper"]
    if len(p["target_weights"]) != len(p["target_subpops"]):
        raise ConfigError(f"{paper}: params.target_weights has {len(p['target_weights'])} "
                          f"entries; allowed: one per target_subpops entry "
                          f"({len(p['target_subpops'])})")
    used = list(p["target_subpops"]) + [j for d in p["pool"] for j in d["subpops"]]
    if max(used) >= p["n_subpops"]:
        raise ConfigError(f"{paper}: sub-population {max(used)} does not exist; allowed: "
                          f"0..{p['n_subpops'] - 1} (params.n_subpops)")
    names = dataset_names(cfg)
    if len(set(names)) != len(names):
        raise ConfigError(f"{paper}: params.pool has repeated dataset names {names}")
    unknown = [n for n in p["duplicate_group"] if n not in names]
    if unknown:
        raise ConfigError(f"{paper}: params.duplicate_group names {unknown} not in the pool; "
                          f"allowed: {', '.join(names)}")
    for s in cfg["settings"]:
        if not 1 <= budget(cfg, s) <= len(names):
            raise ConfigError(f"{paper}: setting {s!r} has k={budget(cfg, s)}; allowed: "
                              f"1..{len(names)} (the pool size)")
    if p["official_shots"] > p["n_aux"] or (p["feature_shots"] or 0) > p["n_aux"]:
        raise ConfigError(f"{paper}: params.official_shots / feature_shots must be <= n_aux "
                          f"({p['n_aux']})")


# ---------------------------------------------------------------------------------------------
def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Each seed's task from its own stream (a seed's data do not depend on the others)."""
    check_params(cfg)
    out = {}
    for seed in cfg["seeds"]:
        d = data.make_seed_data(seeding.rng(cfg["paper"], "data", seed), P(cfg))
        out.update({f"s{seed}/{k}": v for k, v in d.items()})
    return out


def seed_arrays(data_: dict, seed: int) -> dict[str, np.ndarray]:
    pre = f"s{seed}/"
    out = {k[len(pre):]: v for k, v in data_.items() if k.startswith(pre)}
    if not out:
        raise KeyError(f"data.npz has no arrays of seed {seed}; rerun prepare")
    return out


class Pools:
    """The example pools of all seeds of the job, concatenated: per seed, source 0 is the
    target train set and source 1 + j the auxiliary dataset j (all of it)."""

    def __init__(self, per_seed: dict[int, dict]):
        xs, ys, self.start, self.length = [], [], {}, {}
        offset = 0
        for seed, d in per_seed.items():
            blocks = [(d["target_train_x"], d["target_train_y"])]
            blocks += [(d["aux_x"][j], d["aux_y"][j]) for j in range(d["aux_x"].shape[0])]
            starts, lens = [], []
            for x, y in blocks:
                xs.append(x), ys.append(y)
                starts.append(offset), lens.append(len(y))
                offset += len(y)
            self.start[seed], self.length[seed] = np.array(starts), np.array(lens)
        self.x, self.y = np.concatenate(xs), np.concatenate(ys)


class Jobs:
    """Trainings to run as one stacked batch: start weights, mixture over one seed's
    sources, number of steps, stream seed."""

    def __init__(self):
        self.inits, self.seeds_, self.probs, self.steps, self.streams = [], [], [], [], []

    def add(self, w0, seed, probs, steps, stream) -> int:
        self.inits.append(w0), self.seeds_.append(seed), self.probs.append(probs)
        self.steps.append(int(steps)), self.streams.append(int(stream))
        return len(self.inits) - 1

    def run(self, pools: Pools, hp: dict) -> list[list[np.ndarray]]:
        if not self.inits:
            return []
        start = np.stack([pools.start[s] for s in self.seeds_])
        length = np.stack([pools.length[s] for s in self.seeds_])
        out = mlp.train_mixtures(mlp.stack(self.inits), pools.x, pools.y, start, length,
                                 np.stack(self.probs), np.array(self.steps), self.streams,
                                 lr=hp["lr"], batch=hp["batch"],
                                 weight_decay=hp["weight_decay"])
        return [[p[r] for p in out] for r in range(len(self.inits))]


def mixture(cfg, chosen, weights=None) -> tuple[np.ndarray, int]:
    """Mixture over (target, aux_1..aux_M) and step count: the official recipe, target weight
    0.7 and the chosen datasets sharing the rest (equally, or by ``weights``); nothing chosen
    -> the target alone for round(0.7 x steps) steps (run_from_scores.py)."""
    p = P(cfg)
    M = len(p["pool"])
    probs = np.zeros(M + 1)
    chosen = list(chosen)
    if not chosen:
        probs[0] = 1.0
        return probs, int(round(p["target_weight"] * p["steps"]))
    w = np.ones(len(chosen)) if weights is None else np.asarray(weights, dtype=float)
    probs[0] = p["target_weight"]
    probs[1 + np.array(chosen)] = (1.0 - p["target_weight"]) * w / w.sum()
    return probs, int(p["steps"])


def warm_start(cfg, seed, d) -> list[np.ndarray]:
    """w_0: seeded init, then a short Adam warm-up on the target train set (full batch)."""
    p = P(cfg)
    w = mlp.init(sizes(cfg), seeding.rng(cfg["paper"], "init", seed))
    opt = Adam(w, lr=p["warmup_lr"])
    for _ in range(int(p["warmup_steps"])):
        _, g = mlp.loss_grad(w, d["target_train_x"], d["target_train_y"])
        opt.step(g)
    return w


def mean_grad(w, x, y) -> np.ndarray:
    return mlp.flat(mlp.loss_grad(w, x, y)[1])


def features(cfg, w, d, shots) -> np.ndarray:
    """g_j: the mean gradient at w_0 over the first ``shots`` examples of dataset j."""
    n = d["aux_x"].shape[1] if shots is None else min(int(shots), d["aux_x"].shape[1])
    return np.stack([mean_grad(w, d["aux_x"][j, :n], d["aux_y"][j, :n])
                     for j in range(d["aux_x"].shape[0])])


def _norm_ratio(G, cover) -> float:
    n = np.linalg.norm(G, axis=1)[[j for j, c in enumerate(cover) if c]]
    return float(n.max() / n.min())


def evaluate_model(w, d) -> dict:
    ok = mlp.accuracy(w, d["target_test_x"], d["target_test_y"])
    out = {"test_acc": float(ok.mean()),
           "dev_acc": float(mlp.accuracy(w, d["target_dev_x"], d["target_dev_y"]).mean())}
    sub = d["target_test_subpop"]
    for j in np.unique(sub):
        out[f"acc_subpop{int(j) + 1}"] = float(ok[sub == j].mean())
    return out


class SeedState:
    """Everything the methods of one seed share, computed on first use and timed."""

    def __init__(self, cfg, seed, d, pools, hp):
        self.cfg, self.seed, self.d, self.pools, self.hp = cfg, seed, d, pools, hp
        p = P(cfg)
        self.M = d["aux_x"].shape[0]
        self.w0 = warm_start(cfg, seed, d)
        t0 = time.process_time()
        # target feature: mean gradient over the target dev set (spec). The official code
        # takes the target train set, but its base model never saw it; our w_0 is warmed up
        # on the target train set, which partly fits it (the premise metric a_pop_cos_train)
        self.a = mean_grad(self.w0, d["target_dev_x"], d["target_dev_y"])
        a_train = mean_grad(self.w0, d["target_train_x"], d["target_train_y"])
        self.G = features(cfg, self.w0, d, p["feature_shots"])
        self.feature_cpu_s = time.process_time() - t0
        self.G_kshot = features(cfg, self.w0, d, p["official_shots"])
        # premise checks: duplicates share a direction; a against the population direction
        a_pop = mean_grad(self.w0, d["target_test_x"], d["target_test_y"])
        dup = np.flatnonzero(duplicate_mask(cfg))
        C = V.cosine_matrix(self.G)
        Ck = V.cosine_matrix(self.G_kshot)
        iu = np.triu_indices(len(dup), 1)
        self.premise = {"dup_cos": float(C[np.ix_(dup, dup)][iu].mean()),
                        "dup_cos_kshot": float(Ck[np.ix_(dup, dup)][iu].mean()),
                        "a_pop_cos": float(V.cosine(self.a[None], a_pop)[0]),
                        "a_pop_cos_train": float(V.cosine(a_train[None], a_pop)[0]),
                        # "gradient magnitudes stay comparable": largest / smallest norm of
                        # the relevant datasets' features (every dataset covering the target)
                        "grad_norm_ratio": _norm_ratio(self.G, coverage_sets(cfg))}
        self._cache = {}

    def name(self, *parts) -> int:
        return seeding.derive_seed(self.cfg["paper"], *parts, self.seed)

    def timed(self, key, fn):
        if key not in self._cache:
            t0 = time.process_time()
            value = fn()
            self._cache[key] = (value, time.process_time() - t0)
        return self._cache[key]

    # --- valuation methods: (scores, extra diagnostics) --------------------------------------
    def kmm(self, normalize=False, kshot=False):
        p = P(self.cfg)
        G = self.G_kshot if kshot else self.G
        est = V.KMM(p["kmm_lam_rel"], normalize, p["kmm_max_sweeps"], p["kmm_tol"]).fit(G, self.a)
        return est.beta_, {"kmm_sweeps": float(est.sweeps_), "kmm_kkt": est.kkt_,
                           "kmm_lambda": est.lam_}

    def task_vectors(self):
        """cos(w_j - w_0, w_t - w_0): w_j fine-tuned on dataset j alone, w_t on the target
        train set alone, ``tv_steps`` Adam steps each (one stacked batch)."""
        p = P(self.cfg)
        jobs = Jobs()
        for j in range(self.M + 1):          # source 0 = target, 1 + j = dataset j
            probs = np.zeros(self.M + 1)
            probs[j] = 1.0
            jobs.add(self.w0, self.seed, probs, p["tv_steps"], self.name("task-vector", j))
        w = jobs.run(self.pools, self.hp)
        base = mlp.flat(self.w0)
        vec = np.stack([mlp.flat(m) - base for m in w])
        return V.cosine(vec[1:], vec[0]), {}

    def datamodel(self):
        """The official uniform datamodel: rows that include a random half of the datasets,
        each row post-trained with the same recipe, target-dev accuracy as the utility,
        scikit-learn Lasso (alpha, no intercept, constant target column)."""
        p = P(self.cfg)
        rng = seeding.rng(self.cfg["paper"], "datamodel-rows", self.seed)
        size = max(1, int(round(p["dm_include_fraction"] * self.M)))
        A = np.zeros((p["dm_rows"], self.M))
        jobs = Jobs()
        for r in range(p["dm_rows"]):
            chosen = np.sort(rng.choice(self.M, size=size, replace=False))
            A[r, chosen] = 1
            probs, steps = mixture(self.cfg, chosen)
            jobs.add(self.w0, self.seed, probs, steps, self.name("datamodel-row", r))
        y = np.array([mlp.accuracy(w, self.d["target_dev_x"], self.d["target_dev_y"]).mean()
                      for w in jobs.run(self.pools, self.hp)])
        return V.datamodel_fit(A, y, p["dm_alpha"]), {}

    def loi(self) -> np.ndarray:
        """Leave-one-in utility: test accuracy after post-training on target + dataset j."""
        jobs = Jobs()
        for j in range(self.M):
            probs, steps = mixture(self.cfg, [j])
            jobs.add(self.w0, self.seed, probs, steps, self.name("leave-one-in", j))
        return np.array([mlp.accuracy(w, self.d["target_test_x"], self.d["target_test_y"]).mean()
                         for w in jobs.run(self.pools, self.hp)])

    def scores(self, method):
        """(scores per dataset, diagnostics, valuation CPU seconds given the features)."""
        fns = {
            "kmm": lambda: self.kmm(),
            "kmm-weighted": lambda: self.kmm(),
            "kmm-normalized": lambda: self.kmm(normalize=True),
            "kmm-kshot": lambda: self.kmm(kshot=True),
            "alignment": lambda: (V.cosine(self.G, self.a), {}),
            "alignment-kshot": lambda: (V.cosine(self.G_kshot, self.a), {}),
            "inner-product": lambda: (V.inner(self.G, self.a), {}),
            "task-vector": self.task_vectors,
            "datamodel": self.datamodel,
        }
        if method in NO_SCORES:
            return np.full(self.M, np.nan), {}, 0.0
        key = "kmm" if method == "kmm-weighted" else method
        (s, extra), cpu = self.timed(key, fns[method])
        return s, extra, cpu


def selections(cfg, st: SeedState, run, scores) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """The subsets (and aux weights) a run post-trains on: one for a valuation method,
    ``random_subsets`` for random, none chosen for target-only, every dataset for all."""
    M, k = st.M, budget(cfg, run.setting)
    if run.method == "target-only":
        return [(np.array([], dtype=np.int64), None)]
    if run.method == "all":
        return [(np.arange(M), None)]
    if run.method == "random":
        rng = np.random.default_rng(run.rng_seed(cfg["paper"], "subsets"))
        return [(np.sort(rng.choice(M, size=min(k, M), replace=False)), None)
                for _ in range(P(cfg)["random_subsets"])]
    chosen = V.select_top_k(scores, k)
    weights = scores[chosen] if run.method == "kmm-weighted" and chosen.size else None
    return [(chosen, weights)]


def train(cfg: dict, data_: dict[str, np.ndarray], runs: list) -> tuple[dict, list[dict]]:
    check_params(cfg)
    p = P(cfg)
    hp = {"lr": p["lr"], "batch": p["batch"], "weight_decay": p["weight_decay"]}
    seeds = sorted({r.seed for r in runs})
    per_seed = {s: seed_arrays(data_, s) for s in seeds}
    pools = Pools(per_seed)
    states = {s: SeedState(cfg, s, per_seed[s], pools, hp) for s in seeds}
    dup, cover = duplicate_mask(cfg), coverage_sets(cfg)
    n_target = len(p["target_subpops"])

    jobs, plan = Jobs(), []
    for run in runs:
        st = states[run.seed]
        scores, extra, cpu = st.scores(run.method)
        subsets = selections(cfg, st, run, scores)
        idx = []
        for i, (chosen, weights) in enumerate(subsets):
            probs, steps = mixture(cfg, chosen, weights)
            idx.append(jobs.add(st.w0, run.seed, probs, steps,
                                st.name("posttrain", budget(cfg, run.setting), i)))
        plan.append((run, scores, extra, cpu, subsets, idx))
    models = jobs.run(pools, hp)

    state, curves = {}, []
    for run, scores, extra, cpu, subsets, idx in plan:
        st = states[run.seed]
        evals = [evaluate_model(models[i], st.d) for i in idx]
        row = {k: float(np.mean([e[k] for e in evals])) for k in evals[0]}
        sel = np.zeros(st.M)
        n_dup, covered = [], []
        for chosen, _ in subsets:
            sel[chosen] += 1.0 / len(subsets)
            n_dup.append(int(dup[chosen].sum()))
            covered.append(len(set().union(*[cover[j] for j in chosen])) if len(chosen) else 0)
        loi = st.timed("loi", st.loi)[0]
        row.update({"n_selected": float(sel.sum()), "n_duplicates": float(np.mean(n_dup)),
                    "coverage": float(np.mean(covered)),
                    "covers_all": float(np.mean([c == n_target for c in covered])),
                    "valuation_cpu_s": float(cpu), "feature_cpu_s": float(st.feature_cpu_s),
                    "spearman_loi": (float(spearman(scores, loi)) if np.all(np.isfinite(scores))
                                     else np.nan),
                    **extra})
        if run.method == "kmm":
            row.update(st.premise)
        names = sorted(row)
        state[f"{run.key}/metric_names"] = np.array(names)
        state[f"{run.key}/metrics"] = np.array([row[n] for n in names], dtype=np.float64)
        state[f"{run.key}/scores"] = np.asarray(scores, dtype=np.float64)
        state[f"{run.key}/selected"] = sel
        base = run.as_dict()
        for j in range(st.M):
            if np.isfinite(scores[j]):
                curves.append({**base, "step": j, "metric": "score", "value": float(scores[j])})
            curves.append({**base, "step": j, "metric": "selected", "value": float(sel[j])})
            if run.method == "kmm":
                curves.append({**base, "step": j, "metric": "loi", "value": float(loi[j])})
    return state, curves


def evaluate(cfg: dict, data_, runs: list, state: dict, curves) -> list[dict]:
    rows = []
    for run in runs:
        names = [str(n) for n in state[f"{run.key}/metric_names"]]
        vals = state[f"{run.key}/metrics"]
        rows.append({n: float(v) for n, v in zip(names, vals, strict=True)})
    return rows
