"""Value-before-key recall (VKR): the synthetic task that isolates the lookahead-key mechanism.

Vocabulary: 16 value tokens (ids 0..15), 16 key tokens (16..31), one query marker (32). A
sequence is ``pairs`` pairs (v_i, k_i), distinct keys, values drawn with replacement, then the
marker and a query key k_j (j uniform); the target is v_j, which appears BEFORE its key. Loss
and accuracy count the last position only.

A one-layer causal model cannot solve it: the key of v_j's position is computed before k_j
arrives, so nothing at that position says which key follows. A one-layer CASTLE can: the
lookahead key of v_j's position absorbs k_j as soon as k_j arrives.
"""

from __future__ import annotations

import numpy as np

N_VALUES, N_KEYS = 16, 16
MARKER = N_VALUES + N_KEYS
VOCAB = N_VALUES + N_KEYS + 1


def seq_len(pairs: int) -> int:
    return 2 * pairs + 2


def sample(rng: np.random.Generator, n: int, pairs: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """``n`` sequences (n, 2 pairs + 2) and their targets (n,), numpy only."""
    if pairs > N_KEYS:
        raise ValueError(f"{pairs} pairs need {pairs} distinct keys; there are {N_KEYS}")
    values = rng.integers(0, N_VALUES, size=(n, pairs))
    keys = np.argsort(rng.random((n, N_KEYS)), axis=1)[:, :pairs] + N_VALUES  # distinct keys
    j = rng.integers(0, pairs, size=n)
    seq = np.empty((n, seq_len(pairs)), dtype=np.int64)
    seq[:, 0:2 * pairs:2], seq[:, 1:2 * pairs:2] = values, keys
    seq[:, -2] = MARKER
    seq[:, -1] = keys[np.arange(n), j]
    return seq, values[np.arange(n), j]


def last_logits(model, idx):
    """Logits of the last position only, equal to ``model(idx)[:, -1]`` (torch).

    Every block but the last runs on all positions; the last block's attention still reads all
    positions but its residual update, the MLP, the final LayerNorm and the head run on the last
    position only (the loss uses nothing else), which saves most of a one-layer model's cost.
    """
    import torch

    t = idx.shape[1]
    x = model.drop(model.tok(idx) + model.pos(torch.arange(t, device=idx.device)))
    for block in model.blocks[:-1]:
        x = block(x)
    last = model.blocks[-1]
    h = x[:, -1] + last.drop(last.attn(last.ln1(x))[:, -1])
    h = h + last.drop(last.ffn(last.ln2(h)))
    return model.head(model.ln_f(h))
