"""Test-time methods over a batch of chain problems, vectorised in numpy.

Every method returns per-problem answers plus the counts of what it spent: generator steps
(every sampled step of every sample, beam and iteration), PRM calls and calculator calls.
``account`` turns the counts into FLOPs by charging them, per problem, to an
``icml26.agents.Budget`` at the chain world's prices (generator call 2 P_gen, PRM call 2 P_prm,
calculator 50 generator-step equivalents), so every method, and every agent paper, is priced
the same way.

Methods (spec):
- ``sample_pool``: N independent chains at temperature T, each step scored by the PRM;
  ``self_consistency`` (majority vote, no PRM) and ``best_of_n`` (max min-step PRM score) read
  the first N chains of one pool (nested samples: SC@N and BoN@N see the same chains);
- ``greedy``: one chain at T = 0, scored by the PRM (the adaptive agent's iteration 1);
- ``beam_search``: step-level PRM beam search, width w, each beam expanded by E samples at T;
  the top w partial chains by the sum of log PRM step scores survive; with ``tool_thr``, a beam
  whose best expansion scores below it calls the calculator for that step;
- ``adaptive``: the escalation controller over iteration outcomes (stop when the best trajectory
  reward R = min step score reaches theta; final answer = highest R over the iterations run).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from icml26.agents import Budget, Call
from icml26.agents.worlds.chains import CALC, SCORE, STEP, ChainSet, apply_op

from .models import gen_logits, prm_prob, sample

NEG = -np.inf


@dataclass
class Models:
    gen: list
    prm: list
    m: int
    c_max: int

    def logits(self, x, op, c):
        return gen_logits(self.gen, x, op, c, self.m)

    def score(self, x, op, c, y):
        return prm_prob(self.prm, x, op, c, y, self.m, self.c_max)


@dataclass
class Outcome:
    """Per-problem result of one method: answer, trajectory reward R and what it spent."""

    answer: np.ndarray
    R: np.ndarray
    n_gen: np.ndarray
    n_prm: np.ndarray
    n_tool: np.ndarray
    n_iter: np.ndarray = field(default=None)

    def __post_init__(self):
        if self.n_iter is None:
            self.n_iter = np.ones_like(self.n_gen)


def account(world, out: Outcome) -> tuple[np.ndarray, np.ndarray]:
    """FLOPs and calls per problem, charged through one Budget per problem at the world's
    prices (step = generator call, score = PRM call, calc = calculator)."""
    price = {k: world.cost(Call(k)) for k in (STEP, SCORE, CALC)}
    flops = np.zeros(len(out.answer))
    calls = np.zeros(len(out.answer))
    for p in range(len(out.answer)):
        b = Budget()
        for kind, n in ((STEP, out.n_gen[p]), (SCORE, out.n_prm[p]), (CALC, out.n_tool[p])):
            n = int(n)
            if n:
                b.charge(calls=n, tokens=n * price[kind]["tokens"], flops=n * price[kind]["flops"])
        flops[p], calls[p] = b.used["flops"], b.used["calls"]
    return flops, calls


def sample_pool(models: Models, probs: ChainSet, N: int, T: float, rng, score: bool = True):
    """N chains per problem at temperature T: final answers (n, N) and R = min step PRM score
    (n, N; ones when ``score`` is False)."""
    n, kmax = probs.ops.shape
    x = np.repeat(probs.x0[:, None], N, axis=1)
    R = np.ones((n, N))
    for i in range(kmax):
        live = np.nonzero(i < probs.K)[0]
        if not live.size:
            break
        xs = x[live].ravel()
        op = np.repeat(probs.ops[live, i], N)
        c = np.repeat(probs.cs[live, i], N)
        y = sample(models.logits(xs, op, c), T, rng)
        if score:
            R[live] = np.minimum(R[live], models.score(xs, op, c, y).reshape(-1, N))
        x[live] = y.reshape(-1, N)
    return x, R


def self_consistency(answers: np.ndarray, N: int, m: int) -> np.ndarray:
    """Majority vote over the first N answers; a tie goes to the value sampled first."""
    a = answers[:, :N]
    n = a.shape[0]
    counts = np.zeros((n, m), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(n), N), a.ravel()), 1)
    first = np.full((n, m), N)
    for j in range(N - 1, -1, -1):
        first[np.arange(n), a[:, j]] = j
    top = counts == counts.max(1, keepdims=True)
    return np.where(top, first, N + 1).argmin(1)


def best_of_n(answers: np.ndarray, R: np.ndarray, N: int) -> np.ndarray:
    """The answer of the chain with the highest min-step PRM score among the first N (first on
    ties)."""
    return answers[np.arange(len(answers)), R[:, :N].argmax(1)]


def pool_outcome(answers, R, N, K, *, method: str, m: int) -> Outcome:
    K = np.asarray(K, dtype=float)
    if method == "sc":
        return Outcome(self_consistency(answers, N, m), np.full(len(K), np.nan), N * K,
                       np.zeros_like(K), np.zeros_like(K))
    return Outcome(best_of_n(answers, R, N), R[:, :N].max(1), N * K, N * K, np.zeros_like(K))


def greedy(models: Models, probs: ChainSet) -> Outcome:
    """Iteration 1: greedy decoding (T = 0), every step scored by the PRM."""
    x, R = sample_pool(models, probs, 1, 0.0, None)
    K = probs.K.astype(float)
    return Outcome(x[:, 0], R[:, 0], K.copy(), K.copy(), np.zeros_like(K))


def beam_search(models: Models, probs: ChainSet, w: int, E: int, T: float, rng,
                tool_thr: float | None = None) -> Outcome:
    """Step-level PRM beam search, vectorised over problems x beams.

    The search starts from one beam (x0). At each step every live beam draws E expansions at
    temperature T, each scored by the PRM; the w best distinct partial chains by the sum of log
    step scores survive (INFERRED: identical partial chains are merged, as distinct LLM samples
    practically never coincide). With ``tool_thr``, a beam whose best expansion scores below it
    calls the calculator: its expansions are replaced by the exact step (INFERRED: step score 1,
    since the tool is exact; no extra PRM call). The returned trajectory is the best complete
    beam by the same ranking; its R is its min step score.
    """
    n, kmax = probs.ops.shape
    m = models.m
    cur = np.repeat(probs.x0[:, None], w, axis=1)
    alive = np.zeros((n, w), dtype=bool)
    alive[:, 0] = True
    cum = np.where(alive, 0.0, NEG)
    minR = np.ones((n, w))
    hsh = np.zeros((n, w), dtype=np.uint64)
    n_gen, n_prm, n_tool = np.zeros(n), np.zeros(n), np.zeros(n)
    rows = np.arange(n)[:, None]
    for i in range(kmax):
        live_p = i < probs.K
        if not live_p.any():
            break
        pi, bi = np.nonzero(live_p[:, None] & alive)
        xs = np.repeat(cur[pi, bi], E)
        op = np.repeat(probs.ops[pi, i], E)
        c = np.repeat(probs.cs[pi, i], E)
        y = sample(models.logits(xs, op, c), T, rng).reshape(-1, E)
        s = models.score(xs, op, c, y.ravel()).reshape(-1, E)
        spent = np.bincount(pi, minlength=n) * E
        n_gen += spent
        n_prm += spent
        if tool_thr is not None:
            need = s.max(1) < tool_thr
            exact = apply_op(cur[pi, bi], probs.ops[pi, i], probs.cs[pi, i], m)
            n_tool += np.bincount(pi[need], minlength=n)
            y[need] = np.asarray(exact)[need][:, None]
            s[need] = 1.0
        cand_y = np.zeros((n, w, E), dtype=np.int64)
        cand_s = np.ones((n, w, E))
        total = np.full((n, w, E), NEG)
        cand_y[pi, bi] = y
        cand_s[pi, bi] = s
        total[pi, bi] = cum[pi, bi][:, None] + np.log(s)
        cand_h = hsh[:, :, None] * np.uint64(1000003) + (cand_y + 1).astype(np.uint64)
        cand_y, cand_s = cand_y.reshape(n, -1), cand_s.reshape(n, -1)
        total, cand_h = total.reshape(n, -1), cand_h.reshape(n, -1)
        # merge identical partial chains: keep the best-scored copy of each path
        order = np.lexsort((-total, cand_h), axis=-1)
        sh = np.take_along_axis(cand_h, order, 1)
        dup_sorted = np.concatenate([np.zeros((n, 1), bool), sh[:, 1:] == sh[:, :-1]], 1)
        dup = np.zeros_like(dup_sorted)
        np.put_along_axis(dup, order, dup_sorted, 1)
        total = np.where(dup, NEG, total)
        top = np.argsort(-total, axis=1, kind="stable")[:, :w]
        new_total = np.take_along_axis(total, top, 1)
        parent = top // E
        upd = live_p[:, None]
        new_alive = np.isfinite(new_total)
        cur = np.where(upd, np.take_along_axis(cand_y, top, 1), cur)
        minR = np.where(upd, np.minimum(minR[rows, parent], np.take_along_axis(cand_s, top, 1)),
                        minR)
        hsh = np.where(upd, np.take_along_axis(cand_h, top, 1), hsh)
        cum = np.where(upd, new_total, cum)
        alive = np.where(upd, new_alive, alive)
    best = np.where(alive, cum, NEG).argmax(1)
    return Outcome(cur[np.arange(n), best], minR[np.arange(n), best], n_gen, n_prm, n_tool)


def adaptive(iterations: list[Outcome], theta: float | None) -> Outcome:
    """The escalation controller over the outcomes of iterations 1..I (run in this order):
    after each iteration, stop when the best R so far >= theta (``None``: never stop early);
    the final answer is the trajectory with the highest R over the iterations run (the
    earliest on ties). Only the iterations run are charged."""
    first = iterations[0]
    best_R, ans = first.R.copy(), first.answer.copy()
    n_gen, n_prm, n_tool = first.n_gen.copy(), first.n_prm.copy(), first.n_tool.copy()
    n_iter = np.ones_like(n_gen)
    for it in iterations[1:]:
        go = np.ones(len(ans), bool) if theta is None else best_R < theta
        n_gen += go * it.n_gen
        n_prm += go * it.n_prm
        n_tool += go * it.n_tool
        n_iter += go
        better = go & (it.R > best_R)
        ans = np.where(better, it.answer, ans)
        best_R = np.where(better, it.R, best_R)
    return Outcome(ans, best_R, n_gen, n_prm, n_tool, n_iter)
