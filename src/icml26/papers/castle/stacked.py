"""The seeds of one (setting, method) trained side by side in one process (torch; train only).

Every seed of a (setting, method) trains the same small GPT from its own initialisation on its
own batch stream. Running them one after another pays Python and kernel overhead per seed; here
their parameters are stacked along a leading seed axis and one ``vmap`` of
``functional_call(model, ...)`` runs the forward and backward of every seed at once. The
arithmetic of each seed is unchanged: seed r only sees its own parameters, batch and optimizer
state, gradients are clipped per seed, and AdamW is elementwise (``icml26.lm.optim
.adamw_update``), so the result equals separate trainings (tested to float tolerance).

The attention used with it is ``icml26.lm.model.MathCausalAttention``, the shared
``CausalSelfAttention`` (same parameters, same function) written as explicit matmuls:
``scaled_dot_product_attention`` has no vmap batching rule on CPU (torch falls back to a slow
per-seed loop). CASTLE's parallel form is plain matmuls already.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.func import functional_call, vmap

from icml26.lm.optim import adamw_update, decay_mask


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy over every position, F.cross_entropy's value as logsumexp - logit
    (under vmap F.cross_entropy runs a decomposition that imports sympy, about 1 CPU-s)."""
    picked = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return (torch.logsumexp(logits, dim=-1) - picked).mean()


class Stacked:
    """R models of the architecture of ``template`` (their parameters stacked, (R, *shape)).

    ``template`` is any nn.Module whose forward maps a batch to logits; ``models`` are R
    modules of the same architecture (their parameters become the replicas).
    """

    def __init__(self, template: nn.Module, models: list[nn.Module], lr: float, betas,
                 weight_decay: float):
        self.template = template
        # named_parameters() lists a tied matrix once; functional_call keeps the tie
        self.names = [n for n, _ in template.named_parameters()]
        self.params = {
            n: torch.stack([dict(m.named_parameters())[n].detach() for m in models])
            .clone().requires_grad_(True) for n in self.names}
        self.R = len(models)
        self.lr, self.betas, self.wd = float(lr), tuple(betas), float(weight_decay)
        # weight decay on the matrices of the single model (nanoGPT's rule)
        self.decay = decay_mask([p for _, p in template.named_parameters()])
        self.m = [torch.zeros_like(p) for p in self.params.values()]
        self.v = [torch.zeros_like(p) for p in self.params.values()]
        self.t = 0

        def logits_one(p, x):
            return functional_call(self.template, p, (x,))

        self._logits = vmap(logits_one)

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        """x: (R, b, ...) -> logits of each replica on its own batch."""
        return self._logits(self.params, x)

    def step(self, loss_fn, x: torch.Tensor, y: torch.Tensor, scale: float,
             clip: float) -> torch.Tensor:
        """One AdamW step of every replica on its own batch (x, y: (R, b, ...)); per-replica
        gradient clipping to ``clip``. ``loss_fn(logits, y)`` is one replica's mean loss.
        Returns the per-replica losses (R,)."""
        for p in self.params.values():
            p.grad = None
        losses = vmap(loss_fn)(self.logits(x), y)
        losses.sum().backward()  # replica r's parameters reach only loss r
        with torch.no_grad():
            grads = [self.params[n].grad for n in self.names]
            sq = sum(g.pow(2).reshape(self.R, -1).sum(dim=1) for g in grads)
            coef = (clip / (sq.sqrt() + 1e-6)).clamp(max=1.0)
            for g in grads:
                g.mul_(coef.view(-1, *([1] * (g.ndim - 1))))
            self.t += 1
            adamw_update([self.params[n].detach() for n in self.names], grads, self.m,
                         self.v, self.t, self.lr * scale, self.betas, 1e-8, self.wd,
                         self.decay)
        return losses.detach()

    @torch.no_grad()
    def replica(self, r: int) -> dict:
        """The parameters of replica r (a state dict for ``load_state_dict(strict=False)``)."""
        return {n: self.params[n].detach()[r].clone() for n in self.names}
