"""The optional tiny channel-independent patch transformer (PatchTST-like) of the full profile,
trained with and without RevIN on the RCA task (torch; imported only by its jobs).

The backbone is the shared icml26.timeseries.models.PatchTransformer: each channel's 128-step
window is cut into patches, embedded, encoded, and its flatten head maps the tokens to
``pt_d_out`` numbers per channel (channel-independent). The channels' outputs are concatenated
and classified by the official RCA head, LayerNorm -> Dropout -> Linear
(Ali-maatouk/TelecomTS train_utils.py). With ``revin=True`` the input is instance-normalised
first by the shared RevIN (per window and channel, no affine; for a classifier there is
nothing to de-normalise), so the logits are invariant to a per-channel positive affine map of
the input: the transformer then sees what INST sees. The method of a run picks the variant:
RAW -> RevIN off on the RAW representation, INST -> RevIN on, INST+SCALE -> RevIN on plus the
2C scale scalars (window mean and log s.d. of RAW) concatenated before the head.
Trained with the written-out Adam of icml26.rl.optim (never torch.optim) and cross-entropy.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from icml26.timeseries.models import PatchTransformer, revin_normalise

from .cnn import fit_classifier


class PatchRCA(nn.Module):
    def __init__(self, channels: int, T: int, n_scale: int, n_classes: int, p: dict,
                 revin: bool):
        super().__init__()
        self.backbone = PatchTransformer(
            lookback=T, horizon=int(p["pt_d_out"]), patch_len=int(p["pt_patch"]),
            stride=int(p["pt_stride"]), d_model=int(p["pt_d_model"]),
            n_heads=int(p["pt_heads"]), d_ff=int(p["pt_d_ff"]), n_layers=int(p["pt_layers"]),
            revin=revin)
        d = channels * int(p["pt_d_out"]) + n_scale
        self.head = nn.Sequential(nn.LayerNorm(d), nn.Dropout(float(p["pt_dropout"])),
                                  nn.Linear(d, n_classes))

    def forward(self, x: torch.Tensor, scale: torch.Tensor | None = None) -> torch.Tensor:
        bb = self.backbone
        z = revin_normalise(x)[0] if bb.revin else x
        h = bb.decode(bb.encode(z)).flatten(1)                 # (B, C * d_out)
        if scale is not None:
            h = torch.cat([h, scale], dim=1)
        return self.head(h)


def train_patchtst(x: np.ndarray, scale, y: np.ndarray, n_classes: int, p: dict, revin: bool,
                   init_seed: int, batch_rng: np.random.Generator, device):
    """Fit one PatchRCA; weights (and dropout) from ``init_seed`` on the CPU generator, moved
    to ``device``. Returns (model, mean training loss per epoch)."""
    from icml26.seeding import seed_torch

    seed_torch(init_seed)
    model = PatchRCA(x.shape[1], x.shape[2], 0 if scale is None else scale.shape[1],
                     n_classes, p, revin).to(device)
    return model, fit_classifier(model, x, scale, y, float(p["pt_lr"]), int(p["pt_batch"]),
                                 int(p["pt_epochs"]), batch_rng, device)
