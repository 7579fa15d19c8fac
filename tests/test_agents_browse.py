"""The browse world (multi-hop attribute search): unique answers, pages that partition a
query's matches, token costs charged as specified, and the scripted oracle solving every
question within 80 tool calls."""

import numpy as np
import pytest

from icml26.agents import Budget, Call, oracle_rate, run_episode
from icml26.agents.worlds.browse import BrowseWorld, make_questions, make_table


@pytest.fixture(scope="module")
def taskset():
    rng = np.random.default_rng(7)
    table, rank = make_table(rng, 300, 6, 10)
    return table, rank, BrowseWorld(table, rank, n_values=10)


@pytest.mark.parametrize("n_clues", [3, 4])
def test_every_question_has_exactly_one_answer(taskset, n_clues):
    table, _, _ = taskset
    qs = make_questions(np.random.default_rng(n_clues), table, 60, n_clues)
    assert len(qs) == 60
    for q in qs:
        assert len(q.clues) == n_clues and len({a for a, _ in q.clues}) == n_clues
        hits = [e for e in range(len(table)) if all(table[e, a] == v for a, v in q.clues)]
        assert hits == [q.target]


def test_search_pages_partition_the_matches_in_a_fixed_order(taskset):
    table, rank, w = taskset
    for a, v in [(0, 3), (2, 7), (5, 0)]:
        st = w.start(None)
        want = sorted(np.flatnonzero(table[:, a] == v), key=lambda e: rank[e, a])
        pages, p = [], 0
        while True:
            obs = w.execute(st, Call("search", (a, v, p)))
            assert obs.ok and obs.tokens == 12
            pages.append(obs.content["ids"])
            if obs.content["last"]:
                break
            assert len(obs.content["ids"]) == 5
            p += 1
        flat = [e for page in pages for e in page]
        assert flat == [int(e) for e in want]            # disjoint pages, union = matches
        assert len(pages) == w.n_pages(a, v) == -(-len(want) // 5)
        # a page past the end is empty and says so
        past = w.execute(st, Call("search", (a, v, len(pages))))
        assert past.content == {"ids": (), "last": True}
        # the order is fixed: the same query again gives the same page
        assert w.execute(st, Call("search", (a, v, 0))).content["ids"] == pages[0]


def test_open_answer_and_invalid_calls_cost_as_specified(taskset):
    table, _, w = taskset
    q = make_questions(np.random.default_rng(1), table, 1)[0]
    calls = iter([Call("open", (q.target,)), Call("open", (999,)), Call("search", (9, 0, 0)),
                  Call("open", (q.target,)), Call("answer", (q.target,))])
    tr = run_episode(w, q, lambda s, t: next(calls), max_steps=10)
    assert tr.success and tr.stop == "final"
    assert tr.steps[0].obs.content == tuple(int(x) for x in table[q.target])
    assert tr.n_calls == 4 and len(tr.steps) == 5 and tr.n_invalid == 2   # answer() is free
    assert tr.tokens == 16 + 4 + 4 + 16 + 0
    assert tr.n_redundant(["search", "open"]) == 1       # the second open of the target
    wrong = run_episode(w, q, lambda s, t: Call("answer", ((q.target + 1) % 300,)),
                        max_steps=3)
    assert wrong.stop == "final" and not wrong.success


@pytest.mark.parametrize("n_clues", [3, 4])
def test_oracle_solves_every_question_within_80_calls(taskset, n_clues):
    table, _, w = taskset
    qs = make_questions(np.random.default_rng(10 + n_clues), table, 100, n_clues)
    assert oracle_rate(w, qs, max_steps=200, budgets=[Budget(calls=80) for _ in qs]) == 1.0
    # and it is not trivially lucky: with 10 calls it cannot finish
    assert oracle_rate(w, qs, max_steps=200, budgets=[Budget(calls=10) for _ in qs]) == 0.0
