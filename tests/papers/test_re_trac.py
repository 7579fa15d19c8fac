"""Behaviour tests of the re-trac paper: the policy's scores by hand, the window forgetting
(and re-fetching) exactly, the compressor's state by hand, the budget accounting of every
method, the majority vote, independence of questions from their batch, claim checkers on data
built to pass and to fail, params errors, and the pipeline end to end (smoke)."""

import json
import random

import numpy as np
import pandas as pd
import pytest

from icml26 import pipeline
from icml26.agents import Call, Observation, Step
from icml26.agents.worlds.browse import BrowseTask, BrowseWorld, make_questions, make_table
from icml26.claims import NOT_REPRODUCED, REPRODUCED
from icml26.papers.re_trac import agent, claims, experiment
from icml26.papers.re_trac.agent import Memory, PolicyParams

# a question with clues on attributes 0 and 1 (entity 7 is the answer)
TASK = BrowseTask(0, ((0, 1), (1, 2)), 7)
CLUE_OF = {(0, 1): 0, (1, 2): 1}


def search(a, v, p, ids, last=False):
    return Step(0, Call("search", (a, v, p)), Observation({"ids": tuple(ids), "last": last},
                                                           tokens=12), 12, 0.0)


def opened(e, row):
    return Step(0, Call("open", (e,)), Observation(tuple(row), tokens=16), 16, 0.0)


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(3)
    table, rank = make_table(rng, 300, 6, 10)
    return BrowseWorld(table, rank, n_values=10), make_questions(rng, table, 30, 4)


def test_candidate_scores_by_hand():
    pp = PolicyParams()
    mem = Memory(TASK, None, CLUE_OF)
    acts, scores = agent.candidate_scores(mem, pp)
    # nothing known: page 0 of each clue, 1.0 + 0.5 (no candidate satisfies >= 2 clues)
    assert acts == [Call("search", (0, 1, 0)), Call("search", (1, 2, 0))]
    assert scores == [1.5, 1.5]
    mem.apply(search(0, 1, 0, [7, 3]), +1)
    mem.apply(search(1, 2, 0, [7, 9], last=True), +1)
    got = dict(zip(*agent.candidate_scores(mem, pp), strict=True))
    assert got[Call("open", (7,))] == 1.0 + 1.5 * 2
    assert got[Call("open", (3,))] == got[Call("open", (9,))] == 1.0 + 1.5
    # 7 satisfies 2 clues: no search bonus; clue 1's only page was the last: no search for it
    assert got[Call("search", (0, 1, 1))] == 1.0 and len(got) == 4
    mem.apply(opened(7, [1, 2, 0, 0, 0, 0]), +1)
    got = dict(zip(*agent.candidate_scores(mem, pp), strict=True))
    assert got[Call("answer", (7,))] == 10.0 and Call("open", (7,)) not in got
    # the plan bonus (ours) goes to the first plan_top plan actions that are candidates
    plan = [Call("open", (99,)), Call("open", (9,)), Call("search", (0, 1, 1))]
    got = dict(zip(*agent.candidate_scores(mem, PolicyParams(plan_top=1), plan), strict=True))
    assert got[Call("open", (9,))] == 2.5 + 1.0 and got[Call("search", (0, 1, 1))] == 1.0


def test_softmax_sampling_matches_the_scores():
    mem = Memory(TASK, None, CLUE_OF)
    mem.apply(search(0, 1, 0, [7, 3]), +1)
    acts, scores = agent.candidate_scores(mem, PolicyParams())
    p = np.exp(np.array(scores) / 0.7)
    p /= p.sum()
    rng = random.Random(0)
    n = 20000
    counts = {a: 0 for a in acts}
    for _ in range(n):
        counts[agent.choose(mem, PolicyParams(), rng)] += 1
    freq = np.array([counts[a] / n for a in acts])
    assert np.abs(freq - p).max() < 0.015


def test_window_forgets_exactly_and_the_policy_refetches():
    mem = Memory(TASK, None, CLUE_OF)
    s0, s1 = search(0, 1, 0, [7, 3]), search(0, 1, 1, [5], last=True)
    mem.apply(s0, +1)
    mem.apply(s1, +1)
    assert mem.next_page(0) is None                 # both pages known, the last one seen
    mem.apply(s0, -1)                               # page 0 leaves the window
    assert mem.next_page(0) == 0 and 7 not in mem.seen and mem.seen[5] == 0b01
    mem.apply(s0, +1)                               # the same page seen twice, once forgotten
    mem.apply(s0, +1)
    mem.apply(s0, -1)
    assert 7 in mem.seen and mem.next_page(0) is None


