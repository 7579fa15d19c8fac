"""Batched rollouts and their evaluation: success rate, return, constraint violations."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Episodes:
    success: np.ndarray     # (n,) bool: reached the goal
    returns: np.ndarray     # (n,) undiscounted return
    violations: np.ndarray  # (n,) number of steps in collision / constraint violation
    length: np.ndarray      # (n,) steps taken
    states: np.ndarray      # (T+1, n, obs_dim) visited states (after termination: frozen)
    actions: np.ndarray     # (T, n, act_dim) actions taken

    def summary(self) -> dict[str, float]:
        return {"success": float(self.success.mean()), "return": float(self.returns.mean()),
                "violations": float(self.violations.mean()), "length": float(self.length.mean())}


def run_episodes(env, policy, starts: np.ndarray, rng: np.random.Generator) -> Episodes:
    """Roll out ``policy(obs, t) -> actions`` on a batched env from ``starts`` until all end."""
    obs = env.reset(starts)
    n = len(starts)
    success = np.zeros(n, bool)
    returns = np.zeros(n)
    violations = np.zeros(n, dtype=np.int64)
    length = np.zeros(n, dtype=np.int64)
    states, actions = [obs.copy()], []
    needs_rng = _needs_rng(env)
    for t in range(env.horizon):
        live = env.active.copy()
        if not live.any():
            break
        act = np.asarray(policy(obs, t))
        res = env.step(act, rng) if needs_rng else env.step(act)
        obs = res.obs
        success |= res.success
        returns += np.where(live, res.reward, 0.0)
        violations += res.collision
        length += live
        states.append(obs.copy())
        actions.append(act.reshape(n, -1).copy())
    return Episodes(success, returns, violations, length, np.stack(states),
                    np.stack(actions) if actions else np.zeros((0, n, 1)))


def _needs_rng(env) -> bool:
    import inspect

    return "rng" in inspect.signature(env.step).parameters
