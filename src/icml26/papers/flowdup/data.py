"""Synthetic heterogeneous clients (spec "Data").

z-space: 4 classes with means 2 e_c (first four coordinates of R^16) and isotropic Gaussian
noise. Each client holds ``n_train`` training points (labeled or not, depending on its role)
and ``n_test`` test points (labels used only for evaluation).

- rotation (setting A): x = R(alpha) z with R rotating the coordinate planes (1,2) and (3,4) by
  the client's angle alpha ~ U[0, 2 pi); labels stay the canonical classes. The class-averaged
  mean of z is (0.5, 0.5, 0.5, 0.5, 0, ...), so the unlabeled mean of x reveals alpha.
- permutation (setting B, negative control): x = z, each client relabels the classes by its
  own random permutation; the marginal of x is the same for every client.
- prior (setting C, full profile): x = z with per-client class proportions ~ Dirichlet(0.5)
  and a larger noise sd; the marginal reveals the client's label prior.
"""

from __future__ import annotations

import numpy as np

DIM, N_CLASSES = 16, 4
KINDS = ("rotation", "permutation", "prior")


def rotation_matrix(alpha: float, dim: int = DIM) -> np.ndarray:
    """Rotation by alpha in the planes (x1, x2) and (x3, x4); identity elsewhere."""
    c, s = np.cos(alpha), np.sin(alpha)
    R = np.eye(dim)
    for i in (0, 2):
        R[i, i], R[i, i + 1], R[i + 1, i], R[i + 1, i + 1] = c, -s, s, c
    return R


def make_clients(n_clients: int, n_train: int, n_test: int, kind: str, rng: np.random.Generator,
                 noise_sd: float = 0.7, dirichlet: float = 0.5) -> dict[str, np.ndarray]:
    """Clients as stacked arrays: x_train (C, n_train, 16), y_train, x_test, y_test, alpha
    (the rotation angle, 0 where none), perm (C, 4: canonical class -> client label) and
    prior (C, 4: class proportions)."""
    if kind not in KINDS:
        raise ValueError(f"unknown data kind {kind!r}; allowed: {', '.join(KINDS)}")
    n = n_train + n_test
    means = 2.0 * np.eye(N_CLASSES, DIM)
    prior = np.full((n_clients, N_CLASSES), 1.0 / N_CLASSES)
    if kind == "prior":
        prior = rng.dirichlet(np.full(N_CLASSES, float(dirichlet)), size=n_clients)
    alpha = np.zeros(n_clients)
    if kind == "rotation":
        alpha = rng.uniform(0.0, 2.0 * np.pi, n_clients)
    perm = np.tile(np.arange(N_CLASSES), (n_clients, 1))
    if kind == "permutation":
        perm = np.stack([rng.permutation(N_CLASSES) for _ in range(n_clients)])
    # class of each point (inverse-CDF draw from the client's prior), then z
    u = rng.random((n_clients, n))
    c = (u[..., None] > np.cumsum(prior, axis=1)[:, None, :-1]).sum(-1)
    z = means[c] + noise_sd * rng.standard_normal((n_clients, n, DIM))
    R = np.stack([rotation_matrix(a) for a in alpha])
    x = np.einsum("kij,knj->kni", R, z)
    y = np.take_along_axis(perm, c, axis=1)
    return {"x_train": x[:, :n_train], "y_train": y[:, :n_train], "x_test": x[:, n_train:],
            "y_test": y[:, n_train:], "alpha": alpha, "perm": perm, "prior": prior}


def client_groups(p: dict, rng: np.random.Generator) -> dict[str, dict[str, np.ndarray]]:
    """The three client populations of one (setting, seed), drawn in a fixed order from one
    stream: labeled training clients, unlabeled training clients, new (test) clients."""
    kw = {"n_train": int(p["n_train"]), "n_test": int(p["n_test"]), "kind": p["kind"],
          "noise_sd": float(p.get("noise_sd", 0.7)), "dirichlet": float(p.get("dirichlet", 0.5))}
    return {g: make_clients(int(p[f"n_{g}"]), rng=rng, **kw)
            for g in ("labeled", "unlabeled", "new")}
