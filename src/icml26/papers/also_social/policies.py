"""ALSO and the baselines as lane-vectorised policies for sim.play.

Every policy draws its randomness from one numpy Generator per seed (``LaneRNG``), ``per``
lanes each, so a lane's numbers depend on its own seed only, never on which seeds share the
job. Per-episode policies (ALSO and its variants, EXP3, NeuralUCB, static, random, best
static) are built fresh for every episode, as the reference code builds a new bandit per
scenario; the stationary optimisers (UCB1 per scenario type, LinUCB) persist across episodes.

ALSO (reference: experiments/also/core/bandits/neural_adversarial_bandit.py, ``select`` /
``update_with_context``, with base_bandit.py's defaults): at turn t the surrogate, refit on
the episode's records, predicts the reward f_t[k] of every arm from [e_k ; h_k,t ; c_t]; the
prediction is appended to a score trace and the arm is sampled from

    p_t = softmax(eta * sum_{tau <= t} decay^(t - tau) f_tau)        (mode "nn", eta 0.5, decay 0.9)

without gamma mixing (the reference's select does not mix). ALSO-iw is the reference's
"mean-zscore" mode: a second trace holds the importance-weighted reward r / max(p, 0.01) of
the chosen arm (0 elsewhere), and p_t = softmax(eta (0.5 z(nn) + 0.5 z(actual))) with z the
z-score over arms (standard deviation with ddof = 1, as torch.std).
"""

from __future__ import annotations

import math

import numpy as np

from . import sim
from .surrogate import MLPSurrogate, RidgeSurrogate

UCB_BLOCK = 256        # lanes per block of NeuralUCB's per-arm parameter gradients


class LaneRNG:
    """Per-seed Generators, ``per`` consecutive lanes each."""

    def __init__(self, gens: list[np.random.Generator], per: int):
        self.gens, self.per = gens, int(per)

    def random(self, tail=()) -> np.ndarray:
        tail = tuple(tail)
        return np.concatenate([g.random((self.per,) + tail) for g in self.gens])

    @property
    def n(self) -> int:
        return len(self.gens) * self.per


