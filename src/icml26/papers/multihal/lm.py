"""The tiny language models: all seeds of one model size trained side by side (torch).

Each seed has its own benchmark (graph, languages, corpus), its own initialisation and batch
stream. Their parameters are stacked along a leading seed axis; gradients are clipped per seed
and AdamW (``icml26.lm.optim.adamw_update``) is elementwise, so each seed trains as if alone
(tested to float tolerance against separate trainings of the shared ``GPT``).

Training forward (``stacked_forward``): the shared GPT's function (pre-LN blocks,
``MathCausalAttention``, GELU MLP, tied head) written out with batched matmuls over the seed
axis, and evaluated only where the loss needs it: every layer below the last runs on every
position (its keys and values feed the loss positions), the last layer's queries, attention
output and MLP, the final LayerNorm and the vocabulary head run only at the loss positions
(at most 3 per sequence: a fact's 3 targets, a QA's answer and <eos>). The loss, and so every
gradient, is the same as computing all positions and masking (tested); it costs a fraction
of the full forward (second round, CPU). Evaluation reads the shared ``GPT`` module itself
(``functional_call`` per replica), an independent implementation of the same function.

Loss: masked next-token cross-entropy, mean over the loss positions of the batch (facts: every
token; QA: the answer and <eos>).
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import functional_call

from icml26.lm.model import GPT, GPTConfig, MathCausalAttention
from icml26.lm.optim import adamw_update, decay_mask, warmup_cosine


def gpt_config(vocab: int, lm: dict, setting: dict) -> GPTConfig:
    d = int(setting["d_model"])
    return GPTConfig(vocab_size=vocab, context=int(lm["context"]), d_model=d,
                     n_heads=int(lm["n_heads"]), n_layers=int(setting["n_layers"]),
                     mlp_hidden=int(lm["mlp_ratio"]) * d, dropout=0.0)


def masked_nll(logits: torch.Tensor, y: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(R, b, T, V), (R, b, T), (R, b, T) -> per-replica mean NLL over the masked positions
    (written as logsumexp - logit)."""
    picked = logits.gather(-1, y.unsqueeze(-1)).squeeze(-1)
    nll = torch.logsumexp(logits, dim=-1) - picked
    return (nll * mask).sum(dim=(1, 2)) / mask.sum(dim=(1, 2)).clamp(min=1.0)


def loss_positions(seq: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, ...]:
    """From right-padded tokens (N, T + 1) and the loss mask (N, T): per sequence the input
    positions whose next token carries loss, padded to J = the most any sequence has
    (position 0, mask 0), their targets and mask, each (N, J)."""
    counts = mask.sum(axis=1).astype(int)
    J = max(1, int(counts.max()) if len(counts) else 1)
    at = np.zeros((len(seq), J), dtype=np.int64)
    m = np.zeros((len(seq), J), dtype=np.float32)
    for i in range(len(seq)):
        pos = np.flatnonzero(mask[i])
        at[i, : len(pos)] = pos
        m[i, : len(pos)] = 1.0
    tgt = np.take_along_axis(seq[:, 1:], at, axis=1)
    return at, tgt, m


