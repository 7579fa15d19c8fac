"""Behaviour tests of the fedqueue paper: the event clock on hand-set delays, each server rule
(FedAvg-sync, FedAsync, FedBuff, the official FedQueue of APPFL and the earlier INFERRED
reading) on hand cases, the queue model and predictor, the models' gradients, the claim
checkers on data built to fail, and the pipeline."""

import math

import numpy as np
import pandas as pd
import pytest

from icml26 import fed, grid, pipeline
from icml26.claims import INCONCLUSIVE, NOT_REPRODUCED, REPRODUCED
from icml26.papers.fedqueue import baselines, claims, experiment, fedqueue
from icml26.papers.fedqueue import model as models
from icml26.papers.fedqueue.simulator import (
    ARRIVAL,
    DEADLINE,
    EventClock,
    FixedDelays,
    QueueModel,
    Simulation,
    accuracy_at,
    normalised_auc,
    time_to_target,
)


class Recording(Simulation):
    """A Simulation that keeps a copy of every applied model and job vector (for checks)."""

    def apply(self, theta, applied):
        self.log = getattr(self, "log", [])
        self.log.append((self.clock.now, theta.copy(),
                         [(j.facility, j.version, j.steps, j.snapshot.copy(), j.result.copy(), t)
                          for j, t in applied]))
        super().apply(theta, applied)


def tiny_sim(delays, compute, horizon, sizes=(20, 60, 40), seed=0, cls=Recording):
    x, y = experiment.load_digits_scaled()
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(y))
    clients, start = [], 0
    for n in sizes[: len(delays)]:
        clients.append(idx[start:start + n])
        start += n
    test = idx[-200:]
    net = models.MLP(64, 32, 10)
    return cls(net, x, y, x[test], y[test], clients, compute, FixedDelays(delays), horizon,
               0.05, 32, net.init(rng), [np.random.default_rng(100 + i)
                                         for i in range(len(delays))])


# --------------------------------------------------------------------------------------------
# event clock and simulator
# --------------------------------------------------------------------------------------------
def test_event_clock_orders_by_time_then_priority_then_insertion():
    clock = EventClock()
    clock.push(3.0, ARRIVAL, "c")
    clock.push(2.0, DEADLINE, "deadline")
    clock.push(1.0, ARRIVAL, "a")
    clock.push(2.0, ARRIVAL, "b1")
    clock.push(2.0, ARRIVAL, "b2")
    out = [(clock.peek_time(), clock.pop()) for _ in range(len(clock))]
    assert out == [(1.0, "a"), (2.0, "b1"), (2.0, "b2"), (2.0, "deadline"), (3.0, "c")]
    assert clock.now == 3.0


def test_fedavg_sync_round_time_is_the_longest_job_and_weights_by_samples():
    # K = 20, c = 0.1 -> 2 minutes of compute; durations round 1: 3, 6, 4; round 2: 4, 3, 7
    sim = tiny_sim([[1, 2, 9], [4, 1, 9], [2, 5, 9]], [0.1, 0.1, 0.1], horizon=15.0)
    baselines.fedavg_sync(sim, steps=20)
    assert sim.trace.times == pytest.approx([0.0, 6.0, 13.0])
    jobs = sim.trace.jobs
    assert [j.t_done for j in jobs[:3]] == pytest.approx([3.0, 6.0, 4.0])
    assert [j.t_submit for j in jobs[3:6]] == pytest.approx([6.0, 6.0, 6.0])
    # third round (submitted at 13, ends at 24) is past the horizon: never applied
    assert len(jobs) == 9 and all(j.status == 0 for j in jobs[6:])
    t, theta, applied = sim.log[0]
    n = np.array([20.0, 60.0, 40.0])
    assert [a[0] for a in applied] == [0, 2, 1]                # arrival order
    expected = sum(n[a[0]] * a[4] for a in applied) / n.sum()
    np.testing.assert_allclose(theta, expected, atol=1e-12)
    assert sim.trace.staleness == [0] * 6


def test_local_sgd_of_a_job_equals_mlp_sgd_by_hand():
    sim = tiny_sim([[1.0]], [0.1], horizon=5.0, sizes=(20,))
    theta0 = sim.theta.copy()
    job = sim.submit(0, 3)
    assert job.t_done == pytest.approx(1.3)
    # the same batches by hand, with the shared icml26.fed forward/backward
    rng = np.random.default_rng(100)
    order = np.concatenate([rng.permutation(sim.clients[0]) for _ in range(5)])[:60]
    params = [p.copy() for p in sim.model.views(theta0.copy())]
    for b in order.reshape(3, 20):
        logits, acts = fed.mlp_forward(params, sim.x[b])
        _, dl = fed.softmax_xent(logits, sim.y[b])
        params = [p - 0.05 * g for p, g in zip(params, fed.mlp_grads(params, acts, dl),
                                                strict=True)]
    np.testing.assert_allclose(job.result, sim.model.flatten(params), atol=1e-12)


