"""R independent MLPs evaluated as one: weights with a leading model axis (imports torch).

Papers train many small networks side by side (one per seed, run or agent). Each model keeps
its own parameters; layer ``l`` holds ``W`` of shape (R, in, out) and ``b`` of shape (R, 1, out),
and ``x`` of shape (R, B, in) maps to (R, B, out) with one ``torch.baddbmm`` per layer. A loss
summed over models gives each model exactly its own gradient, and Adam is elementwise, so R
models train as R separate ones would: a model's numbers do not depend on which others share
the job (only the interpreter time is shared).

A network is a plain list of layers ``[[W, b], ...]`` (leaf tensors), so papers can copy it
(target networks), interpolate it, or concatenate models along the first axis; ``StackedMLP``
holds one as an ``nn.Module`` (``.to(device)``, ``.parameters()``) where that is handier.

Initialisations, each drawn per model so a model's initial weights depend on its seed only:

- ``from_linears``: stack per-model ``nn.Linear`` layers (built under each model's seed);
- ``uniform_init``: ``nn.Linear``'s default U(-1/sqrt(in), 1/sqrt(in)) for W and b, from a
  ``torch.Generator`` per model;
- ``orthogonal_init``: orthogonal W with CleanRL's gains (sqrt 2 hidden, ``out_gain`` last),
  zero biases.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

Layers = list[list[torch.Tensor]]


def forward(layers: Layers, x: torch.Tensor, activation=torch.tanh, last=None) -> torch.Tensor:
    """x (R, B, in) -> (R, B, out): ``activation`` after every hidden layer, ``last`` (None:
    identity) after the output layer."""
    n = len(layers)
    for i, (w, b) in enumerate(layers):
        x = torch.baddbmm(b, x, w)
        if i < n - 1:
            x = activation(x)
        elif last is not None:
            x = last(x)
    return x


def parameters(layers: Layers) -> list[torch.Tensor]:
    """W1, b1, W2, b2, ... in layer order."""
    return [t for layer in layers for t in layer]


def _leaves(ws, bs, device) -> Layers:
    dev = torch.device("cpu") if device is None else torch.device(device)
    return [[w.to(dev).requires_grad_(True), b.to(dev).requires_grad_(True)]
            for w, b in zip(ws, bs, strict=True)]


def from_linears(per_model: list[list[nn.Linear]], device=None) -> Layers:
    """Stack model r's ``nn.Linear`` layers (weight (out, in)) into (R, in, out) weights and
    (R, 1, out) biases, as fresh leaf tensors on ``device`` (None: the CPU)."""
    ws, bs = [], []
    for layer in zip(*per_model, strict=True):
        ws.append(torch.stack([m.weight.detach().T for m in layer]).contiguous())
        bs.append(torch.stack([m.bias.detach()[None, :] for m in layer]))
    return _leaves(ws, bs, device)


def uniform_init(sizes, seeds, device=None) -> Layers:
    """``nn.Linear``'s default initialisation per model, drawn from
    ``torch.Generator().manual_seed(seed)``: for each layer in turn, W (in, out) then b (1, out),
    both U(-1/sqrt(in), 1/sqrt(in))."""
    per_model = []
    for seed in seeds:
        g = torch.Generator().manual_seed(int(seed) % (2**63))
        layers = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
            bound = 1.0 / math.sqrt(fan_in)
            w = (torch.rand(fan_in, fan_out, generator=g) * 2 - 1) * bound
            b = (torch.rand(1, fan_out, generator=g) * 2 - 1) * bound
            layers.append((w, b))
        per_model.append(layers)
    ws = [torch.stack([m[i][0] for m in per_model]) for i in range(len(sizes) - 1)]
    bs = [torch.stack([m[i][1] for m in per_model]) for i in range(len(sizes) - 1)]
    return _leaves(ws, bs, device)


def orthogonal_init(sizes, generators, out_gain: float = 1.0, device=None) -> Layers:
    """Orthogonal weights (``nn.init.orthogonal_`` on the (out, in) matrix, drawn from model
    r's ``generators[r]``), gain sqrt(2) for hidden layers and ``out_gain`` for the last; zero
    biases (CleanRL's PPO initialisation)."""
    n = len(sizes) - 1
    ws, bs = [], []
    for i in range(n):
        gain = out_gain if i == n - 1 else float(np.sqrt(2.0))
        w = torch.empty(len(generators), sizes[i], sizes[i + 1])
        for r, g in enumerate(generators):
            block = torch.empty(sizes[i + 1], sizes[i])
            nn.init.orthogonal_(block, gain=gain, generator=g)
            w[r] = block.T
        ws.append(w)
        bs.append(torch.zeros(len(generators), 1, sizes[i + 1]))
    return _leaves(ws, bs, device)


def model(layers: Layers, r: int) -> list[np.ndarray]:
    """Model r's weights as numpy arrays: W1 (in, out), b1 (1, out), W2, b2, ..."""
    return [t[r].detach().cpu().numpy().copy() for t in parameters(layers)]


class StackedMLP(nn.Module):
    """A ``Layers`` network as an ``nn.Module``: parameters registered weights first, then
    biases (``weights[i]``, ``biases[i]``)."""

    def __init__(self, layers: Layers, activation=torch.tanh, last=None):
        super().__init__()
        self.activation, self.last = activation, last
        self.weights = nn.ParameterList([nn.Parameter(w.detach().clone()) for w, _ in layers])
        self.biases = nn.ParameterList([nn.Parameter(b.detach().clone()) for _, b in layers])

    @property
    def layers(self) -> Layers:
        return [[w, b] for w, b in zip(self.weights, self.biases, strict=True)]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return forward(self.layers, x, self.activation, self.last)
