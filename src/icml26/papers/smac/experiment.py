"""Stages of the smac paper: prepare (datasets, R_opt, R_rand), train (offline phase per method
family, online SAC fine-tuning of every run together, interpolation probe), evaluate (metrics).

A run is (method, dataset setting, seed). The offline dataset of a setting is generated once in
prepare and shared by every method and seed; evaluation episodes (starts and dynamics noise) of
(setting, seed, evaluation index) come from derive_seed and are identical across methods, so
methods are compared on the same episodes. Method randomness (initialisation, minibatches,
policy noise, online exploration) comes from run.rng_seed(paper, stream): one independent
stream per run, so results do not depend on how runs are grouped into jobs. Runs of one job are
vectorised (stacked weights, see nets.py).

Full profile only: settings may name ``env: maze3`` (the 3-room maze, with its own R_opt /
R_rand), and the TD3-transfer methods ``smac-td3`` (SMAC offline) and ``td3bc`` (TD3+BC
offline) are fine-tuned online with TD3 instead of SAC (td3.py), as a second group of runs.
"""

from __future__ import annotations

import numpy as np

from icml26.rl.buffer import ReplayBuffer
from icml26.seeding import derive_seed

from . import data as D

METHODS_SAC = ("smac", "sac-bc")
METHODS_CQL = ("cql", "calql")
METHODS_IQL = ("iql",)
SMAC_TD3, TD3BC = "smac-td3", "td3bc"
SM_METHODS = ("smac", SMAC_TD3)  # offline with lambda_sm > 0
# (online algorithm, offline method families): runs of a family are batched offline, runs of
# a group online
GROUPS = (("sac", (METHODS_SAC, METHODS_CQL, METHODS_IQL)), ("td3", ((SMAC_TD3,), (TD3BC,))))


def setting_params(cfg: dict, setting: str) -> dict:
    return {**cfg["params"], **(cfg["settings"][setting] or {})}


def env_of(cfg: dict, setting: str) -> str:
    return str(setting_params(cfg, setting).get("env", "open"))


def anchor_keys(env: str) -> tuple[str, str]:
    """data keys of R_opt and R_rand of an environment (the open field keeps the plain keys)."""
    return ("R_opt", "R_rand") if env == "open" else (f"R_opt/{env}", f"R_rand/{env}")


