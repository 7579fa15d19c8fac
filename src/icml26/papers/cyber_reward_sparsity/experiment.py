"""Stages of cyber-reward-sparsity: graphs, one batched PPO/DQN training per setting, metrics.

A setting is (algorithm, network size N); a method is a reward function (SP, SPN, DS, DYT:
trained) or a reference policy (random, do_nothing, greedy: not trained). All learned runs of a
shard are trained in one batched call (icml26.rl.ppo / dqn train independent agents in
lock-step), each agent with its own reward, games and seeds, so its numbers do not depend on the
sharding. Evaluation episodes are drawn from (paper, setting, seed, "eval"), disjoint from the
training streams and shared by every method at that (setting, seed): comparisons are paired.
"""

from __future__ import annotations

import numpy as np

from icml26.seeding import derive_seed

from . import minititan as mt

REFERENCE = ("random", "do-nothing", "greedy")
COUNTS = ("gt", "steps", "restore", "reduce", "wasted_restore", "all_safe", "scan")


def _setting(cfg, setting) -> tuple[str, int]:
    s = cfg["settings"][setting]
    return str(s["algo"]), int(s["n"])


def _game(cfg, data, setting) -> mt.Game:
    p, n = cfg["params"], _setting(cfg, setting)[1]
    return mt.Game(adj=data[f"n{n}/adj"].astype(bool), v0=data[f"n{n}/v0"],
                   skill=float(cfg["settings"][setting].get("skill", p["red_skill"])),
                   spread=float(p["spread"]),
                   horizon=int(p["horizon"]), loss_frac=float(p["loss_frac"]),
                   observe=str(cfg["settings"][setting].get("observe", "full")))


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """One graph and initial-vulnerability vector per network size (fixed seeds of the spec)."""
    out = {}
    for setting in cfg["settings"]:
        _, n = _setting(cfg, setting)
        adj, v0 = mt.make_graph(n)
        out[f"n{n}/adj"], out[f"n{n}/v0"] = adj.astype(np.int8), v0
    return out


def _uniforms(cfg, game, setting, seed, stream, n_episodes) -> np.ndarray:
    r = np.random.default_rng(derive_seed(cfg["paper"], setting, seed, stream))
    return r.random((game.horizon, n_episodes, game.n_uniforms))


def _eval_agents(cfg, game, setting, runs, agents, stream, n_episodes):
    """Greedy evaluation of a batch of agents (agent a <-> runs[a]) on their paired episodes."""
    A = len(runs)
    U = np.concatenate([_uniforms(cfg, game, setting, r.seed, stream, n_episodes) for r in runs],
                       axis=1)

    def policy(obs, c, v):
        return agents.greedy(obs.reshape(A, n_episodes, -1)).reshape(-1)

    res = mt.evaluate(game, policy, U)
    return [{k: x[a * n_episodes:(a + 1) * n_episodes] for k, x in res.items()} for a in range(A)]


def _reference_policy(cfg, game, run):
    if run.method == "random":
        return mt.random_policy(game, np.random.default_rng(run.rng_seed(cfg["paper"], "policy")))
    if run.method == "do-nothing":
        return mt.do_nothing_policy(game)
    return mt.greedy_policy(game)


def _train_learned(cfg, game, setting, algo, runs, curves):
    """Train every learned run of one setting in one batched call; returns the agents."""
    from icml26.rl import dqn, ppo
    from icml26.seeding import seed_torch, torch_device

    p, paper = cfg["params"], cfg["paper"]
    # networks and updates on the device; the MiniTITAN game is numpy on the CPU (observations
    # and actions cross over once per vector step)
    dev = torch_device(cfg["device"])
    seed_torch(derive_seed(paper, setting, "torch"))  # all draws use explicit generators anyway
    env_rngs = [np.random.default_rng(r.rng_seed(paper, "env")) for r in runs]
    seeds = [r.rng_seed(paper, "agent") for r in runs]
    every, n_curve = int(p["eval_every"]), int(p["curve_episodes"])
    total = int(p[f"{algo}_steps"])

    def record(step, agents):
        for run, res in zip(runs, _eval_agents(cfg, game, setting, runs, agents, "curve",
                                               n_curve), strict=True):
            curves.append({**run.as_dict(), "step": int(step), "metric": "gt",
                           "value": float(res["gt"].mean())})

    if algo == "ppo":
        pc = ppo.PPOConfig(**p["ppo"])
        batch = pc.n_envs * pc.n_steps
        n_iter = total // batch

        def on_iteration(step, agents):  # every `every` env steps, and after the last iteration
            if step // every > (step - batch) // every or step == n_iter * batch:
                record(step, agents)

        env = mt.TrainEnv(game, [r.method for r in runs], pc.n_envs, env_rngs)
        agents = ppo.train(env, total, seeds, pc, callback=on_iteration, device=dev)
        params = dict(agents.actor.named_parameters())
    else:
        dc = dqn.DQNConfig(**p["dqn"])
        env = mt.TrainEnv(game, [r.method for r in runs], dc.n_envs, env_rngs)
        agents = dqn.train(env, total, seeds, dc, callback=record, eval_every=every,
                           device=dev)
        params = dict(agents.named_parameters())
    return agents, {k: v.detach().cpu().numpy() for k, v in params.items()}


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list[dict]]:
    n_eval = int(cfg["params"]["eval_episodes"])
    state, curves = {}, []
    for setting in dict.fromkeys(r.setting for r in runs):
        algo, _ = _setting(cfg, setting)
        game = _game(cfg, data, setting)
        in_setting = [r for r in runs if r.setting == setting]
        results = {}
        for run in (r for r in in_setting if r.method in REFERENCE):
            U = _uniforms(cfg, game, setting, run.seed, "eval", n_eval)
            results[run] = mt.evaluate(game, _reference_policy(cfg, game, run), U)
        learned = [r for r in in_setting if r.method not in REFERENCE]
        if learned:
            agents, params = _train_learned(cfg, game, setting, algo, learned, curves)
            for a, (run, res) in enumerate(zip(learned, _eval_agents(
                    cfg, game, setting, learned, agents, "eval", n_eval), strict=True)):
                results[run] = res
                for name, w in params.items():  # the trained policy (agent a's slice)
                    state[f"{run.key}/policy/{name}"] = w[a]
        for run, res in results.items():
            for k in COUNTS:
                state[f"{run.key}/{k}"] = res[k]
    return state, curves


def cvar(x: np.ndarray, alpha: float = 0.1) -> float:
    """Mean of the worst ceil(alpha * n) values (lower tail: low GT is bad)."""
    x = np.sort(np.asarray(x, float))
    return float(x[:max(1, int(np.ceil(alpha * len(x) - 1e-9)))].mean())


def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    out = []
    for run in runs:
        s = {k: state[f"{run.key}/{k}"] for k in COUNTS}
        steps = s["steps"].sum()
        out.append({
            "gt": float(s["gt"].mean()),
            "cvar10": cvar(s["gt"], 0.1),
            "costly_rate": float((s["restore"].sum() + s["reduce"].sum()) / steps),
            "restore_rate": float(s["restore"].sum() / steps),
            "reduce_rate": float(s["reduce"].sum() / steps),
            "wasted_restore_rate": float(s["wasted_restore"].sum() / steps),
            "all_safe_frac": float(s["all_safe"].sum() / steps),
            "scan_rate": float(s["scan"].sum() / steps),
            "episode_len": float(s["steps"].mean()),
        })
    return out
