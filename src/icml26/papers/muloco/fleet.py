"""R replicas of one GPT trained side by side in one process (torch; import only in train).

DiLoCo's K workers (and several seeds / methods of one train job) are independent copies of the
same small GPT. Running them one after another pays Python and kernel overhead per replica; here
their parameters are stacked along a leading replica axis and one ``vmap`` of
``functional_call(GPT, ...)`` runs every replica's forward and backward at once. The arithmetic
of each replica is unchanged: replica r only ever sees its own parameters, batch and optimizer
state, so the result equals R separate trainings (tested against the shared ``icml26.lm``
optimizers to float tolerance).

- ``MathCausalAttention``: the shared ``CausalSelfAttention`` (same parameters, same function)
  with the attention written as explicit matmuls, because ``scaled_dot_product_attention`` has
  no vmap batching rule on CPU (torch falls back to a slow per-replica loop).
- ``Fleet``: stacked parameters, batched loss/backward, per-replica gradient clipping, batched
  validation loss.
- ``StackedAdamW`` / ``StackedMuonAdamW``: ``icml26.lm.optim.AdamW`` and ``MuonAdamW`` applied to
  a contiguous slice of replicas, state with the same leading axis. ``gather`` copies the state
  of chosen replicas (the Δ_ref replica starts from worker 1's state).
"""

from __future__ import annotations

import torch
from torch.func import functional_call, vmap

from icml26.lm.model import GPT, GPTConfig, MathCausalAttention
from icml26.lm.optim import (
    NS_COEFFS_PER_STEP,
    adamw_update,
    is_hidden_matrix,
    muon_scale,
    ns_schedule,
)


