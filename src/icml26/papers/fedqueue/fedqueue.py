"""FedQueue: queue-aware federated learning across HPC facilities.

INFERRED throughout: the abstract names three components (online queue prediction with work
budgeting to a round deadline, cutoff admission with bounded staleness, staleness-aware
aggregation that accounts for unequal local work); every rule and constant below is the
spec's reconstruction, not the paper's.

1. Online queue prediction (``QueuePredictor``), per facility, updated when a job returns
   and its admission delay d_obs is known:
     e = log d_obs - lhat  (forecast error, taken BEFORE the update - INFERRED order)
     s2hat <- 0.7 s2hat + 0.3 e^2 ;  lhat <- 0.7 lhat + 0.3 log d_obs
   initialised from the first job (lhat = log d_1, s2hat = 0). Predicted 80%-quantile
   delay dhat = exp(lhat + 0.84 shat). Before a facility's first job returns, dhat is its
   nominal median delay m_i (INFERRED prior: what a facility publishes about its queue).
2. Work budgeting + round deadline: at round start t_r the deadline is
   D_r = 75th percentile over facilities of (dhat_i + K_ref c_i), K_ref = 20, and every idle
   facility gets K_i = clip(floor((D_r - dhat_i) / c_i), 5, 40) local steps.
3. Cutoff admission: the round aggregates at t_r + D_r, or earlier once every job submitted
   this round has returned. Updates arriving later wait in a buffer and are admitted at the
   next aggregation if their staleness tau (global updates since their snapshot) is <= 2,
   otherwise dropped (counted). A facility with a pending job is not resubmitted until it
   returns.
4. Staleness-aware, work-normalised aggregation (FedNova-style): g_i = (x_i - x_snap,i) / K_i,
   w_i ∝ n_i (1 + tau_i)^(-1/2), x <- x + Kbar sum_i w_i g_i / sum_i w_i, Kbar = mean K_i
   of the admitted updates.

Ablations (spec, full profile): ``predict=False`` (K_i = 20 for all, deadline from the last
observed delays), ``stale_weight=False`` (w_i ∝ n_i), ``cutoff=False`` (no deadline: wait
for every job, i.e. synchronous rounds with work budgeting).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .simulator import DEADLINE, Job, Simulation


@dataclass(frozen=True)
class FedQueueConfig:
    ewma: float = 0.7            # INFERRED: weight of the old estimate in both EWMAs
    z80: float = 0.84            # INFERRED: 80% normal quantile of the log-delay
    k_ref: int = 20              # INFERRED: reference work in the deadline
    deadline_pct: float = 75.0   # INFERRED: percentile over facilities of dhat + K_ref c
    k_min: int = 5               # INFERRED: clip of the work budget
    k_max: int = 40
    tau_max: int = 2             # INFERRED: staleness bound of admitted updates
    stale_exponent: float = 0.5  # INFERRED: w ∝ n (1 + tau)^(-1/2)
    predict: bool = True         # ablation switches
    stale_weight: bool = True
    cutoff: bool = True


class QueuePredictor:
    """EWMA of log-delays and of squared forecast errors, per facility."""

    def __init__(self, prior_delays, ewma: float = 0.7, z: float = 0.84):
        self.prior = np.asarray(prior_delays, dtype=float)
        n = len(self.prior)
        self.lhat = np.zeros(n)
        self.s2hat = np.zeros(n)
        self.seen = np.zeros(n, dtype=bool)
        self.last = self.prior.copy()              # last observed delay (ablation)
        self.ewma, self.z = float(ewma), float(z)

    def observe(self, i: int, delay: float) -> None:
        ld = math.log(delay)
        self.last[i] = delay
        if not self.seen[i]:
            self.lhat[i], self.s2hat[i], self.seen[i] = ld, 0.0, True
            return
        err = ld - self.lhat[i]
        self.s2hat[i] = self.ewma * self.s2hat[i] + (1 - self.ewma) * err * err
        self.lhat[i] = self.ewma * self.lhat[i] + (1 - self.ewma) * ld

    def quantile(self) -> np.ndarray:
        """Predicted 80%-quantile delay per facility (the prior where nothing is seen yet)."""
        q = np.exp(self.lhat + self.z * np.sqrt(self.s2hat))
        return np.where(self.seen, q, self.prior)


def deadline(dhat: np.ndarray, compute: np.ndarray, k_ref: int, pct: float) -> float:
    """Round deadline D_r: the pct-th percentile over facilities of dhat_i + K_ref c_i."""
    return float(np.percentile(dhat + k_ref * compute, pct))


def work_budget(dl: float, dhat: np.ndarray, compute: np.ndarray, k_min: int,
                k_max: int) -> np.ndarray:
    """K_i = clip(floor((D_r - dhat_i) / c_i), k_min, k_max): the work that fits the deadline."""
    return np.clip(np.floor((dl - dhat) / compute), k_min, k_max).astype(int)


def admit(buffer: list[Job], version: int, tau_max: int):
    """Split buffered jobs into admitted [(job, tau)] (tau <= tau_max) and dropped [(job, tau)]."""
    admitted, dropped = [], []
    for job in buffer:
        tau = version - job.version
        (admitted if tau <= tau_max else dropped).append((job, tau))
    return admitted, dropped


def aggregate(theta: np.ndarray, admitted, n: np.ndarray, stale_weight: bool = True,
              exponent: float = 0.5) -> np.ndarray:
    """x + Kbar sum_i w_i g_i / sum_i w_i with g_i = Delta_i / K_i, w_i ∝ n_i (1+tau_i)^-1/2."""
    steps = np.array([job.steps for job, _ in admitted], dtype=float)
    g = np.stack([(job.result - job.snapshot) / job.steps for job, _ in admitted])
    w = np.array([n[job.facility] for job, _ in admitted], dtype=float)
    if stale_weight:
        w *= (1.0 + np.array([tau for _, tau in admitted], dtype=float)) ** (-exponent)
    return theta + steps.mean() * (w @ g) / w.sum()


def fedqueue(sim: Simulation, medians, cfg: FedQueueConfig = FedQueueConfig()) -> QueuePredictor:
    """Run FedQueue (or an ablation) on the simulation; returns the predictor (its state)."""
    pred = QueuePredictor(medians, cfg.ewma, cfg.z80)
    buffer: list[Job] = []
    rnd = 0
    while True:
        # --- round start: predict, set the deadline, budget the work of idle facilities ----
        dhat = pred.quantile() if cfg.predict else pred.last.copy()
        dl = deadline(dhat, sim.c, cfg.k_ref, cfg.deadline_pct)
        ks = (work_budget(dl, dhat, sim.c, cfg.k_min, cfg.k_max) if cfg.predict
              else np.full(sim.n_facilities, cfg.k_ref))
        submitted = [sim.submit(i, int(ks[i]), predicted=float(dhat[i]), round=rnd)
                     for i in range(sim.n_facilities) if not sim.busy[i]]
        if submitted and cfg.cutoff:
            sim.clock.push(sim.clock.now + dl, DEADLINE, rnd)
        outstanding = len(submitted)
        # --- wait for the cutoff: the deadline, or every job of this round back -------------
        while True:
            ev = sim.next_event()
            if ev is None:
                return pred
            if isinstance(ev, Job):
                pred.observe(ev.facility, ev.delay)
                buffer.append(ev)
                if ev.round == rnd:
                    outstanding -= 1
                if outstanding <= 0:     # all of this round back (or a round with no jobs)
                    break
            elif ev == rnd:              # this round's deadline (old deadlines are ignored)
                break
        # --- aggregate: admit buffered updates with tau <= tau_max, drop the rest -----------
        admitted, dropped = admit(buffer, sim.version, cfg.tau_max)
        for job, tau in dropped:
            sim.drop(job, tau)
        if admitted:
            theta = aggregate(sim.theta, admitted, sim.n, cfg.stale_weight, cfg.stale_exponent)
            sim.apply(theta, admitted)
        buffer = []
        rnd += 1

