"""Behaviour tests of medmosaic: the generator (rates, conditions, speech timing), the features
and the cascade's front end on hand-built cases, answer balance, each system on a case with a
known answer (sklearn references for the classifiers), the reasoner's window, scoring by hand,
claim checkers on data built to pass and to fail, params errors, and the smoke pipeline."""

import numpy as np
import pandas as pd
import pytest

from icml26 import pipeline
from icml26.claims import NOT_REPRODUCED, REPRODUCED
from icml26.papers.medmosaic import audio as A
from icml26.papers.medmosaic import bench, claims, experiment, features, models, scoring


def test_rate_categories_and_draws_inside_them():
    assert A.rate_category(59.9, "heart") == "hr-low"
    assert A.rate_category(100.0, "heart") == "hr-normal"
    assert A.rate_category(21.0, "lung") == "rr-high"
    rng = np.random.default_rng(0)
    for site in ("heart", "lung"):
        for k in range(3):
            r = [A.rate_in_category(rng, k, site) for _ in range(50)]
            assert {A.rate_category(x, site) for x in r} == {bench.RATES[site][k]}


def test_dominant_ioi_recovers_the_beat_interval_of_a_clean_heart():
    rng = np.random.default_rng(1)
    for hr in (50.0, 75.0, 120.0):
        x = A.heart(rng, "normal", hr, snr_db=(30.0, 30.0))
        assert abs(features.dominant_ioi(x) - 60.0 / hr) <= 0.02


def test_murmur_adds_energy_in_its_band():
    clean = A.heart(np.random.default_rng(3), "normal", 70.0, snr_db=(60.0, 60.0))
    murm = A.heart(np.random.default_rng(3), "murmur", 70.0, snr_db=(60.0, 60.0))
    f = np.fft.rfftfreq(len(clean), 1 / A.SR)
    band, low = (f > 160) & (f < 290), (f > 40) & (f < 80)   # murmur band; S1/S2 at 60 Hz
    c, m = np.abs(np.fft.rfft(clean)), np.abs(np.fft.rfft(murm))
    assert m[band].mean() / m[low].mean() > 3 * c[band].mean() / c[low].mean()


def test_speech_timing_and_lexicon():
    rng = np.random.default_rng(4)
    x, spans = A.speech(rng, [["cough", "aspirin"], ["knee"]], [120.0, 200.0])
    syl, sgap, wgap, tgap = (int(v * A.SR) for v in (A.SYLLABLE_S, A.SYL_GAP_S, A.WORD_GAP_S,
                                                     A.TURN_GAP_S))
    word = 2 * syl + sgap
    edge = int(A.EDGE_S * A.SR)
    assert [s[2] for s in spans] == [edge, edge + word + wgap, edge + 2 * word + wgap + tgap]
    assert len(x) == spans[-1][3] + edge
    assert len(set(A.LEXICON.values())) == 24 and all(a != b for a, b in A.LEXICON.values())


def test_front_end_transcribes_clean_speech_and_stutter_gives_unknown_word():
    rng = np.random.default_rng(5)
    words = ["fever", "two", "insulin", "chest", "rash", "ten"]
    split = {"syl_clip": [], "syl_word": [], "syl_prof": []}
    for cid, art in enumerate(("none", "stutter")):
        x, _ = A.speech(rng, [words], [150.0], art, target=(0, 4))
        groups = features.segment(x)
        spans = [s for g in groups for s in g]
        _, prof = features.harmonic_profiles(x, spans)
        split["syl_clip"] += [cid] * len(spans)
        split["syl_word"] += [i for i, g in enumerate(groups) for _ in g]
        split["syl_prof"].append(prof)
    split = {k: (np.concatenate(v) if k == "syl_prof" else np.asarray(v))
             for k, v in split.items()}
    tr = models.transcripts(split)
    assert tr[0] == words
    assert tr[1] == words[:4] + [models.UNK] + words[5:]


