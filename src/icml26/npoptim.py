"""Adam in numpy, shared by the numpy papers (flowdup, diskd, embedding-generalization).

The update is ``torch.optim.Adam``'s, operation for operation (tested against it in float64):
with coupled L2 weight decay ``g <- g + wd * p`` (torch's ``weight_decay=``),

    m <- lerp(m, g, 1 - b1);   v <- b2 v + (1 - b2) g^2
    p <- p - (lr / (1 - b1^t)) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)

It is elementwise, so models stacked on a leading axis stay independent of each other;
``active`` (a boolean per model on that axis) freezes the parameters of models that stopped
early while their moments keep updating, as a per-model optimiser that keeps stepping but
whose result is discarded.
"""

from __future__ import annotations

import numpy as np


class Adam:
    def __init__(self, params: list[np.ndarray], lr: float, betas=(0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0):
        self.params = params
        self.lr, (self.b1, self.b2), self.eps = float(lr), betas, float(eps)
        self.weight_decay = float(weight_decay)
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def step(self, grads: list[np.ndarray], active: np.ndarray | None = None) -> None:
        """One update of every parameter array in place from ``grads`` (same shapes)."""
        self.t += 1
        step_size = self.lr / (1.0 - self.b1 ** self.t)
        c2_sqrt = (1.0 - self.b2 ** self.t) ** 0.5
        for p, g, m, v in zip(self.params, grads, self.m, self.v, strict=True):
            if self.weight_decay:
                g = g + self.weight_decay * p
            m += (1.0 - self.b1) * (g - m)
            v *= self.b2
            v += (1.0 - self.b2) * g * g
            update = step_size * (m / (np.sqrt(v) / c2_sqrt + self.eps))
            if active is not None:
                update *= np.asarray(active, dtype=update.dtype).reshape(
                    (-1,) + (1,) * (p.ndim - 1))
            p -= update
