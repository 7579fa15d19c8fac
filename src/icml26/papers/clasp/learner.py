"""The learner (torch): MLP 2-64-64-2, tanh hidden, output 0.05 tanh, behaviour cloning with a
(weighted) MSE, Adam lr 3e-3, full batch, warm-started across rounds.

Many learners (every run of a shard, and the 3 members of each Active-uncertainty ensemble)
are stacked in one batch of independent networks: weights have a leading net axis and layers
are batched matmuls, so one Adam step trains all of them. The loss is the sum of the per-net
losses, so each net's gradient is exactly its own; Adam is elementwise, so each net follows the
same trajectory as if trained alone. The data of every net are padded to the same number of rows
(zero weight), a number fixed by the config and the round, so a net's numbers do not depend on
which other nets share its batch (checked in the tests). The stacked layers, their
initialisation and forward pass are the shared ``icml26.stacked`` block; this class adds the
output scale, net subsets and the weighted behaviour-cloning fit.

Device: the weights, the Adam state and the training data live on ``device`` (config ``device``
through ``icml26.seeding.torch_device``); the initial weights are drawn on the CPU generator and
then moved, so they are the same on every device. The point-mass environment and the teaching
protocol around the learner are numpy on the CPU: ``act`` takes and returns numpy arrays.
"""

from __future__ import annotations

import numpy as np
import torch

from icml26 import stacked
from icml26.rl.optim import Adam


class BatchedPolicy:
    def __init__(self, seeds: list[int], hidden: int = 64, out_scale: float = 0.05,
                 device=None):
        self.out_scale = out_scale
        self.device = torch.device("cpu") if device is None else torch.device(device)
        # nn.Linear's default initialisation per net from its own seed, drawn on the CPU
        self.layers = stacked.uniform_init([2, hidden, hidden, 2], seeds, self.device)
        self.params = stacked.parameters(self.layers)

    @property
    def n_nets(self) -> int:
        return self.params[0].shape[0]

    def forward(self, X: torch.Tensor, idx=None) -> torch.Tensor:
        """X: (nets, n, 2) -> actions (nets, n, 2); ``idx`` selects a subset of the nets."""
        if idx is not None:
            idx = torch.as_tensor(idx, device=self.device)
        layers = self.layers if idx is None else [[p[idx] for p in lay] for lay in self.layers]
        return self.out_scale * stacked.forward(layers, X, torch.tanh, last=torch.tanh)

    @torch.no_grad()
    def act(self, obs: np.ndarray, idx=None) -> np.ndarray:
        x = torch.as_tensor(obs, dtype=torch.float32, device=self.device)
        return self.forward(x, idx).cpu().numpy()

    def fit(self, X: np.ndarray, Y: np.ndarray, W: np.ndarray, steps: int, lr: float) -> float:
        """``steps`` full-batch Adam steps on sum_nets mean_i w_i ||pi(s_i) - a_i||^2.

        W is zero on padding rows and has mean 1 over each net's real rows; a fresh Adam state
        per call (INFERRED: the spec warm-starts the weights, not the optimiser).
        """
        X = torch.as_tensor(X, dtype=torch.float32, device=self.device)
        Y = torch.as_tensor(Y, dtype=torch.float32, device=self.device)
        W = torch.as_tensor(W, dtype=torch.float32, device=self.device)
        n_real = (W > 0).sum(dim=1).clamp(min=1).to(torch.float32)
        adam = Adam(self.params, lr)
        loss = torch.zeros((), device=self.device)
        for _ in range(steps):
            err = ((self.forward(X) - Y) ** 2).sum(-1)              # (nets, N)
            loss = ((W * err).sum(-1) / n_real).sum()
            grads = torch.autograd.grad(loss, self.params)
            adam.step(grads)
        return float(loss.detach()) / max(self.n_nets, 1)

    def export(self, i: int) -> list[np.ndarray]:
        return stacked.model(self.layers, i)


def numpy_forward(weights: list[np.ndarray], X: np.ndarray, out_scale: float = 0.05):
    """The same network in numpy (for checks and for reading saved weights)."""
    W1, b1, W2, b2, W3, b3 = weights
    h = np.tanh(X @ W1 + b1)
    h = np.tanh(h @ W2 + b2)
    return out_scale * np.tanh(h @ W3 + b3)
