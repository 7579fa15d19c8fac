"""Fig. 1: MCC and Amari vs E per rho; Fig. 2: MCC vs rho at E = 10; table of mean +- std."""

from __future__ import annotations

import numpy as np

from icml26.plotting import legend_outside, method_label, method_style, subplots

from . import PROPOSED


def _annotate(cfg: dict, metrics):
    m = metrics.copy()
    m["rho"] = [float({**cfg["params"], **(cfg["settings"][s] or {})}["rho"]) for s in m["setting"]]
    m["E"] = [int({**cfg["params"], **(cfg["settings"][s] or {})}["E"]) for s in m["setting"]]
    # figures use the default-profile block (d = 5, no noise, largest n)
    keep = []
    for s in m["setting"]:
        q = {**cfg["params"], **(cfg["settings"][s] or {})}
        keep.append(int(q["d"]) == 5 and float(q["noise"]) == 0.0)
    m = m[np.array(keep, bool)]
    if len(m):
        q_n = [int({**cfg["params"], **(cfg["settings"][s] or {})}["n"]) for s in m["setting"]]
        m = m.assign(n=q_n)
        m = m[m["n"] == m["n"].max()]
    return m


def vs_domains(cfg, metrics):
    m = _annotate(cfg, metrics)
    rhos = sorted(m["rho"].unique())
    fig, axes = subplots(2, max(len(rhos), 1), figsize=(3.6 * max(len(rhos), 1) + 2.0, 5.6),
                         squeeze=False)
    for j, rho in enumerate(rhos):
        for i, col in enumerate(("mcc", "amari")):
            ax = axes[i, j]
            for method in cfg["methods"]:
                part = m[(m["method"] == method) & (m["rho"] == rho)]
                if not len(part):
                    continue
                g = part.groupby("E")[col]
                st = method_style(method, cfg["methods"], PROPOSED)
                st["label"] = method_label(cfg, method)
                ax.errorbar(g.mean().index, g.mean().values, yerr=g.std(ddof=0).values,
                            marker="o", capsize=2, **st)
            ax.set_xscale("log")
            Es = sorted(m["E"].unique())
            ax.set_xticks(Es, [str(e) for e in Es])
            ax.minorticks_off()
            ax.set_xlabel("number of domains E")
            ax.set_ylabel("MCC (held-out)" if col == "mcc" else "Amari distance")
            ax.set_title(f"rho = {rho:g}")
    legend_outside(fig)
    return fig


def vs_rho(cfg, metrics):
    m = _annotate(cfg, metrics)
    E = 10 if (m["E"] == 10).any() else (int(m["E"].max()) if len(m) else 10)
    fig, ax = subplots(figsize=(4.2, 3.2))
    for method in ("mudo-com", "jd-ls"):
        part = m[(m["method"] == method) & (m["E"] == E)]
        if not len(part):
            continue
        g = part.groupby("rho")["mcc"]
        st = method_style(method, cfg["methods"], PROPOSED)
        st["label"] = method_label(cfg, method)
        ax.errorbar(g.mean().index, g.mean().values, yerr=g.std(ddof=0).values, marker="o",
                    capsize=2, **st)
    ax.set_xlabel("dependence strength rho")
    ax.set_ylabel("MCC (held-out)")
    ax.set_title(f"E = {E}")
    legend_outside(fig)
    return fig


def make(cfg, metrics, curves) -> dict:
    return {"mcc_amari_vs_domains": vs_domains(cfg, metrics), "mcc_vs_rho": vs_rho(cfg, metrics)}


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    rows = []
    for (method, setting), part in metrics.groupby(["method", "setting"], sort=False):
        q = {**cfg["params"], **(cfg["settings"][setting] or {})}
        rows.append({"method": method, "setting": setting, "rho": q["rho"], "E": q["E"],
                     "MCC mean": part["mcc"].mean(), "MCC std": part["mcc"].std(ddof=0),
                     "Amari mean": part["amari"].mean(), "Amari std": part["amari"].std(ddof=0),
                     "Sigma error": part["sigma_err"].mean(),
                     "fit loss": part["fit_loss"].mean()})
    return {"MCC and Amari distance per (method, rho, E) (mean and std over seeds)":
            pd.DataFrame(rows)}
