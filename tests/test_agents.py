"""The shared agent loop: budgets charged before a call runs, invalid calls counted, stop
reasons, redundancy, the verifier deciding success, and the oracle check every world uses."""
import pytest

from icml26.agents import Budget, Call, Observation, oracle_rate, run_batch, run_episode
from icml26.agents.core import trajectory_table


class Counter:
    """Reach ``task`` from 0 with tools inc(k) (k in 1..3); dec on 0 is invalid; submit ends."""

    def start(self, task):
        return {"x": 0}

    def execute(self, state, call):
        if call.tool == "inc":
            state["x"] += call.args[0]
            return Observation(state["x"], tokens=2)
        if call.tool == "dec":
            if state["x"] == 0:
                return Observation("error", ok=False, tokens=1)
            state["x"] -= 1
            return Observation(state["x"], tokens=2)
        if call.tool == "submit":
            return Observation(None, final=True, answer=state["x"])
        raise ValueError(call.tool)

    def verify(self, task, answer):
        return answer == task

    def cost(self, call):
        return {"tokens": 3, "flops": 10.0 if call.tool == "inc" else 1.0}


    def oracle(self, task, state):
        gap = task - state["x"]
        return Call("submit") if gap == 0 else Call("inc", (min(3, gap),))


class FreeAnswer(Counter):
    def cost(self, call):
        return {"calls": 0 if call.tool == "submit" else 1}


def test_oracle_solves_every_task_and_a_bad_policy_is_verified_wrong():
    w = Counter()
    assert oracle_rate(w, [0, 1, 5, 7, 10], max_steps=10) == 1.0
    tr = run_episode(w, 4, lambda s, t: Call("submit"), max_steps=5)
    # The policy's own answer (0) is checked by the verifier, not trusted.
    assert tr.answer == 0 and not tr.success and tr.stop == "final"


def test_costs_are_charged_before_running_and_invalid_calls_count():
    w = Counter()
    calls = iter([Call("dec"), Call("inc", (2,)), Call("inc", (2,)), Call("submit")])
    tr = run_episode(w, 4, lambda s, t: next(calls), max_steps=10)
    assert tr.success and tr.n_calls == 4 and tr.n_invalid == 1
    # tokens: 3 per call charged up front + observation tokens 1 + 2 + 2 + 0
    assert tr.tokens == 4 * 3 + 5
    assert tr.flops == 1.0 + 10.0 + 10.0 + 1.0
    assert tr.n_redundant() == 1          # the second inc(2) repeats the first
    assert tr.n_redundant(tools=["dec"]) == 0


def test_a_call_the_budget_cannot_afford_is_not_run():
    w = Counter()
    b = Budget(calls=2)
    tr = run_episode(w, 3, lambda s, t: w.oracle(3, s), max_steps=10, budget=b)
    # oracle needs inc(3) then submit = 2 calls: affordable
    assert tr.success and b.used["calls"] == 2
    b = Budget(calls=1)
    tr = run_episode(w, 3, lambda s, t: w.oracle(3, s), max_steps=10, budget=b)
    assert tr.stop == "budget" and tr.n_calls == 1 and not tr.success
    b = Budget(flops=15.0)   # one inc (10) fits, the second does not
    tr = run_episode(w, 6, lambda s, t: w.oracle(6, s), max_steps=10, budget=b)
    assert tr.stop == "budget" and tr.n_calls == 1 and b.used["flops"] == 10.0
    with pytest.raises(ValueError, match="budget calls"):
        Budget(calls=-1)


def test_step_limit_and_policy_stop_and_batched_policy():
    w = Counter()
    tr = run_episode(w, 100, lambda s, t: Call("inc", (1,)), max_steps=4)
    assert tr.stop == "steps" and tr.n_calls == 4 and tr.answer is None and not tr.success
    tr = run_episode(w, 2, lambda s, t: None, max_steps=4)
    assert tr.stop == "policy" and tr.n_calls == 0
    seen = []

    def batched(states, trajs, live):
        seen.append(list(live))
        return [w.oracle(tasks[i], s) for i, s in zip(live, states, strict=True)]

    tasks = [0, 3, 6]
    trajs = run_batch(w, tasks, batched, max_steps=10)
    assert [t.success for t in trajs] == [True, True, True]
    assert seen[0] == [0, 1, 2] and seen[1] == [1, 2]   # finished episodes leave the batch
    rows = trajectory_table(trajs, method="oracle")
    assert [r["calls"] for r in rows] == [1, 2, 3] and rows[0]["method"] == "oracle"
    with pytest.raises(ValueError, match="budgets"):
        run_batch(w, tasks, batched, max_steps=3, budgets=[Budget()])


def test_a_world_can_make_its_final_answer_free():
    w = FreeAnswer()
    b = Budget(calls=1)          # inc(2) uses the one call; the answer costs none
    tr = run_episode(w, 2, lambda s, t: w.oracle(2, s), max_steps=5, budget=b)
    assert tr.success and tr.n_calls == 1 and len(tr.steps) == 2 and b.used["calls"] == 1
