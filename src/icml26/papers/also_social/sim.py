"""MiniSotopia: a synthetic multi-turn interaction simulator standing in for Sotopia (spec).

An environment (one per environment seed) fixes how well each arm (persona x strategy
instruction) suits each scenario type, a_s in R^K ~ N(0, 1), and how each opponent stance
changes that, B in R^{3 x K} ~ N(0, 2^2). An episode has one scenario type and T turns; the
opponent's stance z_t in {cooperative, guarded, hostile} starts uniform and switches to a
random other stance with probability 0.1 per turn (drift). The strategic opponent keeps
u_t = EWMA of the one-hot arms the agent used and counters overused strategies. The turn
reward (the LLM evaluator's stand-in, already in [0, 1]) is

    r_t = clip(sigmoid(a_s[k] + B[z_t, k] - counter * u_t[k]) + N(0, 0.1^2), 0, 1).

The agent sees before each turn c_t = one-hot scenario (6) + noisy stance signal
(one-hot(z_t) + N(0, 1.5^2), 3) + t/T + last turn's reward; and it knows its own history:
h_k,t = (u_k, rbar_k, u_k * rbar_k) per arm. The stationary control has no stance switching
and no countering.

Everything the world draws (scenarios, stance paths, signal and reward noise) comes from the
environment seed's streams, not from the method, so all methods of one seed meet the same
episodes (common random numbers: paired comparisons per seed).

Lanes: every array has a leading lane axis; a lane is one (seed, episode) being played. The
engine ``play`` runs T turns of many lanes in lockstep with one policy object.
"""

from __future__ import annotations

import numpy as np

