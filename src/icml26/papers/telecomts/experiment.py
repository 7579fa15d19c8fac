"""Stages of the telecomts paper: prepare (example windows), train (classifiers, probe),
evaluate (metrics from the stored test predictions).

A run is (representation, model setting, seed): methods are the representations RAW / INST /
INST+SCALE, settings the model families (FEAT-GBM, CNN; at full also the PatchTST-like
transformer, where the representation picks RevIN off / on / on + scale tokens) with the tasks
each runs. The data of a seed (TelecomTS-mini train / test windows, control windows, and at
full the 1-hour traces of the localisation task) derive from derive_seed(paper, stream, seed)
only, so every representation and model of a seed sees the same data (paired comparisons) and
a job regenerates them bit for bit. torch is imported only when a shard holds CNN or
transformer runs; evaluate is numpy.
"""

from __future__ import annotations

import numpy as np

from icml26.seeding import derive_seed

from . import generator as gen
from . import localise as loc
from . import metrics as mt
from . import probe
from .represent import fit_raw, gbm_inputs, instance, log_transform, raw, represent

TASKS = ("detection", "rca", "localisation")
WINDOW_TASKS = ("detection", "rca")       # tasks on independent windows
TORCH_MODELS = ("cnn", "patchtst")
N_CLASSES = {"detection": 2, "rca": len(gen.TYPES)}
EXCERPT = "trace_"                         # curve rows of the localisation figure's excerpt


def P(cfg):
    return cfg["params"]


def seed_data(cfg, seed):
    """Train / test windows of a seed with the RAW representation (training statistics)."""
    p = P(cfg)
    paper = cfg["paper"]
    train = gen.dataset(np.random.default_rng(derive_seed(paper, "train", seed)),
                        int(p["n_train_normal"]), int(p["n_train_per_type"]), p)
    test = gen.dataset(np.random.default_rng(derive_seed(paper, "test", seed)),
                       int(p["n_test_normal"]), int(p["n_test_per_type"]), p)
    std = fit_raw(train["x"])
    train["z"], test["z"] = raw(train["x"], std), raw(test["x"], std)
    return train, test


def task_rows(split, task):
    """(row indices, labels) of a task: detection uses every window (anomalous = 1), RCA
    the anomalous ones (label = type 0..9)."""
    if task == "detection":
        return np.arange(len(split["type"])), (split["type"] >= 0).astype(np.int64)
    idx = np.flatnonzero(split["type"] >= 0)
    return idx, split["type"][idx].astype(np.int64)


