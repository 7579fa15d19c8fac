"""MiniTitan: a small numpy re-creation of Yawning Titan's generic network game (our construction).

A batch of M independent games on one graph of N nodes. Blue acts first, then red.
- State: compromised flags c (M, N) bool, vulnerabilities v (M, N) in [0.1, 1], step t (M,).
- Blue actions: 0 = do_nothing; 1 + i = restore(i) (c_i <- 0, v_i <- v0_i, YT's reset);
  1 + N + i = reduce_vulnerability(i) (v_i <- max(0.1, v_i - 0.15)).
- Red: one target drawn uniformly among safe nodes adjacent to a compromised node (the safe
  entry nodes when nothing is compromised), compromised with probability skill * v_target; then
  every node compromised at the start of red's turn spreads, with probability ``spread``, to one
  uniformly drawn safe neighbour.
- Episode: T steps; ends early ("network lost") when >= 80% of nodes are compromised.
- Observation [c or k, v, t/T]. With ``observe="partial"`` (full scale) blue sees its knowledge
  k instead of c: an extra action 1 + 2N = scan sets k <- c (the flags at blue's turn, before
  red moves, as a YT scan), restore(i) sets k_i <- 0, and red's new compromises stay hidden.
  With full observability k = c always.
All randomness comes from a uniforms array U (M, 2 + 2N) per step, so a game is a pure function
of its uniforms: evaluation episodes are shared across policies (common random numbers) and a
training run's games depend on its own stream only.

Rewards (the four families compared): SP, SPN, DS and DYT (see ``rewards``). The ground-truth
score GT = (1/(T N)) sum_t (N - #compromised_t) is reward-independent (``evaluate``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

REWARDS = ("SP", "SPN", "DS", "DYT")
DO_NOTHING, RESTORE, REDUCE, SCAN = 0, 1, 2, 3
V_MIN, V_STEP = 0.1, 0.15


def make_graph(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Adjacency (spec: connected_watts_strogatz_graph(N, 4, 0.3, seed=100+N)) and v0 (seed
    200+N, U(0.3, 0.7)). networkx is imported here only (prepare stage)."""
    import networkx as nx

    g = nx.connected_watts_strogatz_graph(n, 4, 0.3, seed=100 + n)
    adj = nx.to_numpy_array(g, nodelist=range(n)) > 0
    v0 = np.random.default_rng(200 + n).uniform(0.3, 0.7, size=n)
    return adj, v0


