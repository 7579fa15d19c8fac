"""Stages of sad-flower: demonstrations and test problems, FM training + guided sampling, metrics.

A setting is a planning system (unicycle, double integrator or 2-link arm; horizon H, and
optionally its own action bounds); a run is (method, system, seed). The
seed fixes the test problems (start/goal, unseen obstacles) and the initial noise of sampling,
shared by all methods (paired comparison). The FM model of a seed is model ``seed % n_models``,
trained with a fixed seed of its own, so every shard that needs it trains the same network
(results do not depend on sharding; default shards by setting = one train job).
"""

from __future__ import annotations

import numpy as np

from icml26.errors import ConfigError
from icml26.grid import Run
from icml26.seeding import derive_seed
from icml26.seeding import rng as named_rng

from . import system

METHODS_QP = {"SAD-Flower", "SAD-noCLF", "SAD-noAct"}  # official gains, start and grid
SPEC_GAIN = "SAD-specgain"  # SAD-Flower with the spec's gain, start, grid (our earlier reading)
TOL_H = 1e-3      # a constraint counts as satisfied if h >= -1e-3
TOL_CONS = 1e-2   # consistency: max_t ||x_{t+1} - f(x_t, u_t)|| <= 1e-2
GOAL_TOL = 0.1    # executed success: final distance to goal <= 0.1
N_EXAMPLES = 6    # plans of Fig. 1
RECORD_FINE = 0.9  # Fig. 2 records every Euler step from here on (the official window is 0.95-1)


# per-setting overrides: the action bounds (b1, b2) of a system, at test time and in the demos
SETTING_KEYS = ("v_max", "om_max", "demo_v_max", "demo_om_max")


def _p(cfg, setting=None):
    p = dict(cfg["params"])
    if setting is not None:
        s = cfg["settings"][setting] or {}
        p.update({k: s[k] for k in SETTING_KEYS if k in s})
    out = {
        "n_demos": int(p["n_demos"]), "train_steps": int(p["train_steps"]),
        "batch": int(p["batch"]), "lr": float(p["lr"]), "hidden": int(p["hidden"]),
        "ema_decay": float(p["ema_decay"]),
        "n_models": int(p["n_models"]), "n_problems": int(p["n_problems"]),
        "n_steps": int(p["n_steps"]), "tau_on": float(p["tau_on"]),
        "c_cbf_state": float(p["c_cbf_state"]), "c_cbf_action": float(p["c_cbf_action"]),
        "c_clf": float(p["c_clf"]), "pt_cbf_min": float(p["pt_cbf_min"]),
        "pt_clf_min": float(p["pt_clf_min"]), "pt_ord1": float(p["pt_ord1"]),
        "pt_eps": float(p["pt_eps"]), "slack_clf": bool(p["slack_clf"]),
        "active_below": float(p["active_below"]),
        "spec_n_steps": int(p["spec_n_steps"]), "spec_tau_on": float(p["spec_tau_on"]),
        "c": float(p["c"]), "delta": float(p["delta"]),
        "spec_active_below": float(p["spec_active_below"]),
        "tau_on_baselines": float(p["tau_on_baselines"]),
        "v_max": float(p["v_max"]), "om_max": float(p["om_max"]),
        "sweeps": int(p["sweeps"]), "qp_exact": bool(p["qp_exact"]),
        "qp_tol": float(p["qp_tol"]),
        "lam_grad": float(p["lam_grad"]), "mu_states": float(p["mu_states"]),
        "n_gn": int(p["n_gn"]), "n_obs": int(p["n_obs"]),
        "demo_v_max": float(p["demo_v_max"]), "demo_om_max": float(p["demo_om_max"]),
        "loss_every": int(p.get("loss_every", 100)),
    }
    _check_guided(out)
    return out


def _check_guided(p):
    """Every guided method must act on at least one Euler step (else it silently equals FM)."""
    from .sad_flower import guided_steps

    for n, tau_on, strict, what in (
            (p["n_steps"], p["tau_on"], True, "n_steps / tau_on (SAD-Flower)"),
            (p["spec_n_steps"], p["spec_tau_on"], False, "spec_n_steps / spec_tau_on"),
            (p["n_steps"], p["tau_on_baselines"], False, "n_steps / tau_on_baselines")):
        if not len(guided_steps(n, tau_on, strict)):
            raise ConfigError(f"sad-flower: {what} = {n} / {tau_on:g} leaves no Euler step "
                              f"tau_k = k / {n} with tau_k {'>' if strict else '>='} "
                              f"{tau_on:g}; raise the step count or lower the start time")


