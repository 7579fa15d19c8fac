"""Batches, a seeded training loop, validation loss, log-probabilities and sampling (torch).

Every random draw takes an explicit ``torch.Generator`` so a run is reproducible from its seed
and independent of other runs in the same process.

Devices: the model may live on any device (``model.to(icml26.seeding.torch_device(...))``);
token ids stay on the CPU, every random number (batch offsets, sampling uniforms) is drawn on
the CPU generator and then moved to the model's device, and inputs are moved there before each
forward pass. A run's draws are therefore the same on every device, and on the CPU nothing
moves at all.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from .optim import clip_grad_norm, warmup_cosine


def as_tensor(ids) -> torch.Tensor:
    return torch.as_tensor(np.asarray(ids), dtype=torch.long)


def device_of(model) -> torch.device:
    """The device of a model's first parameter (the CPU for a model without parameters)."""
    for p in model.parameters():
        return p.device
    return torch.device("cpu")


def random_batch(ids: torch.Tensor, batch: int, context: int, generator: torch.Generator):
    """``batch`` random windows: inputs ids[o:o+context], targets ids[o+1:o+context+1]."""
    starts = torch.randint(0, len(ids) - context, (batch,), generator=generator)
    offsets = starts[:, None] + torch.arange(context + 1)
    chunk = ids[offsets]
    return chunk[:, :-1], chunk[:, 1:]


def eval_windows(ids, context: int) -> torch.Tensor:
    """Windows of ``context + 1`` tokens with stride ``context``: every token after the first
    is predicted exactly once, each with up to ``context`` tokens of left context."""
    ids = as_tensor(ids)
    n = (len(ids) - 1) // context
    if n < 1:
        raise ValueError(f"{len(ids)} tokens are fewer than one window of {context + 1}")
    offsets = torch.arange(n)[:, None] * context + torch.arange(context + 1)
    return ids[offsets]


@torch.no_grad()
def eval_loss(model, windows: torch.Tensor, batch: int = 256) -> float:
    """Mean next-token cross-entropy (nats) over every predicted position of ``windows``."""
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    dev = device_of(model)
    for i in range(0, len(windows), batch):
        w = windows[i : i + batch].to(dev)
        logits = model(w[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), w[:, 1:].reshape(-1),
                               reduction="sum")
        total += float(loss)
        count += w[:, 1:].numel()
    model.train(was_training)
    return total / count


def train_lm(model, opt, train_ids, *, steps: int, batch: int, context: int, seed: int,
             warmup: int = 0, final_frac: float = 0.1, clip: float | None = 1.0,
             eval_every: int = 0, eval_fn=None, device=None) -> list[tuple[int, float]]:
    """Train ``model`` with ``opt`` for ``steps`` steps of random windows.

    The schedule is ``warmup_cosine``; ``eval_fn(model) -> float`` runs at step 0, every
    ``eval_every`` steps and after the last step, and its values are returned as
    (steps done, value) pairs. Batches are drawn on the CPU and moved to ``device`` (None:
    the model's device).
    """
    dev = device_of(model) if device is None else torch.device(device)
    ids = as_tensor(train_ids)
    gen = torch.Generator().manual_seed(int(seed))
    curve = []
    model.train()
    for step in range(steps):
        if eval_fn is not None and eval_every and step % eval_every == 0:
            curve.append((step, eval_fn(model)))
        x, y = random_batch(ids, batch, context, gen)
        x, y = x.to(dev), y.to(dev)
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        if clip is not None:
            clip_grad_norm(opt.params, clip)
        opt.step(warmup_cosine(step, steps, warmup, final_frac))
        if steps >= 8 and (step + 1) % (steps // 4) == 0:  # progress in the job's log
            print(f"  lm step {step + 1}/{steps}: train loss {loss.item():.4f}", flush=True)
    if eval_fn is not None:
        curve.append((steps, eval_fn(model)))
    return curve


@torch.no_grad()
def token_logprobs(model, idx: torch.Tensor) -> torch.Tensor:
    """log p(v | idx[:, :i+1]) for every position i and vocabulary entry v: (B, T, V).

    Dropout is off for the pass; the model's train/eval mode is restored afterwards."""
    was_training = model.training
    model.eval()
    out = F.log_softmax(model(idx.to(device_of(model))), dim=-1)
    model.train(was_training)
    return out


@torch.no_grad()
def sample(model, prompt: torch.Tensor, n_new: int, *, generator: torch.Generator,
           temperature: float = 1.0, top_p: float = 1.0, kv_cache: bool = False) -> torch.Tensor:
    """Append ``n_new`` sampled tokens to each prompt row (batched), nucleus ``top_p``.

    Nucleus: keep the smallest set of most probable tokens whose mass reaches ``top_p`` (the
    token that crosses the threshold is kept), renormalise, sample by inverse CDF. The
    uniforms come from ``generator`` (on its own device, the CPU by default) and are moved to
    the model's device; the result lies on the model's device.

    ``kv_cache``: decode through a ``KVCachedGPT`` view of a ``GPT`` (only the new position per
    step; the same tokens up to float rounding), for prompt plus ``n_new`` within the context.
    """
    was_training = model.training
    model.eval()
    ctx = model.config.context
    dev = device_of(model)
    seq = prompt.clone().to(dev)
    net = model
    if kv_cache:
        from .model import KVCachedGPT

        if prompt.shape[1] + n_new > ctx:
            raise ValueError(f"kv_cache: prompt {prompt.shape[1]} + {n_new} new tokens exceed "
                             f"the context {ctx}")
        net = KVCachedGPT(model)
    for _ in range(n_new):
        logits = net(seq[:, -ctx:])[:, -1, :] / temperature
        probs = F.softmax(logits, dim=-1)
        if top_p < 1.0:
            sorted_p, order = probs.sort(dim=-1, descending=True)
            before = sorted_p.cumsum(dim=-1) - sorted_p     # mass strictly above each token
            sorted_p = torch.where(before < top_p, sorted_p, torch.zeros_like(sorted_p))
            probs = torch.zeros_like(probs).scatter(-1, order, sorted_p)
        probs = probs / probs.sum(dim=-1, keepdim=True)
        u = torch.rand(len(seq), 1, generator=generator, device=generator.device).to(dev)
        nxt = (probs.cumsum(dim=-1) < u).sum(dim=-1, keepdim=True)
        nxt = nxt.clamp(max=probs.shape[-1] - 1)
        seq = torch.cat([seq, nxt], dim=1)
    model.train(was_training)
    return seq
