"""Data of the nested-dro paper: the synthetic regression with heavy-tailed contamination,
clean high-leverage points and covariate shift, and the diabetes data with injected target
contamination. ``kind`` marks each training sample: 0 bulk, 1 clean high-leverage, 2 outlier."""

from __future__ import annotations

import numpy as np

BULK, LEVERAGE, OUTLIER = 0, 1, 2


def low_directions(d: int) -> slice:
    """The barely explored input directions (std 0.1 in the bulk): the last 40% (2 of 5 at
    the spec's d = 5). Only the leverage points inform θ there (the spec's design premise)."""
    return slice(d - int(round(0.4 * d)), d)


def synthetic(p: dict, rng: np.random.Generator) -> dict:
    """One synthetic instance (train + both test conditions) for parameters p.

    Default sizes (spec): d = 5, n = 300 = 288 bulk + 12 leverage points, noise 0.3·t_2,
    a fraction eps of BULK points shifted by ±U(10, 30), 2000 test points x ~ N(0, I).
    INFERRED for other n, d (full profile): 4% of the points are leverage points and the
    last 40% of the directions (2 of 5) are the barely explored ones (std 0.1 in the bulk).
    """
    d, n = int(p.get("d", 5)), int(p.get("n", 300))
    nu, eps = float(p.get("nu", 2.0)), float(p["eps"])
    n_lev = int(round(0.04 * n))
    n_bulk = n - n_lev
    theta = rng.normal(size=d)
    theta *= 2.0 / np.linalg.norm(theta)
    scale = np.ones(d)
    scale[low_directions(d)] = 0.1
    x_bulk = rng.normal(size=(n_bulk, d)) * scale
    x_lev = 3.0 * rng.normal(size=(n_lev, d))
    X = np.vstack([x_bulk, x_lev])
    y = X @ theta + 0.3 * rng.standard_t(nu, size=n)
    kind = np.r_[np.full(n_bulk, BULK), np.full(n_lev, LEVERAGE)]
    n_out = int(round(eps * n_bulk))
    if n_out:
        idx = rng.choice(n_bulk, size=n_out, replace=False)
        y[idx] += rng.choice([-1.0, 1.0], size=n_out) * rng.uniform(10.0, 30.0, size=n_out)
        kind[idx] = OUTLIER
    n_test = int(p.get("n_test", 2000))
    Xt = rng.normal(size=(n_test, d))
    yt = Xt @ theta + 0.3 * rng.normal(size=n_test)
    Xt_obs = Xt + float(p.get("perturb", 0.5)) * rng.normal(size=Xt.shape)
    return {"X": X, "y": y, "kind": kind, "theta_star": theta, "X_test": Xt, "y_test": yt,
            "X_test_perturbed": Xt_obs}


def load_diabetes_standardised() -> dict:
    """scikit-learn's diabetes (442 x 10); features and target standardised on all 442."""
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    y = (y - y.mean()) / y.std()
    return {"diabetes_X": X.astype(float), "diabetes_y": y.astype(float)}


def diabetes(p: dict, X: np.ndarray, y: np.ndarray, rng: np.random.Generator) -> dict:
    """70/30 split; a fraction eps of TRAINING targets replaced by y ± U(3, 6) (std(y) = 1)."""
    n = len(y)
    perm = rng.permutation(n)
    n_train = int(round(0.7 * n))
    tr, te = perm[:n_train], perm[n_train:]
    ytr = y[tr].copy()
    kind = np.full(n_train, BULK)
    n_out = int(round(float(p["eps"]) * n_train))
    if n_out:
        idx = rng.choice(n_train, size=n_out, replace=False)
        ytr[idx] += rng.choice([-1.0, 1.0], size=n_out) * rng.uniform(3.0, 6.0, size=n_out)
        kind[idx] = OUTLIER
    return {"X": X[tr], "y": ytr, "kind": kind, "X_test": X[te], "y_test": y[te]}
