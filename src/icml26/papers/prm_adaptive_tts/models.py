"""The tiny step generator (the "LLM") and the tiny process reward model (PRM), in numpy.

Both are one-hidden-layer ReLU MLPs on one-hot features (spec):

- generator: [one-hot(x_{i-1}) (m), one-hot(op) (2), one-hot(c) (c_max)] -> H -> m logits for
  x_i; trained with cross-entropy on the correct transitions of a random 75% of the
  m x 2 x c_max (value, op, c) triples (Adam 3e-3, 400 steps, batch 128);
- PRM: the generator's features plus one-hot(proposed x_i) (m) -> H -> 1 (sigmoid); trained with
  BCE on generator samples (T = 1.2) from a separate random 70% of the triples, labelled by the
  world's exact step checker.

Training stacks the models of several seeds on a leading axis (each seed its own triples,
batches and initialisation; Adam is elementwise, so each trains as it would alone). Inference
works on one model and gathers rows of W1 instead of multiplying one-hot vectors.
"""

from __future__ import annotations

import numpy as np

from icml26.agents.worlds.chains import apply_op, check_step
from icml26.npoptim import Adam


def n_features(m: int, c_max: int, prm: bool) -> int:
    return m + 2 + c_max + (m if prm else 0)


def n_params(m: int, c_max: int, hidden: int, prm: bool) -> int:
    d, out = n_features(m, c_max, prm), (1 if prm else m)
    return d * hidden + hidden + hidden * out + out


def all_triples(m: int, c_max: int) -> np.ndarray:
    """Every (value, op, c) triple, (m * 2 * c_max, 3)."""
    v, o, c = np.meshgrid(np.arange(m), np.arange(2), np.arange(1, c_max + 1), indexing="ij")
    return np.stack([v.ravel(), o.ravel(), c.ravel()], axis=1).astype(np.int64)


def init(d: int, hidden: int, out: int, rng: np.random.Generator) -> list[np.ndarray]:
    """nn.Linear's default: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for W (in, out) and b (1, out)."""
    b1, b2 = 1.0 / np.sqrt(d), 1.0 / np.sqrt(hidden)
    return [rng.uniform(-b1, b1, (d, hidden)), rng.uniform(-b1, b1, (1, hidden)),
            rng.uniform(-b2, b2, (hidden, out)), rng.uniform(-b2, b2, (1, out))]


def _onehot(cols, d: int) -> np.ndarray:
    """Stacked multi-hot rows: cols is a list of (S, B) index arrays -> (S, B, d)."""
    S, B = cols[0].shape
    X = np.zeros((S, B, d))
    s = np.arange(S)[:, None]
    b = np.arange(B)[None, :]
    for col in cols:
        X[s, b, col] = 1.0
    return X


def _train(params, batches, loss_grad, steps: int, lr: float, opt=None, active=None):
    """Adam on stacked params; ``batches(t)`` -> (X (S,B,d), target); returns the loss curve.
    ``active`` (S,) freezes the models that are done (their batches are still drawn)."""
    opt = opt or Adam(params, lr=lr)
    W1, b1, W2, b2 = params
    losses = np.zeros((steps, W1.shape[0]))
    for t in range(steps):
        X, target = batches(t)
        pre = X @ W1 + b1
        h = np.maximum(pre, 0.0)
        z = h @ W2 + b2
        loss, dz = loss_grad(z, target)
        losses[t] = loss
        dW2 = h.transpose(0, 2, 1) @ dz
        dh = (dz @ W2.transpose(0, 2, 1)) * (pre > 0)
        dW1 = X.transpose(0, 2, 1) @ dh
        opt.step([dW1, dh.sum(1, keepdims=True), dW2, dz.sum(1, keepdims=True)], active)
    return losses


def _ce(z, y):
    z = z - z.max(-1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(-1, keepdims=True)
    B = z.shape[1]
    S = np.arange(z.shape[0])[:, None]
    loss = -np.log(p[S, np.arange(B)[None, :], y] + 1e-300).mean(1)
    g = p.copy()
    g[S, np.arange(B)[None, :], y] -= 1.0
    return loss, g / B


def _bce(z, y):
    z = z[..., 0]
    p = 1.0 / (1.0 + np.exp(-z))
    loss = (np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z)))).mean(1)
    return loss, ((p - y) / z.shape[1])[..., None]


