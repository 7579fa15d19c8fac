"""The synthetic concept language, prompts and multilingual data sets of one seed (numpy).

Concept inventory (spec): ``n_harm`` harm objects H (ids 0..), ``n_action`` harmful actions A
(next ids), the rest neutral concepts split into ``n_topics`` contiguous topics. A prompt is
``prompt_len`` concepts; it is harmful iff it contains at least one H and at least one A.
Languages are icml26.lm.multilingual.SyntheticLanguages over the concept vocabulary: separate
vocabularies (language l writes c as V*l + perm_l(c)), word order reversed where
``reverse[l]``.
"""

from __future__ import annotations

import numpy as np

from icml26.lm.multilingual import SyntheticLanguages, multilingual_corpus, resource_split


class Concepts:
    """Concept ids of the inventory and the topic of each neutral concept."""

    def __init__(self, p):
        self.n_harm, self.n_action = int(p["n_harm"]), int(p["n_action"])
        self.V = int(p["n_concepts"])
        self.H = np.arange(self.n_harm)
        self.A = np.arange(self.n_harm, self.n_harm + self.n_action)
        self.neutral = np.arange(self.n_harm + self.n_action, self.V)
        self.topics = np.array_split(self.neutral, int(p["n_topics"]))
        self.L = int(p["prompt_len"])

    def is_harmful(self, rows: np.ndarray) -> np.ndarray:
        """The spec's rule: at least one H AND at least one A in the prompt."""
        h = (rows < self.n_harm).any(-1)
        a = ((rows >= self.n_harm) & (rows < self.n_harm + self.n_action)).any(-1)
        return h & a


def all_pairs(c: Concepts) -> np.ndarray:
    return np.array([(h, a) for h in c.H for a in c.A], dtype=np.int64)


def topic_sentences(rng, c: Concepts, n: int, topic_words: int):
    """``n`` topic sentences: ``topic_words`` concepts of the sentence's topic plus background
    concepts drawn uniformly from the whole inventory (INFERRED: the spec gives the topic
    task, not its sentence model; background H and A concepts let pre-training and the
    cross-lingual alignment reach the safety-relevant tokens of every language)."""
    t = rng.integers(0, len(c.topics), n)
    rows = np.empty((n, c.L), dtype=np.int64)
    for k in range(len(c.topics)):
        sel = np.flatnonzero(t == k)
        rows[sel, :topic_words] = rng.choice(c.topics[k], (len(sel), topic_words))
    rows[:, topic_words:] = rng.integers(0, c.V, (n, c.L - topic_words))
    return _shuffle_positions(rng, rows), t


def _shuffle_positions(rng, rows):
    keys = rng.random(rows.shape)
    return np.take_along_axis(rows, np.argsort(keys, axis=1), axis=1)


def _filler(rng, c: Concepts, n: int, k: int):
    """``k`` neutral concepts of one random topic per prompt."""
    t = rng.integers(0, len(c.topics), n)
    out = np.empty((n, k), dtype=np.int64)
    for j in range(len(c.topics)):
        sel = np.flatnonzero(t == j)
        out[sel] = rng.choice(c.topics[j], (len(sel), k))
    return out


def safety_prompts(rng, c: Concepts, pairs: np.ndarray, n_harmful: int, n_hard: int,
                   n_easy: int):
    """Harmful prompts (one (H, A) pair drawn from ``pairs`` + neutral filler), hard harmless
    prompts (one H without A, or one A without H) and easy harmless prompts (neutral only),
    positions shuffled. Returns (rows, harmful label, kind 0 harmful / 1 hard / 2 easy)."""
    L = c.L
    harm = np.concatenate([pairs[rng.integers(0, len(pairs), n_harmful)],
                           _filler(rng, c, n_harmful, L - 2)], axis=1)
    which = rng.integers(0, 2, n_hard)            # 0: H without A, 1: A without H
    lone = np.where(which == 0, rng.choice(c.H, n_hard), rng.choice(c.A, n_hard))
    hard = np.concatenate([lone[:, None], _filler(rng, c, n_hard, L - 1)], axis=1)
    easy = _filler(rng, c, n_easy, L)
    rows = _shuffle_positions(rng, np.concatenate([harm, hard, easy]))
    kind = np.repeat([0, 1, 2], [n_harmful, n_hard, n_easy])
    return rows, (kind == 0).astype(np.int64), kind


def harmless_split(n: int) -> tuple[int, int]:
    """Harmless prompts: half hard, half easy (the spec's training mix)."""
    return n // 2, n - n // 2


def languages(p, rng) -> SyntheticLanguages:
    n = len(p["topic_sizes"])
    return SyntheticLanguages(int(p["n_concepts"]), n, rng,
                              orders=["reverse" if r else "keep" for r in p["reverse"]])