def sample(p: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF draw of one arm per lane from probabilities p (L, K) with uniforms u (L,)."""
    c = np.cumsum(p, axis=1)
    return np.minimum((c < (u * c[:, -1])[:, None]).sum(axis=1), p.shape[1] - 1)


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def zscore(x: np.ndarray) -> np.ndarray:
    """Over arms, as the reference: divide by the (ddof 1) s.d. only where it exceeds 1e-10."""
    c = x - x.mean(axis=1, keepdims=True)
    sd = x.std(axis=1, ddof=1, keepdims=True)
    return np.where(sd > 1e-10, c / np.where(sd > 1e-10, sd, 1.0), c)


def scenario_of(ctx: np.ndarray) -> np.ndarray:
    return np.argmax(ctx[:, :sim.N_SCENARIOS], axis=1)


class Policy:
    pooled = False

    def observe(self, t, arm, reward):
        pass

    def new_episode(self):
        pass


class Static(Policy):
    """The static persona: always arm 0 (base persona, no instruction)."""

    def __init__(self, rng: LaneRNG, **_):
        self.n = rng.n

    def select(self, t, ctx, hist):
        return np.zeros(self.n, dtype=np.int64), np.ones(self.n), np.full(self.n, np.nan)


class Uniform(Policy):
    """A random strategy each turn."""

    def __init__(self, rng: LaneRNG, **_):
        self.rng = rng

    def select(self, t, ctx, hist):
        u = self.rng.random()
        arm = np.minimum((u * sim.K).astype(np.int64), sim.K - 1)
        return arm, np.full(len(u), 1.0 / sim.K), np.full(len(u), np.nan)


class BestStatic(Policy):
    """Offline-optimised static strategy: per scenario type the arm with the highest mean
    reward on the validation episodes (``choice`` (L, 6)), then always that arm."""

    def __init__(self, rng: LaneRNG, choice: np.ndarray, **_):
        self.choice = np.asarray(choice, dtype=np.int64)

    def select(self, t, ctx, hist):
        arm = self.choice[np.arange(len(ctx)), scenario_of(ctx)]
        return arm, np.ones(len(ctx)), np.full(len(ctx), np.nan)


class UCB1(Policy):
    """UCB1 (Auer et al. 2002) per scenario type, statistics kept across episodes: play each
    arm once (lowest index first), then argmax mean + sqrt(2 ln N_s / n_k)."""

    pooled = True

    def __init__(self, rng: LaneRNG, **_):
        self.n = np.zeros((rng.n, sim.N_SCENARIOS, sim.K))
        self.s = np.zeros((rng.n, sim.N_SCENARIOS, sim.K))

    def select(self, t, ctx, hist):
        lanes = np.arange(len(ctx))
        self.scen_ = scen = scenario_of(ctx)
        n, s = self.n[lanes, scen], self.s[lanes, scen]
        total = n.sum(axis=1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            ucb = np.where(n > 0, s / n + np.sqrt(2.0 * np.log(np.maximum(total, 1)) / n), np.inf)
        arm = np.argmax(ucb, axis=1)          # an unplayed arm (inf) first, lowest index
        return arm, np.ones(len(ctx)), np.full(len(ctx), np.nan)

    def observe(self, t, arm, reward):
        lanes = np.arange(len(arm))
        self.n[lanes, self.scen_, arm] += 1
        self.s[lanes, self.scen_, arm] += reward


class EXP3(Policy):
    """EXP3 (Auer et al. 2002) per episode: p = (1 - gamma) w / sum w + gamma / K, weights
    w_k <- w_k exp(eta r / p_k) for the chosen arm, eta = sqrt(2 ln K / (T K)) by default."""

    def __init__(self, rng: LaneRNG, eta: float, gamma: float, **_):
        self.rng, self.eta, self.gamma = rng, float(eta), float(gamma)
        self.logw = np.zeros((rng.n, sim.K))

    def select(self, t, ctx, hist):
        w = softmax(self.logw)
        self.p_ = (1.0 - self.gamma) * w + self.gamma / sim.K
        arm = sample(self.p_, self.rng.random())
        lanes = np.arange(len(arm))
        return arm, self.p_[lanes, arm], np.full(len(arm), np.nan)

    def observe(self, t, arm, reward):
        lanes = np.arange(len(arm))
        self.logw[lanes, arm] += self.eta * reward / self.p_[lanes, arm]


class LinUCB(Policy):
    """Disjoint LinUCB (Li et al. 2010, Algorithm 1): per arm A = I + sum x x^T, b = sum r x
    on x = [c_t, 1]; play argmax theta^T x + alpha sqrt(x^T A^-1 x); kept across episodes.
    A^-1 is kept by Sherman-Morrison updates."""

    pooled = True

    def __init__(self, rng: LaneRNG, alpha: float, **_):
        d = sim.CTX_DIM + 1
        self.alpha = float(alpha)
        self.Ainv = np.tile(np.eye(d), (rng.n, sim.K, 1, 1))
        self.b = np.zeros((rng.n, sim.K, d))

    def select(self, t, ctx, hist):
        self.x_ = x = np.concatenate([ctx, np.ones((len(ctx), 1))], axis=1)
        theta = np.einsum("lkij,lkj->lki", self.Ainv, self.b)
        mean = np.einsum("lki,li->lk", theta, x)
        width = np.sqrt(np.maximum(np.einsum("li,lkij,lj->lk", x, self.Ainv, x), 0.0))
        arm = np.argmax(mean + self.alpha * width, axis=1)
        lanes = np.arange(len(arm))
        return arm, np.ones(len(arm)), mean[lanes, arm]

    def observe(self, t, arm, reward):
        lanes = np.arange(len(arm))
        Ai, x = self.Ainv[lanes, arm], self.x_
        Ax = np.einsum("lij,lj->li", Ai, x)
        self.Ainv[lanes, arm] = Ai - Ax[:, :, None] * Ax[:, None, :] / \
            (1.0 + np.einsum("li,li->l", x, Ax))[:, None, None]
        self.b[lanes, arm] += reward[:, None] * x


class Surrogate(Policy):
    """ALSO and the surrogate-based variants (one class, the rule picked by ``mode``):

    - ``nn``: ALSO (softmax of eta x decayed sum of predictions);
    - ``mean-zscore``: ALSO-iw (adds the decayed importance-weighted observed rewards);
    - ``ucb``: NeuralUCB-style, greedy on prediction + sqrt(sum lambda nu g^2 / U) with U
      started at lambda and U += g^2 of the chosen arm (the reference's neural_ucb_bandit.py).

    ``history=False`` leaves the history features out of the input (the no-history
    ablation); ``model="ridge"`` is ALSO-lin.
    """

    def __init__(self, rng: LaneRNG, emb: np.ndarray, mode: str, eta: float, decay: float,
                 history: bool, model: str, mlp: dict, ridge_lambda: float,
                 ucb_lambda: float = 0.1, ucb_nu: float = 0.5, iw_floor: float = 0.01,
                 nn_weight: float = 0.5, **_):
        self.rng, self.emb, self.mode = rng, emb, mode       # emb (L, K, 8)
        self.eta, self.decay, self.history = float(eta), float(decay), bool(history)
        self.iw_floor, self.nn_weight = float(iw_floor), float(nn_weight)
        d = sim.EMB_DIM + sim.HIST_DIM + sim.CTX_DIM
        self.model = (RidgeSurrogate(ridge_lambda) if model == "ridge"
                      else MLPSurrogate(d, **mlp))
        self.ucb_lambda, self.ucb_nu = float(ucb_lambda), float(ucb_nu)
        self.X, self.y = [], []
        L = rng.n
        self.nn_cum = np.zeros((L, sim.K))
        self.act_cum = np.zeros((L, sim.K))
        self.U = None

    def inputs(self, ctx, hist) -> np.ndarray:
        """[e_k ; h_k,t ; c_t] per arm, (L, K, 22); h is zero without history."""
        L = len(ctx)
        h = hist if self.history else np.zeros_like(hist)
        return np.concatenate([self.emb, h, np.broadcast_to(ctx[:, None, :],
                                                            (L, sim.K, ctx.shape[1]))], axis=2)

    def _fit(self):
        if isinstance(self.model, RidgeSurrogate):
            if self.X:
                self.model.fit(np.stack(self.X, axis=1), np.stack(self.y, axis=1))
        elif self.X:
            self.model.fit(self.rng.random, np.stack(self.X, axis=1), np.stack(self.y, axis=1))
        else:          # no record yet: the freshly initialised network (as the reference)
            self.model.init(self.rng.random, self.rng.n)

    def select(self, t, ctx, hist):
        self.xall_ = x = self.inputs(ctx, hist)
        self._fit()
        lanes = np.arange(len(ctx))
        if self.mode == "ucb":
            # in blocks of lanes: the per-arm gradients are (lanes, K, n_params)
            arm, fsel = np.zeros(len(ctx), dtype=np.int64), np.zeros(len(ctx))
            for lo in range(0, len(ctx), UCB_BLOCK):
                sl = slice(lo, lo + UCB_BLOCK)
                f, g = self.model.grad_outputs(x[sl], sl)
                if self.U is None:
                    self.U = np.full((len(ctx), g.shape[2]), self.ucb_lambda)
                sigma = np.sqrt(np.einsum("lkp,lp->lk", g * g,
                                          self.ucb_lambda * self.ucb_nu / self.U[sl]))
                a = np.argmax(f + sigma, axis=1)
                idx = np.arange(len(a))
                self.U[sl] += g[idx, a] ** 2
                arm[sl], fsel[sl] = a, f[idx, a]
            return arm, np.ones(len(arm)), fsel
        f = self.model.predict(x)
        self.nn_cum = self.decay * self.nn_cum + f
        self.act_cum = self.decay * self.act_cum      # this turn's actual entry starts at 0
        if self.mode == "nn":
            score = self.nn_cum
        elif self.mode == "mean-zscore":
            score = self.nn_weight * zscore(self.nn_cum) + \
                (1.0 - self.nn_weight) * zscore(self.act_cum)
        else:
            raise ValueError(f"unknown surrogate mode {self.mode!r}")
        self.p_ = softmax(self.eta * score)
        arm = sample(self.p_, self.rng.random())
        return arm, self.p_[lanes, arm], f[lanes, arm]

    def observe(self, t, arm, reward):
        lanes = np.arange(len(arm))
        self.X.append(self.xall_[lanes, arm])
        self.y.append(reward)
        if self.mode == "mean-zscore":
            self.act_cum[lanes, arm] += reward / np.maximum(self.p_[lanes, arm], self.iw_floor)


def exp3_eta(turns: int) -> float:
    """The spec's EXP3 rate sqrt(2 ln K / (T K))."""
    return math.sqrt(2.0 * math.log(sim.K) / (turns * sim.K))


class PooledRidge(Policy):
    """The spec's own ALSO design, for comparison (reported, not claimed): one linear
    surrogate per run pooled over ALL episodes (ridge, penalty ``lam``, free intercept) on the
    spec's input x = [b ; c ; b (x) c] with b = [e_k ; h_k] (11 + 11 + 121 dims), refit every
    ``refit_every`` turns; arms drawn from p = (1 - gamma) softmax(eta z(f)) + gamma / K with
    z the z-score of the predictions over arms (spec: eta 10, gamma 0.05). Running sums keep
    the fit cheap: X^T X, X^T y, sum x, sum y, n."""

    pooled = True

    def __init__(self, rng: LaneRNG, emb: np.ndarray, lam: float, eta: float, gamma: float,
                 refit_every: int, **_):
        self.rng, self.emb, self.lam = rng, emb, float(lam)       # emb (L, K, 8)
        self.eta, self.gamma, self.every = float(eta), float(gamma), int(refit_every)
        d = (sim.EMB_DIM + sim.HIST_DIM) * (1 + sim.CTX_DIM) + sim.CTX_DIM
        L = rng.n
        self.Sxx, self.Sxy = np.zeros((L, d, d)), np.zeros((L, d))
        self.Sx, self.Sy, self.n = np.zeros((L, d)), np.zeros(L), 0
        self.w, self.b0 = np.zeros((L, d)), np.zeros(L)
        self.turns = 0

    def inputs(self, ctx, hist) -> np.ndarray:
        L = len(ctx)
        b = np.concatenate([self.emb, hist], axis=2)                          # (L, K, 11)
        c = np.broadcast_to(ctx[:, None, :], (L, sim.K, ctx.shape[1]))
        outer = (b[..., :, None] * c[..., None, :]).reshape(L, sim.K, -1)
        return np.concatenate([b, c, outer], axis=2)

    def _refit(self):
        n = self.n
        mx, my = self.Sx / n, self.Sy / n
        C = self.Sxx - n * mx[:, :, None] * mx[:, None, :]
        r = self.Sxy - n * mx * my[:, None]
        self.w = np.linalg.solve(C + self.lam * np.eye(C.shape[1]), r[..., None])[..., 0]
        self.b0 = my - np.einsum("ld,ld->l", mx, self.w)

    def select(self, t, ctx, hist):
        if self.n and self.turns % self.every == 0:
            self._refit()
        self.turns += 1
        self.x_ = x = self.inputs(ctx, hist)
        f = np.einsum("lkd,ld->lk", x, self.w) + self.b0[:, None]
        self.p_ = (1.0 - self.gamma) * softmax(self.eta * zscore(f)) + self.gamma / sim.K
        arm = sample(self.p_, self.rng.random())
        lanes = np.arange(len(arm))
        return arm, self.p_[lanes, arm], f[lanes, arm]

    def observe(self, t, arm, reward):
        x = self.x_[np.arange(len(arm)), arm]
        self.Sxx += x[:, :, None] * x[:, None, :]
        self.Sxy += x * reward[:, None]
        self.Sx += x
        self.Sy += reward
        self.n += 1
