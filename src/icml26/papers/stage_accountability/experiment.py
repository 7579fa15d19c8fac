"""Stages of stage-accountability: tasks (prepare), staged training + counterfactuals +
estimators (train), metrics (evaluate).

A method is an estimator of stage effects; a setting is a task with its stage recipe. The
training of a (setting, seed) does not depend on the method: one train job trains the full
run, the S counterfactuals without one stage and the S runs with one stage cleaned once per
seed (all seeds of a setting batched), computes every estimator on those same runs and stores
each run's estimates next to the shared ground truth. Its random streams come from
(paper, "shared", setting, seed, stream), never from the method, so sharding changes nothing.
"""

from __future__ import annotations

import numpy as np

from icml26.seeding import derive_seed

from . import data as D

METHODS = ("e2-trajectory", "e1-decay-delta", "naive-delta", "tracin", "loss-diff")
N_GROUP_BEHAVIOURS = 2          # f_counter, f_aligned; then the per-example probes


def setting_params(cfg, setting) -> dict:
    return dict(cfg["settings"][setting] or {})


def stream(cfg, setting, seed, name) -> int:
    """Seed of a method-independent random stream of one (setting, seed)."""
    return derive_seed(cfg["paper"], "shared", setting, int(seed), name)


def _seeds(cfg, setting) -> list[int]:
    from icml26.grid import setting_seeds

    return setting_seeds(cfg, setting)


# ------------------------------------------------------------------------------------------
# prepare
# ------------------------------------------------------------------------------------------
def prepare(cfg: dict, rng: np.random.Generator) -> dict:
    p = cfg["params"]
    out = {}
    base = None
    for setting in cfg["settings"]:
        sp = setting_params(cfg, setting)
        for seed in _seeds(cfg, setting):
            r = np.random.default_rng(stream(cfg, setting, seed, "data"))
            if sp["kind"] == "digits":
                base = base if base is not None else D.digits_base()
                X, y = base
            else:
                X, y = D.text_base(int(sp["n_docs"]), sp, r)
            task = D.make_task(X, y, sp["kind"], sp["stages"], int(p["n_test"]),
                               int(p["n_probe_per_group"]), int(p["batch_size"]),
                               float(p["warmup_frac"]), r)
            for name, arr in task.items():
                if arr.dtype == np.float64 and name.split("_")[-1] in ("X", "Xc"):
                    arr = arr.astype(np.float32)     # pixels k/16, 1.0 and counts are exact
                out[f"{setting}/{seed}/{name}"] = arr
    return out


def task_of(data, setting, seed, n_stages) -> dict:
    pre = f"{setting}/{seed}/"
    keys = ["test_X", "test_y", "test_group", "probe"]
    keys += [f"s{k}_{n}" for k in range(1, n_stages + 1)
             for n in ("X", "y", "Xc", "yc", "batches", "eta")]
    return {k: data[pre + k] for k in keys}


def behaviour_weights(group: np.ndarray, probe: np.ndarray) -> np.ndarray:
    """(nb, n) weights over the test set: f_counter (mean over the counter group), f_aligned
    (mean over the aligned group), then one row per probe example (its own loss)."""
    n = len(group)
    W = np.zeros((N_GROUP_BEHAVIOURS + len(probe), n))
    W[0, group == 1] = 1.0 / max(int((group == 1).sum()), 1)
    W[1, group == 0] = 1.0 / max(int((group == 0).sum()), 1)
    W[np.arange(len(probe)) + N_GROUP_BEHAVIOURS, probe] = 1.0
    return W