# --------------------------------------------------------------------------------------------
# FedAsync and FedBuff
# --------------------------------------------------------------------------------------------
ASYNC_DELAYS = [[1.0] * 20, [4.0] * 20]   # K = 20, c = 0.05: durations 2 and 5


def test_fedasync_mixing_rule_and_staleness_by_hand():
    theta, local = np.zeros(3), np.ones(3)
    new, a = baselines.fedasync_mix(theta, local, tau=3)
    assert a == pytest.approx(0.6 / 2.0)
    np.testing.assert_allclose(new, 0.3 * local)
    sim = tiny_sim(ASYNC_DELAYS, [0.05, 0.05], horizon=10.0, sizes=(20, 60))
    theta0 = sim.theta.copy()
    baselines.fedasync(sim, steps=20)
    # arrivals: f0 @2 (tau 0), f0 @4 (0), f1 @5 (snapshot v0, now v2: 2), f0 @6 (1),
    # f0 @8 (0), f1 @10 (submitted @5 at v3, pushed before f0's @8 job: first; now v5: 2),
    # f0 @10 (submitted @8 at v5, now v6: 1)
    assert sim.trace.times == pytest.approx([0, 2, 4, 5, 6, 8, 10, 10])
    assert sim.trace.staleness == [0, 0, 2, 1, 0, 2, 1]
    _, th1, ((_, _, _, snap, res, tau),) = sim.log[0]
    np.testing.assert_allclose(snap, theta0)
    np.testing.assert_allclose(th1, 0.4 * theta0 + 0.6 * res, atol=1e-12)
    _, th3, ((_, _, _, _, res3, tau3),) = sim.log[2]
    _, th2, _ = sim.log[1]
    a = 0.6 / math.sqrt(3.0)
    np.testing.assert_allclose(th3, (1 - a) * th2 + a * res3, atol=1e-12)


def test_fedbuff_buffer_rule_by_hand():
    deltas = [np.full(2, v) for v in (1.0, 2.0, 3.0, 6.0)]
    np.testing.assert_allclose(baselines.fedbuff_step(np.zeros(2), deltas), np.full(2, 3.0))
    sim = tiny_sim(ASYNC_DELAYS, [0.05, 0.05], horizon=10.0, sizes=(20, 60))
    baselines.fedbuff(sim, steps=20, buffer_size=2)
    # arrivals f0 @2, f0 @4 -> update v1 @4 (f0 resubmits on v1); f1 @5 (snapshot v0:
    # tau 1), f0 @6 (tau 0) -> v2 @6; f0 @8 (0), f1 @10 (resubmitted @5 on v1, pushed before
    # f0's @8 job: first; tau 1) -> v3 @10; the last f0 @10 waits in the buffer
    assert sim.trace.times == pytest.approx([0, 4, 6, 10])
    assert sim.trace.staleness == [0, 0, 1, 0, 0, 1]
    assert [a[1] for a in sim.log[2][2]] == [2, 1]            # snapshot versions
    for k, (_, theta, applied) in enumerate(sim.log):
        prev = sim.log[k - 1][1] if k else None
        scaled = [(res - snap) * (1 + tau) ** -0.5 for _, _, _, snap, res, tau in applied]
        if prev is not None:
            np.testing.assert_allclose(theta, prev + np.mean(scaled, axis=0), atol=1e-12)


# --------------------------------------------------------------------------------------------
# FedQueue, official rule (APPFL queue_scheduler.py + fedqueue_aggregator.py, Q case2)
# --------------------------------------------------------------------------------------------
OFFICIAL = fedqueue.FedQueueConfig()      # T_sync 10, theta 2, alpha 0.2, tol 0.15, beta 0.5


def test_official_defaults_are_the_authors_settings():
    c = OFFICIAL
    assert (c.rule, c.t_sync, c.safety_buffer, c.alpha_admission, c.admission_tolerance,
            c.beta_queue, c.q_init, c.warm_up_steps) == ("official", 10.0, 2.0, 0.2, 0.15,
                                                         0.5, 0.0, 10)
    assert (c.lr_scaling, c.staleness_fn, c.staleness_beta, c.weights, c.aggregate) == (
        True, "harmonic", 1.0, "steps", "model")
    # the config file states the same values, and the run uses them
    fq = pipeline.resolve("fedqueue", "default")["params"]["fedqueue"]
    assert experiment.fedqueue_config({"fedqueue": fq}, "fedqueue") == OFFICIAL
    assert experiment.fedqueue_config({"fedqueue": fq}, "fedqueue-inferred").rule == "inferred"
    with pytest.raises(ValueError, match="rule"):
        fedqueue.FedQueueConfig(rule="nope")


