"""A small decoder-only transformer with pluggable attention and feed-forward blocks (torch).

``GPT(config, attention=..., ffn=...)`` builds pre-LayerNorm blocks
``x + attn(ln1(x))`` then ``x + ffn(ln2(x))``. ``attention`` and ``ffn`` are factories
``factory(config, layer_index) -> nn.Module`` mapping (batch, time, d_model) to the same shape;
the defaults are causal multi-head self-attention and a GELU MLP. A paper that replaces a block
(cofrgenets the feed-forward network, castle the attention) passes its own factory and keeps
the rest.

Initialisation (GPT-2 / nanoGPT convention): every Linear and Embedding weight ~ N(0, 0.02²),
biases 0, and the output projections of residual branches (modules whose ``residual_proj``
attribute is True) ~ N(0, (0.02 / sqrt(2 · layers))²).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class GPTConfig:
    vocab_size: int
    context: int = 64
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    mlp_hidden: int | None = None  # None: 4 * d_model
    dropout: float = 0.0
    tied: bool = True              # output head shares the token embedding matrix

    @property
    def hidden(self) -> int:
        return self.mlp_hidden if self.mlp_hidden is not None else 4 * self.d_model


class CausalSelfAttention(nn.Module):
    """Standard multi-head causal self-attention (Q, K, V, O projections)."""

    def __init__(self, config: GPTConfig, layer: int = 0):
        super().__init__()
        if config.d_model % config.n_heads:
            raise ValueError(
                f"d_model {config.d_model} is not divisible by n_heads {config.n_heads}"
            )
        self.n_heads = config.n_heads
        self.qkv = nn.Linear(config.d_model, 3 * config.d_model)
        self.proj = nn.Linear(config.d_model, config.d_model)
        self.proj.residual_proj = True
        self.dropout = config.dropout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.n_heads, d // self.n_heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(
            q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0
        )
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


class MathCausalAttention(CausalSelfAttention):
    """The same attention (same parameters, same function, no dropout) written as explicit
    matmuls, softmax(Q K^T / sqrt(d_h) + causal mask) V: ``scaled_dot_product_attention`` has
    no vmap batching rule on CPU, so papers that train seeds stacked under ``vmap`` (castle,
    muloco) use this one."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        h = self.n_heads
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (z.reshape(b, t, h, d // h).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(d // h))
        causal = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        att = att.masked_fill(~causal, float("-inf")).softmax(dim=-1)
        return self.proj((att @ v).transpose(1, 2).reshape(b, t, d))


class MLP(nn.Module):
    """Feed-forward block: Linear(d, hidden) -> GELU -> Linear(hidden, d)."""

    def __init__(self, config: GPTConfig, layer: int = 0):
        super().__init__()
        self.fc = nn.Linear(config.d_model, config.hidden)
        self.proj = nn.Linear(config.hidden, config.d_model)
        self.proj.residual_proj = True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(F.gelu(self.fc(x)))


class Block(nn.Module):
    def __init__(self, config: GPTConfig, layer: int, attention, ffn):
        super().__init__()
        self.ln1 = nn.LayerNorm(config.d_model)
        self.attn = attention(config, layer)
        self.ln2 = nn.LayerNorm(config.d_model)
        self.ffn = ffn(config, layer)
        self.drop = nn.Dropout(config.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.drop(self.attn(self.ln1(x)))
        return x + self.drop(self.ffn(self.ln2(x)))


class GPT(nn.Module):
    def __init__(self, config: GPTConfig, attention=CausalSelfAttention, ffn=MLP):
        super().__init__()
        self.config = config
        self.tok = nn.Embedding(config.vocab_size, config.d_model)
        self.pos = nn.Embedding(config.context, config.d_model)
        self.drop = nn.Dropout(config.dropout)
        self.blocks = nn.ModuleList(
            Block(config, i, attention, ffn) for i in range(config.n_layers)
        )
        self.ln_f = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        if config.tied:
            self.head.weight = self.tok.weight
        self.reset_parameters()

    @torch.no_grad()
    def reset_parameters(self) -> None:
        resid_std = 0.02 / math.sqrt(2 * self.config.n_layers)
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                std = resid_std if getattr(module, "residual_proj", False) else 0.02
                nn.init.normal_(module.weight, 0.0, std)
                if getattr(module, "bias", None) is not None:
                    nn.init.zeros_(module.bias)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        """Token ids (batch, time <= context) -> next-token logits (batch, time, vocab)."""
        t = idx.shape[1]
        if t > self.config.context:
            raise ValueError(f"sequence length {t} exceeds the context {self.config.context}")
        pos = torch.arange(t, device=idx.device)
        x = self.drop(self.tok(idx) + self.pos(pos))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


class KVCachedGPT(nn.Module):
    """A key/value-cached view of a ``GPT`` for incremental decoding (eval mode, no grad).

    ``GPT.forward`` recomputes every prefix position and projects all of them onto the
    vocabulary; called on a sequence that grew since the last call, this view runs only the new
    positions (the keys and values of earlier ones are cached per layer) and returns the logits
    of the last position, (batch, 1, vocab): the same numbers as ``gpt(seq)[:, -1:]`` up to
    float rounding (tested). Sequences must grow within the context; one view per generation.
    Attention blocks must be ``CausalSelfAttention`` (or a subclass computing the same
    function): the view reads their ``qkv`` and ``proj`` and applies causal attention itself.
    """

    def __init__(self, gpt: GPT):
        super().__init__()
        for block in gpt.blocks:
            if not isinstance(block.attn, CausalSelfAttention):
                raise TypeError(f"KVCachedGPT needs CausalSelfAttention blocks, got "
                                f"{type(block.attn).__name__}")
        self.gpt = gpt
        self.config = gpt.config
        self.cache: list[tuple[torch.Tensor, torch.Tensor]] = []
        self.seen = 0

    @torch.no_grad()
    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        g, t0, t = self.gpt, self.seen, idx.shape[1]
        if t > self.config.context or t0 >= t:
            raise ValueError("KVCachedGPT: sequences must grow within the context")
        x = g.tok(idx[:, t0:]) + g.pos(torch.arange(t0, t, device=idx.device))
        # new position i (absolute t0 + i) may attend to every absolute position j <= t0 + i
        mask = (torch.arange(t, device=idx.device)[None, :]
                <= torch.arange(t0, t, device=idx.device)[:, None])
        for li, block in enumerate(g.blocks):
            attn = block.attn
            b, n, d = x.shape
            q, k, v = attn.qkv(block.ln1(x)).split(d, dim=2)
            q, k, v = (z.view(b, n, attn.n_heads, d // attn.n_heads).transpose(1, 2)
                       for z in (q, k, v))
            if li < len(self.cache):
                k = torch.cat([self.cache[li][0], k], dim=2)
                v = torch.cat([self.cache[li][1], v], dim=2)
                self.cache[li] = (k, v)
            else:
                self.cache.append((k, v))
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
            x = x + attn.proj(y.transpose(1, 2).reshape(b, n, d))
            x = x + block.ffn(block.ln2(x))
        self.seen = t
        return g.head(g.ln_f(x[:, -1:]))


def n_params(model: nn.Module, exclude_embeddings: bool = False) -> int:
    """Trainable parameters, tied matrices counted once (optionally without embeddings)."""
    seen, total = set(), 0
    for name, p in model.named_parameters():
        if not p.requires_grad or id(p) in seen:
            continue
        seen.add(id(p))
        if exclude_embeddings and (name.startswith("tok.") or name.startswith("pos.")):
            continue
        total += p.numel()
    return total
