"""Behaviour tests of the apm paper: the featuriser against scikit-learn's char_wb analyser,
edit distances against a plain dynamic programme, each noise class on cases with known
answers, the intent predictor against scikit-learn's LogisticRegression, the decision policy
and metrics by hand, the claim checkers on data built to pass and to fail, bad params, and the
pipeline end to end (smoke)."""

import numpy as np
import pandas as pd
import pytest

from icml26 import pipeline
from icml26.claims import NOT_REPRODUCED, REPRODUCED
from icml26.papers.apm import claims, experiment, mediator, noise, world

METHODS = ["M1", "M2", "M3", "M4", "M5"]


# featuriser ---------------------------------------------------------------------------------
def _sk_codes(text):
    from sklearn.feature_extraction.text import HashingVectorizer

    grams = HashingVectorizer(analyzer="char_wb", ngram_range=(1, 4)).build_analyzer()(text)
    out = []
    for g in grams:
        code = len(g) << 40
        for k, ch in enumerate(g):
            code |= ord(ch) << (8 * k)
        out.append(code)
    return sorted(out)


@pytest.mark.parametrize("text", ["ab cde", "a", "bavonva boxa vunjuvu", "xx  yy"])
def test_char_ngrams_equal_sklearn_char_wb(text):
    rows, codes = mediator.ngram_codes([text])
    words = text.split()
    # the last len(words) codes are the word unigrams; the rest the char n-grams
    char_codes = sorted(int(c) for c in codes[:len(codes) - len(words)])
    assert char_codes == _sk_codes(text)
    assert (rows == 0).all()


def test_featurise_counts_and_normalises():
    x = mediator.featurise(["ab ab", "", "cd"], n_bits=13).toarray()
    assert np.allclose(np.linalg.norm(x[[0, 2]], axis=1), 1.0)
    assert not x[1].any()                                 # empty utterance: a zero row
    # "ab ab": each n-gram twice -> the same direction as "ab" alone
    y = mediator.featurise(["ab"], n_bits=13).toarray()[0]
    assert np.allclose(x[0], y)
    # word unigrams are separate features: "ab" and "ba" share every 1-gram only
    z = mediator.featurise(["ab", "ba"], n_bits=20).toarray()
    assert 0 < z[0] @ z[1] < 1


# world --------------------------------------------------------------------------------------
def test_edit_distance_against_plain_dp():
    def lev(a, b):
        d = list(range(len(b) + 1))
        for i, ca in enumerate(a, 1):
            prev, d[0] = d[0], i
            for j, cb in enumerate(b, 1):
                prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (ca != cb))
        return d[-1]

    words = ["kitten", "sitting", "ab", "ba", "abc", "x", "flaw", "lawn"]
    d = world.edit_distances(words)
    assert d[0, 1] == 3 and d[6, 7] == 2
    for i, a in enumerate(words):
        for j, b in enumerate(words):
            assert d[i, j] == lev(a, b)


def test_training_intents_cover_every_value_and_template():
    rng = np.random.default_rng(0)
    lang = world.make_language(rng, "L1")
    a, s, t = world.sample_intents(rng, 200, cover=True)
    for j, typ in enumerate(world.SLOT_TYPES):
        assert set(s[:, j][s[:, j] >= 0]) == set(range(world.N_VALUES[typ]))
    assert len({(int(x), int(y)) for x, y in zip(a, t, strict=True)}) == 24
    lex = set(lang.lexicon())
    assert len(lex) == len(lang.lexicon())              # every word unique in its language
    for k in range(20):
        words, is_func = world.render(lang, a[k], s[k], t[k])
        assert set(words) <= lex
        need = world.ACTION_SLOTS[world.ACTIONS[a[k]]]
        for typ in world.SLOT_TYPES:
            assert (s[k, world.SLOT_TYPES.index(typ)] >= 0) == (typ in need)
        assert lang.verbs[world.ACTIONS[a[k]]] in words and not all(is_func)


# noise --------------------------------------------------------------------------------------
def _batch():
    rng = np.random.default_rng(1)
    lang = world.make_language(rng, "L1")
    a, s, t = world.sample_intents(rng, 40)
    return experiment.LangData(lang, a, s, t)


