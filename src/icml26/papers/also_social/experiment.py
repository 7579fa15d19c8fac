"""Stages of also-social: prepare (the environments), train (online runs of every method in
MiniSotopia), evaluate (episode scores and diagnostics).

A run is (method, setting, seed); the environment seed is the run seed. The world's draws
(environment, episodes, validation episodes) derive from (paper, stream, seed) only, so all
methods and both settings of a seed meet the same environment and episodes; a policy's own
randomness derives from the run. Train batches the seeds of a (method, setting) and, for the
per-episode methods, all episodes, as lanes of one vectorised pass (sim.play); the pooled
optimisers (UCB1, LinUCB) play their episodes in order, lanes = seeds.
"""

from __future__ import annotations

import numpy as np

from icml26.seeding import derive_seed

from . import policies as pol
from . import sim

ARRAYS = ("arm", "prob", "pred", "reward", "oracle")
POOLED = ("ucb1", "linucb", "also-pooled")          # statistics kept across episodes
SURROGATE = {"also": dict(mode="nn", history=True, model="mlp"),
             "also-nohist": dict(mode="nn", history=False, model="mlp"),
             "also-iw": dict(mode="mean-zscore", history=True, model="mlp"),
             "also-lin": dict(mode="nn", history=True, model="ridge"),
             "neural-ucb": dict(mode="ucb", history=False, model="mlp")}


def P(cfg) -> dict:
    return cfg["params"]


def setting_of(cfg, setting) -> tuple[float, bool]:
    s = cfg["settings"][setting]
    return float(s["counter"]), bool(s["drift"])


def env_of(cfg, seed) -> dict:
    return sim.environment(np.random.default_rng(derive_seed(cfg["paper"], "env", seed)), P(cfg))


def episodes_of(cfg, seed, drift) -> dict:
    rng = np.random.default_rng(derive_seed(cfg["paper"], "episodes", seed))
    return sim.episodes(rng, int(P(cfg)["episodes"]), P(cfg), drift)


