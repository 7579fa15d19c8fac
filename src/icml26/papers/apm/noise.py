"""The four accessibility-driven noise classes and the generic control, at severity s.

The noise models follow the spec (INFERRED there: the paper names the classes, not their
simulators). Character noises act on letters only (spaces and word boundaries are kept;
INFERRED), vectorised over a whole batch of utterances joined by newlines. Word noises act on
lexicon word ids of a batch, so speech-recognition errors are real words by construction.

- motor (tremor/typing): each letter with prob s: keyboard-adjacent key (40%), doubled (30%)
  or dropped (30%).
- dyslexia-like: each word of length >= 4 with prob min(1, 2s) gets two adjacent interior
  letters swapped; then each letter with prob s/2 gets a confusable substitute (b/d, p/q, m/n,
  u/n, vowel to vowel).
- speech (dysarthric speech recognised by ASR): each word with prob s is replaced by the
  closest other lexicon word in edit distance (70%, uniform among ties) or deleted (30%).
- cognitive (aphasia-like, telegraphic): with prob s the word order is shuffled within windows
  of 3; each function word is deleted with prob min(1, 2s); each content word dropped with
  prob s/3.
- generic (the control standard robustness tests use): each letter with prob s is replaced by
  a uniformly drawn other letter.
"""

from __future__ import annotations

import numpy as np

ACCESS = ("motor", "dyslexia", "speech", "cognitive")
CLASSES = ACCESS + ("generic",)
CHAR_NOISE = ("motor", "dyslexia", "generic")
SEP = ord("\n")
A = ord("a")

_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_OFFSET = (0.0, 0.25, 0.75)


def _adjacency():
    pos = {c: (r, i + _OFFSET[r]) for r, row in enumerate(_ROWS) for i, c in enumerate(row)}
    table = np.zeros((26, 8), dtype=np.uint8)
    count = np.zeros(26, dtype=np.int64)
    for c, (r, x) in pos.items():
        near = sorted(d for d, (r2, x2) in pos.items()
                      if d != c and abs(r2 - r) <= 1 and abs(x2 - x) <= 1.0)
        table[ord(c) - A, :len(near)] = [ord(d) for d in near]
        count[ord(c) - A] = len(near)
    return table, count


ADJ, ADJ_N = _adjacency()


def _confusables():
    pairs = {"b": "d", "d": "b", "p": "q", "q": "p", "m": "n", "n": "mu", "u": "n"}
    vowels = "aeiou"
    table = np.zeros((26, 8), dtype=np.uint8)
    count = np.zeros(26, dtype=np.int64)
    for i in range(26):
        c = chr(A + i)
        opts = list(pairs.get(c, ""))
        if c in vowels:
            opts += [v for v in vowels if v != c]
        opts = sorted(set(opts))
        table[i, :len(opts)] = [ord(o) for o in opts]
        count[i] = len(opts)
    return table, count


CONF, CONF_N = _confusables()


def _to_flat(texts):
    buf = np.frombuffer("\n".join(texts).encode("ascii"), dtype=np.uint8).copy()
    return buf


def _from_flat(buf):
    return buf.tobytes().decode("ascii").split("\n")


def _letters(buf):
    return (buf >= A) & (buf < A + 26)


def _per_char(s, buf):
    """Severity per character: ``s`` a scalar or one value per utterance."""
    s = np.asarray(s, dtype=float)
    if s.ndim == 0:
        return np.full(buf.size, float(s))
    return s[np.cumsum(buf == SEP) - (buf == SEP)]


def motor(texts, s, rng):
    buf = _to_flat(texts)
    u, kind = rng.random(buf.size), rng.random(buf.size)
    hit = _letters(buf) & (u < _per_char(s, buf))
    rep = hit & (kind < 0.4)
    idx = np.flatnonzero(rep)
    li = buf[idx] - A
    buf[idx] = ADJ[li, (rng.random(idx.size) * ADJ_N[li]).astype(np.int64)]
    counts = np.ones(buf.size, dtype=np.int64)
    counts[hit & (kind >= 0.4) & (kind < 0.7)] = 2
    counts[hit & (kind >= 0.7)] = 0
    return _from_flat(np.repeat(buf, counts))


