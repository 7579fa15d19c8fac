"""icml26.lm.multilingual: invertibility, exact overlap, word orders, resource sizes, seeding."""

import numpy as np
import pytest

from icml26.errors import ConfigError
from icml26.lm import multilingual as ml


def _rows(n=50, T=8, V=20, seed=0):
    return np.random.default_rng(seed).integers(0, V, (n, T))


def test_separate_vocabularies_by_formula_and_invertible():
    V, L = 20, 4
    langs = ml.SyntheticLanguages(V, L, seed=3, orders=["keep", "keep", "reverse", "swap_pairs"])
    base = _rows(V=V)
    for lang in range(L):
        t = langs.translate(base, lang)
        # each language's ids lie in its own block V*l .. V*l + V - 1 (no overlap)
        assert t.min() >= V * lang and t.max() < V * (lang + 1)
        assert np.array_equal(langs.to_base(t, lang), base)
        # the spec's formula V*l + perm_l(c), before the order change
        unordered = V * lang + langs.perm_[lang][base]
        want = {"keep": unordered, "reverse": unordered[:, ::-1],
                "swap_pairs": unordered[:, [1, 0, 3, 2, 5, 4, 7, 6]]}[langs.orders[lang]]
        assert np.array_equal(t, want)
        assert sorted(langs.perm_[lang]) == list(range(V))
    assert langs.vocab_size == V * L
    assert all(langs.token_overlap(0, k) == 0.0 for k in range(1, L))


def test_word_orders_by_hand():
    langs = ml.SyntheticLanguages(5, 3, seed=0, orders=["keep", "reverse", "swap_pairs"],
                                  permute_anchor=False)
    assert np.array_equal(langs.translate([0, 1, 2, 3, 4], 0), [0, 1, 2, 3, 4])
    p1 = langs.perm_[1]
    assert np.array_equal(langs.translate([0, 1, 2, 3, 4], 1),
                          5 + p1[[4, 3, 2, 1, 0]])
    p2 = langs.perm_[2]
    # odd length: the last token stays in place
    assert np.array_equal(langs.translate([0, 1, 2, 3, 4], 2), 10 + p2[[1, 0, 3, 2, 4]])


@pytest.mark.parametrize("overlap", [0.0, 0.25, 0.5, 1.0])
def test_controlled_overlap_is_exact_and_invertible(overlap):
    V = 40
    langs = ml.SyntheticLanguages(V, 3, seed=1, overlap=overlap)
    for lang in (1, 2):
        assert langs.token_overlap(0, lang) == round(overlap * V) / V
        assert langs.shared_[lang].sum() == round(overlap * V)
        base = _rows(V=V, seed=lang)
        assert np.array_equal(langs.to_base(langs.translate(base, lang), lang), base)
        # shared tokens carry the anchor's id, the others stay in the language's block
        t = langs.table_[lang]
        assert np.array_equal(t[langs.shared_[lang]], langs.table_[0][langs.shared_[lang]])
        own = t[~langs.shared_[lang]]
        assert ((own >= V * lang) & (own < V * (lang + 1))).all()


def test_per_language_overlap_and_foreign_ids_rejected():
    langs = ml.SyntheticLanguages(10, 3, seed=0, overlap=[0.0, 0.3, 0.0])
    assert langs.token_overlap(0, 1) == 0.3 and langs.token_overlap(0, 2) == 0.0
    with pytest.raises(ValueError):
        langs.to_base(langs.translate([1, 2, 3], 2), 1)   # language 2's ids are not language 1
    with pytest.raises(ValueError):
        langs.translate([10], 0)                           # outside the base vocabulary


def test_seeded_and_deterministic():
    a = ml.SyntheticLanguages(30, 4, seed=7, overlap=0.2)
    b = ml.SyntheticLanguages(30, 4, seed=np.random.default_rng(7), overlap=0.2)
    c = ml.SyntheticLanguages(30, 4, seed=8, overlap=0.2)
    assert np.array_equal(a.table_, b.table_)
    assert not np.array_equal(a.table_, c.table_)


def test_parallel_rows_decode_to_the_same_base():
    langs = ml.SyntheticLanguages(12, 3, seed=2, orders=["keep", "reverse", "keep"])
    base = _rows(V=12)
    a, b = langs.parallel(base, 0, 1)
    assert np.array_equal(langs.to_base(a, 0), langs.to_base(b, 1))


def test_log_spaced_sizes():
    assert ml.log_spaced_sizes(8000, 30, 10)[0] == 8000
    assert ml.log_spaced_sizes(8000, 30, 10)[-1] == 30
    s = np.array(ml.log_spaced_sizes(1000, 10, 3))
    assert list(s) == [1000, 100, 10]
    with pytest.raises(ConfigError):
        ml.log_spaced_sizes(10, 20, 3)


def test_resource_split_disjoint_and_nested():
    rng = np.random.default_rng(0)
    parts = ml.resource_split(rng, 100, [50, 30, 5])
    assert [len(p) for p in parts] == [50, 30, 5]
    allidx = np.concatenate(parts)
    assert len(np.unique(allidx)) == 85
    nested = ml.resource_split(np.random.default_rng(0), 100, [50, 30, 5], disjoint=False)
    assert set(nested[2]) <= set(nested[1]) <= set(nested[0])
    with pytest.raises(ConfigError):
        ml.resource_split(rng, 10, [6, 6])


def test_multilingual_corpus_labels_rows():
    langs = ml.SyntheticLanguages(9, 3, seed=0)
    base = _rows(n=12, V=9)
    parts = [np.array([0, 1, 2]), np.array([5]), np.array([7, 8])]
    tok, lang_of, row_of = ml.multilingual_corpus(langs, base, parts)
    assert list(lang_of) == [0, 0, 0, 1, 2, 2] and list(row_of) == [0, 1, 2, 5, 7, 8]
    for t, lg, r in zip(tok, lang_of, row_of, strict=True):
        assert np.array_equal(langs.to_base(t, lg), base[r])
