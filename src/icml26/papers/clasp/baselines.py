"""How the baselines choose where the next demonstrations start (numpy).

- BC-offline / Novice-interactive / CLASP-weight-only: the novice's own starts (a pool drawn once
  per (map, seed) from the Beta(2, 5) start distribution, shared by these methods, so they see
  the very same demonstrations and differ only in training).
- Failure-replay: the start states of failed practice rollouts, uniformly among the failures
  ("show me the tasks I failed").
- Active-uncertainty: ensemble of 3 learners; among 256 candidate starts, the b whose own rollout
  has the largest summed action disagreement (variance across members), a robot-driven query in
  the spirit of ensemble-DAgger variants, implemented by hand.
"""

from __future__ import annotations

import numpy as np


def failure_replay_starts(practice_states: np.ndarray, success: np.ndarray, b: int,
                          rng: np.random.Generator) -> np.ndarray | None:
    """b start states of failed practice rollouts (uniform, with replacement only if fewer
    failures than b); None when nothing failed."""
    failed = np.flatnonzero(~success)
    if len(failed) == 0:
        return None
    pick = rng.choice(failed, size=b, replace=len(failed) < b)
    return practice_states[0, pick].copy()


def disagreement(member_actions: np.ndarray) -> np.ndarray:
    """Summed variance across ensemble members: (members, n, 2) -> (n,)."""
    return member_actions.var(axis=0).sum(axis=-1)


def most_uncertain(candidates: np.ndarray, summed_disagreement: np.ndarray, b: int) -> np.ndarray:
    """The b candidates with the largest summed disagreement along their rollout."""
    order = np.argsort(-summed_disagreement, kind="stable")
    return candidates[order[:b]].copy()
