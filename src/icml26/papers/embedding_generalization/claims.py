"""The spec's five claims, thresholds exactly as written.

Every claim is a statement about the whole zoo ("over the 48 models"): a rank correlation or
a fraction computed once from all models of all seeds, checked with check_pooled. Its 95%
bootstrap interval resamples seeds, each bringing all its models: the configurations are a
fixed design, the random part of a model is its seed (data split, label noise, init), and
the models of one seed share it, so seeds are the independent units. The claims use the
models of params.claim_dataset (digits); the teacher models of the full scale are reported
only. Of those, every claim uses the models the spec's premise covers: trained "enough to
interpolate", i.e. they fit every training label (premise(); training goes on past the spec's
epochs until a model does, up to a cap). A model that hit the cap without interpolating is
left out of the verdict and shown separately: each note says how many models the claim used
and gives the statistic with the others added back. Spearman correlations (Pearson
correlation of average ranks, equal to scipy.stats.spearmanr; tested) use the models where
both columns are finite. Notes state what the data show, computed at report time.
"""

from __future__ import annotations

import numpy as np

from icml26.claims import Claim, check_pooled
from icml26.stats import spearman

PREDICTORS = {  # column -> label; the first is the paper's predictor
    "id_final": "final-layer TwoNN ID",
    "id_first": "first-layer TwoNN ID",
    "pca_final": "final-layer PCA-90",
    "n_params": "parameter count",
    "spec_prod": "spectral-norm product",
}


def zoo(cfg: dict, metrics):
    """The models the claims are about: those of the claim dataset (digits)."""
    want = cfg["params"].get("claim_dataset", "digits")
    teacher = metrics["teacher"].astype(float) > 0.5
    return metrics[~teacher] if want == "digits" else metrics[teacher]


def rho(frame, x: str, y: str) -> float:
    """Spearman rank correlation of two columns over rows where both are finite."""
    a, b = np.asarray(frame[x], dtype=float), np.asarray(frame[y], dtype=float)
    ok = np.isfinite(a) & np.isfinite(b)
    return spearman(a[ok], b[ok])


COLUMNS = ("gap", "depth", "id_final", "id_first", "n_params", "w1_slope", "pop_gap", "bound")


def by_seed(frame) -> list[dict]:
    """The statistic's resampling units: per seed (in seed order), its models' columns."""
    cols = [c for c in COLUMNS if c in frame]
    return [{c: g[c].to_numpy(float) for c in cols}
            for _, g in frame.groupby("seed", sort=True)]


def pooled(parts, stat):
    """check_pooled's stat(idx): ``stat`` of the models of the seeds at indices idx (the
    columns concatenated; ``stat`` takes a mapping column -> array, like a frame)."""
    def f(idx):
        return stat({c: np.concatenate([parts[i][c] for i in idx]) for c in parts[idx[0]]})
    return f


def premise(frame):
    """(covered, others): the models the spec's premise covers - trained "enough to
    interpolate", i.e. they fit every training label (train error 0) - and those that
    stopped at the training cap without doing so (experiment.INTERPOLATION_CAP)."""
    fit = frame["interpolated"].astype(float).to_numpy() > 0.5
    return frame[fit], frame[~fit]


def _scope(n_used: int, n_all: int, with_others: float | None = None, what: str = "") -> str:
    """The note's first words: how many models the claim used, and the statistic with the
    models the premise does not cover added back (shown separately, never in the verdict)."""
    if n_used == n_all:
        return f"all {n_all} {what}models used (every one interpolated)"
    return (f"{n_used} of {n_all} {what}models used (those that interpolated); the "
            f"{n_all - n_used} that stopped at the cap without interpolating are left out "
            f"(with them the statistic is {with_others:.3f})")


