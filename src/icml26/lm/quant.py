"""Post-training quantisation of linear layers: round-to-nearest and GPTQ (torch).

Weights W are (d_out, d_in) as in ``nn.Linear``; calibration inputs X are (n, d_in) rows (one
per token). Quantisation is per output channel (one scale, and a zero point if asymmetric,
per row of W, or per row and group of ``group_size`` input columns):

- symmetric: scale = absmax / (2^(b-1) - 1), levels -(2^(b-1)-1) .. 2^(b-1)-1 (zero is exact);
- asymmetric: the range [min(w, 0), max(w, 0)] split into 2^b - 1 steps, integer zero point.

``gptq`` is the column-by-column algorithm of Frantar et al. (2022): with the (damped) input
Hessian H = X^T diag(t) X / sum(t), optionally weighted per token by t (a reweighted
calibration loss sum_i t_i ||(W - Q) x_i||^2), and U the upper Cholesky factor of H^-1, each
column j is rounded and its error (w_j - q_j) / U_jj is pushed onto the later columns through
U_j,j+1: — greedy sequential minimisation of the calibration loss. Columns named in ``keep``
stay in floating point (outlier channels). Everything is computed in float64.

``fake_quant_act`` quantises activations per tensor (static symmetric scale) and
``QuantLinear`` is a drop-in ``nn.Linear`` with dequantised weights and optional input
quantisation that leaves chosen input channels in floating point.
"""

from __future__ import annotations

import torch
from torch import nn


def qmax_sym(bits: int) -> int:
    return 2 ** (bits - 1) - 1


def grid_params(w: torch.Tensor, bits: int, sym: bool = True):
    """Per-row quantisation grid of w (rows, cols): (scale, zero), each (rows, 1).

    A row of zeros gets scale 1 (any grid represents it exactly)."""
    w = w.double()
    if sym:
        amax = w.abs().amax(dim=1, keepdim=True)
        scale = amax / qmax_sym(bits)
        zero = torch.zeros_like(scale)
    else:
        lo = w.amin(dim=1, keepdim=True).clamp(max=0.0)
        hi = w.amax(dim=1, keepdim=True).clamp(min=0.0)
        scale = (hi - lo) / (2**bits - 1)
        zero = torch.round(-lo / torch.where(scale > 0, scale, torch.ones_like(scale)))
    scale = torch.where(scale > 0, scale, torch.ones_like(scale))
    return scale, zero


def quantize(w: torch.Tensor, scale: torch.Tensor, zero: torch.Tensor, bits: int,
             sym: bool = True) -> torch.Tensor:
    """Round w to the nearest grid point (clamped to the grid) and dequantise."""
    if sym:
        q = torch.clamp(torch.round(w / scale), -qmax_sym(bits), qmax_sym(bits))
        return q * scale
    q = torch.clamp(torch.round(w / scale) + zero, 0, 2**bits - 1)
    return (q - zero) * scale


def _groups(d_in: int, group_size: int | None):
    g = d_in if not group_size else int(group_size)
    return [(s, min(s + g, d_in)) for s in range(0, d_in, g)]


def rtn(w: torch.Tensor, bits: int, sym: bool = True, group_size: int | None = None,
        keep=None) -> torch.Tensor:
    """Round-to-nearest per output channel (and group); ``keep``: columns left unquantised."""
    w = w.detach().double()
    out = torch.empty_like(w)
    for a, b in _groups(w.shape[1], group_size):
        scale, zero = grid_params(w[:, a:b], bits, sym)
        out[:, a:b] = quantize(w[:, a:b], scale, zero, bits, sym)
    if keep is not None:
        out[:, keep] = w[:, keep]
    return out


def hessian(x: torch.Tensor, weights: torch.Tensor | None = None,
            damp: float = 0.01) -> torch.Tensor:
    """H = X^T diag(t) X / sum(t) + damp * mean(diag H) * I for inputs x (n, d_in) and token
    weights t (n,) (None: uniform, the standard GPTQ Hessian)."""
    x = x.detach().double().reshape(-1, x.shape[-1])
    t = (torch.ones(len(x), dtype=torch.float64, device=x.device) if weights is None
         else weights.detach().double().reshape(-1).to(x.device))
    h = (x * t[:, None]).T @ x / t.sum()
    return h + damp * torch.diagonal(h).mean() * torch.eye(len(h), dtype=h.dtype,
                                                            device=h.device)


