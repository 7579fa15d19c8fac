"""The evaluation side of a configuration (imports torch): train_c(S) for many models at once.

Models of one architecture and optimizer are stacked along a leading axis (icml26.stacked):
model r has its own weights, its own training set (a distilled set of one size, or the full
training set through mini-batches), its own augmentation and its own random streams, so its
numbers do not depend on which other models share the batch. Each model trains with the
configuration's optimizer (SGD lr 0.1 momentum 0.9 or Adam lr 0.01, weight decay 5e-4 added
to the gradient as torch.optim does) for a fixed number of steps: full batch on a distilled
set, mini-batches of 128 on the full set. Augmentation per step: Gaussian pixel noise, or a
random 1-pixel translation (zero padded) drawn per image.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from icml26 import stacked
from icml26.rl.optim import Adam

from .configs import hidden_sizes, shift_table


def activation(arch: str):
    return torch.tanh if arch == "mlp64tanh" else torch.relu


def init_layers(arch: str, d: int, seeds, device) -> list:
    """nn.Linear's default initialisation per model (one torch generator per model seed)."""
    return stacked.uniform_init([d] + hidden_sizes(arch), [int(s) for s in seeds], device)


def logits(layers, x, arch: str):
    return stacked.forward(layers, x, activation(arch))


class Augmenter:
    """Per-model pixel augmentation, with one random stream per model.

    ``kinds[r]`` is none | noise | translate. Noise draws N(0, sigma^2) per pixel from model r's
    torch generator; translation draws a shift per image from model r's numpy generator.
    """

    def __init__(self, kinds, seeds, side: int, sigma: float, device):
        self.kinds = list(kinds)
        self.side, self.sigma, self.device = side, float(sigma), device
        self.noise = [r for r, k in enumerate(self.kinds) if k == "noise"]
        self.shift = [r for r, k in enumerate(self.kinds) if k == "translate"]
        self.tgen = {r: torch.Generator().manual_seed(int(seeds[r]) % (2**63)) for r in self.noise}
        self.ngen = {r: np.random.default_rng(int(seeds[r])) for r in self.shift}
        self.table = torch.as_tensor(shift_table(side), device=device) if self.shift else None

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """x (R, n, d) -> augmented copy (the input is not modified)."""
        if not self.noise and not self.shift:
            return x
        R, n, d = x.shape
        if self.noise:
            z = torch.zeros(R, n, d)
            for r in self.noise:
                z[r] = torch.randn(n, d, generator=self.tgen[r]) * self.sigma
            x = x + z.to(self.device)
        if self.shift:
            ids = np.full((R, n), 4, dtype=np.int64)       # 4: the identity shift
            for r in self.shift:
                ids[r] = self.ngen[r].integers(0, 9, n)
            idx = self.table[torch.as_tensor(ids, device=self.device)]          # (R, n, d)
            pad = torch.cat([x, torch.zeros(R, n, 1, device=x.device, dtype=x.dtype)], dim=2)
            x = torch.gather(pad, 2, idx)
        return x


def adam_for(params, lr: float) -> Adam:
    """icml26.rl.optim.Adam on ``params`` whether or not they require grad (the shared Adam
    keeps only tensors with requires_grad; ours are often plain tensors updated by hand)."""
    opt = Adam([], lr=lr)
    opt.params = list(params)
    opt.m = [torch.zeros_like(t) for t in opt.params]
    opt.v = [torch.zeros_like(t) for t in opt.params]
    return opt


