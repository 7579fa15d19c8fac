"""AdamW and Muon written out, a warm-up + cosine schedule, gradient clipping (torch).

``torch.optim`` imports ``torch._dynamo`` (~2.5 CPU-s per job); these few lines do the same
updates. Every optimizer has a base learning rate and ``step(scale)`` multiplies it by the
schedule's factor for that step. Optimizer state is plain tensors, so ``copy.deepcopy`` gives an
independent copy (DiLoCo keeps one per simulated worker).
"""

from __future__ import annotations

import math

import torch


def warmup_cosine(step: int, total: int, warmup: int, final_frac: float) -> float:
    """LR factor at 0-based ``step``: linear warm-up to 1 over ``warmup`` steps, then cosine
    decay to ``final_frac`` at step ``total - 1``."""
    if step < warmup:
        return (step + 1) / warmup
    span = max(total - 1 - warmup, 1)
    progress = min((step - warmup) / span, 1.0)
    return final_frac + (1.0 - final_frac) * 0.5 * (1.0 + math.cos(math.pi * progress))


@torch.no_grad()
def clip_grad_norm(params, max_norm: float) -> float:
    """Scale gradients so their global L2 norm is at most ``max_norm``; returns the norm."""
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return 0.0
    norm = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads)))
    coef = max_norm / (float(norm) + 1e-6)
    if coef < 1.0:
        torch._foreach_mul_(grads, coef)
    return float(norm)


def decay_mask(params) -> list[bool]:
    """Weight decay on matrices only (biases, LayerNorm gains: no decay), nanoGPT's rule."""
    return [p.ndim >= 2 for p in params]


@torch.no_grad()
def adamw_update(params, grads, m, v, t: int, lr: float, betas, eps: float, wd: float,
                 decay) -> None:
    """One AdamW step in place on lists of tensors (``t`` counts steps from 1); elementwise,
    so parameters stacked along a leading replica axis stay independent."""
    b1, b2 = betas
    if wd:
        decayed = [p for p, d in zip(params, decay, strict=True) if d]
        if decayed:
            torch._foreach_mul_(decayed, 1.0 - lr * wd)
    torch._foreach_lerp_(m, grads, 1 - b1)
    torch._foreach_mul_(v, b2)
    torch._foreach_addcmul_(v, grads, grads, 1 - b2)
    c1, c2 = 1 - b1 ** t, 1 - b2 ** t
    denom = torch._foreach_sqrt(v)
    torch._foreach_div_(denom, math.sqrt(c2))
    torch._foreach_add_(denom, eps)
    torch._foreach_addcdiv_(params, m, denom, -lr / c1)


class AdamW:
    """torch.optim.AdamW's update (decoupled weight decay, bias correction), tested against it.

    p <- p (1 - lr wd);  m <- b1 m + (1-b1) g;  v <- b2 v + (1-b2) g²;
    p <- p - lr m / (1-b1^t) / (sqrt(v / (1-b2^t)) + eps)
    """

    def __init__(self, params, lr: float, betas=(0.9, 0.95), eps: float = 1e-8,
                 weight_decay: float = 0.0, decay=None):
        self.params = [p for p in params if p.requires_grad]
        self.lr, self.b1, self.b2 = float(lr), betas[0], betas[1]
        self.eps, self.wd = eps, weight_decay
        self.decay = list(decay) if decay is not None else decay_mask(self.params)
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.t = 0

    @torch.no_grad()
    def step(self, scale: float = 1.0) -> None:
        grads = [torch.zeros_like(p) if p.grad is None else p.grad for p in self.params]
        self.t += 1
        adamw_update(self.params, grads, self.m, self.v, self.t, self.lr * scale,
                     (self.b1, self.b2), self.eps, self.wd, self.decay)

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None


NS_COEFFS = (3.4445, -4.7750, 2.0315)
# One (a, b, c) per iteration, 5 iterations: the schedule of Dion's Muon used by the MuLoCo
# authors (facebookresearch/MuLoCo torchtitan/experiments/dion_optimizer/muon.py,
# ``zeropower_via_newtonschulz5``; the same numbers in Dion's Triton kernel). It ends with
# singular values close to 1 (about [0.98, 1.15]) instead of the fixed triple's ~[0.7, 1.2].
NS_COEFFS_PER_STEP = (
    (4.0848, -6.8946, 2.9270),
    (3.9505, -6.3029, 2.6377),
    (3.7418, -5.5913, 2.3037),
    (2.8769, -3.1427, 1.2046),
    (2.8366, -3.0525, 1.2012),
)
MUON_SCALES = ("max1", "spectral")


def ns_schedule(steps: int, coeffs=None) -> list[tuple[float, float, float]]:
    """The (a, b, c) of each of ``steps`` Newton-Schulz iterations: ``coeffs`` None repeats
    the fixed ``NS_COEFFS``; otherwise one triple per iteration (exactly ``steps`` of them)."""
    if coeffs is None:
        return [NS_COEFFS] * steps
    coeffs = [tuple(float(x) for x in abc) for abc in coeffs]
    if len(coeffs) != steps or any(len(abc) != 3 for abc in coeffs):
        raise ValueError(f"Newton-Schulz needs {steps} (a, b, c) triples, got {len(coeffs)}")
    return coeffs


