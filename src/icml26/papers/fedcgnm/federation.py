"""The federated runner: many (method, setting, seed, lr) runs as one vectorised computation.

Server: FedAvg aggregation weighted by client sample counts, full participation, R rounds,
one local epoch of mini-batches of ``batch`` per client and round. Every client of every run
is one row of stacked weight arrays ("models" = runs x clients), so a local step of all
clients of all runs is a handful of batched matmuls. Models are sorted once by their number of
local steps (ceil(n_k / batch), fixed across rounds), so the clients still training at step s
are a prefix of the rows and each step works on views, without copies.

The runs of one call share a setting (same input size and classes) and a client-optimizer
family: "sgd" (FedAvg, FedAvgM, FedAvg-CB, FedAvg-LA) or "cgnm" with G groups (FedCGNM and its
ablations, FedCGNM+RS, FedHOO). Per run: its own batch stream (run.rng_seed(paper, "batches"),
shared by its step sizes), the initial model and data of its (setting, seed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from icml26 import fed

from .baselines import class_balanced_weights, logit_adjustment, sgd_step
from .fedcgnm import cgnm_step, group_classes
from .fedhoo import FixedRate, HOORates

# method id -> client optimizer. groups "C": one group per class. q: resampling exponent,
# "hoo": chosen per round by FedHOO.
METHOD_SPECS = {
    "fedavg": {"kind": "sgd", "momentum": 0.0, "loss": "ce"},
    "fedavgm": {"kind": "sgd", "momentum": 0.9, "loss": "ce"},
    "fedavg-cb": {"kind": "sgd", "momentum": 0.0, "loss": "cb"},
    "fedavg-la": {"kind": "sgd", "momentum": 0.0, "loss": "la"},
    "fedcgnm": {"kind": "cgnm", "groups": 3, "q": 0.0},
    "fednm": {"kind": "cgnm", "groups": 1, "q": 0.0},
    "fedcgnm-g2": {"kind": "cgnm", "groups": 2, "q": 0.0},
    "fedcgnm-g5": {"kind": "cgnm", "groups": 5, "q": 0.0},
    "fedcgnm-gC": {"kind": "cgnm", "groups": "C", "q": 0.0},
    "fedcgnm-rs": {"kind": "cgnm", "groups": 3, "q": "rs"},
    "fedhoo": {"kind": "cgnm", "groups": 3, "q": "hoo"},
}


def n_groups(method: str, n_classes: int) -> int:
    g = METHOD_SPECS[method].get("groups", 1)
    return n_classes if g == "C" else int(g)


def family(method: str, n_classes: int) -> tuple:
    spec = METHOD_SPECS[method]
    return ("sgd", 0) if spec["kind"] == "sgd" else ("cgnm", n_groups(method, n_classes))


@dataclass
class Job:
    """One federated run at one step size."""

    method: str
    setting: str
    seed: int
    lr: float
    batch_seed: int
    result: dict = field(default_factory=dict)


def _recalls(params, x, y, n_classes: int) -> np.ndarray:
    """Per-class recall (J, C) of J server models on one evaluation set."""
    pred = fed.predict(params, x)                          # (J, N)
    onehot = np.eye(n_classes)[y]                          # (N, C)
    hits = (pred == y[None, :]).astype(float) @ onehot     # (J, C)
    return hits / np.maximum(onehot.sum(axis=0), 1.0)


def _sample_prob(ds: dict, client: np.ndarray, q: float):
    """Resampling probabilities propto n_{y_i}^(-q) over a client's samples (INFERRED form)."""
    w = ds["counts"][ds["y"][client]].astype(float) ** (-q)
    return w / w.sum()


