"""Tool calls, trajectories, budgets and the episode loop, shared by every agent paper.

Accounting convention (the same in every paper):

- every call the policy emits is one *tool call*, charged **before** it runs, whether the world
  then accepts it or returns an error observation (invalid calls cost like valid ones);
- a call's ``tokens`` / ``flops`` come from ``world.cost(call)`` and are charged with it; a world
  may also say a call costs ``calls: 0`` tool calls (an answer that is not a tool, for example);
  observation tokens the world reports after running are added to ``tokens`` as well;
- a call the remaining budget cannot afford is not run: the episode stops with
  ``stop="budget"`` and keeps whatever answer it had committed;
- an episode also stops when an observation is ``final`` (an accepted answer / submit) or after
  ``max_steps`` calls (``stop="steps"``).

A trajectory's ``success`` is always the world's verifier applied to its final answer, never the
policy's own belief.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np


@dataclass(frozen=True)
class Call:
    """One tool call: a tool name and hashable arguments."""

    tool: str
    args: tuple = ()

    def key(self) -> tuple:
        return (self.tool, *self.args)


@dataclass
class Observation:
    """What the world returns for one call."""

    content: Any = None
    ok: bool = True          # False: invalid call (bad input); the state is unchanged
    tokens: int = 0          # observation tokens added to the context
    final: bool = False      # the episode ends (an accepted answer)
    answer: Any = None       # the committed answer, if this call commits one


@dataclass
class Step:
    index: int
    call: Call
    obs: Observation
    tokens: int
    flops: float
    calls: int = 1           # tool calls charged for this step (0 for a free final answer)


@dataclass
class Trajectory:
    """One episode: its steps, final answer, verdict and why it stopped."""

    task_id: Any = None
    steps: list[Step] = field(default_factory=list)
    answer: Any = None
    success: bool = False
    stop: str = ""           # "final", "budget", "steps" or "policy"

    @property
    def n_calls(self) -> int:
        """Tool calls charged (steps a world marks free, like a final answer, are not counted)."""
        return int(sum(s.calls for s in self.steps))

    @property
    def n_invalid(self) -> int:
        return sum(not s.obs.ok for s in self.steps)

    @property
    def tokens(self) -> int:
        return int(sum(s.tokens for s in self.steps))

    @property
    def flops(self) -> float:
        return float(sum(s.flops for s in self.steps))

    def n_redundant(self, tools: Sequence[str] | None = None) -> int:
        """Calls that repeat an earlier call (same tool and arguments) of this trajectory."""
        seen: set = set()
        n = 0
        for s in self.steps:
            if tools is not None and s.call.tool not in tools:
                continue
            k = s.call.key()
            n += k in seen
            seen.add(k)
        return n

    def actions(self) -> list[str]:
        return [s.call.tool for s in self.steps]


class Budget:
    """Limits on tool calls, tokens and FLOPs (``None`` = unlimited), charged before a call runs."""

    KINDS = ("calls", "tokens", "flops")

    def __init__(self, calls: int | None = None, tokens: float | None = None,
                 flops: float | None = None):
        self.limit = {"calls": calls, "tokens": tokens, "flops": flops}
        for k, v in self.limit.items():
            if v is not None and v < 0:
                raise ValueError(f"budget {k} must be >= 0 or None, got {v}")
        self.used = {k: 0 for k in self.KINDS}

    def can_afford(self, calls: int = 1, tokens: float = 0, flops: float = 0) -> bool:
        want = {"calls": calls, "tokens": tokens, "flops": flops}
        return all(self.limit[k] is None or self.used[k] + want[k] <= self.limit[k]
                   for k in self.KINDS)

    def charge(self, calls: int = 1, tokens: float = 0, flops: float = 0) -> None:
        if not self.can_afford(calls, tokens, flops):
            raise RuntimeError(f"budget exceeded: used {self.used}, limit {self.limit}")
        self.used["calls"] += calls
        self.used["tokens"] += tokens
        self.used["flops"] += flops

    def add_tokens(self, tokens: float) -> None:
        """Observation tokens are known only after a call ran; they are counted, never refused."""
        self.used["tokens"] += tokens

    def remaining(self, kind: str = "calls"):
        lim = self.limit[kind]
        return None if lim is None else lim - self.used[kind]


def _cost(world, call: Call) -> dict:
    fn = getattr(world, "cost", None)
    c = fn(call) if fn is not None else {}
    return {"calls": c.get("calls", 1), "tokens": c.get("tokens", 0), "flops": c.get("flops", 0.0)}


def run_batch(world, tasks: Sequence, policy: Callable, *, max_steps: int,
              budgets: Sequence[Budget] | None = None, task_ids: Sequence | None = None
              ) -> list[Trajectory]:
    """Run one episode per task, stepping all live episodes together.

    ``policy(states, trajs, live)`` gets the live episodes' states and trajectories (lists of the
    same length) and the indices of those episodes in ``tasks``; it returns one :class:`Call` per
    live episode, or ``None`` to stop that episode (``stop="policy"``). Batching lets a neural
    policy score all live episodes in one forward pass; a pure-Python policy just loops.
    """
    n = len(tasks)
    budgets = list(budgets) if budgets is not None else [Budget() for _ in range(n)]
    if len(budgets) != n:
        raise ValueError(f"{len(budgets)} budgets for {n} tasks")
    ids = list(task_ids) if task_ids is not None else list(range(n))
    states = [world.start(t) for t in tasks]
    trajs = [Trajectory(task_id=ids[i]) for i in range(n)]
    live = list(range(n))
    for _ in range(max_steps):
        if not live:
            break
        calls = policy([states[i] for i in live], [trajs[i] for i in live], list(live))
        if len(calls) != len(live):
            raise ValueError(f"policy returned {len(calls)} calls for {len(live)} live episodes")
        still = []
        for i, call in zip(live, calls, strict=True):
            tr = trajs[i]
            if call is None:
                tr.stop = "policy"
                continue
            cost = _cost(world, call)
            if not budgets[i].can_afford(cost["calls"], cost["tokens"], cost["flops"]):
                tr.stop = "budget"
                continue
            budgets[i].charge(cost["calls"], cost["tokens"], cost["flops"])
            obs = world.execute(states[i], call)
            budgets[i].add_tokens(obs.tokens)
            tr.steps.append(Step(len(tr.steps), call, obs, cost["tokens"] + obs.tokens,
                                 cost["flops"], cost["calls"]))
            if obs.answer is not None:
                tr.answer = obs.answer
            if obs.final:
                tr.stop = "final"
            else:
                still.append(i)
        live = still
    for i in live:
        trajs[i].stop = "steps"
    for t, tr in zip(tasks, trajs, strict=True):
        tr.success = bool(tr.answer is not None and world.verify(t, tr.answer))
    return trajs


def run_episode(world, task, policy: Callable, *, max_steps: int, budget: Budget | None = None,
                task_id=None) -> Trajectory:
    """One episode; ``policy(state, traj) -> Call | None``."""
    return run_batch(world, [task], lambda s, tr, live: [policy(s[0], tr[0])],
                     max_steps=max_steps, budgets=None if budget is None else [budget],
                     task_ids=[task_id])[0]


def oracle_rate(world, tasks: Sequence, *, max_steps: int, budgets=None) -> float:
    """Fraction of tasks the world's scripted oracle solves (every world's test asserts 1.0)."""
    trajs = run_batch(world, tasks,
                      lambda states, trs, live: [world.oracle(tasks[i], s)
                                                 for i, s in zip(live, states, strict=True)],
                      max_steps=max_steps, budgets=budgets)
    return float(np.mean([t.success for t in trajs])) if trajs else float("nan")


def trajectory_table(trajs: Sequence[Trajectory], **extra) -> "list[dict]":
    """One row per trajectory (for a per-episode CSV): id, success, calls, invalid, redundant,
    tokens, flops, stop reason, plus any constant columns in ``extra``."""
    return [{**extra, "task_id": t.task_id, "success": int(t.success), "calls": t.n_calls,
             "invalid": t.n_invalid, "redundant": t.n_redundant(), "tokens": t.tokens,
             "flops": t.flops, "stop": t.stop} for t in trajs]
