"""Stages of the diskd paper: prepare (teachers), train (students), evaluate (test metrics).

Runs are (method, setting, seed). The local cohort (train + validation), the test set and the
student initialisation of a seed derive from derive_seed(paper, ..., seed) only, so every
method and setting of a seed sees the same data and starts from the same weights (paired
comparisons; settings differ only in the teachers offered). Teachers are trained once per
(teacher type, seed) in prepare (the spec's teacher jobs): only their parameters, i.e. their
prediction functions, reach the students.

Methods: local-only (NLL only; identical in every setting, trained once per seed),
teacher-only (the teacher's own predictions; S1/S2), naive-kd (fixed equal weights lambda/J),
diskd (adaptive weights, survival-weighted KL), kd-unweighted (full profile: adaptive weights,
KL without the S_T weighting).
"""

from __future__ import annotations

import numpy as np

from icml26.seeding import derive_seed

from . import metrics as mt
from . import net, sim
from .survival import aggregate, cif, loglik_total, softmax

ANY_EVENT = (0, 1, 1)            # student classes (none, cause 1, cause 2) -> (none, any event)
IDENTITY = (0, 1, 2)
TEACHERS = {  # type -> (population its cohort comes from, cause map of what it observes)
    "compatible": ("local", IDENTITY),
    "incompatible": ("incompatible", IDENTITY),
    "coarse": ("local", ANY_EVENT),
}
KD_METHODS = ("naive-kd", "diskd", "kd-unweighted")
F = np.float32  # training precision (the budget); metrics in float64
# The grid-edge rule on the early-stopping epoch (net.extend_caps), the same for every model
# (students of every method and the teachers behind teacher-only): a best epoch on the last
# epoch of the cap doubles the cap, at most twice (cap x 4). A module constant because the
# params schema (config/schemas/params/diskd.schema.yaml) is shared and rejects new keys.
MAX_EXTENSIONS = 2


def P(cfg):
    return cfg["params"]


def intercepts(cfg):
    return np.array(sim.INTERCEPTS[int(P(cfg)["T"])])


def teacher_types(cfg, setting):
    return list(cfg["settings"][setting]["teachers"])


def needed_teachers(cfg):
    from icml26.grid import runs

    return sorted({(t, r.seed) for r in runs(cfg) for t in teacher_types(cfg, r.setting)})


def local_cohort(cfg, seed):
    """Local training and validation subjects of a seed (censored)."""
    p = P(cfg)
    rng = np.random.default_rng(derive_seed(cfg["paper"], "local", seed))
    n = int(p["n_train"]) + int(p["n_val"])
    x = rng.standard_normal((n, sim.D))
    time, status = sim.simulate(x, intercepts(cfg), int(p["T"]), rng, dropout=p["dropout"])
    k = int(p["n_train"])
    return (x[:k], time[:k], status[:k]), (x[k:], time[k:], status[k:])


def test_set(cfg, seed):
    """Uncensored test subjects with their true CIFs (analytic, from the generator)."""
    p = P(cfg)
    rng = np.random.default_rng(derive_seed(cfg["paper"], "test", seed))
    x = rng.standard_normal((int(p["n_test"]), sim.D))
    a, T = intercepts(cfg), int(p["T"])
    time, status = sim.simulate(x, a, T, rng, censor=False)
    return x, time, status, cif(sim.true_hazards(x, a, T))


def _stack_params(plist):
    return [np.stack([p[i] for p in plist]) for i in range(len(plist[0]))]


def _init(cfg, C, seed_parts):
    p = P(cfg)
    return [w.astype(F) for w in net.init(sim.D, int(p["hidden"]), int(p["T"]), C,
                                          np.random.default_rng(derive_seed(*seed_parts)), None)]


def _recipe(cfg, teacher=False):
    p = P(cfg)
    out = {"lr": float(p["lr"]), "weight_decay": float(p["weight_decay"]),
           "patience": int(p["patience"]), "epochs": int(p["epochs"]),
           "extensions": MAX_EXTENSIONS}
    if teacher:
        out["epochs"] = int(p["teacher_epochs"])
    return out


