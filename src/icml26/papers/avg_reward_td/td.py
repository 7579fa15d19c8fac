"""Average-reward TD on lazy drifting rings: the chains, the exact targets, and four TD methods.

Read top to bottom:
1. the Markov reward process (lazy drifting ring) and its exact quantities: stationary
   distribution mu, average reward r_bar, centred differential value h (mu^T h = 0),
   condition number kappa = 1 / (1 - |lambda_2(P)|);
2. the feature sets F1 (tabular), F2 (linear with constant), F3 (linear without constant) and the
   unique target theta* of the centred projected Bellman equation (INFERRED, see __init__.py);
3. sample paths of the two independent trajectories A and B;
4. one vectorised loop over time that runs 2T-TD, 2T-TD-raw, classic TD(0) and Differential
   TD(0) for a whole batch of (run, feature set, step size, initialisation) at once;
5. the error measures E_c and E_theta and the learned offset mu^T Phi theta.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FORWARD = 0.7  # probability of a clockwise move given that the chain moves
FEATURE_SETS = ("F1", "F2", "F3")

# Per-method coefficients of the shared update (see `run_td`):
#   c     <- c + gain_c * (phi(s'_t)^T theta - c)          centring estimate from chain B
#   delta  = r_t - rho + phi(s_{t+1})^T theta - phi(s_t)^T theta - use_c * c
#   theta <- theta + a * delta * phi(s_t)
#   rho   <- rho + a * (rho_r * (r_t - rho) + rho_delta * delta)
# 2T-TD smooths the centring sample (gain 0.01); 2T-TD-raw uses it as is (gain 1); classic TD(0)
# and Differential TD(0) have no centring term; Differential TD updates rho with eta * delta.
METHOD_NAMES = ("2T-TD", "2T-TD-raw", "TD0", "DiffTD0")


def method_coefficients(method: str, gain_c: float, eta: float) -> dict:
    table = {
        "2T-TD": {"gain_c": gain_c, "use_c": 1.0, "rho_r": 1.0, "rho_delta": 0.0},
        "2T-TD-raw": {"gain_c": 1.0, "use_c": 1.0, "rho_r": 1.0, "rho_delta": 0.0},
        "TD0": {"gain_c": 0.0, "use_c": 0.0, "rho_r": 1.0, "rho_delta": 0.0},
        "DiffTD0": {"gain_c": 0.0, "use_c": 0.0, "rho_r": 0.0, "rho_delta": eta},
    }
    if method not in table:
        raise ValueError(f"unknown method {method!r}; allowed: {', '.join(table)}")
    return table[method]


# ----------------------------------------------------------------------------------------------
# 1. The chain and its exact quantities
# ----------------------------------------------------------------------------------------------
def lazy_ring(n: int, p: float, forward: float = FORWARD) -> np.ndarray:
    """Transition matrix: stay w.p. p, else step +1 w.p. forward and -1 w.p. 1 - forward."""
    if not (n >= 3 and 0.0 <= p < 1.0):
        raise ValueError(f"lazy ring needs n >= 3 and 0 <= p < 1, got n={n}, p={p}")
    s = np.arange(n)
    P = np.zeros((n, n))
    P[s, (s + 1) % n] += (1 - p) * forward
    P[s, (s - 1) % n] += (1 - p) * (1 - forward)
    P[s, s] += p
    return P


def stationary(P: np.ndarray) -> np.ndarray:
    """mu with mu^T P = mu^T and sum(mu) = 1 (least squares on the stacked, consistent system)."""
    n = len(P)
    M = np.vstack([P.T - np.eye(n), np.ones((1, n))])
    rhs = np.zeros(n + 1)
    rhs[-1] = 1.0
    return np.linalg.lstsq(M, rhs, rcond=None)[0]


def condition_number(P: np.ndarray) -> float:
    """kappa = 1 / (1 - |lambda_2|): the largest eigenvalue modulus other than the unit one."""
    ev = np.linalg.eigvals(P)
    ev = np.delete(ev, np.argmin(np.abs(ev - 1.0)))
    return float(1.0 / (1.0 - np.abs(ev).max()))


def rewards(n: int, seed: int = 1) -> np.ndarray:
    """Mean rewards r(s) ~ U(0, 1), drawn once (seed 1 as in the spec) and shared by all chains."""
    return np.random.default_rng(seed).uniform(0.0, 1.0, size=n)


def differential_value(P: np.ndarray, mu: np.ndarray, r: np.ndarray) -> tuple[float, np.ndarray]:
    """r_bar = mu^T r and the centred h: [(I - P); mu^T] h = [r - r_bar; 0]."""
    n = len(P)
    r_bar = float(mu @ r)
    M = np.vstack([np.eye(n) - P, mu[None, :]])
    rhs = np.concatenate([r - r_bar, [0.0]])
    return r_bar, np.linalg.lstsq(M, rhs, rcond=None)[0]


# ----------------------------------------------------------------------------------------------
# 2. Features and the unique target of the centred projected Bellman equation
# ----------------------------------------------------------------------------------------------
def features(name: str, n: int, seed: int = 2) -> np.ndarray:
    """F1 = I_n; F2 = [1, z1, z2, z3]; F3 = [z1..z4]; z ~ N(0, 1) per state with fixed seed 2."""
    if name == "F1":
        return np.eye(n)
    z = np.random.default_rng(seed).standard_normal((n, 4))
    if name == "F2":
        return np.column_stack([np.ones(n), z[:, :3]])
    if name == "F3":
        return z
    raise ValueError(f"unknown feature set {name!r}; allowed: {', '.join(FEATURE_SETS)}")


def mean_path_matrix(P: np.ndarray, mu: np.ndarray, Phi: np.ndarray) -> np.ndarray:
    """A = Phi^T D (P - 1 mu^T - I) Phi: the expected 2T-TD update is A theta + b."""
    n = len(P)
    return Phi.T @ np.diag(mu) @ (P - np.outer(np.ones(n), mu) - np.eye(n)) @ Phi


def target_theta(P: np.ndarray, mu: np.ndarray, r: np.ndarray, Phi: np.ndarray) -> np.ndarray:
    """theta* solving A theta = -Phi^T D (r - r_bar 1): the fixed point of Pi_D H (Phi theta)."""
    r_bar = mu @ r
    b = Phi.T @ (mu * (r - r_bar))
    return np.linalg.solve(mean_path_matrix(P, mu, Phi), -b)


# ----------------------------------------------------------------------------------------------
# 3. Sample paths
# ----------------------------------------------------------------------------------------------
BLOCK = 2048  # steps generated at a time; fixed, so the random streams never depend on T or batch


class RingPaths:
    """Trajectory A (with noisy rewards) and an independent trajectory B of one lazy ring.

    The ring is translation invariant, so its moves are i.i.d. (+1, -1 or 0) and a path is a
    cumulative sum of moves mod n: no per-step Python work. Each stream has its own Generator
    and is drawn in fixed blocks, so the same seed gives the same path at any horizon.
    """

    def __init__(self, n, p, mu, r, noise_sd, seed, forward=FORWARD):
        ss = np.random.SeedSequence(seed)
        self.rng_a, self.rng_b, self.rng_noise = (np.random.default_rng(s) for s in ss.spawn(3))
        self.n, self.p, self.forward = n, p, forward
        self.r, self.noise_sd = np.asarray(r, float), noise_sd
        # both chains start from the stationary distribution
        self.s_a = int(self.rng_a.choice(n, p=mu))
        self.s_b = int(self.rng_b.choice(n, p=mu))

    def _moves(self, rng):
        u = rng.random(BLOCK)
        up = u < (1 - self.p) * self.forward
        down = (u >= (1 - self.p) * self.forward) & (u < 1 - self.p)
        return up.astype(np.int64) - down.astype(np.int64)

    def block(self):
        """States s_t..s_{t+BLOCK} of A, s'_t..s'_{t+BLOCK-1} of B, and rewards r_t of A."""
        a = (self.s_a + np.concatenate([[0], np.cumsum(self._moves(self.rng_a))])) % self.n
        b = (self.s_b + np.concatenate([[0], np.cumsum(self._moves(self.rng_b))])) % self.n
        self.s_a, self.s_b = int(a[-1]), int(b[-1])
        noisy_r = self.r[a[:-1]] + self.noise_sd * self.rng_noise.standard_normal(BLOCK)
        return a, b[:-1], noisy_r


# ----------------------------------------------------------------------------------------------
# 4. The vectorised TD loop
# ----------------------------------------------------------------------------------------------
def checkpoints(T: int, count: int = 25) -> np.ndarray:
    """Half-octave log-spaced steps T * 2^(-(count-1-k)/2); T/16 is always one of them."""
    k = np.arange(count)
    t = np.round(T * 2.0 ** (-(count - 1 - k) / 2)).astype(int)
    return np.unique(np.maximum(t, 1))


@dataclass
class Batch:
    """Everything `run_td` needs, one row per independent TD run.

    phi_rows: (R, D) feature rows of every (chain, feature set) stacked, zero-padded to D;
    row_offset: (B,) first row of each run's feature block; path: (B,) index into `paths`;
    a, gain_c, use_c, rho_r, rho_delta: (B,) step size and method coefficients;
    theta0: (B, D) initial parameters (zero beyond the run's own dimension).
    """

    phi_rows: np.ndarray
    row_offset: np.ndarray
    path: np.ndarray
    a: np.ndarray
    gain_c: np.ndarray
    use_c: np.ndarray
    rho_r: np.ndarray
    rho_delta: np.ndarray
    theta0: np.ndarray


DIVERGED = 1e8  # |theta| beyond this: the run has diverged; it is frozen and reported as NaN


def run_td(batch: Batch, paths: list[RingPaths], T: int, snap_steps) -> dict:
    """Run T steps of every row of the batch; return tail averages at the checkpoints.

    The reported iterate at checkpoint t is the Polyak tail average over the last half,
    theta_bar_t = mean(theta_s, t/2 < s <= t), computed from snapshots of the running sum
    (this equals the spec's restart-at-2^k average whenever t is a power of two).
    """
    B, D = batch.theta0.shape
    theta = batch.theta0.astype(float).copy()
    rho = np.zeros(B)
    c = np.zeros(B)
    a = batch.a.astype(float).copy()
    a_rho_r, a_rho_d = a * batch.rho_r, a * batch.rho_delta
    gain_c, use_c = batch.gain_c.astype(float), batch.use_c.astype(float)
    diverged = np.zeros(B, bool)

    snap_steps = np.asarray(snap_steps, int)
    ends = set(snap_steps.tolist()) | set((snap_steps // 2).tolist())
    sum_theta, sum_rho = np.zeros((B, D)), np.zeros(B)
    sums = {0: (sum_theta.copy(), sum_rho.copy())}

    t = 0
    with np.errstate(over="ignore", invalid="ignore"):
        while t < T:
            # per-row feature-row indices for this block: phi(s_t), phi(s_{t+1}), phi(s'_t)
            blocks = [p.block() for p in paths]
            states_a = np.stack([blk[0] for blk in blocks], axis=1)[:, batch.path]
            states_b = np.stack([blk[1] for blk in blocks], axis=1)[:, batch.path]
            rew = np.stack([blk[2] for blk in blocks], axis=1)[:, batch.path]
            idx = np.stack(
                [states_a[:-1], states_a[1:], states_b], axis=1
            ) + batch.row_offset[None, None, :]
            steps = min(BLOCK, T - t)
            for j in range(steps):
                x = batch.phi_rows[idx[j]]  # (3, B, D)
                v = np.einsum("kbd,bd->kb", x, theta)
                # centring: a (smoothed) sample of mu^T Phi theta taken on the independent chain B
                c += gain_c * (v[2] - c)
                g = rew[j] - rho
                delta = g + v[1] - v[0] - use_c * c
                theta += (a * delta)[:, None] * x[0]
                rho += a_rho_r * g + a_rho_d * delta
                sum_theta += theta
                sum_rho += rho
                if t + j + 1 in ends:
                    sums[t + j + 1] = (sum_theta.copy(), sum_rho.copy())
            t += steps
            # freeze runs that blew up (2T-TD-raw with a large step on slow chains)
            bad = ~np.all(np.isfinite(theta) & (np.abs(theta) < DIVERGED), axis=1)
            bad |= ~np.isfinite(rho)
            if bad.any():
                diverged |= bad
                theta[bad], rho[bad], c[bad] = 0.0, 0.0, 0.0
                a[bad], a_rho_r[bad], a_rho_d[bad] = 0.0, 0.0, 0.0

    theta_bar = np.empty((len(snap_steps), B, D))
    rho_bar = np.empty((len(snap_steps), B))
    for k, s in enumerate(snap_steps):
        half = s // 2
        theta_bar[k] = (sums[s][0] - sums[half][0]) / (s - half)
        rho_bar[k] = (sums[s][1] - sums[half][1]) / (s - half)
    theta_bar[:, diverged] = np.nan
    rho_bar[:, diverged] = np.nan
    return {"theta_bar": theta_bar, "rho_bar": rho_bar, "diverged": diverged}


# ----------------------------------------------------------------------------------------------
# 5. Errors against the exact quantities
# ----------------------------------------------------------------------------------------------
def value_errors(theta, Phi, mu, h, theta_star):
    """E_c, E_theta and the learned offset mu^T Phi theta for parameters theta (..., d).

    E_c = ||(I - 1 mu^T) Phi theta - h||_mu / ||h||_mu ignores additive constants, so it is fair
    to classic TD; E_theta = ||theta - theta*|| / ||theta*|| measures the distance to the unique
    target of the centred equation.
    """
    theta = np.asarray(theta, float)
    V = theta @ Phi.T
    offset = V @ mu
    centred = V - offset[..., None]
    h_norm = np.sqrt(mu @ h**2)
    e_c = np.sqrt(((centred - h) ** 2) @ mu) / h_norm
    e_theta = np.linalg.norm(theta - theta_star, axis=-1) / np.linalg.norm(theta_star)
    return e_c, e_theta, offset
