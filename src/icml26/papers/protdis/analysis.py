"""Representation diagnostics (numpy / scikit-learn): ridge probes per block, specificity,
cross-block independence, and the generator's premise (fold identity dominates x)."""

from __future__ import annotations

import numpy as np

from .data import CONTINUOUS, FACTORS


def _std(train, test):
    mu, sd = train.mean(0), train.std(0)
    sd = np.where(sd > 0, sd, 1.0)
    return (train - mu) / sd, (test - mu) / sd


def ridge_fit_predict(Xtr, Ytr, Xte, alpha):
    """Ridge with an unpenalised intercept (scikit-learn's Ridge): predictions for Xte."""
    xm, ym = Xtr.mean(0), Ytr.mean(0)
    A = Xtr - xm
    coef = np.linalg.solve(A.T @ A + alpha * np.eye(A.shape[1]), A.T @ (Ytr - ym))
    return (Xte - xm) @ coef + ym


def pca_transform(fit_rows: np.ndarray, x: np.ndarray, k: int) -> np.ndarray:
    """Scores of x on the top-k principal components of ``fit_rows`` (numpy SVD; each
    component's sign fixed so its largest-magnitude loading is positive)."""
    mean = fit_rows.mean(0)
    _, _, vt = np.linalg.svd(fit_rows - mean, full_matrices=False)
    comp = vt[:k]
    sign = np.sign(comp[np.arange(k), np.argmax(np.abs(comp), 1)])
    return (x - mean) @ (comp * sign[:, None]).T


def probe_scores(feat_tr, feat_te, ss_tr, ss_te, cont_tr, cont_te, blocks, alpha):
    """(n_blocks, n_factors): test accuracy of a ridge classifier (one-vs-all on {-1, 1},
    argmax: scikit-learn's RidgeClassifier) for ss and test R^2 of a ridge regression for each
    continuous factor (scikit-learn's Ridge, r2_score per output), from each block of
    z-scored feature columns."""
    out = np.zeros((len(blocks), len(FACTORS)))
    n_cls = int(max(ss_tr.max(), ss_te.max())) + 1
    for b, cols in enumerate(blocks):
        a, t = _std(feat_tr[:, cols], feat_te[:, cols])
        pred = ridge_fit_predict(a, 2.0 * np.eye(n_cls)[ss_tr] - 1.0, t, alpha)
        out[b, 0] = float(np.mean(np.argmax(pred, 1) == ss_te))
        pred = ridge_fit_predict(a, cont_tr, t, alpha)
        ss_res = ((cont_te - pred) ** 2).sum(0)
        ss_tot = ((cont_te - cont_te.mean(0)) ** 2).sum(0)
        out[b, 1:] = 1.0 - ss_res / ss_tot
    return out


def specificity(scores: np.ndarray, owner=None) -> float:
    """Mean over factors k of score(block of k, k) - max over other blocks of score(j, k).

    ``owner[k]`` is the block tied to factor k (ProtDiS: branch k); None matches each factor
    to its best block (MT-ENT's chunks)."""
    vals = []
    for k in range(scores.shape[1]):
        col = scores[:, k]
        b = int(np.argmax(col)) if owner is None else int(owner[k])
        vals.append(col[b] - np.max(np.delete(col, b)))
    return float(np.mean(vals))


def independence(feat: np.ndarray, blocks) -> float:
    """Mean |Pearson r| over pairs of dimensions in different blocks (NaN if a dimension is
    constant: a collapsed block is a failed run, not an independent one)."""
    sd = feat.std(0)
    if np.any(sd == 0):
        return float("nan")
    r = np.corrcoef(feat, rowvar=False)
    owner = np.empty(feat.shape[1], int)
    for b, cols in enumerate(blocks):
        owner[cols] = b
    cross = np.triu(owner[:, None] != owner[None, :], 1)
    return float(np.abs(r[cross]).mean())


def variance_shares(x: np.ndarray, fold: np.ndarray, ss: np.ndarray, cont: np.ndarray):
    """Premise check: share of x's total variance explained by fold identity (between-fold
    means) and by a linear map of the residue factors [onehot ss, 5 continuous]."""
    xc = x - x.mean(0)
    total = float((xc ** 2).sum())
    means = np.zeros((fold.max() + 1, x.shape[1]))
    np.add.at(means, fold, xc)
    counts = np.bincount(fold, minlength=len(means))[:, None]
    means = means / np.maximum(counts, 1)
    fold_share = float((means[fold] ** 2).sum()) / total
    Z = np.concatenate([np.eye(3)[ss], cont, np.ones((len(x), 1))], axis=1)
    coef, *_ = np.linalg.lstsq(Z, xc, rcond=None)
    factor_share = float(((Z @ coef) ** 2).sum()) / total
    return fold_share, factor_share


__all__ = ["probe_scores", "specificity", "independence", "variance_shares", "CONTINUOUS"]
