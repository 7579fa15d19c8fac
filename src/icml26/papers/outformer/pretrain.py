"""Pretraining of the mini PFNs on synthetic tasks, with OutFormer's self-evolving curriculum
(imports torch).

Variants (one per method):
- ``outformer``: the prior mixture (5 prior types) and the self-evolving curriculum;
- ``fomo``: FoMo-0D-mini, the GMM prior only, uniform category sampling, no filter;
- ``mix``: Mix-mini (full profile ablation), the prior mixture, uniform sampling, no filter.

Curriculum (official trainer, trainer/cl_trainer.py of psorus/Outformer 552dffcc, in our own
words; constants marked INFERRED where the miniature had to choose):
- categories = (dimension bin, prior type); the bins are the official power-law bins of
  [2, D_max] (``priors.dim_bins``);
- training runs in epochs of ``epoch_steps`` steps. At the start of epoch e the categories of
  its epoch_steps x batch tasks are drawn i.i.d. from softmax(w / temperature) (w = 0 at the
  start: uniform) and the tasks are generated;
- the current model then scores every query point of the epoch (no gradient). Per category,
  with m the mean point loss, the signal m - m^2 updates w <- gamma w + (1 - gamma) signal
  (gamma = 0.1), so learnable categories (m near 0.5) are favoured over solved or hopeless
  ones; a category absent from the epoch keeps its w (INFERRED: the official code assumes
  every category is present);
- self-paced filter: only the fraction g(e) = min(0.95, 0.2 + 0.8 sqrt(e / (0.8 E))) of the
  epoch's query points with the lowest loss (pooled over all its tasks) contribute gradient;
  a batch's loss is the mean over its kept points.
The context size of each step is shared by every run (drawn from a stream of the paper only,
as the official batches draw it from a fixed base seed), so runs batch together.
"""

from __future__ import annotations

import numpy as np
import torch

from icml26.lm.optim import adamw_update, warmup_cosine
from icml26.seeding import derive_seed

from . import pfn, priors

VARIANTS = {
    "outformer": {"priors": priors.PRIORS, "curriculum": True},
    "fomo": {"priors": ("gmm",), "curriculum": False},
    "mix": {"priors": priors.PRIORS, "curriculum": False},
}


def categories(p) -> list[tuple[str, tuple[int, int]]]:
    """(prior, (d_lo, d_hi)) in the official order: bins outer, priors inner."""
    bins = priors.dim_bins(2, int(p["d_max"]), int(p["n_bins"]))
    return [(prior, b) for b in bins for prior in priors.PRIORS]


def filter_ratio(epoch: int, n_epochs: int, p) -> float:
    """Kept fraction of query points in ``epoch``: the official root schedule."""
    b, a, top = float(p["filter_start"]), float(p["filter_reach"]), float(p["filter_max"])
    return float(min(top, b + (1 - b) * np.sqrt(epoch / (a * n_epochs))))


def softmax(w, temperature: float) -> np.ndarray:
    z = np.asarray(w, dtype=float) / temperature
    z = np.exp(z - z.max())
    return z / z.sum()


def update_weights(w, loss, cat_of, gamma: float) -> np.ndarray:
    """Category weights after one epoch: w_c <- gamma w_c + (1 - gamma) (m_c - m_c^2), m_c the
    mean loss of category c's query points (``loss`` (..., n_q), ``cat_of`` its tasks'
    categories (...)); a category with no task keeps its weight."""
    w = np.array(w, dtype=float)
    for c in range(len(w)):
        sel = cat_of == c
        if sel.any():
            m = float(loss[sel].mean())
            w[c] = gamma * w[c] + (1 - gamma) * (m - m ** 2)
    return w


def keep_mask(loss, ratio: float) -> np.ndarray:
    """1 for the int(N ratio) query points with the lowest loss (ties by position), else 0."""
    flat = np.asarray(loss).ravel()
    keep = np.zeros(flat.size, dtype=np.float32)
    keep[np.argsort(flat, kind="stable")[: int(flat.size * ratio)]] = 1.0
    return keep.reshape(np.shape(loss))


def context_sizes(paper: str, p) -> np.ndarray:
    """Context size of every training step, the same for every run."""
    g = np.random.default_rng(derive_seed(paper, "context-size"))
    return g.integers(int(p["ctx_min"]), int(p["ctx_max"]) + 1, size=int(p["steps"]))


def make_task(prior, d, n_ctx, p, rng):
    """One training task: rows (n_ctx + n_q, D_max) and query labels (n_q,), 1 = outlier."""
    n_qi, n_qo = int(p["query_inliers"]), int(p["query_outliers"])
    inl, out = priors.draw(prior, d, n_ctx + n_qi, n_qo, rng)
    ctx, query = inl[:n_ctx], np.concatenate([inl[n_ctx:], out])
    y = np.r_[np.zeros(n_qi), np.ones(n_qo)].astype(np.int64)
    return pfn.preprocess(ctx, query, int(p["d_max"])), y


class Run:
    """One run's sampling state: its category weights and its own random streams."""

    def __init__(self, paper, run, p, cats):
        self.run = run
        self.variant = VARIANTS[run.method]
        self.allowed = np.array([c[0] in self.variant["priors"] for c in cats])
        self.w = np.zeros(len(cats))
        self.cat_rng = np.random.default_rng(run.rng_seed(paper, "categories"))
        self.data_rng = np.random.default_rng(run.rng_seed(paper, "tasks"))

    def probs(self, temperature) -> np.ndarray:
        if not self.variant["curriculum"]:
            return self.allowed / self.allowed.sum()
        return softmax(self.w, temperature)


