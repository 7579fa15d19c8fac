"""CodeMamba-lite, its ablations and the CNN baselines (torch).

Every architecture detail is INFERRED from the abstract (no paper text or code exists); the
spec's "Method to implement" is followed line by line. A sequence enters as x (B, T, H, W); every
model returns a dict with the fused logit ``z`` of the last frame and, where it has them, the
stream logits ``z1`` / ``z2``, the observation-noise variances ``v1`` / ``v2`` and the background
estimate ``bg`` (all (B, 1, H, W)). Convolutions run channels-last (about 2x faster on the CPU).
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from icml26.vision.nets import conv_stack, focal_loss, soft_iou_loss

CL = torch.channels_last
DUAL = {"codemamba": ("implicit", "explicit", "bayes"),
        "mean-fusion": ("implicit", "explicit", "mean"),
        "implicit-only": ("implicit", None, "single"),
        "explicit-only": (None, "explicit", "single")}


class SelectiveScan(nn.Module):
    """Minimal S6-like diagonal selective state-space scan over time (INFERRED stand-in for a
    Mamba block, no hardware-aware kernel), per pixel and channel:
        a_t = sigmoid(W_a x_t + b_a),  h_t = a_t h_{t-1} + (1 - a_t) W_b x_t,
        y = W_c h_T + D x_T,           h_0 = 0 (all W 1 x 1 convolutions)."""

    def __init__(self, c: int):
        super().__init__()
        self.ab = nn.Conv2d(c, 2 * c, 1)        # W_a (with b_a) and W_b in one 1 x 1 conv
        self.c = nn.Conv2d(c, c, 1)
        self.D = nn.Parameter(torch.ones(1, c, 1, 1))
        self.ch = c

    def forward(self, xs: torch.Tensor, B: int) -> torch.Tensor:
        """xs: (T*B, c, H, W), time-major. Returns y (B, c, H, W)."""
        # gate and input as the two halves of one 1 x 1 conv; ``split`` rather than two slices:
        # the same numbers forward and backward (its backward concatenates the two gradients),
        # without two zero-filled full-size slice gradients (a fifth of a dual-stream step)
        a, u = self.ab(xs).split(self.ch, 1)
        a = torch.sigmoid(a)
        if self.ab.bias is not None:            # b_a is on the gate only: W_b x_t has no bias
            u = u - self.ab.bias[self.ch:].view(1, -1, 1, 1)
        h = None
        for a_t, u_t in zip(a.split(B), u.split(B), strict=True):
            h = (1 - a_t) * u_t if h is None else a_t * h + (1 - a_t) * u_t
        return self.c(h) + self.D * xs[-B:]


class DualStream(nn.Module):
    """CodeMamba-lite (both streams, Bayesian fusion) and its ablations (one stream removed,
    or mean fusion without variance heads)."""

    def __init__(self, n_frames: int, c: int, implicit=True, explicit=True, fusion="bayes",
                 blur: int = 5):
        super().__init__()
        self.T, self.fusion, self.blur = n_frames, fusion, blur
        self.implicit, self.explicit = implicit, explicit
        out = 1 if fusion == "mean" else 2                 # logit (+ raw log-variance)
        # shared frame encoder E: two 3 x 3 convs, GELU, weights shared over time
        self.encoder = conv_stack(1, c, 2)
        if implicit:
            # background predictor P on concat(F_1..F_(T-1), blur(F_T)) -> B_hat_T
            self.background = conv_stack(n_frames, c, 3, out_channels=1)
            # head H_1 on concat(R, e_T), dilations 1, 2, 1
            self.head1 = conv_stack(1 + c, c, 3, dilations=[1, 2, 1], out_channels=out)
        if explicit:
            self.proj = nn.Conv2d(2 * c, c, 1)             # x_t = proj(concat(e_t, e_t - e_(t-1)))
            self.scan = SelectiveScan(c)
            self.mix = nn.Sequential(nn.Conv2d(c, c, 3, padding=1, groups=c), nn.Conv2d(c, c, 1),
                                     nn.GELU())            # spatial mixing: depthwise 3x3 + 1x1
            self.head2 = nn.Sequential(nn.Conv2d(c, c, 3, padding=1), nn.GELU(),
                                       nn.Conv2d(c, out, 1))

    def forward(self, x: torch.Tensor) -> dict:
        B, T, H, W = x.shape
        last = x[:, -1:]
        out = {}
        if self.explicit:
            frames = x.transpose(0, 1).reshape(T * B, 1, H, W).contiguous(memory_format=CL)
            e = self.encoder(frames)                       # time-major (T*B, c, H, W)
            e_T = e[-B:]
        else:
            e_T = self.encoder(last.contiguous(memory_format=CL))
        if self.implicit:
            blurred = F.avg_pool2d(last, self.blur, 1, self.blur // 2, count_include_pad=False)
            inp = torch.cat([x[:, :-1], blurred], 1).contiguous(memory_format=CL)
            bg = self.background(inp)
            o1 = self.head1(torch.cat([last - bg, e_T], 1))   # residual R = F_T - B_hat_T
            out["bg"] = bg
            out["z1"] = o1[:, :1]
            if o1.shape[1] > 1:
                out["s1"] = o1[:, 1:]
        if self.explicit:
            prev = torch.cat([e[:B], e[:-B]], 0)           # e_0 := e_1 (zero first difference)
            xs = self.proj(torch.cat([e, e - prev], 1))
            o2 = self.head2(self.mix(self.scan(xs, B)))
            out["z2"] = o2[:, :1]
            if o2.shape[1] > 1:
                out["s2"] = o2[:, 1:]
        for k in ("1", "2"):
            if "s" + k in out:
                out["v" + k] = F.softplus(out["s" + k]) + 1e-3
        if self.fusion == "bayes":
            # precision-weighted (inverse-variance) combination of the two streams' logits
            w1, w2 = 1.0 / out["v1"], 1.0 / out["v2"]
            out["z"] = (out["z1"] * w1 + out["z2"] * w2) / (w1 + w2)
        elif self.fusion == "mean":
            out["z"] = 0.5 * (out["z1"] + out["z2"])
        else:
            out["z"] = out["z1"] if self.implicit else out["z2"]
        return out


class FrameCNN(nn.Module):
    """SF-CNN (input F_T only) and MF-CNN (the T frames stacked as channels): four 3 x 3 convs,
    c = 16, dilations 1, 2, 4, 1, a logit map."""

    def __init__(self, in_frames: int, c: int, dilations=(1, 2, 4, 1)):
        super().__init__()
        self.k = in_frames
        self.net = conv_stack(in_frames, c, len(dilations), dilations=list(dilations),
                              out_channels=1)

    def forward(self, x: torch.Tensor) -> dict:
        return {"z": self.net(x[:, -self.k:].contiguous(memory_format=CL))}


def build(method: str, p, gen: torch.Generator) -> nn.Module:
    """The model of a method, initialised from ``gen`` (torch's default bounds U(+-1/sqrt(fan_in))
    for every weight and bias, drawn on the CPU generator, so the same weights on every device)."""
    T = int(p["n_frames"])
    if method == "sf-cnn":
        model = FrameCNN(1, int(p["cnn_channels"]))
    elif method == "mf-cnn":
        model = FrameCNN(T, int(p["cnn_channels"]))
    elif method in DUAL:
        imp, exp_, fusion = DUAL[method]
        model = DualStream(T, int(p["channels"]), implicit=imp is not None,
                           explicit=exp_ is not None, fusion=fusion, blur=int(p["blur"]))
    else:
        raise ValueError(f"unknown method {method!r}")
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, nn.Conv2d):
                fan_in = mod.weight[0].numel()
                bound = 1.0 / math.sqrt(fan_in)
                mod.weight.copy_(torch.empty_like(mod.weight).uniform_(-bound, bound,
                                                                       generator=gen))
                if mod.bias is not None:
                    mod.bias.copy_(torch.empty_like(mod.bias).uniform_(-bound, bound,
                                                                       generator=gen))
    return model.to(memory_format=CL)


def heteroscedastic_bce(z, v, target, eps) -> torch.Tensor:
    """Kendall & Gal (2017) classification loss with learned observation noise:
    -log (1/K) sum_k sigmoid(y' (z + sqrt(v) eps_k)), y' = +-1, averaged over pixels (the log of
    the Monte-Carlo averaged likelihood; eps (K, B, 1, H, W) standard normal). Raising v lowers
    it where z is confidently wrong, which then down-weights that stream in the fusion."""
    sign = 2.0 * target - 1.0
    logits = z.unsqueeze(0) + v.sqrt().unsqueeze(0) * eps
    loglik = -F.softplus(-sign.unsqueeze(0) * logits)              # log sigmoid(y' logit)
    return -(torch.logsumexp(loglik, 0) - math.log(eps.shape[0])).mean()


def mean_bce(z, v, target, eps) -> torch.Tensor:
    """The literal reading 'mean over draws of BCE(z + sqrt(v) eps)': by Jensen's inequality it
    never rewards a larger v (labelled alternative, het_form: mean_bce)."""
    logits = z.unsqueeze(0) + v.sqrt().unsqueeze(0) * eps
    return F.binary_cross_entropy_with_logits(
        logits, target.unsqueeze(0).expand_as(logits), reduction="mean")


def loss(out: dict, target, bgmask, frames_last, p, eps) -> torch.Tensor:
    """L = SoftIoU(sigmoid(z), M) + w_focal Focal(z, M; gamma, alpha)
           + w_het sum_k Het_k + w_bg BackgroundMSE (the terms a model has)."""
    z = out["z"]
    total = soft_iou_loss(torch.sigmoid(z), target) + p["w_focal"] * focal_loss(
        z, target, gamma=p["focal_gamma"], alpha=p["focal_alpha"])
    het = heteroscedastic_bce if p["het_form"] == "log_mean_lik" else mean_bce
    for k, e in zip(("1", "2"), eps, strict=True):
        if "v" + k in out:
            total = total + p["w_het"] * het(out["z" + k], out["v" + k], target, e)
    if "bg" in out:
        # masked MSE between B_hat_T and F_T outside the dilated target mask
        diff = (out["bg"] - frames_last) ** 2 * bgmask
        total = total + p["w_bg"] * diff.sum() / bgmask.sum().clamp_min(1.0)
    return total
