"""FedCGNM: class-grouped normalised momentum, the client optimizer of the paper.

1. Class grouping (once, before training; INFERRED details). The server knows the global class
   counts n_c (sum of client counts, e.g. by secure aggregation). It sorts the classes by
   log n_c and cuts the sorted list into G contiguous groups with minimum total within-group
   sum of squared deviations of log n_c: optimal 1-D k-means, solved exactly by dynamic
   programming (Jenks natural breaks; Wang & Song 2011, Ckmeans.1d.dp).
2. Client step (as stated in the abstract). Each client keeps one momentum m_k per group k
   (persisted across rounds, initialised to 0). For a mini-batch B, every group with
   B_k = {i in B : class(y_i) in group k} non-empty gets the gradient g_k of the mean loss over
   B_k and m_k <- beta m_k + (1 - beta) g_k; absent groups keep their momentum (their last
   direction keeps contributing, which lets rare classes act every step). The update direction
   is the sum of unit vectors d = sum_k m_k / (||m_k|| + 1e-12) (a zero momentum adds nothing),
   and w <- w - eta d. Every group gets the same step length, whatever its share of the data.

The step runs for many clients at once (leading model axis); per-group gradients come from one
forward pass, per-group masked losses and one grouped backward pass.
"""

from __future__ import annotations

import numpy as np

from icml26 import fed

EPS = 1e-12


# --- 1. class grouping (INFERRED: 1-D optimal k-means on log counts) ----------------------

def _sse_table(v: np.ndarray) -> np.ndarray:
    """sse[i, j] = sum of squared deviations of v[i:j] from its mean (j > i)."""
    n = len(v)
    s1 = np.concatenate([[0.0], np.cumsum(v)])
    s2 = np.concatenate([[0.0], np.cumsum(v * v)])
    sse = np.full((n + 1, n + 1), np.inf)
    for i in range(n):
        for j in range(i + 1, n + 1):
            m = j - i
            sse[i, j] = max(0.0, (s2[j] - s2[i]) - (s1[j] - s1[i]) ** 2 / m)
    return sse


def optimal_1d_split(v: np.ndarray, n_groups: int) -> list[int]:
    """Cut points of the sorted values v into n_groups contiguous, non-empty segments that
    minimise the total within-segment SSE (exact dynamic programming, O(G n^2)).

    Returns the G - 1 interior cut positions (segment g is v[cuts[g-1]:cuts[g]]).
    """
    n = len(v)
    if not 1 <= n_groups <= n:
        raise ValueError(f"cannot split {n} values into {n_groups} non-empty groups")
    sse = _sse_table(np.asarray(v, dtype=float))
    cost = np.full((n_groups + 1, n + 1), np.inf)   # cost[g, j]: best split of v[:j] into g
    arg = np.zeros((n_groups + 1, n + 1), dtype=np.int64)
    cost[0, 0] = 0.0
    for g in range(1, n_groups + 1):
        for j in range(g, n + 1):
            cand = cost[g - 1, g - 1:j] + sse[g - 1:j, j]
            i = int(np.argmin(cand))            # first minimum: deterministic ties
            cost[g, j], arg[g, j] = cand[i], g - 1 + i
    cuts, j = [], n
    for g in range(n_groups, 0, -1):
        j = int(arg[g, j])
        cuts.append(j)
    return sorted(cuts)[1:]                      # drop the leading 0


def group_classes(counts: np.ndarray, n_groups: int) -> np.ndarray:
    """Group id per class label from global counts: group 0 holds the most frequent classes,
    group G-1 the rarest. ``n_groups`` = C gives one group per class."""
    counts = np.asarray(counts, dtype=float)
    order = np.argsort(-counts, kind="stable")           # head first
    v = np.log(np.maximum(counts[order], 1.0))[::-1]     # ascending log counts
    cuts = optimal_1d_split(v, n_groups)
    seg_of_sorted = np.searchsorted(np.asarray(cuts), np.arange(len(v)), side="right")
    group_asc = seg_of_sorted[::-1]                       # back to head-first order
    groups = np.empty(len(counts), dtype=np.int64)
    groups[order] = (n_groups - 1) - group_asc            # 0 = head group
    return groups


