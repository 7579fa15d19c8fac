"""Queue-aware federated learning across HPC facilities (FedQueue). Metadata only."""

TITLE = "Queue-aware federated learning across HPC facilities (FedQueue)"
TIER = "A"
ABSTRACT = "004_523bb06ad815be1c.txt, abstract 14"
SUMMARY = """\
When the clients of federated learning are HPC facilities, every local training job first waits
in a batch-scheduler queue (Slurm, PBS). These admission delays, not compute, dominate
wall-clock time. Synchronous FL (FedAvg) waits for the slowest queue in every round.
Asynchronous FL (FedAsync, FedBuff) keeps going, but applies stale updates when a queue spikes.
FedQueue makes the protocol queue-aware in three ways:
- it predicts each facility's queue delay online and sizes that facility's local work to fit a
  round deadline;
- it admits updates only until a cutoff; late updates are buffered and admitted later only if
  not too stale, so staleness is bounded;
- it aggregates with staleness-aware weights that also correct for unequal local work.
The paper proves O(1/sqrt(R)) non-convex convergence under bounded staleness. Its simulations
with high queue variance and non-IID data report up to 60% less time to a target accuracy.

Here the paper's controlled experiment is rebuilt as an event-driven simulation: a heap of
job-completion events on a simulated clock in minutes, shared by every method. There are 8
facilities with lognormal queue delays, a persistent load state, and (high variance) 5x
spikes. The data are scikit-learn's digits split over facilities by a Dirichlet(alpha) label
partition, and the model is an MLP 64-32-10 trained with numpy. Four cells (low/high queue
variance x IID/non-IID) compare FedAvg-sync, FedAsync, FedBuff and FedQueue by time to 90%
test accuracy, final accuracy, and staleness.
"""

FIDELITY = """\
- **FedQueue is INFERRED.** The abstract names only the three components, so every rule and
  constant of FedQueue is the spec's reconstruction: the EWMA predictor (0.7/0.3) of log-delays
  and squared errors, the 80%-quantile d̂ = exp(l̂ + 0.84 ŝ), the deadline (75th percentile of
  d̂ + 20 c), the work budget K = clip(floor((D - d̂)/c), 5, 40), tau_max = 2, and the
  weights n (1 + tau)^(-1/2) with FedNova-style normalisation by K. Three more choices are
  ours and also INFERRED:
  - the forecast error is taken before the EWMA update;
  - before a facility's first job returns, d̂ is its nominal median delay m_i;
  - a round aggregates early once every job submitted in that round has returned; older late
    jobs do not hold it.
- **Queue model.** The queue model is also the spec's construction (lognormal delays,
  persistent load, spikes), not the paper's. The load state starts from its stationary law
  (our choice). Facility i's delays come from one seeded stream consumed in job order. The k-th
  job of a facility therefore waits the same under every method, and the low- and
  high-variance settings share the underlying normals.
- **Simulation.** Wall-clock time is simulated only: there is no scheduler, no real facility
  and no communication cost. The snapshot travels with the job at submission, so queue time
  counts toward staleness. The 20.5% reduction of the real cross-facility deployment and the
  convergence theorem are not tested.
- **Scale.** Tiny model and data: MLP 64-32-10 on digits (70/30 stratified split per seed),
  local SGD with lr 0.05 and batch 32. Each local step is written out for one model (a
  flat-vector MLP). The test checks it equals the shared `icml26.fed` forward/backward.
- **Profiles.** Default: 4 cells x 4 methods x 5 seeds (the spec's 4 seeds are a minimum),
  T_max = 250 minutes, target 0.90.
  The full profile adds the ablations (no prediction, no staleness weights, no cutoff), more
  spike probabilities and Dirichlet alphas, N = 16 and 32 facilities (which repeat the spec's
  8-facility profile: our choice), a small CNN on the 8x8 digits (INFERRED architecture:
  conv 3x3 with 8 filters, ReLU, dense) and the make_classification task (50 classes, 200
  features, standardised; target accuracy 0.5 is our choice, since the spec gives none), with
  10 seeds.
- **Censoring.** A run that never reaches the target accuracy within T_max has TTT = T_max
  (the spec's rule) and is passed to the checks as censored: its true TTT is at least T_max.
  A verdict those unknown TTTs could overturn is inconclusive; one they can only strengthen
  (a censored baseline in claim 1) stands. The claim notes say which runs are censored.
- **Outcome at default.** The measured numbers are in the claims' notes, computed at report
  time: mean TTT and censored runs per method in the headline cell, FedQueue's relative TTT
  reduction against each baseline (and against FedAvg-sync in the other cells), and the mean
  number of global updates each method applies within T_max. The mechanism they point to:
  after spikes, the predicted 80% quantiles and the 75th-percentile deadline grow, so
  FedQueue's rounds get long while the asynchronous methods keep applying updates. FedBuff
  is reported, not claimed; the spec's own sanity run also found FedBuff faster, and
  FedQueue was not retuned against it. Bounded staleness (claim 3) holds by construction.
"""
METHODS = ("fedavg-sync", "fedasync", "fedbuff", "fedqueue", "fedqueue-nopred",
           "fedqueue-nostale", "fedqueue-nocutoff")
SETTINGS = None
PROPOSED = "fedqueue"
BACKEND = "numpy"
