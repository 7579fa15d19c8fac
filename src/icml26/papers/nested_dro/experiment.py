"""Stages of the nested-dro paper: prepare (diabetes), train (all methods), evaluate.

A run is (method, setting, seed). The training/test data of a (setting, seed) are generated
from derive_seed(paper, setting, seed, "data") and are identical for every method (paired
comparisons); the common initialisation (IRLS LAD) is computed from them, so it is identical
across methods too. The five Adam-based methods are one batched optimisation over every run of
the shard whose data have the same shape (rows are independent: see dro.py).
"""

from __future__ import annotations

import numpy as np

from icml26.seeding import derive_seed

from . import data as datasets
from . import dro, logistic

INF = float("inf")
# Adam-based methods: (γ from params or ∞, weighting mode, trimmed?)
ADAM_METHODS = {
    "nested-dro": ("gamma", "optimistic", False),       # the proposed nested DRO
    "wdro": ("gamma", "uniform", False),                # OT only, pessimistic
    "chi2-dro": (INF, "pessimistic", False),            # χ² only, pessimistic (Duchi-Namkoong)
    "or-wdro-proxy": ("gamma", "uniform", True),        # geometric trim, then WDRO
    "optimistic-chi2": (INF, "optimistic", False),      # nested DRO with γ = ∞ (ablation)
}
CLOSED_FORM = ("erm", "huber")
METHODS = tuple(ADAM_METHODS) + CLOSED_FORM


def setting_params(cfg: dict, setting: str) -> dict:
    return {"task": "regression", **cfg["params"], **(cfg["settings"][setting] or {})}


def is_logistic(p: dict) -> bool:
    """The full profile's logistic-regression variant (task: logistic, synthetic data)."""
    if p["task"] not in ("regression", "logistic"):
        raise ValueError(f"unknown task {p['task']!r}; allowed: regression, logistic")
    return p["task"] == "logistic"


def instance(cfg: dict, setting: str, seed: int, data: dict) -> dict:
    """Training and test data of one (setting, seed): the same for every method."""
    p = setting_params(cfg, setting)
    rng = np.random.default_rng(derive_seed(cfg["paper"], setting, seed, "data"))
    if p["dataset"] == "synthetic":
        return logistic.synthetic(p, rng) if is_logistic(p) else datasets.synthetic(p, rng)
    if p["dataset"] == "diabetes" and not is_logistic(p):
        return datasets.diabetes(p, data["diabetes_X"], data["diabetes_y"], rng)
    raise ValueError(f"{cfg['paper']}: unknown dataset {p['dataset']!r} for task {p['task']!r}; "
                     "allowed: synthetic, diabetes (regression only)")


