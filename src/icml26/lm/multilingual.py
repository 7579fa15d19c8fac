"""Synthetic multilingual variants of a token corpus or task (numpy only).

A *language* is a deterministic, seeded, invertible recoding of a base vocabulary of ``V``
tokens (concepts, words, characters) plus an optional change of word order:

- vocabulary: language ``l`` writes base token ``c`` as ``V * l + perm_l(c)``, its own block of
  ``V`` ids (``perm_l`` a seeded permutation), so the languages share no token and the full
  vocabulary has ``V * n_languages`` ids. ``overlap`` controls sharing: a seeded set of
  ``round(overlap * V)`` base tokens per non-anchor language is written with the anchor
  language's id instead (loanwords / shared script), so exactly that fraction of the base
  vocabulary is identical between the language and the anchor (language 0).
- word order: ``keep`` (as the base), ``reverse`` (the last axis reversed) or ``swap_pairs``
  (tokens 0<->1, 2<->3, ... of the last axis swapped; a trailing odd token stays). Each is its
  own inverse, so every language maps sequences one-to-one.
- resources: ``log_spaced_sizes`` gives high- to low-resource corpus sizes and
  ``resource_split`` draws disjoint (or nested) per-language subsets of a base corpus of those
  sizes, so a language's amount of data, not its text, sets how well a model learns it.

``translate`` takes base ids of any shape (..., T) and returns the language's ids; ``to_base``
inverts it exactly. Parallel data is the same base rows translated into two languages.
Tokens of padded variable-length rows should be reordered by the caller (the order change acts
on the whole last axis).
"""

from __future__ import annotations

import numpy as np

from ..errors import ConfigError

ORDERS = ("keep", "reverse", "swap_pairs")


def _reorder(ids: np.ndarray, order: str) -> np.ndarray:
    if order == "keep":
        return ids
    if order == "reverse":
        return ids[..., ::-1]
    # swap_pairs: positions (0 1)(2 3)...; the permutation is its own inverse
    T = ids.shape[-1]
    pos = np.arange(T)
    even = pos[: T - T % 2]
    pos[: T - T % 2] = even ^ 1
    return ids[..., pos]


class SyntheticLanguages:
    """``n_languages`` token-level languages over a base vocabulary of ``base_vocab`` tokens.

    Parameters
    ----------
    base_vocab: size V of the base vocabulary (ids 0..V-1).
    n_languages: number of languages; language 0 is the anchor (e.g. "English").
    seed: seeds the permutations and the shared-token sets (an int or a numpy Generator).
    orders: one word order per language (``keep``, ``reverse``, ``swap_pairs``); default keep.
    overlap: fraction of the base vocabulary each language l >= 1 writes with the anchor's ids
        (a float for all, or one per language, entry 0 ignored); 0 = separate vocabularies.
    permute_anchor: whether language 0 also permutes its block (False: the anchor writes base
        token c as c).

    Attributes (learned at construction, ending in ``_``): ``perm_`` (L, V) block offsets,
    ``shared_`` (L, V) bool (token written with the anchor's id), ``table_`` (L, V) the id of
    every (language, base token), ``inverse_`` (V * L,) the base token of every id (-1 unused).
    """

    def __init__(self, base_vocab: int, n_languages: int, seed=0, *, orders=None,
                 overlap=0.0, permute_anchor: bool = True):
        if base_vocab < 1 or n_languages < 1:
            raise ConfigError(f"SyntheticLanguages needs base_vocab >= 1 and n_languages >= 1, "
                              f"got {base_vocab}, {n_languages}")
        self.base_vocab, self.n_languages = int(base_vocab), int(n_languages)
        self.orders = tuple(orders) if orders is not None else ("keep",) * n_languages
        if len(self.orders) != n_languages or any(o not in ORDERS for o in self.orders):
            raise ConfigError(f"orders must name one of {ORDERS} per language, got {orders!r}")
        ov = np.broadcast_to(np.asarray(overlap, dtype=float), (n_languages,)).copy()
        if ((ov < 0) | (ov > 1)).any():
            raise ConfigError(f"overlap must lie in [0, 1], got {overlap!r}")
        ov[0] = 1.0  # the anchor shares its own ids by definition
        self.overlap = ov
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        V, L = self.base_vocab, self.n_languages
        self.perm_ = np.empty((L, V), dtype=np.int64)
        self.shared_ = np.zeros((L, V), dtype=bool)
        for lang in range(L):
            self.perm_[lang] = (rng.permutation(V) if lang or permute_anchor else np.arange(V))
            if lang:
                k = int(round(ov[lang] * V))
                self.shared_[lang, rng.permutation(V)[:k]] = True
        self.shared_[0] = True
        own = V * np.arange(L)[:, None] + self.perm_
        self.table_ = np.where(self.shared_, own[0][None, :], own)
        self.inverse_ = np.full(V * L, -1, dtype=np.int64)
        for lang in range(L):
            self.inverse_[self.table_[lang]] = np.arange(V)

    @property
    def vocab_size(self) -> int:
        return self.base_vocab * self.n_languages

    def translate(self, base_ids, lang: int) -> np.ndarray:
        """Base ids (..., T) written in language ``lang`` (ids in 0..vocab_size-1)."""
        ids = np.asarray(base_ids, dtype=np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= self.base_vocab):
            raise ValueError(f"base ids must lie in [0, {self.base_vocab})")
        return _reorder(self.table_[int(lang)][ids], self.orders[int(lang)])

    def to_base(self, ids, lang: int) -> np.ndarray:
        """The exact inverse of ``translate`` for language ``lang``."""
        ids = np.asarray(ids, dtype=np.int64)
        out = self.inverse_[ids]
        if (out < 0).any():
            raise ValueError("ids outside the vocabulary of the languages")
        back = _reorder(out, self.orders[int(lang)])
        if not np.array_equal(self.table_[int(lang)][back], _reorder(ids, self.orders[int(lang)])):
            raise ValueError(f"ids are not written in language {lang}")
        return back

    def parallel(self, base_ids, lang_a: int, lang_b: int) -> tuple[np.ndarray, np.ndarray]:
        """The same base rows written in two languages (a parallel corpus)."""
        return self.translate(base_ids, lang_a), self.translate(base_ids, lang_b)

    def token_overlap(self, lang_a: int, lang_b: int) -> float:
        """Fraction of base tokens written with the same id in both languages."""
        return float(np.mean(self.table_[int(lang_a)] == self.table_[int(lang_b)]))

    def language_ids(self, lang: int) -> np.ndarray:
        """The sorted ids language ``lang`` uses (its vocabulary, shared ids included)."""
        return np.sort(self.table_[int(lang)])


