"""Figures of the spec (validation curves, phase plane, drops) and its cell table, plus the
network table, the finite-width table (full) and the log-log fits of D (icml26.scaling)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from icml26.plotting import REFERENCE_COLOR, legend_outside, method_label, method_style, subplots
from icml26.scaling import loglog_fit

from . import PROPOSED
from .claims import A0S, BETAS, ode_cells
from .experiment import a_grid, with_cells


def _beta_colors(values):
    from matplotlib import colormaps

    cmap = colormaps["viridis"]
    n = max(len(values) - 1, 1)
    return {v: cmap(0.05 + 0.8 * i / n) for i, v in enumerate(values)}


def _series(curves, metrics, method, beta, a0, metric, eta):
    """(t, per-seed matrix) of one cell's curve (ODE: identical seeds)."""
    runs = metrics[(metrics["method"] == method) & np.isclose(metrics["beta"], beta)
                   & np.isclose(metrics["a0"], a0) & (metrics["tanh"] == 0.0)]
    if runs.empty:
        return None, None
    setting = runs["setting"].iloc[0]
    part = curves[(curves["method"] == method) & (curves["setting"] == setting)
                  & (curves["metric"] == metric)]
    if part.empty:
        return None, None
    tab = part.pivot_table(index="step", columns="seed", values="value", aggfunc="first")
    return tab.index.to_numpy(dtype=float) * eta, tab.to_numpy(dtype=float)


def validation(cfg, metrics, curves):
    eta = float(cfg["params"]["eta_a"])
    betas = sorted(metrics.loc[np.isclose(metrics["a0"], 0.1) & (metrics["tanh"] == 0.0),
                               "beta"].unique())
    colors = _beta_colors(betas)
    fig, axes = subplots(1, 2, figsize=(10.0, 3.8))
    for ax, metric, ylab, title in ((axes[0], "m", "alignment m(t)", "alignment"),
                                    (axes[1], "a", "second-layer weight a(t)",
                                     "second-layer weight")):
        for b in betas:
            for method, ls in (("ode", "-"), ("network", "--")):
                t, v = _series(curves, metrics, method, b, 0.1, metric, eta)
                if t is None:
                    continue
                keep = t > 0
                mean = v.mean(axis=1)
                lab = f"beta = {b:g}, " + ("ODE" if method == "ode" else "network")
                z = 3.0 if method == "ode" else 2.0
                ax.plot(t[keep], mean[keep], ls, color=colors[b], label=lab, zorder=z)
                if method == "network" and v.shape[1] > 1:
                    sd = v.std(axis=1)
                    ax.fill_between(t[keep], (mean - sd)[keep], (mean + sd)[keep],
                                    color=colors[b], alpha=0.2, linewidth=0, zorder=1.5)
        ax.set_xscale("log")
        ax.set_xlabel("time t (ODE units; one SGD step = eta_a)")
        ax.set_ylabel(ylab)
        ax.set_title(f"{title}, a0 = 0.1")
    legend_outside(fig)
    return fig


def phase_plane(cfg, metrics, curves):
    eta = float(cfg["params"]["eta_a"])
    fig, ax = subplots(figsize=(7.2, 4.2))
    ode = ode_cells(metrics, cfg)
    ode = ode[np.isclose(ode["beta"], 0.5)]
    ag = a_grid(cfg)
    if len(ode):
        setting = ode["setting"].iloc[0]
        ms = curves[(curves["method"] == "ode") & (curves["setting"] == setting)
                    & (curves["metric"] == "mstar")]
        ms = ms[ms["seed"] == ms["seed"].min()].sort_values("step")
        ax.plot(ag[ms["step"].to_numpy()], ms["value"].to_numpy(), color=REFERENCE_COLOR,
                lw=3.0, label="critical manifold m*(a)", zorder=1.0)
        a_eq, m_eq = float(ode["a_eq"].iloc[0]), float(ode["m_eq"].iloc[0])
        if np.isfinite(a_eq):
            ax.plot([a_eq], [m_eq], "k*", ms=12, label=f"a_eq = {a_eq:.3f}", zorder=4.0)
    a0s = sorted(ode["a0"].unique())
    colors = _beta_colors(a0s)
    for a0 in a0s:
        _, m = _series(curves, metrics, "ode", 0.5, a0, "m", eta)
        _, a = _series(curves, metrics, "ode", 0.5, a0, "a", eta)
        if m is None:
            continue
        ax.plot(a[:, 0], m[:, 0], "-o", ms=2, color=colors[a0], label=f"ODE from a0 = {a0:g}",
                zorder=3.0)
    ax.set_xlabel("second-layer weight a")
    ax.set_ylabel("alignment m")
    ax.set_title("phase plane, beta = 0.5")
    legend_outside(ax)
    return fig


def drops(cfg, metrics, curves):
    fig, axes = subplots(1, 2, figsize=(10.0, 3.8))
    ode = ode_cells(metrics, cfg)
    net = metrics[metrics["method"] == "network"]
    methods = list(cfg["methods"])
    for ax, fixed, var, fixed_val, title in ((axes[0], "a0", "beta", 0.1, "D vs beta, a0 = 0.1"),
                                             (axes[1], "beta", "a0", 0.5, "D vs a0, beta = 0.5")):
        o = ode[np.isclose(ode[fixed], fixed_val)].sort_values(var)
        if "ode" in methods and len(o):
            st = method_style("ode", methods, PROPOSED)
            st["label"] = method_label(cfg, "ode")
            ax.plot(o[var], o["D"], "-o", ms=4, **st)
        n = net[np.isclose(net[fixed], fixed_val)]
        if "network" in methods and len(n):
            st = method_style("network", methods, PROPOSED)
            st["label"] = method_label(cfg, "network")
            g = n.groupby(var)["D"]
            ax.errorbar(g.mean().index, g.mean().to_numpy(), yerr=g.std(ddof=0).to_numpy(),
                        fmt="s", ms=5, capsize=3, color=st["color"], label=st["label"],
                        zorder=st["zorder"])
        if var == "a0" and len(o) and np.isfinite(o["a_eq"]).any():
            ax.axvline(float(o["a_eq"].iloc[0]), ls=":", color=REFERENCE_COLOR, lw=1.2,
                       label="a_eq (beta = 0.5)", zorder=1.0)
            ax.set_xscale("log")
        ax.set_xlabel(var)
        ax.set_ylabel("relative drop D")
        ax.set_title(title)
    legend_outside(fig)
    return fig