def test_harmonic_profile_of_a_pure_vowel_matches_its_template():
    for v in range(8):
        for f0 in (110.0, 220.0):
            x = np.concatenate([np.zeros(100), A.syllables(f0, np.zeros(6))[v], np.zeros(100)])
            f, prof = features.harmonic_profiles(x, [(100, 400)])
            assert abs(f[0] - f0) <= 1.0
            assert models.decode_vowels(prof)[0] == v


def test_answers_are_balanced_and_options_hold_the_answer():
    s = bench.build_split(np.random.default_rng(6), 24)
    types, ans = s["item_type"].astype(str), s["item_answer"].astype(str)
    for t, site, k in (("T1", "heart", 4), ("T1", "lung", 4), ("T2", "heart", 3),
                       ("T5", "voice", 6)):
        m = (types == t) & (s["item_site"].astype(str) == site)
        counts = pd.Series(ans[m]).value_counts()
        assert len(counts) == k and counts.max() - counts.min() <= 1
    for a, opts, t in zip(ans, s["item_options"].astype(str), types, strict=True):
        assert t == "T5" or a in opts
    # T4: three turns per clip, step three is the lookup of steps one and two
    t4 = np.flatnonzero(types == "T4")
    for c in np.unique(s["item_chain"][t4]):
        i0, i1, i2 = t4[s["item_chain"][t4] == c]
        site = str(s["item_site"][i0])
        assert ans[i2] == bench.next_step(bench.CONDITIONS[site].index(ans[i0]),
                                          bench.RATES[site].index(ans[i1]))
    # next-step table: 12 pairs, 3 per step
    steps = [bench.next_step(c, r) for c in range(4) for r in range(3)]
    assert sorted(pd.Series(steps).value_counts()) == [3, 3, 3, 3]


def test_reasoner_window_and_fallbacks():
    words = ["cough", "two", "aspirin", "knee", "rash", "ten", "warfarin"]
    opts = ["aspirin", "warfarin", "insulin", "metformin"]
    assert models.reason_t3(words, "cough", opts, 24) == "aspirin"
    assert models.reason_t3(words, "rash", opts, 24) == "warfarin"
    assert models.reason_t3(words, "cough", opts, 4) is None     # out of the window
    assert models.reason_t5(["two", "rash", "knee", "rash", "pain"], 24) == "rash pain"
    assert models.reason_t5(["two", "knee"], 24) is None


def test_scoring_by_hand():
    s = {"item_type": np.array(["T1", "T1", "T4", "T4", "T4", "T4", "T4", "T4", "T3", "T3",
                                "T5", "T5", "T2", "T2"]),
         "item_turn": np.array([-1, -1, 0, 1, 2, 0, 1, 2, -1, -1, -1, -1, -1, -1]),
         "item_chain": np.array([-1, -1, 0, 0, 0, 1, 1, 1, -1, -1, -1, -1, -1, -1]),
         "item_context": np.array(["", "", "", "", "", "", "", "", "short", "long", "", "",
                                   "", ""]),
         "item_artifact": np.array([""] * 10 + ["none", "hoarse", "", ""]),
         "item_answer": np.array(["a", "b", "c", "d", "e", "c", "d", "e", "m", "m", "rash",
                                  "pain", "x", "y"])}
    pred = ["a", "z", "c", "d", "e", "c", "z", "e", "m", "z", "RASH", "pain fever", "x", "y"]
    out = scoring.score(s, pred)
    assert out["acc_T1"] == 0.5 and out["acc_T4"] == 5 / 6
    assert out["chain_T4"] == 0.5 and out["turn_min_T4"] == 0.5
    assert out["acc_T3_short"] == 1.0 and out["acc_T3_long"] == 0.0
    assert out["em_T5_none"] == 1.0 and out["em_T5_hoarse"] == 0.0
    assert out["f1_T5"] == pytest.approx((1.0 + 2 * 0.5 * 1 / 1.5) / 2)
    assert out["weighted_acc"] == pytest.approx(10 / 14)
    assert out["type_range"] == pytest.approx(1.0 - 0.5)


def _mlp_params():
    cfg = pipeline.resolve("medmosaic", "smoke")
    return experiment._mlp_params(cfg)