def _linear(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Per-replica nn.Linear: x (R, ..., in), w (R, out, in), b (R, out)."""
    R, shape = x.shape[0], x.shape[1:-1]
    y = torch.baddbmm(b.unsqueeze(1), x.reshape(R, -1, x.shape[-1]), w.transpose(1, 2))
    return y.reshape(R, *shape, w.shape[1])


def _ln(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Per-replica nn.LayerNorm (eps 1e-5): w, b (R, d)."""
    view = (x.shape[0],) + (1,) * (x.ndim - 2) + (x.shape[-1],)
    return F.layer_norm(x, x.shape[-1:]) * w.view(view) + b.view(view)


def stacked_forward(params: dict, config: GPTConfig, x: torch.Tensor,
                    at: torch.Tensor) -> torch.Tensor:
    """Next-token logits of every replica at chosen positions: x (R, n, T) tokens, at (R, K)
    flat indices into the n * T positions of a replica -> (R, K, V), equal to
    ``GPT(x_r)[i, t]`` with replica r's parameters (pre-LN blocks, MathCausalAttention, GELU
    MLP, tied head; tested). Layers below the last run on every position; the last one only
    at the queried positions."""
    R, n, T = x.shape
    K, d, H = at.shape[1], config.d_model, config.n_heads
    dh = d // H
    rep = torch.arange(R, device=x.device).view(R, 1, 1)
    h = params["tok.weight"][rep, x] + params["pos.weight"][:, :T].unsqueeze(1)  # (R,n,T,d)
    allowed = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()     # (T,T)
    n_layers = config.n_layers
    if n_layers == 0:
        h = h.reshape(R, n * T, d).gather(1, at.unsqueeze(-1).expand(R, K, d))
    for li in range(n_layers):
        pre = f"blocks.{li}."
        a = _ln(h, params[pre + "ln1.weight"], params[pre + "ln1.bias"])
        qkv = _linear(a, params[pre + "attn.qkv.weight"], params[pre + "attn.qkv.bias"])
        q, k, v = qkv.split(d, dim=-1)
        k = k.reshape(R, n, T, H, dh).transpose(2, 3)                     # (R,n,H,T,dh)
        v = v.reshape(R, n, T, H, dh).transpose(2, 3)
        if li == n_layers - 1:  # only the queried positions from here on
            idx = at.unsqueeze(-1).expand(R, K, d)
            h = h.reshape(R, n * T, d).gather(1, idx)                         # (R,K,d)
            q = q.reshape(R, n * T, d).gather(1, idx).reshape(R, K, H, 1, dh)
            row = torch.div(at, T, rounding_mode="floor")                     # (R,K)
            k, v = k[rep[:, :, 0], row], v[rep[:, :, 0], row]                 # (R,K,H,T,dh)
            mask = allowed[at % T].view(R, K, 1, 1, T)                        # causal
            out_shape = (R, K, d)
        else:
            q = q.reshape(R, n, T, H, dh).transpose(2, 3)                     # (R,n,H,T,dh)
            mask = allowed
            out_shape = None
        att = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(dh))
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = att @ v
        y = y.reshape(out_shape) if out_shape else y.transpose(2, 3).reshape(R, n, T, d)
        h = h + _linear(y, params[pre + "attn.proj.weight"], params[pre + "attn.proj.bias"])
        a = _ln(h, params[pre + "ln2.weight"], params[pre + "ln2.bias"])
        a = F.gelu(_linear(a, params[pre + "ffn.fc.weight"], params[pre + "ffn.fc.bias"]))
        h = h + _linear(a, params[pre + "ffn.proj.weight"], params[pre + "ffn.proj.bias"])
    h = _ln(h, params["ln_f.weight"], params["ln_f.bias"])
    head = params["tok.weight"] if config.tied else params["head.weight"]
    return h @ head.transpose(1, 2)


class StackedGPT:
    """R GPTs of one architecture. The parameters live in two flat leaves (R, n): the weight
    matrices (decayed) and the vectors (biases, LayerNorm gains: not decayed), so gradient
    clipping and AdamW are a handful of tensor operations per step; ``params`` gives each
    parameter as a (R, *shape) view of them."""

    def __init__(self, config: GPTConfig, init_seeds: list[int], device):
        self.template = GPT(config, attention=MathCausalAttention).to(device)
        named = list(self.template.named_parameters())
        self.names = [n for n, _ in named]
        self.shapes = {n: tuple(p.shape) for n, p in named}
        replicas = []
        for s in init_seeds:
            torch.manual_seed(int(s) % 2**63)  # GPT's init draws on the global CPU generator
            replicas.append(dict(GPT(config, attention=MathCausalAttention).named_parameters()))
        self.R = len(init_seeds)
        decay = decay_mask([p for _, p in named])
        self.groups = [[n for n, d in zip(self.names, decay, strict=True) if d],
                       [n for n, d in zip(self.names, decay, strict=True) if not d]]
        self.flat = [torch.cat([torch.stack([r[n].detach().reshape(-1) for r in replicas])
                                for n in group], dim=1).to(device).requires_grad_(True)
                     for group in self.groups]
        self.decay = [True, False]
        self.m = [torch.zeros_like(f) for f in self.flat]
        self.v = [torch.zeros_like(f) for f in self.flat]
        self.t = 0
        self.config = config

    @property
    def params(self) -> dict[str, torch.Tensor]:
        out = {}
        for flat, group in zip(self.flat, self.groups, strict=True):
            # one split (its backward is one concatenation, not a zero-filled copy per slice)
            parts = flat.split([math.prod(self.shapes[n]) for n in group], dim=1)
            for n, part in zip(group, parts, strict=True):
                out[n] = part.view(self.R, *self.shapes[n])
        return out

    def logits(self, x: torch.Tensor, at: torch.Tensor) -> torch.Tensor:
        """See ``stacked_forward``: (R, b, T) tokens, (R, K) flat positions -> (R, K, V)."""
        return stacked_forward(self.params, self.config, x, at)

    def step(self, x, at, y, mask, lr: float, betas, wd: float, clip: float) -> torch.Tensor:
        """One AdamW step on the loss at the flat positions ``at`` of x (targets y and mask,
        (R, K))."""
        for f in self.flat:
            f.grad = None
        logits = self.logits(x, at)
        losses = masked_nll(logits.unsqueeze(1), y.unsqueeze(1), mask.unsqueeze(1))
        losses.sum().backward()  # replica r's parameters reach only loss r
        with torch.no_grad():
            grads = [f.grad for f in self.flat]
            norm = torch.linalg.vector_norm(torch.cat(grads, dim=1), dim=1)
            coef = (clip / (norm + 1e-6)).clamp(max=1.0)  # per-replica global-norm clip
            for g in grads:
                g.mul_(coef.view(-1, 1))
            self.t += 1
            adamw_update([f.detach() for f in self.flat], grads, self.m, self.v, self.t, lr,
                         tuple(betas), 1e-8, wd, self.decay)
        return losses.detach()

    @torch.no_grad()
    def replica_logits(self, r: int, x: torch.Tensor) -> torch.Tensor:
        """The shared GPT module itself with replica r's parameters (evaluation)."""
        params = {n: p.detach()[r] for n, p in self.params.items()}
        return functional_call(self.template, params, (x,))


