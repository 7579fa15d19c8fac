"""Tokens and the expression-level metrics.

Tokenisation follows the rules of the official post-processing (HMER-Bench
src/postprocess/postprocess_sasr.py, read, not copied): ``\\begin{env}`` and ``\\end{env}`` are
one token each, ``\\\\`` is one token, a backslash command (``\\frac``, ``\\times``) is one
token, a backslash plus one non-letter (``\\{``) is one token, and every other non-space
character is its own token (so ``->`` is ``-``, ``>`` and ``_{2}`` is ``_``, ``{``, ``2``,
``}``). ``$`` and whitespace are ignored (official evaluate.py). The same tokeniser reads labels
and predictions.
"""

from __future__ import annotations

import re

import numpy as np

_TOKEN = re.compile(r"\\begin\{[^}]*\}|\\end\{[^}]*\}|\\\\|\\[A-Za-z]+|\\.|\S")

# Tokens that carry structure, not a symbol's identity: mapped to themselves by ``structure``;
# every other token (digits, letters, operators, glyph brackets) becomes the placeholder.
STRUCTURAL = {"{", "}", "[", "]", "_", "^", "&", "\\\\", "\\frac", "\\operand", "\\operator",
              "\\result", "\\ce"}
PLACEHOLDER = "#"


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text.replace("$", ""))


def structure(tokens: list[str]) -> list[str]:
    """Every symbol token replaced by a placeholder: structure regardless of symbol identity.
    Environments, grouping, subscripts, separators and layout commands are kept."""
    return [t if t in STRUCTURAL or t.startswith(("\\begin", "\\end")) else PLACEHOLDER
            for t in tokens]


def levenshtein(a, b) -> int:
    """Unit-cost edit distance of two token lists (the reference for the batched version)."""
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def encode(seqs: list[list[str]], vocab: dict) -> tuple[np.ndarray, np.ndarray]:
    """Token lists as a padded int array (pad -1) and their lengths; ``vocab`` grows."""
    lens = np.array([len(s) for s in seqs], dtype=np.int64)
    out = np.full((len(seqs), max(1, int(lens.max(initial=0)))), -1, dtype=np.int64)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = [vocab.setdefault(t, len(vocab)) for t in s]
    return out, lens


def levenshtein_batch(A: np.ndarray, la: np.ndarray, B: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """Edit distances of many pairs at once: the DP runs over the rows of A for every pair
    together; the insertion chain of a row is a running minimum of (row - j) + j."""
    n, m = A.shape[0], B.shape[1]
    j = np.arange(m + 1)
    row = np.broadcast_to(j, (n, m + 1)).astype(np.int64).copy()
    out = np.where(la == 0, lb, 0).astype(np.int64)
    for i in range(1, A.shape[1] + 1):
        sub = row[:, :-1] + (A[:, i - 1: i] != B)
        cand = np.empty_like(row)
        cand[:, 0] = i
        cand[:, 1:] = np.minimum(row[:, 1:] + 1, sub)
        row = np.minimum.accumulate(cand - j, axis=1) + j
        done = la == i
        if done.any():
            out[done] = row[done, lb[done]]
    return out


def token_accuracy(dist: np.ndarray, la: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """Official "Accuracy (avg)" per sample (evaluate.py L54, as a fraction): 1 - Lev / max
    length, and 1 when both sequences are empty."""
    mx = np.maximum(la, lb)
    return np.where(mx == 0, 1.0, 1.0 - dist / np.maximum(mx, 1))