# ---------------------------------------------------------------------------------------------
def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Datasets per setting, and R_opt / R_rand (100 episodes each) for the normalised score."""
    p = cfg["params"]
    out = {"R_opt": np.array(D.mean_return(D.optimal_policy, 100, rng)),
           "R_rand": np.array(D.mean_return(D.random_policy(rng), 100, rng))}
    for env in dict.fromkeys(env_of(cfg, s) for s in cfg["settings"]):
        if env != "open":  # the maze's anchors: its route policy, from their own stream
            a_rng = np.random.default_rng(derive_seed(cfg["paper"], env, "anchors"))
            k_opt, k_rand = anchor_keys(env)
            out[k_opt] = np.array(D.mean_return(D.route_policy(env), 100, a_rng, env))
            out[k_rand] = np.array(D.mean_return(D.random_policy(a_rng), 100, a_rng, env))
    for setting in cfg["settings"]:
        sp = setting_params(cfg, setting)
        ds_rng = np.random.default_rng(derive_seed(cfg["paper"], setting, "dataset"))
        ds = D.make_dataset(sp.get("dataset", setting), float(p["gamma"]), ds_rng,
                            float(sp.get("dataset_scale", 1.0)), env_of(cfg, setting))
        for k, v in ds.items():
            out[f"{setting}/{k}"] = v
    return out


def normalised(ret, data, env: str = "open") -> np.ndarray:
    k_opt, k_rand = anchor_keys(env)
    r_opt, r_rand = float(data[k_opt]), float(data[k_rand])
    return (np.asarray(ret) - r_rand) / (r_opt - r_rand)


# ---------------------------------------------------------------------------------------------
def evaluate_policies(actors, layers, seeds: list[int], n_episodes: int, data,
                      env: str = "open") -> np.ndarray:
    """NS of the deterministic (tanh-mean) policies: one per row of ``layers`` (R of them);
    run r uses episode seed seeds[r] (starts and dynamics noise), n_episodes envs in parallel."""
    import torch

    envs, rngs, obs = [], [], []
    for s in seeds:
        r = np.random.default_rng(s)
        e = D.make_env(n_episodes, env)
        obs.append(e.reset(D.starts(n_episodes, r)))
        envs.append(e)
        rngs.append(r)
    ret = np.zeros((len(seeds), n_episodes))
    for _ in range(D.HORIZON):  # numpy environments on the CPU, the actors on their device
        with torch.no_grad():
            o = torch.as_tensor(np.stack(obs), dtype=torch.float32, device=actors.device)
            act = actors.mean_action(o, layers).cpu().numpy()
        for i, e in enumerate(envs):
            res = e.step(act[i], rngs[i])
            obs[i] = res.obs
            ret[i] += res.reward
    return normalised(ret.mean(1), data, env)


def _eval_seeds(cfg, runs, tag) -> list[int]:
    return [derive_seed(cfg["paper"], r.setting, r.seed, "eval", tag) for r in runs]


def _batch(ds: dict, idx: np.ndarray, device=None) -> dict:
    """Rows ``idx`` of the (numpy, CPU) dataset, moved to ``device`` (None: the CPU)."""
    import torch

    return {k: torch.from_numpy(v[idx]).to(device or "cpu") for k, v in ds.items()}


def _noise(rngs, shape, device=None) -> "torch.Tensor":  # noqa: F821
    """Standard normals drawn with numpy on the CPU (the same on every device), then moved."""
    import torch

    return torch.from_numpy(np.stack([r.standard_normal(shape, dtype=np.float32)
                                      for r in rngs])).to(device or "cpu")


def offline_phase(cfg, runs, ds, data, curves, env: str = "open") -> tuple:
    """Offline training of the runs of one method family; returns (agent, extras)."""
    import torch

    from icml26.seeding import torch_device

    from . import cql, iql, smac, td3
    from .nets import Actors, Critics, ValueNets
    from .sac import Agent, adam

    p = cfg["params"]
    paper = cfg["paper"]
    # networks, optimisers and batches on the device; the dataset, the replay buffers, every
    # random draw and the point-mass environments stay numpy on the CPU (moved per batch)
    dev = torch_device(cfg["device"])
    hidden = tuple(p["hidden"])
    actors = Actors([r.rng_seed(paper, "init-actor") for r in runs], hidden, device=dev)
    critics = Critics([r.rng_seed(paper, "init-critic") for r in runs], hidden, device=dev)
    agent = Agent(actors, critics, p)
    rngs = [np.random.default_rng(r.rng_seed(paper, "offline")) for r in runs]
    n, B = len(ds["obs"]), int(p["batch"])
    family = runs[0].method
    if family in METHODS_IQL:
        value = ValueNets([r.rng_seed(paper, "init-value") for r in runs], hidden, device=dev)
        value_opt = adam(value.parameters(), float(p["lr"]))
    if family == TD3BC:
        td3.attach(agent)
    lam = torch.tensor([float(p["lambda_sm"]) if r.method in SM_METHODS else 0.0 for r in runs],
                       device=dev)
    calibrated = torch.tensor([r.method == "calql" for r in runs], device=dev)
    n_cql = int(p["cql_actions"])
    steps, every = int(p["offline_steps"]), int(p["eval_every_offline"])
    for t in range(steps + 1):
        if t % every == 0 or t == steps:
            ns = evaluate_policies(actors, None, _eval_seeds(cfg, runs, f"off{t}"),
                                   int(p["eval_episodes"]), data, env)
            for r, v in zip(runs, ns, strict=True):
                curves.append({**r.as_dict(), "step": t, "metric": "ns_offline", "value": v})
        if t == steps:
            break
        idx = np.stack([g.integers(0, n, B) for g in rngs])
        batch = _batch(ds, idx, dev)
        if family in METHODS_SAC or family == SMAC_TD3:
            smac.offline_update(agent, batch, _noise(rngs, (3, B, 2), dev), lam, p)
        elif family in METHODS_CQL:
            uni = torch.from_numpy(np.stack([g.uniform(-1, 1, (n_cql, B, 2)).astype(np.float32)
                                             for g in rngs])).to(dev)
            cql.offline_update(agent, batch, _noise(rngs, (2 + n_cql, B, 2), dev), uni,
                               calibrated, p)
        elif family == TD3BC:
            td3.update(agent, batch, _noise(rngs, (B, 2), dev), p, bc=True)
        else:
            iql.offline_update(agent, value, value_opt, batch, p)
    # calibration gap: mean over the dataset of min_k Q(s, a) - G_mu(s)
    with torch.no_grad():
        full = {k: torch.from_numpy(v).to(dev)[None].expand(len(runs), *v.shape)
                for k, v in ds.items()}
        q = critics(full["obs"], full["act"]).min(1).values
        gap = (q - full["rtg"]).mean(-1).cpu().numpy()
    return agent, gap


def merge_agents(agents: list, p: dict):
    """One Agent holding the runs of several (concatenated along the run axis)."""
    import torch

    from .sac import Agent

    first = agents[0]
    actors, critics = first.actors, first.critics
    actors.layers = [[torch.cat([a.actors.layers[i][j].detach() for a in agents])
                      .requires_grad_(True) for j in range(2)] for i in range(len(actors.layers))]
    critics.layers = [[torch.cat([a.critics.layers[i][j].detach() for a in agents])
                       .requires_grad_(True) for j in range(2)]
                      for i in range(len(critics.layers))]
    critics.target = [[torch.cat([a.critics.target[i][j] for a in agents]) for j in range(2)]
                      for i in range(len(critics.target))]
    return Agent(actors, critics, p)


def online_phase(cfg, runs, agent, data, curves, env: str = "open", algo: str = "sac") -> None:
    """Plain SAC fine-tuning of every run together (1 gradient step per env step, batch 256),
    replay buffer seeded with 1000 transitions of the offline policy, no offline data kept.
    With ``algo = "td3"`` (an agent with td3.attach'ed targets): TD3 instead, exploring with
    clip(pi(s) + N(0, 0.1^2 I), -1, 1) (also for the buffer's initial transitions)."""
    import torch

    from . import td3
    from .sac import sac_update

    p = cfg["params"]
    paper = cfg["paper"]
    dev = agent.actors.device  # the offline phase placed it (config ``device``)
    B = int(p["batch"])
    steps, every = int(p["online_steps"]), int(p["eval_every"])
    n_init, n_par = int(p["init_transitions"]), int(p["init_envs"])
    rngs = [np.random.default_rng(r.rng_seed(paper, "online")) for r in runs]
    env_rngs = [np.random.default_rng(r.rng_seed(paper, "online-env")) for r in runs]
    bufs = [ReplayBuffer(n_init + steps, 2, 2) for _ in runs]

    def act(obs):  # stochastic actions of every run: obs (R, n, 2)
        with torch.no_grad():
            o = torch.as_tensor(np.stack(obs), dtype=torch.float32, device=dev)
            eps = _noise(rngs, o.shape[1:], dev)
            if algo == "td3":
                a = agent.actors.mean_action(o) + float(p["td3_expl"]) * eps
                return a.clamp(-1.0, 1.0).cpu().numpy()
            return agent.actors.sample(o, eps)[0].cpu().numpy()

    # 1) buffer initialised by the offline policy, n_par envs per run in parallel
    envs = [D.make_env(n_par, env) for _ in runs]
    obs = [e.reset(D.starts(n_par, g)) for e, g in zip(envs, env_rngs, strict=True)]
    for _ in range(n_init // n_par):
        a = act(obs)
        for i, e in enumerate(envs):
            res = e.step(a[i], env_rngs[i])
            bufs[i].add(obs[i], a[i], res.reward, res.obs, np.zeros(n_par))  # time limit only
            obs[i] = e.reset(D.starts(n_par, env_rngs[i])) if res.done.all() else res.obs
    # 2) online steps, one env per run
    envs = [D.make_env(1, env) for _ in runs]
    obs = [e.reset(D.starts(1, g)) for e, g in zip(envs, env_rngs, strict=True)]
    agent.reset_optimisers()
    for t in range(steps + 1):
        if t % every == 0:
            ns = evaluate_policies(agent.actors, None, _eval_seeds(cfg, runs, f"on{t}"),
                                   int(p["eval_episodes"]), data, env)
            for r, v in zip(runs, ns, strict=True):
                curves.append({**r.as_dict(), "step": t, "metric": "ns_online", "value": v})
        if t == steps:
            break
        a = act(obs)
        for i, e in enumerate(envs):
            res = e.step(a[i], env_rngs[i])
            bufs[i].add(obs[i], a[i], res.reward, res.obs, np.zeros(1))
            obs[i] = e.reset(D.starts(1, env_rngs[i])) if res.done.all() else res.obs
        samples = [b.sample(B, g) for b, g in zip(bufs, rngs, strict=True)]
        batch = {k: torch.from_numpy(np.stack([s[k] for s in samples])).to(dev)
                 for k in ("obs", "act", "rew", "next_obs")}
        if algo == "td3":
            td3.update(agent, batch, _noise(rngs, (B, 2), dev), p)
        else:
            sac_update(agent, batch, _noise(rngs, (2, B, 2), dev))


def interpolation_probe(cfg, runs, actors, off_layers, data, curves, env: str = "open") -> None:
    """NS along theta(lam) = (1 - lam) theta_off + lam theta_on (actor parameters), lam in
    {0, 0.1, ..., 1}; the same evaluation episodes at every lam (and for every method)."""
    import torch

    from .nets import interpolate

    p = cfg["params"]
    lams = np.linspace(0.0, 1.0, int(p["interp_points"]))
    on = [[t.detach() for t in layer] for layer in actors.layers]
    per_lam = [interpolate(off_layers, on, float(lam)) for lam in lams]
    # all (lam, run) policies in one batch: run axis = lam-major
    layers = [[torch.cat([pl[i][j] for pl in per_lam]) for j in range(2)]
              for i in range(len(on))]
    seeds = _eval_seeds(cfg, runs, "interp") * len(lams)
    ns = evaluate_policies(actors, layers, seeds, int(p["eval_episodes"]), data, env)
    ns = ns.reshape(len(lams), len(runs))
    for k in range(len(lams)):
        for i, r in enumerate(runs):
            curves.append({**r.as_dict(), "step": int(k), "metric": "ns_interp",
                           "value": float(ns[k, i])})


def train(cfg: dict, data: dict, runs: list) -> tuple[dict[str, np.ndarray], list[dict]]:
    import torch

    torch.set_num_threads(1)  # same bytes whatever the machine: single-threaded kernels
    p = cfg["params"]
    state: dict[str, np.ndarray] = {}
    curves: list[dict] = []
    for setting in dict.fromkeys(r.setting for r in runs):
        ds = {k: data[f"{setting}/{k}"] for k in ("obs", "act", "rew", "next_obs", "rtg")}
        srun = [r for r in runs if r.setting == setting]
        env = env_of(cfg, setting)
        for algo, fams in GROUPS:
            families = [[r for r in srun if r.method in fam] for fam in fams]
            if not any(families):
                continue
            agents, ordered = [], []
            for fam in families:
                if not fam:
                    continue
                agent, gap = offline_phase(cfg, fam, ds, data, curves, env)
                agents.append(agent)
                ordered.extend(fam)
                for r, g in zip(fam, gap, strict=True):
                    state[f"{r.key}/q_gap"] = np.array(g)
                for r, sd in zip(fam, agent.actors.state_dicts(), strict=True):
                    for name, v in sd.items():
                        state[f"{r.key}/actor_off/{name}"] = v
            if algo == "td3":  # target actors (TD3+BC's own; SMAC's: a copy of its actor)
                targets = [getattr(a, "actor_target", a.actors.layers) for a in agents]
                targets = [[torch.cat([t[i][j].detach() for t in targets]) for j in range(2)]
                           for i in range(len(targets[0]))]
            agent = merge_agents(agents, p)
            if algo == "td3":
                from .td3 import attach

                attach(agent, targets)
            off_layers = [[t.detach().clone() for t in layer] for layer in agent.actors.layers]
            online_phase(cfg, ordered, agent, data, curves, env, algo)
            for r, sd in zip(ordered, agent.actors.state_dicts(), strict=True):
                for name, v in sd.items():
                    state[f"{r.key}/actor_on/{name}"] = v
            interpolation_probe(cfg, ordered, agent.actors, off_layers, data, curves, env)
    return state, curves


# ---------------------------------------------------------------------------------------------
def run_metrics(ns_on: dict[int, float], interp: list[float], gap: float, drop_window: int,
                tol: float = 0.02) -> dict:
    """The spec's metrics from one run's online NS curve {step: NS} and interpolation curve."""
    steps = sorted(ns_on)
    ns_off = ns_on[0]
    online = [s for s in steps if s > 0]
    early = [ns_on[s] for s in online if s <= drop_window]
    vals = [ns_on[s] for s in online]
    x = np.asarray(interp, float)
    mono = float(np.mean(x[1:] >= x[:-1] - tol)) if x.size > 1 else np.nan
    return {
        "ns_off": ns_off,
        "initial_drop": max(0.0, ns_off - min(early)) if early else np.nan,
        "regret": float(np.mean([1.0 - v for v in vals])) if vals else np.nan,
        "final_ns": float(np.mean(vals[-3:])) if vals else np.nan,
        "valley_depth": max(0.0, min(x[0], x[-1]) - float(x.min())) if x.size else np.nan,
        "monotonicity": mono,
        "q_gap": gap,
    }


def evaluate(cfg: dict, data: dict, runs: list, state: dict, curves) -> list[dict]:
    p = cfg["params"]
    out = []
    for run in runs:
        c = curves[(curves["method"] == run.method) & (curves["setting"] == run.setting)
                   & (curves["seed"] == run.seed)]
        on = c[c["metric"] == "ns_online"]
        ns_on = dict(zip(on["step"].astype(int), on["value"].astype(float), strict=True))
        it = c[c["metric"] == "ns_interp"].sort_values("step")
        out.append(run_metrics(ns_on, it["value"].astype(float).tolist(),
                               float(state[f"{run.key}/q_gap"]), int(p["drop_window"]),
                               float(p.get("mono_tol", 0.02))))
    return out
