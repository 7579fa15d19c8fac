"""One training loop for a stack of independent networks (Transformers or MLPs).

Adam (icml26.rl.optim, torch.optim.Adam's update) with cosine learning-rate decay, MSE loss,
gradient clipping per model, minibatches drawn per model without replacement within an epoch
(min(batch, n) samples; a model with n < batch trains full-batch). With a validation set the
best-validation weights (checked every eval_every steps) are kept: early stopping.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from icml26.rl.optim import Adam

from . import models


def batch_indices(n: int, bs: int, steps: int, rng: np.random.Generator) -> np.ndarray:
    """(steps, bs) sample indices: consecutive chunks of per-epoch permutations (last
    incomplete chunk of an epoch dropped)."""
    per_epoch = n // bs
    epochs = math.ceil(steps / per_epoch)
    chunks = [rng.permutation(n)[: per_epoch * bs].reshape(per_epoch, bs) for _ in range(epochs)]
    return np.concatenate(chunks)[:steps]


def fit(model: dict, X, Y, n, rngs, *, steps: int, batch: int, lr: float, clip: float,
        eval_every: int, Xval=None, Yval=None, nval=None):
    """Train the stacked ``model`` in place.

    X (M, n_max, d0), Y (M, n_max) tensors padded per model to n_max; n (M,) sample counts;
    rngs: one numpy Generator per model for its minibatches. Returns (curve, best_step):
    curve rows (step, per-model mean training loss over the last eval_every steps, per-model
    validation MSE or None); best_step (M,) the step of the kept weights (steps if no
    validation set); best_val (M,) their validation MSE (inf: never finite, a failed run)."""
    dev = X.device
    M, d0 = X.shape[0], X.shape[2]
    bs = [min(batch, int(k)) for k in n]
    bmax = max(bs)
    idx = np.zeros((steps, M, bmax), dtype=np.int64)
    wts = np.zeros((M, bmax), dtype=np.float32)
    for r in range(M):
        idx[:, r, : bs[r]] = batch_indices(int(n[r]), bs[r], steps, rngs[r])
        wts[r, : bs[r]] = 1.0 / bs[r]
    idx_t = torch.from_numpy(idx).to(dev)
    w_t = torch.from_numpy(wts).to(dev)
    params = models.parameters(model)
    opt = Adam(params, lr)
    best = [p.detach().clone() for p in params] if Xval is not None else None
    best_val = torch.full((M,), math.inf, device=dev)
    best_step = np.full(M, steps, dtype=np.int64)
    if Xval is not None:
        vmask = (torch.arange(Xval.shape[1], device=dev)[None, :]
                 < torch.as_tensor(np.asarray(nval), device=dev)[:, None]).float()
        vmask = vmask / vmask.sum(1, keepdim=True)
    curve, run_loss = [], torch.zeros(M, device=dev)
    for t in range(steps):
        opt.lr = lr * 0.5 * (1.0 + math.cos(math.pi * t / steps))     # cosine decay
        i = idx_t[t]
        xb = torch.gather(X, 1, i[..., None].expand(-1, -1, d0))
        yb = torch.gather(Y, 1, i)
        per_model = ((models.forward(model, xb) - yb).square() * w_t).sum(1)
        grads = list(torch.autograd.grad(per_model.sum(), params))
        models.clip_per_model(grads, clip)
        opt.step(grads)
        run_loss += per_model.detach()
        if (t + 1) % eval_every == 0 or t + 1 == steps:
            k = (t % eval_every) + 1
            val = None
            if Xval is not None:
                with torch.no_grad():
                    v = ((models.forward(model, Xval) - Yval).square() * vmask).sum(1)
                better = torch.isfinite(v) & (v < best_val)
                best_val = torch.where(better, v, best_val)
                with torch.no_grad():
                    for b, p in zip(best, params, strict=True):
                        b.copy_(torch.where(better.view((-1,) + (1,) * (p.dim() - 1)), p, b))
                best_step[better.cpu().numpy()] = t + 1
                val = v.cpu().numpy()
            curve.append((t + 1, (run_loss / k).cpu().numpy(), val))
            run_loss.zero_()
    if best is not None:
        with torch.no_grad():
            for b, p in zip(best, params, strict=True):
                p.copy_(b)
    return curve, best_step, best_val.cpu().numpy()


@torch.no_grad()
def predict(model: dict, X, chunk: int = 4096) -> torch.Tensor:
    """f(X) for X (M, G, d0) in chunks of grid points."""
    return torch.cat([models.forward(model, X[:, i:i + chunk]) for i in
                      range(0, X.shape[1], chunk)], dim=1)