def simulate(jobs: list[Job], datasets: dict, p: dict) -> None:
    """Run the jobs (one setting, one family) for ``p['rounds']`` rounds; fills job.result.

    datasets: seed -> dataset dict (data.make_dataset). job.result gets ``params`` (final
    server model), per-round arrays ``val_bacc``, ``test_bacc`` (every ``test_every`` rounds
    and at the last; NaN otherwise) (and for FedCGNM runs
    ``grad_ratio``, ``share_ratio``, ``mom_ratio``; for FedHOO ``hoo_qa``, ``hoo_qb``), and
    ``val_recall``.
    """
    any_ds = datasets[jobs[0].seed]
    n_cls = len(any_ds["counts"])
    dim = any_ds["x"].shape[1]
    batch, rounds, hidden = int(p["batch"]), int(p["rounds"]), int(p["hidden"])
    fam = family(jobs[0].method, n_cls)
    assert all(family(j.method, n_cls) == fam for j in jobs), "one family per call"
    n_jobs = len(jobs)

    # all training sets of the call in one array (global sample indices)
    seeds = sorted({j.seed for j in jobs})
    offset, xs, ys = {}, [], []
    for s in seeds:
        offset[s] = sum(len(v) for v in ys)
        xs.append(datasets[s]["x"])
        ys.append(datasets[s]["y"])
    x_all, y_all = np.concatenate(xs), np.concatenate(ys)

    # models = jobs x clients (canonical order), then sorted by local steps (descending)
    model_job, model_size = [], []
    for j, job in enumerate(jobs):
        for client in datasets[job.seed]["clients"]:
            model_job.append(j)
            model_size.append(len(client))
    model_job, model_size = np.array(model_job), np.array(model_size)
    steps = -(-model_size // batch)
    order = np.argsort(-steps, kind="stable")              # sorted row -> canonical model
    pos = np.empty_like(order)
    pos[order] = np.arange(len(order))                     # canonical model -> sorted row
    n_models = len(order)
    max_steps = int(steps.max())
    active = [int((steps > s).sum()) for s in range(max_steps)]
    job_of = model_job[order]
    agg = np.zeros((n_jobs, n_models))                     # FedAvg weights, sorted rows
    agg[job_of, np.arange(n_models)] = model_size[order]
    agg /= agg.sum(axis=1, keepdims=True)

    # per-model optimizer constants (sorted rows)
    lr = np.array([jobs[j].lr for j in job_of])
    n_clients_of = [len(datasets[job.seed]["clients"]) for job in jobs]
    if fam[0] == "sgd":
        mom = np.array([METHOD_SPECS[jobs[j].method]["momentum"] for j in job_of])
        cw_job, shift_job = [], []
        for job in jobs:
            counts, loss = datasets[job.seed]["counts"], METHOD_SPECS[job.method]["loss"]
            cw_job.append(class_balanced_weights(counts) if loss == "cb" else np.ones(n_cls))
            shift_job.append(logit_adjustment(counts, float(p["tau"])) if loss == "la"
                             else np.zeros(n_cls))
        cw, shift = np.array(cw_job)[job_of], np.array(shift_job)[job_of]
    else:
        n_grp = fam[1]
        goc_job = [group_classes(datasets[job.seed]["counts"], n_grp) for job in jobs]
        goc = np.array(goc_job)[job_of]
        # groups of the most and of the least frequent class (diagnostic)
        head_tail = np.array([(g[datasets[job.seed]["rank"][0]], g[datasets[job.seed]["rank"][-1]])
                              for g, job in zip(goc_job, jobs, strict=True)])
        head_tail_of = head_tail[job_of]
        for job, g in zip(jobs, goc_job, strict=True):
            job.result["groups"] = g

    # rate controllers (resampling exponent per client and round)
    ctrls = []
    for job, k in zip(jobs, n_clients_of, strict=True):
        q = METHOD_SPECS[job.method].get("q", 0.0)
        if q == "hoo":
            ctrls.append(HOORates(k, float(p["hoo_nu"]), float(p["hoo_rho"])))
        else:
            ctrls.append(FixedRate(float(p["rs_q"]) if q == "rs" else float(q), k))
    rngs = [np.random.default_rng(job.batch_seed) for job in jobs]

    # initial server models: one per (setting, seed), identical across methods and step sizes
    inits = {s: fed.mlp_init([dim, hidden, n_cls], np.random.default_rng(datasets[s]["init_seed"]))
             for s in seeds}
    server = [np.stack([inits[job.seed][i] for job in jobs]) for i in range(4)]
    clients = [np.zeros((n_models,) + a.shape[1:]) for a in server]
    if fam[0] == "sgd":
        state = [np.zeros_like(c) for c in clients]        # heavy-ball velocity
    else:
        state = [np.zeros((n_models, n_grp) + c.shape[1:]) for c in clients]  # group momenta

    by_seed = {s: [j for j, job in enumerate(jobs) if job.seed == s] for s in seeds}

    def val_ba(params_list, job_ids):
        out = np.zeros(len(job_ids))
        for s in seeds:
            sel = [i for i, j in enumerate(job_ids) if jobs[j].seed == s]
            if sel:
                ds = datasets[s]
                rec = _recalls([a[sel] for a in params_list], ds["xv"], ds["yv"], n_cls)
                out[sel] = rec.mean(axis=1)
        return out

    hoo_jobs = [j for j, c in enumerate(ctrls) if c.halves]
    prev_val = val_ba(server, list(range(n_jobs)))
    curves = {m: np.full((n_jobs, rounds), np.nan)
              for m in ("val_bacc", "test_bacc", "grad_ratio", "share_ratio", "mom_ratio",
                        "hoo_qa", "hoo_qb")}

    for r in range(rounds):
        for c, a in zip(clients, server, strict=True):
            c[:] = a[job_of]                                # broadcast the server model
        idx = np.zeros((n_models, max_steps, batch), dtype=np.int64)
        mask = np.zeros((n_models, max_steps, batch), dtype=bool)
        for j, job in enumerate(jobs):
            ds = datasets[job.seed]
            q = ctrls[j].rates()
            probs = None if np.all(q == 0) else [
                _sample_prob(ds, cl, qk) for cl, qk in zip(ds["clients"], q, strict=True)]
            b, m = fed.epoch_batches([cl + offset[job.seed] for cl in ds["clients"]], batch,
                                     rngs[j], probs)
            rows = pos[model_job == j]
            idx[rows, : b.shape[1]], mask[rows, : b.shape[1]] = b, m
            if ctrls[j].halves:
                curves["hoo_qa"][j, r], curves["hoo_qb"][j, r] = q[0], q[-1]
        # diagnostics: sums of log head/tail ratios per model and the number of steps counted
        diag = {m: np.zeros(n_models) for m in ("grad_ratio", "share_ratio", "mom_ratio", "n")}
        for s in range(max_steps):
            na = active[s]
            ib, mb = idx[:na, s], mask[:na, s]
            xb, yb = x_all[ib], y_all[ib]
            cp = [c[:na] for c in clients]
            st = [v[:na] for v in state]
            if fam[0] == "sgd":
                sgd_step(cp, st, xb, yb, mb, lr[:na], mom[:na], cw[:na], shift[:na])
            else:
                sizes, gnorm, mnorm = cgnm_step(cp, st, xb, yb, mb, goc[:na], lr[:na],
                                                float(p["beta"]))
                if n_grp > 1:
                    rows = np.arange(na)
                    h, t = head_tail_of[:na, 0], head_tail_of[:na, 1]
                    # both groups present with non-zero gradients (a saturated softmax can
                    # give an exactly zero group gradient: no ratio for that step)
                    ok = ((sizes[rows, h] > 0) & (sizes[rows, t] > 0) & (gnorm[rows, h] > 0)
                          & (gnorm[rows, t] > 0) & (mnorm[rows, h] > 0) & (mnorm[rows, t] > 0))
                    g = np.where(ok[:, None], gnorm, 1.0)    # 1 where not counted (log 0)
                    m_ = np.where(ok[:, None], mnorm, 1.0)
                    sz = np.maximum(sizes, 1)
                    lg = np.log(g[rows, h]) - np.log(g[rows, t])
                    diag["grad_ratio"][:na] += np.where(ok, lg, 0.0)
                    # the groups' shares of the mini-batch mean gradient, |B_k|/|B| g_k: what an
                    # unnormalised step on the whole batch sees
                    diag["share_ratio"][:na] += np.where(
                        ok, lg + np.log(sz[rows, h]) - np.log(sz[rows, t]), 0.0)
                    diag["mom_ratio"][:na] += np.where(
                        ok, np.log(m_[rows, h]) - np.log(m_[rows, t]), 0.0)
                    diag["n"][:na] += ok
        flat = [c.reshape(n_models, -1) for c in clients]
        if hoo_jobs:
            # FedHOO: validation balanced accuracy of each half-aggregate -> two rewards
            for j in hoo_jobs:
                cl_canon = pos[model_job == j]             # rows of clients 0..K-1
                k = len(cl_canon)
                halves = []
                for part in (cl_canon[: k // 2], cl_canon[k // 2:]):
                    w = model_size[order][part]
                    halves.append([np.tensordot(w / w.sum(), c[part], axes=(0, 0))
                                   for c in clients])
                ba = [val_ba([h_[i][None] for i in range(4)], [j])[0] for h_ in halves]
                ctrls[j].observe(ba[0] - prev_val[j], ba[1] - prev_val[j])
        server = [(agg @ f).reshape((n_jobs,) + c.shape[1:]) for f, c in zip(flat, clients,
                                                                          strict=True)]
        vb = val_ba(server, list(range(n_jobs)))
        curves["val_bacc"][:, r] = vb
        prev_val = vb
        if (r + 1) % int(p["test_every"]) == 0 or r == rounds - 1:
            for s in seeds:                                 # the test set is 10x larger
                sel = by_seed[s]
                ds = datasets[s]
                rec = _recalls([a[sel] for a in server], ds["xt"], ds["yt"], n_cls)
                curves["test_bacc"][sel, r] = rec.mean(axis=1)
        if fam[0] == "cgnm" and n_grp > 1:
            # geometric means over the client steps of each run with both groups present
            for j in range(n_jobs):
                sel = job_of == j
                cnt = diag["n"][sel].sum()
                if cnt > 0:
                    for name in ("grad_ratio", "share_ratio", "mom_ratio"):
                        curves[name][j, r] = np.exp(diag[name][sel].sum() / cnt)

    for j, job in enumerate(jobs):
        job.result["params"] = [a[j] for a in server]
        for name, arr in curves.items():
            if np.isfinite(arr[j]).any():
                job.result[name] = arr[j]
        ds = datasets[job.seed]
        job.result["val_recall"] = _recalls([a[j][None] for a in server], ds["xv"], ds["yv"],
                                            n_cls)[0]