def test_compressor_state_by_hand():
    steps = [search(0, 1, 0, [7, 3, 4, 5, 6]), search(1, 2, 0, [7, 3, 8], last=True),
             opened(4, [1, 0, 0, 0, 0, 0])]
    st = agent.compress(None, TASK, steps, 2, CLUE_OF)
    assert st.evidence == [{7, 3, 4, 5, 6}, {7, 3, 8}]
    assert st.opened == {4: 0b01} and st.failures() == [4]
    assert st.fetched == [{0}, {0}] and st.last_page == [None, 0]
    assert st.uncertainties == [3, 7]               # seen for 2 clues, unopened (by id)
    # plan: open the uncertainties, then the next page of the least-searched open clue
    assert st.plan == [Call("open", (3,)), Call("open", (7,)), Call("search", (0, 1, 1))]
    # current answer: best-supported = seen for 2 clues (3 and 7 tie: the lower id)
    assert st.current_answer == 3
    # items: evidence 5 + 3, opened 1, uncertainties 2, failures 1, pages 2, plan 3, answer 1
    assert st.n_items() == 18
    # the next round opens 7 (all clues): it replaces the answer; the state is cumulative
    st2 = agent.compress(st, TASK, [opened(7, [1, 2, 0, 0, 0, 0])], 2, CLUE_OF)
    assert st2.current_answer == 7 and st2.evidence == st.evidence and 4 in st2.opened
    assert st2.uncertainties == [3]
    # a round that finds nothing better keeps the answer (not replaced on equal evidence)
    st3 = agent.compress(st2, TASK, [opened(3, [1, 2, 5, 5, 5, 5])], 2, CLUE_OF)
    assert st3.current_answer == 7


def test_majority_vote():
    assert agent.majority([1, 2, 2, 1]) == 1          # tie: the latest
    assert agent.majority([5, None, 5, 2]) == 5
    assert agent.majority([None, None]) is None


@pytest.mark.parametrize("method", ["react", "re-trac", "restarts", "react-full",
                                    "re-trac-official", "re-trac-noplan"])
def test_budgets_and_token_accounting(small, method):
    world, qs = small
    B, W = 40, 6
    pp = PolicyParams(plan_bonus=0.0 if method == "re-trac-noplan" else 1.0)
    res = agent.run_method(world, qs, method, budget=B, window=W, rounds=4, pp=pp,
                           seeds=list(range(len(qs))), cycles=8)
    R = {"react": 1, "react-full": 1, "re-trac-official": 8}.get(method, 4)
    for calls, toks, stoks, n in zip(res.calls, res.tokens, res.state_tokens, res.n_calls,
                                     strict=True):
        assert len(calls) == R and sum(calls) == n <= B
        cap = W if method == "re-trac-official" else B // R
        assert max(calls) <= cap
        # tokens = observation tokens (12 or 16 per call) + the state read by the round
        obs = np.array(toks) - np.array(stoks)
        assert np.all(obs >= 12 * np.array(calls)) and np.all(obs <= 16 * np.array(calls))
        assert stoks[0] == 0 and (method in agent_state_methods() or sum(stoks) == 0)
    assert np.array_equal(res.correct, [world.verify(q, f) for q, f in zip(qs, res.final,
                                                                            strict=True)])


def agent_state_methods():
    return experiment.STATE_METHODS


def test_full_context_with_a_large_budget_solves_everything(small):
    world, qs = small
    res = agent.run_method(world, qs, "react-full", budget=400, window=12, rounds=1,
                           pp=PolicyParams(), seeds=list(range(len(qs))))
    assert all(res.correct) and sum(res.redundant) == 0   # nothing forgotten, nothing repeated


def test_redundancy_is_counted_across_rounds(small):
    world, qs = small
    # restarts forget everything between rounds: round 2 re-fetches round 1's pages
    res = agent.run_method(world, qs, "restarts", budget=80, window=12, rounds=4,
                           pp=PolicyParams(), seeds=list(range(len(qs))))
    red = agent.run_method(world, qs, "re-trac", budget=80, window=12, rounds=4,
                           pp=PolicyParams(), seeds=list(range(len(qs))))
    assert sum(res.redundant) / sum(res.n_calls) > sum(red.redundant) / sum(red.n_calls)


def test_a_question_does_not_depend_on_its_batch(small):
    world, qs = small
    seeds = [11 * i + 5 for i in range(len(qs))]
    kw = dict(budget=80, window=12, rounds=4, pp=PolicyParams())
    full = agent.run_method(world, qs, "re-trac", seeds=seeds, **kw)
    part = agent.run_method(world, qs[5:12], "re-trac", seeds=seeds[5:12], **kw)
    assert part.final == full.final[5:12] and part.calls == full.calls[5:12]