def check(cfg: dict, metrics, curves) -> list[Claim]:
    everything = zoo(cfg, metrics)
    m, _ = premise(everything)
    n_all, n_models = len(everything), len(m)
    parts = by_seed(m)
    n_seeds = len(parts)
    r_final = rho(m, "id_final", "gap")
    claims = []

    c = Claim("headline-id-gap",
              "Spearman rho(final-layer TwoNN ID, generalization gap g) >= 0.4 over the "
              "interpolating zoo", ">=", 0.4, n_seeds=n_seeds)
    c.add("value", check_pooled(pooled(parts, lambda f: rho(f, "id_final", "gap")), n_seeds,
                                ">=", 0.4))
    c.note = (_scope(n_models, n_all, rho(everything, "id_final", "gap"))
              + f"; Kendall tau = {_kendall(m, 'id_final', 'gap'):.3f}; "
              + _diagnosis(cfg, m, everything))
    claims.append(c)

    def deep(f):
        keep = np.asarray(f["depth"], dtype=float) >= 2
        return {c: np.asarray(v)[keep] for c, v in f.items()} if isinstance(f, dict) \
            else f[keep]

    def final_minus_first(f):
        d = deep(f)
        return rho(d, "id_final", "gap") - rho(d, "id_first", "gap")

    dm = deep(m)
    r_fd, r_first = rho(dm, "id_final", "gap"), rho(dm, "id_first", "gap")
    c = Claim("final-beats-first-layer",
              "Among models with depth >= 2, rho(final-layer ID, g) exceeds rho(first-layer ID, "
              "g) by >= 0.1", ">=", 0.1, n_seeds=n_seeds)
    c.add("value", check_pooled(pooled(parts, final_minus_first), n_seeds, ">=", 0.1))
    c.note = (_scope(len(dm), len(deep(everything)), final_minus_first(everything),
                     "depth >= 2 ")
              + f": rho(final) = {r_fd:.3f}, rho(first) = {r_first:.3f}")
    claims.append(c)

    def dim_minus_params(f):
        return rho(f, "id_final", "gap") - abs(rho(f, "n_params", "gap"))

    r_par = rho(m, "n_params", "gap")
    c = Claim("dimension-beats-param-count",
              "rho(final-layer ID, g) >= |rho(parameter count, g)| + 0.2 "
              "(measured: rho(final ID, g) - |rho(params, g)|)", ">=", 0.2, n_seeds=n_seeds)
    c.add("value", check_pooled(pooled(parts, dim_minus_params), n_seeds, ">=", 0.2))
    c.note = (_scope(n_models, n_all, dim_minus_params(everything))
              + f": rho(final ID, g) = {r_final:.3f}, rho(parameter count, g) = {r_par:.3f}")
    claims.append(c)

    c = Claim("w1-rate-tracks-id",
              "Spearman(final-layer ID, W1 log-log slope b) >= 0.4 (higher ID, flatter W1 decay)",
              ">=", 0.4, n_seeds=n_seeds)
    c.add("value", check_pooled(pooled(parts, lambda f: rho(f, "id_final", "w1_slope")),
                                n_seeds, ">=", 0.4))
    c.note = _scope(n_models, n_all, rho(everything, "id_final", "w1_slope")) + "."
    claims.append(c)

    c = Claim("bound-non-vacuous-direction",
              "|test loss - validation loss| <= Lip x W1(validation, class-matched pool) for "
              ">= 90% of models", ">=", 0.9, category="sanity", n_seeds=n_seeds)
    c.add("value", check_pooled(pooled(parts, bound_holds), n_seeds, ">=", 0.9))
    c.note = _scope(n_models, n_all, bound_holds(everything))
    ok = np.isfinite(m["pop_gap"].to_numpy(float)) & np.isfinite(m["bound"].to_numpy(float))
    if ok.any():
        ratio = m["bound"].to_numpy(float)[ok] / np.maximum(m["pop_gap"].to_numpy(float)[ok],
                                                             1e-12)
        c.note += (f"; median bound / gap = {np.median(ratio):.3g}; "
                   f"{int((~ok).sum())} of {n_models} models have no finite bound or gap")
    claims.append(c)
    return claims


def bound_holds(frame) -> float:
    """Fraction of models whose |test loss - validation loss| <= the bound; a model whose
    bound or gap is not finite counts as one where it does not hold."""
    gap, bound = np.asarray(frame["pop_gap"], float), np.asarray(frame["bound"], float)
    if not gap.size:
        return float("nan")
    ok = np.isfinite(gap) & np.isfinite(bound)
    return float(np.mean(ok & (gap <= np.where(ok, bound, -np.inf))))


def training_summary(cfg: dict, everything) -> str:
    """How the premise was met (for the notes and the report): how many models needed more
    than the spec's epochs, how many interpolated within the cap, and how long they took."""
    from .experiment import INTERPOLATION_CAP

    epochs = int(cfg["params"]["epochs"])
    cap = INTERPOLATION_CAP * epochs
    if not len(everything):
        return ""
    ep = everything["epochs"].to_numpy(float)
    fit = everything["interpolated"].to_numpy(float) > 0.5
    longer = ep > epochs
    text = (f"{int(fit.sum())} of {len(ep)} models fit every training label within the cap of "
            f"{cap} epochs ({INTERPOLATION_CAP} x the spec's {epochs}); {int(longer.sum())} "
            f"needed more than {epochs}")
    if longer.any():
        text += (f" (median {np.median(ep[longer]):.0f}, most {ep[longer].max():.0f} epochs; "
                 f"{int((longer & (everything['noise'].to_numpy(float) > 0)).sum())} of them "
                 "noisy-label models)")
    if (~fit).any():
        text += (f"; {int((~fit).sum())} did not interpolate (train error up to "
                 f"{everything['train_err'].to_numpy(float)[~fit].max():.3f})")
    return text


def _diagnosis(cfg: dict, m, everything) -> str:
    """Where the correlation comes from (for the note; not used by any verdict): how the
    premise was met, mean final ID per depth, rho with test error."""
    if not len(m):
        return training_summary(cfg, everything)
    by_depth = ", ".join(f"depth {d:g}: {v:.2f}"
                         for d, v in m.groupby("depth")["id_final"].mean().items())
    return (f"{training_summary(cfg, everything)}; mean final ID by depth ({by_depth}); "
            f"rho(final ID, test error) = {rho(m, 'id_final', 'test_err'):.3f}. Training "
            f"matches torch.optim.Adam and TwoNN recovers known dimensions (tests), so this is "
            f"the measured result.")


def _kendall(frame, x: str, y: str) -> float:
    from scipy.stats import kendalltau

    a, b = frame[x].to_numpy(float), frame[y].to_numpy(float)
    ok = np.isfinite(a) & np.isfinite(b)
    return float(kendalltau(a[ok], b[ok])[0]) if ok.sum() >= 3 else float("nan")
