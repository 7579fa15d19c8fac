"""The student's view of a string (numpy only): character ids over a fixed alphabet."""
from __future__ import annotations

import numpy as np

# pad, unknown, then every character a decoded artefact can be made of in this world
CHARS = ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/={}%")
VOCAB = 2 + len(CHARS)
_INDEX = {c: i + 2 for i, c in enumerate(CHARS)}
# id of every code point below 256 (the world's strings are latin-1); anything else is 1
_LUT = np.ones(256, np.int64)
for _c, _i in _INDEX.items():
    _LUT[ord(_c)] = _i


def char_ids(strings, max_len: int) -> tuple[np.ndarray, np.ndarray]:
    """(ids (n, max_len) int64 with 0 = pad and 1 = any other character, lengths (n,))."""
    strs = [str(s)[:max_len] for s in strings]
    n = len(strs)
    ids = np.zeros((n, max_len), dtype=np.int64)
    lens = np.fromiter(map(len, strs), np.int64, n)
    total = int(lens.sum())
    if total:
        codes = np.frombuffer("".join(strs).encode("utf-32-le", "surrogatepass"), np.uint32)
        vals = np.where(codes < 256, _LUT[np.minimum(codes, 255)], 1)
        rows = np.repeat(np.arange(n), lens)
        cols = np.arange(total) - np.repeat(np.cumsum(lens) - lens, lens)
        ids[rows, cols] = vals
    return ids, lens
