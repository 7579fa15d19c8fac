"""Stages of the feature-unlearning paper: prepare (quadrature, manifold grid), train (ODE
cells and online networks), evaluate (drops, critical manifold, ODE-network gap).

Runs are (method, setting, seed). A setting is one cell (beta, a0) of the spec's grid, with
eps and the activation taken from the setting or else from params. Methods:
- ``ode``: the infinite-width fast-slow ODE (model.py), integrated with scipy's solve_ivp
  (icml26.dynamics) on the grid t = k eta_a, plus its critical manifold m*(a) and a_eq. It is
  deterministic: the job computes it once per cell and every seed of the cell gets the same
  arrays (claims read it with check_value).
- ``network``: the finite two-layer network trained online by spherical SGD (network.py), one
  network per width in ``widths``; streams from run.rng_seed, so sharding changes nothing.
"""

from __future__ import annotations

import numpy as np

from . import model
from .network import OnlineNetwork

STEADY_FROM = 1.0       # claim 1: m non-decreasing after t = 1
SLAVED_FROM = 3.0       # claim 5: |m - m*(a)| <= 0.03 for t >= 3 and a(3) still far from a_eq
MANIFOLD_RANGE = (0.4, 2.0)   # claim 5: m*(a) strictly decreasing on this range of a
LAST_RECORDS = 5        # network m_final: mean of the last 5 records (spec)


def P(cfg):
    return cfg["params"]


def cell(cfg, setting) -> dict:
    """(beta, a0, eps, activation) of a setting, with params' defaults."""
    s, p = cfg["settings"][setting], P(cfg)
    return {"beta": float(s["beta"]), "a0": float(s["a0"]),
            "eps": float(s.get("eps", p["eps"])),
            "activation": str(s.get("activation", p["activation"]))}


def ode_times(cfg) -> np.ndarray:
    """The ODE's output grid: t_k = k eta_a (one network step per record), up to T."""
    p = P(cfg)
    n = int(round(float(p["T"]) / float(p["eta_a"])))
    return np.arange(n + 1) * float(p["eta_a"])


def a_grid(cfg) -> np.ndarray:
    lo, hi, step = (float(v) for v in P(cfg)["a_grid"])
    return lo + step * np.arange(int(np.floor((hi - lo) / step + 1e-9)) + 1)


def curve_steps(cfg, n_last: int) -> np.ndarray:
    """Indices of the ODE records written to the curves (log-spaced, for the log-time figure)."""
    g = np.geomspace(1, n_last, int(P(cfg)["curve_points"]))
    return np.unique(np.concatenate([[0], np.round(g).astype(np.int64), [n_last]]))


def quadrature(cfg):
    return model.gauss_hermite(int(P(cfg)["quad_nodes"]))


# ---------------------------------------------------------------------------------------------
def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Nothing random: the quadrature rule and the manifold's a-grid (for the record)."""
    z, w = quadrature(cfg)
    return {"gh_nodes": z, "gh_weights": w, "a_grid": a_grid(cfg)}


def solve_cell(cfg, c: dict) -> dict[str, np.ndarray]:
    """The ODE trajectory of one cell, the critical manifold of its beta and a_eq."""
    p, quad = P(cfg), quadrature(cfg)
    t = ode_times(cfg)
    args = (c["beta"], c["activation"], quad)
    m, a, L = model.solve(c["beta"], c["a0"], c["eps"], float(p["m0"]), t, c["activation"],
                          quad, float(p["rtol"]), float(p["atol"]))
    ag = a_grid(cfg)
    a_eq = model.a_equilibrium(*args)
    out = {"t": t, "m": m, "a": a, "L": L,
           "mstar_traj": model.critical_m(a, *args),           # m*(a(t)) along the path
           "mstar_grid": model.critical_m(ag, *args),
           "scalars": np.array([a_eq,
                                float(model.critical_m(a_eq, *args)[0]) if np.isfinite(a_eq)
                                else np.nan,
                                float(model.reduced_flow(c["a0"], *args)[0])])}
    if c["activation"] == "relu":
        # the spec's quadrature against the exact ReLU loss: along the path, and the whole
        # computation (trajectory, manifold, a_eq) redone with the exact loss
        out["quad_err"] = np.array([np.max(np.abs(L - model.relu_closed_form(m, a, c["beta"])[0]))])
        ex = (c["beta"], "relu-exact", quad)
        me, _, _ = model.solve(c["beta"], c["a0"], c["eps"], float(p["m0"]), t, "relu-exact",
                               quad, float(p["rtol"]), float(p["atol"]))
        out["exact_m"] = me
        out["exact_mstar_grid"] = model.critical_m(ag, *ex)
        out["exact_scalars"] = np.array([model.a_equilibrium(*ex)])
    return out


