"""Agent-loop pieces shared by the agent and search papers (ctf-dojo, bear, re-trac,
prm-adaptive-tts).

- ``core``: tool calls, observations, steps and trajectories (one record format for every
  paper), a :class:`Budget` that counts tool calls, tokens and FLOPs the same way everywhere
  (a call is charged *before* it runs, valid or not; a call the budget cannot afford is not
  run), the episode loop (:func:`run_batch`, :func:`run_episode`) and :func:`oracle_rate`, the
  test every world passes: its scripted oracle solves 100% of its tasks.
- ``worlds``: executable toy task worlds with verifiers, one module per world (decode-the-flag
  runtime, tabletop scenes with perception tools, multi-hop attribute search, modular reasoning
  chains). Each world is seeded and ships a scripted oracle.

numpy only; a world or policy that needs torch imports it itself.
"""
from icml26.agents.core import (
    Budget,
    Call,
    Observation,
    Step,
    Trajectory,
    oracle_rate,
    run_batch,
    run_episode,
    trajectory_table,
)

__all__ = ["Budget", "Call", "Observation", "Step", "Trajectory", "oracle_rate", "run_batch",
           "run_episode", "trajectory_table"]
