"""Stages of the flowdup paper: prepare (setting list), train (all runs of a shard), evaluate.

A run is (method, setting, seed). The clients of one (setting, seed) — labeled, unlabeled and
new — the base point theta_0 and the expansion matrix P (per k) are drawn from
derive_seed(paper, setting, seed, ...), so every method sees the same clients, theta_0 and P
(paired comparisons); hypernetwork init and k-means use the run's own streams.

FLowDUP-type runs of one shard with the same variant (k, noU, theta_0 kind) are trained
together, the seeds stacked on a leading run axis. Per-client results go to the state
(accuracies, embeddings) and to curve rows for the figures: metric ``client_acc`` /
``client_angle`` / ``emb_pc1`` / ``emb_pc2`` with step = index of the new client, and the
training curves ``train_ce`` / ``objective`` with step = round.
"""

from __future__ import annotations

import re

import numpy as np

from icml26.seeding import derive_seed

from . import baselines
from . import flowdup as fl
from .data import client_groups
from .model import accuracy, init_theta0, n_params, one_hot, with_ones

FLOWDUP_RE = re.compile(r"^flowdup(-k(?P<k>\d+))?(?P<nou>-nou)?(?P<pre>-pretrained)?$")
BASELINES = ("fedavg", "global-subspace", "cluster", "oracle-local")


def setting_params(cfg: dict, setting: str) -> dict:
    return {**cfg["params"], **(cfg["settings"][setting] or {})}


def flowdup_variant(method: str, params: dict):
    """(k, use_unlabeled, pretrained_theta0) of a FLowDUP method id, or None for a baseline.

    flowdup (k from params.k), flowdup-k<K>, flowdup-nou (no unlabeled clients in the
    penalty), flowdup-pretrained (theta_0 = the FedAvg solution instead of a random init).
    """
    m = FLOWDUP_RE.match(method)
    if m is None:
        return None
    return (int(m["k"] or params["k"]), m["nou"] is None, m["pre"] is not None)


def k_of(method: str, params: dict) -> int:
    var = flowdup_variant(method, params)
    return var[0] if var else (int(params["k"]) if method == "global-subspace" else 0)


def upload_floats(method: str, params: dict) -> int:
    """Floats a client uploads to be personalized at deployment (spec metric)."""
    var = flowdup_variant(method, params)
    if var:
        return var[0]                        # v (the hypernetwork input stays on the client)
    return {"cluster": 32, "oracle-local": n_params()}.get(method, 0)


