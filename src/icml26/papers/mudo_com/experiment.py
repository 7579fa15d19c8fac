"""Stages of the mudo-com paper: prepare (nothing to fetch), train (fit every method on the
covariances of one (setting, seed)), evaluate (MCC / Amari / Sigma error on held-out samples).

A setting is (rho, E) (full also d, n, noise); its data are regenerated from
derive_seed(paper, setting, seed, "data"), identical for every method (paired comparisons);
the held-out draw uses the stream "test". Method randomness (restart pairs and perturbations,
FastICA's start) comes from run.rng_seed(paper, ...).
"""

from __future__ import annotations

import time

import numpy as np
from scipy.optimize import linear_sum_assignment

from icml26.identifiability import amari_distance, mcc
from icml26.seeding import derive_seed

from . import baselines, model, mudocom


def setting_params(cfg: dict, setting: str) -> dict:
    return {**cfg["params"], **(cfg["settings"][setting] or {})}


def truth_and_train(cfg: dict, setting: str, seed: int):
    """The true model of (setting, seed) and its training sample (E, n, d)."""
    p = setting_params(cfg, setting)
    rng = np.random.default_rng(derive_seed(cfg["paper"], setting, seed, "data"))
    truth = model.draw_truth(int(p["d"]), int(p["E"]), float(p["rho"]), rng,
                             float(p["lam_lo"]), float(p["lam_hi"]))
    _, x = model.sample(truth, int(p["n"]), float(p["noise"]), rng)
    return truth, x


def test_sample(cfg: dict, setting: str, seed: int, truth: model.Truth):
    """Fresh, independent held-out draw (n_test per domain): metrics never see the fit data."""
    p = setting_params(cfg, setting)
    rng = np.random.default_rng(derive_seed(cfg["paper"], setting, seed, "test"))
    return model.sample(truth, int(p["n_test"]), float(p["noise"]), rng)


def fit_method(method: str, cfg: dict, setting: str, x: np.ndarray, truth: model.Truth,
               rng_seed) -> dict:
    """Fit one method; returns W (E, d, d) per-domain unmixing plus diagnostics."""
    p = setting_params(cfg, setting)
    C = model.covariances(x)
    E = C.shape[0]
    norms = np.einsum("eij,eij->e", C, C)
    out: dict = {"Sigma": None, "lam": None, "losses": None, "iters": None}
    if method in ("mudo-com", "jd-ls"):
        f = mudocom.fit(C, np.random.default_rng(rng_seed("init")),
                        free_sigma=(method == "mudo-com"), restarts=int(p["restarts"]),
                        maxiter=int(p["maxiter"]), perturb=float(p["perturb"]),
                        gtol=float(p["gtol"]))
        A = f.A
        out.update(Sigma=f.Sigma, lam=f.lam, loss=f.loss, losses=f.losses, iters=f.iters)
    elif method == "jd-gevd":
        A = baselines.jd_gevd(C)
        # diagnostic loss of the JD model at the GEVD solution (lam from diag(W C_e W^T))
        theta = mudocom.initial_point(C, (0, 1), False, 0.0, np.random.default_rng(0))
        out["loss"] = mudocom.loss_and_grad(theta, C, norms, False)[0]
    elif method == "oracle":
        A = truth.A
        out["loss"] = np.nan
    elif method == "fastica":
        W = baselines.fastica_unmixing(x, rng_seed("fastica"), int(p["ica_max_iter"]),
                                       p.get("ica_n"))
        sd = x.std(axis=1)                           # (E, d) per-domain standardisation
        out["W"] = W[None] / sd[:, None, :]          # W_ica diag(1 / sd_e)
        out["loss"] = np.nan
        return out
    else:
        raise ValueError(f"unknown method {method!r}")
    out["W"] = np.repeat(np.linalg.inv(A)[None], E, axis=0)
    return out


