"""Stages of sim2real-safe-metarl.

A run is (method, environment, critic seed). ``shard_by: [seed]`` makes one train job per
critic seed, as in the spec: the job builds that seed's option critic from simulator rollouts
(identical for every method and environment, seeded by (paper, "critic", seed) only, so it
does not depend on sharding) and then deploys every method of the shard on every environment,
``n_deploy`` deployment seeds x ``n_episodes`` consecutive episodes, all in one vectorised
batch. Start states and all per-step noise of the real system depend only on (environment,
critic seed, deployment seed, episode, step): every method meets the same real roads (common
random numbers), so the comparisons are paired.

Full scale (``level: step``): the train job builds the tabular step-level critic
(``critic.build_step``, seeded by (paper, "step-critic", seed)) instead of the option critic,
trains the learned context encoder (``encoder.train``, torch, seeded by (paper, "encoder",
seed)) when ``params.encoder`` is given, and deploys with the margin re-chosen every
``decision_every`` steps. Its weights are stored in the state as ``encoder/<seed>/...``.
"""

from __future__ import annotations

import numpy as np

from icml26.seeding import derive_seed

from . import agents, braking, critic, encoder

QUANTITIES = ("crash", "time_to_stop", "margin", "alpha", "mu_hat", "sd")
LITERAL_QUANTITIES = ("crash", "time_to_stop", "alpha")


def agent_params(cfg: dict) -> agents.AgentParams:
    return agents.AgentParams(**cfg["params"].get("agent", {}))


def real_system(cfg: dict, setting: str) -> tuple[float, float]:
    """(mu_real, delay p) of an environment: the config's values, else the spec's."""
    s = dict(braking.REAL.get(setting, {}))
    s.update(cfg["settings"].get(setting) or {})
    return float(s["mu"]), float(s["p"])


