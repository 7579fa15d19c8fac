"""Modular-arithmetic reasoning chains: a verifiable multi-step task (prm-adaptive-tts).

A problem is a start value ``x0`` in Z_m and ``K`` operations ``(op_i, c_i)``, ``op`` in
{add, mul} (coded 0, 1), ``c`` in ``1..c_max``; the answer is ``x_K`` with
``x_i = op_i(x_{i-1}, c_i) mod m``. Difficulty is ``K``. Problems come both as
:class:`ChainTask` objects (for the agent loop) and as padded arrays (:class:`ChainSet`, for
batched search over thousands of problems); both use the same exact step function.

Tools (each one call in :mod:`icml26.agents.core`; ``cost`` prices it in FLOPs before it runs):

- ``step(value)``: the agent writes its next step ``x_i = value`` (a value its own generator
  proposed): one generator call, ``gen_flops``;
- ``score(i)``: the agent scores step ``i`` with its own process reward model: one PRM call,
  ``prm_flops``; it changes nothing in the world (the PRM belongs to the agent, the world only
  prices the call so that every paper counts it the same way);
- ``calc(x, op, c)``: the exact calculator, ``op(x, c) mod m``; ``tool_steps`` generator-step
  equivalents of overhead (``tool_steps * gen_flops``);
- ``answer(value)``: commits the final answer and ends the episode (free).

A malformed call (a value outside Z_m, an unknown op, ``c`` out of range, a step past ``K``, a
score of a step not written) is invalid: it changes nothing and is charged like a valid one.
The scripted oracle calls ``calc`` for every step, writes its result and answers: ``2K + 1``
calls, always right. ``check_step`` is the exact step checker that labels PRM training data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml26.agents.core import Call, Observation

ADD, MUL = 0, 1
STEP, SCORE, CALC, ANSWER = "step", "score", "calc", "answer"


def apply_op(x, op, c, m: int):
    """The exact step ``op(x, c) mod m`` (scalars or arrays; op 0 = add, 1 = mul)."""
    x, op, c = np.asarray(x), np.asarray(op), np.asarray(c)
    out = np.where(op == MUL, x * c, x + c) % m
    return out if out.ndim else int(out)


def check_step(x_prev, op, c, x_new, m: int):
    """The exact step checker: is ``x_new`` the right result of ``op(x_prev, c) mod m``?"""
    ok = np.asarray(apply_op(x_prev, op, c, m)) == np.asarray(x_new)
    return ok if ok.ndim else bool(ok)


@dataclass(frozen=True)
class ChainTask:
    """One problem: start value, operations and constants (length K)."""

    x0: int
    ops: tuple
    cs: tuple
    m: int

    @property
    def K(self) -> int:
        return len(self.ops)

    def values(self) -> list[int]:
        """x_0, x_1, ..., x_K by the exact step function."""
        xs = [int(self.x0)]
        for op, c in zip(self.ops, self.cs, strict=True):
            xs.append(int(apply_op(xs[-1], op, c, self.m)))
        return xs

    @property
    def answer(self) -> int:
        return self.values()[-1]


@dataclass
class ChainSet:
    """Problems as padded arrays: ``ops``/``cs`` are (n, K_max), entries past ``K[p]`` unused."""

    x0: np.ndarray
    ops: np.ndarray
    cs: np.ndarray
    K: np.ndarray
    m: int

    def __len__(self) -> int:
        return int(self.x0.shape[0])

    def answers(self) -> np.ndarray:
        x = self.x0.copy()
        for i in range(self.ops.shape[1]):
            live = i < self.K
            x = np.where(live, apply_op(x, self.ops[:, i], self.cs[:, i], self.m), x)
        return x

    def task(self, p: int) -> ChainTask:
        k = int(self.K[p])
        return ChainTask(int(self.x0[p]), tuple(int(v) for v in self.ops[p, :k]),
                         tuple(int(v) for v in self.cs[p, :k]), self.m)

    def tasks(self) -> list[ChainTask]:
        return [self.task(p) for p in range(len(self))]

    def subset(self, idx) -> "ChainSet":
        idx = np.asarray(idx)
        return ChainSet(self.x0[idx], self.ops[idx], self.cs[idx], self.K[idx], self.m)


def make_chains(rng: np.random.Generator, m: int, Ks, n_per_K: int, c_max: int = 9
                ) -> ChainSet:
    """``n_per_K`` problems per difficulty K in ``Ks``: x0, ops and constants uniform."""
    Ks = [int(k) for k in Ks]
    kmax = max(Ks)
    n = n_per_K * len(Ks)
    K = np.repeat(np.array(Ks, dtype=np.int64), n_per_K)
    x0 = rng.integers(0, m, size=n)
    ops = rng.integers(0, 2, size=(n, kmax))
    cs = rng.integers(1, c_max + 1, size=(n, kmax))
    pad = np.arange(kmax)[None, :] >= K[:, None]
    ops[pad], cs[pad] = 0, 1
    return ChainSet(x0.astype(np.int64), ops.astype(np.int64), cs.astype(np.int64), K, int(m))


class ChainWorld:
    """The chain world with its price list (FLOPs per call kind), verifier and oracle."""

    def __init__(self, m: int, *, gen_flops: float, prm_flops: float, tool_steps: float = 50.0,
                 c_max: int = 9):
        self.m, self.c_max = int(m), int(c_max)
        self.gen_flops, self.prm_flops = float(gen_flops), float(prm_flops)
        self.tool_flops = float(tool_steps) * float(gen_flops)

    def start(self, task: ChainTask) -> dict:
        return {"task": task, "chain": [int(task.x0)], "scored": set(), "calc": {}}

    def _value_ok(self, v) -> bool:
        return isinstance(v, (int, np.integer)) and 0 <= int(v) < self.m

    def execute(self, state: dict, call: Call) -> Observation:
        task, chain = state["task"], state["chain"]
        if call.tool == STEP:
            (v,) = call.args
            if not self._value_ok(v) or len(chain) > task.K:
                return Observation("invalid step", ok=False)
            chain.append(int(v))
            return Observation(len(chain) - 1, tokens=1)
        if call.tool == SCORE:
            (i,) = call.args
            if not (isinstance(i, (int, np.integer)) and 1 <= int(i) < len(chain)):
                return Observation("no such step", ok=False)
            state["scored"].add(int(i))
            return Observation(None)
        if call.tool == CALC:
            x, op, c = call.args
            if not (self._value_ok(x) and op in (ADD, MUL) and 1 <= int(c) <= self.c_max):
                return Observation("invalid calculator input", ok=False, tokens=1)
            v = int(apply_op(int(x), int(op), int(c), self.m))
            state["calc"][(int(x), int(op), int(c))] = v
            return Observation(v, tokens=1)
        if call.tool == ANSWER:
            (v,) = call.args
            return Observation(None, final=True, answer=int(v))
        return Observation(f"unknown tool {call.tool}", ok=False)

    def verify(self, task: ChainTask, answer) -> bool:
        return answer is not None and int(answer) == task.answer

    def cost(self, call: Call) -> dict:
        flops = {STEP: self.gen_flops, SCORE: self.prm_flops, CALC: self.tool_flops}
        return {"tokens": 1 if call.tool == STEP else 0, "flops": flops.get(call.tool, 0.0)}

    def oracle(self, task: ChainTask, state: dict) -> Call:
        chain = state["chain"]
        i = len(chain) - 1
        if i == task.K:
            return Call(ANSWER, (chain[-1],))
        key = (chain[-1], task.ops[i], task.cs[i])
        if key in state["calc"]:
            return Call(STEP, (state["calc"][key],))
        return Call(CALC, key)
