"""The three baselines of the spec, each driving the shared event clock (simulator.py).

- FedAvg-sync (McMahan et al. 2017): every round each facility gets a job of K = 20 local
  steps on the current model; the round ends when the last job returns (round time = the
  longest job); the new model is the sample-size-weighted average of the returned models.
- FedAsync (Xie et al. 2019): every facility resubmits as soon as its job returns; each
  arriving model is mixed in at once, x <- (1 - a) x + a x_i with
  a = a0 (1 + tau)^(-1/2), a0 = 0.6 (polynomial staleness function, exponent 0.5), where tau
  is the number of global updates since the job's snapshot.
- FedBuff (Nguyen et al. 2022): asynchronous like FedAsync, but arriving deltas
  Delta_i = x_i - x_snapshot, down-weighted by (1 + tau_i)^(-1/2) at arrival, wait in a
  buffer; when it holds M = 4 the server steps x <- x + mean of the buffer (server lr 1).
"""

from __future__ import annotations

import numpy as np

from icml26 import fed

from .simulator import Job, Simulation


def fedavg_sync(sim: Simulation, steps: int = 20) -> None:
    while True:
        for i in range(sim.n_facilities):
            sim.submit(i, steps)
        returned: list[Job] = []
        while len(returned) < sim.n_facilities:
            ev = sim.next_event()
            if ev is None:            # horizon reached inside a round: that round never ends
                return
            returned.append(ev)
        weights = [sim.n[j.facility] for j in returned]
        theta = fed.weighted_average([np.stack([j.result for j in returned])], weights)[0]
        sim.apply(theta, [(j, sim.version - j.version) for j in returned])


def fedasync_mix(theta: np.ndarray, local: np.ndarray, tau: int, alpha0: float = 0.6,
                 exponent: float = 0.5) -> tuple[np.ndarray, float]:
    """FedAsync's staleness-weighted mixing; returns the new model and the weight used."""
    a = alpha0 * (1.0 + tau) ** (-exponent)
    return (1.0 - a) * theta + a * local, a


def fedasync(sim: Simulation, steps: int = 20, alpha0: float = 0.6,
             exponent: float = 0.5) -> None:
    for i in range(sim.n_facilities):
        sim.submit(i, steps)
    while (job := sim.next_event()) is not None:
        tau = sim.version - job.version
        theta, _ = fedasync_mix(sim.theta, job.result, tau, alpha0, exponent)
        sim.apply(theta, [(job, tau)])
        sim.submit(job.facility, steps)


def fedbuff_step(theta: np.ndarray, buffer: list[np.ndarray]) -> np.ndarray:
    """Server step of FedBuff: x + mean of the (already staleness-scaled) buffered deltas."""
    return theta + np.mean(buffer, axis=0)


def fedbuff(sim: Simulation, steps: int = 20, buffer_size: int = 4,
            exponent: float = 0.5) -> None:
    for i in range(sim.n_facilities):
        sim.submit(i, steps)
    buffer: list[np.ndarray] = []
    held: list[tuple[Job, int]] = []
    while (job := sim.next_event()) is not None:
        tau = sim.version - job.version
        buffer.append((job.result - job.snapshot) * (1.0 + tau) ** (-exponent))
        held.append((job, tau))
        if len(buffer) == buffer_size:
            sim.apply(fedbuff_step(sim.theta, buffer), held)
            buffer, held = [], []
        sim.submit(job.facility, steps)          # resubmits at once, on the latest model