# ---------------------------------------------------------------------------------------------
def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The diabetes arrays if a setting uses them (synthetic data are regenerated per run)."""
    out = {"settings": np.array(list(cfg["settings"]))}
    if any(setting_params(cfg, s)["dataset"] == "diabetes" for s in cfg["settings"]):
        out.update(datasets.load_diabetes_standardised())
    return out


def train(cfg: dict, data: dict, runs: list) -> tuple[dict[str, np.ndarray], list[dict]]:
    state: dict[str, np.ndarray] = {}
    curves: list[dict] = []
    inst: dict[tuple[str, int], dict] = {}
    init: dict[tuple[str, int], np.ndarray] = {}
    for run in runs:
        key = (run.setting, run.seed)
        if key not in inst:
            inst[key] = instance(cfg, run.setting, run.seed, data)
            p = setting_params(cfg, run.setting)
            # common robust start: IRLS LAD (regression); logistic ERM (INFERRED, variant)
            init[key] = (logistic.erm_newton(inst[key]["X"], inst[key]["y"]) if is_logistic(p)
                         else dro.lad_irls(inst[key]["X"], inst[key]["y"], int(p["lad_iters"])))

    # closed-form methods
    for run in runs:
        if run.method in CLOSED_FORM:
            d = inst[(run.setting, run.seed)]
            p = setting_params(cfg, run.setting)
            if is_logistic(p):
                if run.method != "erm":
                    raise ValueError(f"{run.method} has no logistic variant; exclude it from "
                                     f"setting {run.setting!r}")
                theta = logistic.erm_newton(d["X"], d["y"])
            else:
                theta = (dro.ols(d["X"], d["y"]) if run.method == "erm"
                         else dro.huber(d["X"], d["y"], float(p["huber_epsilon"])))
            state[f"{run.key}/theta"] = theta
        elif run.method not in ADAM_METHODS:
            raise ValueError(f"unknown method {run.method!r}; allowed: {', '.join(METHODS)}")

    # Adam-based methods: one batch per data shape and optimiser setting
    groups: dict[tuple, list] = {}
    for run in runs:
        if run.method in ADAM_METHODS:
            d = inst[(run.setting, run.seed)]
            p = setting_params(cfg, run.setting)
            gkey = (d["X"].shape, is_logistic(p), int(p["steps"]), float(p["lr"]),
                    int(p["record_every"]), int(p["bisect_iters"]))
            groups.setdefault(gkey, []).append(run)
    for (_, logit, steps, lr, record_every, iters), group in groups.items():
        X, y, theta0, gamma, mode, eta, mask = [], [], [], [], [], [], []
        for run in group:
            d = inst[(run.setting, run.seed)]
            p = setting_params(cfg, run.setting)
            g, m, trimmed = ADAM_METHODS[run.method]
            X.append(d["X"])
            y.append(d["y"])
            theta0.append(init[(run.setting, run.seed)])
            gamma.append(float(p["gamma"]) if g == "gamma" else INF)
            mode.append(dro.MODES[m])
            eta.append(float(p["eta"]))
            mask.append(dro.geometric_keep(d["X"], None if logit else d["y"],
                                           float(p["trim_frac"])) if trimmed
                        else np.ones(len(d["y"]), dtype=bool))
        theta, w, hist = dro.fit_adam(np.stack(X), np.stack(y), np.stack(theta0),
                                      np.array(gamma), np.array(mode), np.array(eta),
                                      np.stack(mask), steps=steps, lr=lr,
                                      record_every=record_every, iters=iters,
                                      objective=logistic.objective_and_grad if logit else None)
        for b, run in enumerate(group):
            state[f"{run.key}/theta"] = theta[b]
            state[f"{run.key}/w"] = w[b]
            state[f"{run.key}/keep"] = mask[b].astype(np.int8)
            for step, f in hist.items():
                curves.append({**run.as_dict(), "step": int(step), "metric": "objective",
                               "value": float(f[b])})
            d = inst[(run.setting, run.seed)]
            if (run.method == "nested-dro" and run.seed == cfg["seeds"][0]
                    and setting_params(cfg, run.setting)["dataset"] == "synthetic"
                    and not logit):
                # per-sample rows for the mechanism figure (step = sample index)
                resid = d["y"] - d["X"] @ theta[b]
                norm_x = np.linalg.norm(d["X"], axis=1)
                for i in range(len(resid)):
                    for metric, value in (("w", w[b, i]), ("norm_x", norm_x[i]),
                                          ("resid", resid[i]), ("kind", d["kind"][i])):
                        curves.append({**run.as_dict(), "step": i, "metric": metric,
                                       "value": float(value)})
    return state, curves


def objective_change(curves) -> dict[tuple[str, str, int], float]:
    """Per Adam-based run: |F(T) − F(T')| / |F(T)|, the relative change of the recorded
    objective over the last third of the steps (T' = the last recorded step ≤ T − T/3).
    It checks the run length the spec fixes (1500 Adam steps) against the run: a small value
    says the objective had settled. Empty when no objective was recorded."""
    if curves is None or not len(curves):
        return {}
    obj = curves[curves["metric"] == "objective"]
    out = {}
    for (m, s, seed), part in obj.groupby(["method", "setting", "seed"], sort=False):
        steps = part["step"].to_numpy(dtype=int)
        vals = part["value"].to_numpy(dtype=float)
        last = int(steps.max())
        ref = steps[steps <= last - last // 3]
        if last == 0 or not ref.size:
            continue
        f_end, f_ref = vals[steps == last][0], vals[steps == ref.max()][0]
        out[(str(m), str(s), int(seed))] = float(abs(f_end - f_ref) / max(abs(f_end), 1e-300))
    return out


def evaluate(cfg: dict, data: dict, runs: list, state: dict, curves) -> list[dict]:
    """Per run: test MSE (clean test data); synthetic: ‖θ̂ − θ*‖ (all directions and the
    barely explored ones) and the test MSE under perturbed inputs; weighted methods: leverage
    retention (weight on the leverage points / (n_lev/n)), weight on the contaminated points,
    and the fraction of leverage points kept; Adam-based methods: the objective's relative
    change over the last third of the steps (objective_change)."""
    rows = []
    cache: dict[tuple[str, int], dict] = {}
    settled = objective_change(curves)
    for run in runs:
        key = (run.setting, run.seed)
        if key not in cache:
            cache = {key: instance(cfg, run.setting, run.seed, data)}
        d = cache[key]
        theta = state[f"{run.key}/theta"]
        if is_logistic(setting_params(cfg, run.setting)):
            # logistic variant: clean test error and log-loss, error under perturbed inputs
            m = d["y_test"] * (d["X_test"] @ theta)
            out = {"test_error": float(np.mean(m <= 0)),
                   "test_logloss": float(np.mean(logistic.softplus(-m))),
                   "test_error_perturbed": float(np.mean(
                       d["y_test"] * (d["X_test_perturbed"] @ theta) <= 0)),
                   "param_cos": float(theta @ d["theta_star"] / max(
                       np.linalg.norm(theta) * np.linalg.norm(d["theta_star"]), 1e-300))}
        else:
            out = {"test_mse": float(np.mean((d["y_test"] - d["X_test"] @ theta) ** 2))}
        if "theta_star" in d and "test_mse" in out:
            out["param_err"] = float(np.linalg.norm(theta - d["theta_star"]))
            low = datasets.low_directions(len(theta))
            out["param_err_low"] = float(np.linalg.norm(theta[low] - d["theta_star"][low]))
            out["test_mse_perturbed"] = float(
                np.mean((d["y_test"] - d["X_test_perturbed"] @ theta) ** 2))
        n = len(d["y"])
        lev = d["kind"] == datasets.LEVERAGE
        bad = d["kind"] == datasets.OUTLIER
        w = state.get(f"{run.key}/w")
        has_lev = bool(lev.any())
        out["lev_retention"] = (float(w[lev].sum() / (lev.sum() / n))
                                if w is not None and has_lev else np.nan)
        out["outlier_weight"] = float(w[bad].sum()) if w is not None and bad.any() else np.nan
        # fraction of the training points a reweighting method gives zero weight (for notes)
        out["dropped_frac"] = float(np.mean(w <= 1e-12)) if w is not None else np.nan
        keep = state.get(f"{run.key}/keep")
        out["lev_kept_frac"] = (float(keep[lev].mean()) if keep is not None and has_lev
                                else np.nan)
        out["outlier_kept_frac"] = (float(keep[bad].mean()) if keep is not None and bad.any()
                                    else np.nan)
        out["obj_change"] = settled.get((run.method, run.setting, int(run.seed)), np.nan)
        rows.append(out)
    return rows