@pytest.mark.parametrize("cls", noise.CLASSES)
def test_severity_zero_is_clean(cls):
    d = _batch()
    assert d.texts(cls, 0.0, np.random.default_rng(0)) == d.texts()


def test_generic_at_one_changes_every_letter_and_keeps_spaces():
    d = _batch()
    clean, noisy = d.texts(), d.texts("generic", 1.0, np.random.default_rng(0))
    for a, b in zip(clean, noisy, strict=True):
        assert len(a) == len(b)
        assert all((x == " ") == (y == " ") and (x == " " or x != y)
                   for x, y in zip(a, b, strict=True))


def test_motor_substitutes_adjacent_keys_doubles_or_drops():
    rng = np.random.default_rng(0)
    out = noise.motor(["g" * 2000], 1.0, rng)[0]
    near = {chr(c) for c in noise.ADJ[ord("g") - noise.A, :noise.ADJ_N[ord("g") - noise.A]]}
    assert near == set("bfhtvy")                          # QWERTY neighbours of g
    assert set(out) <= near | {"g"}
    # 40% adjacent (1 char), 30% doubled (2 chars "gg"), 30% dropped: length ~ 0.4+0.6 = 1.0
    n_adj = sum(ch != "g" for ch in out)
    assert abs(n_adj / 2000 - 0.4) < 0.05
    assert abs(out.count("g") / 2000 - 0.6) < 0.07


def test_dyslexia_swaps_interior_and_uses_confusables():
    rng = np.random.default_rng(0)
    # s = 0.5: every word of length >= 4 swaps two interior letters (letter-level prob 0.25)
    outs = noise.dyslexia(["abcdef"] * 400, 0.5, rng)
    ok_conf = {"a": "eiou", "b": "d", "c": "", "d": "b", "e": "aiou", "f": ""}
    for o in outs:
        assert len(o) == 6 and o[0] in "a" + ok_conf["a"] and o[-1] in "f"
    swapped = sum(o[1:5] != "bcde" for o in outs)
    assert swapped == 400 or swapped >= 390
    # confusable substitution only (no swap in words of length < 4)
    outs = noise.dyslexia(["bpm"] * 500, 0.5, np.random.default_rng(1))
    for o in outs:
        assert o[0] in "bd" and o[1] in "pq" and o[2] in "mn"


def test_speech_errors_are_nearest_lexicon_words_or_deletions():
    d = _batch()
    w, u = noise.speech(d.ids, d.utt, 1.0, d.nearest, np.random.default_rng(0))
    dist = world.edit_distances(d.vocab)
    # every surviving word was substituted by one of its nearest other words
    assert w.size < d.ids.size                                      # some deleted (30%)
    assert abs(w.size / d.ids.size - 0.7) < 0.1
    orig_by_utt = {k: list(d.ids[d.utt == k]) for k in range(d.n)}
    for k in range(d.n):
        for word in w[u == k]:
            assert any(dist[o, word] == min(dist[o, j] for j in range(len(d.vocab)) if j != o)
                       and o != word for o in orig_by_utt[k])


def test_cognitive_deletes_all_function_words_at_half():
    d = _batch()
    w, u = noise.cognitive(d.ids, d.utt, d.is_func, 0.5, np.random.default_rng(0), d.n)
    func = {d.index[x] for x in d.lang.function_words()}
    assert not set(w.tolist()) & func
    content = (~d.is_func).sum()
    assert abs(w.size / content - (1 - 0.5 / 3)) < 0.1     # content dropped with prob s/3


def test_per_utterance_severity():
    texts = ["abcd efgh"] * 2
    out = noise.generic(texts, np.array([0.0, 1.0]), np.random.default_rng(0))
    assert out[0] == texts[0] and all(x != y for x, y in zip(out[1], texts[1], strict=True)
                                      if x != " ")


# predictor, policy, metrics -----------------------------------------------------------------
def test_intent_predictor_matches_sklearn_logistic_regression():
    import scipy.sparse as sp
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    n, d = 120, 12
    x = rng.normal(size=(n, d))
    action = rng.integers(0, len(world.ACTIONS), n)
    x[np.arange(n), action] += 1.5                        # learnable but not separable
    slots = np.full((n, len(world.SLOT_TYPES)), -1)
    l2 = 0.05
    model = mediator.IntentPredictor(l2=l2, lr=0.02, steps=3000, batch=n, log_every=100,
                                     seed=0).fit(sp.csr_matrix(x), action, slots)
    ref = LogisticRegression(C=1.0 / (l2 * n), tol=1e-10, max_iter=10000).fit(x, action)
    p_ours = model.proba(sp.csr_matrix(x))[0]
    assert np.abs(p_ours - ref.predict_proba(x)).max() < 5e-3
    assert model.loss_curve_[-1] < model.loss_curve_[0]


