"""Data of stage-accountability (numpy only): the spurious-feature image and text tasks, the
per-stage example pools, the clean resamples of the intervention, minibatch orders, schedules.

Image setting (spec default): scikit-learn's 8x8 digits (pixels / 16), label digit >= 5. The
spurious feature is a bright 2x2 patch (value 1.0) in the top-left corner. An "aligned"
example carries it iff its label is 1, a "counter" example iff its label is 0; a "random"
stage draws it with probability 1/2 independently of the label.

Text setting (full only, INFERRED generator): synthetic bag-of-words comments over a 500-word
vocabulary. Word 0 is the identity token (the spurious feature, count 1 when present), words
1..n_toxic are toxic words, the rest neutral with Zipf frequencies. A toxic comment draws
Poisson(toxic_rate_pos) toxic words, a clean one Poisson(toxic_rate_neg), so the toxic words
are a real but noisy signal and the identity token a tempting shortcut.
"""

from __future__ import annotations

import numpy as np

from icml26.fed import load_digits_scaled

PATCH = np.array([0, 1, 8, 9])   # top-left 2x2 pixels of an 8x8 image (row-major)
IDENTITY_TOKEN = 0


def schedule(steps: int, eta: float, warmup_frac: float) -> np.ndarray:
    """Per-step learning rates: linear warm-up over round(warmup_frac * steps) steps (at least
    one) to the peak eta, then cosine to 0 (INFERRED: the warm-up reaches eta at its last step,
    the cosine starts at eta and would reach 0 one step after the stage ends)."""
    t = np.arange(int(steps), dtype=float)
    w = max(1, int(round(warmup_frac * steps)))
    warm = eta * (t + 1) / w
    cos = eta * 0.5 * (1.0 + np.cos(np.pi * (t - w) / max(steps - w, 1)))
    return np.where(t < w, warm, cos)