def train(cfg: dict, data: dict, runs: list) -> tuple[dict[str, np.ndarray], list[dict]]:
    state: dict[str, np.ndarray] = {}
    curves: list[dict] = []
    cache: dict = {}
    for run in sorted(runs, key=lambda r: (r.setting, r.seed)):
        key = (run.setting, run.seed)
        if key not in cache:
            cache = {key: truth_and_train(cfg, run.setting, run.seed)}
        truth, x = cache[key]

        def rng_seed(stream, run=run):
            return run.rng_seed(cfg["paper"], stream)

        t0 = time.process_time()
        out = fit_method(run.method, cfg, run.setting, x, truth, rng_seed)
        cpu = time.process_time() - t0
        state[f"{run.key}/W"] = out["W"]
        if out["Sigma"] is not None:
            state[f"{run.key}/Sigma"] = out["Sigma"]
            state[f"{run.key}/lam"] = out["lam"]
        base = run.as_dict()
        curves.append({**base, "step": 0, "metric": "fit_loss", "value": float(out["loss"])})
        curves.append({**base, "step": 0, "metric": "fit_cpu_s", "value": float(cpu)})
        if out["losses"] is not None:
            for r, (loss, it) in enumerate(zip(out["losses"], out["iters"], strict=True)):
                curves.append({**base, "step": r, "metric": "restart_loss", "value": float(loss)})
                curves.append({**base, "step": r, "metric": "restart_iters", "value": float(it)})
    return state, curves


def sigma_error(W: np.ndarray, A: np.ndarray, Sigma_hat: np.ndarray, Sigma: np.ndarray) -> float:
    """||Sigma_hat' - Sigma||_F / ||Sigma||_F after matching estimated to true components
    (Hungarian on the row-normalised |W A|) and fixing signs by sign(W A)."""
    P = W @ A
    Q = np.abs(P) / np.abs(P).max(axis=1, keepdims=True)
    est, true = linear_sum_assignment(-Q)
    order = np.empty(len(true), int)
    order[true] = est                                # true component j <- estimate order[j]
    signs = np.sign(P[order, np.arange(len(true))])
    S = Sigma_hat[np.ix_(order, order)] * np.outer(signs, signs)
    return float(np.linalg.norm(S - Sigma) / np.linalg.norm(Sigma))


def evaluate(cfg: dict, data: dict, runs: list, state: dict, curves) -> list[dict]:
    """mcc (held-out, averaged over domains), amari (averaged over domains' unmixings),
    sigma_err (MuDo-CoM only), fit_loss and fit_cpu_s per run."""
    out = []
    truths: dict = {}
    for run in runs:
        key = (run.setting, run.seed)
        if key not in truths:
            truth, _ = truth_and_train(cfg, run.setting, run.seed)
            s, x = test_sample(cfg, run.setting, run.seed, truth)
            truths = {key: (truth, s, x)}
        truth, s, x = truths[key]
        W = state[f"{run.key}/W"]
        E = W.shape[0]
        mccs = [mcc(s[e], (x[e] - x[e].mean(axis=0)) @ W[e].T) for e in range(E)]
        amaris = [amari_distance(W[e], truth.A) for e in range(E)]
        row = {"mcc": float(np.mean(mccs)), "amari": float(np.mean(amaris)),
               "sigma_err": np.nan}
        if f"{run.key}/Sigma" in state and run.method == "mudo-com":
            row["sigma_err"] = sigma_error(W[0], truth.A, state[f"{run.key}/Sigma"],
                                           truth.Sigma)
        part = curves[(curves["method"] == run.method) & (curves["setting"] == run.setting)
                      & (curves["seed"] == run.seed) & (curves["step"] == 0)]
        vals = dict(zip(part["metric"], part["value"].astype(float), strict=False))
        row["fit_loss"] = vals.get("fit_loss", np.nan)
        row["fit_cpu_s"] = vals.get("fit_cpu_s", np.nan)
        out.append(row)
    return out


def prepare(cfg: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Nothing to fetch: all data are regenerated per (setting, seed) in train/evaluate."""
    return {"settings": np.array(list(cfg["settings"]))}
