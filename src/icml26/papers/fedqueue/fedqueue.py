"""FedQueue: queue-aware federated learning across HPC facilities.

Two readings of the method, chosen by ``FedQueueConfig.rule``.

``rule="official"`` (the default) follows the authors' code in APPFL (facts and formulas
re-implemented, no code copied):
- S = ``src/appfl/algorithm/scheduler/queue_scheduler.py`` (``QueueScheduler``): the
  predictor, the work budget, the learning-rate scaling, the admission test, the aggregation
  timer and the late buffer;
- A = ``src/appfl/algorithm/aggregator/fedqueue_aggregator.py`` (``FedQueueAggregator``):
  the weights and the model average;
- Q = ``examples/QFL/configs/queue_case2.yaml`` (the authors' controlled-queue simulation)
  and ``examples/QFL/utils/delays.py``: the constants at a simulation time scale (their
  seconds are our minutes) and the harmonic staleness function.

1. Queue prediction (S ``_update_queue_estimation``): per facility an EWMA of the raw queue
   delay, qhat <- beta d + (1 - beta) qhat, beta = 0.5, seeded with q_init = 0 (Q). No
   spread or quantile term.
2. Work budget (S ``_get_job_budget_from_queue_estimate``, ``_get_client_metadata``): when a
   facility's update is aggregated it gets a new job with
   J = max(0.5, T_sync - qhat - theta) and E = max(floor(J / c), warm_up) local steps
   (T_sync = 10, theta = 2, warm_up = 10: Q; no upper clip: S). Its learning rate is
   lr E_min / E, E_min the same formula's minimum over the facilities that have reported
   (S; no clip). The first jobs run warm_up steps at lr (our choice: S takes them from the
   client config).
3. Admission (S ``_schedule_update_with_admission``): an update is on time iff its queue
   delay d <= qhat(at dispatch) + alpha T_sync, alpha = 0.2; else it goes to a late buffer.
4. Aggregation trigger (S ``_should_aggregate``, ``_start_aggregation_timer``): at once when
   all N facilities are in the buffers, else when a timer fires (1 + 0.15) T_sync after the
   last aggregation (armed at the first arrival, re-armed after every aggregation).
5. Late buffer (S ``_merge_carry_over_clients``): at an aggregation, late updates whose
   origin round is below the current one enter with staleness tau >= 1; if nothing was
   admitted, every late update enters. Nothing is ever dropped (no tau_max), and a facility
   gets a new job only when its update has been aggregated.
6. Aggregation (A ``aggregate``): p_j ∝ phi(tau_j) E_j / sum E, normalised;
   x <- sum_j p_j x_j (an average of the local models). phi = 1 / (1 + beta tau) with
   beta = 1 (Q ``phi_staleness`` harmonic; A's options: constant, harmonic, exponential).

One deviation from S, ours: when the timer fires with both buffers empty, S leaves the spent
timer in place and never re-arms it, so later rounds wait for all N facilities. Here the next
arrival re-arms it, as at the start.

``rule="inferred"`` is the spec's earlier reconstruction from the abstract (every constant
INFERRED), kept as the labelled variant ``fedqueue-inferred``:
1. ``QueuePredictor``: EWMA (0.7 / 0.3) of log-delays and of squared forecast errors (error
   taken before the update), dhat = exp(lhat + 0.84 shat), the nominal median before the first
   return.
2. Round deadline D_r = 75th percentile of dhat_i + 20 c_i; every idle facility gets
   K_i = clip(floor((D_r - dhat_i) / c_i), 5, 40).
3. Aggregate at t_r + D_r or when this round's jobs are all back; late updates are admitted at
   the next aggregation if tau <= 2, else dropped.
4. FedNova-style step x <- x + Kbar sum_i w_i (Delta_i / K_i) / sum_i w_i,
   w_i ∝ n_i (1 + tau_i)^(-1/2).

Ablations (full profile), for either rule: ``predict=False`` (K_i = k_ref = 20 for all; the
official rule then predicts the last observed delay, the inferred one sets the deadline from
it), ``stale_weight=False`` (phi = 1; inferred: w ∝ n_i), ``cutoff=False`` (no admission
test and no timer: wait for every job, i.e. synchronous rounds with work budgeting).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .simulator import DEADLINE, Job, Simulation

RULES = ("official", "inferred")
STALENESS_FNS = ("constant", "harmonic", "exponential")


@dataclass(frozen=True)
class FedQueueConfig:
    rule: str = "official"
    # --- official (S, A; time scale from Q case2) -------------------------------------------
    t_sync: float = 10.0             # Q case2 Tsync 10 (S default 3600 s is deployment scale)
    safety_buffer: float = 2.0       # theta: Q case2 2 (S 60 s at t_sync 3600)
    alpha_admission: float = 0.2     # S, Q case2 alpha
    admission_tolerance: float = 0.15  # timer (1 + tol) T_sync: S
    beta_queue: float = 0.5          # EWMA weight of the new delay: S alpha_queue, Q beta
    q_init: float = 0.0              # Q case2 (S 2 s at t_sync 3600)
    warm_up_steps: int = 10          # Q case2 (S 20)
    lr_scaling: bool = True          # lr E_min / E_i: S (no clip)
    staleness_fn: str = "harmonic"   # Q; A's library default is "constant"
    staleness_beta: float = 1.0      # Q's harmonic is 1 / (1 + s)
    weights: str = "steps"           # p ∝ phi E_i (A); "equal": p ∝ phi (Q)
    aggregate: str = "model"         # x <- sum p x_i (A); "delta": x + sum p Delta_i (Q)
    # --- inferred (the spec's reconstruction; every value INFERRED) -------------------------
    ewma: float = 0.7
    z80: float = 0.84
    k_ref: int = 20                  # also K of the no-prediction ablation (both rules)
    deadline_pct: float = 75.0
    k_min: int = 5
    k_max: int = 40
    tau_max: int = 2
    stale_exponent: float = 0.5
    # --- ablation switches (both rules) ----------------------------------------------------
    predict: bool = True
    stale_weight: bool = True
    cutoff: bool = True

    def __post_init__(self):
        checks = [(self.rule in RULES, f"rule must be one of {RULES}"),
                  (self.staleness_fn in STALENESS_FNS,
                   f"staleness_fn must be one of {STALENESS_FNS}"),
                  (self.weights in ("steps", "equal"), "weights must be steps or equal"),
                  (self.aggregate in ("model", "delta"), "aggregate must be model or delta"),
                  (self.t_sync > 0 and self.warm_up_steps >= 1 and self.k_ref >= 1,
                   "t_sync, warm_up_steps and k_ref must be positive"),
                  (0 < self.beta_queue <= 1, "beta_queue must be in (0, 1]")]
        for ok, msg in checks:
            if not ok:
                raise ValueError(f"fedqueue: {msg}")


# ============================================================================================
# official rule (S, A, Q)
# ============================================================================================
def staleness_weight(tau, fn: str = "harmonic", beta: float = 1.0) -> np.ndarray:
    """phi(tau) of A: constant 1, harmonic 1 / (1 + beta tau), exponential exp(-beta tau)."""
    tau = np.asarray(tau, dtype=float)
    if fn == "constant":
        return np.ones_like(tau)
    if fn == "harmonic":
        return 1.0 / (1.0 + beta * tau)
    if fn == "exponential":
        return np.exp(-beta * tau)
    raise ValueError(f"unknown staleness_fn {fn!r}")


def official_steps(qhat, compute, t_sync: float, theta: float, warm_up: int) -> np.ndarray:
    """E = max(floor(J / c), warm_up), J = max(0.5, T_sync - qhat - theta) (S)."""
    budget = np.maximum(0.5, t_sync - np.asarray(qhat, dtype=float) - theta)
    return np.maximum(np.floor(budget / np.asarray(compute, dtype=float)), warm_up).astype(int)


def official_weights(steps, taus, cfg: FedQueueConfig) -> np.ndarray:
    """p_j ∝ phi(tau_j) E_j / sum E (A), or ∝ phi(tau_j) (weights="equal", Q); sums to 1."""
    steps = np.asarray(steps, dtype=float)
    base = steps / steps.sum() if cfg.weights == "steps" else np.full(steps.size, 1 / steps.size)
    fn = cfg.staleness_fn if cfg.stale_weight else "constant"
    f = staleness_weight(taus, fn, cfg.staleness_beta) * base
    return f / f.sum()


def official_aggregate(theta: np.ndarray, jobs, taus, cfg: FedQueueConfig) -> np.ndarray:
    """A: sum_j p_j x_j (model average); "delta": theta + sum_j p_j (x_j - snapshot_j)."""
    p = official_weights([j.steps for j in jobs], taus, cfg)
    if cfg.aggregate == "model":
        return p @ np.stack([j.result for j in jobs])
    return theta + p @ np.stack([j.result - j.snapshot for j in jobs])


class OfficialFedQueue:
    """The official event loop on the shared clock; ``run`` returns self (state in ``_``)."""

    def __init__(self, cfg: FedQueueConfig):
        self.cfg = cfg

    def _steps(self, sim: Simulation) -> np.ndarray:
        cfg = self.cfg
        if not cfg.predict:
            return np.full(sim.n_facilities, cfg.k_ref)
        return official_steps(self.qhat_, sim.c, cfg.t_sync, cfg.safety_buffer,
                              cfg.warm_up_steps)

    def _dispatch(self, sim: Simulation, jobs) -> None:
        """New jobs for the facilities just aggregated (S ``_get_client_metadata``)."""
        cfg = self.cfg
        steps = self._steps(sim)
        e_min = steps[self.seen_].min()
        for job in jobs:
            i = job.facility
            lr = sim.lr * e_min / steps[i] if cfg.lr_scaling else sim.lr
            self.deadline_[i] = self.qhat_[i] + cfg.alpha_admission * cfg.t_sync
            sim.submit(i, int(steps[i]), lr=lr, predicted=float(self.qhat_[i]),
                       round=sim.version)

    def _arm(self, sim: Simulation) -> None:
        self.token_ = self._next_token
        self._next_token += 1
        sim.clock.push(sim.clock.now + (1 + self.cfg.admission_tolerance) * self.cfg.t_sync,
                       DEADLINE, self.token_)

    def _aggregate(self, sim: Simulation) -> None:
        ready = self.admitted_ + [j for j in self.late_ if j.version < sim.version]
        self.late_ = [j for j in self.late_ if j.version >= sim.version]
        if not ready:                       # nothing admitted: every late update enters
            ready, self.late_ = self.late_, []
        self.admitted_ = []
        if not ready:                       # the timer fired on empty buffers: re-arm at the
            self.token_ = None              # next arrival (S leaves it spent; see docstring)
            return
        taus = [sim.version - j.version for j in ready]
        theta = official_aggregate(sim.theta, ready, taus, self.cfg)
        sim.apply(theta, list(zip(ready, taus, strict=True)))
        self._dispatch(sim, ready)
        if self.cfg.cutoff:
            self._arm(sim)

    def run(self, sim: Simulation) -> OfficialFedQueue:
        cfg, n = self.cfg, sim.n_facilities
        self.qhat_ = np.full(n, float(cfg.q_init))
        self.seen_ = np.zeros(n, dtype=bool)
        self.deadline_ = np.full(n, cfg.q_init + cfg.alpha_admission * cfg.t_sync)
        self.admitted_: list[Job] = []
        self.late_: list[Job] = []
        self.token_, self._next_token = None, 0
        first = cfg.warm_up_steps if cfg.predict else cfg.k_ref
        for i in range(n):
            sim.submit(i, first, lr=sim.lr, predicted=float(self.qhat_[i]), round=0)
        while (ev := sim.next_event()) is not None:
            if isinstance(ev, Job):
                i, d = ev.facility, ev.delay
                on_time = not cfg.cutoff or d <= self.deadline_[i]   # deadline set at dispatch
                beta = cfg.beta_queue if cfg.predict else 1.0
                self.qhat_[i] = beta * d + (1 - beta) * self.qhat_[i]
                self.seen_[i] = True
                (self.admitted_ if on_time else self.late_).append(ev)
                if cfg.cutoff and self.token_ is None:
                    self._arm(sim)
                if len(self.admitted_) + len(self.late_) >= n:
                    self._aggregate(sim)
            elif ev == self.token_:            # the current timer (older ones are ignored)
                self._aggregate(sim)
        return self


# ============================================================================================
# inferred rule (the spec's reconstruction; kept as the variant fedqueue-inferred)
# ============================================================================================
class QueuePredictor:
    """EWMA of log-delays and of squared forecast errors, per facility (INFERRED)."""

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


def fedqueue_inferred(sim: Simulation, medians, cfg: FedQueueConfig) -> QueuePredictor:
    """The spec's INFERRED FedQueue on the simulation; returns the predictor (its state)."""
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


def fedqueue(sim: Simulation, medians, cfg: FedQueueConfig = FedQueueConfig()):
    """Run FedQueue (cfg.rule: official | inferred, or an ablation) on the simulation."""
    if cfg.rule == "official":
        return OfficialFedQueue(cfg).run(sim)
    return fedqueue_inferred(sim, medians, cfg)
