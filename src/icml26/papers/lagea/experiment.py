"""Stages of lagea: ridge read-outs (prepare), vectorised Q-learning per shard (train), metrics.

A setting fixes the goal mode (fixed | random), the grid size, the reflector accuracy, the
number of objects per task (1, or 2 for the 2-object variant) and, for the labelled variants
that keep the earlier reading of the env, the env reward and the discount. A run
is (method, setting, seed). Start cells and goals of every episode depend on (setting, seed)
only (``derive_seed(paper, setting, seed, "env")``), so all methods of a seed see the same
episodes; exploration, reflector and similarity noise come from the run's own streams.
"""

from __future__ import annotations

import numpy as np

from icml26.seeding import derive_seed

from . import qlearning, shaping
from . import tasks as T

CURVE_METRICS = ("success", "sr_ema", "rho", "abs_shape", "pos_frac")
FLOATS = ("alpha", "gamma", "random_fraction", "eps_start", "eps_decay", "eps_min", "sim_noise",
          "gamma_fb", "temp_goal", "temp_fb", "alpha_feedback", "alpha_min", "alpha_max",
          "fused_clip", "post_clip", "rho_static", "rho_min", "rho_max", "progress_power",
          "sr_decay", "pos_frac_window", "kf_floor", "goalsim_rho", "spec_clip",
          "spec_rho_scale", "spec_rho_floor", "spec_sr_decay", "spec_window_sd",
          "spec_window_floor", "ridge_lambda")
INTS = ("episodes", "eval_every", "eval_episodes", "jitter", "ridge_states", "horizon",
        "shape_window", "kf_max_frames", "kf_half_window")


def _params(cfg: dict) -> dict:
    p = cfg["params"]
    out = {k: float(p[k]) for k in FLOATS} | {k: int(p[k]) for k in INTS}
    out["env_reward"] = str(p["env_reward"])
    out["tasks"] = [int(k) for k in p["tasks"]]
    return out


def setting_params(cfg: dict, setting: str) -> dict:
    s = cfg["settings"][setting] or {}
    prm = _params(cfg)
    return {"goals": s.get("goals", setting), "size": int(s.get("size", 9)),
            "accuracy": float(s.get("accuracy", 0.8)), "objects": int(s.get("objects", 1)),
            "horizon": int(s.get("horizon", prm["horizon"])),
            "env_reward": str(s.get("env_reward", prm["env_reward"])),
            "gamma": float(s.get("gamma", prm["gamma"]))}


def task_list(cfg: dict, size: int, objects: int = 1) -> list:
    return [T.make_task(k, size, objects) for k in _params(cfg)["tasks"]]


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Ridge read-outs W (GOAL, MISSED_OBJECT, FAILED_PLACEMENT) x phi, one per grid size
    (per-object scores: the 2-object variant reads the same W, see shaping.similarity)."""
    prm = _params(cfg)
    sizes = sorted({setting_params(cfg, s)["size"] for s in cfg["settings"]})
    return {f"W/{n}": shaping.fit_readouts(task_list(cfg, n), prm["ridge_states"],
                                           prm["ridge_lambda"], rng) for n in sizes}


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list[dict]]:
    prm, paper = _params(cfg), cfg["paper"]
    points = qlearning.eval_points(prm["episodes"], prm["eval_every"])
    state, curves = {}, []
    for setting in dict.fromkeys(r.setting for r in runs):
        sp = setting_params(cfg, setting)
        tl = task_list(cfg, sp["size"], sp["objects"])
        group = [r for r in runs if r.setting == setting]
        specs = []
        for run in group:
            env_rng = np.random.default_rng(derive_seed(paper, setting, run.seed, "env"))
            specs.append({
                "flags": shaping.METHODS[run.method], "accuracy": sp["accuracy"],
                "env": qlearning.env_stream(tl, sp["goals"], prm["episodes"], points,
                                            prm["eval_episodes"], env_rng),
                "rng": np.random.default_rng(run.rng_seed(paper, "agent")),
                "eval_rng": np.random.default_rng(run.rng_seed(paper, "eval")),
            })
        over = {k: sp[k] for k in ("horizon", "env_reward", "gamma")}
        out = qlearning.train_runs(tl, specs, prm | over, data[f"W/{sp['size']}"])
        K = len(tl)
        for i, run in enumerate(group):
            sl = slice(i * K, (i + 1) * K)
            state[f"{run.key}/Q"] = out["Q"][sl].astype(np.float32)
            for name in ("eval_success", "eval_sr_ema", "ep_success", "ep_rho", "ep_abs_shape",
                         "ep_pos_frac"):
                state[f"{run.key}/{name}"] = out[name][sl]
            state[f"{run.key}/reflector"] = np.stack(
                [out["n_reflections"][sl], out["n_type_correct"][sl], out["n_rejected"][sl],
                 out["n_fail_reflections"][sl]], 1)
            curves.extend(_curve_rows(run, out, sl, points, prm))
    return state, curves


def _curve_rows(run, out, sl, points, prm):
    """Per (task, evaluation point) and task-averaged: greedy success, SR_ema, and the mean rho,
    |r_shape| and positive-progress share of the episodes since the previous evaluation point
    (the spec's 25-ep bins)."""
    rows, prev = [], 0
    for j, ep in enumerate(points):
        values = {"success": out["eval_success"][sl, j], "sr_ema": out["eval_sr_ema"][sl, j],
                  "rho": out["ep_rho"][sl, prev:ep].mean(1),
                  "abs_shape": out["ep_abs_shape"][sl, prev:ep].mean(1),
                  "pos_frac": out["ep_pos_frac"][sl, prev:ep].mean(1)}
        prev = ep
        for name in CURVE_METRICS:
            v = values[name]
            rows.append({**run.as_dict(), "step": int(ep), "metric": name,
                         "value": float(v.mean())})
            rows.extend({**run.as_dict(), "step": int(ep), "metric": f"{name}_task{k}",
                         "value": float(x)} for k, x in zip(prm["tasks"], v, strict=True))
    return rows


def evaluate(cfg: dict, data: dict, runs: list, state: dict, curves) -> list[dict]:
    """Final success, success AUC, episodes-to-50%, shaping magnitude early/late, reflector."""
    prm = _params(cfg)
    points = np.array(qlearning.eval_points(prm["episodes"], prm["eval_every"]))
    w = min(prm["shape_window"], prm["episodes"])
    out = []
    for run in runs:
        succ = state[f"{run.key}/eval_success"]          # (K, P)
        mean_curve = succ.mean(0)                         # task-averaged greedy success
        hit = np.flatnonzero(mean_curve >= 0.5)
        ab = state[f"{run.key}/ep_abs_shape"]             # (K, E)
        rho = state[f"{run.key}/ep_rho"]
        refl = state[f"{run.key}/reflector"].sum(0)
        out.append({
            "final_success": float(mean_curve[-1]),
            "auc": float(succ.mean()),
            "episodes_to_50": float(points[hit[0]] if hit.size else prm["episodes"] + 25),
            "abs_shape_first": float(ab[:, :w].mean()),
            "abs_shape_last": float(ab[:, -w:].mean()),
            "rho_first": float(rho[:, :w].mean()),
            "rho_last": float(rho[:, -w:].mean()),
            "train_success_last": float(state[f"{run.key}/ep_success"][:, -w:].mean()),
            "reflections": float(refl[0]),
            "reflector_type_acc": float(refl[1] / refl[3]) if refl[3] else float("nan"),
            "rejected_reflections": float(refl[2]),
        })
    return out