def _system(cfg, setting):
    """(system object, horizon H) of a setting."""
    s = cfg["settings"][setting] or {}
    return system.get(s.get("system", "unicycle")), int(s.get("H", 24))


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Demonstrations (obstacle-free) per system and test problems + initial noise per seed."""
    out = {}
    for setting in cfg["settings"]:
        p = _p(cfg, setting)
        sysm, H = _system(cfg, setting)
        x0, g, states, actions = system.demonstrations(
            named_rng(cfg["paper"], setting, "demos"), p["n_demos"], H,
            v_max=p["demo_v_max"], om_max=p["demo_om_max"], sysm=sysm)
        X = system.flatten(states, actions)
        cond = np.concatenate([x0, g], 1)
        out.update({
            f"{setting}/demo_x0": x0, f"{setting}/demo_goal": g,
            f"{setting}/demo_states": states, f"{setting}/demo_actions": actions,
            f"{setting}/plan_mean": X.mean(0), f"{setting}/plan_std": X.std(0) + 1e-6,
            f"{setting}/cond_mean": cond.mean(0), f"{setting}/cond_std": cond.std(0) + 1e-6,
        })
        for seed in cfg["seeds"]:
            r = named_rng(cfg["paper"], setting, seed, "problems")
            px0, pg, pc, pr = system.test_problems(r, p["n_problems"], n_obs=p["n_obs"],
                                                   sysm=sysm)
            noise = named_rng(cfg["paper"], setting, seed, "noise").standard_normal(
                (p["n_problems"], (sysm.sx + sysm.su) * H))
            out.update({
                f"{setting}/{seed}/x0": px0, f"{setting}/{seed}/goal": pg,
                f"{setting}/{seed}/centres": pc, f"{setting}/{seed}/radii": pr,
                f"{setting}/{seed}/noise": noise,
            })
    return out


def _problems(cfg, data, setting, seed):
    from .sad_flower import Problems

    p = _p(cfg, setting)
    return Problems(x0=data[f"{setting}/{seed}/x0"], goal=data[f"{setting}/{seed}/goal"],
                    centres=data[f"{setting}/{seed}/centres"],
                    radii=data[f"{setting}/{seed}/radii"], v_max=p["v_max"], om_max=p["om_max"],
                    sysm=_system(cfg, setting)[0])


def official_gains(p):
    """tau -> (mu_obs, mu_act, mu_clf): the official gains (CBF_CLF_generator.py) with the
    constants of the config (eval_umaze_SADFlower.sh) and T = the last evaluation time + pt_eps."""
    from .sad_flower import official_gain, prescribed_time

    T = prescribed_time(p["n_steps"], p["pt_eps"])

    def gain(tau):
        return (official_gain(tau, p["c_cbf_state"], p["pt_cbf_min"], p["pt_ord1"], T),
                official_gain(tau, p["c_cbf_action"], p["pt_cbf_min"], p["pt_ord1"], T),
                official_gain(tau, p["c_clf"], p["pt_clf_min"], p["pt_ord1"], T))

    return gain


def n_steps_of(method, p):
    """Euler steps of a method: the spec-gain variant keeps the spec's grid."""
    return p["spec_n_steps"] if method == SPEC_GAIN else p["n_steps"]