def test_confidence_is_min_of_action_and_required_slots():
    m = mediator.IntentPredictor()
    K = sum(mediator.HEAD_SIZES)
    m.W_, m.b_ = np.zeros((4, K)), np.zeros(K)
    offs = np.concatenate([[0], np.cumsum(mediator.HEAD_SIZES)])
    a = world.ACTIONS.index("book_table")                 # needs place and time
    m.b_[offs[0] + a] = 5.0
    place, time = world.SLOT_TYPES.index("place"), world.SLOT_TYPES.index("time")
    m.b_[offs[1 + place] + 1 + 3] = 4.0                   # place value 3
    m.b_[offs[1 + time]] = 6.0                            # time: "none" most likely
    m.b_[offs[1 + time] + 1 + 7] = 2.0                    # best time value 7
    import scipy.sparse as sp

    act, slots, conf = m.predict(sp.csr_matrix(np.zeros((1, 4))))
    probs = m.proba(sp.csr_matrix(np.zeros((1, 4))))
    assert act[0] == a and slots[0, place] == 3 and slots[0, time] == 7
    assert (slots[0, [j for j in range(5) if j not in (place, time)]] == -1).all()
    expect = min(probs[0][0, a], probs[1 + place][0, 4], probs[1 + time][0, 8])
    assert np.isclose(conf[0], expect) and expect == probs[1 + time][0, 8]


def test_decision_policy_and_turn_metrics_by_hand():
    conf = np.array([0.95, 0.7, 0.5, 0.4, 0.2, 0.15, 0.1])
    dec = mediator.decide(conf, 0.7, 0.4, 0.15)
    assert dec.tolist() == [0, 0, 1, 1, 2, 2, 3]
    assert mediator.decide(np.array([0.0]), 0.3, 0.15, 0.0).tolist() == [2]   # M4 never declines
    act_ok = np.array([1, 1, 1, 0, 1, 0, 1], bool)
    int_ok = np.array([1, 0, 1, 0, 1, 0, 0], bool)
    r = mediator.turn_metrics(dec, act_ok, int_ok)
    assert np.isclose(r["acc"], 5 / 7) and np.isclose(r["ip"], 2 / 7)
    assert np.isclose(r["hm"], 2 / 7)                     # turns 1 and 3 act on a wrong intent
    assert np.isclose(r["cb"], (0 + 0 + 0.5 + 0.5 + 1 + 1 + 1) / 7)
    f = np.array([2, 2, 2, 1]) / 7
    assert np.isclose(r["entropy"], -(f * np.log(f)).sum() / np.log(4))
    assert mediator.turn_metrics(np.zeros(5, np.int8), act_ok[:5], int_ok[:5])["entropy"] == 0


# claims -------------------------------------------------------------------------------------
def _fake(passing: bool, seeds=range(5)):
    rng = np.random.default_rng(0)
    ip = {"M1": 0.40, "M2": 0.45, "M3": 0.50, "M4": 0.60, "M5": 0.30}
    hm = {"M1": 0.04, "M2": 0.05, "M3": 0.04, "M4": 0.15, "M5": 0.02}
    cb = {"M1": 0.6, "M2": 0.55, "M3": 0.5, "M4": 0.35, "M5": 0.75}
    rows, curves = [], []
    for seed in seeds:
        for m in METHODS:
            e = rng.normal(0, 0.003)
            row = {"method": m, "setting": "mediation", "seed": seed}
            for c in noise.CLASSES:
                row[f"acc_{c}"] = 0.95 if passing else ip[m] + 0.02
                row[f"ip_{c}"] = ip[m] + e + (0.1 if c == "generic" and passing else
                                              (-0.1 if c == "generic" else 0))
                row[f"hm_{c}"] = hm[m] * (3.0 if (c == "speech" and passing) else 1.0)
                row[f"cb_{c}"] = cb[m] if passing else 0.5
                row[f"ask_{c}"] = 0.6
            for ax in ("acc", "ip", "cb", "hm"):
                row[f"{ax}_access"] = np.mean([row[f"{ax}_{c}"] for c in noise.ACCESS])
            if not passing:   # reverse the M3 > M1, M2 ordering
                row["ip_access"] = {"M3": 0.3}.get(m, row["ip_access"])
            row["gap_access"] = row["acc_access"] - row["ip_access"]
            row["entropy_mean"] = 0.6 if passing else 0.9
            rows.append(row)
            for c in noise.CLASSES:
                for k, s in enumerate((0, 10, 20, 30)):
                    v = ip[m] - 0.1 * k if passing else ip[m] + 0.05 * k
                    curves.append({"method": m, "setting": "mediation", "seed": seed,
                                   "step": s, "metric": f"ip/{c}", "value": v})
    return pd.DataFrame(rows), pd.DataFrame(curves)


