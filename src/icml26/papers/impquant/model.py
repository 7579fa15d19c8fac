"""The tiny vision-language model (torch): a vision tower, a connector and a 2-block LM.

Built from the shared pre-LN transformer pieces of ``icml26.lm.model`` (``GPTConfig``,
``Block``, ``MLP``) with a bidirectional attention whose q, k, v and o are separate Linear
layers, so that every projection of the LM is a quantizable Linear (12 in 2 blocks).

- vision: Linear(48 -> d) patch embedding + learned positions, 1 pre-LN block; connector
  Linear(d -> d).
- text: token embedding (20 words) + learned positions over [6 question tokens | ANS].
- LM: ``n_lm`` pre-LN blocks over [64 visual | 7 text] tokens, bidirectional; final LN and a
  Linear head on the ANS token (14 answers).
- Outlier channels: in every LM block both LayerNorm gains of the channels ``outliers`` start
  at ``outlier_gain`` (8.0; the others 1.0) and stay trainable, mimicking the massive
  activation channels of LLMs.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from icml26.lm.model import MLP, Block, GPTConfig


class BiAttention(nn.Module):
    """Bidirectional multi-head attention with separate q, k, v, o Linear layers.

    ``keep_probs``: store the softmax probabilities (batch, heads, queries, keys) of the last
    call in ``probs`` (used for the attention-based token importance)."""

    def __init__(self, config: GPTConfig, layer: int = 0):
        super().__init__()
        d = config.d_model
        self.n_heads = config.n_heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.o.residual_proj = True
        self.keep_probs = False
        self.probs = None

    def forward(self, x: torch.Tensor, last_only: bool = False) -> torch.Tensor:
        """x (..., T, d) -> (..., T, d); ``last_only``: queries of the last position only."""
        *lead, t, d = x.shape
        h = self.n_heads
        xq = x[..., -1:, :] if last_only else x
        q = self.q(xq).reshape(*lead, xq.shape[-2], h, d // h).transpose(-3, -2)
        k = self.k(x).reshape(*lead, t, h, d // h).transpose(-3, -2)
        v = self.v(x).reshape(*lead, t, h, d // h).transpose(-3, -2)
        att = ((q @ k.transpose(-1, -2)) * (1.0 / math.sqrt(d // h))).softmax(dim=-1)
        if self.keep_probs:
            self.probs = att.detach()
        y = (att @ v).transpose(-3, -2).reshape(*lead, xq.shape[-2], d)
        return self.o(y)


def block_forward(block: Block, x: torch.Tensor, last_only: bool = False) -> torch.Tensor:
    """The pre-LN block x + attn(ln1 x), then + ffn(ln2 x); ``last_only``: only the last
    position's output (its keys and values still come from every position)."""
    a = block.attn(block.ln1(x), last_only=last_only)
    x = (x[..., -1:, :] if last_only else x) + a
    return x + block.ffn(block.ln2(x))


class TinyVLM(nn.Module):
    def __init__(self, d: int = 64, heads: int = 4, ffn: int = 128, n_lm: int = 2,
                 n_vis_blocks: int = 1, patch_dim: int = 48, n_vis: int = 64,
                 n_text: int = 7, vocab: int = 20, n_answers: int = 14,
                 outliers=(7, 41), outlier_gain: float = 8.0, init: str = "torch",
                 pos_std: float = 0.02):
        super().__init__()
        cfg = GPTConfig(vocab_size=vocab, context=n_vis + n_text, d_model=d, n_heads=heads,
                        n_layers=n_lm, mlp_hidden=ffn)
        self.patch = nn.Linear(patch_dim, d)
        self.vpos = nn.Parameter(torch.zeros(n_vis, d))
        self.vis = nn.ModuleList(Block(cfg, i, BiAttention, MLP) for i in range(n_vis_blocks))
        self.conn = nn.Linear(d, d)
        self.tok = nn.Embedding(vocab, d)
        self.tpos = nn.Parameter(torch.zeros(n_text, d))
        self.blocks = nn.ModuleList(Block(cfg, i, BiAttention, MLP) for i in range(n_lm))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, n_answers)
        resid_std = 0.02 / math.sqrt(2 * n_lm)
        with torch.no_grad():
            for m in self.modules() if init == "gpt2" else ():  # as icml26.lm.model.GPT
                if isinstance(m, (nn.Linear, nn.Embedding)):
                    nn.init.normal_(m.weight, 0.0,
                                    resid_std if getattr(m, "residual_proj", False) else 0.02)
                    if getattr(m, "bias", None) is not None:
                        nn.init.zeros_(m.bias)
            nn.init.normal_(self.vpos, 0.0, pos_std)
            nn.init.normal_(self.tpos, 0.0, pos_std)
            for b in self.blocks:
                for ln in (b.ln1, b.ln2):
                    ln.weight[list(outliers)] = float(outlier_gain)

    def lm_input(self, patches: torch.Tensor, text: torch.Tensor) -> torch.Tensor:
        """[connector(vision(patches)) | text embeddings]: (B, 71, d), the LM's input."""
        x = self.patch(patches) + self.vpos
        for b in self.vis:
            x = block_forward(b, x)
        return torch.cat([self.conn(x), self.tok(text) + self.tpos], dim=-2)

    def lm(self, h: torch.Tensor, upto: int | None = None) -> torch.Tensor:
        """LM blocks on the LM input; ``upto``: stop before block ``upto`` (its input)."""
        n = len(self.blocks) if upto is None else upto
        for i in range(n):
            h = block_forward(self.blocks[i], h, last_only=(upto is None
                                                            and i == len(self.blocks) - 1))
        return h

    def logits_from(self, h: torch.Tensor) -> torch.Tensor:
        """Answer logits from the LM input h (only the ANS position of the last block)."""
        return self.head(self.ln_f(self.lm(h)[..., -1, :]))

    def forward(self, patches: torch.Tensor, text: torch.Tensor) -> torch.Tensor:
        return self.logits_from(self.lm_input(patches, text))