def make_seed_data(p, rng) -> dict[str, np.ndarray]:
    """Every data set of one seed, as token ids of the languages (see the module docstring).

    Keys: topic_tok/topic_lang/topic_y (pre-training topic corpora), align_en/align_l/
    align_lang (parallel EN <-> l pairs), safety_tok/safety_y (English safety alignment set),
    ref_harm_en/ref_harmless (L, n_ref, T) reference sets, s3_en/s3_l/s3_y/s3_lang (parallel
    cross-lingual safety set), eval_tok (L, n_eval, T)/eval_y/eval_kind, topic_test
    (L, n, T)/topic_test_y, and the held-out (H, A) pairs.
    """
    c = Concepts(p)
    langs = languages(p, rng)
    n_lang = langs.n_languages
    sizes = [int(s) for s in p["topic_sizes"]]
    pair_sizes = [int(s) for s in p["pair_sizes"]]
    out = {}

    # (H, A) pairs: a held-out share only ever appears in the evaluation prompts
    pairs = all_pairs(c)[rng.permutation(c.n_harm * c.n_action)]
    n_eval_pairs = int(round(float(p["heldout_pair_frac"]) * len(pairs)))
    eval_pairs, train_pairs = pairs[:n_eval_pairs], pairs[n_eval_pairs:]
    out["eval_pairs"], out["train_pairs"] = eval_pairs, train_pairs

    # 1. pre-training: each language's own topic text (disjoint rows of one base pool), sizes
    # set by its resource level, plus parallel EN <-> l pairs for the alignment loss
    tw = int(p["topic_words"])
    base, topic = topic_sentences(rng, c, sum(sizes), tw)
    parts = resource_split(rng, len(base), sizes)
    tok, lang_of, row_of = multilingual_corpus(langs, base, parts)
    out["topic_tok"], out["topic_lang"], out["topic_y"] = tok, lang_of, topic[row_of]
    pbase, _ = topic_sentences(rng, c, sum(pair_sizes), tw)
    pparts = resource_split(rng, len(pbase), pair_sizes)
    en, other, plang = [], [], []
    for lang, idx in enumerate(pparts):
        if lang == 0 or not len(idx):
            continue
        a, b = langs.parallel(pbase[idx], 0, lang)
        en.append(a), other.append(b), plang.append(np.full(len(idx), lang))
    T = c.L
    out["align_en"] = np.concatenate(en) if en else np.empty((0, T), np.int64)
    out["align_l"] = np.concatenate(other) if other else np.empty((0, T), np.int64)
    out["align_lang"] = np.concatenate(plang) if plang else np.empty(0, np.int64)

    # 2. English safety alignment set
    n_s = int(p["safety_size"])
    n_h = int(round(float(p["harmful_frac"]) * n_s))
    hard, easy = harmless_split(n_s - n_h)
    rows, y, _ = safety_prompts(rng, c, train_pairs, n_h, hard, easy)
    out["safety_tok"], out["safety_y"] = langs.translate(rows, 0), y

    # reference sets (validation data, training pairs): English harmful/harmless for the safety
    # direction u; harmless prompts in every language for the margin statistics and the gate
    n_ref = int(p["n_ref"])
    hard, easy = harmless_split(n_ref)
    rh, _, _ = safety_prompts(rng, c, train_pairs, n_ref, 0, 0)
    rs, _, _ = safety_prompts(rng, c, train_pairs, 0, hard, easy)
    out["ref_harm_en"] = langs.translate(rh, 0)
    out["ref_harmless"] = np.stack([langs.translate(rs, l) for l in range(n_lang)])

    # 3. cross-lingual safety set: per target language, its own harmful + harmless prompts with
    # their English versions
    n3 = int(p["s3_per_class"])
    hard, easy = harmless_split(n3)
    s3_en, s3_l, s3_y, s3_lang = [], [], [], []
    for lang in range(1, n_lang):
        rows, y, _ = safety_prompts(rng, c, train_pairs, n3, hard, easy)
        a, b = langs.parallel(rows, 0, lang)
        s3_en.append(a), s3_l.append(b), s3_y.append(y), s3_lang.append(np.full(len(y), lang))
    out["s3_en"], out["s3_l"] = np.concatenate(s3_en), np.concatenate(s3_l)
    out["s3_y"], out["s3_lang"] = np.concatenate(s3_y), np.concatenate(s3_lang)

    # held-out evaluation: unseen (H, A) pairs, translated into every language (parallel)
    n_e = int(p["n_eval_per_class"])
    hard, easy = harmless_split(n_e)
    rows, y, kind = safety_prompts(rng, c, eval_pairs, n_e, hard, easy)
    out["eval_tok"] = np.stack([langs.translate(rows, l) for l in range(n_lang)])
    out["eval_y"], out["eval_kind"] = y, kind
    trows, ty = topic_sentences(rng, c, int(p["n_topic_test"]), tw)
    out["topic_test"] = np.stack([langs.translate(trows, l) for l in range(n_lang)])
    out["topic_test_y"] = ty
    return out
