"""The synthetic multi-source classification task (spec "Data"), regenerated per seed.

Sub-populations ("skills / languages") j = 0..S-1 live in R^d: x ~ N(m_j, I) with
m_j = centre_scale * u_j (u_j a random unit vector), and each has its own labelling rule
y = argmax_c (W_j (x - m_j))_c with W_j of N(0, 1) entries. The rules differ across
sub-populations, so data from one does not teach another.

The target task is a mixture of some sub-populations; every auxiliary dataset names the
sub-populations it samples (uniformly) and its label-noise rate. A noisy label is replaced by
a uniformly drawn *different* class (INFERRED: the spec says "label noise p%" only).
"""

from __future__ import annotations

import numpy as np


class World:
    """Centres and labelling rules of the sub-populations of one seed."""

    def __init__(self, rng: np.random.Generator, n_subpops: int, dim: int, n_classes: int,
                 centre_scale: float):
        u = rng.standard_normal((n_subpops, dim))
        self.centres = centre_scale * u / np.linalg.norm(u, axis=1, keepdims=True)
        self.rules = rng.standard_normal((n_subpops, n_classes, dim))
        self.n_classes = n_classes

    def sample(self, rng: np.random.Generator, subpops, n: int, noise: float = 0.0,
               weights=None):
        """n examples: sub-population per example from ``subpops`` (probabilities ``weights``,
        default uniform), features, labels (a fraction ``noise`` flipped to another class)."""
        subpops = np.asarray(subpops, dtype=np.int64)
        w = None if weights is None else np.asarray(weights, dtype=float) / np.sum(weights)
        which = subpops[rng.choice(len(subpops), size=n, p=w)]
        x = self.centres[which] + rng.standard_normal((n, self.centres.shape[1]))
        scores = np.einsum("ncd,nd->nc", self.rules[which], x - self.centres[which])
        y = scores.argmax(axis=1)
        flip = rng.random(n) < noise
        shift = rng.integers(1, self.n_classes, size=n)
        y = np.where(flip, (y + shift) % self.n_classes, y)
        return x, y.astype(np.int64), which, flip


def make_seed_data(rng: np.random.Generator, p: dict) -> dict[str, np.ndarray]:
    """All arrays of one seed: target train / dev / test (with each example's sub-population)
    and the auxiliary pool (M datasets of n_aux examples; the first ``preview_shots`` of each
    are the preview the valuation methods see)."""
    world = World(rng, p["n_subpops"], p["dim"], p["n_classes"], p["centre_scale"])
    tsub, tw = p["target_subpops"], p["target_weights"]
    out = {}
    for split in ("train", "dev", "test"):
        x, y, which, _ = world.sample(rng, tsub, p[f"n_target_{split}"], 0.0, tw)
        out[f"target_{split}_x"], out[f"target_{split}_y"] = x, y
        out[f"target_{split}_subpop"] = which
    xs, ys, subs, flips = [], [], [], []
    for spec in p["pool"]:
        x, y, which, flip = world.sample(rng, spec["subpops"], p["n_aux"], spec["noise"])
        xs.append(x), ys.append(y), subs.append(which), flips.append(flip)
    out["aux_x"], out["aux_y"] = np.stack(xs), np.stack(ys)
    out["aux_subpop"], out["aux_flipped"] = np.stack(subs), np.stack(flips)
    return out