def test_text_only_matches_sklearn_and_is_at_chance_on_balanced_data():
    from sklearn.linear_model import LogisticRegression

    tr = bench.build_split(np.random.default_rng(7), 24)
    te = bench.build_split(np.random.default_rng(8), 24)
    m = models.TextOnly().fit(tr)
    ref = LogisticRegression(C=1.0, max_iter=1000).fit(m._bow(tr), tr["item_answer"])
    assert np.allclose(m.model_.predict_proba(m._bow(te)), ref.predict_proba(m._bow(te)))
    pred = m.predict(te)
    t1 = (te["item_type"] == "T1")
    # every T1 question of a site has the same text: one constant answer per site
    for site in ("heart", "lung"):
        assert len(set(pred[t1 & (te["item_site"] == site)])) == 1


def test_mlp_grid_edge_rule_extends_the_cap_only_on_the_edge():
    assert models.extended_cap(10, 10, 0, 2) == 20
    assert models.extended_cap(20, 20, 1, 2) == 40
    assert models.extended_cap(40, 40, 2, 2) == 40     # at most twice
    assert models.extended_cap(7, 10, 0, 2) == 10      # inside the cap: stop
    rng = np.random.default_rng(9)
    x = rng.standard_normal((300, 4))
    y = (x[:, 0] > 0).astype(int)
    p = {**_mlp_params(), "max_iter": 300, "patience": 10, "batch_size": 50, "lr": 0.01}
    _, fit = models.fit_mlp(x, y, [8], p, seed=0)
    assert fit["epoch_cap"] == 300 and fit["best_epoch"] < 300 and fit["val_acc"] >= 0.9


def test_audio_cls_and_e2e_learn_a_separable_case_and_cascade_uses_the_text_fallback():
    tr = bench.build_split(np.random.default_rng(10), 150)
    te = bench.build_split(np.random.default_rng(11), 24)
    text = models.TextOnly().fit(tr).predict(te)
    ac = models.AudioCls(_mlp_params(), 0).fit(tr)
    pa = ac.predict(te, text)
    types = te["item_type"].astype(str)
    # T3 / T5 fall back to the text prior exactly
    assert (pa[np.isin(types, ("T3", "T5"))] == text[np.isin(types, ("T3", "T5"))]).all()
    # the rate category is easy from the descriptors: far above chance
    assert scoring.score(te, pa)["acc_T2"] >= 0.55         # chance 1/3
    # the cascade copies AUDIO-CLS on physiological items and reads clean speech well
    pc = models.Cascade(24).predict(te, pa, text)
    phys = np.isin(types, ("T1", "T2", "T4"))
    assert (pc[phys] == pa[phys]).all()
    s = scoring.score(te, pc)
    assert s["acc_T3_short"] >= 0.8 and s["em_T5_none"] >= 0.6
    assert (models.oracle(te) == te["item_answer"]).all()
    e2 = models.E2EMLP(_mlp_params(), 0).fit(tr)
    pe = e2.predict(te)
    assert set(pe[types == "T5"]) <= set(A.SYMPTOMS)


