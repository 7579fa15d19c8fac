"""Behaviour tests of privasis: the generator's gold and one-pass tags, chunking, the official
target-selection rules, the leak / retention / success metrics on hand-built records, the rule
scrubber, the tagger (padding, instruction ids, learning a known mapping), the claim checkers
on metrics built to fail and to pass, params errors, and a tiny deterministic pipeline run."""

import json

import numpy as np
import pandas as pd
import pytest

from icml26 import pipeline
from icml26.claims import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED
from icml26.papers.privasis import claims, experiment, rules
from icml26.papers.privasis import generator as gen
from icml26.papers.privasis import metrics as met

T = gen.TOK
C = gen.CAT


def _t(words):
    return np.array([T[w] for w in words.split()], dtype=np.int64)


def _values(**kw):
    v = np.full((gen.N_CAT, 5), -1, dtype=np.int64)
    for c, words in kw.items():
        ids = _t(words)
        v[C[c], :len(ids)] = ids
    return v


def _act(**kw):
    a = np.zeros(gen.N_CAT, dtype=np.int8)
    for c, x in kw.items():
        a[C[c]] = x
    return a


# a hand-built record: subject "fn ln" (first/last names of the vocabulary)
FN, LN = gen.LEX["first"][0], gen.LEX["last"][0]
TPF, TPL = gen.LEX["first"][1], gen.LEX["last"][1]
CITY, STREET = gen.LEX["city"][0], gen.LEX["street"][0]       # street 0 lies in city 0
PCITY = gen.LEX["city"][5]
DOM = gen.LEX["domain"][0]
TEXT = (f"patient {FN} {LN} , born 08 april 1942 , was seen today . "
        f"ms. {LN} lives at 67 {STREET} in {CITY} . "
        f"{FN} {LN} can be reached at {FN} . {LN} @ {DOM} . "
        f"dr. {TPF} {TPL} prescribed it . conference in {PCITY} .")
TOKENS = _t(TEXT)


def _find(words, start=0):
    ids = _t(words)
    for i in range(start, len(TOKENS)):
        if np.array_equal(TOKENS[i:i + len(ids)], ids):
            return i
    raise AssertionError(words)


NAME1, DOB, LAST2 = _find(f"{FN} {LN}"), _find("08 april 1942"), _find(f"ms. {LN}") + 1
ADDR, CITY1 = _find(f"67 {STREET}"), _find(f"in {CITY}") + 1
NAME2 = _find(f"{FN} {LN}", NAME1 + 2)
EMAIL = _find(f"{FN} . {LN} @ {DOM}")
TP, PC = _find(f"{TPF} {TPL}"), _find(f"in {PCITY}") + 1
SPANS = [(NAME1, 2, 0, C["name"]), (DOB, 3, 0, C["dob"]), (LAST2, 1, 0, C["name"]),
         (ADDR, 2, 0, C["address"]), (CITY1, 1, 0, C["city"]), (NAME2, 2, 0, C["name"]),
         (EMAIL, 5, 0, C["email"]), (TP, 2, 1, C["name"]), (PC, 1, 2, C["city"])]
VALUES = _values(name=f"{FN} {LN}", dob="08 april 1942", address=f"67 {STREET}", city=CITY,
                 email=f"{FN} . {LN} @ {DOM}")


def _record():
    rec = gen.Record(tokens=list(TOKENS), spans=SPANS, doc=0)
    rec.sent_starts = [0] + [i + 1 for i in np.nonzero(TOKENS == gen.DOT)[0][:-1]
                             if i + 1 < len(TOKENS) and i + 1 != EMAIL + 2]
    return rec


def _score(tags, act):
    return met.score_record(TOKENS, tags, act, VALUES, SPANS)


def test_gold_tags_remove_linked_email_and_abstract_dob_by_hand():
    act = _act(name=gen.A_REMOVE, dob=gen.A_ABSTRACT)
    tags = gen.gold_tags(_record(), act)
    want = np.zeros(len(TOKENS), dtype=np.int8)
    for s, n in ((NAME1, 2), (LAST2, 1), (NAME2, 2), (EMAIL, 5)):   # email linked to the name
        want[s:s + n] = gen.REMOVE
    want[DOB:DOB + 3] = gen.ABSTRACT
    assert np.array_equal(tags, want)
    out, _ = met.apply_tags(TOKENS, tags)
    text = gen.render(out)
    assert "born 1942 ," in text and FN not in text and LN not in text and DOM not in text
    assert f"dr. {TPF} {TPL}" in text                 # third parties are kept
    r = _score(tags, act)
    assert r["success"] and not (r["direct"] or r["inference"] or r["proximity"])
    assert r["retention"] == 1.0