def test_official_work_budget_and_lr_by_hand():
    # J = max(0.5, 10 - qhat - 2); E = max(floor(J / c), 10)
    qhat = np.array([0.0, 1.5, 7.0, 20.0])
    c = np.array([0.125, 0.125, 0.125, 0.05])
    e = fedqueue.official_steps(qhat, c, 10.0, 2.0, 10)
    # 8/0.125 = 64; 6.5/0.125 = 52; J = 1 -> 8 -> warm-up floor 10; J = 0.5 -> 10 -> 10
    assert e.tolist() == [64, 52, 10, 10]
    assert fedqueue.official_steps([0.0], [0.25], 10.0, 2.0, 10).tolist() == [32]


def test_official_staleness_functions_and_weights_by_hand():
    tau = [0, 1, 3]
    np.testing.assert_allclose(fedqueue.staleness_weight(tau, "constant"), [1, 1, 1])
    np.testing.assert_allclose(fedqueue.staleness_weight(tau, "harmonic", 1.0),
                               [1, 1 / 2, 1 / 4])
    np.testing.assert_allclose(fedqueue.staleness_weight(tau, "harmonic", 0.5),
                               [1, 1 / 1.5, 1 / 2.5])
    np.testing.assert_allclose(fedqueue.staleness_weight(tau, "exponential", 0.5),
                               np.exp([0, -0.5, -1.5]))
    # A: p ∝ phi(tau) E / sum E: E = [60, 10, 30], phi = [1, 1/2, 1/4] -> [60, 5, 7.5]
    p = fedqueue.official_weights([60, 10, 30], tau, OFFICIAL)
    np.testing.assert_allclose(p, np.array([60, 5, 7.5]) / 72.5)
    eq = fedqueue.official_weights([60, 10, 30], tau,
                                   fedqueue.FedQueueConfig(weights="equal"))
    np.testing.assert_allclose(eq, np.array([1, 0.5, 0.25]) / 1.75)
    flat = fedqueue.official_weights([60, 10, 30], tau,
                                     fedqueue.FedQueueConfig(stale_weight=False))
    np.testing.assert_allclose(flat, np.array([60, 10, 30]) / 100)


def test_official_aggregate_is_a_model_average_and_delta_variant():
    a = _J(0, 0, 30, np.array([1.0, 1.0]), np.array([3.0, 1.0]))
    b = _J(1, 0, 10, np.array([0.0, 0.0]), np.array([0.0, 4.0]))
    theta = np.array([10.0, 10.0])
    # tau = [0, 1]: p ∝ [30, 10 / 2] = [6/7, 1/7]; the global model is ignored (model average)
    out = fedqueue.official_aggregate(theta, [a, b], [0, 1], OFFICIAL)
    np.testing.assert_allclose(out, (6 * np.array([3.0, 1.0]) + np.array([0.0, 4.0])) / 7)
    out = fedqueue.official_aggregate(theta, [a, b], [0, 1],
                                      fedqueue.FedQueueConfig(aggregate="delta"))
    np.testing.assert_allclose(out, theta + (6 * np.array([2.0, 0.0])
                                             + np.array([0.0, 4.0])) / 7)


