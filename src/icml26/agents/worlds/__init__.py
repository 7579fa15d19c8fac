"""Executable toy task worlds with verifiers and scripted oracles (one module per world).

A world is any object with these methods (duck-typed; see ``icml26.agents.core``):

- ``start(task) -> state``: a fresh, mutable episode state for one task;
- ``execute(state, call) -> Observation``: run one tool call against the state;
- ``verify(task, answer) -> bool``: the verifier (flag check, answer key, exact checker);
- ``oracle(task, state) -> Call``: the scripted solver's next call; it solves every task;
- optionally ``cost(call) -> dict`` with ``tokens`` / ``flops`` the call will be charged
  before it runs (default: one tool call, nothing else).
"""
