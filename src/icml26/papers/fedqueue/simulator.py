"""Event-driven simulated clock shared by every method (time unit: one "minute").

The pieces, in the order a job meets them:

- ``QueueModel``: the scheduler admission delay of the k-th job of facility i,
  log d = log m_i + l_i + sigma_q eps, with a persistent load state
  l_i <- 0.8 l_i + 0.6 sigma_q eta after every job, and (high-variance setting) a spike: with
  probability p the delay is multiplied by 5. The normals and uniforms of facility i come
  from one stream derived by ``icml26.seeding.derive_seed(paper, "queue", seed, i)`` and are
  consumed in job order, so the k-th job of facility i gets the same draws under every
  method (and under every setting of that seed: the settings differ only in sigma_q and p,
  common random numbers). The initial load state is drawn from its stationary law
  N(0, sigma_q^2) (our choice; the spec does not say).
- ``EventClock``: a heap of (time, priority, sequence, event). Ties at one time are broken
  by priority (job completions before deadlines: an update arriving exactly at a cutoff is on
  time) and then by insertion order, so the order of events is deterministic.
- ``Simulation``: submits jobs (the model snapshot travels with the job at submission,
  function-as-a-service style, so queue time counts toward staleness), trains them locally,
  schedules their completion at t + d + K c_i (communication ignored; a job may carry its
  own local learning rate), evaluates the global model after every global update and keeps
  the trace (times, accuracy, staleness of every applied update, dropped updates, every job).

The methods (``baselines.py``, ``fedqueue.py``) only decide what to submit and how to
aggregate; they all drive this one clock.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from icml26.seeding import derive_seed

ARRIVAL, DEADLINE = 0, 1          # event priorities at equal times


class QueueModel:
    """Admission delays per facility and job index (lazily, same draws for every method)."""

    def __init__(self, medians, sigma_q: float, spike_prob: float, spike_factor: float,
                 seeds, cap: int, load_decay: float = 0.8, load_scale: float = 0.6):
        self.log_m = np.log(np.asarray(medians, dtype=float))
        self.sigma, self.p, self.factor = float(sigma_q), float(spike_prob), float(spike_factor)
        self.decay, self.scale = float(load_decay), float(load_scale)
        self.cap = int(cap)
        n = len(self.log_m)
        self.eps = np.empty((n, cap))
        self.eta = np.empty((n, cap))
        self.u = np.empty((n, cap))
        self.load = np.empty(n)
        for i, s in enumerate(seeds):
            g = np.random.default_rng(s)
            self.load[i] = self.sigma * g.standard_normal()     # stationary N(0, sigma^2)
            self.eps[i] = g.standard_normal(cap)
            self.eta[i] = g.standard_normal(cap)
            self.u[i] = g.random(cap)
        self.count = np.zeros(n, dtype=int)

    @classmethod
    def for_run(cls, paper: str, seed: int, medians, sigma_q, spike_prob, spike_factor,
                cap: int):
        seeds = [derive_seed(paper, "queue", seed, i) for i in range(len(medians))]
        return cls(medians, sigma_q, spike_prob, spike_factor, seeds, cap)

    def next_delay(self, i: int) -> float:
        """Delay of facility i's next job (its k-th, k = jobs drawn so far)."""
        k = self.count[i]
        if k >= self.cap:
            raise RuntimeError(f"facility {i} ran out of pre-drawn queue delays ({self.cap})")
        self.count[i] = k + 1
        d = math.exp(self.log_m[i] + self.load[i] + self.sigma * self.eps[i, k])
        if self.u[i, k] < self.p:
            d *= self.factor
        self.load[i] = self.decay * self.load[i] + self.scale * self.sigma * self.eta[i, k]
        return d


class FixedDelays:
    """Hand-set delays (tests): delays[i][k] is the k-th job of facility i."""

    def __init__(self, delays):
        self.delays = [list(d) for d in delays]
        self.count = np.zeros(len(self.delays), dtype=int)

    def next_delay(self, i: int) -> float:
        k = self.count[i]
        self.count[i] = k + 1
        return float(self.delays[i][k])


class EventClock:
    def __init__(self):
        self.now = 0.0
        self._heap: list = []
        self._seq = 0

    def push(self, time: float, priority: int, event) -> None:
        heapq.heappush(self._heap, (float(time), priority, self._seq, event))
        self._seq += 1

    def peek_time(self) -> float:
        return self._heap[0][0] if self._heap else math.inf

    def pop(self):
        time, _, _, event = heapq.heappop(self._heap)
        self.now = time
        return event

    def __len__(self) -> int:
        return len(self._heap)