def pretrain(cfg, runs, device):
    """Pretrain every PFN run of ``runs`` side by side. Returns (params stacked over runs,
    curve rows)."""
    paper, p = cfg["paper"], cfg["params"]
    cats = categories(p)
    B, E_steps, steps = int(p["batch"]), int(p["epoch_steps"]), int(p["steps"])
    n_epochs = -(-steps // E_steps)
    heads, d_max = int(p["heads"]), int(p["d_max"])
    sizes = context_sizes(paper, p)
    states = [Run(paper, r, p, cats) for r in runs]
    cur = [i for i, s in enumerate(states) if s.variant["curriculum"]]
    params = pfn.init_params([r.rng_seed(paper, "init") for r in runs], int(p["width"]),
                             int(p["layers"]), int(p["ffn"]), d_max, device)
    names = list(params)
    plist = [params[n] for n in names]
    m = [torch.zeros_like(t) for t in plist]
    v = [torch.zeros_like(t) for t in plist]
    betas = (float(p["beta1"]), float(p["beta2"]))
    warm = max(1, int(round(float(p["warmup_frac"]) * steps)))
    curves = []
    R = len(runs)
    t = 0
    for epoch in range(n_epochs):
        ep_steps = list(range(epoch * E_steps, min(steps, (epoch + 1) * E_steps)))
        n_task = len(ep_steps) * B
        X = [[None] * len(ep_steps) for _ in range(R)]
        Y = np.zeros((R, len(ep_steps), B, int(p["query_inliers"]) + int(p["query_outliers"])),
                     dtype=np.int64)
        cat_of = np.zeros((R, len(ep_steps), B), dtype=np.int64)
        for r, st in enumerate(states):
            probs = st.probs(float(p["temperature"]))
            if st.variant["curriculum"]:
                for c, q in enumerate(probs):
                    curves.append({**st.run.as_dict(), "step": ep_steps[0],
                                   "metric": f"p:{cats[c][0]}:{cats[c][1][0]}-{cats[c][1][1] - 1}",
                                   "value": float(q)})
            draws = st.cat_rng.choice(len(cats), size=n_task, p=probs)
            cat_of[r] = draws.reshape(len(ep_steps), B)
            for j, s in enumerate(ep_steps):
                xs = []
                for b in range(B):
                    prior, (lo, hi) = cats[cat_of[r, j, b]]
                    d = int(st.data_rng.integers(lo, hi))
                    x, y = make_task(prior, d, int(sizes[s]), p, st.data_rng)
                    xs.append(x)
                    Y[r, j, b] = y
                X[r][j] = np.stack(xs)
        mask = np.ones(Y.shape, dtype=np.float32)
        if cur:
            sub = {n: params[n].detach()[cur] for n in names}
            with torch.no_grad():
                L = np.stack([
                    pfn.per_point_loss(
                        sub, torch.as_tensor(np.stack([X[r][j] for r in cur]), device=device),
                        torch.as_tensor(Y[cur, j], device=device), int(sizes[s]), heads
                    ).cpu().numpy() for j, s in enumerate(ep_steps)], 1)   # (Rc, steps, B, nq)
            ratio = filter_ratio(epoch, n_epochs, p)
            gamma = float(p["ema_gamma"])
            for k, r in enumerate(cur):
                st = states[r]
                st.w = update_weights(st.w, L[k], cat_of[r], gamma)
                mask[r] = keep_mask(L[k], ratio)
                curves.append({**st.run.as_dict(), "step": ep_steps[0],
                               "metric": "filter_ratio", "value": ratio})
        ep_loss = np.zeros(R)
        prior_loss = np.zeros((R, len(priors.PRIORS)))
        prior_n = np.zeros((R, len(priors.PRIORS)))
        prior_idx = np.array([priors.PRIORS.index(c[0]) for c in cats])
        for j, s in enumerate(ep_steps):
            x = torch.as_tensor(np.stack([X[r][j] for r in range(R)]), device=device)
            y = torch.as_tensor(Y[:, j], device=device)
            mk = torch.as_tensor(mask[:, j], device=device)
            lp = pfn.per_point_loss(params, x, y, int(sizes[s]), heads)       # (R, B, nq)
            per_run = (lp * mk).sum((1, 2)) / mk.sum((1, 2)).clamp(min=1.0)
            for g in plist:
                g.grad = None
            per_run.sum().backward()
            pfn.clip_per_run(params, float(p["grad_clip"]))
            t += 1
            lr = float(p["lr"]) * warmup_cosine(s, steps, warm, 0.0)
            adamw_update(plist, [g.grad for g in plist], m, v, t, lr, betas, 1e-8,
                         float(p["weight_decay"]), [True] * len(plist))
            lt = lp.detach().mean(2).cpu().numpy()                                # (R, B)
            ep_loss += lt.mean(1)
            pi = prior_idx[cat_of[:, j]]
            for k in range(len(priors.PRIORS)):
                prior_loss[:, k] += np.where(pi == k, lt, 0).sum(1)
                prior_n[:, k] += (pi == k).sum(1)
        for r, st in enumerate(states):
            curves.append({**st.run.as_dict(), "step": ep_steps[-1], "metric": "train_loss",
                           "value": float(ep_loss[r] / len(ep_steps))})
            for k, name in enumerate(priors.PRIORS):
                if prior_n[r, k]:
                    curves.append({**st.run.as_dict(), "step": ep_steps[-1],
                                   "metric": f"loss:{name}",
                                   "value": float(prior_loss[r, k] / prior_n[r, k])})
    return {n: params[n].detach() for n in names}, curves
