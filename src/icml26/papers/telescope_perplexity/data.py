"""Human text, tokenisation and the perturbation attacks of telescope-perplexity (numpy only).

Per seed: a seeded shuffle of the documents (reference-manual topics of ``pydoc_data.topics``;
at full scale also the paragraphs of stdlib docstrings) splits them 85% / 15% into LM-training
text and held-out human text. The word tokenizer (shared ``WordTokenizer``: the spec's regex,
2,000 most frequent training tokens + <unk>) is fitted on the training text of that seed only,
so nothing of the held-out text leaks into the vocabulary. Human passages are non-overlapping
48-token windows of the held-out text with at most 3 <unk> tokens.
"""

from __future__ import annotations

import re

import numpy as np

from icml26.lm.corpus import WordTokenizer, pydoc_topic_dict, stdlib_docstrings, to_ascii

# reST underlines and tables: a run of >= 3 identical characters from *=-~^#+| (spec: these
# lines make immediate repetition artificially common, so they are dropped before tokenising)
MARKUP_RUN = re.compile(r"([*=\-~^#+|])\1\1")
# punctuation tokens at which a machine continuation is cut into clauses (shuffle attack)
CLAUSE_ENDS = (",", ".", ";", ":")


def clean(text: str) -> str:
    """Drop every line that contains a run of >= 3 identical characters from ``*=-~^#+|``."""
    return "\n".join(line for line in text.split("\n") if not MARKUP_RUN.search(line))


def documents(domain: str) -> dict[str, str]:
    """Named documents of a text domain, cleaned: ``pydoc`` topics or ``docstrings`` paragraphs."""
    if domain == "pydoc":
        return {k: clean(to_ascii(v)) for k, v in pydoc_topic_dict().items()}
    if domain == "docstrings":
        text = to_ascii(stdlib_docstrings())
        paras = [p for p in text.split("\n\n") if p.strip()]
        return {f"doc{i:05d}": clean(p) for i, p in enumerate(paras)}
    raise ValueError(f"telescope-perplexity: unknown domain {domain!r}; allowed: pydoc, docstrings")


def split_documents(names: list[str], holdout_frac: float, rng: np.random.Generator):
    """Seeded shuffle of the document names; the first ``holdout_frac`` (at least one) are held
    out as human text, the rest train the language models (both in shuffled order)."""
    order = [names[i] for i in rng.permutation(len(names))]
    n_hold = max(1, int(round(holdout_frac * len(order))))
    return order[n_hold:], order[:n_hold]


def passages(ids: np.ndarray, length: int, unk: int, max_unk: int) -> np.ndarray:
    """Non-overlapping ``length``-token windows with at most ``max_unk`` <unk> tokens."""
    n = len(ids) // length
    win = ids[: n * length].reshape(n, length)
    return win[(win == unk).sum(1) <= max_unk]


def repetition_rate(ids: np.ndarray, token: int | None = None) -> float:
    """Fraction of positions i >= 1 of a 1-D sequence (or of each row) with s_i = s_{i-1}; with
    ``token``, only the repeats of that token (s_i = s_{i-1} = token) count."""
    ids = np.atleast_2d(ids)
    hit = ids[:, 1:] == ids[:, :-1]
    if token is not None:
        hit &= ids[:, 1:] == token
    return float(hit.mean())


def unigram_repetition_rate(counts: np.ndarray) -> float:
    """The immediate-repetition rate a context-free (unigram) model implies: sum_v u_v^2."""
    u = counts / counts.sum()
    return float((u * u).sum())


def unigram_cross_entropy(counts: np.ndarray, ids: np.ndarray) -> float:
    """Mean -log u(s_i) over ``ids`` (nats) with u the training unigram frequencies: the
    validation loss of a context-free model, the "unigram plateau" an LM must get below before
    its bigram-level statistics (repeat aversion included) mean anything. Zero counts (none in
    practice: the vocabulary is fitted on the training ids) are floored at one."""
    c = np.maximum(np.asarray(counts, float), 1.0)
    return float(-np.log(c[np.asarray(ids)] / c.sum()).mean())


# ---------------------------------------------------------------------------------------------
# Perturbation attacks on machine text (full profile only; both INFERRED in detail)
# ---------------------------------------------------------------------------------------------
def substitute(cont: np.ndarray, frac: float, unigram: np.ndarray, rng) -> np.ndarray:
    """Random token substitution: each text gets round(frac * n) positions of its continuation
    replaced by tokens drawn from the training unigram distribution (INFERRED: the spec says
    "random 10% token substitution"; the replacement distribution is ours)."""
    out = cont.copy()
    n = cont.shape[1]
    k = int(round(frac * n))
    p = unigram / unigram.sum()
    for row in out:
        pos = rng.choice(n, size=k, replace=False)
        row[pos] = rng.choice(len(p), size=k, p=p)
    return out


def shuffle_clauses(cont: np.ndarray, clause_end_ids, rng) -> np.ndarray:
    """Clause shuffling: cut each continuation after every clause-ending punctuation token and
    permute the pieces (INFERRED: what counts as a clause is ours)."""
    ends = set(int(i) for i in clause_end_ids)
    out = np.empty_like(cont)
    for r, row in enumerate(cont):
        pieces, start = [], 0
        for i, t in enumerate(row):
            if int(t) in ends:
                pieces.append(row[start : i + 1])
                start = i + 1
        if start < len(row):
            pieces.append(row[start:])
        out[r] = np.concatenate([pieces[j] for j in rng.permutation(len(pieces))])
    return out


def seed_corpus(domains: list[str], seed_rng_for, vocab_size: int, holdout_frac: float,
                window: int, max_unk: int):
    """Training ids, tokenizer and human passages per domain for one seed.

    ``seed_rng_for(domain)`` gives the numpy Generator of that domain's document split.
    Returns (train_ids, tokenizer, {domain: passages}, {domain: held-out text}, train_text).
    """
    train_parts, held = [], {}
    for domain in domains:
        docs = documents(domain)
        train_names, hold_names = split_documents(sorted(docs), holdout_frac,
                                                  seed_rng_for(domain))
        train_parts.extend(docs[k] for k in train_names)
        held[domain] = "\n".join(docs[k] for k in hold_names)
    train_text = "\n".join(train_parts)
    tok = WordTokenizer(train_text, vocab_size)
    train_ids = tok.encode(train_text)
    human = {d: passages(tok.encode(t), window, tok.unk, max_unk) for d, t in held.items()}
    return train_ids, tok, human, held, train_text