def _metrics(good=True):
    rows = []
    for seed in range(5):
        j = 0.01 * seed
        base = {"setting": "benchmark", "seed": seed}
        vals = {
            "text-only": dict(weighted_acc=0.27 + j, acc_T1=0.25, acc_T2=0.33 + j,
                              acc_T3=0.26 + j, type_range=0.1, chain_T4=0.05,
                              turn_mean_T4=0.3, turn_min_T4=0.25, acc_T3_long=0.3,
                              acc_T3_short=0.3),
            "audio-cls": dict(weighted_acc=0.6 + j, type_range=0.7, chain_T4=0.6 + j,
                              turn_mean_T4=0.8, turn_min_T4=0.7, acc_T3_long=0.3,
                              acc_T3_short=0.3),
            "cascade": dict(weighted_acc=0.78 + j, type_range=0.4, chain_T4=0.6 + j,
                            turn_mean_T4=0.8, turn_min_T4=0.7, acc_T3_long=0.7 + j,
                            acc_T3_short=0.98),
            "e2e-mlp": dict(weighted_acc=0.6 + j, type_range=0.6, chain_T4=0.4 + j,
                            turn_mean_T4=0.7, turn_min_T4=0.45, acc_T3_long=0.3,
                            acc_T3_short=0.3),
            "oracle": dict(weighted_acc=1.0, type_range=0.0, chain_T4=1.0, turn_mean_T4=1.0,
                           turn_min_T4=1.0, acc_T3_long=1.0, acc_T3_short=1.0),
        }
        if not good:
            vals["cascade"].update(weighted_acc=0.95 + j / 5, acc_T3_long=0.97,
                                   type_range=0.1)
            vals["text-only"].update(acc_T1=0.5 + j)
            vals["audio-cls"].update(chain_T4=0.7, turn_min_T4=0.7)
            vals["oracle"].update(weighted_acc=1.0 - (seed == 2) * 0.1)
        for m, v in vals.items():
            rows.append({"method": m, **base, **v})
    return pd.DataFrame(rows)


def test_claims_pass_on_data_built_to_pass():
    cfg = pipeline.resolve("medmosaic", "default")
    out = {c.id: c for c in claims.check(cfg, _metrics(True), None)}
    assert all(c.verdict == REPRODUCED for c in out.values()), \
        {k: (c.verdict, {p: q.verdict for p, q in c.parts.items()}) for k, c in out.items()}
    assert "cascade" in out["C1-hard-but-solvable"].note


def test_claims_fail_on_data_built_to_fail():
    cfg = pipeline.resolve("medmosaic", "default")
    out = {c.id: c for c in claims.check(cfg, _metrics(False), None)}
    assert all(c.verdict == NOT_REPRODUCED for c in out.values()), \
        {k: c.verdict for k, c in out.items()}
    c1 = out["C1-hard-but-solvable"]
    assert c1.parts["best_weighted_acc"].verdict == NOT_REPRODUCED
    assert c1.parts["oracle_weighted_acc"].verdict == NOT_REPRODUCED
    assert out["C5-multi-turn"].parts["audio-cls: chain-min"].verdict == NOT_REPRODUCED


def test_failed_run_cannot_support_a_claim():
    cfg = pipeline.resolve("medmosaic", "default")
    m = _metrics(True)
    m.loc[(m["method"] == "cascade") & (m["seed"] == 3), "acc_T3_long"] = np.nan
    c = next(c for c in claims.check(cfg, m, None) if c.id == "C4-long-context")
    assert c.verdict != REPRODUCED and "seeds 3" in c.to_dict()["note"]


def test_bad_params_are_one_config_error_line():
    from pathlib import Path

    from icml26.config import check_params
    from icml26.errors import ConfigError

    root = Path(__file__).resolve().parents[2] / "config"
    for key, bad in (("n_test_per_type", 0), ("window", -1), ("lr", 0.0),
                     ("val_fraction", 0.7), ("n_tets_per_type", 3)):
        cfg = pipeline.resolve("medmosaic", "default")
        cfg["params"][key] = bad
        with pytest.raises(ConfigError) as info:
            check_params(cfg, root)
        assert "\n" not in str(info.value) and key in str(info.value)


def test_smoke_end_to_end(tmp_path):
    cfg = pipeline.resolve("medmosaic", "smoke")
    cfg["params"].update(n_test_per_type=15, n_train_per_type=30)
    paths = pipeline.run_inprocess(cfg, tmp_path)
    m = pd.read_csv(paths["metrics"]).set_index("method")
    assert m.loc["oracle", "weighted_acc"] == 1.0
    # CASCADE equals AUDIO-CLS on the physiological types (its fallback)
    for col in ("acc_T1", "acc_T2", "acc_T4", "chain_T4"):
        assert m.loc["cascade", col] == m.loc["audio-cls", col]
    assert m["card_test_items"].nunique() == 1
    page = paths["report_md"].read_text()
    assert "data_card" in page and "built in by construction" in page
