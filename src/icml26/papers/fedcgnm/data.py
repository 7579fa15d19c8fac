"""The two long-tailed federated problems of the spec, regenerated per (setting, seed).

- S1 (``kind: gauss``): C-class Gaussian mixture in R^d, class means mu_c ~ N(0, sep^2 I)
  fixed per seed, x | c ~ N(mu_c, I); training counts n_c = floor(n_max * IR^(-c/(C-1)))
  (class 0 is the head), balanced validation and test sets.
- S2 (``kind: digits``): scikit-learn's digits (features in [0, 1], loaded once by prepare);
  per digit hold out n_test test and n_val validation images, then subsample the remaining
  pool to n_c = floor(n_max * IR^(-r/(C-1))) where r is the digit's frequency rank under a
  per-seed random permutation of the classes.
Both are split over K clients by a label-skewed Dirichlet(alpha) partition (every client keeps
at least ``min_client`` samples). Everything derives from derive_seed(paper, setting, seed,
...), so every method of a (setting, seed) sees the same data, partition and initial model.
"""

from __future__ import annotations

import numpy as np

from icml26 import fed
from icml26.seeding import derive_seed


def setting_params(cfg: dict, setting: str) -> dict:
    """The paper's params overridden by the setting's own (kind, n_max, imbalance, ...)."""
    return {**cfg["params"], **(cfg["settings"][setting] or {})}


def _gauss(p: dict, rng: np.random.Generator) -> dict:
    c, d = int(p["n_classes"]), int(p["dim"])
    means = rng.normal(0.0, float(p["sep"]), (c, d))
    counts = fed.long_tail_counts(int(p["n_max"]), float(p["imbalance"]), c)

    def draw(per_class):
        y = np.repeat(np.arange(c), per_class)
        return means[y] + rng.normal(size=(len(y), d)), y

    x, y = draw(counts)
    xv, yv = draw(np.full(c, int(p["n_val"])))
    xt, yt = draw(np.full(c, int(p["n_test"])))
    return {"x": x, "y": y, "xv": xv, "yv": yv, "xt": xt, "yt": yt, "counts": counts}


def _digits(p: dict, rng: np.random.Generator, digits_x: np.ndarray, digits_y: np.ndarray):
    c = 10
    perm = rng.permutation(c)                      # perm[r] = the digit of frequency rank r
    target = fed.long_tail_counts(int(p["n_max"]), float(p["imbalance"]), c)
    parts = {"tr": [], "v": [], "t": []}
    counts = np.zeros(c, dtype=np.int64)
    for r, digit in enumerate(perm):
        idx = rng.permutation(np.flatnonzero(digits_y == digit))
        n_test, n_val = int(p["n_test"]), int(p["n_val"])
        parts["t"].append(idx[:n_test])
        parts["v"].append(idx[n_test:n_test + n_val])
        pool = idx[n_test + n_val:]
        # the pool holds 104-113 images per digit: a head target of 110 is clipped to the pool
        n = min(int(target[r]), len(pool))
        parts["tr"].append(pool[:n])
        counts[digit] = n
    tr, v, t = (np.concatenate(parts[k]) for k in ("tr", "v", "t"))
    return {"x": digits_x[tr], "y": digits_y[tr], "xv": digits_x[v], "yv": digits_y[v],
            "xt": digits_x[t], "yt": digits_y[t], "counts": counts}


def make_dataset(cfg: dict, setting: str, seed: int, data: dict) -> dict:
    """Train/val/test arrays, global class counts and the client partition of one (setting, seed).

    Keys: x, y, xv, yv, xt, yt, counts (per label), clients (list of index arrays into x),
    rank (labels ordered from most to least frequent).
    """
    p = setting_params(cfg, setting)
    rng = np.random.default_rng(derive_seed(cfg["paper"], setting, seed, "data"))
    if p["kind"] == "gauss":
        ds = _gauss(p, rng)
    elif p["kind"] == "digits":
        ds = _digits(p, rng, data["digits_x"], data["digits_y"])
    else:
        raise ValueError(f"setting {setting!r}: kind {p['kind']!r} not in gauss, digits")
    part_rng = np.random.default_rng(derive_seed(cfg["paper"], setting, seed, "partition"))
    ds["clients"] = fed.dirichlet_partition(ds["y"], int(p["clients"]), float(p["alpha"]),
                                            part_rng, min_size=int(p["min_client"]))
    ds["rank"] = np.argsort(-ds["counts"], kind="stable")
    ds["init_seed"] = derive_seed(cfg["paper"], setting, seed, "init")
    return ds


def n_classes(cfg: dict, setting: str) -> int:
    p = setting_params(cfg, setting)
    return 10 if p["kind"] == "digits" else int(p["n_classes"])