def batch_order(n: int, steps: int, batch: int, rng: np.random.Generator) -> np.ndarray:
    """(steps, batch) indices into a pool of n examples: shuffled epochs laid end to end."""
    need = steps * batch
    epochs = -(-need // n)
    order = np.concatenate([rng.permutation(n) for _ in range(epochs)])[:need]
    return order.reshape(steps, batch).astype(np.int64)


def spurious_flags(y: np.ndarray, aligned, rng: np.random.Generator) -> np.ndarray:
    """Whether each example carries the spurious feature. ``aligned`` None: at random (1/2,
    independent of the label); a fraction a: exactly round(a n) examples, chosen at random,
    are aligned (feature iff y = 1), the others counter (feature iff y = 0)."""
    n = len(y)
    if aligned is None:
        return rng.random(n) < 0.5
    is_aligned = np.zeros(n, bool)
    is_aligned[rng.permutation(n)[: int(round(float(aligned) * n))]] = True
    return np.where(is_aligned, y == 1, y == 0)


def apply_feature(X: np.ndarray, flags: np.ndarray, kind: str) -> np.ndarray:
    """Examples with the spurious feature set where ``flags`` (digits: patch pixels = 1.0, else
    the image's own pixels; text: identity-token count 1, else 0)."""
    X = np.array(X, dtype=np.float64, copy=True)
    if kind == "digits":
        X[np.ix_(flags, PATCH)] = 1.0
    else:
        X[:, IDENTITY_TOKEN] = flags.astype(np.float64)
    return X


def clean_resample(y_pool: np.ndarray, n: int, rng: np.random.Generator):
    """The intervention's replacement data (INFERRED reading of "a class-balanced,
    spurious-free resample of the same size"): n // 2 examples of class 0 and n - n // 2 of
    class 1, drawn with replacement from the stage's own pool; the spurious feature then at
    random (1/2, independent of the label). Returns (pool indices, flags)."""
    idx0, idx1 = np.flatnonzero(y_pool == 0), np.flatnonzero(y_pool == 1)
    if not len(idx0) or not len(idx1):
        raise ValueError("a stage pool needs both classes for a class-balanced resample")
    pick = np.concatenate([rng.choice(idx0, n // 2), rng.choice(idx1, n - n // 2)])
    pick = pick[rng.permutation(n)]
    return pick, rng.random(n) < 0.5


def digits_base():
    """(features (1797, 64) in [0, 1], binary label digit >= 5)."""
    X, digit = load_digits_scaled()
    return X, (digit >= 5).astype(np.int64)


def text_base(n: int, p: dict, rng: np.random.Generator):
    """Synthetic toxicity comments (INFERRED generator, see the module docstring): (counts
    (n, vocab) with the identity-token column 0 still empty, toxic label)."""
    V, k = int(p["vocab"]), int(p["n_toxic"])
    y = (rng.random(n) < 0.5).astype(np.int64)
    neutral = np.arange(k + 1, V)
    w = 1.0 / np.arange(1, len(neutral) + 1) ** 1.1
    w /= w.sum()
    X = np.zeros((n, V))
    lengths = int(p["min_len"]) + rng.poisson(float(p["extra_len"]), n)
    n_tox = rng.poisson(np.where(y == 1, p["toxic_rate_pos"], p["toxic_rate_neg"]))
    for i in range(n):
        np.add.at(X[i], rng.choice(neutral, lengths[i], p=w), 1.0)
        np.add.at(X[i], rng.integers(1, k + 1, n_tox[i]), 1.0)
    return X, y


def make_task(base_X, base_y, kind: str, stages: list[dict], n_test: int, n_probe: int,
              batch: int, warmup_frac: float, rng: np.random.Generator):
    """One seed's task: disjoint stage pools and a test set from a permutation of the base
    examples, each pool with its spurious flags, its clean resample and its minibatch order.

    Returns a dict of arrays: test X/y/group (0 aligned, 1 counter), the probe indices (n_probe
    counter then n_probe aligned test examples) and per stage k (1-based) X, y, Xc, yc,
    batches, eta."""
    N = len(base_y)
    need = n_test + sum(int(s["n"]) for s in stages)
    if need > N:
        raise ValueError(f"stages and test set need {need} examples, the base has {N}")
    perm = rng.permutation(N)
    test = perm[:n_test]
    out = {}
    yt = base_y[test]
    group = np.zeros(n_test, np.int64)
    group[rng.permutation(n_test)[: n_test // 2]] = 1          # half counter, half aligned
    flags = np.where(group == 0, yt == 1, yt == 0)
    out["test_X"] = apply_feature(base_X[test], flags, kind)
    out["test_y"] = yt
    out["test_group"] = group
    counter, aligned = np.flatnonzero(group == 1), np.flatnonzero(group == 0)
    out["probe"] = np.concatenate([rng.permutation(counter)[:n_probe],
                                   rng.permutation(aligned)[:n_probe]]).astype(np.int64)
    start = n_test
    for k, st in enumerate(stages, start=1):
        idx = perm[start:start + int(st["n"])]
        start += int(st["n"])
        y = base_y[idx]
        out[f"s{k}_X"] = apply_feature(base_X[idx], spurious_flags(y, st.get("aligned"), rng),
                                       kind)
        out[f"s{k}_y"] = y
        pick, cflags = clean_resample(y, len(idx), rng)
        out[f"s{k}_Xc"] = apply_feature(base_X[idx][pick], cflags, kind)
        out[f"s{k}_yc"] = y[pick]
        steps = int(st["steps"])
        out[f"s{k}_batches"] = batch_order(len(idx), steps, batch, rng)
        out[f"s{k}_eta"] = schedule(steps, float(st["eta"]), warmup_frac)
    return out


def spurious_stage(stages: list[dict]) -> int:
    """1-based index of the stage built to introduce the spurious correlation: the one with
    the largest aligned fraction (the spec's stage 2)."""
    a = [(-1.0 if s.get("aligned") is None else float(s["aligned"])) for s in stages]
    return int(np.argmax(a)) + 1