# ------------------------------------------------------------------------------------------
# train
# ------------------------------------------------------------------------------------------
def run_setting(cfg: dict, data: dict, setting: str, seeds: list[int]) -> dict:
    """Train every branch and compute every estimator for the given seeds of one setting.
    Returns numpy arrays with a leading seed axis."""
    import torch

    from icml26.seeding import torch_device

    from . import accountability as A

    torch.set_num_threads(1)
    dev = torch_device(cfg["device"])
    p, sp = cfg["params"], setting_params(cfg, setting)
    S = len(sp["stages"])
    tasks = [task_of(data, setting, s, S) for s in seeds]
    t64 = lambda name: torch.as_tensor(np.stack([t[name] for t in tasks]),  # noqa: E731
                                       dtype=A.DTYPE, device=dev)
    tlong = lambda name: torch.as_tensor(np.stack([t[name] for t in tasks]),  # noqa: E731
                                         dtype=torch.long, device=dev)
    stages = [A.Stage(t64(f"s{k}_X"), tlong(f"s{k}_y"), t64(f"s{k}_Xc"), tlong(f"s{k}_yc"),
                      tlong(f"s{k}_batches"), tasks[0][f"s{k}_eta"], float(st["wd"]))
              for k, st in enumerate(sp["stages"], start=1)]
    d_in = stages[0].X.shape[-1]
    net = A.FlatMLP(d_in, int(p["hidden"]))
    theta0 = net.init([stream(cfg, setting, s, "init") for s in seeds], dev)
    opt = {"kind": sp.get("optimizer", "sgdm"), "momentum": float(p["momentum"]),
           "betas": tuple(p["adam_betas"]), "eps": float(p["adam_eps"])}
    run = A.train_stages(net, theta0, stages, opt)
    X, y, group = t64("test_X"), tlong("test_y"), tlong("test_group")
    W = torch.as_tensor(np.stack([behaviour_weights(t["test_group"], t["probe"]) for t in tasks]),
                        dtype=A.DTYPE, device=dev)
    decay = A.decay_after([st.eta for st in stages], [st.wd for st in stages])
    est = A.estimates(net, run, X, y, W, decay)
    acc_al, acc_co = A.group_accuracy(net, run["final"], X, y, group)
    R = len(seeds)
    cl = run["clean"].reshape(R * S, -1)
    rep = lambda z: z.repeat_interleave(S, 0)  # noqa: E731
    c_al, c_co = A.group_accuracy(net, cl, rep(X), rep(y), rep(group))
    out = dict(est)
    out["acc_aligned"] = acc_al.cpu().numpy()
    out["acc_counter"] = acc_co.cpu().numpy()
    out["clean_acc_aligned"] = c_al.reshape(R, S).cpu().numpy()
    out["clean_acc_counter"] = c_co.reshape(R, S).cpu().numpy()
    out["train_loss"] = run["train_loss"].T.cpu().numpy()                # (R, S)
    out["decay"] = np.broadcast_to(decay, (R, S)).copy()
    out["delta_norm"] = (run["end"] - run["start"]).norm(dim=-1).cpu().numpy()
    return out


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list]:
    state, curves = {}, []
    for setting in dict.fromkeys(r.setting for r in runs):
        mine = [r for r in runs if r.setting == setting]
        seeds = sorted({r.seed for r in mine})
        res = run_setting(cfg, data, setting, seeds)
        stages = setting_params(cfg, setting)["stages"]
        S = len(stages)
        for run in mine:
            i = seeds.index(run.seed)
            est, true = res[run.method][i], res["true"][i]
            key = run.key
            state[f"{key}/est"] = est
            state[f"{key}/true"] = true
            for name in ("acc_aligned", "acc_counter"):
                state[f"{key}/{name}"] = np.array(res[name][i])
            for name in ("clean_acc_aligned", "clean_acc_counter", "train_loss", "decay",
                         "delta_norm"):
                state[f"{key}/{name}"] = res[name][i]
            r = np.random.default_rng(stream(cfg, setting, run.seed, "random-stage"))
            state[f"{key}/random_stage"] = np.array(int(r.integers(S)) + 1)
            nb = est.shape[1]
            base = run.as_dict()
            for s in range(S):
                for b in range(nb):
                    curves.append({**base, "step": s * nb + b, "metric": "est",
                                   "value": float(est[s, b])})
                    curves.append({**base, "step": s * nb + b, "metric": "true",
                                   "value": float(true[s, b])})
    return state, curves


# ------------------------------------------------------------------------------------------
# evaluate
# ------------------------------------------------------------------------------------------
def _pearson(a, b) -> float:
    a, b = np.asarray(a, float).ravel(), np.asarray(b, float).ravel()
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))) or a.std() == 0 or b.std() == 0:
        return float("nan")
    return float(np.corrcoef(a, b)[0, 1])


def _spearman(a, b) -> float:
    from icml26.stats import spearman

    a, b = np.asarray(a, float).ravel(), np.asarray(b, float).ravel()
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return float("nan")
    return float(spearman(a, b))


def _relerr(est, true) -> float:
    """sum_s |est_s - true_s| / sum_s |true_s| over the stages (one behaviour)."""
    den = np.abs(true).sum()
    return float(np.abs(est - true).sum() / den) if den > 0 else float("nan")


def _argmax(x) -> float:
    return float(np.argmax(x) + 1) if np.all(np.isfinite(x)) else float("nan")


def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    rows = []
    for run in runs:
        key = run.key
        stages = setting_params(cfg, run.setting)["stages"]
        spur = D.spurious_stage(stages)
        est, true = state[f"{key}/est"], state[f"{key}/true"]
        wga_clean = np.minimum(state[f"{key}/clean_acc_aligned"],
                               state[f"{key}/clean_acc_counter"])
        acc_al, acc_co = float(state[f"{key}/acc_aligned"]), float(state[f"{key}/acc_counter"])
        a_est, a_true = _argmax(est[:, 0]), _argmax(true[:, 0])
        wga_orig = min(acc_al, acc_co)
        chosen = wga_clean[int(a_est) - 1] if np.isfinite(a_est) else float("nan")
        drawn = int(state[f"{key}/random_stage"])
        row = {
            "pearson": _pearson(est, true),
            "spearman": _spearman(est, true),
            "relerr_counter": _relerr(est[:, 0], true[:, 0]),
            "relerr_aligned": _relerr(est[:, 1], true[:, 1]),
            "argmax_est": a_est,
            "argmax_true": a_true,
            "ident": float(a_est == a_true) if np.isfinite(a_est + a_true) else float("nan"),
            "picks_spurious": float(a_est == spur) if np.isfinite(a_est) else float("nan"),
            "true_argmax_spurious": (float(a_true == spur) if np.isfinite(a_true)
                                     else float("nan")),
            "spurious_stage": float(spur),
            "acc_aligned": acc_al,
            "acc_counter": acc_co,
            "wga_orig": wga_orig,
            "wga_chosen": float(chosen),
            "wga_random": float(np.mean(wga_clean)),
            "wga_random_draw": float(wga_clean[drawn - 1]),
            "true_counter_spurious": float(true[spur - 1, 0]),
            "n_effects": float(est.size),
        }
        for s in range(len(stages)):
            row[f"wga_clean_s{s + 1}"] = float(wga_clean[s])
            row[f"decay_after_s{s + 1}"] = float(state[f"{key}/decay"][s])
            row[f"true_counter_s{s + 1}"] = float(true[s, 0])
            row[f"est_counter_s{s + 1}"] = float(est[s, 0])
            row[f"train_loss_s{s + 1}"] = float(state[f"{key}/train_loss"][s])
        rows.append(row)
    return rows
