"""Stages of avg-reward-td: exact chain quantities, one vectorised TD loop per shard, metrics.

A setting is one chain (laziness p, n states). A run is (method, chain, seed); inside a run the
feature sets, step sizes and initialisations are vectorised. Sample paths and initial
parameters depend on (chain, seed, initialisation) only, never on the method or the step size,
so every method and step size sees the same data (common random numbers) whatever the sharding.
"""

from __future__ import annotations

import numpy as np

from icml26.seeding import derive_seed

from . import td


def metric_name(kind: str, feature_set: str, a: float) -> str:
    return f"{kind}_{feature_set}_a{a:g}"


def _params(cfg: dict) -> dict:
    p = cfg["params"]
    return {
        "T": int(p["T"]),
        "step_sizes": [float(a) for a in p["step_sizes"]],
        "features": list(p["features"]),
        "gain_c": float(p["gain_c"]),
        "eta": float(p["eta"]),
        "reward_noise": float(p["reward_noise"]),
        "init_std": float(p["init_std"]),
        "n_inits": int(p["n_inits"]),
        "n_checkpoints": int(p.get("n_checkpoints", 25)),
    }


def _chain(cfg: dict, setting: str) -> tuple[int, float]:
    s = cfg["settings"][setting]
    return int(s.get("n", 10)), float(s["p"])


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Exact quantities per chain and feature set (rewards and features use the spec's seeds)."""
    prm = _params(cfg)
    out = {}
    for setting in cfg["settings"]:
        n, p = _chain(cfg, setting)
        P = td.lazy_ring(n, p)
        mu = td.stationary(P)
        r = td.rewards(n)
        r_bar, h = td.differential_value(P, mu, r)
        out.update({
            f"{setting}/P": P, f"{setting}/mu": mu, f"{setting}/r": r,
            f"{setting}/r_bar": np.array(r_bar), f"{setting}/h": h,
            f"{setting}/kappa": np.array(td.condition_number(P)),
        })
        for F in prm["features"]:
            Phi = td.features(F, n)
            out[f"{setting}/{F}/Phi"] = Phi
            out[f"{setting}/{F}/theta_star"] = td.target_theta(P, mu, r, Phi)
    return out


def train(cfg: dict, data: dict, runs: list) -> tuple[dict, list[dict]]:
    prm = _params(cfg)
    paper, feats, steps, K = cfg["paper"], prm["features"], prm["step_sizes"], prm["n_inits"]
    G, A = len(feats), len(steps)
    settings = list(dict.fromkeys(run.setting for run in runs))
    D = max(data[f"{s}/{F}/Phi"].shape[1] for s in settings for F in feats)

    # stacked, zero-padded feature rows: one block of n rows per (chain, feature set)
    blocks, row_offset, start = [], {}, 0
    for s in settings:
        for F in feats:
            Phi = data[f"{s}/{F}/Phi"]
            blocks.append(np.pad(Phi, ((0, 0), (0, D - Phi.shape[1]))))
            row_offset[s, F] = start
            start += Phi.shape[0]
    phi_rows = np.vstack(blocks)

    # one pair of trajectories (A, B) per (chain, seed, initialisation), shared by all methods
    path_index, paths = {}, []
    for run in runs:
        n, p = _chain(cfg, run.setting)
        for k in range(K):
            key = (run.setting, run.seed, k)
            if key not in path_index:
                path_index[key] = len(paths)
                paths.append(td.RingPaths(
                    n, p, data[f"{run.setting}/mu"], data[f"{run.setting}/r"],
                    prm["reward_noise"], derive_seed(paper, "paths", *key),
                ))

    rows = {name: [] for name in ("row_offset", "path", "a", "theta0")}
    coef = {name: [] for name in ("gain_c", "use_c", "rho_r", "rho_delta")}
    for run in runs:
        c = td.method_coefficients(run.method, prm["gain_c"], prm["eta"])
        for F in feats:
            d = data[f"{run.setting}/{F}/Phi"].shape[1]
            for a in steps:
                for k in range(K):
                    init_rng = np.random.default_rng(
                        derive_seed(paper, "theta0", run.setting, run.seed, F, k))
                    theta0 = np.zeros(D)
                    theta0[:d] = prm["init_std"] * init_rng.standard_normal(d)
                    rows["row_offset"].append(row_offset[run.setting, F])
                    rows["path"].append(path_index[run.setting, run.seed, k])
                    rows["a"].append(a)
                    rows["theta0"].append(theta0)
                    for name in coef:
                        coef[name].append(c[name])
    batch = td.Batch(
        phi_rows=phi_rows,
        row_offset=np.array(rows["row_offset"]),
        path=np.array(rows["path"]),
        a=np.array(rows["a"]),
        theta0=np.array(rows["theta0"]),
        **{name: np.array(v) for name, v in coef.items()},
    )
    snaps = td.checkpoints(prm["T"], prm["n_checkpoints"])
    out = td.run_td(batch, paths, prm["T"], snaps)

    # per run: final tail average (state) and E_c, E_theta curves averaged over initialisations
    theta_bar = out["theta_bar"].reshape(len(snaps), len(runs), G, A, K, D)
    rho_bar = out["rho_bar"].reshape(len(snaps), len(runs), G, A, K)
    diverged = out["diverged"].reshape(len(runs), G, A, K)
    state, curves = {}, []
    for i, run in enumerate(runs):
        state[f"{run.key}/theta_bar"] = theta_bar[-1, i]
        state[f"{run.key}/rho_bar"] = rho_bar[-1, i]
        state[f"{run.key}/diverged"] = diverged[i].astype(np.int8)
        for g, F in enumerate(feats):
            Phi = data[f"{run.setting}/{F}/Phi"]
            e_c, e_th, _ = td.value_errors(
                theta_bar[:, i, g, :, :, : Phi.shape[1]], Phi, data[f"{run.setting}/mu"],
                data[f"{run.setting}/h"], data[f"{run.setting}/{F}/theta_star"])
            for j, a in enumerate(steps):
                for kind, err in (("Ec", e_c), ("Etheta", e_th)):
                    name = metric_name(kind, F, a)
                    mean_over_inits = err[:, j, :].mean(axis=1)
                    curves.extend(
                        {**run.as_dict(), "step": int(s), "metric": name, "value": float(v)}
                        for s, v in zip(snaps, mean_over_inits, strict=True)
                    )
    return state, curves


def evaluate(cfg: dict, data: dict, runs: list, state: dict, curves) -> list[dict]:
    """Final E_c, E_theta, offset spread, reward-rate error per (feature set, step size)."""
    prm = _params(cfg)
    t16 = int(np.round(prm["T"] / 16))
    early = curves[curves["step"] == t16].set_index(["method", "setting", "seed", "metric"])
    out = []
    for run in runs:
        s = run.setting
        row = {"kappa": float(data[f"{s}/kappa"])}
        theta_bar = state[f"{run.key}/theta_bar"]
        rho_bar = state[f"{run.key}/rho_bar"]
        diverged = state[f"{run.key}/diverged"]
        for g, F in enumerate(prm["features"]):
            Phi = data[f"{s}/{F}/Phi"]
            e_c, e_th, offset = td.value_errors(
                theta_bar[g, :, :, : Phi.shape[1]], Phi, data[f"{s}/mu"], data[f"{s}/h"],
                data[f"{s}/{F}/theta_star"])
            for j, a in enumerate(prm["step_sizes"]):
                row[metric_name("Ec", F, a)] = float(e_c[j].mean())
                row[metric_name("Etheta", F, a)] = float(e_th[j].mean())
                e16 = early.loc[(run.method, s, run.seed, metric_name("Etheta", F, a)), "value"]
                row[metric_name("Etheta16", F, a)] = float(e16)
                # uniqueness probe: does the learned offset depend on the initialisation?
                row[metric_name("offset_spread", F, a)] = float(np.std(offset[j], ddof=1))
                row[metric_name("rho_err", F, a)] = float(
                    np.abs(rho_bar[g, j] - data[f"{s}/r_bar"]).mean())
        # share of (feature set, step size, initialisation) whose iterates blew up
        row["diverged_frac"] = float(diverged.mean())
        out.append(row)
    return out