# ---------------------------------------------------------------------------------------------
def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Train every (teacher type, seed) the grid needs on its own external cohort with NLL.

    A teacher with cause map g sees status g(d) (the coarse teacher: any event, K_T = 1). It
    early-stops on a 20% hold-out of its cohort, with the grid-edge rule on its epoch cap; its
    best epoch and final cap are kept under ``teacherfit/<type>/<seed>/``. INFERRED/scaled:
    mini-batches of ``teacher_batch`` for a starting cap of ``teacher_epochs`` epochs instead of
    400 full-batch epochs (20000 subjects x 400 epochs x 15 teachers does not fit the CPU
    budget).
    """
    p = P(cfg)
    T, a = int(p["T"]), intercepts(cfg)
    out = {"intercepts": a}
    groups: dict[int, list] = {}
    for ttype, seed in needed_teachers(cfg):
        groups.setdefault(max(TEACHERS[ttype][1]) + 1, []).append((ttype, seed))
    for C, members in groups.items():
        xs, ts, ss, inits, rngs = [], [], [], [], []
        for ttype, seed in members:
            pop, g = TEACHERS[ttype]
            r = np.random.default_rng(derive_seed(cfg["paper"], "cohort", ttype, seed))
            x = r.standard_normal((int(p["n_teacher"]), sim.D))
            t, s = sim.simulate(x, a, T, r, population=pop, dropout=p["dropout"])
            xs.append(x)
            ts.append(t)
            ss.append(np.asarray(g)[s])
            inits.append(_init(cfg, C, (cfg["paper"], "teacher-init", ttype, seed)))
            rngs.append(np.random.default_rng(derive_seed(cfg["paper"], "teacher-batches",
                                                          ttype, seed)))
        x, t, s = np.stack(xs).astype(F), np.stack(ts), np.stack(ss)
        k = int(0.8 * x.shape[1])
        params, hist = net.train(_stack_params(inits), x[:, :k], t[:, :k], s[:, :k],
                                 x[:, k:], t[:, k:], s[:, k:], T, batch=int(p["teacher_batch"]),
                                 rngs=rngs, **_recipe(cfg, teacher=True))
        for m, (ttype, seed) in enumerate(members):
            for i, w in enumerate(params):
                out[f"teacher/{ttype}/{seed}/p{i}"] = w[m]
            for key in ("best_epoch", "epoch_cap"):
                out[f"teacherfit/{ttype}/{seed}/{key}"] = np.asarray(hist[key][m])
    return out


def teacher_params(data, ttype, seed):
    keys = sorted((k for k in data if k.startswith(f"teacher/{ttype}/{seed}/p")),
                  key=lambda k: int(k.rsplit("p", 1)[1]))
    return [data[k] for k in keys]


def predict_h(params, x, T):
    """Per-interval distributions (n, T, C) of one model (float64)."""
    z, _ = net.logits([np.asarray(w, dtype=np.float64) for w in params], np.asarray(x, float), T)
    return softmax(z)


def common_map(types):
    """Coarsest common outcome definition of a set of teachers (nested maps assumed)."""
    maps = [TEACHERS[t][1] for t in types]
    return min(maps, key=lambda g: len(set(g)))


def adaptive_weights(null_logits, teacher_logits, val_time, val_status, cause_maps):
    """INFERRED (spec, Bayesian-model-averaging style): w = softmax over {null, teacher_1..J}
    of the total validation log-likelihood, all evaluated at the coarsest common outcome
    definition (a coarse teacher's map aggregates everyone's outcome). The null share goes to
    no distillation. Misspecified teachers get exponentially small weight.
    Logits are (n_val, T, C_j) per model; returns (w (J + 1,), logliks (J + 1,)).
    """
    g = min(cause_maps, key=lambda m: len(set(m)))
    T = null_logits.shape[-2]
    ll = [loglik_total(null_logits, val_time, val_status, g)]
    for z, gj in zip(teacher_logits, cause_maps, strict=True):
        # a teacher's own classes are g_j(student class); bring them to g through g_j -> g
        to_common = np.zeros(int(max(gj)) + 1, dtype=np.int64)
        for k, c in enumerate(gj):
            to_common[c] = g[k]
        h = aggregate(softmax(z), to_common)
        steps = np.arange(1, T + 1)
        at_risk = steps <= val_time[:, None]
        target = np.asarray(g)[np.where(steps < val_time[:, None], 0, val_status[:, None])]
        pt = np.take_along_axis(h, target[..., None], axis=-1)[..., 0]
        ll.append(float((at_risk * np.log(pt + 1e-300)).sum()))
    ll = np.array([float(v) for v in ll])
    w = np.exp(ll - ll.max())
    return w / w.sum(), ll


def train(cfg: dict, data: dict, runs: list) -> tuple[dict[str, np.ndarray], list[dict]]:
    p = P(cfg)
    T, lam = int(p["T"]), float(p["lam"])
    seeds = sorted({r.seed for r in runs})
    state: dict[str, np.ndarray] = {}
    curves: list[dict] = []
    cohorts = {s: local_cohort(cfg, s) for s in seeds}

    def stack(idx, seeds_):
        return (np.stack([cohorts[s][idx][0] for s in seeds_]).astype(F),
                np.stack([cohorts[s][idx][1] for s in seeds_]),
                np.stack([cohorts[s][idx][2] for s in seeds_]))

    def init(seed):  # the same start for every method of a seed (paired comparison)
        return _init(cfg, 3, (cfg["paper"], "student-init", seed))

    def log_curve(run, hist, m):
        every = int(p.get("curve_every", 10))
        for e in range(0, hist["val_nll"].shape[0], every):
            curves.append({**run.as_dict(), "step": e + 1, "metric": "val_nll",
                           "value": float(hist["val_nll"][e, m])})
        curves.append({**run.as_dict(), "step": 0, "metric": "epochs_run",
                       "value": float(hist["epochs_run"][m])})
        for key in ("best_epoch", "epoch_cap"):
            state[f"{run.key}/fit_{key}"] = np.asarray(hist[key][m])

    # 1. local-only (also the DiSKD "null teacher"): one model per seed, NLL only ------------
    need_local = [s for s in seeds if any(r.seed == s and r.method != "teacher-only"
                                          for r in runs)]
    local = {}
    if need_local:
        tr, va = stack(0, need_local), stack(1, need_local)
        params, hist = net.train(_stack_params([init(s) for s in need_local]), *tr, *va, T,
                                 **_recipe(cfg))
        local = {s: [w[m] for w in params] for m, s in enumerate(need_local)}
        for run in runs:
            if run.method == "local-only":
                for i, w in enumerate(local[run.seed]):
                    state[f"{run.key}/p{i}"] = w
                log_curve(run, hist, need_local.index(run.seed))

    # 2. distilled students, one batch per (setting, KL weighting) ----------------------------
    kd_runs = [r for r in runs if r.method in KD_METHODS]
    groups: dict[tuple, list] = {}
    for r in kd_runs:
        groups.setdefault((r.setting, r.method != "kd-unweighted"), []).append(r)
    for (setting, surv_w), group in groups.items():
        types = teacher_types(cfg, setting)
        gseeds = [r.seed for r in group]
        tr, va = stack(0, gseeds), stack(1, gseeds)
        weights = np.zeros((len(group), len(types)))
        for m, run in enumerate(group):
            x_val, t_val, s_val = cohorts[run.seed][1]
            if run.method == "naive-kd":
                w = np.full(len(types), 1.0 / len(types))      # fixed equal weights
                state[f"{run.key}/weights"] = np.concatenate([[0.0], w])
            else:
                null_z = net.logits([w.astype(float) for w in local[run.seed]], x_val, T)[0]
                tz = [net.logits([w.astype(float) for w in teacher_params(data, t, run.seed)],
                                 x_val, T)[0] for t in types]
                wfull, ll = adaptive_weights(null_z, tz, t_val, s_val,
                                             [TEACHERS[t][1] for t in types])
                w = wfull[1:]
                state[f"{run.key}/weights"] = wfull
                state[f"{run.key}/val_loglik"] = ll
            weights[m] = lam * w
        teachers = []
        for j, t in enumerate(types):
            h = np.stack([predict_h(teacher_params(data, t, r.seed), cohorts[r.seed][0][0], T)
                          for r in group]).astype(F)
            teachers.append(net.Teacher(h, np.asarray(TEACHERS[t][1]), weights[:, j].astype(F)))
        params, hist = net.train(_stack_params([init(s) for s in gseeds]), *tr, *va, T,
                                 teachers=tuple(teachers), survival_weighted=surv_w,
                                 **_recipe(cfg))
        for m, run in enumerate(group):
            for i, w in enumerate(params):
                state[f"{run.key}/p{i}"] = w[m]
            log_curve(run, hist, m)
    return state, curves


def run_params(cfg, data, state, run):
    if run.method == "teacher-only":
        (ttype,) = teacher_types(cfg, run.setting)
        if TEACHERS[ttype][1] != IDENTITY:
            raise ValueError(f"teacher-only needs a teacher with the local outcome definition; "
                             f"setting {run.setting} has {ttype}")
        return teacher_params(data, ttype, run.seed)
    keys = sorted((k for k in state if k.startswith(f"{run.key}/p")),
                  key=lambda k: int(k.rsplit("p", 1)[1]))
    return [state[k] for k in keys]


def evaluate(cfg: dict, data: dict, runs: list, state: dict, curves) -> list[dict]:
    import hashlib

    T = int(P(cfg)["T"])
    tests, premises = {}, {}
    done: dict[str, dict] = {}   # identical models (local-only in every setting) scored once
    out = []
    for run in runs:
        if run.seed not in tests:
            tests = {run.seed: test_set(cfg, run.seed)}
            premises = {run.seed: seed_premises(cfg, run.seed, tests[run.seed][3])}
        x, time, status, true_cif = tests[run.seed]
        params = run_params(cfg, data, state, run)
        digest = hashlib.sha256(b"".join(np.ascontiguousarray(w).tobytes() for w in params)
                                + str(run.seed).encode()).hexdigest()
        if digest not in done:
            done[digest] = score(predict_h(params, x, T), time, status, true_cif)
        row = dict(done[digest])
        w = state.get(f"{run.key}/weights")
        types = teacher_types(cfg, run.setting)
        row["w_null"] = float(w[0]) if w is not None else np.nan
        for t in TEACHERS:
            row[f"w_{t}"] = float(w[1 + types.index(t)]) if w is not None and t in types \
                else np.nan
        row.update(fit_columns(cfg, data, state, run))
        row.update(premises[run.seed])
        out.append(row)
    return out


def fit_columns(cfg, data, state, run) -> dict:
    """Epoch choice of the run's own model (a teacher-only run: its teacher) and of each
    teacher offered in its setting: best validation epoch and final epoch cap (grid-edge rule).
    """
    types = teacher_types(cfg, run.setting)
    row = {}
    for key in ("best_epoch", "epoch_cap"):
        if run.method == "teacher-only":
            row[key] = float(data[f"teacherfit/{types[0]}/{run.seed}/{key}"])
        else:
            row[key] = float(state[f"{run.key}/fit_{key}"])
        for t in TEACHERS:
            row[f"teacher_{key}_{t}"] = float(data[f"teacherfit/{t}/{run.seed}/{key}"]) \
                if t in types else np.nan
    return row


def seed_premises(cfg, seed, true_cif) -> dict:
    """What the spec states as fact about a seed's data, measured: observed cause-1 events in
    the local training cohort ("~40 local cause-1 events" at n = 500) and the test set's mean
    true CIF_k(T) ("CIF_1(10) ~ 0.08 and CIF_2(10) ~ 0.05")."""
    (_, _, status), _ = local_cohort(cfg, seed)
    return {"n_events1_train": float(np.sum(status == 1)),
            "true_cif1_T": float(true_cif[:, -1, 0].mean()),
            "true_cif2_T": float(true_cif[:, -1, 1].mean())}


def score(h, time, status, true_cif) -> dict:
    """Test metrics of one model's per-interval distributions h (n, T, 3)."""
    T = h.shape[1]
    pred = cif(h)                                   # (n, T, 2)
    row = {}
    for k in (1, 2):
        ck = pred[..., k - 1]
        row[f"cindex_{k}"] = mt.cindex_cr(ck, time, status, k)
        row[f"auc_{k}"] = mt.auc(ck[:, -1], (status == k) & (time <= T))
        row[f"ibs_{k}"] = mt.integrated_brier(ck, time, status, k)
        row[f"calib_{k}"] = mt.calibration_error(ck, true_cif[..., k - 1])
    pr, tr = mt.decile_curve(pred[:, -1, 0], true_cif[:, -1, 0])
    for d in range(len(pr)):
        row[f"dec_pred_{d}"] = float(pr[d])
        row[f"dec_true_{d}"] = float(tr[d])
    return row