def test_official_fedqueue_event_loop_by_hand():
    """Two facilities, c = 0.125 (exact in binary), q_init 0, deadline_i = qhat_i + 2,
    timer 11.5 after the last aggregation, worked out by hand (times in minutes).

    @0     both get E = 10 (warm-up) at lr 0.05; deadlines 2.
    @1.75  f0 back (d 0.5 <= 2: admitted), qhat0 = 0.25; timer armed @13.25.
    @4.25  f1 back (d 3 > 2: late), qhat1 = 1.5. Both in the buffers -> v1 = x_f0 (f1's
           origin round 0 is the current one: it waits). f0: E = floor(7.75/0.125) = 62,
           E1 would be floor(6.5/0.125) = 52 = E_min -> lr0 = 0.05 * 52/62; deadline 2.25;
           timer @15.75 (the one @13.25 is void). f1 is idle: not resubmitted.
    @14    f0 back (d 2 <= 2.25), qhat0 = 1.125 -> v2 from f0 (tau 0, E 62) and f1 (origin
           0 < 1: tau 1, E 10): p ∝ [62, 10/2]. Both resubmitted: E = [55, 52], lr0 =
           0.05 * 52/55, lr1 = 0.05; deadlines [3.125, 3.5]; timer @25.5.
    f0 then waits 1 each time (E 55, back 7.875 after dispatch), f1 waits 30 (late @50.5):
    timers @25.5, @37, @48.5 apply f0 alone (v3, v4, v5); f0 back @56.375 with f1 in the
    late buffer -> v6 merges f1 with tau = 5 - 2 = 3 (never dropped). qhat1 = 15.75 ->
    J = 0.5 -> E1 = 10 (floor) = E_min, so f0's lr = 0.05 * 10/55.
    """
    sim = tiny_sim([[0.5, 2.0] + [1.0] * 20, [3.0, 30.0] + [1.0] * 5], [0.125, 0.125],
                   horizon=57.0, sizes=(20, 60))
    fq = fedqueue.fedqueue(sim, [1.0, 1.0], OFFICIAL)
    assert sim.trace.times == pytest.approx([0, 4.25, 14.0, 25.5, 37.0, 48.5, 56.375])
    assert sim.trace.staleness == [0, 0, 1, 0, 0, 0, 0, 3]
    jobs = sim.trace.jobs
    assert [(j.facility, j.t_submit) for j in jobs] == [
        (0, 0), (1, 0), (0, 4.25), (0, 14.0), (1, 14.0), (0, 25.5), (0, 37.0), (0, 48.5),
        (0, 56.375), (1, 56.375)]
    assert [j.steps for j in jobs] == [10, 10, 62, 55, 52, 55, 55, 55, 55, 10]
    lr = 0.05
    np.testing.assert_allclose([j.lr for j in jobs], [
        lr, lr, lr * 52 / 62, lr * 52 / 55, lr, lr * 52 / 55, lr * 52 / 55, lr * 52 / 55,
        lr * 10 / 55, lr])
    assert [j.status for j in jobs[:8]] == [1] * 8 and sim.trace.dropped == 0
    assert jobs[4].staleness == 3 and jobs[4].t_done == pytest.approx(50.5)
    np.testing.assert_allclose([j.predicted for j in jobs[:5]], [0, 0, 0.25, 1.125, 1.5])
    # v2: the model average p ∝ phi(tau) E = [62, 5] of f0's (tau 0) and f1's (tau 1) models
    _, theta2, applied = sim.log[1]
    (f_a, _, e_a, _, x_a, t_a), (f_b, _, e_b, _, x_b, t_b) = applied
    assert (f_a, e_a, t_a, f_b, e_b, t_b) == (0, 62, 0, 1, 10, 1)
    np.testing.assert_allclose(theta2, (62 * x_a + 5 * x_b) / 67, atol=1e-12)
    assert fq.qhat_[1] == pytest.approx(15.75)


def test_official_timer_fired_on_empty_buffers_is_rearmed_by_the_next_arrival():
    """v1 @1.75 (both back, E = 62 each); both then wait 20 and 40: the timer @13.25 finds
    nothing. S would never re-arm it (the next update only when both are back, @49.5);
    here f0's late arrival @29.5 re-arms it, and @41 f0 alone is applied (nothing admitted:
    every late update enters, tau 0)."""
    sim = tiny_sim([[0.5, 20.0] + [1.0] * 5, [0.5, 40.0] + [1.0] * 5], [0.125, 0.125],
                   horizon=45.0, sizes=(20, 60))
    fedqueue.fedqueue(sim, [1.0, 1.0], OFFICIAL)
    assert sim.trace.times == pytest.approx([0, 1.75, 41.0])
    assert sim.trace.staleness == [0, 0, 0]
    assert sim.trace.jobs[-1].steps == 10             # qhat0 = 10.125: J = 0.5 -> warm-up


def test_official_ablations_nocutoff_and_nopred():
    delays = [[0.5, 2.0] + [1.0] * 50, [3.0, 30.0] + [1.0] * 50]
    sim = tiny_sim(delays, [0.125, 0.125], horizon=45.0, sizes=(20, 60))
    fedqueue.fedqueue(sim, [1.0, 1.0], fedqueue.FedQueueConfig(cutoff=False))
    # no admission test and no timer: each update waits for both facilities (synchronous)
    assert sim.trace.times == pytest.approx([0, 4.25, 4.25 + 30 + 52 * 0.125])
    assert set(sim.trace.staleness) == {0}
    sim = tiny_sim(delays, [0.125, 0.125], horizon=60.0, sizes=(20, 60))
    fedqueue.fedqueue(sim, [1.0, 1.0], fedqueue.FedQueueConfig(predict=False))
    assert {j.steps for j in sim.trace.jobs} == {20} and {j.lr for j in sim.trace.jobs} == {0.05}
    # qhat = the last delay: f0's deadline after d = 0.5 is 0.5 + 2, its next d = 2 admitted
    assert sim.trace.jobs[2].predicted == 0.5


# --------------------------------------------------------------------------------------------
# FedQueue, the earlier INFERRED reading (variant fedqueue-inferred)
# --------------------------------------------------------------------------------------------
INFERRED = fedqueue.FedQueueConfig(rule="inferred")