def _sample(method, velocity, Z0, prob, std, p, record, fm_plan, stats):
    """One method's plans (standardised) and per-plan mean slack. ``fm_plan``: the unguided
    plan from the same noise on the same grid (FM, and the start of FM+proj)."""
    from . import baselines as bl
    from .sad_flower import Rows, guided_sample, prescribed_gain

    zero = np.zeros(Z0.shape[0])
    n = n_steps_of(method, p)
    if method == "FM":
        return fm_plan, zero
    if method == "FM+proj":  # spec baseline: the spec's row filter and CLF slack
        rows = Rows(sweeps=p["sweeps"], active_below=p["spec_active_below"], slack=True)
        return bl.project(fm_plan, prob, std, p["n_gn"], rows), zero
    if method == "GradGuide":  # spec: "for tau >= 0.3" (no official code)
        return bl.gradient_guided_sample(velocity, Z0, prob, std, n, p["lam_grad"],
                                         p["tau_on_baselines"], record), zero
    if method == "CBF-states-only":
        return bl.cbf_states_only_sample(velocity, Z0, prob, std, n, p["mu_states"],
                                         p["tau_on_baselines"], record, stats), zero
    if method in METHODS_QP:  # official: separate gains, hard CLF, every row, tau > start
        rows = Rows(obstacles=True, actions=method != "SAD-noAct", clf=method != "SAD-noCLF",
                    slack=p["slack_clf"], active_below=p["active_below"], sweeps=p["sweeps"],
                    exact=p["qp_exact"], tol=p["qp_tol"])
        return guided_sample(velocity, Z0, prob, std, n, rows, official_gains(p),
                             tau_on=p["tau_on"], record=record, strict=True, stats=stats)
    if method == SPEC_GAIN:  # the spec's reading: one gain c / (1 - tau + delta), slack
        rows = Rows(slack=True, active_below=p["spec_active_below"], sweeps=p["sweeps"])
        return guided_sample(velocity, Z0, prob, std, n, rows,
                             lambda tau: prescribed_gain(tau, p["c"], p["delta"]),
                             tau_on=p["spec_tau_on"], record=record, strict=False,
                             stats=stats)
    raise ValueError(f"sad-flower: unknown method {method!r}")


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list[dict]]:
    """Train the FM model(s) needed by the shard, then sample every run's plans."""
    import torch

    from icml26.seeding import torch_device

    from . import flow
    from .baselines import fm_sample
    from .sad_flower import Standardiser

    torch.set_num_threads(1)
    dev = torch_device(cfg["device"])  # the FM networks; the guided sampler is numpy (CPU)
    paper = cfg["paper"]
    state, curves = {}, []
    nets, losses, fm_cache = {}, {}, {}
    for run in runs:
        s = run.setting
        p = _p(cfg, s)
        sysm, H = _system(cfg, s)
        std = Standardiser(data[f"{s}/plan_mean"], data[f"{s}/plan_std"], H, sysm.sx)
        cm, cs = data[f"{s}/cond_mean"], data[f"{s}/cond_std"]
        model = int(run.seed) % p["n_models"]
        if (s, model) not in nets:
            Z1 = std.to_z(data[f"{s}/demo_states"], data[f"{s}/demo_actions"])
            cond = (np.concatenate([data[f"{s}/demo_x0"], data[f"{s}/demo_goal"]], 1) - cm) / cs
            nets[s, model], losses[s, model] = flow.train_fm(
                Z1, cond, derive_seed(paper, s, "fm", model), p["train_steps"], p["batch"],
                p["lr"], p["hidden"], device=dev, ema_decay=p["ema_decay"])
        net = nets[s, model]
        prob = _problems(cfg, data, s, run.seed)
        cond = (np.concatenate([prob.x0, prob.goal], 1) - cm) / cs
        velocity = flow.velocity_fn(net, cond)
        Z0 = data[f"{s}/{run.seed}/noise"]
        n = n_steps_of(run.method, p)
        if (s, run.seed, n) not in fm_cache:  # the unguided plan from the same noise and grid
            fm_rec = _Recorder(Run("FM", s, run.seed), prob, std, n)
            fm_cache[s, run.seed, n] = fm_sample(velocity, Z0, n, fm_rec), fm_rec.rows
        fm_plan, fm_rows = fm_cache[s, run.seed, n]
        rec = _Recorder(run, prob, std, n)
        stats = {}
        Z, slack = _sample(run.method, velocity, Z0, prob, std, p, rec, fm_plan, stats)
        if run.method == "FM":
            rec.rows = [{**r, **run.as_dict()} for r in fm_rows]
        states, actions = std.to_x(Z)
        fm_states, fm_actions = std.to_x(fm_plan)
        X, X_fm = system.flatten(states, actions), system.flatten(fm_states, fm_actions)
        state[f"{run.key}/states"] = states
        state[f"{run.key}/actions"] = actions
        state[f"{run.key}/slack"] = slack
        # 0 for the methods that solve no QP inside the flow (FM, FM+proj, GradGuide)
        state[f"{run.key}/qp_residual"] = stats.get("qp_residual", np.zeros(len(slack)))
        state[f"{run.key}/intervention"] = (np.linalg.norm(X - X_fm, axis=1)
                                            / np.linalg.norm(X_fm, axis=1))
        curves.extend(rec.rows)
        loss = losses[s, model]
        curves.extend({**run.as_dict(), "step": int(i + 1), "metric": "fm_loss",
                       "value": float(loss[max(0, i - p["loss_every"] + 1): i + 1].mean())}
                      for i in range(p["loss_every"] - 1, len(loss), p["loss_every"]))
        if run.seed == cfg["seeds"][0]:
            curves.extend(_example_rows(run, prob, states))
    return state, curves