def train_network(cfg, c: dict, run) -> dict[str, np.ndarray]:
    p = P(cfg)
    out = {}
    for width in p["widths"]:
        net = OnlineNetwork(c["beta"], c["a0"], c["eps"], d=p["d"], width=width,
                            batch=p["batch"], steps=p["steps"], eta_a=p["eta_a"],
                            record_every=p["record_every"], n_eval=p["n_eval"],
                            activation=c["activation"])
        net.fit(np.random.default_rng(run.rng_seed(cfg["paper"], f"sgd-{width}")),
                np.random.default_rng(run.rng_seed(cfg["paper"], f"eval-{width}")),
                loss_every=int(p["loss_every"]))
        for name, arr in (("t", net.t_), ("m", net.m_), ("a", net.a_), ("loss", net.loss_)):
            out[f"N{width}/{name}"] = arr
        # spread over units at T: the ODE's ansatz has every unit at the same (m, a)
        out[f"N{width}/spread_T"] = np.array([np.std(net.a_units_.astype(np.float64)),
                                              np.std(net.W_[:, 0].astype(np.float64))])
    return out


def _rows(run, metric, steps, values):
    return [{**run.as_dict(), "step": int(k), "metric": metric, "value": float(v)}
            for k, v in zip(steps, values, strict=True)]


def train(cfg: dict, data: dict[str, np.ndarray], runs: list) -> tuple[dict, list[dict]]:
    p = P(cfg)
    state, curves, cache = {}, [], {}
    eta = float(p["eta_a"])
    for run in runs:
        c = cell(cfg, run.setting)
        if run.method == "ode":
            key = tuple(sorted(c.items()))
            if key not in cache:            # deterministic: once per cell, copied per seed
                cache[key] = solve_cell(cfg, c)
            arrs = cache[key]
            idx = curve_steps(cfg, len(arrs["t"]) - 1)
            for name, metric in (("m", "m"), ("a", "a"), ("L", "loss")):
                curves += _rows(run, metric, idx, arrs[name][idx])
            curves += _rows(run, "mstar", np.arange(len(arrs["mstar_grid"])), arrs["mstar_grid"])
        elif run.method == "network":
            arrs = train_network(cfg, c, run)
            for width in p["widths"]:
                suffix = "" if width == p["widths"][-1] else f"_N{width}"
                t = arrs[f"N{width}/t"]
                steps = np.round(t / eta).astype(np.int64)
                for name in ("m", "a"):
                    curves += _rows(run, name + suffix, steps, arrs[f"N{width}/{name}"])
                ok = np.isfinite(arrs[f"N{width}/loss"])
                curves += _rows(run, "loss" + suffix, steps[ok], arrs[f"N{width}/loss"][ok])
        else:
            raise ValueError(f"unknown method {run.method!r}")
        for name, arr in arrs.items():
            state[f"{run.key}/{name}"] = np.asarray(arr, dtype=np.float64)
    return state, curves


# ---------------------------------------------------------------------------------------------
def drop(t, m, last: int = 1) -> dict:
    """Peak, final (mean of the last ``last`` records), drop Delta and relative drop D."""
    i = int(np.argmax(m))
    final = float(np.mean(m[-last:]))
    peak = float(m[i])
    return {"m_peak": peak, "t_peak": float(t[i]), "m_final": final,
            "delta": peak - final, "D": (peak - final) / peak if peak > 0 else np.nan,
            "peak_index": i}