N_SCENARIOS = 6
N_STANCES = 3
N_PERSONAS = 2
N_STRATEGIES = 4
K = N_PERSONAS * N_STRATEGIES     # arm k = persona k // 4 with instruction k % 4; arm 0 = base
EMB_RANDOM = 2                     # random dims of the arm embedding
EMB_DIM = N_PERSONAS + N_STRATEGIES + EMB_RANDOM     # 8
CTX_DIM = N_SCENARIOS + N_STANCES + 2                # 11
HIST_DIM = 3


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def environment(rng: np.random.Generator, p: dict) -> dict[str, np.ndarray]:
    """One environment: affinities a (6, K), stance effects B (3, K), arm embeddings (K, 8)."""
    a = rng.normal(0.0, 1.0, size=(N_SCENARIOS, K))
    B = rng.normal(0.0, float(p["stance_sd"]), size=(N_STANCES, K))
    persona = np.eye(N_PERSONAS)[np.arange(K) // N_STRATEGIES]
    strategy = np.eye(N_STRATEGIES)[np.arange(K) % N_STRATEGIES]
    emb = np.concatenate([persona, strategy, rng.normal(size=(K, EMB_RANDOM))], axis=1)
    return {"a": a, "B": B, "emb": emb}


def episodes(rng: np.random.Generator, n: int, p: dict, drift: bool,
             scenarios: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The world's draws of n episodes: scenario (n,), stance path (n, T), stance-signal noise
    (n, T, 3), reward noise (n, T). ``drift=False``: the stance stays fixed (stationary
    control); the same draws are made either way, so both settings share their episodes'
    scenarios, first stances and noise."""
    T = int(p["turns"])
    scen = rng.integers(0, N_SCENARIOS, size=n)
    if scenarios is not None:
        scen = np.asarray(scenarios, dtype=np.int64)
    z0 = rng.integers(0, N_STANCES, size=n)
    switch = rng.random((n, T)) < float(p["switch_prob"])
    step = rng.integers(1, N_STANCES, size=(n, T))          # to a random *other* stance
    stance = np.empty((n, T), dtype=np.int64)
    stance[:, 0] = z0
    for t in range(1, T):
        moved = (stance[:, t - 1] + step[:, t]) % N_STANCES
        stance[:, t] = np.where(switch[:, t] & drift, moved, stance[:, t - 1])
    return {"scenario": scen, "stance": stance,
            "signal_noise": rng.normal(0.0, float(p["signal_sd"]), size=(n, T, N_STANCES)),
            "reward_noise": rng.normal(0.0, float(p["reward_sd"]), size=(n, T))}


def mean_reward(env: dict, scen, stance, u, counter: float) -> np.ndarray:
    """Noiseless expected-reward proxy per lane and arm: sigmoid(a_s + B_z - counter u), (L, K).
    ``env`` arrays carry a lane axis: a (L, 6, K), B (L, 3, K)."""
    lanes = np.arange(len(scen))
    return sigmoid(env["a"][lanes, scen] + env["B"][lanes, stance] - counter * u)


class History:
    """What the agent itself knows of its play in the current episode, per lane and arm:
    u (EWMA of own one-hot arm use, factor ``use_decay``) and rbar (decayed mean reward of
    each arm in this episode, factor ``reward_decay``; ``unused`` before first use)."""

    def __init__(self, n_lanes: int, p: dict):
        self.use_decay = float(p["use_decay"])
        self.reward_decay = float(p["reward_decay"])
        self.unused = float(p["unused_reward"])
        self.u = np.zeros((n_lanes, K))
        self.num = np.zeros((n_lanes, K))     # sum of decay^(t - tau) r_tau for arm k
        self.den = np.zeros((n_lanes, K))     # sum of decay^(t - tau) for arm k

    def features(self) -> np.ndarray:
        rbar = np.where(self.den > 0, self.num / np.maximum(self.den, 1e-300), self.unused)
        return np.stack([self.u, rbar, self.u * rbar], axis=-1)     # (L, K, 3)

    def update(self, arm: np.ndarray, reward: np.ndarray) -> None:
        onehot = np.eye(K)[arm]
        self.u = self.use_decay * self.u + (1.0 - self.use_decay) * onehot
        self.num = self.reward_decay * self.num + onehot * reward[:, None]
        self.den = self.reward_decay * self.den + onehot


def play(policy, env: dict, eps: dict, p: dict, counter: float) -> dict[str, np.ndarray]:
    """T turns of every lane under ``policy``. ``env`` and ``eps`` are lane-indexed (env arrays
    repeated per lane). The opponent's usage memory u_t and the agent's own history share the
    EWMA factor (the agent sees its own usage exactly; the opponent counters it).

    policy.select(t, ctx (L, 11), hist (L, K, 3)) -> (arm (L,), prob (L,), pred (L,))
    policy.observe(t, arm, reward)
    Returns per lane and turn: arm, prob, pred, reward, oracle (1 if the arm was the
    noiseless best arm of that turn).
    """
    T = int(p["turns"])
    L = len(eps["scenario"])
    scen = eps["scenario"]
    hist = History(L, p)
    out = {k: np.zeros((L, T)) for k in ("prob", "pred", "reward", "oracle")}
    out["arm"] = np.zeros((L, T), dtype=np.int64)
    last = np.zeros(L)
    lanes = np.arange(L)
    for t in range(T):
        z = eps["stance"][:, t]
        ctx = np.concatenate([np.eye(N_SCENARIOS)[scen],
                              np.eye(N_STANCES)[z] + eps["signal_noise"][:, t],
                              np.full((L, 1), t / T), last[:, None]], axis=1)
        arm, prob, pred = policy.select(t, ctx, hist.features())
        mu = mean_reward(env, scen, z, hist.u, counter)
        r = np.clip(mu[lanes, arm] + eps["reward_noise"][:, t], 0.0, 1.0)
        out["arm"][:, t], out["prob"][:, t], out["pred"][:, t] = arm, prob, pred
        out["reward"][:, t] = r
        out["oracle"][:, t] = (mu[lanes, arm] >= mu.max(axis=1) - 1e-12)
        policy.observe(t, arm, r)
        hist.update(arm, r)
        last = r
    return out


def lane_env(envs: list[dict], per: int) -> dict[str, np.ndarray]:
    """Environment arrays repeated ``per`` times per environment, on a lane axis."""
    return {k: np.repeat(np.stack([e[k] for e in envs]), per, axis=0) for k in envs[0]}


def lane_eps(eps_list: list[dict]) -> dict[str, np.ndarray]:
    return {k: np.concatenate([e[k] for e in eps_list]) for k in eps_list[0]}


def select_eps(eps: dict, idx) -> dict[str, np.ndarray]:
    return {k: v[idx] for k, v in eps.items()}