@dataclass
class Job:
    facility: int
    index: int                 # k: this facility's k-th job
    t_submit: float
    delay: float
    steps: int                 # K local SGD steps
    t_done: float
    version: int               # global model version of the snapshot
    snapshot: np.ndarray
    result: np.ndarray
    predicted: float = math.nan   # FedQueue's predicted delay at submission
    round: int = -1               # FedQueue: round (inferred) / global version (official)
    lr: float = math.nan          # local learning rate of the job
    status: int = 0               # 0 pending/unused, 1 applied, 2 dropped
    staleness: int = -1


@dataclass
class Trace:
    times: list = field(default_factory=list)
    accs: list = field(default_factory=list)
    staleness: list = field(default_factory=list)     # one per applied update
    jobs: list = field(default_factory=list)
    dropped: int = 0


class Simulation:
    """One run: data, model, clock, queues and trace. Methods call submit / record."""

    def __init__(self, model, x, y, x_test, y_test, clients, compute, queue, horizon: float,
                 lr: float, batch: int, theta0: np.ndarray, local_rngs):
        self.model, self.x, self.y, self.x_test, self.y_test = model, x, y, x_test, y_test
        self.clients = clients
        self.n = np.array([len(c) for c in clients], dtype=float)
        self.c = np.asarray(compute, dtype=float)
        self.queue = queue
        self.horizon = float(horizon)
        self.lr, self.batch = float(lr), int(batch)
        self.clock = EventClock()
        self.local_rngs = local_rngs
        self.theta = theta0.copy()
        self.version = 0
        self.jobs_of = np.zeros(len(clients), dtype=int)
        self.busy = np.zeros(len(clients), dtype=bool)
        self.trace = Trace()
        self.record()

    @property
    def n_facilities(self) -> int:
        return len(self.clients)

    # --- jobs ----------------------------------------------------------------------------
    def batches(self, i: int, steps: int) -> np.ndarray:
        """steps mini-batches of facility i: consecutive shuffled epochs cut into batches."""
        idx = self.clients[i]
        b = min(self.batch, len(idx))
        need = steps * b
        rng = self.local_rngs[i]
        order = np.concatenate([rng.permutation(idx) for _ in range(-(-need // len(idx)))])
        return order[:need].reshape(steps, b)

    def submit(self, i: int, steps: int, lr: float | None = None, **extra) -> Job:
        """Send facility i a job of `steps` local steps on the current global model.

        `lr` is the job's local learning rate (default: the run's lr; official FedQueue
        scales it per job)."""
        if self.busy[i]:
            raise RuntimeError(f"facility {i} already has a pending job")
        now = self.clock.now
        d = self.queue.next_delay(i)
        snap = self.theta
        lr = self.lr if lr is None else float(lr)
        result = self.model.local_sgd(snap, self.x, self.y, self.batches(i, steps), lr)
        job = Job(i, int(self.jobs_of[i]), now, d, int(steps), now + d + steps * self.c[i],
                  self.version, snap, result, lr=lr, **extra)
        self.jobs_of[i] += 1
        self.busy[i] = True
        self.trace.jobs.append(job)
        self.clock.push(job.t_done, ARRIVAL, job)
        return job

    def next_event(self):
        """Pop the next event if it happens within the horizon, else None (run over)."""
        if self.clock.peek_time() > self.horizon:
            return None
        ev = self.clock.pop()
        if isinstance(ev, Job):
            self.busy[ev.facility] = False
        return ev

    # --- global model ----------------------------------------------------------------------
    def apply(self, theta: np.ndarray, applied) -> None:
        """Install a new global model built from the applied jobs; evaluate it."""
        self.theta = theta
        for job, tau in applied:
            job.status, job.staleness = 1, int(tau)
            job.snapshot = job.result = None          # free the vectors; the trace keeps the rest
            self.trace.staleness.append(int(tau))
        self.version += 1
        self.record()

    def drop(self, job: Job, tau: int) -> None:
        job.status, job.staleness = 2, int(tau)
        job.snapshot = job.result = None
        self.trace.dropped += 1

    def record(self) -> None:
        self.trace.times.append(self.clock.now)
        self.trace.accs.append(self.model.accuracy(self.theta, self.x_test, self.y_test))


# --- metrics of a trace ------------------------------------------------------------------------
def time_to_target(times, accs, target: float, horizon: float) -> float:
    """First simulated time with accuracy >= target; the horizon if never (censored)."""
    hit = np.flatnonzero(np.asarray(accs) >= target)
    return float(times[hit[0]]) if hit.size else float(horizon)


def accuracy_at(times, accs, grid) -> np.ndarray:
    """Accuracy of the global model at each grid time (a step function of the updates)."""
    pos = np.searchsorted(np.asarray(times), np.asarray(grid, dtype=float), side="right") - 1
    return np.asarray(accs)[np.maximum(pos, 0)]


def normalised_auc(times, accs, horizon: float) -> float:
    """Area under accuracy vs time on [0, horizon], divided by the horizon."""
    t = np.append(np.minimum(np.asarray(times, dtype=float), horizon), horizon)
    return float(np.sum(np.diff(t) * np.asarray(accs)) / horizon)
