"""The three language models of one seed (generator G, scorer S, performer P) and the machine
text (torch; imported only by the train stage).

Each model is a shared ``icml26.lm`` GPT trained from scratch on the seed's training text with
the shared AdamW (warm-up + cosine) loop. Randomness: the init and the dropout masks come from
torch's global generator, re-seeded just before each model is built, and the batches from
``train_lm``'s own generator, so one model's numbers never depend on what else a job trains.

Device: a model is built on the CPU (the same initial weights on every device) and moved to
``device`` (config ``device`` through ``icml26.seeding.torch_device``); batches and sampling
uniforms are drawn on CPU generators and moved (``icml26.lm.train``). Dropout masks come from
the device's own generator (seeded by the same ``torch.manual_seed``), so on a GPU they differ
from the CPU's.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from icml26.lm.model import GPT, GPTConfig
from icml26.lm.optim import adamw_for
from icml26.lm.train import as_tensor, eval_loss, eval_windows, sample, train_lm
from icml26.seeding import seed_torch


def build(vocab: int, arch: dict, seed: int, device=None) -> GPT:
    seed_torch(seed)
    cfg = GPTConfig(vocab_size=vocab, context=int(arch["context"]), d_model=int(arch["d"]),
                    n_heads=int(arch["heads"]), n_layers=int(arch["layers"]),
                    dropout=float(arch["dropout"]))
    return GPT(cfg).to("cpu" if device is None else device)


def checkpoint_steps(steps: int, fracs) -> dict[int, float]:
    """Steps done at each checkpoint fraction (at least 1 step), step -> fraction."""
    return {max(1, int(round(f * steps))): float(f) for f in fracs}


def fit(model: GPT, train_ids: np.ndarray, opt_cfg: dict, seed: int, *, val_ids=None,
        n_val: int = 0, ckpt_fracs=()) -> tuple[list, dict]:
    """Train ``model``; returns (validation-loss curve [(step, loss)], {fraction: state_dict}).

    Checkpoints are copies of the weights after round(f * steps) steps. Validation loss is
    measured at ``n_val`` evenly spaced steps (and at the end) on ``val_ids``.
    """
    steps = int(opt_cfg["steps"])
    ckpts = checkpoint_steps(steps, ckpt_fracs)
    val_at = {int(round(k * steps / n_val)) for k in range(n_val)} if n_val else set()
    windows = eval_windows(val_ids, model.config.context) if n_val else None
    saved, curve, counter = {}, [], [0]

    def hook(m) -> float:
        # called by train_lm before every step (eval_every=1) and once after the last one
        done = counter[0]
        counter[0] += 1
        if done in ckpts:
            saved[ckpts[done]] = {k: v.detach().clone() for k, v in m.state_dict().items()}
        if windows is not None and (done in val_at or done == steps):
            curve.append((done, eval_loss(m, windows)))
        return math.nan

    seed_torch(seed)  # dropout masks
    opt = adamw_for(model, float(opt_cfg["lr"]), weight_decay=float(opt_cfg["weight_decay"]))
    warmup = int(round(float(opt_cfg["warmup_frac"]) * steps))
    train_lm(model, opt, train_ids, steps=steps, batch=int(opt_cfg["batch"]),
             context=model.config.context, seed=seed, warmup=warmup,
             final_frac=float(opt_cfg["final_frac"]), clip=float(opt_cfg["clip"]),
             eval_every=1, eval_fn=hook)
    model.eval()
    return curve, saved


def generate(model: GPT, prompts: np.ndarray, n_new: int, seed: int, temperature: float,
             top_p: float, batch: int = 200) -> np.ndarray:
    """Prompt + ``n_new`` sampled tokens per row (nucleus sampling: the shared ``sample``,
    decoding through its key/value cache)."""
    gen = torch.Generator().manual_seed(int(seed))
    model.eval()
    out = []
    for i in range(0, len(prompts), batch):
        out.append(sample(model, as_tensor(prompts[i : i + batch]), n_new, generator=gen,
                          temperature=temperature, top_p=top_p, kv_cache=True).cpu().numpy())
    model.eval()
    return np.concatenate(out)