def test_gold_removes_the_street_when_the_city_is_abstracted():
    act = _act(city=gen.A_ABSTRACT)
    tags = gen.gold_tags(_record(), act)
    assert (tags[ADDR:ADDR + 2] == gen.REMOVE).all() and tags[CITY1] == gen.ABSTRACT
    out, _ = met.apply_tags(TOKENS, tags)
    assert gen.VOCAB[out[list(out).index(T["in"]) + 1]] == gen.LEX["region"][0]
    assert tags[PC] == gen.KEEP                        # the conference city is public


def test_leak_types_in_official_order_by_hand():
    act = _act(name=gen.A_REMOVE, city=gen.A_REMOVE, dob=gen.A_ABSTRACT)
    gold = gen.gold_tags(_record(), act)
    # direct: the full name left in one mention
    t = gold.copy()
    t[NAME2:NAME2 + 2] = gen.KEEP
    r = _score(t, act)
    assert r["reasons"] == {"name": "direct"} and not r["success"]
    # inference: every name mention removed but the email survives; the street reveals the city
    t = gold.copy()
    t[EMAIL:EMAIL + 5] = gen.KEEP
    t[ADDR:ADDR + 2] = gen.KEEP
    r = _score(t, act)
    assert r["reasons"] == {"name": "inference", "city": "inference"}
    # proximity: the last name alone ("ms. ln") and the day of the abstracted DOB survive
    t = gold.copy()
    t[LAST2] = gen.KEEP
    t[DOB] = gen.KEEP
    r = _score(t, act)
    assert r["reasons"] == {"name": "proximity", "dob": "proximity"}
    assert r["proximity"] and not r["direct"] and not r["success"]
    # the year of an abstracted DOB is its coarse form: not a leak
    t = gold.copy()
    t[DOB + 2] = gen.KEEP
    assert _score(t, act)["success"]


def test_retention_and_explicit_keep_attributes_by_hand():
    act = _act(dob=gen.A_REMOVE, address=gen.A_KEEP)
    tags = gen.gold_tags(_record(), act)
    # keep spans: 3 name mentions, address, city, email, third party, public city = 8
    tags[TP] = gen.REMOVE                                   # over-redacts a third party
    r = _score(tags, act)
    assert r["retention"] == pytest.approx(7 / 8) and r["retention_third"] == 0.5
    assert r["success"] and not r["success_spec"]       # official rule vs retention >= 0.9
    tags[ADDR] = gen.REMOVE                                 # the explicit keep attribute lost
    r = _score(tags, act)
    assert not r["keep_ok"] and not r["success"] and r["retention"] == pytest.approx(6 / 8)


def test_one_pass_misses_and_ignores_links():
    rec, act = _record(), _act(name=gen.A_REMOVE)
    tags, occ, miss = gen.one_pass_tags(rec, act, np.random.default_rng(0), 0.0, 0.5)
    assert occ == 3 and miss == 0
    assert (tags[EMAIL:EMAIL + 5] == gen.KEEP).all()   # the linked email is never handled
    assert (tags[NAME1:NAME1 + 2] == gen.REMOVE).all()
    tags, occ, miss = gen.one_pass_tags(rec, act, np.random.default_rng(0), 1.0, 1.0)
    assert miss == occ == 3 and (tags == gen.KEEP).all()
    # the miss probability is min(cap, slope x sentences): 0.5 here, about half missed
    rng = np.random.default_rng(1)
    rate = np.mean([gen.one_pass_tags(rec, act, rng, 0.1, 0.5)[2] / 3 for _ in range(2000)])
    assert abs(rate - 0.5) < 0.03


def test_paragraph_chunks_halved_recursively():
    rec = gen.Record(tokens=list(range(50)), sent_starts=[0, 10, 20, 30, 45],
                     para_starts=[0, 4])
    # paragraph 1 = sentences 0-3 (45 tokens > 20): halved to 0-1 (20) and 2-3 (25 > 20,
    # halved again); paragraph 2 = sentence 4 (5 tokens)
    assert gen.chunks_of(rec, 20) == [(0, 20), (20, 30), (30, 45), (45, 50)]
    assert gen.chunks_of(rec, 100) == [(0, 45), (45, 50)]


