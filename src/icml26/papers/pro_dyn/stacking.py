"""R runs of one architecture trained as one stacked computation (torch; imported only by train).

A stacked model is the model's own class (its forward code unchanged) whose nn.Linear children
hold R members' weights, (R, in, out) and (R, 1, out) as in icml26.stacked, whose LayerNorms hold
(R, 1, d) gains and shifts, and whose other parameters (learned positions) carry a leading R
axis. Every tensor inside it has a member-major leading axis: R * M rows, member r's rows
r*M .. r*M + M - 1. A stacked linear layer maps each member's rows by that member's weights
(one batched matmul), so the shared icml26.timeseries.models.EncoderLayer runs unchanged and
its fused attention sees all members' sequences in one call.

Training (`fit_stacked`) is the shared `fit` for every member at once: member r draws its own
minibatch indices from its own generator, the loss is the sum of the members' own MSEs (so each
gets exactly its own gradient), each member's gradient norm is clipped on its own, the
written-out Adam of icml26.rl.optim is elementwise, and each member keeps the checkpoint of its
own lowest validation MSE. A member's numbers do not depend on which other members share the
stack, up to float rounding (tests/papers/test_pro_dyn.py trains 2 seeds both ways).
"""

from __future__ import annotations

import copy
import math

import torch
from torch import nn
from torch.nn import functional as F

from icml26 import stacked
from icml26.rl.optim import Adam


class StackedLinear(nn.Module):
    """R nn.Linear layers of one shape: weight (R, in, out), bias (R, 1, out)."""

    def __init__(self, layers: list[nn.Linear]):
        super().__init__()
        if any(layer.bias is None for layer in layers):
            raise ValueError("StackedLinear needs linear layers with a bias")
        (w, b), = stacked.from_linears([[layer] for layer in layers],
                                       device=layers[0].weight.device)
        self.weight = nn.Parameter(w.detach())
        self.bias = nn.Parameter(b.detach())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        members = self.weight.shape[0]
        y = stacked.forward([[self.weight, self.bias]], x.reshape(members, -1, x.shape[-1]))
        return y.reshape(*x.shape[:-1], y.shape[-1])


