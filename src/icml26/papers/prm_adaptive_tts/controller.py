"""The learned controller of the full profile (spec): a small policy that, after each iteration,
chooses the next iteration's settings or stops, trained by REINFORCE on accuracy - lambda x
FLOPs (normalised), instead of the fixed escalation schedule.

INFERRED design (the spec names only the policy class and the reward): iteration 1 (greedy) is
always run; then, up to three times, a linear softmax policy on [1, best R so far, last R,
K / K_max, which settings were used] picks one of {stop, iteration-2 settings, iteration-3
settings, iteration-4 settings}, each setting at most once. The iteration outcomes of each
problem are drawn once in advance (common random numbers), so an episode replays them in the
order the policy asks for; the final answer is the highest-R trajectory run. Training uses its
own problems (never the test set); evaluation takes the policy's most likely action.
"""

from __future__ import annotations

import numpy as np

from icml26.npoptim import Adam

from .search import Outcome

N_FEAT = 7


def _features(best_R, last_R, k_frac, used):
    n = len(best_R)
    return np.concatenate([np.ones((n, 1)), best_R[:, None], last_R[:, None], k_frac[:, None],
                           used.astype(float)], axis=1)


def rollout(W, its: list[Outcome], flops_it: np.ndarray, k_frac, correct_it, rng=None,
            record=False):
    """Play the policy on every problem. ``its`` are the 4 iteration outcomes, ``flops_it``
    (4, n) their FLOPs, ``correct_it`` (4, n) their correctness. ``rng`` None: greedy actions.
    Returns (chosen outcome, final correctness, FLOPs, records for REINFORCE)."""
    n = len(its[0].R)
    used = np.zeros((n, 3), bool)
    active = np.ones(n, bool)
    best_R, last_R = its[0].R.copy(), its[0].R.copy()
    ans, corr = its[0].answer.copy(), correct_it[0].astype(float).copy()
    flops = flops_it[0].copy()
    n_gen, n_prm, n_tool = its[0].n_gen.copy(), its[0].n_prm.copy(), its[0].n_tool.copy()
    n_iter = np.ones(n)
    recs = []
    for _ in range(3):
        phi = _features(best_R, last_R, k_frac, used)
        z = phi @ W
        z[:, 1:] = np.where(used, -np.inf, z[:, 1:])
        z = z - z.max(1, keepdims=True)
        pi = np.exp(z)
        pi /= pi.sum(1, keepdims=True)
        if rng is None:
            a = pi.argmax(1)
        else:
            a = np.minimum((np.cumsum(pi, 1) < rng.random(n)[:, None]).sum(1), 3)
        if record:
            recs.append((phi, pi, a, active.copy()))
        go = active & (a > 0)
        for j in (1, 2, 3):
            sel = go & (a == j)
            if not sel.any():
                continue
            it = its[j]
            flops[sel] += flops_it[j][sel]
            n_gen[sel] += it.n_gen[sel]
            n_prm[sel] += it.n_prm[sel]
            n_tool[sel] += it.n_tool[sel]
            n_iter[sel] += 1
            better = sel & (it.R > best_R)
            ans = np.where(better, it.answer, ans)
            corr = np.where(better, correct_it[j], corr)
            best_R = np.where(better, it.R, best_R)
            last_R = np.where(sel, it.R, last_R)
            used[sel, j - 1] = True
        active = go
    return Outcome(ans, best_R, n_gen, n_prm, n_tool, n_iter), corr, flops, recs


def train_controller(its, flops_it, k_frac, correct_it, lam: float, rng, *, updates: int,
                     batch: int, lr: float):
    """REINFORCE with a batch-mean baseline on reward = correct - lam * FLOPs / F_ref, where
    F_ref is the mean FLOPs of running all four iterations on the training problems.
    Returns the policy weights and the mean reward per update."""
    n = len(its[0].R)
    f_ref = float(flops_it.sum(0).mean())
    W = np.zeros((N_FEAT, 4))
    opt = Adam([W], lr=lr)
    curve = np.zeros(updates)
    for t in range(updates):
        idx = rng.integers(0, n, size=batch)
        sub = [Outcome(o.answer[idx], o.R[idx], o.n_gen[idx], o.n_prm[idx], o.n_tool[idx])
               for o in its]
        _, corr, flops, recs = rollout(W, sub, flops_it[:, idx], k_frac[idx],
                                       correct_it[:, idx], rng=rng, record=True)
        reward = corr - lam * flops / f_ref
        adv = reward - reward.mean()
        curve[t] = reward.mean()
        grad = np.zeros_like(W)
        for phi, pi, a, act in recs:
            g = -pi
            g[np.arange(batch), a] += 1.0
            g *= (adv * act)[:, None]
            grad += phi.T @ g
        opt.step([-grad / batch])      # ascent on the expected reward
    return W, curve
