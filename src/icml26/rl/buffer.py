"""A numpy ring-buffer of transitions (s, a, r, s', done), sampled uniformly with a Generator."""

from __future__ import annotations

import numpy as np


class ReplayBuffer:
    def __init__(self, capacity: int, obs_dim: int, act_dim: int, act_dtype=np.float32):
        self.capacity = int(capacity)
        self.obs = np.zeros((capacity, obs_dim), np.float32)
        self.next_obs = np.zeros((capacity, obs_dim), np.float32)
        shape = (capacity,) if act_dim == 0 else (capacity, act_dim)  # act_dim 0: discrete
        self.act = np.zeros(shape, act_dtype)
        self.rew = np.zeros(capacity, np.float32)
        self.done = np.zeros(capacity, np.float32)
        self.size = 0
        self.ptr = 0

    def add(self, obs, act, rew, next_obs, done) -> None:
        """Add a batch of transitions (leading axis = batch)."""
        obs = np.atleast_2d(obs)
        k = len(obs)
        idx = (self.ptr + np.arange(k)) % self.capacity
        self.obs[idx], self.next_obs[idx] = obs, np.atleast_2d(next_obs)
        self.act[idx] = act
        self.rew[idx], self.done[idx] = rew, done
        self.ptr = int((self.ptr + k) % self.capacity)
        self.size = int(min(self.size + k, self.capacity))

    def sample(self, batch: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        if self.size == 0:
            raise ValueError("cannot sample from an empty replay buffer")
        idx = rng.integers(0, self.size, size=batch)
        return {"obs": self.obs[idx], "act": self.act[idx], "rew": self.rew[idx],
                "next_obs": self.next_obs[idx], "done": self.done[idx]}