def muon_scale(shape, scale: str = "max1") -> float:
    """Muon's per-matrix step factor for a (rows, cols) = (fan_out, fan_in) weight.

    "max1": sqrt(max(1, rows/cols)) (Jordan et al. 2024); "spectral": sqrt(rows/cols), Dion's
    ``adjust_lr_spectral_norm`` (used by the MuLoCo authors), which also shrinks wide matrices.
    """
    rows, cols = shape[-2], shape[-1]
    if scale == "max1":
        return math.sqrt(max(1.0, rows / cols))
    if scale == "spectral":
        return math.sqrt(rows / cols)
    raise ValueError(f"unknown Muon scale {scale!r}; allowed: {', '.join(MUON_SCALES)}")


def newton_schulz5(g: torch.Tensor, steps: int = 5, eps: float = 1e-7,
                   coeffs=None) -> torch.Tensor:
    """Approximate orthogonalisation U V^T of the matrix g = U S V^T (Jordan et al. 2024).

    X = g / ||g||_F (transposed so that rows <= cols); ``steps`` times:
    A = X X^T; X <- a X + (b A + c A²) X. Default: (a, b, c) = NS_COEFFS every iteration, a
    quintic tuned to push all singular values into roughly [0.7, 1.2] quickly, not to converge
    to exactly 1. ``coeffs``: one triple per iteration (e.g. ``NS_COEFFS_PER_STEP``).
    """
    schedule = ns_schedule(steps, coeffs)
    x = g / (torch.linalg.matrix_norm(g) + eps)
    transposed = x.shape[0] > x.shape[1]
    if transposed:
        x = x.T
    for a, b, c in schedule:
        s = x @ x.T
        x = a * x + (b * s + c * (s @ s)) @ x
    return x.T if transposed else x


class Muon:
    """Muon for 2-D hidden weight matrices (momentum, Newton–Schulz).

    Default (Jordan et al. 2024): M <- beta M + G;  U = NS5(G + beta M) (Nesterov form);
    W <- W - lr (U sqrt(max(1, rows/cols)) + wd W).
    Opt-in, the Dion Muon of the MuLoCo authors (``muon.py``: ``muon_update_pre_orthogonalize``,
    ``adjust_lr_spectral_norm``): ``nesterov=False`` orthogonalises M itself;
    ``scale="spectral"`` uses sqrt(rows/cols); ``coeffs=NS_COEFFS_PER_STEP`` their NS schedule.
    Pair it with AdamW for embeddings, the output head and vectors (``MuonAdamW``).
    """

    def __init__(self, params, lr: float, momentum: float = 0.95, weight_decay: float = 0.0,
                 ns_steps: int = 5, nesterov: bool = True, scale: str = "max1", coeffs=None):
        self.params = [p for p in params if p.requires_grad]
        for p in self.params:
            if p.ndim != 2:
                raise ValueError(f"Muon takes 2-D matrices, got shape {tuple(p.shape)}")
        self.lr, self.beta, self.wd, self.ns_steps = float(lr), momentum, weight_decay, ns_steps
        self.nesterov, self.scale = bool(nesterov), scale
        self.coeffs = None if coeffs is None else ns_schedule(ns_steps, coeffs)
        muon_scale((1, 1), scale)  # an unknown scale fails here, not at the first step
        self.m = [torch.zeros_like(p) for p in self.params]

    @torch.no_grad()
    def step(self, scale: float = 1.0) -> None:
        lr = self.lr * scale
        for p, m in zip(self.params, self.m, strict=True):
            if p.grad is None:
                continue
            g = p.grad
            m.mul_(self.beta).add_(g)
            u = newton_schulz5(g + self.beta * m if self.nesterov else m, self.ns_steps,
                               coeffs=self.coeffs)
            u = u * muon_scale(p.shape, self.scale)
            p.add_(u + self.wd * p, alpha=-lr)

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None


def is_hidden_matrix(name: str, p: torch.Tensor) -> bool:
    """Muon's share of a GPT: 2-D weights except token/position embeddings and the head."""
    top = name.split(".")[0]
    return p.ndim == 2 and top not in ("tok", "pos", "head")


class MuonAdamW:
    """Muon on hidden matrices, AdamW on everything else (the authors' routing).

    ``nesterov``, ``scale``, ``coeffs``: passed to ``Muon``. ``adamw_decay_all``: the AdamW share
    decays every parameter (the MuLoCo authors' scalar/embedding/head groups all take Muon's
    weight decay); default False, matrices only (``decay_mask``).
    """

    def __init__(self, model: torch.nn.Module, lr: float, adamw_lr: float,
                 momentum: float = 0.95, weight_decay: float = 0.0, betas=(0.9, 0.95),
                 eps: float = 1e-8, adamw_weight_decay: float = 0.0, nesterov: bool = True,
                 scale: str = "max1", coeffs=None, adamw_decay_all: bool = False):
        seen, hidden, rest = set(), [], []
        for name, p in model.named_parameters():
            if id(p) in seen or not p.requires_grad:
                continue
            seen.add(id(p))
            (hidden if is_hidden_matrix(name, p) else rest).append(p)
        self.muon = Muon(hidden, lr, momentum, weight_decay, nesterov=nesterov, scale=scale,
                         coeffs=coeffs)
        decay = [True] * len(rest) if adamw_decay_all else None
        self.adamw = AdamW(rest, adamw_lr, betas, eps, adamw_weight_decay, decay)
        self.params = hidden + rest

    def step(self, scale: float = 1.0) -> None:
        self.muon.step(scale)
        self.adamw.step(scale)

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None


def adamw_for(model: torch.nn.Module, lr: float, betas=(0.9, 0.95), eps: float = 1e-8,
              weight_decay: float = 0.0) -> AdamW:
    """AdamW over a model's unique parameters, decay on matrices only."""
    return AdamW(list(model.parameters()), lr, betas, eps, weight_decay)
