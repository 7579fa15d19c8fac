"""The CMDP family: a vehicle approaching a stop line (all of it INFERRED by the spec).

A context is the road friction mu; a nuisance is the actuation delay p. Each episode starts
at a gap d0 ~ U(60, 90) m and a speed v0 ~ U(12, 16) m/s. The high-level action (option) is
a braking margin m, chosen once per episode. The fixed low-level controller cruises until
d <= v^2 / (2 * 6) + m + v * dt, then commands 6 m/s^2 until the car stops (the command is
latched: once braking, it keeps braking). The achieved deceleration is
min(applied command, 7 mu) + N(0, 0.3^2) while braking; with probability p the previous
step's command is applied instead of the current one (so with delay the first braking step
may apply no braking at all).

Outcomes: d < 0 is a crash (cost 1, reward -t - 20, the episode ends); a stop gives reward
-(t + max(0, d - 8) / 2) (creeping the rest of the way to the 8 m stop zone at 2 m/s counts
as extra time); a timeout at 30 s is scored like a stop (INFERRED; it never happens with this
controller).

During braking, each 0.1 s step yields a deceleration observation y (at most 20 per
episode), which the agents use to infer mu. ``rollout`` simulates a batch of vehicles in
parallel (one numpy operation per step for the whole batch), which is what keeps the critic
build at a fraction of a CPU-second. At full scale (step level) ``rollout`` takes a
``choose(d, v)`` callback that re-chooses the margin every 0.5 s while the car cruises.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DT = 0.1                 # s
BRAKE_CMD = 6.0          # m/s^2, commanded deceleration of the low-level controller
FRICTION_DECEL = 7.0     # achievable deceleration is 7 * mu
STOP_ZONE = 8.0          # m before the line
CREEP_SPEED = 2.0        # m/s, creeping to the stop zone
CRASH_PENALTY = 20.0
T_MAX = 30.0             # s, timeout

# Simulator (training) contexts and the two "real" systems with an unmodelled gap.
SIM_MU = (0.55, 1.05)
SIM_DELAY = (0.0, 0.2)
REAL = {
    "REAL-HARD": {"mu": 0.55, "p": 0.3},    # edge of the simulated mu, delay above its max
    "REAL-BENIGN": {"mu": 0.95, "p": 0.0},
}


@dataclass
class Noise:
    """Random numbers of a batch of episodes, indexed [vehicle, step] (common random numbers).

    ``acc``: standard normals of the actuation noise; ``delay``: uniforms of the delay coin;
    ``obs``: standard normals of the observation noise; ``d0``, ``v0``: start states.
    """

    d0: np.ndarray
    v0: np.ndarray
    acc: np.ndarray
    delay: np.ndarray
    obs: np.ndarray


def draw_noise(rng: np.random.Generator, shape: tuple, n_steps: int) -> Noise:
    """Start states and per-step noise for a batch of episodes of the given leading shape."""
    return Noise(
        d0=rng.uniform(60.0, 90.0, size=shape),
        v0=rng.uniform(12.0, 16.0, size=shape),
        acc=rng.standard_normal((*shape, n_steps)),
        delay=rng.random((*shape, n_steps)),
        obs=rng.standard_normal((*shape, n_steps)),
    )


def n_steps_max() -> int:
    return int(round(T_MAX / DT))


@dataclass
class Outcome:
    crash: np.ndarray         # bool (N,)
    reward: np.ndarray        # (N,)
    time_to_stop: np.ndarray  # (N,) t + creep time; NaN for crashes
    obs: np.ndarray           # (N, max_obs) deceleration observations (NaN where none)
    margin: np.ndarray | None = None  # (N,) margin in force when braking began (step level)


def rollout(mu, p, margin, noise: Noise, acc_sd: float = 0.3, obs_sd: float = 0.4,
            max_obs: int = 20, choose=None, every: int = 5) -> Outcome:
    """Simulate N vehicles in parallel; mu, p, margin broadcast to the batch shape (N,).

    Step level (full profile): with ``choose`` given, the margin is re-chosen every ``every``
    steps (every 0.5 s at dt = 0.1 s), starting at step 0, by ``choose(d, v)`` -> (N,) margins
    for the current gap and speed; only vehicles still cruising take the new margin (the
    braking command is latched, so once braking the margin no longer matters). ``margin`` is
    then the margin before the first choice. Without ``choose`` the margin is fixed for the
    episode (the option level), and the code path is exactly the option-level one.

    ``obs_sd`` is the sensor noise added to the achieved deceleration. The default 0.4 makes
    the total observation noise around the friction-limited deceleration sqrt(0.3^2 + 0.4^2) =
    0.5, the value the spec's posterior factor (sd 0.5 / 7) and its accuracy signal
    (RMSE / 0.5) assume (INFERRED reading; see FIDELITY).
    """
    d = noise.d0.astype(float).copy()
    v = noise.v0.astype(float).copy()
    n = d.shape[0]
    mu = np.broadcast_to(np.asarray(mu, float), (n,))
    p = np.broadcast_to(np.asarray(p, float), (n,))
    margin = np.broadcast_to(np.asarray(margin, float), (n,))
    if choose is not None:
        margin = margin.copy()
    limit = FRICTION_DECEL * mu
    braking = np.zeros(n, bool)        # latched command of the controller
    prev_cmd = np.zeros(n)
    done = np.zeros(n, bool)
    crash = np.zeros(n, bool)
    t_end = np.full(n, T_MAX)
    d_end = np.zeros(n)
    obs = np.full((n, max_obs), np.nan)
    n_obs = np.zeros(n, int)
    rows = np.arange(n)
    steps = noise.acc.shape[1]
    for k in range(steps):
        t = (k + 1) * DT
        live = ~done
        if not live.any():
            break
        if choose is not None and k % every == 0:
            cruising = live & ~braking
            margin = np.where(cruising, np.asarray(choose(d, v), float), margin)
        # the controller: cruise until the braking point (margin included), then brake hard
        braking |= live & (d <= v * v / (2.0 * BRAKE_CMD) + margin + v * DT)
        cmd = np.where(braking, BRAKE_CMD, 0.0)
        applied = np.where(noise.delay[:, k] < p, prev_cmd, cmd)
        prev_cmd = cmd
        acc = np.where(braking, np.minimum(applied, limit) + acc_sd * noise.acc[:, k], 0.0)
        # one observation per braking step, first max_obs only
        take = live & braking & (n_obs < max_obs)
        obs[rows[take], n_obs[take]] = acc[take] + obs_sd * noise.obs[take, k]
        n_obs += take
        v_new = np.maximum(0.0, v - acc * DT)
        d_new = d - 0.5 * (v + v_new) * DT
        crashed = live & (d_new < 0.0)
        stopped = live & ~crashed & (v_new <= 0.0)
        v = np.where(live, v_new, v)
        d = np.where(live, d_new, d)
        ended = crashed | stopped
        crash |= crashed
        t_end[ended] = t
        d_end[ended] = d[ended]
        done |= ended
    d_end[~done] = d[~done]                      # timeout: scored like a stop
    creep = np.maximum(0.0, d_end - STOP_ZONE) / CREEP_SPEED
    reward = np.where(crash, -t_end - CRASH_PENALTY, -(t_end + creep))
    time_to_stop = np.where(crash, np.nan, t_end + creep)
    return Outcome(crash, reward, time_to_stop, obs,
                   None if choose is None else np.asarray(margin, float))
