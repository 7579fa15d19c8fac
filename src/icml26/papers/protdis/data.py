"""Synthetic protein micro-environments with known factors (the spec's generator; numpy).

Per seed: F folds with embeddings u_f ~ N(0, I_8); P proteins x L residues, each protein of
a uniform fold. Per residue: five continuous factors (asa, packing, curvature, flexibility,
hydro) = A u_f + protein effect + residue noise, then packing <- packing - 0.5 asa; a
secondary-structure state ss ~ softmax(B u_f + noise) over (helix, sheet, coil); a nuisance
n ~ N(0, I_4). The frozen "pretrained" embedding mixes them nonlinearly,
x = tanh(W2 gelu(W1 h + b1)) + 0.05 eps, h = [0.5 onehot(ss), 0.5 factors, 2 u_f, n], so
fold identity dominates x and the factors are weak. Downstream labels read the factors only
(never u_f); since factor means depend on the fold, labels correlate with fold inside any
fixed set of folds: a shortcut that breaks on new folds.
"""

from __future__ import annotations

import math

import numpy as np

FACTORS = ("ss", "asa", "packing", "curvature", "flexibility", "hydro")
CONTINUOUS = FACTORS[1:]
SS_CLASSES = 3                       # 0 helix, 1 sheet, 2 coil
TASKS = ("binding", "stability", "enzyme", "interface")
TASK_KIND = {"binding": "binary", "stability": "regression", "enzyme": "multiclass",
             "interface": "binary"}
TASK_LEVEL = {"binding": "residue", "stability": "residue", "enzyme": "protein",
              "interface": "residue"}
TASK_METRIC = {"binding": "mcc", "stability": "spearman", "enzyme": "accuracy",
               "interface": "mcc"}
ENZYME_CLASSES = 4
U_DIM, NUISANCE_DIM, X_DIM = 8, 4, 64


def _gelu(z):
    """Exact (erf) GELU, as torch.nn.GELU()."""
    from scipy.special import erf

    return 0.5 * z * (1.0 + erf(z / math.sqrt(2.0)))