# --- 2. the client step -------------------------------------------------------------------

def group_gradients(params, x, y, mask, group_of_class, n_groups: int):
    """Gradient of the mean cross-entropy over each group's rows of the batch.

    params: arrays with a leading model axis (n, ...); x (n, B, d), y and mask (n, B),
    group_of_class (n, C). Returns (grads: list of (n, G, ...) arrays, |B_k|: (n, G) counts).
    One forward pass; the group axis enters as G masked losses (the rows of group k only,
    normalised by |B_k|, fed.softmax_xent). Each row belongs to one group and backpropagation
    acts row by row, so one backward pass of the summed logit gradients gives every row's
    delta; group k's weight gradient sums the rows of group k only (one matmul per layer for
    all groups). Equal to fed.mlp_grads with a group axis (tested), at a fraction of the cost.
    """
    n = x.shape[0]
    logits, acts = fed.mlp_forward(params, x)
    gy = np.take_along_axis(group_of_class, y, axis=1)                     # (n, B)
    gmask = mask[:, None, :] & (gy[:, None, :] == np.arange(n_groups)[None, :, None])
    _, dlogits = fed.softmax_xent(logits[:, None], y[:, None], gmask)      # (n, G, B, C)
    onehot = np.swapaxes(gmask, 1, 2)[..., None]                            # (n, B, G, 1)
    delta = dlogits.sum(axis=1)                     # rows are disjoint across groups
    grads = [None] * len(params)
    for i in reversed(range(len(params) // 2)):
        out = delta.shape[-1]
        per_group = (delta[:, :, None, :] * onehot).reshape(n, -1, n_groups * out)
        w_grad = np.swapaxes(acts[i], 1, 2) @ per_group                    # (n, in, G*out)
        grads[2 * i] = np.moveaxis(w_grad.reshape(n, -1, n_groups, out), 2, 1)
        grads[2 * i + 1] = gmask.astype(np.float64) @ delta                 # (n, G, out)
        if i > 0:
            delta = (delta @ np.swapaxes(params[2 * i], 1, 2)) * (acts[i] > 0)
    return grads, gmask.sum(axis=-1)


def cgnm_step(params, momenta, x, y, mask, group_of_class, lr, beta: float):
    """One FedCGNM step for n clients, in place on ``params`` and ``momenta``.

    momenta: list of (n, G, ...) arrays (one momentum per group and parameter array);
    lr: (n,) step sizes. Returns (|B_k| (n, G), raw group-gradient norms (n, G),
    momentum norms (n, G)) for the diagnostics.
    """
    n_groups = momenta[0].shape[1]
    grads, sizes = group_gradients(params, x, y, mask, group_of_class, n_groups)
    n = len(lr)
    keep = (sizes > 0) * (1.0 - beta)                  # (1 - beta) for present groups, else 0
    sq_g = np.zeros(sizes.shape)
    sq_m = np.zeros(sizes.shape)
    flat_m = [m.reshape(n, n_groups, -1) for m in momenta]      # views
    for m, g in zip(flat_m, grads, strict=True):
        g = g.reshape(n, n_groups, -1)
        # present groups: m_k <- beta m_k + (1 - beta) g_k; absent groups keep m_k
        m *= (1.0 - keep)[..., None]
        m += keep[..., None] * g
        sq_g += np.einsum("ngi,ngi->ng", g, g)
        sq_m += np.einsum("ngi,ngi->ng", m, m)
    norm_m = np.sqrt(sq_m)
    inv = 1.0 / (norm_m + EPS)                       # a zero momentum contributes 0
    for p, m in zip(params, flat_m, strict=True):
        direction = (inv[:, None, :] @ m)[:, 0]      # sum of unit group momenta, (n, size)
        p -= (lr[:, None] * direction).reshape(p.shape)
    return sizes, np.sqrt(sq_g), norm_m
