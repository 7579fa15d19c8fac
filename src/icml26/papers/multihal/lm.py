"""The tiny language models: all seeds of one model size trained side by side (torch).

Each seed has its own benchmark (graph, languages, corpus), its own initialisation and batch
stream. Their parameters are stacked along a leading seed axis and one ``vmap`` of
``functional_call(GPT, ...)`` runs every seed's forward and backward at once; gradients are
clipped per seed and AdamW (``icml26.lm.optim.adamw_update``) is elementwise, so each seed
trains as if alone (tested to float tolerance). The attention is the shared
``MathCausalAttention`` (the same function as scaled_dot_product_attention, which has no vmap
rule on the CPU).

Loss: masked next-token cross-entropy, mean over the loss positions of the batch (facts: every
token; QA: the answer and <eos>).
"""

from __future__ import annotations

import numpy as np
import torch
from torch.func import functional_call, vmap

from icml26.lm.model import GPT, GPTConfig, MathCausalAttention
from icml26.lm.optim import adamw_update, decay_mask, warmup_cosine


def gpt_config(vocab: int, lm: dict, setting: dict) -> GPTConfig:
    d = int(setting["d_model"])
    return GPTConfig(vocab_size=vocab, context=int(lm["context"]), d_model=d,
                     n_heads=int(lm["n_heads"]), n_layers=int(setting["n_layers"]),
                     mlp_hidden=int(lm["mlp_ratio"]) * d, dropout=0.0)


def masked_nll(logits: torch.Tensor, y: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(R, b, T, V), (R, b, T), (R, b, T) -> per-replica mean NLL over the masked positions
    (written as logsumexp - logit: F.cross_entropy under vmap imports sympy)."""
    picked = logits.gather(-1, y.unsqueeze(-1)).squeeze(-1)
    nll = torch.logsumexp(logits, dim=-1) - picked
    return (nll * mask).sum(dim=(1, 2)) / mask.sum(dim=(1, 2)).clamp(min=1.0)


class StackedGPT:
    """R GPTs of one architecture, parameters stacked (R, *shape)."""

    def __init__(self, config: GPTConfig, init_seeds: list[int], device):
        self.template = GPT(config, attention=MathCausalAttention).to(device)
        self.names = [n for n, _ in self.template.named_parameters()]
        replicas = []
        for s in init_seeds:
            torch.manual_seed(int(s) % 2**63)  # GPT's init draws on the global CPU generator
            replicas.append(dict(GPT(config, attention=MathCausalAttention).named_parameters()))
        self.params = {n: torch.stack([r[n].detach() for r in replicas]).to(device)
                       .clone().requires_grad_(True) for n in self.names}
        self.R = len(init_seeds)
        self.decay = decay_mask([p for _, p in self.template.named_parameters()])
        self.m = [torch.zeros_like(p) for p in self.params.values()]
        self.v = [torch.zeros_like(p) for p in self.params.values()]
        self.t = 0
        self._logits = vmap(lambda p, x: functional_call(self.template, p, (x,)))

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        return self._logits(self.params, x)

    def step(self, x, y, mask, lr: float, betas, wd: float, clip: float) -> torch.Tensor:
        for p in self.params.values():
            p.grad = None
        losses = masked_nll(self.logits(x), y, mask)
        losses.sum().backward()  # replica r's parameters reach only loss r
        with torch.no_grad():
            grads = [self.params[n].grad for n in self.names]
            sq = sum(g.pow(2).reshape(self.R, -1).sum(dim=1) for g in grads)
            coef = (clip / (sq.sqrt() + 1e-6)).clamp(max=1.0)
            for g in grads:
                g.mul_(coef.view(-1, *([1] * (g.ndim - 1))))
            self.t += 1
            adamw_update([self.params[n].detach() for n in self.names], grads, self.m, self.v,
                         self.t, lr, tuple(betas), 1e-8, wd, self.decay)
        return losses.detach()

    @torch.no_grad()
    def replica_logits(self, r: int, x: torch.Tensor) -> torch.Tensor:
        params = {n: self.params[n].detach()[r] for n in self.names}
        return functional_call(self.template, params, (x,))


def train(stack: StackedGPT, seqs: list[np.ndarray], masks: list[np.ndarray],
          batch_seeds: list[int], lm: dict, device) -> list[list[tuple[int, float]]]:
    """``lm["steps"]`` AdamW steps; replica r samples ``batch`` sequences uniformly (with
    replacement) from its own corpus with its own generator. Returns per replica the training
    loss averaged over each block of ``loss_every`` steps."""
    steps, batch, every = int(lm["steps"]), int(lm["batch"]), int(lm["loss_every"])
    tok = [torch.as_tensor(s) for s in seqs]
    msk = [torch.as_tensor(m) for m in masks]
    gens = [torch.Generator().manual_seed(int(s) % 2**63) for s in batch_seeds]
    curves, block = [[] for _ in range(stack.R)], []
    for step in range(steps):
        idx = [torch.randint(0, len(t), (batch,), generator=g) for t, g in zip(tok, gens,
                                                                                 strict=True)]
        chunk = torch.stack([t[i] for t, i in zip(tok, idx, strict=True)])
        m = torch.stack([mm[i] for mm, i in zip(msk, idx, strict=True)]).to(device)
        x, y = chunk[:, :, :-1].to(device), chunk[:, :, 1:].to(device)
        scale = warmup_cosine(step, steps, int(lm["warmup"]), float(lm["final_frac"]))
        losses = stack.step(x, y, m, float(lm["lr"]) * scale, lm["betas"],
                            float(lm["weight_decay"]), float(lm["clip"]))
        block.append(losses.cpu().numpy())
        if len(block) == every or step == steps - 1:
            mean = np.mean(block, axis=0)
            for r in range(stack.R):
                curves[r].append((step + 1, float(mean[r])))
            block = []
    return curves


@torch.no_grad()
def next_token_probs(stack: StackedGPT, r: int, prompts: list[list[int]], device,
                     chunk: int = 2048) -> np.ndarray:
    """p(next token | prompt) of replica r for every prompt (right-padded, causal: padding
    after the prompt does not change it), (n, V) float64."""
    if not prompts:
        return np.zeros((0, stack.template.config.vocab_size))
    length = max(len(p) for p in prompts)
    ids = np.zeros((len(prompts), length), dtype=np.int64)
    last = np.array([len(p) - 1 for p in prompts])
    for i, p in enumerate(prompts):
        ids[i, : len(p)] = p
    out = []
    for s in range(0, len(prompts), chunk):
        x = torch.as_tensor(ids[s: s + chunk]).to(device)
        lg = stack.replica_logits(r, x)
        pick = lg[torch.arange(len(x)), torch.as_tensor(last[s: s + chunk]).to(device)]
        out.append(torch.softmax(pick.double(), dim=-1).cpu().numpy())
    return np.concatenate(out)