def generate(p: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """One seed's proteins: latent factors, fold per protein, generator weights and x."""
    P, L, F = int(p["n_proteins"]), int(p["n_residues"]), int(p["n_folds"])
    u = rng.normal(size=(F, U_DIM))
    fold = rng.integers(0, F, P)
    A = rng.normal(0.0, 0.7, size=(len(CONTINUOUS), U_DIM))
    B = rng.normal(size=(SS_CLASSES, U_DIM))          # INFERRED: B ~ N(0, 1)
    uf = u[fold]                                        # (P, 8)
    cont = ((uf @ A.T)[:, None, :]
            + rng.normal(0.0, 0.3, size=(P, 1, len(CONTINUOUS)))
            + rng.normal(size=(P, L, len(CONTINUOUS))))
    cont[..., 1] -= 0.5 * cont[..., 0]                  # packing <- packing - 0.5 asa
    logits = (uf @ B.T)[:, None, :] + rng.normal(0.0, 0.5, size=(P, L, SS_CLASSES))
    prob = np.exp(logits - logits.max(-1, keepdims=True))
    prob /= prob.sum(-1, keepdims=True)
    ss = (prob.cumsum(-1) < rng.random((P, L, 1))).sum(-1).clip(0, SS_CLASSES - 1)
    nuis = rng.normal(size=(P, L, NUISANCE_DIM))
    h = np.concatenate([0.5 * np.eye(SS_CLASSES)[ss], 0.5 * cont,
                        2.0 * np.broadcast_to(uf[:, None, :], (P, L, U_DIM)), nuis], axis=-1)
    d_h = h.shape[-1]
    W1 = rng.normal(size=(X_DIM, d_h)) / math.sqrt(d_h)
    b1 = rng.normal(0.0, 0.1, size=X_DIM)               # INFERRED: b1 ~ N(0, 0.1^2)
    W2 = rng.normal(size=(X_DIM, X_DIM)) / math.sqrt(X_DIM)
    x = np.tanh(_gelu(h @ W1.T + b1) @ W2.T) + 0.05 * rng.normal(size=(P, L, X_DIM))
    return {"x": x.reshape(P * L, X_DIM).astype(np.float32),
            "ss": ss.reshape(-1).astype(np.int64),
            "cont": cont.reshape(P * L, len(CONTINUOUS)),
            "fold": fold.astype(np.int64), "u": u}


def zscore(v: np.ndarray, rows: np.ndarray) -> np.ndarray:
    mu, sd = v[rows].mean(0), v[rows].std(0)
    return (v - mu) / np.where(sd > 0, sd, 1.0)


def tasks(g: dict, p: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Labels of D1..D4 over the downstream pool (proteins 0..n_pool-1; z-scores over the
    pool, INFERRED). Residue labels have n_pool * L rows, enzyme class one per protein."""
    L, n_pool = int(p["n_residues"]), int(p["n_pool"])
    rows = np.arange(n_pool * L)
    cont = g["cont"][rows]
    z = zscore(cont, np.arange(len(rows)))
    asa, packing, curv, flex, hydro = (cont[:, i] for i in range(5))
    za, zc, zh = z[:, 0], z[:, 2], z[:, 4]
    binding = ((za > 0.5) & (zc < 0)).astype(np.int64)
    flip = rng.random(len(rows)) < 0.05                 # 5% label flips
    binding = np.where(flip, 1 - binding, binding)
    stability = packing - 0.8 * flex + rng.normal(0.0, 0.3, len(rows))
    interface = ((zh > 0.3) & (za > 0)).astype(np.int64)
    ss = g["ss"][rows].reshape(n_pool, L)
    prot = np.stack([hydro.reshape(n_pool, L).mean(1), asa.reshape(n_pool, L).mean(1),
                     (ss == 0).mean(1), (ss == 1).mean(1)], axis=1)
    C = rng.normal(size=(ENZYME_CLASSES, 4))
    enzyme = np.argmax(prot @ C.T + rng.normal(0.0, 0.3, (n_pool, ENZYME_CLASSES)), axis=1)
    return {"binding": binding, "stability": stability, "enzyme": enzyme.astype(np.int64),
            "interface": interface}


def splits(fold_pool: np.ndarray, p: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Protein ids of train / val / test for the structure and random splits.

    Structure: train on folds < struct_train_folds, of which the last struct_val_folds are
    validation; test on the remaining folds. Random: a 60/15/25 split over proteins with as
    many training proteins as the structure split (validation n_train * 15/60, test
    n_train * 25/60, rounded; INFERRED reading of "60/15/25 with the same number of training
    proteins")."""
    n_tr_f, n_val_f = int(p["struct_train_folds"]), int(p["struct_val_folds"])
    ids = np.arange(len(fold_pool))
    tr = ids[fold_pool < n_tr_f - n_val_f]
    va = ids[(fold_pool >= n_tr_f - n_val_f) & (fold_pool < n_tr_f)]
    te = ids[fold_pool >= n_tr_f]
    out = {"structure/train": tr, "structure/val": va, "structure/test": te}
    perm = rng.permutation(len(ids))
    n_tr = len(tr)
    n_va = int(round(n_tr * 15 / 60))
    n_te = min(len(ids) - n_tr - n_va, int(round(n_tr * 25 / 60)))
    out["random/train"] = np.sort(perm[:n_tr])
    out["random/val"] = np.sort(perm[n_tr:n_tr + n_va])
    out["random/test"] = np.sort(perm[n_tr + n_va:n_tr + n_va + n_te])
    return out


def knowledge_targets(g: dict, pre_rows: np.ndarray, n_bins: int) -> dict[str, np.ndarray]:
    """Pretraining targets over every residue: ss as is; each continuous factor z-scored
    with the pretraining set's mean/std (the repo's L1 regression targets) and cut at the
    pretraining set's quantiles into n_bins bins (the repo's discretised labels, used by the
    packing head and by every adversary)."""
    cont = g["cont"]
    z = zscore(cont, pre_rows)
    qs = np.quantile(cont[pre_rows], np.linspace(0, 1, n_bins + 1)[1:-1], axis=0)  # (nb-1, 5)
    bins = np.stack([np.searchsorted(qs[:, i], cont[:, i], side="right")
                     for i in range(cont.shape[1])], axis=1)
    return {"z": z.astype(np.float32), "bins": bins.astype(np.int64)}