# --- claims --------------------------------------------------------------------------------
def _metrics(acc, red, calls, tokens, seeds=(0, 1, 2, 3, 4), jitter=0.01):
    rows = []
    rng = np.random.default_rng(0)
    for m in acc:
        for s in seeds:
            row = {"method": m, "setting": "B80", "seed": s,
                   "accuracy": acc[m] + jitter * rng.standard_normal(),
                   "redundancy": red[m] + 0.001 * rng.standard_normal()}
            if m == "re-trac":
                for r in range(4):
                    row[f"calls_r{r + 1}"] = calls[r] + 0.01 * rng.standard_normal()
                    row[f"tokens_r{r + 1}"] = tokens[r] + 0.1 * rng.standard_normal()
                    row[f"state_tokens_r{r + 1}"] = 0.0
            rows.append(row)
    return pd.DataFrame(rows)


def _verdicts(metrics):
    cfg = pipeline.resolve("re-trac", "default")
    return {c.id: c.verdict for c in claims.check(cfg, metrics, None)}


def test_claims_pass_on_data_built_to_pass():
    m = _metrics({"react": 0.7, "re-trac": 0.95, "restarts": 0.55, "react-full": 0.97},
                 {"react": 0.35, "re-trac": 0.05, "restarts": 0.5, "react-full": 0.0},
                 [15, 8, 3, 1], [220, 180, 130, 110])
    assert set(_verdicts(m).values()) == {REPRODUCED}


def test_claims_fail_on_data_built_to_fail():
    m = _metrics({"react": 0.9, "re-trac": 0.92, "restarts": 0.9, "react-full": 0.8},
                 {"react": 0.2, "re-trac": 0.15, "restarts": 0.5, "react-full": 0.0},
                 [15, 8, 9, 6], [220, 230, 180, 170])
    assert set(_verdicts(m).values()) == {NOT_REPRODUCED}


def test_every_seed_part_fails_on_one_negative_seed():
    m = _metrics({"react": 0.7, "re-trac": 0.95, "restarts": 0.55, "react-full": 0.97},
                 {"react": 0.35, "re-trac": 0.05, "restarts": 0.5, "react-full": 0.0},
                 [15, 8, 3, 1], [220, 180, 130, 110])
    sel = (m["method"] == "re-trac") & (m["seed"] == 2)
    m.loc[sel, "accuracy"] = 0.5
    cfg = pipeline.resolve("re-trac", "default")
    c1 = next(c for c in claims.check(cfg, m, None) if c.id == "C1-headline")
    assert c1.parts["gain_every_seed"].verdict == NOT_REPRODUCED
    assert c1.verdict == NOT_REPRODUCED


def test_efficiency_statistics_by_hand():
    calls = np.array([[10.0, 5.0, 5.04, 2.0], [10.0, 5.0, 5.04, 2.0]])
    tokens = np.array([[100.0, 103.0, 60.0, 50.0], [100.0, 103.0, 60.0, 50.0]])
    st = claims.efficiency_stats(calls, tokens)
    assert st["calls_max_increase"] == pytest.approx(0.04)
    assert st["calls_r4_over_r1"] == pytest.approx(0.2)
    assert st["tokens_max_rel_increase"] == pytest.approx(0.03)
    assert st["tokens_r4_over_r1"] == pytest.approx(0.5)


# --- config and pipeline -------------------------------------------------------------------
def test_bad_params_are_one_config_error_line():
    from pathlib import Path

    from icml26.config import check_params
    from icml26.errors import ConfigError

    root = Path(__file__).resolve().parents[2] / "config"
    for key, bad in (("tau", 0.0), ("n_questions", -1), ("window", 1.5), ("windw", 12)):
        cfg = pipeline.resolve("re-trac", "default")
        cfg["params"][key] = bad
        with pytest.raises(ConfigError) as info:
            check_params(cfg, root)
        assert "\n" not in str(info.value) and key in str(info.value)
    cfg = pipeline.resolve("re-trac", "default")
    cfg["params"]["n_attrs"] = 3
    with pytest.raises(ConfigError, match="n_clues"):
        experiment.check_params(cfg)


def test_smoke_end_to_end_is_deterministic(tmp_path):
    cfg = pipeline.resolve("re-trac", "smoke")
    cfg["params"] = {**cfg["params"], "n_questions": 20}
    a = pipeline.run_inprocess(cfg, tmp_path / "a")
    b = pipeline.run_inprocess(cfg, tmp_path / "b")
    assert a["metrics"].read_bytes() == b["metrics"].read_bytes()
    doc = json.loads(a["claims"].read_text())
    assert [c["id"] for c in doc["claims"]] == ["C1-headline", "C2-state-matters",
                                                "C3-monotone-efficiency", "C4-less-redundancy",
                                                "C5-near-upper-bound"]
    met = pd.read_csv(a["metrics"])
    assert (met["oracle_rate"] == 1.0).all() and (met["unique_answers"] == 1.0).all()
    for name in cfg["figures"]:
        assert (a["figures"] / f"{name}.png").exists()