# ---------------------------------------------------------------------------------------------
def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The environments of every seed (affinities, stance effects, arm embeddings), for the
    record; train rebuilds them from the same streams."""
    out = {}
    for seed in cfg["seeds"]:
        for k, v in env_of(cfg, seed).items():
            out[f"env{seed}/{k}"] = v
    return out


def best_static_choice(cfg, run, counter, drift) -> tuple[np.ndarray, np.ndarray]:
    """The offline-optimised arm per scenario type: mean reward of each arm over
    ``validation_episodes`` separate episodes per scenario type played uniformly at random
    (their own world stream, never the online episodes); returns the choice (6,) and the
    validation means (6, K)."""
    p = P(cfg)
    n = int(p["validation_episodes"])
    scen = np.repeat(np.arange(sim.N_SCENARIOS), n)
    eps = sim.episodes(np.random.default_rng(derive_seed(cfg["paper"], "validation", run.seed)),
                       len(scen), p, drift, scenarios=scen)
    env = sim.lane_env([env_of(cfg, run.seed)], len(scen))
    g = np.random.default_rng(run.rng_seed(cfg["paper"], "validation-play"))
    out = sim.play(pol.Uniform(pol.LaneRNG([g], len(scen))), env, eps, p, counter)
    s = np.zeros((sim.N_SCENARIOS, sim.K))
    c = np.zeros((sim.N_SCENARIOS, sim.K))
    np.add.at(s, (np.repeat(scen, p["turns"]), out["arm"].ravel()), out["reward"].ravel())
    np.add.at(c, (np.repeat(scen, p["turns"]), out["arm"].ravel()), 1.0)
    means = np.where(c > 0, s / np.maximum(c, 1), -np.inf)
    return np.argmax(means, axis=1), np.where(c > 0, means, np.nan)


def make_policy(cfg, method, rng: pol.LaneRNG, emb=None, choice=None):
    p = P(cfg)
    if method == "static":
        return pol.Static(rng)
    if method == "random":
        return pol.Uniform(rng)
    if method == "best-static":
        return pol.BestStatic(rng, choice)
    if method == "ucb1":
        return pol.UCB1(rng)
    if method == "exp3":
        eta = p["exp3_eta"] if p["exp3_eta"] is not None else pol.exp3_eta(int(p["turns"]))
        return pol.EXP3(rng, eta=eta, gamma=p["exp3_gamma"])
    if method == "linucb":
        return pol.LinUCB(rng, alpha=p["linucb_alpha"])
    if method == "also-pooled":
        return pol.PooledRidge(rng, emb, lam=p["ridge_lambda"], eta=p["pooled_eta"],
                               gamma=p["pooled_gamma"], refit_every=p["pooled_refit_every"])
    if method in SURROGATE:
        mlp = {"hidden": p["hidden"], "steps": p["fit_steps"], "lr": p["lr"],
               "lr_floor": p["lr_floor"], "clip": p["clip"], "wd_scale": p["wd_scale"]}
        return pol.Surrogate(rng, emb, eta=p["eta"], decay=p["score_decay"], mlp=mlp,
                             ridge_lambda=p["ridge_lambda"], ucb_lambda=p["ucb_lambda"],
                             ucb_nu=p["ucb_nu"], iw_floor=p["iw_floor"],
                             nn_weight=p["nn_weight"], **SURROGATE[method])
    raise ValueError(f"unknown method {method!r}")


def run_group(cfg, method, setting, runs) -> dict[str, dict[str, np.ndarray]]:
    """Every run of one (method, setting), seeds batched; returns per run key its arrays
    (episodes, turns)."""
    p = P(cfg)
    counter, drift = setting_of(cfg, setting)
    E = int(p["episodes"])
    envs = [env_of(cfg, r.seed) for r in runs]
    eps = [episodes_of(cfg, r.seed, drift) for r in runs]
    gens = [np.random.default_rng(r.rng_seed(cfg["paper"], "policy")) for r in runs]
    extra = {}
    if method == "best-static":
        choices = [best_static_choice(cfg, r, counter, drift) for r in runs]
        extra["validation_means"] = [c[1] for c in choices]
    if method in POOLED:                                 # pooled: episodes in order
        env = sim.lane_env(envs, 1)
        policy = make_policy(cfg, method, pol.LaneRNG(gens, 1), emb=env["emb"])
        outs = [sim.play(policy, env, sim.lane_eps([sim.select_eps(e, [i]) for e in eps]), p,
                         counter) for i in range(E)]
        res = {k: np.stack([o[k] for o in outs], axis=1) for k in ARRAYS}   # (seeds, E, T)
    else:                                                # per episode: all episodes at once
        rng = pol.LaneRNG(gens, E)
        env = sim.lane_env(envs, E)
        choice = None
        if method == "best-static":
            choice = np.repeat(np.stack([c[0] for c in choices]), E, axis=0)
        policy = make_policy(cfg, method, rng, emb=env["emb"], choice=choice)
        out = sim.play(policy, env, sim.lane_eps(eps), p, counter)
        res = {k: v.reshape(len(runs), E, -1) for k, v in out.items()}
    per_run = {}
    for i, r in enumerate(runs):
        per_run[r.key] = {k: res[k][i] for k in ARRAYS}
        if "validation_means" in extra:
            per_run[r.key]["validation_means"] = extra["validation_means"][i]
    return per_run


def train(cfg: dict, data: dict[str, np.ndarray], runs: list) -> tuple[dict, list[dict]]:
    groups: dict = {}
    for r in runs:
        groups.setdefault((r.method, r.setting), []).append(r)
    state, curves = {}, []
    for (method, setting), group in groups.items():
        for r, arrays in zip(group, run_group(cfg, method, setting, group).values(),
                             strict=True):
            for k, v in arrays.items():
                state[f"{r.key}/{k}"] = np.asarray(v, dtype=np.float64)
            scores = 10.0 * arrays["reward"].mean(axis=1)
            curves += [{**r.as_dict(), "step": i + 1, "metric": "score", "value": float(s)}
                       for i, s in enumerate(scores)]
    order = {r.key: i for i, r in enumerate(runs)}
    curves.sort(key=lambda row: order[f"{row['method']}~{row['setting']}~{row['seed']}"])
    return state, curves


# ---------------------------------------------------------------------------------------------
def run_metrics(cfg, s: dict) -> dict:
    """Episode score (0-10) after the warm-up episodes (primary), over all episodes, mean turn
    reward, fraction of turns on the noiseless best arm, surrogate squared error."""
    w = int(P(cfg)["warmup_episodes"])
    reward, oracle, pred = s["reward"], s["oracle"], s["pred"]
    scored = slice(w, None) if w < reward.shape[0] else slice(None)
    err = (pred - reward) ** 2
    has_pred = np.isfinite(pred)
    return {"score": float(10.0 * reward[scored].mean()),
            "score_all": float(10.0 * reward.mean()),
            "mean_reward": float(reward[scored].mean()),
            # the squared error of a constant predictor at the mean reward (for surrogate_mse)
            "reward_var": float(reward[scored].var()),
            "oracle_frac": float(oracle[scored].mean()),
            "surrogate_mse": float(err[has_pred].mean()) if has_pred.any() else float("nan"),
            "n_arms_used": float(np.mean([len(np.unique(a)) for a in s["arm"][scored]]))}


def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    rows = []
    for run in runs:
        pre = f"{run.key}/"
        s = {k[len(pre):]: v for k, v in state.items() if k.startswith(pre)}
        rows.append(run_metrics(cfg, s))
    return rows