def test_predictor_ewma_and_quantile_by_hand():
    p = fedqueue.QueuePredictor([2.0, 3.0])
    np.testing.assert_allclose(p.quantile(), [2.0, 3.0])           # priors before any job
    p.observe(0, 1.0)                                              # init from the first job
    assert p.lhat[0] == 0.0 and p.s2hat[0] == 0.0
    np.testing.assert_allclose(p.quantile(), [1.0, 3.0])
    p.observe(0, math.e)                       # error 1 vs the forecast lhat = 0
    assert p.s2hat[0] == pytest.approx(0.3) and p.lhat[0] == pytest.approx(0.3)
    p.observe(0, math.e ** 2)                  # error 1.7
    assert p.s2hat[0] == pytest.approx(0.7 * 0.3 + 0.3 * 1.7 ** 2)
    assert p.lhat[0] == pytest.approx(0.7 * 0.3 + 0.3 * 2.0)
    assert p.quantile()[0] == pytest.approx(math.exp(p.lhat[0] + 0.84 * math.sqrt(p.s2hat[0])))
    assert p.last[0] == pytest.approx(math.e ** 2)


def test_deadline_and_work_budget_clipping():
    dhat = np.array([1.0, 2.75, 0.5, 6.0])
    c = np.array([0.25, 0.25, 0.01, 0.05])
    dl = fedqueue.deadline(dhat, c, k_ref=20, pct=75.0)
    # dhat + 20 c = [6, 7.75, 0.7, 7]: 75th percentile (linear) = 7 + 0.25 * 0.75
    assert dl == pytest.approx(7.1875)
    ks = fedqueue.work_budget(3.0, dhat, c, 5, 40)
    # (3-1)/0.25 = 8; (3-2.75)/0.25 = 1 -> 5; (3-0.5)/0.01 = 250 -> 40; negative -> 5
    assert ks.tolist() == [8, 5, 40, 5]


class _J:
    def __init__(self, facility, version, steps, snapshot, result):
        self.facility, self.version, self.steps = facility, version, steps
        self.snapshot, self.result = snapshot, result


def test_staleness_admission_and_aggregation_by_hand():
    jobs = [_J(0, 5, 1, 0, 0), _J(1, 4, 1, 0, 0), _J(2, 3, 1, 0, 0), _J(3, 2, 1, 0, 0)]
    admitted, dropped = fedqueue.admit(jobs, version=5, tau_max=2)
    assert [t for _, t in admitted] == [0, 1, 2] and [t for _, t in dropped] == [3]
    theta = np.array([1.0, 1.0])
    a = _J(0, 0, 2, np.zeros(2), np.array([2.0, 0.0]))     # g = [1, 0]
    b = _J(1, 0, 4, np.zeros(2), np.array([0.0, 8.0]))     # g = [0, 2]
    n = np.array([1.0, 3.0])
    out = fedqueue.aggregate(theta, [(a, 0), (b, 3)], n)
    w = np.array([1.0, 3.0 * 0.5])                         # n (1 + tau)^-1/2
    expected = theta + 3.0 * (w[0] * np.array([1, 0]) + w[1] * np.array([0, 2])) / w.sum()
    np.testing.assert_allclose(out, expected)
    plain = fedqueue.aggregate(theta, [(a, 0), (b, 3)], n, stale_weight=False)
    np.testing.assert_allclose(plain, theta + 3.0 * np.array([1.0, 6.0]) / 4.0)


def test_fedqueue_rounds_cutoff_and_late_admission_by_hand():
    """Two facilities, priors m = [1, 1], c = 0.05, worked out by hand (times in minutes).

    r0 @0: dhat = [1, 1], D = pct75([2, 2]) = 2, K = [20, 20]. f0 waits 0.5 (back @1.5),
        f1 waits 3 (back @4: late). Cutoff @2 applies f0 (v1).
    r1 @2: dhat = [0.5, 1 (prior)], D = 1.5 + 0.75 * 0.5 = 1.875; only f0 idle,
        K = floor(1.375 / 0.05) = 27; waits 0.2 -> back @3.55: round complete, early cutoff
        applies f0 (v2).
    r2 @3.55: f0's EWMA after 0.5, 0.2 gives dhat0; K = floor((D - dhat0) / 0.05); f0 waits 5
        (back @9.85, snapshot v2). f1 arrives @4 (snapshot v0) and waits in the buffer; the
        deadline @3.55 + D applies it with tau = 2 (v3).
    r3: f1 alone, dhat1 = 3 -> K = floor((D - 3) / 0.05) = 7, back after 0.1 + 0.35 (v4).
    r4: f1's forecast error makes dhat1 > D: K clipped to 5. ... f0's update returns @9.85
        with tau > 2 and is dropped.
    """
    sim = tiny_sim([[0.5, 0.2, 5.0] + [0.1] * 200, [3.0] + [0.1] * 200], [0.05, 0.05],
                   horizon=20.0, sizes=(20, 60))
    fedqueue.fedqueue(sim, [1.0, 1.0], INFERRED)
    jobs = sim.trace.jobs
    err = math.log(0.2) - math.log(0.5)
    lhat0, s2 = 0.7 * math.log(0.5) + 0.3 * math.log(0.2), 0.3 * err ** 2
    dhat0 = math.exp(lhat0 + 0.84 * math.sqrt(s2))
    d2 = (dhat0 + 1) + 0.75 * (2 - (dhat0 + 1))
    d3 = (dhat0 + 1) + 0.75 * (4 - (dhat0 + 1))
    assert [(j.facility, j.steps) for j in jobs[:6]] == [
        (0, 20), (1, 20), (0, 27), (0, math.floor((d2 - dhat0) / 0.05)),
        (1, math.floor((d3 - 3) / 0.05)), (1, 5)]
    t4 = 3.55 + d2 + 0.1 + 7 * 0.05
    assert sim.trace.times[:6] == pytest.approx([0.0, 2.0, 3.55, 3.55 + d2, t4,
                                                 t4 + 0.1 + 5 * 0.05])
    assert sim.trace.staleness[:5] == [0, 0, 2, 0, 0]         # one entry per applied job
    late = jobs[1]
    assert late.t_done == pytest.approx(4.0) and late.status == 1 and late.staleness == 2
    slow = jobs[3]
    assert slow.t_done == pytest.approx(3.55 + 5 + slow.steps * 0.05)
    assert slow.status == 2 and slow.staleness > 2 and sim.trace.dropped >= 1
    assert max(sim.trace.staleness) <= 2