class Optimizer:
    """The configuration's optimizer on stacked parameters, weight decay added to the
    gradient (torch.optim.SGD / Adam ``weight_decay``)."""

    def __init__(self, params, opt: str, p: dict):
        self.params, self.opt, self.wd = list(params), opt, float(p["weight_decay"])
        if opt == "sgd":
            self.lr, self.mu = float(p["sgd_lr"]), float(p["momentum"])
            self.buf = None
        else:
            self.adam = adam_for(self.params, float(p["adam_lr"]))

    @torch.no_grad()
    def step(self, grads) -> None:
        grads = [g + self.wd * w for g, w in zip(grads, self.params, strict=True)]
        if self.opt == "adam":
            self.adam.step(grads)
            return
        if self.buf is None:                       # torch SGD: the first buffer is the gradient
            self.buf = [g.clone() for g in grads]
        else:
            torch._foreach_mul_(self.buf, self.mu)
            torch._foreach_add_(self.buf, grads)
        torch._foreach_add_(self.params, self.buf, alpha=-self.lr)


def ce_grads(layers, x, onehot, arch: str, weights=None):
    """Gradients of sum over models of each model's mean cross-entropy on its rows (or the
    ``weights`` (R, n)-weighted sum), by hand: forward once, backward by the chain rule
    (tested against autograd), about a third cheaper than autograd for these tiny stacked
    MLPs. Plain differentiable tensor ops, so a caller can backpropagate through the
    gradients themselves (gradient matching, unrolled trajectories); call it under
    torch.no_grad() otherwise."""
    tanh = arch == "mlp64tanh"
    acts = [x]
    for i, (w, b) in enumerate(layers):
        z = torch.baddbmm(b, acts[-1], w)
        if i < len(layers) - 1:
            z = torch.tanh(z) if tanh else torch.relu(z)
        acts.append(z)
    out = acts.pop()
    out = out - out.amax(2, keepdim=True)
    e = out.exp_()
    delta = e / e.sum(2, keepdim=True) - onehot
    delta = delta / onehot.shape[1] if weights is None else delta * weights[..., None]
    grads = []
    for i in range(len(layers) - 1, -1, -1):
        a = acts[i]
        grads.append(delta.sum(1, keepdim=True))
        grads.append(torch.bmm(a.transpose(1, 2), delta))
        if i > 0:
            delta = torch.bmm(delta, layers[i][0].transpose(1, 2))
            delta = delta * (1.0 - a * a) if tanh else delta * (a > 0)
    return grads[::-1]


def train_models(arch, opt, p, X, y, init_seeds, aug_kinds, aug_seeds, side, device,
                 batch_idx=None, steps=None, checkpoint=None):
    """Train R stacked models of (arch, opt); returns the trained layers.

    X (R, n, d), y (R, n) long. Full batch unless ``batch_idx`` (steps, R, b) gives each model's
    mini-batch rows per step. ``checkpoint(step, layers)`` is called before the first step and
    after every step when given (expert trajectories).
    """
    steps = int(p["eval_steps"] if steps is None else steps)
    d = X.shape[2]
    layers = init_layers(arch, d, init_seeds, device)
    params = stacked.parameters(layers)
    optim = Optimizer(params, opt, p)
    aug = Augmenter(aug_kinds, aug_seeds, side, p["noise_sigma"], device)
    onehot_full = F.one_hot(y, 10).to(X.dtype)
    if checkpoint is not None:
        checkpoint(0, layers)
    for t in range(steps):
        if batch_idx is None:
            xb, yb = X, y
        else:
            bi = batch_idx[t]
            xb = torch.gather(X, 1, bi[:, :, None].expand(-1, -1, d))
            yb = torch.gather(y, 1, bi)
        xb = aug(xb)
        onehot = onehot_full if batch_idx is None else F.one_hot(yb, 10).to(X.dtype)
        with torch.no_grad():
            optim.step(ce_grads(layers, xb, onehot, arch))
        if checkpoint is not None:
            checkpoint(t + 1, layers)
    return layers


@torch.no_grad()
def test_error(layers, arch, Xte, yte) -> np.ndarray:
    """Per-model test error in [0, 1] on Xte (R, m, d), yte (R, m)."""
    pred = logits(layers, Xte, arch).argmax(2)
    return (pred != yte).float().mean(1).cpu().numpy().astype(np.float64)