def make_model(config: GPTConfig, seed: int) -> GPT:
    """The shared GPT (pre-LN, tied embeddings, learned positions, GPT-2 init) from a seed."""
    torch.manual_seed(int(seed) % (2**63))
    return GPT(config, attention=MathCausalAttention)


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy, F.cross_entropy's value written as logsumexp - logit.

    Under vmap, F.cross_entropy runs a decomposition that imports sympy (~1.1 CPU-s per job);
    this form has batching rules for every op."""
    picked = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return (torch.logsumexp(logits, dim=-1) - picked).mean()


def flat_params(params: dict) -> torch.Tensor:
    """All parameters of one model (dict name -> tensor, tied matrices once) as one vector."""
    return torch.cat([p.reshape(-1) for p in params.values()])


class Fleet:
    """R replicas of ``template``; ``params[name]`` has shape (R, *shape)."""

    def __init__(self, template: GPT, replicas: list[dict]):
        self.template = template
        # named_parameters() lists a tied matrix once (head.weight is tok.weight);
        # functional_call keeps the tie, so the head always reads the replica's tok.weight
        self.names = [n for n, _ in template.named_parameters()]
        self.shapes = {n: tuple(p.shape) for n, p in template.named_parameters()}
        self.params = {
            n: torch.stack([r[n].detach() for r in replicas]).clone().requires_grad_(True)
            for n in self.names
        }
        self.R = len(replicas)

        def loss_one(p, x, y):
            return cross_entropy(functional_call(self.template, p, (x,)), y)

        self._loss = vmap(loss_one)

    # --- views ---------------------------------------------------------------------------
    def data(self, name: str) -> torch.Tensor:
        """The stacked parameter without autograd (in-place updates write the replicas)."""
        return self.params[name].detach()

    def replica(self, r: int) -> dict:
        return {n: self.data(n)[r].clone() for n in self.names}

    @torch.no_grad()
    def set_replicas(self, lo: int, hi: int, values: dict) -> None:
        """Replicas lo..hi-1 <- values (one model: broadcast, e.g. DiLoCo's θ_k <- θ)."""
        for n in self.names:
            self.data(n)[lo:hi] = values[n]

    # --- training ------------------------------------------------------------------------
    def backward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """x, y: (R, b, T). Per-replica mean cross-entropy (R,); gradients in .grad.

        The sum over replicas is backpropagated: replica r's parameters only reach loss r, so
        each replica's gradient is that of its own mean loss.
        """
        for p in self.params.values():
            p.grad = None
        losses = self._loss(self.params, x, y)
        losses.sum().backward()
        return losses.detach()

    def grads(self) -> dict:
        return {n: self.params[n].grad.detach() for n in self.names}

    @torch.no_grad()
    def clip_(self, max_norm: float) -> torch.Tensor:
        """``icml26.lm.optim.clip_grad_norm`` per replica: scale replica r's gradient so its
        global L2 norm is at most max_norm. Returns the norms (R,)."""
        g = self.grads()
        sq = sum(t.pow(2).reshape(self.R, -1).sum(dim=1) for t in g.values())
        norm = sq.sqrt()
        coef = (max_norm / (norm + 1e-6)).clamp(max=1.0)
        for t in g.values():
            t.mul_(coef.view(-1, *([1] * (t.ndim - 1))))
        return norm


@torch.no_grad()
def eval_losses(template: GPT, stacked: dict, windows: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy of each of R models (stacked dict) on the same windows
    (n, T+1): the shared ``eval_loss`` batched over models. Returns (R,)."""
    template.eval()

    def one(p):
        return cross_entropy(functional_call(template, p, (windows[:, :-1],)), windows[:, 1:])

    out = vmap(one)(stacked)
    template.train()
    return out


# -------------------------------------------------------------------------------------------
# optimizers on a slice of replicas
# -------------------------------------------------------------------------------------------
def newton_schulz5_batched(g: torch.Tensor, steps: int = 5, eps: float = 1e-7,
                           coeffs=None) -> torch.Tensor:
    """``icml26.lm.optim.newton_schulz5`` on a stack of matrices (..., rows, cols); the same
    iteration (same ``coeffs`` option: None, the fixed triple; else one triple per iteration)
    with its products fused into batched matmul-adds (~1.7x faster on CPU)."""
    schedule = ns_schedule(steps, coeffs)
    x = g / (torch.linalg.matrix_norm(g, keepdim=True) + eps)
    transposed = g.shape[-2] > g.shape[-1]
    if transposed:
        x = x.mT.contiguous()
    x = x.reshape(-1, *x.shape[-2:])
    for a, b, c in schedule:
        s = torch.bmm(x, x.mT)                              # A = X X^T
        poly = torch.baddbmm(s, s, s, beta=b, alpha=c)      # b A + c A^2
        x = torch.baddbmm(x, poly, x, beta=a)               # a X + (b A + c A^2) X
    x = x.reshape(g.shape[:-2] + x.shape[-2:])
    return x.mT if transposed else x


class StackedAdamW:
    """``icml26.lm.optim.AdamW`` on parameters (n, *shape) of n replicas (same formulas).

    ``decay[i]``: weight decay on parameter i (nanoGPT rule: matrices of the single model).
    """

    def __init__(self, lr: float, betas=(0.9, 0.95), eps: float = 1e-8,
                 weight_decay: float = 0.0, decay=None):
        self.lr, self.b1, self.b2, self.eps, self.wd = float(lr), betas[0], betas[1], eps, \
            weight_decay
        self.decay = decay
        self.m: list | None = None
        self.v: list | None = None
        self.t = 0

    @torch.no_grad()
    def step(self, params: list, grads: list, scale: float = 1.0) -> None:
        if self.m is None:
            self.m = [torch.zeros_like(p) for p in params]
            self.v = [torch.zeros_like(p) for p in params]
        self.t += 1
        adamw_update(params, grads, self.m, self.v, self.t, self.lr * scale,
                     (self.b1, self.b2), self.eps, self.wd, self.decay)

    def gather(self, index: list[int]) -> StackedAdamW:
        """A new optimizer whose replica j has the state of replica index[j] (copied)."""
        new = StackedAdamW(self.lr, (self.b1, self.b2), self.eps, self.wd, self.decay)
        if self.m is not None:
            new.m = [t[index].clone() for t in self.m]
            new.v = [t[index].clone() for t in self.v]
        new.t = self.t
        return new


class StackedMuon:
    """``icml26.lm.optim.Muon`` on stacked hidden matrices (n, rows, cols), same options.

    M <- beta M + G;  U = NS5(G + beta M) (nesterov) or NS5(M) (plain);
    W <- W - lr (U s + wd W),  s = sqrt(max(1, rows/cols)) ("max1") or sqrt(rows/cols)
    ("spectral").
    """

    def __init__(self, lr: float, momentum: float = 0.95, weight_decay: float = 0.0,
                 ns_steps: int = 5, nesterov: bool = True, scale: str = "max1", coeffs=None):
        self.lr, self.beta, self.wd, self.ns_steps = float(lr), momentum, weight_decay, ns_steps
        self.nesterov, self.scale, self.coeffs = bool(nesterov), scale, coeffs
        muon_scale((1, 1), scale)  # an unknown scale fails here
        self.m: list | None = None

    @torch.no_grad()
    def step(self, params: list, grads: list, scale: float = 1.0) -> None:
        lr = self.lr * scale
        if self.m is None:
            self.m = [torch.zeros_like(p) for p in params]
        for p, g, m in zip(params, grads, self.m, strict=True):
            m.mul_(self.beta).add_(g)
            u = newton_schulz5_batched(g + self.beta * m if self.nesterov else m,
                                       self.ns_steps, coeffs=self.coeffs)
            u = u * muon_scale(p.shape, self.scale)
            p.add_(u + self.wd * p, alpha=-lr)

    def gather(self, index: list[int]) -> StackedMuon:
        new = StackedMuon(self.lr, self.beta, self.wd, self.ns_steps, self.nesterov, self.scale,
                          self.coeffs)
        if self.m is not None:
            new.m = [t[index].clone() for t in self.m]
        return new


class Inner:
    """The inner optimizer of a slice [lo, hi) of a fleet's replicas.

    kind "adamw": AdamW on every parameter (DiLoCo, DP-AdamW).
    kind "muon": Muon on hidden matrices, AdamW on embeddings (tied head), LayerNorm gains and
    biases -- the authors' routing, ``icml26.lm.optim.MuonAdamW`` (MuLoCo, DP-Muon).

    hp: lr_adamw, lr_muon, betas, eps, wd, muon_momentum, muon_wd, and the Muon options
    muon_nesterov, muon_scale, ns_coeffs ("per_step" | "fixed"), adamw_share ("muon": the AdamW
    share of Muon takes Muon's lr and weight decay, as in the authors' parameter groups;
    "adamw": the AdamW lr and wd), decay_all (AdamW decays every parameter, as torch.optim.AdamW
    and the authors' groups do; False: matrices and embeddings only).
    """

    def __init__(self, kind: str, template: GPT, lo: int, hi: int, hp: dict):
        self.kind, self.lo, self.hi = kind, lo, hi
        named = list(template.named_parameters())
        betas = tuple(hp["betas"])
        if kind == "adamw":
            self.adam_names = [n for n, _ in named]
            self.muon_names = []
            self.muon = None
            lr, wd = hp["lr_adamw"], hp["wd"]
        elif kind == "muon":
            self.muon_names = [n for n, p in named if is_hidden_matrix(n, p)]
            self.adam_names = [n for n, p in named if not is_hidden_matrix(n, p)]
            coeffs = {"per_step": NS_COEFFS_PER_STEP, "fixed": None}[hp["ns_coeffs"]]
            self.muon = StackedMuon(hp["lr_muon"], hp["muon_momentum"], hp["muon_wd"], 5,
                                    hp["muon_nesterov"], hp["muon_scale"], coeffs)
            share = hp["adamw_share"]
            if share == "muon":      # official: scalar/embedding/head groups at Muon's lr, wd
                lr, wd = hp["lr_muon"], hp["muon_wd"]
            elif share == "adamw":   # the spec-era reading (INFERRED): the selected AdamW lr
                lr, wd = hp["lr_adamw"], hp["wd"]
            else:
                raise ValueError(f"unknown adamw_share {share!r}; allowed: muon, adamw")
        else:
            raise ValueError(f"unknown inner optimizer {kind!r}; allowed: adamw, muon")
        shapes = dict(named)
        decay = [bool(hp["decay_all"]) or shapes[n].ndim >= 2 for n in self.adam_names]
        self.adam = StackedAdamW(lr, betas, hp["eps"], wd, decay)

    def step(self, fleet: Fleet, scale: float) -> None:
        grads = fleet.grads()
        sl = slice(self.lo, self.hi)
        if self.muon is not None:
            self.muon.step([fleet.data(n)[sl] for n in self.muon_names],
                           [grads[n][sl] for n in self.muon_names], scale)
        self.adam.step([fleet.data(n)[sl] for n in self.adam_names],
                       [grads[n][sl] for n in self.adam_names], scale)

    def gather(self, index: list[int], lo: int, hi: int) -> Inner:
        """A copy for another slice [lo, hi) whose replica j starts from the state of this
        slice's replica index[j] (relative indices)."""
        new = object.__new__(Inner)
        new.kind, new.lo, new.hi = self.kind, lo, hi
        new.adam_names, new.muon_names = self.adam_names, self.muon_names
        new.adam = self.adam.gather(index)
        new.muon = self.muon.gather(index) if self.muon is not None else None
        return new
