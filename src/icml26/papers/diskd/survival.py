"""Discrete-time competing-risks pieces, in numpy with hand-written gradients.

Time is cut into intervals t = 1..T. For covariates x a network gives per interval a
categorical distribution over {no event, cause 1, ..., cause K}:
    h(t|x) = softmax(z_t(x)),  h_0 = 1 - sum_k h_k  (h_k: cause-k discrete hazard).
Survival S(t|x) = prod_{s<=t} h_0(s|x); cumulative incidence CIF_k(t) = sum_{s<=t} S(s-1) h_k(s).

Every function works on arrays with leading axes (models, subjects, ...): logits have shape
(..., n, T, C) with C = K + 1 outcome classes per interval (class 0 = no event).
"""

from __future__ import annotations

import numpy as np

TINY = 1e-30  # inside logs of probabilities; representable in float32


def _max_last(a: np.ndarray) -> np.ndarray:
    # a loop over the few classes: numpy's reductions over a short last axis are slow
    out = a[..., 0].copy()
    for c in range(1, a.shape[-1]):
        np.maximum(out, a[..., c], out=out)
    return out


def sum_last(a: np.ndarray) -> np.ndarray:
    out = a[..., 0].copy()
    for c in range(1, a.shape[-1]):
        out += a[..., c]
    return out


def softmax(z: np.ndarray) -> np.ndarray:
    """Per-interval categorical distribution over the last axis."""
    e = np.exp(z - _max_last(z)[..., None])
    return e / sum_last(e)[..., None]


def survival(h: np.ndarray) -> np.ndarray:
    """S(t) for t = 0..T (S(0) = 1): shape (..., T + 1)."""
    s = np.cumprod(h[..., 0], axis=-1)
    return np.concatenate([np.ones(s.shape[:-1] + (1,)), s], axis=-1)


def cif(h: np.ndarray) -> np.ndarray:
    """CIF_k(t) for t = 1..T and k = 1..K: shape (..., T, K)."""
    s_prev = survival(h)[..., :-1]
    return np.cumsum(s_prev[..., None] * h[..., 1:], axis=-2)


def aggregate(h: np.ndarray, cause_map) -> np.ndarray:
    """Per-interval distribution through a cause map g (student cause k -> teacher cause g[k]).

    ``cause_map`` has one entry per student class with g[0] = 0 (no event stays no event);
    h_agg(c|t) = sum_{k: g(k) = c} h_k(t). The identity map returns h itself.
    """
    g = np.asarray(cause_map, dtype=np.int64)
    if np.array_equal(g, np.arange(h.shape[-1])):
        return h
    out = np.zeros(h.shape[:-1] + (int(g.max()) + 1,))
    for k, c in enumerate(g):
        out[..., c] += h[..., k]
    return out


def map_status(status: np.ndarray, cause_map) -> np.ndarray:
    """Observed status d (0 = censored, 1..K) seen through the cause map."""
    return np.asarray(cause_map, dtype=np.int64)[status]


# --- local likelihood ------------------------------------------------------------------------
def nll(logits: np.ndarray, time: np.ndarray, status: np.ndarray, cause_map=None,
        grad: bool = True):
    """Mean negative log-likelihood over subjects and its gradient w.r.t. the logits.

    NLL_i = - sum_{s < t_i} log h_0(s|x_i) - [d_i > 0] log h_{d_i}(t_i|x_i)
            - [d_i = 0] log h_0(t_i|x_i)          (censoring at the end of interval t_i).
    It is a cross-entropy per at-risk interval s <= t_i with target class 0 before t_i and
    class d_i at t_i. ``time`` holds t_i in 1..T, ``status`` d_i; both (..., n).
    With ``cause_map`` the likelihood is that of the aggregated outcome (used to compare models
    at a coarser outcome definition); the gradient is then not returned (None).
    Returns (per-model mean NLL (...), dlogits (..., n, T, C)).
    """
    T = logits.shape[-2]
    h = softmax(logits)
    steps = np.arange(1, T + 1)
    at_risk = steps <= time[..., None]                       # (..., n, T)
    target = np.where(steps < time[..., None], 0, status[..., None])
    if cause_map is not None:
        h = aggregate(h, cause_map)
        target = map_status(target, cause_map)
    p_target = np.take_along_axis(h, target[..., None], axis=-1)[..., 0]
    loss_i = -(at_risk * np.log(p_target + TINY)).sum(axis=-1)  # (..., n)
    n = time.shape[-1]
    loss = loss_i.mean(axis=-1)
    if cause_map is not None or not grad:
        return loss, None
    onehot = target[..., None] == np.arange(h.shape[-1])
    dlogits = (h - onehot) * at_risk[..., None] / n
    return loss, dlogits


def loglik_total(logits: np.ndarray, time, status, cause_map=None) -> np.ndarray:
    """Total log-likelihood over the subjects (for the adaptive teacher weights)."""
    loss, _ = nll(logits, time, status, cause_map)
    return -loss * time.shape[-1]


# --- distillation term -----------------------------------------------------------------------
def kl_joint(teacher_h: np.ndarray, student_logits: np.ndarray, cause_map=None,
             survival_weighted: bool = True):
    """Mean over subjects of the chain-rule KL between teacher and student (time, cause) laws.

    INFERRED (spec): KL_joint(x) = sum_t S_T(t-1|x) KL(h_T(.|t,x) || h_S,agg(.|t,x)), the exact
    KL of the two joint distributions of (event interval, cause) over the horizon (the
    no-event-by-T outcome included), with the student's per-interval distribution aggregated
    through the teacher's cause map. ``survival_weighted=False`` drops S_T (the full profile's
    unweighted per-interval KL ablation). The teacher side is a constant (no gradient).
    teacher_h: (..., n, T, C_T); student_logits: (..., n, T, C).
    Returns (per-model mean KL (...), dlogits (..., n, T, C)).
    """
    g = np.arange(student_logits.shape[-1]) if cause_map is None else np.asarray(cause_map)
    s = softmax(student_logits)
    q = aggregate(s, g)
    p = teacher_h
    wt = survival(p)[..., :-1] if survival_weighted else np.ones(p.shape[:-1])
    kl_t = sum_last(p * (np.log(p + TINY) - np.log(q + TINY)))   # (..., n, T)
    n = p.shape[-3]
    loss = (wt * kl_t).sum(axis=-1).mean(axis=-1)
    # d/dz_k [- sum_c p_c log q_c] = s_k (1 - p_{g(k)} / q_{g(k)})  (sum_c p_c = 1)
    ratio = p[..., g] / (q[..., g] + TINY)
    dlogits = s * (1.0 - ratio) * (wt / n)[..., None]
    return loss, dlogits
