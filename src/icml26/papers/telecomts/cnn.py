"""The 1-D CNN over time (torch): Conv(C -> 32, k 7) -> ReLU -> Conv(32 -> 32, k 5, stride 2)
-> ReLU -> global average pool -> (concat the 2C scale scalars for INST+SCALE) -> Linear.
Adam (lr 2e-3), batch 64, 8 epochs, cross-entropy (spec). Imported only by CNN jobs."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn


class WindowCNN(nn.Module):
    def __init__(self, channels: int, hidden: int, n_scale: int, n_classes: int):
        super().__init__()
        self.conv1 = nn.Conv1d(channels, hidden, 7)
        self.conv2 = nn.Conv1d(hidden, hidden, 5, stride=2)
        self.head = nn.Linear(hidden + n_scale, n_classes)

    def forward(self, x, scale=None):
        h = torch.relu(self.conv2(torch.relu(self.conv1(x)))).mean(dim=-1)
        if scale is not None:
            h = torch.cat([h, scale], dim=1)
        return self.head(h)


def train_cnn(x: np.ndarray, scale, y: np.ndarray, n_classes: int, p: dict, init_seed: int,
              batch_rng: np.random.Generator, device):
    """Fit one CNN; weights drawn on the CPU from ``init_seed`` then moved to ``device``.
    Returns (model, mean training loss per epoch)."""
    from icml26.seeding import seed_torch

    seed_torch(init_seed)
    model = WindowCNN(x.shape[1], int(p["cnn_hidden"]), 0 if scale is None else scale.shape[1],
                      n_classes).to(device)
    return model, fit_classifier(model, x, scale, y, float(p["cnn_lr"]), int(p["cnn_batch"]),
                                 int(p["cnn_epochs"]), batch_rng, device)


def fit_classifier(model, x: np.ndarray, scale, y: np.ndarray, lr: float, batch: int, epochs: int,
                   batch_rng: np.random.Generator, device) -> list[float]:
    """Cross-entropy training of model(x, scale) with the written-out Adam on shuffled
    minibatches (order from ``batch_rng``); returns the mean training loss per epoch. Shared by
    the CNN and the full profile's patch transformer."""
    from icml26.rl.optim import Adam  # written out: torch.optim imports torch._dynamo (~2 CPU-s)

    opt = Adam(model.parameters(), lr=lr)
    xt = torch.as_tensor(x, dtype=torch.float32).to(device)
    st = None if scale is None else torch.as_tensor(scale, dtype=torch.float32).to(device)
    yt = torch.as_tensor(y, dtype=torch.long).to(device)
    losses = []
    model.train()
    for _ in range(epochs):
        order = torch.as_tensor(batch_rng.permutation(len(y))).to(device)
        total = 0.0
        for i in range(0, len(y), batch):
            idx = order[i:i + batch]
            loss = nn.functional.cross_entropy(
                model(xt[idx], None if st is None else st[idx]), yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        losses.append(total / len(y))
    return losses


@torch.no_grad()
def predict_proba(model, x: np.ndarray, scale, device, batch: int = 512) -> np.ndarray:
    model.eval()
    out = []
    for i in range(0, len(x), batch):
        xb = torch.as_tensor(x[i:i + batch], dtype=torch.float32).to(device)
        sb = None if scale is None else torch.as_tensor(scale[i:i + batch],
                                                        dtype=torch.float32).to(device)
        out.append(torch.softmax(model(xb, sb), dim=1).double().cpu().numpy())
    return np.concatenate(out)
