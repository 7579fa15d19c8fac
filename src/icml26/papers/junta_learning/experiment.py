"""Stages of the junta-learning paper.

A setting is one (kind, n, k): kind "classical" (junta distributions, Sweeps A and B) or
"quantum" (junta states). A run is (method, setting, seed) with method in learner (the
Fourier/Pauli-mass selection learner, INFERRED), oracle (knows J) and maxtv (classical only).
Each run replays ``reps`` replicates; replicate r of (setting, seed) draws its instance and
samples from derive_seed(paper, setting, seed, "rep", r), so every method of a setting and seed
sees exactly the same instances and samples (paired comparisons). The methods are
deterministic given the samples, so no method stream is needed.

Curve rows (step = m): err and found (mean over replicates of the error and of J* == J), and
err/r<i> per replicate (the figures bootstrap over replicates).
"""

from __future__ import annotations

import numpy as np

from icml26.scaling import samples_to_reach
from icml26.seeding import derive_seed

from . import classical, quantum


def setting_params(cfg: dict, setting: str) -> dict:
    return {**cfg["params"], **(cfg["settings"][setting] or {})}


def m_grid(cfg: dict, setting: str) -> list[int]:
    """Classical: m_j = round(m_base 2^(j/2)) for j in m_j; quantum: q_m_base 2^j for j in
    q_m_j (sorted, distinct)."""
    p = setting_params(cfg, setting)
    if p["kind"] == "quantum":
        ms = [int(p["q_m_base"]) * 2 ** int(j) for j in p["q_m_j"]]
    else:
        ms = [int(round(float(p["m_base"]) * 2 ** (int(j) / 2))) for j in p["m_j"]]
    return sorted(set(ms))


def run_setting_seed(cfg: dict, setting: str, seed: int, methods) -> dict:
    """{method: (err (n_m, reps), found (n_m, reps))} for one (setting, seed)."""
    p = setting_params(cfg, setting)
    n, k, reps = int(p["n"]), int(p["k"]), int(p["reps"])
    ms = m_grid(cfg, setting)
    out = {m: (np.zeros((len(ms), reps)), np.zeros((len(ms), reps), dtype=bool))
           for m in methods}
    for r in range(reps):
        rng = np.random.default_rng(derive_seed(cfg["paper"], setting, seed, "rep", r))
        if p["kind"] == "quantum":
            res = quantum.replicate(n, k, float(p["mix"]), ms, methods, rng)
        elif p["kind"] == "classical":
            res = classical.replicate(n, k, float(p["tau"]), ms, methods, rng)
        else:
            raise ValueError(f"setting {setting!r}: kind {p['kind']!r} (classical | quantum)")
        for meth in methods:
            out[meth][0][:, r], out[meth][1][:, r] = res[meth]
    return out


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Nothing to precompute: instances are regenerated per (setting, seed, replicate)."""
    return {"settings": np.array(list(cfg["settings"]))}


def train(cfg: dict, data: dict, runs: list) -> tuple[dict[str, np.ndarray], list[dict]]:
    state: dict[str, np.ndarray] = {}
    curves: list[dict] = []
    groups: dict[tuple[str, int], list] = {}
    for run in runs:
        groups.setdefault((run.setting, run.seed), []).append(run)
    for (setting, seed), group in groups.items():
        # all methods of one (setting, seed) in one pass over the shared samples
        res = run_setting_seed(cfg, setting, seed, [r.method for r in group])
        ms = m_grid(cfg, setting)
        for run in group:
            err, found = res[run.method]
            state[f"{run.key}/err"] = err
            state[f"{run.key}/found"] = found.astype(np.int8)
            for g, m in enumerate(ms):
                base = {**run.as_dict(), "step": int(m)}
                curves.append({**base, "metric": "err", "value": float(err[g].mean())})
                curves.append({**base, "metric": "found", "value": float(found[g].mean())})
                for r in range(err.shape[1]):
                    curves.append({**base, "metric": f"err/r{r}", "value": float(err[g, r])})
    return state, curves


def evaluate(cfg: dict, data: dict, runs: list, state: dict, curves) -> list[dict]:
    """Per run (one seed): m*(eps) for the spec's eps values from the seed's mean curve
    (log-log interpolation), support recovery at recovery_m, error at the largest m."""
    p = cfg["params"]
    out = []
    for run in runs:
        ms = np.array(m_grid(cfg, run.setting), dtype=float)
        err = state[f"{run.key}/err"].mean(1)
        found = state[f"{run.key}/found"].mean(1)
        kind = setting_params(cfg, run.setting)["kind"]
        eps_all = sorted({float(e) for e in list(p["eps_list"]) + list(p["q_eps_list"])})
        row = {f"m_star_{e:g}": m_star(ms, err, e) for e in eps_all}
        rec_m = int(p["q_recovery_m"] if kind == "quantum" else p["recovery_m"])
        row["recovery_at_m"] = float(found[ms == rec_m][0]) if (ms == rec_m).any() else np.nan
        row["err_final"] = float(err[-1])
        row["recovery_final"] = float(found[-1])
        out.append(row)
    return out


def m_star(ms, err, eps: float) -> float:
    """First m with mean error <= eps, refined by linear interpolation of log e in log m."""
    return samples_to_reach(ms, np.log(np.asarray(err, dtype=float)), float(np.log(eps)),
                            higher_is_better=False)
