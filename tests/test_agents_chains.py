"""The modular-chain world: hand-computed chains, the exact checker, prices charged before a
call runs, invalid calls, and the scripted oracle solving every difficulty."""
import numpy as np
import pytest

from icml26.agents import Budget, Call, oracle_rate, run_episode
from icml26.agents.worlds.chains import (
    ADD,
    MUL,
    ChainTask,
    ChainWorld,
    apply_op,
    check_step,
    make_chains,
)


def test_hand_computed_chains():
    # 5 +7 = 12; 12 *3 = 36 = 13 (mod 23); 13 +9 = 22
    t = ChainTask(5, (ADD, MUL, ADD), (7, 3, 9), 23)
    assert t.values() == [5, 12, 13, 22] and t.answer == 22 and t.K == 3
    # 20 *9 = 180 = 19 (mod 23); 19 +4 = 23 = 0
    assert ChainTask(20, (MUL, ADD), (9, 4), 23).values() == [20, 19, 0]
    # m = 47: 46 +1 = 0; 0 *5 = 0; 0 +9 = 9
    assert ChainTask(46, (ADD, MUL, ADD), (1, 5, 9), 47).answer == 9
    assert check_step(12, MUL, 3, 13, 23) and not check_step(12, MUL, 3, 14, 23)
    ok = check_step(np.array([12, 12]), np.array([MUL, ADD]), np.array([3, 3]),
                    np.array([13, 13]), 23)
    assert ok.tolist() == [True, False]


def test_padded_arrays_match_the_task_objects():
    cs = make_chains(np.random.default_rng(0), 23, [2, 4, 12], n_per_K=5)
    assert len(cs) == 15 and cs.ops.shape == (15, 12)
    assert cs.K.tolist() == [2] * 5 + [4] * 5 + [12] * 5
    ans = cs.answers()
    for p, task in enumerate(cs.tasks()):
        assert task.K == cs.K[p] and task.answer == ans[p]
        x = task.x0
        for op, c in zip(task.ops, task.cs, strict=True):
            x = (x * c if op == MUL else x + c) % 23
        assert x == ans[p]
    assert apply_op(np.array([22]), np.array([ADD]), np.array([1]), 23).tolist() == [0]


@pytest.mark.parametrize("m", [23, 47])
def test_oracle_solves_every_difficulty(m):
    w = ChainWorld(m, gen_flops=10.0, prm_flops=20.0)
    for K in (2, 4, 6, 8, 10, 12, 20):
        tasks = make_chains(np.random.default_rng(K), m, [K], n_per_K=20).tasks()
        assert oracle_rate(w, tasks, max_steps=2 * K + 1) == 1.0
    # the oracle needs 2K + 1 calls: with one call fewer it cannot answer
    task = ChainTask(3, (ADD, MUL), (2, 2), m)
    tr = run_episode(w, task, lambda s, t: w.oracle(task, s), max_steps=10,
                     budget=Budget(calls=4))
    assert tr.stop == "budget" and not tr.success


def test_prices_invalid_calls_and_the_verifier():
    w = ChainWorld(23, gen_flops=10.0, prm_flops=20.0, tool_steps=50)
    task = ChainTask(5, (ADD, MUL), (7, 3), 23)            # 5 -> 12 -> 13
    calls = iter([Call("calc", (5, ADD, 7)), Call("step", (12,)), Call("score", (1,)),
                  Call("calc", (99, MUL, 3)),             # invalid input, still charged
                  Call("step", (14,)), Call("score", (5,)),  # a wrong step; score of no step
                  Call("answer", (14,))])
    tr = run_episode(w, task, lambda s, t: next(calls), max_steps=10)
    assert tr.n_calls == 7 and tr.n_invalid == 2 and tr.stop == "final"
    assert tr.flops == 2 * 500.0 + 2 * 10.0 + 2 * 20.0
    assert tr.answer == 14 and not tr.success               # the verifier, not the agent
    assert w.verify(task, 13) and not w.verify(task, None)
    b = Budget(flops=515.0)   # calc + step fit (510), the second calc is refused
    tr = run_episode(w, task, lambda s, t: w.oracle(task, s), max_steps=10, budget=b)
    assert b.used["flops"] == 510.0 and tr.stop == "budget"  # calc 500 + step 10, then no calc