# ---------------------------------------------------------------------------------------------
def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Clients are regenerated per (setting, seed) in train from derived seeds (small, and
    identical for every method); prepare only records the settings."""
    return {"settings": np.array(list(cfg["settings"]))}


DTYPE = np.float32  # training precision (float32 halves the cost of the batched matmuls)


class Instance:
    """The clients, theta_0 and P of one (setting, seed), in training precision."""

    def __init__(self, cfg: dict, setting: str, seed: int):
        self.p = setting_params(cfg, setting)
        self.key = (cfg["paper"], setting, seed)
        self.groups = client_groups(self.p, np.random.default_rng(derive_seed(*self.key, "data")))
        for g in self.groups.values():
            for part in ("train", "test"):
                g[f"x_{part}"] = g[f"x_{part}"].astype(DTYPE)
                g[f"Y_{part}"] = one_hot(g[f"y_{part}"], DTYPE)
            g["x1_train"] = with_ones(g["x_train"])
        self.theta0 = init_theta0(
            np.random.default_rng(derive_seed(*self.key, "theta0"))).astype(DTYPE)
        self._P: dict[int, np.ndarray] = {}
        self._pre = None

    def P(self, k: int) -> np.ndarray:
        """Fixed random expansion matrix, entries N(0, 1/k)."""
        if k not in self._P:
            rng = np.random.default_rng(derive_seed(*self.key, "P", k))
            self._P[k] = rng.normal(0.0, 1.0 / np.sqrt(k), (self.theta0.size, k)).astype(DTYPE)
        return self._P[k]

    def pretrained_theta0(self) -> np.ndarray:
        """FedAvg solution on the labeled clients (the 'pretrained theta_0' ablation)."""
        if self._pre is None:
            lab = self.groups["labeled"]
            self._pre = baselines.fedavg(self.theta0[None], lab["x1_train"][None],
                                         lab["Y_train"][None], int(self.p["rounds"]),
                                         float(self.p["lr"]))[0][0]
        return self._pre


def _stack(insts, group: str, name: str) -> np.ndarray:
    return np.stack([i.groups[group][name] for i in insts])


def _client_rows(run, inst, acc_new, emb=None) -> list[dict]:
    rows = []
    base = run.as_dict()
    for i, (a, ang) in enumerate(zip(acc_new, inst.groups["new"]["alpha"], strict=True)):
        rows.append({**base, "step": i, "metric": "client_acc", "value": float(a)})
        rows.append({**base, "step": i, "metric": "client_angle", "value": float(ang)})
    if emb is not None:
        # 2-D PCA of the pooled embeddings of the new clients (spec's embedding figure)
        c = emb - emb.mean(0)
        _, _, vt = np.linalg.svd(c, full_matrices=False)
        pcs = c @ vt[:2].T
        for i, (p1, p2) in enumerate(pcs):
            rows.append({**base, "step": i, "metric": "emb_pc1", "value": float(p1)})
            rows.append({**base, "step": i, "metric": "emb_pc2", "value": float(p2)})
    return rows


def _log_rows(run, r: int, log, metric: str) -> list[dict]:
    return [{**run.as_dict(), "step": int(t), "metric": metric, "value": float(vals[r])}
            for t, vals in log]


def _finish(runs, insts, thetas: dict, extra=None):
    """Per-client test accuracies (state) and client curve rows of every run.

    thetas maps a client group to parameters (R, d) shared or (R, C, d) per client."""
    state, curves = {}, []
    for r, (run, inst) in enumerate(zip(runs, insts, strict=True)):
        accs = {g: accuracy(th[r], inst.groups[g]["x_test"], inst.groups[g]["y_test"])
                for g, th in thetas.items()}
        for g, a in accs.items():
            state[f"{run.key}/acc_{g}"] = a
        emb = None if extra is None else extra[r]
        curves += _client_rows(run, inst, accs["new"], emb)
    return state, curves


GROUPS = ("labeled", "unlabeled", "new")


def train_flowdup(cfg, runs, insts, var):
    """All runs (seeds) of one FLowDUP variant of one setting, stacked on the run axis."""
    k, use_unlabeled, pretrained = var
    p = setting_params(cfg, runs[0].setting)
    groups = ["labeled", "unlabeled"] if use_unlabeled else ["labeled"]
    X = np.concatenate([_stack(insts, g, "x_train") for g in groups], axis=1)
    Y = _stack(insts, "labeled", "Y_train")
    theta0 = np.stack([i.pretrained_theta0() if pretrained else i.theta0 for i in insts])
    P = np.stack([i.P(k) for i in insts])
    rngs = [np.random.default_rng(r.rng_seed(cfg["paper"], "hypernet")) for r in runs]
    psi = fl.init_hypernet(rngs, k, dtype=DTYPE)
    psi, log = fl.train(X, Y, Y.shape[1], theta0, P, psi, int(p["rounds"]), float(p["lr"]),
                        float(p["lam"]), float(p["sigma"]), int(p["log_every"]))
    # inference from each client's unlabeled training points only: one forward pass
    thetas, state, emb_new = {}, {}, None
    for g in GROUPS:
        thetas[g], v, e = fl.infer(psi, _stack(insts, g, "x_train"), theta0, P)
        for r, run in enumerate(runs):
            state[f"{run.key}/v_{g}"] = v[r]
        if g == "new":
            emb_new = e
    s, curves = _finish(runs, insts, thetas, emb_new)
    state.update(s)
    for r, run in enumerate(runs):
        state[f"{run.key}/emb_new"] = emb_new[r]
        curves += _log_rows(run, r, [(t, J) for t, J, _ in log], "objective")
        curves += _log_rows(run, r, [(t, ce) for t, _, ce in log], "train_ce")
    return state, curves


def train_baseline(cfg, runs, insts, method):
    """All runs (seeds) of one baseline of one setting, stacked on the run axis."""
    p = setting_params(cfg, runs[0].setting)
    rounds, lr, every = int(p["rounds"]), float(p["lr"]), int(p["log_every"])
    x, Y = _stack(insts, "labeled", "x1_train"), _stack(insts, "labeled", "Y_train")
    theta0 = np.stack([i.theta0 for i in insts])
    state, log = {}, []
    if method == "fedavg":
        theta, log = baselines.fedavg(theta0, x, Y, rounds, lr, every)
        thetas = {g: theta for g in GROUPS}
    elif method == "global-subspace":
        P = np.stack([i.P(int(p["k"])) for i in insts])
        theta, v, log = baselines.global_subspace(theta0, P, x, Y, rounds, lr, every)
        thetas = {g: theta for g in GROUPS}
        for r, run in enumerate(runs):
            state[f"{run.key}/v"] = v[r]
    elif method == "cluster":
        n_c, L = int(p["n_clusters"]), x.shape[1]
        fits = [baselines.cluster_fit(np.concatenate([i.groups["labeled"]["x_train"],
                                                      i.groups["unlabeled"]["x_train"]]),
                                      n_c, run.rng_seed(cfg["paper"], "kmeans"))
                for run, i in zip(runs, insts, strict=True)]
        assign = np.stack([a for _, a in fits])
        models, log = baselines.cluster_models(theta0, x, Y, assign[:, :L], n_c, rounds, lr,
                                               every)
        new = np.stack([km.predict(baselines.summary_stats(i.groups["new"]["x_train"]))
                        for (km, _), i in zip(fits, insts, strict=True)])
        rows = np.arange(len(runs))[:, None]
        thetas = {"labeled": models[rows, assign[:, :L]], "unlabeled": models[rows, assign[:, L:]],
                  "new": models[rows, new]}
        for r, run in enumerate(runs):
            state[f"{run.key}/cluster_new"] = new[r]
    elif method == "oracle-local":
        # the oracle trains on each client's own labels (every group, for reporting)
        thetas = {g: baselines.oracle_local(theta0, _stack(insts, g, "x1_train"),
                                            _stack(insts, g, "Y_train"), rounds, lr)
                  for g in GROUPS}
    else:
        raise ValueError(f"unknown method {method!r}")
    s, curves = _finish(runs, insts, thetas)
    state.update(s)
    for r, run in enumerate(runs):
        curves += _log_rows(run, r, log, "train_ce")
    return state, curves


def _keep_temporaries_on_heap() -> None:
    """glibc returns every freed array of > 128 kB to the OS and page-faults it back on the next
    round (a third of the CPU time as system time here); raise the mmap/trim thresholds for
    this process. Speed only: no number changes. A no-op where glibc is absent."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-1, 1 << 30)                     # M_TRIM_THRESHOLD
        libc.mallopt(-3, 1 << 30)                     # M_MMAP_THRESHOLD
    except (OSError, AttributeError):
        pass


