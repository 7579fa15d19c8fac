"""Rollout selection rules: the CBS contextual-bandit scheduler and the baselines' rules (torch).

All tensors carry a leading run axis R. Arms are the step's fresh rollouts (R, F) followed by
the buffer slots (R, C); ``valid`` marks filled buffer slots.

CBS (every detail INFERRED from the abstract, as written in the spec):
- context x (8 features): reward, advantage, current log pi(answer | p) / 10, log pi_old / 10,
  age / 50, group mean reward, fraction of the group with the same answer, is_fresh (log-probs
  clamped at -20 and divided by 10 so every feature is O(1): INFERRED scaling);
- value model: an ensemble of M MLPs 8 -> 32 -> 1 (tanh) per run, each trained online on
  bootstrap resamples of the run's last W observed (x, gain) pairs (a minibatch drawn with
  replacement per member and Adam step: INFERRED), targets divided by their s.d. in the window;
- score = ensemble mean + beta_t * ensemble s.d., beta_t = beta0 / sqrt(1 + step / decay)
  (NeuralUCB-style optimism);
- select the k arms with the highest score, at most ``max_buffer`` of them from the buffer.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from icml26 import stacked
from icml26.rl.optim import Adam

N_FEATURES = 8


def features(reward, adv, logp_cur, logp_old, age, group_mean, same_frac, fresh: bool,
             age_scale: float):
    """The 8 context features (R, N, 8)."""
    lc = logp_cur.clamp(min=-20.0) / 10.0
    lo = logp_old.clamp(min=-20.0) / 10.0
    is_fresh = torch.full_like(reward, 1.0 if fresh else 0.0)
    return torch.stack([reward, adv, lc, lo, age / age_scale, group_mean, same_frac, is_fresh],
                       -1)


def same_answer_fraction(answers: torch.Tensor) -> torch.Tensor:
    """answers (R, P, G) -> fraction of each rollout's group with the same answer (itself
    included)."""
    eq = (answers[..., :, None] == answers[..., None, :]).to(torch.float32)
    return eq.mean(-1)


def top_k_with_buffer_cap(fresh_score, buf_score, k: int, max_buffer: int):
    """Selection mask over (fresh, buffer) arms: the k highest scores with at most
    ``max_buffer`` from the buffer. Invalid buffer slots must score -inf."""
    r, f = fresh_score.shape
    c = buf_score.shape[1]
    mask = torch.zeros(r, f + c, dtype=torch.bool, device=fresh_score.device)
    nb = min(max_buffer, c)
    if nb:
        bs, bi = buf_score.topk(nb, dim=1)
        pool = torch.cat([fresh_score, bs], 1)
        pool_idx = torch.cat([torch.arange(f, device=fresh_score.device).expand(r, f),
                              f + bi], 1)
    else:
        pool, pool_idx = fresh_score, torch.arange(f, device=fresh_score.device).expand(r, f)
    top_s, top = pool.topk(min(k, pool.shape[1]), dim=1)
    chosen = pool_idx.gather(1, top)
    mask.scatter_(1, chosen, torch.isfinite(top_s))
    return mask


def most_recent_positive(recency, adv, valid, n: int):
    """Buffer mask (R, C): the n most recent valid slots with positive advantage."""
    key = torch.where(valid & (adv > 0), recency, torch.full_like(recency, -1.0))
    r, c = key.shape
    mask = torch.zeros(r, c, dtype=torch.bool, device=key.device)
    if c == 0 or n == 0:
        return mask
    top, idx = key.topk(min(n, c), dim=1)
    mask.scatter_(1, idx, top >= 0)
    return mask


class ValueEnsemble:
    """Per run, ``members`` MLPs 8 -> hidden -> 1 trained online on the last ``window``
    (x, gain) pairs (stored on the model's device; the bootstrap indices come from numpy
    generators, one per run, so a run's numbers do not depend on the others in the job)."""

    def __init__(self, seeds, rngs, members: int, hidden: int, window: int, lr: float,
                 device):
        self.r, self.m, self.window = len(seeds), members, window
        self.rngs = rngs
        self.layers = stacked.uniform_init([N_FEATURES, hidden, 1],
                                           [s * 7919 + j for s in seeds for j in range(members)],
                                           device=device)
        self.opt = Adam(stacked.parameters(self.layers), lr=lr)
        self.x = torch.zeros(self.r, window, N_FEATURES, device=device)
        self.y = torch.zeros(self.r, window, device=device)
        self.n = np.zeros(self.r, np.int64)
        self.ptr = np.zeros(self.r, np.int64)
        self.device = device

    @torch.no_grad()
    def predict(self, x):
        """x (R, N, 8) -> ensemble mean and s.d. (R, N), in the targets' s.d. units."""
        out = stacked.forward(self.layers, x.repeat_interleave(self.m, 0))[..., 0]
        out = out.view(self.r, self.m, -1)
        return out.mean(1), out.std(1, correction=0)

    def add(self, x, y, mask):
        """Append the masked pairs x (R, N, 8), y (R, N) of each run to its window (FIFO)."""
        ring_insert({"x": self.x, "y": self.y}, self.ptr, self.n,
                    np.full(self.r, self.window), mask, {"x": x, "y": y})

    def fit(self, steps: int, batch: int):
        if steps == 0 or self.n.max() == 0:
            return
        idx = np.stack([rng.integers(0, max(n, 1), (steps, self.m, batch))
                        for rng, n in zip(self.rngs, self.n, strict=True)], 1)  # S, R, M, B
        idx = torch.as_tensor(idx).to(self.device)
        scale = torch.stack([self.y[i, :max(n, 1)].std(correction=0) for i, n in
                             enumerate(self.n)]).clamp(min=1e-12)
        y_all = self.y / scale[:, None]
        active = torch.as_tensor(self.n > 0, dtype=torch.float32,
                                 device=self.device).repeat_interleave(self.m)
        for s in range(steps):
            i = idx[s].reshape(self.r, self.m * batch)
            xb = self.x.gather(1, i[..., None].expand(-1, -1, N_FEATURES))
            yb = y_all.gather(1, i)
            xb = xb.view(self.r * self.m, batch, N_FEATURES)
            yb = yb.view(self.r * self.m, batch)
            pred = stacked.forward(self.layers, xb)[..., 0]
            loss = (((pred - yb) ** 2).mean(-1) * active).sum()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()


def ucb_beta(beta0: float, step: int, decay: float) -> float:
    return beta0 / math.sqrt(1.0 + step / decay)


@torch.no_grad()
def ring_insert(fields: dict, ptr: np.ndarray, size: np.ndarray, cap: np.ndarray, mask,
                values: dict) -> None:
    """FIFO ring buffers per run, in place: fields[name] (R, Cmax, ...), ``ptr`` the next write
    slot and ``size`` the filled slots per run (numpy, updated), ``cap`` (R,) each run's
    capacity (0: no buffer). The masked entries of values[name] (R, N, ...) are written in
    order; when more than the capacity arrive, only the last ``cap`` are kept."""
    r, cmax = next(iter(fields.values())).shape[:2]
    if cmax == 0:
        return
    dev = mask.device
    m = mask.to(torch.int64)
    cnt = m.sum(1)
    capt = torch.as_tensor(cap, device=dev)
    drop = (cnt - capt).clamp(min=0)
    rank = m.cumsum(1) - 1 - drop[:, None]
    keep = mask & (rank >= 0) & (capt[:, None] > 0)
    start = torch.as_tensor(ptr, device=dev)[:, None]
    pos = (start + rank.clamp(min=0)) % capt.clamp(min=1)[:, None]
    flat = (torch.arange(r, device=dev)[:, None] * cmax + pos)[keep]
    for name, buf in fields.items():
        v = values[name]
        buf.view(r * cmax, *buf.shape[2:])[flat] = v[keep].to(buf.dtype)
    added = np.minimum(cnt.cpu().numpy(), cap)
    ptr[:] = np.where(cap > 0, (ptr + added) % np.maximum(cap, 1), 0)
    size[:] = np.minimum(size + added, cap)