@dataclass
class Game:
    adj: np.ndarray            # (N, N) bool
    v0: np.ndarray             # (N,) initial vulnerabilities
    skill: float = 0.9
    spread: float = 0.05
    horizon: int = 50
    loss_frac: float = 0.8
    entry: tuple = (0, 1)
    observe: str = "full"      # "full" or "partial" (scan action, full scale only)

    @property
    def n(self) -> int:
        return len(self.v0)

    @property
    def n_actions(self) -> int:
        return 1 + 2 * self.n + (self.observe == "partial")

    @property
    def obs_dim(self) -> int:
        return 2 * self.n + 1

    @property
    def n_uniforms(self) -> int:
        return 2 + 2 * self.n

    def initial(self, m: int):
        """State (c, v, t, k) of m fresh games: all safe, v = v0, t = 0, nothing known."""
        c = np.zeros((m, self.n), bool)
        return c, np.tile(self.v0, (m, 1)), np.zeros(m, np.int64), c.copy()

    def obs(self, c, v, t, k) -> np.ndarray:
        seen = c if self.observe == "full" else k
        return np.concatenate([seen, v, (t / self.horizon)[:, None]], axis=1).astype(np.float32)

    def step(self, c, v, t, k, actions, U):
        """One blue + red step for every game. Returns the new (c, v, t, k) and an info dict
        with what the rewards and metrics need. Does not reset."""
        m, n = c.shape
        rows = np.arange(m)
        actions = np.asarray(actions)
        kind = np.select([actions == 0, actions <= n, actions <= 2 * n],
                         [DO_NOTHING, RESTORE, REDUCE], SCAN)
        node = np.where(kind == RESTORE, actions - 1, np.where(kind == REDUCE, actions - 1 - n, 0))
        n_before = c.sum(1)
        target_was_comp = c[rows, node]
        v_total_before = v.sum(1)
        target_v_before = v[rows, node]
        c, v, k = c.copy(), v.copy(), k.copy()
        # ---- blue
        sc = kind == SCAN
        k[sc] = c[sc]
        rs = kind == RESTORE
        c[rows[rs], node[rs]] = False
        k[rows[rs], node[rs]] = False
        v[rows[rs], node[rs]] = self.v0[node[rs]]
        rd = kind == REDUCE
        v[rows[rd], node[rd]] = np.maximum(V_MIN, v[rows[rd], node[rd]] - V_STEP)
        v_decrease = np.where(rd, v_total_before - v.sum(1), 0.0)
        # ---- red: one targeted attack on the frontier (entry nodes when nothing compromised)
        safe = ~c
        frontier = safe & ((c.astype(np.int64) @ self.adj.astype(np.int64)) > 0)
        entry = np.zeros(n, bool)
        entry[list(self.entry)] = True
        none = ~c.any(1)
        cand = np.where(none[:, None], safe & entry[None], frontier)
        count = cand.sum(1)
        pick = np.minimum((U[:, 0] * count).astype(np.int64), np.maximum(count - 1, 0))
        target = np.argmax(np.cumsum(cand, 1) > pick[:, None], axis=1)
        hit = (count > 0) & (U[:, 1] < self.skill * v[rows, target])
        # ---- red: spread from the nodes compromised at the start of red's turn
        spreading = c & (U[:, 2:2 + n] < self.spread)                      # (m, N)
        nb = self.adj[None] & spreading[:, :, None] & safe[:, None, :]     # (m, src, dst)
        nb_count = nb.sum(2)
        kk = np.minimum((U[:, 2 + n:] * nb_count).astype(np.int64), np.maximum(nb_count - 1, 0))
        dst = np.argmax(np.cumsum(nb, 2) > kk[:, :, None], axis=2)         # (m, src)
        spread_to = np.zeros_like(c)
        src_m, src_j = np.nonzero(nb_count > 0)
        spread_to[src_m, dst[src_m, src_j]] = True
        c[rows[hit], target[hit]] = True
        c |= spread_to
        t = t + 1
        n_after = c.sum(1)
        lost = n_after >= self.loss_frac * n
        done = lost | (t >= self.horizon)
        if self.observe == "full":
            k = c.copy()
        info = {"kind": kind, "target_was_comp": target_was_comp,
                "at_min": target_v_before <= V_MIN + 1e-12, "v_decrease": v_decrease,
                "n_before": n_before, "n_after": n_after, "lost": lost, "done": done}
        return c, v, t, k, info

    def rewards(self, info) -> dict[str, np.ndarray]:
        """All four reward functions for one step (the agent is trained on one of them)."""
        n = self.n
        kind, n_after, n_before = info["kind"], info["n_after"], info["n_before"]
        frac = n_after / n
        sp = (n_after == 0).astype(float)
        spn = sp - (n_after == n)
        ds = -n_after.astype(float)
        # DYT: Yawning Titan standard_rewards restricted to our three actions (spec's port)
        # scan (partial observability only) costs 0: INFERRED, the spec's port has no scan term
        cost = np.select([kind == RESTORE, kind == REDUCE, kind == DO_NOTHING], [1.0, 0.5, -0.5],
                         0.0)
        dyt = -cost
        dyt = dyt - np.where(kind == DO_NOTHING, 0.2 * n_after, 0.0)
        dyt = dyt + np.where(n_after < n_before, np.exp(-0.4 * frac), 0.0)
        dyt = dyt - np.where((kind != RESTORE) & (frac > 0.3), frac - 0.3, 0.0)
        dyt = dyt - np.where((kind == RESTORE) & ~info["target_was_comp"], 3.0, 0.0)
        dyt = dyt + np.where(kind == REDUCE,
                             np.where(info["at_min"], -0.5, 4.0 * info["v_decrease"]), 0.0)
        return {"SP": sp, "SPN": spn, "DS": ds, "DYT": dyt}