# ---------------------------------------------------------------------------------------------
def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Example windows for Fig. 2: one normal session, and the same session with each anomaly
    type injected over the whole window (onset ``example_elapsed_s`` seconds before it)."""
    p = P(cfg)
    T = int(p["T"])
    n = len(gen.TYPES) + 1
    base = gen.normal_windows(np.random.default_rng(derive_seed(cfg["paper"], "example")), 1, p)
    x = np.repeat(base, n, axis=0)
    types = np.r_[-1, np.arange(len(gen.TYPES))]
    t = np.broadcast_to(float(p["example_elapsed_s"]) + np.arange(T) / gen.HZ, (n, T)).copy()
    m = np.ones((n, T), dtype=bool)
    m[0], t[0] = False, 0.0
    gen.inject(np.random.default_rng(derive_seed(cfg["paper"], "example-inject")), x, types,
               t, m, p)
    return {"examples/x": x, "examples/type": types,
            "examples/inst": instance(log_transform(x), float(p["inst_eps"]))}


# ---------------------------------------------------------------------------------------------
def _gbm(cfg, run, task, xtr, ytr, xte):
    from sklearn.ensemble import HistGradientBoostingClassifier

    p = P(cfg)
    clf = HistGradientBoostingClassifier(
        max_iter=int(p["gbm_max_iter"]), learning_rate=float(p["gbm_lr"]),
        max_bins=int(p["gbm_max_bins"]), early_stopping=True,
        validation_fraction=float(p["gbm_val_frac"]),
        n_iter_no_change=int(p["gbm_patience"]),
        random_state=run.rng_seed(cfg["paper"], f"gbm-{task}") % (2**32))
    clf.fit(xtr, ytr)
    proba = clf.predict_proba(xte)
    return proba, [{"metric": f"gbm_iters_{task}", "step": 0, "value": float(clf.n_iter_)}]


def _cnn(cfg, run, task, ztr, str_, ytr, zte, ste, device):
    from .cnn import predict_proba, train_cnn

    model, losses = train_cnn(ztr, str_, ytr, N_CLASSES[task], P(cfg),
                              run.rng_seed(cfg["paper"], f"cnn-init-{task}"),
                              np.random.default_rng(run.rng_seed(cfg["paper"],
                                                                 f"cnn-batches-{task}")),
                              device)
    curves = [{"metric": f"cnn_loss_{task}", "step": e + 1, "value": v}
              for e, v in enumerate(losses)]
    return predict_proba(model, zte, ste, device), curves


def _patchtst(cfg, run, task, z_tr, ytr, z_te, device):
    """The PatchTST-like classifier on RAW windows; the run's representation picks RevIN off
    (raw), on (inst) or on with the scale scalars before the head (inst-scale)."""
    from .cnn import predict_proba
    from .patchtst import train_patchtst

    p = P(cfg)
    revin = run.method != "raw"
    scale_tr = scale_te = None
    if run.method == "inst-scale":
        scale_tr = represent(z_tr, "inst-scale", float(p["inst_eps"]), float(p["scale_eps"]))[1]
        scale_te = represent(z_te, "inst-scale", float(p["inst_eps"]), float(p["scale_eps"]))[1]
    model, losses = train_patchtst(
        z_tr, scale_tr, ytr, N_CLASSES[task], p, revin,
        run.rng_seed(cfg["paper"], f"patchtst-init-{task}"),
        np.random.default_rng(run.rng_seed(cfg["paper"], f"patchtst-batches-{task}")), device)
    curves = [{"metric": f"patchtst_loss_{task}", "step": e + 1, "value": v}
              for e, v in enumerate(losses)]
    return predict_proba(model, z_te, scale_te, device), curves


def localisation(cfg, run, traces, caches) -> tuple[dict, list[dict]]:
    """FEAT-GBM window detector on the training traces of a seed, per-step scores on the
    validation traces (threshold chosen there) and on the test traces (stored for evaluate).
    ``caches`` keeps the standardiser, windows and features of the seed across the
    representations. Returns (state arrays without the run prefix, curve rows)."""
    p = P(cfg)
    T, stride = int(p["T"]), int(p["loc_stride"])
    eps_i, eps_s = float(p["inst_eps"]), float(p["scale_eps"])
    if "win" not in caches:
        std = fit_raw(traces["train"][0])
        win = {}
        for split in loc.SPLITS:
            x, typ = traces[split]
            w, starts = loc.cut(raw(x, std), T, stride)
            win[split] = (w, starts, typ >= 0)
        caches["win"] = win
        caches["feat"] = {split: {} for split in loc.SPLITS}
    win, feat = caches["win"], caches["feat"]
    f = {split: gbm_inputs(win[split][0], run.method, eps_i, eps_s, feat[split])
         for split in loc.SPLITS}
    w_tr, starts, anom_tr = win["train"]
    ytr = loc.window_labels(anom_tr, starts, T, float(p["loc_label_frac"]))
    n_val = len(f["val"])
    proba, rows = _gbm(cfg, run, "localisation", f["train"], ytr,
                       np.concatenate([f["val"], f["test"]]))
    L = anom_tr.shape[1]
    score = {}
    for split, part in (("val", proba[:n_val, 1]), ("test", proba[n_val:, 1])):
        n_tr = win[split][2].shape[0]
        score[split] = loc.step_scores(part.reshape(n_tr, -1), starts, T, L)
    thr, val_f1 = loc.choose_threshold(win["val"][2], score["val"], loc.threshold_grid(p))
    state = {"localisation/score": score["test"],
             "localisation/label": win["test"][2].astype(np.int8),
             "localisation/threshold": np.asarray(thr),
             "localisation/val_f1": np.asarray(val_f1),
             "localisation/win_pos_frac": np.asarray(float(ytr.mean()))}
    state.update({f"extra/{k}": np.asarray(v) for k, v in traces["stats"].items()})
    if run.seed == cfg["seeds"][0]:        # an excerpt of the first test trace for the figure
        n = min(L, int(round(float(p["loc_excerpt_s"]) * gen.HZ)))
        rows += [{"metric": f"{EXCERPT}score", "step": k, "value": float(v)}
                 for k, v in enumerate(score["test"][0, :n])]
        rows += [{"metric": f"{EXCERPT}label", "step": k, "value": float(v)}
                 for k, v in enumerate(win["test"][2][0, :n])]
    return state, rows


def seed_extras(cfg, seed, train, test, cache=None) -> dict:
    """Per-seed quantities that do not depend on the representation: the forecasting probe,
    the data-property checks and the INST premise (mean / s.d. features constant)."""
    p = P(cfg)
    paper = cfg["paper"]
    lb, hz = int(p["lookback"]), int(p["horizon"])
    out = {}
    normal_tr, normal_te = train["x"][train["type"] < 0], test["x"][test["type"] < 0]
    g_tr, g_te = log_transform(normal_tr), log_transform(normal_te)
    args = (lb, hz, int(p["ridge_lags"]), float(p["ridge_alpha"]), float(p["probe_val_frac"]))
    for name in p["probe_kpis"]:
        c = gen.K[name]
        res = probe.skill(g_tr[:, c, -(lb + hz):], g_te[:, c, -(lb + hz):], *args)
        out.update({f"probe_{k}_{name}": v for k, v in res.items()})
    ctl_tr = gen.control_windows(np.random.default_rng(derive_seed(paper, "control-train", seed)),
                                 normal_tr.shape[0], lb + hz)
    ctl_te = gen.control_windows(np.random.default_rng(derive_seed(paper, "control-test", seed)),
                                 normal_te.shape[0], lb + hz)
    res = probe.skill(ctl_tr, ctl_te, *args)
    out.update({f"probe_{k}_control": v for k, v in res.items()})
    # data properties (spec): exact zeros per KPI (physical units, all training windows) and
    # the lag-1 autocorrelation of log1p bytes (normal training windows)
    for name in gen.KPIS:
        out[f"zero_frac_{name}"] = float((train["x"][:, gen.K[name]] == 0).mean())
    from icml26.timeseries.features import lag1_autocorr

    for name in ("TX_Bytes", "RX_Bytes"):
        out[f"acf1_log_{name}"] = float(lag1_autocorr(g_tr[:, gen.K[name]]).mean())
    # premise: under INST the mean and s.d. features are constant (0 and 1; 0 for a flat
    # channel) and carry nothing
    f = gbm_inputs(test["z"], "inst", float(p["inst_eps"]), float(p["scale_eps"]), cache)
    f = f.reshape(f.shape[0], len(gen.KPIS), -1)
    sd_ok = np.where(f[..., 1] > 0.5, 1.0, 0.0)
    out["inst_meansd_dev"] = float(max(np.abs(f[..., 0]).max(), np.abs(f[..., 1] - sd_ok).max()))
    return out


def train(cfg: dict, data: dict, runs: list) -> tuple[dict[str, np.ndarray], list[dict]]:
    p = P(cfg)
    state: dict[str, np.ndarray] = {}
    curves: list[dict] = []
    eps_i, eps_s = float(p["inst_eps"]), float(p["scale_eps"])
    device = None
    if any(cfg["settings"][r.setting]["model"] in TORCH_MODELS for r in runs):
        import torch

        from icml26.seeding import torch_device

        torch.set_num_threads(1)
        device = torch_device(cfg["device"])
    for seed in sorted({r.seed for r in runs}):
        seed_runs = [r for r in runs if r.seed == seed]
        windows = any(t in WINDOW_TASKS for r in seed_runs
                      for t in cfg["settings"][r.setting]["tasks"])
        train_d, test_d = seed_data(cfg, seed) if windows else (None, None)
        feats: dict = {}
        cache_tr: dict = {}
        cache_te: dict = {}
        extras = None
        traces, loc_caches = None, {}
        for run in seed_runs:
            setting = cfg["settings"][run.setting]
            for task in setting["tasks"]:
                if task == "localisation":
                    if setting["model"] != "gbm":
                        raise ValueError(f"setting {run.setting!r}: localisation runs with "
                                         "model gbm only")
                    traces = traces or loc.seed_traces(cfg, seed)
                    st, rows = localisation(cfg, run, traces, loc_caches)
                    state.update({f"{run.key}/{k}": v for k, v in st.items()})
                    curves += [{**run.as_dict(), **r} for r in rows]
                    continue
                itr, ytr = task_rows(train_d, task)
                ite, yte = task_rows(test_d, task)
                if setting["model"] == "gbm":
                    if run.method not in feats:
                        feats[run.method] = (
                            gbm_inputs(train_d["z"], run.method, eps_i, eps_s, cache_tr),
                            gbm_inputs(test_d["z"], run.method, eps_i, eps_s, cache_te))
                    ftr, fte = feats[run.method]
                    proba, rows = _gbm(cfg, run, task, ftr[itr], ytr, fte[ite])
                elif setting["model"] == "patchtst":
                    proba, rows = _patchtst(cfg, run, task, train_d["z"][itr], ytr,
                                            test_d["z"][ite], device)
                else:
                    ztr, str_ = represent(train_d["z"][itr], run.method, eps_i, eps_s)
                    zte, ste = represent(test_d["z"][ite], run.method, eps_i, eps_s)
                    proba, rows = _cnn(cfg, run, task, ztr, str_, ytr, zte, ste, device)
                state[f"{run.key}/{task}/proba"] = proba.astype(np.float64)
                state[f"{run.key}/{task}/y"] = yte
                state[f"{run.key}/{task}/full"] = test_d["full"][ite]
                curves += [{**run.as_dict(), **r} for r in rows]
            if setting["model"] == "gbm" and any(t in WINDOW_TASKS for t in setting["tasks"]):
                # the probe and data checks, once per seed
                extras = extras or seed_extras(cfg, seed, train_d, test_d, cache_te)
                for k, v in extras.items():
                    state[f"{run.key}/extra/{k}"] = np.asarray(v)
    return state, curves


def evaluate(cfg: dict, data: dict, runs: list, state: dict, curves) -> list[dict]:
    p = P(cfg)
    out = []
    for run in runs:
        row: dict = {}
        for task in cfg["settings"][run.setting]["tasks"]:
            if task == "localisation":
                thr = float(state[f"{run.key}/localisation/threshold"])
                row.update(mt.localisation(state[f"{run.key}/localisation/label"],
                                           state[f"{run.key}/localisation/score"], thr))
                row["loc_threshold"] = thr
                row["loc_val_f1"] = float(state[f"{run.key}/localisation/val_f1"])
                row["loc_win_pos_frac"] = float(state[f"{run.key}/localisation/win_pos_frac"])
                continue
            proba = state[f"{run.key}/{task}/proba"]
            y, full = state[f"{run.key}/{task}/y"], state[f"{run.key}/{task}/full"]
            if task == "detection":
                row.update(mt.detection(y, proba[:, 1], float(p["prevalence"])))
            else:
                res = mt.rca(y, proba, full, len(gen.TYPES), gen.MILD, gen.SEVERE)
                cm = [res.pop(f"cm_{i}_{j}") for i in range(len(gen.TYPES))
                      for j in range(len(gen.TYPES))]
                row.update(res)
                # one string column (kept out of the numeric summary): counts, rows = true
                row["rca_cm"] = " ".join("nan" if not np.isfinite(v) else str(int(v))
                                         for v in cm)
        prefix = f"{run.key}/extra/"
        row.update({k[len(prefix):]: float(v) for k, v in state.items() if k.startswith(prefix)})
        part = curves[(curves["method"] == run.method) & (curves["setting"] == run.setting)
                      & (curves["seed"] == run.seed)]
        for metric in sorted(m for m in set(part["metric"]) if not m.startswith(EXCERPT)):
            vals = part.loc[part["metric"] == metric, "value"].to_numpy(float)
            row[metric if metric.startswith("gbm_iters") else f"{metric}_final"] = float(vals[-1])
        out.append(row)
    return out