def train_generators(m, c_max, hidden, seen: np.ndarray, rngs, *, steps, batch, lr,
                     fit_target=None, max_steps=None):
    """One generator per seed, stacked. ``seen`` (S, n_seen, 3): each seed's training triples.

    The spec's recipe is ``steps`` Adam steps; its premise "right on seen triples" is then met
    by training on, in blocks of ``steps``, each seed until greedy decoding is right on a
    fraction >= ``fit_target`` of its seen triples, at most ``max_steps`` in all (a seed that is
    done is frozen). Returns the stacked params, the loss curve and each seed's step count.
    """
    S = len(rngs)
    d = n_features(m, c_max, prm=False)
    params = [np.stack(a) for a in zip(*[init(d, hidden, m, r) for r in rngs], strict=True)]
    s = np.arange(S)[:, None]
    opt = Adam(params, lr=lr)

    def batches(t):
        pick = np.stack([r.integers(0, seen.shape[1], size=batch) for r in rngs])
        tr = seen[s, pick]                                   # (S, B, 3)
        x, op, c = tr[..., 0], tr[..., 1], tr[..., 2]
        return _onehot([x, m + op, m + 1 + c], d), apply_op(x, op, c, m)

    def fit(k):
        g = [a[k] for a in params]
        x, op, c = seen[k, :, 0], seen[k, :, 1], seen[k, :, 2]
        return float((gen_logits(g, x, op, c, m).argmax(1) == apply_op(x, op, c, m)).mean())

    losses = [_train(params, batches, _ce, steps, lr, opt)]
    used = np.full(S, steps)
    cap = steps if fit_target is None else max(int(max_steps), steps)
    while True:
        active = np.array([fit(k) < fit_target for k in range(S)]) if fit_target else \
            np.zeros(S, bool)
        if not active.any() or used.max() + steps > cap:
            break
        losses.append(_train(params, batches, _ce, steps, lr, opt, active))
        used += steps * active
    return params, np.concatenate(losses), used


def gen_logits(params, x, op, c, m: int) -> np.ndarray:
    """Logits (n, m) of one generator for steps (x, op, c) (int arrays of length n)."""
    W1, b1, W2, b2 = params
    h = np.maximum(W1[x] + W1[m + op] + W1[m + 1 + c] + b1, 0.0)
    return h @ W2 + b2


def sample(logits: np.ndarray, T: float, rng: np.random.Generator) -> np.ndarray:
    """Draws (n,) at temperature T (T = 0: greedy argmax) by inverse CDF on one uniform each."""
    if T == 0:
        return logits.argmax(-1)
    z = logits / T
    z = z - z.max(-1, keepdims=True)
    p = np.exp(z)
    cdf = np.cumsum(p, -1)
    u = rng.random(logits.shape[0]) * cdf[:, -1]
    return np.minimum((cdf < u[:, None]).sum(-1), logits.shape[1] - 1)


def train_prms(m, c_max, hidden, prm_triples: np.ndarray, gens: list, rngs, *, n_samples,
               temperature, steps, batch, lr):
    """One PRM per seed: ``n_samples`` generator samples (temperature T) on triples drawn from
    the seed's PRM triples, labelled by the exact checker; BCE with Adam on mini-batches."""
    S = len(rngs)
    d = n_features(m, c_max, prm=True)
    data = []
    for k in range(S):
        r = rngs[k]
        tr = prm_triples[k][r.integers(0, prm_triples.shape[1], size=n_samples)]
        y = sample(gen_logits(gens[k], tr[:, 0], tr[:, 1], tr[:, 2], m), temperature, r)
        data.append((tr, y, check_step(tr[:, 0], tr[:, 1], tr[:, 2], y, m).astype(float)))
    params = [np.stack(a) for a in zip(*[init(d, hidden, 1, r) for r in rngs], strict=True)]

    def batches(t):
        cols, lab = [[], [], [], []], []
        for k in range(S):
            tr, y, label = data[k]
            pick = rngs[k].integers(0, n_samples, size=batch)
            x, op, c = tr[pick, 0], tr[pick, 1], tr[pick, 2]
            for j, col in enumerate((x, m + op, m + 1 + c, m + 2 + c_max + y[pick])):
                cols[j].append(col)
            lab.append(label[pick])
        return _onehot([np.stack(c) for c in cols], d), np.stack(lab)

    losses = _train(params, batches, _bce, steps, lr)
    return params, losses, np.array([dd[2].mean() for dd in data])


def prm_prob(params, x, op, c, y, m: int, c_max: int) -> np.ndarray:
    """PRM step scores in (0, 1) for proposed steps (x, op, c) -> y."""
    W1, b1, W2, b2 = params
    h = np.maximum(W1[x] + W1[m + op] + W1[m + 1 + c] + W1[m + 2 + c_max + y] + b1, 0.0)
    z = (h @ W2 + b2)[:, 0]
    return 1.0 / (1.0 + np.exp(-z))
