"""Small torch blocks for image papers: same-size convolution stacks, MLPs, patches, and the
soft-IoU and focal losses of segmentation and small-target detection."""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


def conv_stack(in_channels: int, channels: int, n_layers: int, kernel: int = 3, dilations=None,
               out_channels: int | None = None, activation=nn.GELU) -> nn.Sequential:
    """n_layers convolutions that keep H x W (padding = dilation * (kernel - 1) / 2), an
    activation after each but the last when `out_channels` is given (then the last layer maps to
    it, e.g. a logit map). Receptive field: 1 + (kernel - 1) * sum(dilations)."""
    if kernel % 2 == 0:
        raise ValueError(f"kernel must be odd to keep the image size, got {kernel}")
    dilations = list(dilations) if dilations is not None else [1] * n_layers
    if len(dilations) != n_layers:
        raise ValueError(f"{len(dilations)} dilations for {n_layers} layers")
    layers: list[nn.Module] = []
    c_in = in_channels
    for i, d in enumerate(dilations):
        last = i == n_layers - 1
        c_out = out_channels if (last and out_channels is not None) else channels
        layers.append(nn.Conv2d(c_in, c_out, kernel, padding=d * (kernel - 1) // 2, dilation=d))
        if not (last and out_channels is not None):
            layers.append(activation())
        c_in = c_out
    return nn.Sequential(*layers)


def mlp(sizes, activation=nn.ReLU, dropout: float = 0.0) -> nn.Sequential:
    """Linear layers between consecutive `sizes`, an activation (and dropout) between them."""
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(activation())
            if dropout:
                layers.append(nn.Dropout(dropout))
    return nn.Sequential(*layers)


def patchify(images: torch.Tensor, patch: int) -> torch.Tensor:
    """(B, H, W) -> (B, (H/p) (W/p), p*p) non-overlapping patches in row-major order."""
    b, h, w = images.shape
    if h % patch or w % patch:
        raise ValueError(f"image {h}x{w} is not divisible into {patch}x{patch} patches")
    x = images.reshape(b, h // patch, patch, w // patch, patch).permute(0, 1, 3, 2, 4)
    return x.reshape(b, (h // patch) * (w // patch), patch * patch)


def soft_iou_loss(prob: torch.Tensor, target: torch.Tensor, eps: float = 1.0) -> torch.Tensor:
    """1 - (sum p t + eps) / (sum p + sum t - sum p t + eps) over the whole batch."""
    inter = (prob * target).sum()
    return 1 - (inter + eps) / (prob.sum() + target.sum() - inter + eps)


def focal_loss(logits: torch.Tensor, target: torch.Tensor, gamma: float = 2.0,
               alpha: float = 0.75) -> torch.Tensor:
    """Binary focal loss (Lin et al. 2017): alpha_t (1 - p_t)^gamma BCE, averaged."""
    bce = F.binary_cross_entropy_with_logits(logits, target, reduction="none")
    p = torch.sigmoid(logits)
    p_t = p * target + (1 - p) * (1 - target)
    alpha_t = alpha * target + (1 - alpha) * (1 - target)
    return (alpha_t * (1 - p_t) ** gamma * bce).mean()