class _Recorder:
    """Constraint values of plan 0 (Fig. 2), the batch-median V and the batch-mean slack, at
    every Euler step with tau >= RECORD_FINE and at the end, and at every ``every``-th step
    before that (every = n_steps // 30: the whole grid when it has <= 59 steps)."""

    def __init__(self, run, prob, std, n_steps):
        self.run, self.prob, self.std, self.rows = run, prob, std, []
        self.n_steps, self.every = n_steps, max(1, n_steps // 30)

    def __call__(self, k, tau, Z, slack):
        if not (k % self.every == 0 or tau >= RECORD_FINE - 1e-9 or k == self.n_steps):
            return
        states, actions = self.std.to_x(Z[:1])
        sub = _first(self.prob)
        sysm = sub.sysm
        h_obs = system.obstacle_h(states, sub.centres, sub.radii, sysm).min()
        h_act = system.action_h(actions, sub.v_max, sub.om_max, sysm).min()
        cons = system.consistency_error(sub.x0, states, actions, sysm)[0]
        all_states, all_actions = self.std.to_x(Z)
        V = system.clf(self.prob.x0, all_states, all_actions, sysm)[0]
        base = self.run.as_dict()
        for metric, value in (("tau", tau), ("median_V", float(np.median(V))),
                              ("plan0_min_h_obs", h_obs),
                              ("plan0_min_h_act", h_act), ("plan0_consistency", cons),
                              ("mean_slack", float(np.mean(slack)))):
            self.rows.append({**base, "step": int(k), "metric": metric, "value": float(value)})


def _first(prob):
    from .sad_flower import Problems

    return Problems(prob.x0[:1], prob.goal[:1], prob.centres[:1], prob.radii[:1],
                    prob.v_max, prob.om_max, prob.sysm)


def _example_rows(run, prob, states):
    """Plans of the first problems with their obstacles (curve rows, for Fig. 1)."""
    rows, base = [], run.as_dict()
    for i in range(min(N_EXAMPLES, states.shape[0])):
        path = prob.sysm.position(np.vstack([prob.x0[i, None], states[i]]))
        for t, (x, y) in enumerate(path):
            rows.append({**base, "step": t, "metric": f"ex{i}/px", "value": float(x)})
            rows.append({**base, "step": t, "metric": f"ex{i}/py", "value": float(y)})
        for o in range(prob.radii.shape[1]):
            for name, val in (("cx", prob.centres[i, o, 0]), ("cy", prob.centres[i, o, 1]),
                              ("r", prob.radii[i, o])):
                rows.append({**base, "step": o, "metric": f"ex{i}/{name}", "value": float(val)})
        for j in range(2):
            rows.append({**base, "step": j, "metric": f"ex{i}/goal",
                         "value": float(prob.goal[i, j])})
    return rows


def plan_metrics(prob, states, actions) -> dict[str, np.ndarray]:
    """Per-plan metrics of the spec (numpy arrays over the batch)."""
    sysm = prob.sysm
    safe = system.obstacle_h(states, prob.centres, prob.radii, sysm).min(axis=(1, 2)) >= -TOL_H
    adm = system.action_h(actions, prob.v_max, prob.om_max, sysm).min(axis=(1, 2)) >= -TOL_H
    cons = system.consistency_error(prob.x0, states, actions, sysm)
    clipped = system.clip_actions(actions, prob.v_max, prob.om_max, sysm)
    executed = system.rollout(prob.x0, clipped, sysm)
    # INFERRED: a collision is h < -1e-3, the same tolerance as for planned states
    h_exec = system.obstacle_h(executed, prob.centres, prob.radii, sysm)
    no_collision = h_exec.min(axis=(1, 2)) >= -TOL_H
    reached = np.linalg.norm(sysm.position(executed[:, -1]) - prob.goal, axis=1) <= GOAL_TOL
    goal_err = np.linalg.norm(sysm.position(states[:, -1]) - prob.goal, axis=1)
    return {"safe": safe, "admissible": adm, "consistency": cons,
            "success": no_collision & reached, "goal_error": goal_err,
            "exec_no_collision": no_collision, "exec_reached": reached}


def demo_ceiling(cfg: dict, data: dict, setting: str) -> dict[str, float]:
    """What the tighter test bounds cost the demonstrations themselves (a ceiling for every
    method): the fraction of demonstrated actions outside the test bounds (per action
    component) and the executed success of the demonstrations' own actions clipped to them."""
    p = _p(cfg, setting)
    sysm = _system(cfg, setting)[0]
    x0, goal = data[f"{setting}/demo_x0"], data[f"{setting}/demo_goal"]
    actions = data[f"{setting}/demo_actions"]
    h = system.action_h(actions, p["v_max"], p["om_max"], sysm)
    clipped = system.clip_actions(actions, p["v_max"], p["om_max"], sysm)
    end = sysm.position(system.rollout(x0, clipped, sysm)[:, -1])
    return {"demo_outside_b1": float((np.minimum(h[..., 0], h[..., 1]) < 0).mean()),
            "demo_outside_b2": float((np.minimum(h[..., 2], h[..., 3]) < 0).mean()),
            "demo_clipped_success": float((np.linalg.norm(end - goal, axis=1)
                                           <= GOAL_TOL).mean())}


def evaluate(cfg: dict, data: dict, runs: list, state: dict, curves) -> list[dict]:
    out = []
    ceilings = {}
    for run in runs:
        if run.setting not in ceilings:
            ceilings[run.setting] = demo_ceiling(cfg, data, run.setting)
        prob = _problems(cfg, data, run.setting, run.seed)
        states, actions = state[f"{run.key}/states"], state[f"{run.key}/actions"]
        finite = np.isfinite(states).all(axis=(1, 2)) & np.isfinite(actions).all(axis=(1, 2))
        # a diverged plan (non-finite numbers) violates every constraint: metrics see inf
        states = np.where(finite[:, None, None], states, np.inf)
        actions = np.where(finite[:, None, None], actions, np.inf)
        with np.errstate(invalid="ignore", over="ignore"):
            m = plan_metrics(prob, states, actions)
        for key in ("safe", "admissible", "success", "exec_no_collision", "exec_reached"):
            m[key] = m[key] & finite
        m["consistency"] = np.where(finite, m["consistency"], np.inf)
        m["goal_error"] = np.where(finite, m["goal_error"], np.inf)
        out.append({
            "diverged_rate": float(1.0 - finite.mean()),
            "safety_rate": float(m["safe"].mean()),
            "admissibility_rate": float(m["admissible"].mean()),
            "consistency_mean": float(m["consistency"].mean()),
            "consistency_p95": (float(np.percentile(m["consistency"], 95))
                                if np.all(finite) else float("inf")),
            "consistent_rate": float((m["consistency"] <= TOL_CONS).mean()),
            "executed_success": float(m["success"].mean()),
            "exec_no_collision": float(m["exec_no_collision"].mean()),
            "exec_reached": float(m["exec_reached"].mean()),
            "goal_error_mean": float(m["goal_error"].mean()),
            "goal_error_median": float(np.median(m["goal_error"])),
            "intervention": float(state[f"{run.key}/intervention"].mean()),
            "slack_mean": float(state[f"{run.key}/slack"].mean()),
            "qp_residual_max": float(np.max(state[f"{run.key}/qp_residual"])),
            # plans whose QP left a row violated by > 1e-3 (in Z) at some guided step
            "qp_violated_rate": float((state[f"{run.key}/qp_residual"] > 1e-3).mean()),
            **ceilings[run.setting],
        })
    return out