def test_fedqueue_drops_updates_staler_than_tau_max():
    # f1 waits 30 minutes while f0 runs many short rounds: its update is dropped
    sim = tiny_sim([[0.1] * 200, [30.0] + [0.1] * 50], [0.05, 0.05], horizon=40.0,
                   sizes=(20, 60))
    fedqueue.fedqueue(sim, [0.1, 0.1], INFERRED)
    late = sim.trace.jobs[1]
    assert late.facility == 1 and late.status == 2 and late.staleness > 2
    assert sim.trace.dropped >= 1 and max(sim.trace.staleness) <= 2


def test_fedqueue_staleness_never_exceeds_two_in_a_short_high_variance_run():
    cfg = pipeline.resolve("fedqueue", "smoke")
    cfg["params"] = {**cfg["params"], "horizon": 60}
    x, y = experiment.load_digits_scaled()
    data = {"digits_x": x, "digits_y": y}
    run = grid.Run("fedqueue-inferred", "highvar-noniid", 0)
    sim = experiment.simulate(cfg, experiment.federation(cfg, data, run.setting, 0), run)
    assert len(sim.trace.staleness) > 10
    assert max(sim.trace.staleness) <= 2
    ks = [j.steps for j in sim.trace.jobs]
    assert min(ks) >= 5 and max(ks) <= 40


# --------------------------------------------------------------------------------------------
# queue model, metrics, models
# --------------------------------------------------------------------------------------------
def test_queue_model_same_draws_per_job_index_and_hand_values():
    args = ("fedqueue", 3, [1.0, 2.0], 1.0, 0.1, 5.0, 50)
    a, b = QueueModel.for_run(*args), QueueModel.for_run(*args)
    seq_a = [a.next_delay(0) for _ in range(5)] + [a.next_delay(1) for _ in range(5)]
    seq_b = []
    for _ in range(5):                                     # interleaved job order
        seq_b.append((b.next_delay(1), b.next_delay(0)))
    assert seq_a[:5] == [x for _, x in seq_b] and seq_a[5:] == [x for x, _ in seq_b]
    q = QueueModel([2.0, 3.0], 0.0, 0.0, 5.0, [1, 2], cap=4)
    assert [q.next_delay(0), q.next_delay(1)] == pytest.approx([2.0, 3.0])
    q = QueueModel([2.0], 0.0, 1.0, 5.0, [1], cap=4)
    assert q.next_delay(0) == pytest.approx(10.0)
    # log d = log m + l + sigma eps; l <- 0.8 l + 0.6 sigma eta
    q = QueueModel([1.0], 0.5, 0.0, 5.0, [7], cap=3)
    l0 = q.load[0]
    d0, d1 = q.next_delay(0), q.next_delay(0)
    assert math.log(d0) == pytest.approx(l0 + 0.5 * q.eps[0, 0])
    assert math.log(d1) == pytest.approx(0.8 * l0 + 0.3 * q.eta[0, 0] + 0.5 * q.eps[0, 1])


def test_trace_metrics_by_hand():
    times, accs = [0.0, 2.0, 5.0], [0.1, 0.95, 0.5]
    assert time_to_target(times, accs, 0.9, 10.0) == 2.0
    assert time_to_target(times, accs, 0.99, 10.0) == 10.0
    assert normalised_auc(times, accs, 10.0) == pytest.approx((0.2 + 3 * 0.95 + 5 * 0.5) / 10)
    np.testing.assert_allclose(accuracy_at(times, accs, [0, 1.9, 2, 7]), [0.1, 0.1, 0.95, 0.5])