class StackedLayerNorm(nn.Module):
    """R LayerNorms over the last axis: gain and shift (R, 1, d)."""

    def __init__(self, norms: list[nn.LayerNorm]):
        super().__init__()
        if any(not n.elementwise_affine or n.bias is None for n in norms):
            raise ValueError("StackedLayerNorm needs LayerNorms with a gain and a shift")
        self.shape, self.eps = tuple(norms[0].normalized_shape), norms[0].eps
        self.weight = nn.Parameter(torch.stack([n.weight.detach()[None] for n in norms]))
        self.bias = nn.Parameter(torch.stack([n.bias.detach()[None] for n in norms]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        members, d = self.weight.shape[0], x.shape[-1]
        y = F.layer_norm(x, self.shape, eps=self.eps).reshape(members, -1, d)
        return torch.addcmul(self.bias, y, self.weight).reshape(x.shape)


def stack(models: list[nn.Module]) -> nn.Module:
    """One module computing R = len(models) models of the same class and shapes (each built
    under its own seed) on member-major inputs (R * M, ...) -> (R * M, ...)."""
    out = copy.deepcopy(models[0])
    sources = [dict(m.named_modules()) for m in models]
    for path, module in list(out.named_modules()):
        for name, child in list(module.named_children()):
            full = f"{path}.{name}" if path else name
            if isinstance(child, nn.Linear):
                setattr(module, name, StackedLinear([s[full] for s in sources]))
            elif isinstance(child, nn.LayerNorm):
                setattr(module, name, StackedLayerNorm([s[full] for s in sources]))
    for path, module in out.named_modules():
        if isinstance(module, (StackedLinear, StackedLayerNorm)):
            continue
        for name, p in list(module._parameters.items()):
            if p is not None:
                module._parameters[name] = nn.Parameter(
                    torch.stack([s[path]._parameters[name].detach() for s in sources]))
    out.stacked_members = len(models)
    return out


def member_state(model: nn.Module, r: int) -> dict[str, torch.Tensor]:
    """Member r of a stacked model as the state dict of the plain model."""
    state = {}
    for path, module in model.named_modules():
        pre = f"{path}." if path else ""
        if isinstance(module, StackedLinear):
            state[pre + "weight"] = module.weight[r].T
            state[pre + "bias"] = module.bias[r, 0]
        elif isinstance(module, StackedLayerNorm):
            state[pre + "weight"] = module.weight[r, 0]
            state[pre + "bias"] = module.bias[r, 0]
        else:
            for name, p in module._parameters.items():
                if p is not None:
                    state[pre + name] = p[r]
    return {k: v.detach().clone() for k, v in state.items()}


@torch.no_grad()
def predict_stacked(model: nn.Module, X: torch.Tensor, chunk: int = 32) -> torch.Tensor:
    """X (R, N, C, L): member r's own windows -> forecasts (R, N, C, H)."""
    members, n = X.shape[:2]
    outs = []
    for i in range(0, n, chunk):
        xb = X[:, i: i + chunk]
        y = model(xb.reshape(-1, *xb.shape[2:]))
        outs.append(y.reshape(members, xb.shape[1], *y.shape[1:]))
    return torch.cat(outs, dim=1)


def fit_stacked(model: nn.Module, X: torch.Tensor, Y: torch.Tensor, member_data: torch.Tensor,
                generators: list[torch.Generator], *, steps: int, batch: int, lr: float,
                val=None, eval_every: int | None = None, clip: float | None = None) -> list[dict]:
    """The shared `fit` for R stacked members at once.

    X (S, N, C, L), Y (S, N, C, H): the training windows of S data cells of equal shapes;
    member r trains on cell member_data[r] with minibatch indices drawn from generators[r] (on
    the CPU). val = (Xv (S, Nv, C, L), Yv (S, Nv, C, H)). Every `eval_every` steps and at the
    last step each member's validation MSE is measured, and at the end each member is restored
    to its own best checkpoint (ties keep the earliest). Returns per member the shared fit's
    history: {"train_loss", "val_steps", "val_mse", "best_step"}."""
    members = len(generators)
    if getattr(model, "stacked_members", None) != members or len(member_data) != members:
        raise ValueError("one generator and one data cell per stacked member are needed")
    params = [p for p in model.parameters() if p.requires_grad]
    opt = Adam(params, lr=lr)
    dev = X.device
    member_data = member_data.to(dev)
    rows = member_data[:, None]
    n = X.shape[1]
    losses, val_steps, val_mse = [], [], []
    best = torch.full((members,), math.inf, dtype=torch.float64)
    best_step = torch.full((members,), steps, dtype=torch.long)
    improved_ever = torch.zeros(members, dtype=torch.bool)
    best_state = [p.detach().clone() for p in params]
    checking = val is not None and eval_every
    if checking:
        Xv, Yv = val[0][member_data], val[1][member_data]

    def mask(t, sel):
        return sel.to(t.device).view(-1, *[1] * (t.dim() - 1))

    for step in range(1, steps + 1):
        idx = torch.stack([torch.randint(0, n, (batch,), generator=g) for g in generators]).to(dev)
        xb, yb = X[rows, idx], Y[rows, idx]                       # (R, B, C, L), (R, B, C, H)
        pred = model(xb.reshape(-1, *xb.shape[2:])).reshape(yb.shape)
        loss = (pred - yb).square().mean(dim=(1, 2, 3))            # each member's own MSE
        opt.zero_grad()
        loss.sum().backward()
        if clip:
            grads = [p.grad for p in params]
            sq = sum(g.reshape(members, -1).square().sum(1) for g in grads)
            coef = (clip / (sq.sqrt() + 1e-6)).clamp(max=1.0)    # torch's clip_grad_norm_
            for g in grads:
                g.mul_(mask(g, coef))
        opt.step()
        losses.append(loss.detach())
        if checking and (step % eval_every == 0 or step == steps):
            mse = (predict_stacked(model, Xv) - Yv).square().mean(dim=(1, 2, 3)).double().cpu()
            val_steps.append(step)
            val_mse.append(mse)
            better = mse < best
            best = torch.where(better, mse, best)
            best_step[better] = step
            improved_ever |= better
            if better.any():
                with torch.no_grad():
                    for saved, p in zip(best_state, params, strict=True):
                        saved.copy_(torch.where(mask(p, better), p, saved))
    with torch.no_grad():
        for saved, p in zip(best_state, params, strict=True):
            p.copy_(torch.where(mask(p, improved_ever), saved, p))
    train = torch.stack(losses).double().cpu() if losses else torch.zeros(0, members)
    vals = torch.stack(val_mse) if val_mse else torch.zeros(0, members)
    return [{"train_loss": train[:, r].tolist(), "val_steps": list(val_steps),
             "val_mse": vals[:, r].tolist(), "best_step": int(best_step[r])}
            for r in range(members)]