def train(stack: StackedGPT, seqs: list[np.ndarray], masks: list[np.ndarray],
          batch_seeds: list[int], lm: dict, device) -> list[list[tuple[int, float]]]:
    """``lm["steps"]`` AdamW steps; replica r samples ``batch`` sequences uniformly (with
    replacement) from its own corpus with its own generator. Returns per replica the training
    loss averaged over each block of ``loss_every`` steps."""
    steps, batch, every = int(lm["steps"]), int(lm["batch"]), int(lm["loss_every"])
    if len({s.shape[1] for s in seqs}) != 1:  # pad every replica's corpus to one length
        width = max(s.shape[1] for s in seqs)
        seqs = [np.pad(s, ((0, 0), (0, width - s.shape[1]))) for s in seqs]
        masks = [np.pad(m, ((0, 0), (0, width - 1 - m.shape[1]))) for m in masks]
    width = seqs[0].shape[1] - 1
    pos = [loss_positions(s, m) for s, m in zip(seqs, masks, strict=True)]
    J = max(p[0].shape[1] for p in pos)
    tok = [torch.as_tensor(s) for s in seqs]
    # loss positions as flat indices into a batch's (batch * width) positions
    at, tgt, msk = ([torch.as_tensor(np.pad(p[k], ((0, 0), (0, J - p[k].shape[1]))))
                     for p in pos] for k in range(3))
    offset = (torch.arange(batch) * width).view(batch, 1)
    gens = [torch.Generator().manual_seed(int(s) % 2**63) for s in batch_seeds]
    curves, block = [[] for _ in range(stack.R)], []
    for step in range(steps):
        idx = [torch.randint(0, len(t), (batch,), generator=g) for t, g in zip(tok, gens,
                                                                                 strict=True)]
        x = torch.stack([t[i, :-1] for t, i in zip(tok, idx, strict=True)]).to(device)
        a = torch.stack([(a[i] + offset).reshape(-1) for a, i in zip(at, idx, strict=True)])
        y, m = (torch.stack([v[i].reshape(-1) for v, i in zip(vs, idx, strict=True)])
                for vs in (tgt, msk))
        scale = warmup_cosine(step, steps, int(lm["warmup"]), float(lm["final_frac"]))
        losses = stack.step(x, a.to(device), y.to(device), m.to(device),
                            float(lm["lr"]) * scale, lm["betas"], float(lm["weight_decay"]),
                            float(lm["clip"]))
        block.append(losses.cpu().numpy())
        if len(block) == every or step == steps - 1:
            mean = np.mean(block, axis=0)
            for r in range(stack.R):
                curves[r].append((step + 1, float(mean[r])))
            block = []
    return curves


@torch.no_grad()
def next_token_probs(stack: StackedGPT, r: int, prompts: list[list[int]], device,
                     chunk: int = 2048) -> np.ndarray:
    """p(next token | prompt) of replica r for every prompt (right-padded, causal: padding
    after the prompt does not change it), (n, V) float64."""
    if not prompts:
        return np.zeros((0, stack.template.config.vocab_size))
    length = max(len(p) for p in prompts)
    ids = np.zeros((len(prompts), length), dtype=np.int64)
    last = np.array([len(p) - 1 for p in prompts])
    for i, p in enumerate(prompts):
        ids[i, : len(p)] = p
    out = []
    for s in range(0, len(prompts), chunk):
        x = torch.as_tensor(ids[s: s + chunk]).to(device)
        lg = stack.replica_logits(r, x)
        pick = lg[torch.arange(len(x)), torch.as_tensor(last[s: s + chunk]).to(device)]
        out.append(torch.softmax(pick.double(), dim=-1).cpu().numpy())
    return np.concatenate(out)