def generic(texts, s, rng):
    buf = _to_flat(texts)
    hit = _letters(buf) & (rng.random(buf.size) < _per_char(s, buf))
    idx = np.flatnonzero(hit)
    shift = rng.integers(1, 26, idx.size)          # a uniformly drawn *other* letter
    buf[idx] = (buf[idx] - A + shift) % 26 + A
    return _from_flat(buf)


def dyslexia(texts, s, rng):
    buf = _to_flat(texts)
    s_c = _per_char(s, buf)
    let = _letters(buf)
    # words = maximal runs of letters
    edges = np.diff(np.concatenate([[0], let.astype(np.int8), [0]]))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    lens = ends - starts
    draw_w, draw_pos = rng.random(starts.size), rng.random(starts.size)
    sw = (lens >= 4) & (draw_w < np.minimum(1.0, 2.0 * s_c[starts]))
    # interior adjacent pair (i, i+1) with 1 <= i and i + 1 <= len - 2
    i = starts[sw] + 1 + (draw_pos[sw] * (lens[sw] - 3)).astype(np.int64)
    buf[i], buf[i + 1] = buf[i + 1].copy(), buf[i].copy()
    hit = let & (rng.random(buf.size) < s_c / 2.0)
    idx = np.flatnonzero(hit)
    li = buf[idx] - A
    pick = (rng.random(idx.size) * np.maximum(CONF_N[li], 1)).astype(np.int64)
    has = CONF_N[li] > 0
    buf[idx[has]] = CONF[li[has], pick[has]]
    return _from_flat(buf)


def speech(word_ids, utt, s, nearest, rng):
    """word_ids, utt: flat lexicon ids and utterance index (sorted); nearest: per lexicon id
    the ids at the smallest edit distance. Returns the new (word_ids, utt)."""
    n = word_ids.size
    s = np.asarray(s, dtype=float)
    hit = rng.random(n) < (s[utt] if s.ndim else s)
    kind = rng.random(n)
    pick = rng.random(n)
    out = word_ids.copy()
    for k in np.flatnonzero(hit & (kind < 0.7)):
        opts = nearest[int(word_ids[k])]
        out[k] = opts[int(pick[k] * len(opts))]
    keep = ~(hit & (kind >= 0.7))
    return out[keep], utt[keep]


def cognitive(word_ids, utt, is_func, s, rng, n_utt):
    s = np.broadcast_to(np.asarray(s, dtype=float), (n_utt,))
    u_shuffle = rng.random(n_utt) < s
    out, out_f = word_ids.copy(), is_func.copy()
    bounds = np.searchsorted(utt, np.arange(n_utt + 1))
    for k in np.flatnonzero(u_shuffle):
        a, b = bounds[k], bounds[k + 1]
        for w in range(a, b, 3):
            e = min(w + 3, b)
            perm = w + rng.permutation(e - w)
            out[w:e], out_f[w:e] = out[perm], out_f[perm]
    d = rng.random(word_ids.size)
    sw = s[utt]
    drop = np.where(out_f, d < np.minimum(1.0, 2.0 * sw), d < sw / 3.0)
    return out[~drop], utt[~drop]


def join(vocab, word_ids, utt, n_utt):
    bounds = np.searchsorted(utt, np.arange(n_utt + 1))
    words = [vocab[int(w)] for w in word_ids]
    return [" ".join(words[bounds[k]:bounds[k + 1]]) for k in range(n_utt)]


def apply(cls, vocab, word_ids, utt, is_func, s, nearest, rng, n_utt):
    """Texts of a batch of utterances under noise class ``cls`` at severity ``s`` (a scalar
    or one value per utterance). word_ids/utt/is_func: the flat words of the batch."""
    if cls not in CLASSES:
        raise ValueError(f"unknown noise class {cls!r}; allowed: {', '.join(CLASSES)}")
    if cls == "speech":
        w, u = speech(word_ids, utt, s, nearest, rng)
        return join(vocab, w, u, n_utt)
    if cls == "cognitive":
        w, u = cognitive(word_ids, utt, is_func, s, rng, n_utt)
        return join(vocab, w, u, n_utt)
    texts = join(vocab, word_ids, utt, n_utt)
    return {"motor": motor, "dyslexia": dyslexia, "generic": generic}[cls](texts, s, rng)
