"""The student's view of a string (numpy only): character ids over a fixed alphabet."""
from __future__ import annotations

import numpy as np

# pad, unknown, then every character a decoded artefact can be made of in this world
CHARS = ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/={}%")
VOCAB = 2 + len(CHARS)
_INDEX = {c: i + 2 for i, c in enumerate(CHARS)}


def char_ids(strings, max_len: int) -> tuple[np.ndarray, np.ndarray]:
    """(ids (n, max_len) int64 with 0 = pad and 1 = any other byte, lengths (n,))."""
    ids = np.zeros((len(strings), max_len), dtype=np.int64)
    lens = np.zeros(len(strings), dtype=np.int64)
    for i, s in enumerate(strings):
        s = str(s)[:max_len]
        lens[i] = len(s)
        ids[i, :len(s)] = [_INDEX.get(c, 1) for c in s]
    return ids, lens