def log_spaced_sizes(high: int, low: int, n: int) -> list[int]:
    """``n`` corpus sizes from ``high`` down to ``low``, evenly spaced in log (rounded)."""
    if n < 1 or low < 1 or high < low:
        raise ConfigError(f"log_spaced_sizes needs n >= 1 and 1 <= low <= high, got "
                          f"{high}, {low}, {n}")
    if n == 1:
        return [int(high)]
    return [int(round(x)) for x in np.geomspace(high, low, n)]


def resource_split(rng: np.random.Generator, n_available: int, sizes, *,
                   disjoint: bool = True) -> list[np.ndarray]:
    """Row indices of a base corpus of ``n_available`` rows for each language's corpus size.

    ``disjoint``: no row is given to two languages (the languages see different text; needs
    sum(sizes) <= n_available). Otherwise the sets are nested (each a prefix of one random
    order): a smaller language's rows are all in every larger language's corpus.
    Each index array is sorted.
    """
    sizes = [int(s) for s in sizes]
    if any(s < 0 for s in sizes):
        raise ConfigError(f"resource sizes must be >= 0, got {sizes}")
    need = sum(sizes) if disjoint else max(sizes, default=0)
    if need > n_available:
        raise ConfigError(f"resource_split: {need} rows needed, {n_available} available")
    order = rng.permutation(n_available)
    out, start = [], 0
    for s in sizes:
        out.append(np.sort(order[start:start + s]) if disjoint else np.sort(order[:s]))
        start += s if disjoint else 0
    return out


def multilingual_corpus(langs: SyntheticLanguages, base_rows: np.ndarray, parts
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stack the languages' corpora: ``parts[l]`` are the base-row indices of language l.

    Returns (tokens (N, T), language of each row (N,), base row of each row (N,)).
    """
    toks, lang_of, row_of = [], [], []
    for lang, idx in enumerate(parts):
        idx = np.asarray(idx, dtype=np.int64)
        toks.append(langs.translate(base_rows[idx], lang))
        lang_of.append(np.full(len(idx), lang, dtype=np.int64))
        row_of.append(idx)
    T = base_rows.shape[-1]
    if not toks:
        return np.empty((0, T), np.int64), np.empty(0, np.int64), np.empty(0, np.int64)
    return np.concatenate(toks), np.concatenate(lang_of), np.concatenate(row_of)
