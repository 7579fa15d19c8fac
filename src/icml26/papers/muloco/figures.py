"""Loss vs K (headline), cosine vs K, validation curves; tables per (method, K) and lr selection."""

from __future__ import annotations

import numpy as np

from icml26.plotting import band_style, legend_outside, method_label, method_style, subplots

from . import PROPOSED
from .claims import DILOCO, DPA, DPM, MULOCO

DP_OF = {DILOCO: DPA, MULOCO: DPM}


def _k_of(cfg, setting) -> int:
    return int((cfg["settings"].get(setting) or {}).get("K", 1))


def _default_h_settings(cfg) -> list[str]:
    """Non-variant settings with the default H, sorted by K (the loss-vs-K axis)."""
    H = int(cfg["params"]["H"])
    names = [s for s, p in cfg["settings"].items()
             if int((p or {}).get("H", H)) == H and not (p or {}).get("variant")]
    return sorted(names, key=lambda s: _k_of(cfg, s))


def _by_k(cfg, metrics, method, column):
    xs, means, stds = [], [], []
    for s in _default_h_settings(cfg):
        v = metrics[(metrics["method"] == method) & (metrics["setting"] == s)][column]
        v = v.to_numpy(dtype=float)
        if v.size and np.isfinite(v).any():
            xs.append(_k_of(cfg, s))
            means.append(np.nanmean(v))
            stds.append(np.nanstd(v))
    return np.array(xs), np.array(means), np.array(stds)


def make(cfg, metrics, curves) -> dict:
    methods = list(cfg["methods"])
    out = {}

    fig, ax = subplots(figsize=(7.0, 3.6))
    for m in (DILOCO, MULOCO):
        x, mu, sd = _by_k(cfg, metrics, m, "final_val_loss")
        if x.size:
            style = method_style(m, methods, PROPOSED) | {"label": method_label(cfg, m)}
            ax.errorbar(x, mu, yerr=sd, marker="o", capsize=3, **style)
    for m in (DPA, DPM):
        v = metrics[metrics["method"] == m]["final_val_loss"].to_numpy(dtype=float)
        if v.size:
            color = method_style(m, methods, PROPOSED)["color"]
            ax.axhline(v.mean(), color=color, ls="--", lw=1.2, label=method_label(cfg, m))
            ax.axhspan(v.mean() - v.std(), v.mean() + v.std(), color=color, alpha=0.12, lw=0)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("workers K")
    ax.set_ylabel("final validation loss (nats/char)")
    legend_outside(fig)
    out["loss_vs_k"] = fig

    fig, ax = subplots(figsize=(7.0, 3.6))
    for m in (DILOCO, MULOCO):
        x, mu, sd = _by_k(cfg, metrics, m, "mean_cos")
        if x.size:
            style = method_style(m, methods, PROPOSED) | {"label": method_label(cfg, m)}
            ax.errorbar(x, mu, yerr=sd, marker="o", capsize=3, **style)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("workers K")
    ax.set_ylabel("mean cos(Δ, Δ_ref)")
    legend_outside(fig)
    out["cosine_vs_k"] = fig

    fig, ax = subplots(figsize=(8.0, 3.6))
    settings = _default_h_settings(cfg)
    big = settings[-1] if settings else None
    val = curves[curves["metric"] == "val_loss"]
    for m in methods:
        part = val[val["method"] == m]
        if m in (DILOCO, MULOCO):
            part = part[part["setting"] == big]
        if not len(part):
            continue
        t = part.pivot_table(index="seed", columns="step", values="value", aggfunc="first")
        x = t.columns.to_numpy(dtype=float)
        mu, sd = t.mean(axis=0).to_numpy(), t.std(axis=0, ddof=0).to_numpy()
        style = method_style(m, methods, PROPOSED)
        style["label"] = method_label(cfg, m) + (f" (K={_k_of(cfg, big)})" if m in DP_OF else "")
        if m not in DP_OF:
            style["linestyle"] = "--"
        ax.plot(x, mu, **style)
        ax.fill_between(x, mu - sd, mu + sd, **band_style(style))
    ax.set_xlabel("inner steps")
    ax.set_ylabel("validation loss (nats/char)")
    legend_outside(fig)
    out["curves"] = fig
    return out


def tables(cfg, metrics, curves) -> dict:
    import pandas as pd

    rows = []
    for m in (DPA, DPM, DILOCO, MULOCO):
        for s in _default_h_settings(cfg) + [s for s in cfg["settings"]
                                             if s not in _default_h_settings(cfg)]:
            part = metrics[(metrics["method"] == m) & (metrics["setting"] == s)].set_index("seed")
            if not len(part):
                continue
            loss = part["final_val_loss"]
            row = {"method": method_label(cfg, m), "setting": s,
                   "K": int(part["K"].iloc[0]),
                   "loss (mean)": float(loss.mean()), "loss (std)": float(loss.std(ddof=0))}
            if m in DP_OF:
                dp = metrics[metrics["method"] == DP_OF[m]].drop_duplicates("seed")
                dp = dp.set_index("seed")["final_val_loss"]
                seeds = loss.index.intersection(dp.index)
                row["gap to own DP"] = float((loss.loc[seeds] - dp.loc[seeds]).mean()) \
                    if len(seeds) else np.nan
                row["cos(Δ, Δ_ref)"] = float(part["mean_cos"].mean())
                row["‖Δ‖/‖Δ_ref‖"] = float(part["mean_norm_ratio"].mean())
            rows.append(row)
    main = pd.DataFrame(rows)
    lr_rows = []
    chosen = {"adamw": float(metrics["lr_adamw"].iloc[0]),
              "muon": float(metrics["lr_muon"].iloc[0])} if len(metrics) else {}
    sel = curves[curves["metric"].astype(str).str.startswith("lrsel_loss_")]
    sel = sel.drop_duplicates("metric")
    for metric, value in zip(sel["metric"], sel["value"], strict=True):
        name, lr = metric[len("lrsel_loss_"):].split("_")
        lr_rows.append({"optimizer": name, "lr": float(lr),
                        "val loss (DP, K=1, selection seed)": float(value),
                        "chosen": "yes" if chosen and float(lr) == chosen[name] else ""})
    return {"Loss, gap to own DP baseline and pseudogradient cosine per (method, K)": main,
            "Inner-lr selection (frozen for every method and K)": pd.DataFrame(lr_rows)}