def test_cnn_gradients_match_finite_differences():
    rng = np.random.default_rng(0)
    net = models.CNN(side=5, filters=2, n_classes=3)
    theta = net.init(rng)
    x, y = rng.random((4, 25)), rng.integers(0, 3, 4)

    def loss(th):
        z = net.logits(net.views(th), x)
        z = z - z.max(1, keepdims=True)
        return float(np.mean(np.log(np.exp(z).sum(1)) - z[np.arange(4), y]))

    grad = net.flatten(net.grads(net.views(theta.copy()), x, y))
    num = np.zeros_like(theta)
    for k in range(theta.size):
        e = np.zeros_like(theta)
        e[k] = 1e-6
        num[k] = (loss(theta + e) - loss(theta - e)) / 2e-6
    np.testing.assert_allclose(grad, num, atol=1e-6)


# --------------------------------------------------------------------------------------------
# claims on data built to fail, and the pipeline
# --------------------------------------------------------------------------------------------
def _metrics(ttt, acc, fq_max, async_p95):
    """Per-run metrics of the default grid: ttt[m] = (high-variance TTT, low-variance TTT)."""
    cfg = pipeline.resolve("fedqueue", "default")
    rows = []
    for s in cfg["settings"]:
        for seed in range(5):
            for m in ("fedqueue", "fedavg-sync", "fedasync", "fedbuff"):
                t = ttt[m][0 if s.startswith("highvar") else 1]
                rows.append({"method": m, "setting": s, "seed": seed, "ttt": t + 0.5 * seed,
                             "censored": 0.0, "final_acc": acc[m] + 0.001 * seed,
                             "stale_max": fq_max if m == "fedqueue" else 50,
                             "stale_p95": (async_p95 if m == "fedasync" else 1.0) + 0.1 * seed})
    return cfg, pd.DataFrame(rows)


def test_claims_reproduced_on_good_and_not_on_bad_metrics():
    acc = {"fedqueue": 0.95, "fedavg-sync": 0.9, "fedasync": 0.93, "fedbuff": 0.9}
    good = {"fedqueue": (50.0, 45.0), "fedavg-sync": (200.0, 50.0), "fedasync": (100.0, 60.0),
            "fedbuff": (60.0, 40.0)}
    cfg, metrics = _metrics(good, acc, 2, 6.0)
    verdicts = {c.id: c.verdict for c in claims.check(cfg, metrics, None)}
    assert set(verdicts.values()) == {REPRODUCED}
    bad = {"fedqueue": (180.0, 40.0), "fedavg-sync": (200.0, 100.0), "fedasync": (100.0, 60.0),
           "fedbuff": (60.0, 40.0)}
    cfg, metrics = _metrics(bad, {**acc, "fedqueue": 0.85}, 5, 1.0)
    verdicts = {c.id: c.verdict for c in claims.check(cfg, metrics, None)}
    assert set(verdicts.values()) == {NOT_REPRODUCED}


def test_smoke_pipeline_end_to_end(tmp_path):
    cfg = pipeline.resolve("fedqueue", "smoke")
    out = pipeline.run_inprocess(cfg, tmp_path)
    assert out["claims"].exists()
    assert (out["figures"] / "accuracy_vs_time.png").exists()
    metrics = pd.read_csv(out["metrics"])
    assert set(metrics["method"]) == {"fedavg-sync", "fedqueue"}
    fq = metrics[metrics["method"] == "fedqueue"]
    assert (fq["dropped"] == 0).all() and (fq["mean_steps"] > 20).all()   # official budgets


def test_censored_ttt_cannot_carry_the_headline_and_conservative_side_stands():
    """A censored FedQueue TTT (true TTT >= T_max) could overturn a pass: inconclusive. A
    censored baseline TTT only strengthens a pass (the spec's "conservative"): it stands."""
    acc = {"fedqueue": 0.95, "fedavg-sync": 0.9, "fedasync": 0.93, "fedbuff": 0.9}
    good = {"fedqueue": (50.0, 45.0), "fedavg-sync": (200.0, 50.0), "fedasync": (100.0, 60.0),
            "fedbuff": (60.0, 40.0)}
    cfg, metrics = _metrics(good, acc, 2, 6.0)
    hn = (metrics["setting"] == "highvar-noniid") & (metrics["seed"] == 1)
    base = metrics.copy()
    base.loc[hn & (base["method"] == "fedavg-sync"), "censored"] = 1.0
    c1 = claims.check(cfg, base, None)[0]
    assert c1.verdict == REPRODUCED
    assert c1.parts["TTT_FQ - 0.7 TTT_sync"].censored == ("1",)
    fq = metrics.copy()
    fq.loc[hn & (fq["method"] == "fedqueue"), "censored"] = 1.0
    c1 = claims.check(cfg, fq, None)[0]
    assert c1.verdict == INCONCLUSIVE and "Censored" in c1.to_dict()["note"]