FIGURES = {"validation": validation, "phase_plane": phase_plane, "drops": drops}


def make(cfg, metrics, curves) -> dict:
    metrics = with_cells(cfg, metrics)
    return {name: FIGURES[name](cfg, metrics, curves) for name in cfg["figures"]}


# ---------------------------------------------------------------------------------------------
def _fmt(x, digits=4):
    return "n/a" if not np.isfinite(x) else f"{x:.{digits}f}"


def _sign(x, tol=1e-12):
    if not np.isfinite(x):
        return "n/a"
    return "0" if abs(x) <= tol else ("+" if x > 0 else "-")


def _mean_sd(s):
    s = np.asarray(s, dtype=float)
    return f"{np.mean(s):.4f} ± {np.std(s):.4f}" if s.size else "n/a"


def tables(cfg, metrics, curves) -> dict:
    metrics = with_cells(cfg, metrics)
    out = {}
    ode = metrics[metrics["method"] == "ode"].sort_values(
        ["tanh", "eps", "beta", "a0", "seed"]).drop_duplicates(["setting"])
    rows = []
    for _, r in ode.iterrows():
        row = {"cell": r["setting"], "beta": r["beta"], "a0": r["a0"], "eps": r["eps"],
               "activation": "tanh" if r["tanh"] else "relu",
               "m_peak": _fmt(r["m_peak"]), "t_peak": _fmt(r["t_peak"], 2),
               "m_final": _fmt(r["m_final"]), "D": _fmt(r["D"]), "a_eq": _fmt(r["a_eq"]),
               "slow flow at a0": _sign(r["reduced_flow_a0"])}
        if np.isfinite(r.get("quad_err", np.nan)):
            row["max |L_quad - L_exact|"] = f"{r['quad_err']:.1e}"
            row["D (exact loss)"] = _fmt(r["D_exact"])
            row["a_eq (exact loss)"] = _fmt(r["a_eq_exact"])
        rows.append(row)
    out["ODE cells: peak and final alignment, relative drop D, slow equilibrium a_eq"] = \
        pd.DataFrame(rows)

    net = metrics[metrics["method"] == "network"]
    rows = []
    for setting, g in net.groupby("setting", sort=False):
        o = ode[ode["setting"] == setting]
        m_ode = float(o["m_at_net_T"].iloc[0]) if len(o) else np.nan
        rows.append({"cell": setting, "seeds": len(g), "m_peak": _mean_sd(g["m_peak"]),
                     "t_peak": _mean_sd(g["t_peak"]), "m_final": _mean_sd(g["m_final"]),
                     "Delta_net": _mean_sd(g["delta"]), "m_net(T)": _mean_sd(g["m_T"]),
                     "m_ODE(T)": _fmt(m_ode), "a_net(T)": _mean_sd(g["a_T"]),
                     "loss(T) - loss(t_peak)": _mean_sd(g["loss_T_minus_peak"])})
    if rows:
        out["Networks (mean ± std over seeds) against the ODE at the same time T"] = \
            pd.DataFrame(rows)

    widths = cfg["params"]["widths"]
    if len(widths) > 1 and len(net):
        rows = []
        for setting, g in net.groupby("setting", sort=False):
            o = ode[ode["setting"] == setting]
            m_ode = float(o["m_at_net_T"].iloc[0]) if len(o) else np.nan
            for w in widths:
                rows.append({"cell": setting, "N": w, "Delta_net": _mean_sd(g[f"delta_N{w}"]),
                             "|m_net(T) - m_ODE(T)|": _fmt(abs(g[f"m_T_N{w}"].mean() - m_ode))})
        out["Finite width: drop and ODE gap per width"] = pd.DataFrame(rows)

    rows = []
    cells = ode[(ode["tanh"] == 0.0)]
    eps0 = float(cfg["params"]["eps"])
    sweep = cells[np.isclose(cells["a0"], 0.1) & np.isclose(cells["eps"], eps0)
                  & (cells["beta"] > 0) & (cells["D"] > 0)]
    if len(sweep) >= 2:
        slope, _ = loglog_fit(sweep["beta"], sweep["D"])
        rows.append({"fit": "D vs beta (a0 = 0.1, beta > 0)", "points": len(sweep),
                     "log-log slope": _fmt(slope, 3)})
    for beta in sorted(cells["beta"].unique()):
        e = cells[np.isclose(cells["a0"], 0.1) & np.isclose(cells["beta"], beta)
                  & (cells["D"] > 0)]
        if e["eps"].nunique() >= 2:
            slope, _ = loglog_fit(e["eps"], e["D"])
            rows.append({"fit": f"D vs eps (beta = {beta:g}, a0 = 0.1)", "points": len(e),
                         "log-log slope": _fmt(slope, 3)})
    if rows:
        out["Scaling of the drop: log-log fits (icml26.scaling), ODE"] = pd.DataFrame(rows)
    return out


__all__ = ["make", "tables", "BETAS", "A0S"]
