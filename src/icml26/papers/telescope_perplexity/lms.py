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


class CachedSampler(torch.nn.Module):
    """A key/value-cached view of a GPT for ``sample`` (which feeds the whole sequence at every
    step and reads the last position's logits).

    The shared ``GPT.forward`` recomputes every prefix position and projects all of them onto
    the 2,001-word vocabulary at every step; this view runs only the positions it has not seen
    yet (keys and values of the earlier ones are cached per layer) and applies the head at the
    last position only. Same numbers as ``GPT.forward(seq)[:, -1:]`` (tested); eval mode only,
    sequences within the context, one view per generation call.
    """

    def __init__(self, gpt: GPT):
        super().__init__()
        self.gpt = gpt
        self.config = gpt.config
        self.cache: list[tuple[torch.Tensor, torch.Tensor]] = []
        self.seen = 0

    @torch.no_grad()
    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        g, t0, t = self.gpt, self.seen, idx.shape[1]
        if t > self.config.context or t0 >= t:
            raise ValueError("CachedSampler: sequences must grow within the context")
        x = g.tok(idx[:, t0:]) + g.pos(torch.arange(t0, t, device=idx.device))
        # new position i (absolute t0 + i) may attend to every absolute position j <= t0 + i
        mask = (torch.arange(t, device=idx.device)[None, :]
                <= torch.arange(t0, t, device=idx.device)[:, None])
        for li, block in enumerate(g.blocks):
            attn = block.attn
            b, n, d = x.shape
            q, k, v = attn.qkv(block.ln1(x)).split(d, dim=2)
            q, k, v = (z.view(b, n, attn.n_heads, d // attn.n_heads).transpose(1, 2)
                       for z in (q, k, v))
            if li < len(self.cache):
                k = torch.cat([self.cache[li][0], k], dim=2)
                v = torch.cat([self.cache[li][1], v], dim=2)
                self.cache[li] = (k, v)
            else:
                self.cache.append((k, v))
            y = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
            x = x + attn.proj(y.transpose(1, 2).reshape(b, n, d))
            x = x + block.ffn(block.ln2(x))
        self.seen = t
        return g.head(g.ln_f(x[:, -1:]))


def generate(model: GPT, prompts: np.ndarray, n_new: int, seed: int, temperature: float,
             top_p: float, batch: int = 200) -> np.ndarray:
    """Prompt + ``n_new`` sampled tokens per row (nucleus sampling, shared ``sample``)."""
    gen = torch.Generator().manual_seed(int(seed))
    model.eval()
    out = []
    for i in range(0, len(prompts), batch):
        out.append(sample(CachedSampler(model), as_tensor(prompts[i : i + batch]), n_new,
                          generator=gen, temperature=temperature, top_p=top_p).cpu().numpy())
    model.eval()
    return np.concatenate(out)