def test_censor_direction_and_both_ways():
    d = claims.censor_direction([(1, [True, False, True, False]), (-1, [False, True, True,
                                                                         False])])
    assert d.tolist() == [1, -1, 2, 0]
    # a seed censored both ways: a "not reproduced" the unknown values could overturn is
    # inconclusive, and so is a "reproduced"
    vals = pd.Series([5.0, 6.0, 5.5, 6.5, 5.2])
    assert claims.censored_check(vals, "<", 0.0, [0, 0, 2, 0, 0]).verdict == INCONCLUSIVE
    assert claims.censored_check(-vals, "<", 0.0, [0, 0, 2, 0, 0]).verdict == INCONCLUSIVE
    assert claims.censored_check(-vals, "<", 0.0, [0, 0, 0, 0, 0]).verdict == REPRODUCED


def test_a_failed_run_is_named_and_cannot_pass():
    acc = {"fedqueue": 0.95, "fedavg-sync": 0.9, "fedasync": 0.93, "fedbuff": 0.9}
    good = {"fedqueue": (50.0, 45.0), "fedavg-sync": (200.0, 50.0), "fedasync": (100.0, 60.0),
            "fedbuff": (60.0, 40.0)}
    cfg, metrics = _metrics(good, acc, 2, 6.0)
    metrics.loc[(metrics["method"] == "fedqueue") & (metrics["seed"] == 3)
                & (metrics["setting"] == "lowvar-iid"), "final_acc"] = np.nan
    c4 = claims.check(cfg, metrics, None)[3]
    assert c4.verdict == INCONCLUSIVE and c4.parts["lowvar-iid"].failed == ("3",)


def test_bad_fedqueue_params_are_one_config_error_line():
    from pathlib import Path

    from icml26.config import check_params
    from icml26.errors import ConfigError

    root = Path(__file__).resolve().parents[2] / "config"
    for bad in ({"rule": "offical"}, {"t_sync": -1.0}, {"staleness_fn": "linear"},
                {"warmup_steps": 10}):
        cfg = pipeline.resolve("fedqueue", "default")
        cfg["params"]["fedqueue"] = {**cfg["params"]["fedqueue"], **bad}
        with pytest.raises(ConfigError) as info:
            check_params(cfg, root)
        assert "\n" not in str(info.value) and "fedqueue" in str(info.value)


def test_claim_notes_report_the_inferred_variant_and_measured_staleness():
    acc = {"fedqueue": 0.95, "fedavg-sync": 0.9, "fedasync": 0.93, "fedbuff": 0.9}
    good = {"fedqueue": (50.0, 45.0), "fedavg-sync": (200.0, 50.0), "fedasync": (100.0, 60.0),
            "fedbuff": (60.0, 40.0)}
    cfg, metrics = _metrics(good, acc, 2, 6.0)
    inf = metrics[metrics["method"] == "fedqueue"].assign(method="fedqueue-inferred",
                                                          ttt=400.0, final_acc=0.1,
                                                          stale_max=2.0)
    both = pd.concat([metrics, inf], ignore_index=True)
    out = claims.check(cfg, both, None)
    # the variant is reported in the notes and never changes a verdict
    assert [c.verdict for c in out] == [c.verdict for c in claims.check(cfg, metrics, None)]
    assert "fedqueue-inferred" in out[0].note and "fedqueue-inferred" in out[3].note
    assert "runs with max staleness > 2: 0 of 20" in out[2].note
    cfg, metrics = _metrics(good, acc, 3, 6.0)
    c3 = claims.check(cfg, metrics, None)[2]
    assert c3.verdict == NOT_REPRODUCED and "runs with max staleness > 2: 20 of 20" in c3.note


def test_prediction_error_skips_zero_predictions():
    cfg = pipeline.resolve("fedqueue", "smoke")
    run = grid.Run("fedqueue", "highvar-noniid", 0)
    jobs = np.array([[0, 0, 0, 2.0, 10, 3.0, 0.0, 1, 0, 0, 0.05],      # q_init = 0: skipped
                     [0, 1, 3, 4.0, 10, 8.0, 2.0, 1, 0, 1, 0.05]])
    state = {f"{run.key}/t": np.array([0.0, 3.0]), f"{run.key}/acc": np.array([0.1, 0.5]),
             f"{run.key}/staleness": np.array([0]), f"{run.key}/jobs": jobs,
             f"{run.key}/dropped": np.array([0])}
    out = experiment.evaluate(cfg, None, [run], state, None)[0]
    assert out["pred_err"] == pytest.approx(math.log(2.0))