def window(cfg: dict, name: str) -> slice:
    """0-based slice of the 1-based inclusive episode window params[name], clipped."""
    first, last = (int(x) for x in cfg["params"][name])
    n = int(cfg["params"]["n_episodes"])
    return slice(min(first - 1, n), min(last, n))


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The option grid and the context bins (nothing random; the critic is built in train)."""
    p = cfg["params"]
    return {"bins": np.asarray(p["bins"], float), "margins": np.asarray(p["margins"], float)}


def build_critic(cfg: dict, seed: int, data: dict) -> dict[str, np.ndarray]:
    p = cfg["params"]
    rng = np.random.default_rng(derive_seed(cfg["paper"], "critic", seed))
    return critic.build(data["bins"], data["margins"], int(p["n_rollouts"]),
                        int(p["n_quantiles"]), rng, float(p["acc_sd"]), float(p["obs_sd"]))


def level(cfg: dict) -> str:
    """"option" (smoke, default: one margin per episode) or "step" (full: re-chosen every 0.5 s)."""
    return str(cfg["params"].get("level", "option"))


def build_step_critic(cfg: dict, seed: int, data: dict) -> dict[str, np.ndarray]:
    p = cfg["params"]
    rng = np.random.default_rng(derive_seed(cfg["paper"], "step-critic", seed))
    return critic.build_step(data["bins"], data["margins"], p["gap_edges"], p["speed_edges"],
                             int(p["n_cell_rollouts"]), int(p["n_quantiles"]), rng,
                             float(p["acc_sd"]), float(p["obs_sd"]))


def train_encoder(cfg: dict, seed: int, data: dict) -> dict[str, np.ndarray]:
    """The learned context encoder of a critic seed (simulator tasks, PEARL KL objective).

    The only torch part of the paper (full profile): it trains on config ``device``; the
    simulator tasks, critics and deployment are numpy on the CPU."""
    from icml26.seeding import torch_device

    dev = torch_device(cfg["device"])
    p = cfg["params"]
    prm = agent_params(cfg)
    eprm = encoder.EncoderParams(**p.get("encoder", {}))
    rng = np.random.default_rng(derive_seed(cfg["paper"], "encoder-data", seed))
    mu, obs = encoder.simulator_tasks(int(eprm.n_tasks), int(eprm.episodes_per_task),
                                      data["margins"], rng, float(p["acc_sd"]),
                                      float(p["obs_sd"]), prm.max_obs)
    return encoder.train(mu, obs, prm.prior_mean, prm.prior_sd, eprm,
                         derive_seed(cfg["paper"], "encoder", seed), device=dev)


def deployment_noise(cfg: dict, setting: str, seed: int) -> braking.Noise:
    """Noise of (environment, critic seed): arrays [deployment, episode, (step)]."""
    p = cfg["params"]
    rng = np.random.default_rng(derive_seed(cfg["paper"], setting, seed, "deploy"))
    return braking.draw_noise(rng, (int(p["n_deploy"]), int(p["n_episodes"])),
                              braking.n_steps_max())


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list[dict]]:
    p = cfg["params"]
    n_dep, n_ep = int(p["n_deploy"]), int(p["n_episodes"])
    prm = agent_params(cfg)
    state, curves = {}, []
    for seed in dict.fromkeys(r.seed for r in runs):
        group = [r for r in runs if r.seed == seed]
        step = level(cfg) == "step"
        crit = build_step_critic(cfg, seed, data) if step else build_critic(cfg, seed, data)
        for name, arr in crit.items():
            state[f"critic/{seed}/{name}"] = arr
        enc = train_encoder(cfg, seed, data) if step and p.get("encoder") is not None else None
        for name, arr in (enc or {}).items():
            state[f"encoder/{seed}/{name}"] = arr
        extra = ({"level": "step", "encoder": enc, "every": int(p["decision_every"])}
                 if step else {})
        noise = {s: deployment_noise(cfg, s, seed) for s in dict.fromkeys(r.setting for r in group)}
        methods = np.repeat([r.method for r in group], n_dep)
        mu = np.repeat([real_system(cfg, r.setting)[0] for r in group], n_dep)
        delay = np.repeat([real_system(cfg, r.setting)[1] for r in group], n_dep)

        def noise_of_episode(e, group=group, noise=noise):
            fields = {}
            for f in ("d0", "v0", "acc", "delay", "obs"):
                fields[f] = np.concatenate([getattr(noise[r.setting], f)[:, e] for r in group])
            return braking.Noise(**fields)

        out = agents.deploy(methods, mu, delay, noise_of_episode, n_ep, data["bins"],
                            data["margins"], crit, prm, float(p["acc_sd"]), float(p["obs_sd"]),
                            **extra)
        for i, run in enumerate(group):
            rows = slice(i * n_dep, (i + 1) * n_dep)
            for q in QUANTITIES:
                x = out[q][rows]
                state[f"{run.key}/{q}"] = x
                curves.extend(_moments(run, q, x))
        # The literal reading of the spec's observation noise (sensor sd literal_obs_sd on top
        # of the actuation noise): PROPOSED deployed again on the same roads and noise draws.
        # It enters claim 4's note only; no curve, no figure.
        literal = [i for i, r in enumerate(group) if r.method == "PROPOSED"]
        if p.get("literal_obs_sd") is not None and literal:
            rows = np.concatenate([np.arange(i * n_dep, (i + 1) * n_dep) for i in literal])

            def literal_noise(e, rows=rows, noise_of_episode=noise_of_episode):
                full = noise_of_episode(e)
                return braking.Noise(**{f: getattr(full, f)[rows] for f in
                                        ("d0", "v0", "acc", "delay", "obs")})

            lit = agents.deploy(methods[rows], mu[rows], delay[rows], literal_noise, n_ep,
                                data["bins"], data["margins"], crit, prm, float(p["acc_sd"]),
                                float(p["literal_obs_sd"]), **extra)
            for k, i in enumerate(literal):
                part = slice(k * n_dep, (k + 1) * n_dep)
                for q in LITERAL_QUANTITIES:
                    state[f"{group[i].key}/{q}_literal"] = lit[q][part]
    return state, curves


def _moments(run, q: str, x: np.ndarray) -> list[dict]:
    """Per episode: mean, mean of squares and count of the finite values over deployments,
    so that figures can pool mean and std over all deployment runs exactly."""
    ok = np.isfinite(x)
    n = ok.sum(axis=0)
    s1 = np.where(ok, x, 0.0).sum(axis=0)
    s2 = np.where(ok, x * x, 0.0).sum(axis=0)
    rows = []
    for e in range(x.shape[1]):
        mean = s1[e] / n[e] if n[e] else np.nan
        sq = s2[e] / n[e] if n[e] else np.nan
        for metric, v in ((q, mean), (f"{q}_sq", sq), (f"{q}_n", float(n[e]))):
            rows.append({**run.as_dict(), "step": e + 1, "metric": metric, "value": float(v)})
    return rows


def evaluate(cfg: dict, data: dict, runs: list, state: dict, curves) -> list[dict]:
    """Per run, over its n_deploy deployments: counts (for exact pooling) and window means."""
    early, late, adapted = (window(cfg, w) for w in
                            ("early_episodes", "late_episodes", "adapted_episodes"))
    out = []
    for run in runs:
        g = {q: state[f"{run.key}/{q}"] for q in QUANTITIES}
        tts = g["time_to_stop"][:, adapted]
        ok = np.isfinite(tts)
        row = {
            "early_crashes": float(g["crash"][:, early].sum()),
            "early_episodes": float(g["crash"][:, early].size),
            "late_crashes": float(g["crash"][:, late].sum()),
            "late_episodes": float(g["crash"][:, late].size),
            "tts_sum": float(tts[ok].sum()),
            "tts_count": float(ok.sum()),
            "adapted_episodes": float(tts.size),
            "margin_sum": float(g["margin"][:, adapted].sum()),
            "alpha_sum": float(g["alpha"][:, adapted].sum()),
        }
        n_e, n_l, n_a = row["early_episodes"], row["late_episodes"], row["adapted_episodes"]
        row["early_violation"] = row["early_crashes"] / n_e if n_e else np.nan
        row["late_violation"] = row["late_crashes"] / n_l if n_l else np.nan
        row["time_to_stop"] = row["tts_sum"] / row["tts_count"] if row["tts_count"] else np.nan
        row["margin"] = row["margin_sum"] / n_a if n_a else np.nan
        row["alpha"] = row["alpha_sum"] / n_a if n_a else np.nan
        row["final_mu_hat"] = float(g["mu_hat"][:, -1].mean())
        row["final_sd"] = float(g["sd"][:, -1].mean())
        # the literal noise reading (PROPOSED only; NaN elsewhere): sums for exact pooling
        lit = {q: state.get(f"{run.key}/{q}_literal") for q in LITERAL_QUANTITIES}
        if all(v is not None for v in lit.values()):
            tl = lit["time_to_stop"][:, adapted]
            okl = np.isfinite(tl)
            row.update({"early_crashes_literal": float(lit["crash"][:, early].sum()),
                        "late_crashes_literal": float(lit["crash"][:, late].sum()),
                        "tts_sum_literal": float(tl[okl].sum()),
                        "tts_count_literal": float(okl.sum()),
                        "alpha_sum_literal": float(lit["alpha"][:, adapted].sum())})
        else:
            row.update(dict.fromkeys(("early_crashes_literal", "late_crashes_literal",
                                      "tts_sum_literal", "tts_count_literal",
                                      "alpha_sum_literal"), np.nan))
        out.append(row)
    return out