def ode_metrics(cfg, s: dict) -> dict:
    p = P(cfg)
    t, m, a, L = s["t"], s["m"], s["a"], s["L"]
    out = drop(t, m)
    out.pop("peak_index")
    a_eq, m_eq, flow_a0 = (float(v) for v in s["scalars"])
    after1, after3 = t >= STEADY_FROM - 1e-12, t >= SLAVED_FROM - 1e-12
    ag, mg = a_grid(cfg), s["mstar_grid"]
    inside = (ag >= MANIFOLD_RANGE[0] - 1e-9) & (ag <= MANIFOLD_RANGE[1] + 1e-9)
    t_net = int(p["steps"]) * float(p["eta_a"])
    k3 = int(np.argmin(np.abs(t - SLAVED_FROM)))
    dev = np.abs(m - s["mstar_traj"])
    out.update({
        "a_final": float(a[-1]), "L_final": float(L[-1]),
        "a_eq": a_eq, "m_eq": m_eq, "reduced_flow_a0": flow_a0,
        "a0_below_aeq": float(cfg_a0(s) < a_eq) if np.isfinite(a_eq) else np.nan,
        # claim 6: the largest rise of L between consecutive records (<= 0 is non-increasing)
        "L_max_rise": float(np.max(np.diff(L))),
        # claim 1: the largest fall of m between consecutive records after t = 1
        "m_max_fall_after_1": float(np.max(-np.diff(m[after1]))) + 0.0   # no -0.0 in files
        if after1.sum() > 1 else np.nan,
        # claim 5: slaving to the manifold and the slow drift
        "dev_after_3": float(dev[after3].max()) if after3.any() else np.nan,
        "dev_max": float(dev.max()),
        "a_at_3": float(a[k3]) if t[-1] >= SLAVED_FROM else np.nan,
        "mstar_max_step": float(np.max(np.diff(mg[inside]))) if inside.sum() > 1 else np.nan,
        "m_at_net_T": float(np.interp(t_net, t, m)) if t_net <= t[-1] + 1e-9 else np.nan,
        "L_at_net_T": float(np.interp(t_net, t, L)) if t_net <= t[-1] + 1e-9 else np.nan,
    })
    for a_val in (0.4, 0.8, 2.0):
        out[f"mstar_a{a_val:g}"] = float(model.critical_m(a_val, *_model_args(cfg, s))[0]) \
            if "beta" in s else np.nan
    if "quad_err" in s:
        out["quad_err"] = float(s["quad_err"][0])
        ex = drop(t, s["exact_m"])
        out.update({"D_exact": ex["D"], "delta_exact": ex["delta"],
                    "a_eq_exact": float(s["exact_scalars"][0]),
                    "mstar_max_step_exact": float(np.max(np.diff(s["exact_mstar_grid"][inside])))
                    if inside.sum() > 1 else np.nan})
    return out


def cfg_a0(s):
    return float(s["a"][0])


def _model_args(cfg, s):
    return float(s["beta"]), str(s["activation"]), quadrature(cfg)


def network_metrics(cfg, s: dict) -> dict:
    p = P(cfg)
    out = {}
    for width in p["widths"]:
        t, m, loss = s[f"N{width}/t"], s[f"N{width}/m"], s[f"N{width}/loss"]
        d = drop(t, m, LAST_RECORDS)
        i = d.pop("peak_index")
        row = {**d, "m_T": float(m[-1]), "a_T": float(s[f"N{width}/a"][-1]),
               "loss_T": float(loss[-1]), "loss_at_peak": float(loss[i]),
               "loss_T_minus_peak": float(loss[-1] - loss[i]),
               "loss_0": float(loss[0]),
               "a_unit_sd_T": float(s[f"N{width}/spread_T"][0]),
               "m_unit_sd_T": float(s[f"N{width}/spread_T"][1])}
        suffix = "" if width == p["widths"][-1] else f"_N{width}"
        out.update({k + suffix: v for k, v in row.items()})
        if len(p["widths"]) > 1:
            out.update({f"{k}_N{width}": v for k, v in row.items()})
    return out


def evaluate(cfg: dict, data, runs: list, state: dict, curves) -> list[dict]:
    rows = []
    for run in runs:
        pre = f"{run.key}/"
        s = {k[len(pre):]: v for k, v in state.items() if k.startswith(pre)}
        if run.method == "ode":
            c = cell(cfg, run.setting)
            s.update({"beta": c["beta"], "activation": c["activation"]})
            rows.append(ode_metrics(cfg, s))
        else:
            rows.append(network_metrics(cfg, s))
    return rows


def with_cells(cfg, metrics):
    """The metrics with each run's cell (beta, a0, eps, tanh) added from the config (the
    cell is a setting's parameters, not a measured metric, so it is not stored there)."""
    out = metrics.copy()
    cells = {s: cell(cfg, s) for s in cfg["settings"]}
    for key in ("beta", "a0", "eps"):
        out[key] = [cells[s][key] for s in out["setting"]]
    out["tanh"] = [float(cells[s]["activation"] == "tanh") for s in out["setting"]]
    return out