def gptq(w: torch.Tensor, h: torch.Tensor, bits: int, sym: bool = True,
         group_size: int | None = None, keep=None) -> torch.Tensor:
    """GPTQ-quantised copy of w (d_out, d_in) for the input Hessian h (d_in, d_in).

    The grid of each row is fixed from the original weights (per group: from the weights as
    updated when the group starts, as the reference implementation does). Columns in ``keep``
    are not rounded (their weights still absorb earlier columns' error). Dead inputs (zero
    Hessian diagonal) get weight 0, as in the reference implementation."""
    w = w.detach().double().clone()
    h = h.detach().double().clone()
    d_in = w.shape[1]
    dead = torch.diagonal(h) == 0
    h[dead, dead] = 1.0
    w[:, dead] = 0.0
    kept = torch.zeros(d_in, dtype=torch.bool, device=w.device)
    if keep is not None:
        kept[keep] = True
    # U: upper Cholesky factor of H^-1 (H^-1 = U^T U)
    u = torch.linalg.cholesky(torch.cholesky_inverse(torch.linalg.cholesky(h)), upper=True)
    starts = {a for a, _ in _groups(d_in, group_size)}
    scale = zero = None
    for j in range(d_in):
        if j in starts:
            b = min(j + (group_size or d_in), d_in)
            scale, zero = grid_params(w[:, j:b], bits, sym)
        col = w[:, j]
        q = col.clone() if kept[j] else quantize(col[:, None], scale, zero, bits, sym)[:, 0]
        err = (col - q) / u[j, j]
        w[:, j + 1:] -= err[:, None] * u[j, j + 1:][None, :]
        w[:, j] = q
    return w


def calibration_error(w: torch.Tensor, wq: torch.Tensor, x: torch.Tensor,
                      weights: torch.Tensor | None = None) -> float:
    """(Weighted) mean over tokens of ||(W - Q) x_i||^2: the loss GPTQ minimises greedily."""
    x = x.detach().double().reshape(-1, x.shape[-1])
    r = ((x @ (w.double() - wq.double()).T) ** 2).sum(1)
    if weights is None:
        return float(r.mean())
    t = weights.detach().double().reshape(-1)
    return float((t * r).sum() / t.sum())


def act_scale(x: torch.Tensor, bits: int, percentile: float = 100.0, channels=None) -> float:
    """Static per-tensor symmetric activation scale: the ``percentile`` of |x| (100: absmax)
    over the given input channels (None: all), divided by 2^(b-1) - 1."""
    x = x.detach().double().reshape(-1, x.shape[-1])
    if channels is not None:
        x = x[:, channels]
    a = x.abs().reshape(-1)
    v = a.max() if percentile >= 100.0 else torch.quantile(a, percentile / 100.0)
    return float(max(float(v), 1e-12) / qmax_sym(bits))


def fake_quant_act(x: torch.Tensor, scale: float, bits: int) -> torch.Tensor:
    """Symmetric per-tensor quantise-dequantise with clipping to the grid."""
    m = qmax_sym(bits)
    return torch.clamp(torch.round(x / scale), -m, m) * scale


def outlier_channels(x: torch.Tensor, frac: float, min_count: int) -> torch.Tensor:
    """Indices of the input channels with the largest calibration absmax: the top ``frac``
    (at least ``min_count``), sorted."""
    amax = x.detach().reshape(-1, x.shape[-1]).abs().amax(0)
    k = min(max(int(round(frac * len(amax))), int(min_count)), len(amax))
    return torch.sort(torch.argsort(amax, descending=True, stable=True)[:k]).values


class QuantLinear(nn.Module):
    """A Linear with fixed (dequantised) weights and optional static input quantisation.

    ``act_bits`` None: inputs stay in floating point (weight-only, WxA16). Otherwise inputs are
    fake-quantised per tensor with ``act_scale``, except the channels ``fp_channels``, which
    pass unquantised (outlier-aware activation quantisation)."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor | None,
                 act_bits: int | None = None, act_scale: float = 1.0, fp_channels=None):
        super().__init__()
        self.register_buffer("weight", weight.detach().clone())
        self.register_buffer("bias", None if bias is None else bias.detach().clone())
        self.act_bits, self.act_scale = act_bits, float(act_scale)
        mask = torch.zeros(weight.shape[1], dtype=torch.bool, device=weight.device)
        if fp_channels is not None:
            mask[fp_channels] = True
        self.register_buffer("fp_mask", mask)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.act_bits is not None:
            xq = fake_quant_act(x, self.act_scale, self.act_bits)
            x = torch.where(self.fp_mask, x, xq)
        return nn.functional.linear(x, self.weight, self.bias)