def train(cfg: dict, data: dict, runs: list) -> tuple[dict[str, np.ndarray], list[dict]]:
    """Runs grouped by (setting, method variant); each group trains its seeds stacked. Every
    run's numbers depend only on its own streams, not on the group it trains in (tested)."""
    _keep_temporaries_on_heap()
    state: dict[str, np.ndarray] = {}
    curves: list[dict] = []
    insts: dict[tuple[str, int], Instance] = {}
    groups: dict[tuple, list] = {}
    for run in runs:
        var = flowdup_variant(run.method, setting_params(cfg, run.setting))
        groups.setdefault((run.setting, var or run.method), []).append(run)
        if (run.setting, run.seed) not in insts:
            insts[(run.setting, run.seed)] = Instance(cfg, run.setting, run.seed)
    for (_, var), group in groups.items():
        gi = [insts[(r.setting, r.seed)] for r in group]
        if isinstance(var, tuple):
            s, c = train_flowdup(cfg, group, gi, var)
        else:
            s, c = train_baseline(cfg, group, gi, var)
        state.update(s)
        curves += c
    return state, curves


def evaluate(cfg: dict, data: dict, runs: list, state: dict, curves) -> list[dict]:
    """Mean accuracy over new clients (headline), unlabeled and labeled training clients; the
    subspace dimension k and the per-client upload size at deployment."""
    out = []
    for run in runs:
        p = setting_params(cfg, run.setting)
        out.append({
            "acc_new": float(np.mean(state[f"{run.key}/acc_new"])),
            "acc_unlabeled": float(np.mean(state[f"{run.key}/acc_unlabeled"])),
            "acc_labeled": float(np.mean(state[f"{run.key}/acc_labeled"])),
            "acc_new_worst": float(np.min(state[f"{run.key}/acc_new"])),
            "k": float(k_of(run.method, p)),
            "upload_floats": float(upload_floats(run.method, p)),
        })
    return out