def test_target_selection_follows_the_official_rules():
    rng = np.random.default_rng(0)
    present = list(range(gen.N_CAT))
    acts = np.stack([gen.select_targets(rng, present, 0.25) for _ in range(3000)])
    abstr = {gen.CATEGORIES[c] for c in np.nonzero((acts == gen.A_ABSTRACT).any(0))[0]}
    assert abstr == set(gen.ABSTRACTABLE)
    # G = 14: n_abstract = ceil(Beta(2,5) 7) >= 1 drawn from the top 2/3 of the 6 abstractable
    # categories (4) with replacement, so 1-4 distinct; n_drop = round(Beta(2,5) 7)
    na = (acts == gen.A_ABSTRACT).sum(1)
    assert na.min() >= 1 and na.max() <= 4
    assert np.mean((acts == gen.A_REMOVE).sum(1) == 0) > 0.05
    keep = (acts == gen.A_KEEP).any(1)
    assert abs(keep.mean() - 0.25) < 0.03
    assert (acts == gen.A_KEEP).sum(1).max() <= 2
    # a keep attribute is never linked to a target
    for a in acts:
        if a[C["name"]] in (gen.A_REMOVE, gen.A_ABSTRACT):
            assert a[C["email"]] != gen.A_KEEP
        if a[C["city"]] in (gen.A_REMOVE, gen.A_ABSTRACT):
            assert a[C["address"]] != gen.A_KEEP


def test_built_split_gold_is_perfect_and_distractors_never_collide():
    sp = gen.build_split(np.random.default_rng(3), 80, (6, 24), 0.0, 0.25, 40, (0.015, 0.5))
    rows = met.score_split(sp, sp["gold"])
    assert all(r["success"] and r["retention"] == 1.0 for r in rows)
    keep_all = met.score_split(sp, np.zeros_like(sp["gold"]))
    assert np.mean([r["direct"] for r in keep_all]) > 0.8
    # every chunk lies inside its record; chunks tile each record
    off = sp["rec_off"]
    for r in range(len(off) - 1):
        ch = sp["chunks"][sp["chunks"][:, 0] == r]
        assert ch[0, 1] == off[r] and ch[-1, 2] == off[r + 1]
        assert (ch[1:, 1] == ch[:-1, 2]).all()


def test_rule_scrubber_by_hand():
    toks = _t(f"dr. {TPF} {TPL} at 67 {STREET} , 12 34 56 , born 08 april 1942 , room 12 "
              f", {FN} . {LN} @ {DOM} .")
    tags = rules.scrub(toks)
    out, _ = met.apply_tags(toks, tags)
    assert gen.render(out) == f"dr. at 67 {STREET} , , born , room 12 , ."
    assert not (tags == gen.ABSTRACT).any()


def test_tagger_padding_and_instruction_ids():
    torch = pytest.importorskip("torch")
    from icml26.papers.privasis import tagger as tg

    act = np.array([[0, 1, 2, 3] + [0] * 10])
    assert tg.instruction_ids(act).tolist() == [[0, 1 + 3, 1 + 6 + 1, 1 + 9 + 2] + [0] * 10]
    for arch in ("conv", "transformer"):
        torch.manual_seed(0)
        m = tg.Tagger(arch=arch).eval()
        a = torch.as_tensor(TOKENS[:12])[None]
        b = torch.nn.functional.pad(a, (0, 9), value=gen.PAD)
        long = torch.as_tensor(TOKENS[:21])[None]
        ins = torch.as_tensor(tg.instruction_ids(act))
        with torch.no_grad():
            ya = m(a, ins)
            yb = m(torch.cat([b, long]), torch.cat([ins, ins]))
        assert torch.allclose(ya[0], yb[0, :12], atol=1e-5), arch   # padding changes nothing


def test_bucketed_batches_cover_each_chunk_once():
    from icml26.papers.privasis import tagger as tg

    lengths = np.random.default_rng(0).integers(5, 40, size=1000)
    b = tg.bucketed_batches(np.random.default_rng(1), lengths, 64, pool=4)
    assert sorted(np.concatenate(b).tolist()) == list(range(1000))


def test_tagger_learns_the_instruction_and_rule_maps_attribute_tags():
    torch = pytest.importorskip("torch")
    from icml26.papers.privasis import tagger as tg

    sp = gen.build_split(np.random.default_rng(5), 150, (6, 12), 0.0, 0.25, 40, None)
    p = {"d_model": 48, "kernel": 5, "film_hidden": 64, "arch": "conv", "lr": 0.004,
         "weight_decay": 0.0, "batch": 64}
    model, losses, _ = tg.train_tagger(sp, sp["gold"], np.arange(len(sp["chunks"])), p, 0,
                                       torch.device("cpu"), n_steps=150)
    assert losses[-10:].mean() < 0.25 * losses[:5].mean()
    pred = tg.predict(model, sp, torch.device("cpu"))
    # tokens the instruction targets: most are tagged as the instruction says
    tgt = sp["gold"] != gen.KEEP
    assert (pred[tgt] == sp["gold"][tgt]).mean() > 0.6
    assert (pred[~tgt] == gen.KEEP).mean() > 0.98
    # the attribute tagger's rule: the instruction's action for the predicted category
    cats = tg.attribute_targets(sp)
    tags = tg.attribute_to_tags(sp, cats)
    linked_free = met.score_split(sp, tags)
    assert all(not r["direct"] and not r["proximity"] for r in linked_free)


