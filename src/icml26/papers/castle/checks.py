"""The exactness checks (a)-(c) of the spec, run inside the pipeline on each trained CASTLE model.

(a) parallel form == recurrent definition == decoding form (float64, L = 16, layer 0);
(b) causality: changing the tokens after position i leaves the model's outputs at <= i unchanged;
(c) with V^U = 0 CASTLE is exactly causal attention (same Q^C, K^C, V^C, W_O as a standard
    CausalSelfAttention).
The unit tests run the same functions on random weights; here they run on trained weights,
where the lookahead term is far from zero.
"""

from __future__ import annotations

import copy

import numpy as np


def exactness(model, tokens: np.ndarray, seed: int, length: int = 16) -> dict[str, float]:
    """Max absolute differences of (a)-(c) for a GPT with CASTLE attention (torch, float64)."""
    import torch

    from icml26.lm.model import CausalSelfAttention

    from .castle import castle_decode, castle_parallel, castle_recurrent

    m = copy.deepcopy(model).cpu().double().eval()  # float64 on the CPU
    gen = torch.Generator().manual_seed(seed % 2**63)
    length = min(length, m.config.context, tokens.shape[1])
    idx = torch.as_tensor(tokens[:2, :length])
    with torch.no_grad():
        attn = m.blocks[0].attn
        x = m.blocks[0].ln1(m.tok(idx) + m.pos(torch.arange(length)))
        heads = attn.heads(x)
        par = castle_parallel(*heads)
        out = {"diff_recurrent": float((par - castle_recurrent(*heads)).abs().max()),
               "diff_decode": float((par - castle_decode(*heads)).abs().max())}
        # (b) random replacements after position i, whole model, every i
        logits = m(idx)
        worst = 0.0
        for i in range(length - 1):
            other = idx.clone()
            other[:, i + 1:] = torch.randint(0, m.config.vocab_size, other[:, i + 1:].shape,
                                             generator=gen)
            diff = (m(other)[:, : i + 1] - logits[:, : i + 1]).abs().max()
            worst = max(worst, float(diff))
        out["diff_causality"] = worst
        # (c) zero V^U (rows 5d..6d of the input projection) and compare with causal attention
        d = x.shape[-1]
        zeroed = copy.deepcopy(attn)
        zeroed.proj_in.weight[5 * d:].zero_()
        zeroed.proj_in.bias[5 * d:].zero_()
        causal = CausalSelfAttention(m.config).double()
        # proj_in rows: qc, kc, vc, qu, ku, vu -> the causal qkv takes qc, kc, vc
        causal.qkv.weight.copy_(attn.proj_in.weight[: 3 * d])
        causal.qkv.bias.copy_(attn.proj_in.bias[: 3 * d])
        causal.proj.load_state_dict(attn.proj.state_dict())
        causal.eval()
        out["diff_vu0"] = float((zeroed(x) - causal(x)).abs().max())
    return out