def test_claims_pass_on_data_built_to_pass():
    cfg = pipeline.resolve("apm", "default")
    metrics, curves = _fake(True)
    out = {c.id: c for c in claims.check(cfg, metrics, curves)}
    for cid, c in out.items():
        assert c.verdict == REPRODUCED, (cid, c.to_dict())
    assert "speech" in out["C2-hm-by-noise-type"].to_dict()["note"]


def test_claims_fail_on_data_built_to_fail():
    cfg = pipeline.resolve("apm", "default")
    metrics, curves = _fake(False)
    out = {c.id: c for c in claims.check(cfg, metrics, curves)}
    for cid, c in out.items():
        assert c.verdict == NOT_REPRODUCED, (cid, c.to_dict())


def test_hm_ratio_fraction_and_failed_runs():
    assert claims.hm_ratio([0.1, 0.05, 0.2, 0.1]) == 4.0
    assert claims.hm_ratio([0.0, 0.1, 0.1, 0.1]) == np.inf
    assert np.isnan(claims.hm_ratio([0.0, 0.0, 0.0, 0.0]))
    arr = np.zeros((3, 5, 4))
    arr[:, :3] = [0.3, 0.1, 0.1, 0.1]      # 3 mediators with ratio 3
    arr[:, 3:] = [0.1, 0.1, 0.1, 0.1]      # 2 with ratio 1
    assert claims.ratio_fraction(arr, np.arange(3)) == pytest.approx(0.6)
    # a failed run (NaN) cannot help a claim pass
    cfg = pipeline.resolve("apm", "default")
    metrics, curves = _fake(True)
    metrics.loc[(metrics["method"] == "M4") & (metrics["seed"] == 2), "gap_access"] = np.nan
    c = next(c for c in claims.check(cfg, metrics, curves) if c.id == "C1-overestimation")
    assert c.verdict != REPRODUCED and "seeds 2" in c.to_dict()["note"]


def test_bad_params_are_one_config_error_line():
    from pathlib import Path

    from icml26.config import check_params
    from icml26.errors import ConfigError

    root = Path(__file__).resolve().parents[2] / "config"
    for key, bad in (("n_train", 10), ("steps", 0), ("severities", [0.0, 0.2]),
                     ("n_languags", 3), ("lr", -1.0)):
        cfg = pipeline.resolve("apm", "default")
        cfg["params"][key] = bad
        with pytest.raises(ConfigError) as info:
            check_params(cfg, root)
        assert "\n" not in str(info.value)
        assert key in str(info.value) or (key == "severities" and "severities" in
                                          str(info.value))


def test_smoke_end_to_end(tmp_path):
    cfg = pipeline.resolve("apm", "smoke")
    cfg["params"]["steps"] = 20
    paths = pipeline.run_inprocess(cfg, tmp_path)
    metrics = pd.read_csv(paths["metrics"])
    assert sorted(metrics["method"]) == METHODS
    # M2, M4, M5 share one predictor: identical task accuracy, ordered burden
    acc = metrics.set_index("method")["acc_access"]
    assert acc["M2"] == acc["M4"] == acc["M5"]
    cb = metrics.set_index("method")["cb_access"]
    assert cb["M4"] <= cb["M2"] <= cb["M5"]
    assert "data_card" in paths["report_md"].read_text()