def _metrics(good: bool, seeds=range(5)):
    rows = []
    for s in seeds:
        e = 0.01 * s
        vals = {"proposed": (0.8 + e, 0.7 + e, 0.98, 0.05, 0.06),
                "rule-based": (0.1 + e, 0.1, 0.5, 0.9, 0.9),
                "one-pass": (0.5 + e, 0.3, 0.99, 0.1, 0.3),
                "small-data": (0.2 + e, 0.1, 0.97, 0.5, 0.5)}
        if not good:
            vals = {"proposed": (0.3 + e, 0.2, 0.9, 0.2, 0.5),
                    "rule-based": (0.25 + e, 0.3, 0.95, 0.2, 0.2),
                    "one-pass": (0.3 + e, 0.3, 0.99, 0.2, 0.2),
                    "small-data": (0.3 + e, 0.2, 0.97, 0.5, 0.5)}
        for m, (sv, sh, ret, d1, d3) in vals.items():
            rows.append({"method": m, "setting": "benchmark", "seed": s,
                         "success_vanilla": sv, "success_hard": sh, "retention_vanilla": ret,
                         "retention_third_vanilla": ret, "keep_retention_vanilla": 1.0,
                         "inference_vanilla": 0.0, "direct_t1": d1 + 0.01 * s,
                         "direct_t2": d1, "direct_t3": d3 + 0.01 * s, "n_t1": 100.0,
                         "n_t3": 100.0})
    return pd.DataFrame(rows)


CFG = {"methods": ["proposed", "one-pass", "small-data", "rule-based"]}


def test_claims_pass_on_metrics_built_to_pass():
    out = claims.check(CFG, _metrics(True), None)
    assert len(out) == 5
    for c in out:
        assert c.verdict == REPRODUCED, (c.id, {k: v.verdict for k, v in c.parts.items()})


def test_claims_fail_on_metrics_built_to_fail():
    out = claims.check(CFG, _metrics(False), None)
    for c in out:
        assert c.verdict == NOT_REPRODUCED, (c.id, {k: v.verdict for k, v in c.parts.items()})


def test_failed_runs_never_help_and_zero_leaks_count_as_no_growth():
    m = _metrics(True)
    m.loc[(m["method"] == "proposed") & (m["seed"] == 0), "success_vanilla"] = np.nan
    c1 = claims.check(CFG, m, None)[0]
    assert c1.parts["proposed-rule"].verdict == INCONCLUSIVE and "0" in c1.to_dict()["note"]
    # a failed (NaN) baseline run counts as success 1 for the hard-test margin
    m = _metrics(True)
    m.loc[(m["method"] == "one-pass") & (m["seed"] == 1), "success_hard"] = np.nan
    assert claims.check(CFG, m, None)[2].verdict != REPRODUCED
    m = _metrics(True)
    m.loc[m["method"] == "proposed", ["direct_t1", "direct_t3"]] = 0.0
    stat, n = claims.length_ratio(m, "proposed")
    assert n == 5 and stat(np.arange(5)) == 1.0


def test_bad_params_are_one_config_error_line():
    from pathlib import Path

    from icml26.config import check_params
    from icml26.errors import ConfigError

    root = Path(__file__).resolve().parents[2] / "config"
    for key, bad in (("steps", 0), ("small_frac", 0.0), ("arch", "lstm"), ("n_tran", 5),
                     ("sent_range", [6])):
        cfg = pipeline.resolve("privasis", "default")
        cfg["params"][key] = bad
        with pytest.raises(ConfigError) as info:
            check_params(cfg, root)
        assert "\n" not in str(info.value) and key in str(info.value)
    cfg = pipeline.resolve("privasis", "default")
    with pytest.raises(ConfigError, match="kernel"):
        experiment.check_params({**cfg["params"], "kernel": 4})
    with pytest.raises(ConfigError, match="sent_range"):
        experiment.check_params({**cfg["params"], "sent_range": [9, 3]})


def test_pipeline_tiny_run_is_deterministic(tmp_path):
    cfg = pipeline.resolve("privasis", "smoke")
    cfg["params"].update(n_train=60, n_val=10, n_test=20, n_hard=10, steps=6, curve_every=3,
                         small_frac=0.1)
    a = pipeline.run_inprocess(cfg, tmp_path / "a")
    b = pipeline.run_inprocess(cfg, tmp_path / "b")
    ma, mb = (pd.read_csv(x["metrics"]) for x in (a, b))
    pd.testing.assert_frame_equal(ma, mb)
    doc = json.loads(a["claims"].read_text())
    assert [c["id"] for c in doc["claims"]] == ["C1-headline", "C2-data-scale", "C3-hard-test",
                                                "C4-retention", "C5-length"]
    assert "data_card" in a["report_md"].read_text()