class TrainEnv:
    """Auto-resetting (A agents x E envs) batch for icml26.rl.ppo / dqn; agent a is trained on
    reward ``rewards[a]`` and draws its games from its own Generator ``rngs[a]``."""

    def __init__(self, game: Game, rewards, n_envs: int, rngs):
        self.game, self.reward_names, self.rngs = game, list(rewards), rngs
        self.n_agents, self.n_envs = len(self.reward_names), n_envs
        self.obs_dim, self.n_actions = game.obs_dim, game.n_actions

    def reset(self):
        self.c, self.v, self.t, self.k = self.game.initial(self.n_agents * self.n_envs)
        return self._obs()

    def _obs(self):
        return self.game.obs(self.c, self.v, self.t, self.k).reshape(self.n_agents, self.n_envs, -1)

    def step(self, actions):
        A, E = self.n_agents, self.n_envs
        U = np.concatenate([r.random((E, self.game.n_uniforms)) for r in self.rngs])
        self.c, self.v, self.t, self.k, info = self.game.step(
            self.c, self.v, self.t, self.k, np.asarray(actions).reshape(-1), U)
        rew_all = self.game.rewards(info)
        rew = np.stack([rew_all[name].reshape(A, E)[a] for a, name in enumerate(self.reward_names)])
        done = info["done"]
        c0, v0, t0, k0 = self.game.initial(int(done.sum()))
        self.c[done], self.v[done], self.t[done], self.k[done] = c0, v0, t0, k0
        return self._obs(), rew.astype(np.float32), done.reshape(A, E)


def evaluate(game: Game, policy, U: np.ndarray) -> dict[str, np.ndarray]:
    """Run M = U.shape[1] episodes (uniforms U (T, M, 2 + 2N)) under ``policy(obs (M, D), c, v)
    -> actions (M,)`` (c, v: the true state, for scripted policies); steps after an early
    loss count as fully compromised.

    Returns per episode: gt (ground-truth score), steps (live steps), restore, reduce,
    wasted_restore (restores of safe nodes), all_safe (live steps with no compromised node),
    scan (partial observability).
    """
    T, m = U.shape[0], U.shape[1]
    c, v, t, k = game.initial(m)
    live = np.ones(m, bool)
    safe_sum = np.zeros(m)
    out = {key: np.zeros(m)
           for key in ("steps", "restore", "reduce", "wasted_restore", "all_safe", "scan")}
    for s in range(T):
        a = policy(game.obs(c, v, t, k), c, v)
        c, v, t, k, info = game.step(c, v, t, k, a, U[s])
        safe_sum += np.where(live, game.n - info["n_after"], 0.0)  # lost/over: 0 safe nodes
        out["steps"] += live
        out["restore"] += live & (info["kind"] == RESTORE)
        out["reduce"] += live & (info["kind"] == REDUCE)
        out["wasted_restore"] += live & (info["kind"] == RESTORE) & ~info["target_was_comp"]
        out["all_safe"] += live & (info["n_after"] == 0)
        out["scan"] += live & (info["kind"] == SCAN)
        live &= ~info["done"]
    out["gt"] = safe_sum / (T * game.n)
    return out


# ---- reference policies (no training); each maps (obs, c, v) -> actions -------------------
def random_policy(game: Game, rng: np.random.Generator):
    return lambda obs, c, v: rng.integers(0, game.n_actions, len(obs))


def do_nothing_policy(game: Game):
    return lambda obs, c, v: np.zeros(len(obs), np.int64)


def greedy_policy(game: Game):
    """Scripted oracle (sees the true state): restore the compromised node of highest degree
    (ties: lowest index); otherwise patch the most vulnerable entry-adjacent node still above
    the minimum (INFERRED: entry nodes and their neighbours); do nothing if all of those are at
    the minimum."""
    n = game.n
    degree = game.adj.sum(1)
    entry = np.zeros(n, bool)
    entry[list(game.entry)] = True
    near = entry | game.adj[entry].any(0)

    def act(obs, c, v):
        score = np.where(c, degree[None] - np.arange(n)[None] * 1e-3, -np.inf)
        restore = 1 + np.argmax(score, 1)
        vv = np.where(near[None] & (v > V_MIN + 1e-12), v, -np.inf)
        patch = np.where(np.isfinite(vv.max(1)), 1 + n + np.argmax(vv, 1), 0)
        return np.where(c.any(1), restore, patch)

    return act
