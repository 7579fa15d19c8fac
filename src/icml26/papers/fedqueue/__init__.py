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
- it predicts each facility's queue delay online and sizes that facility's local work (and
  scales its learning rate) to fit a round length;
- it admits an update only if its queue delay stays near the prediction; late updates are
  buffered and merged at a later aggregation, so staleness stays bounded with high
  probability;
- it aggregates with staleness-aware weights that also account for unequal local work.
The paper proves O(1/sqrt(R)) non-convex convergence under bounded staleness. Its simulations
with high queue variance and non-IID data report up to 60% less time to a target accuracy.

Here the paper's controlled experiment is rebuilt as an event-driven simulation: a heap of
job-completion events on a simulated clock in minutes, shared by every method. There are 8
facilities with lognormal queue delays, a persistent load state, and (high variance) 5x
spikes. The data are scikit-learn's digits split over facilities by a Dirichlet(alpha) label
partition, and the model is an MLP 64-32-10 trained with numpy. Four cells (low/high queue
variance x IID/non-IID) compare FedAvg-sync, FedAsync, FedBuff and FedQueue by time to 90%
test accuracy, final accuracy, and staleness. FedQueue follows the authors' own code (APPFL);
the spec's earlier reconstruction runs beside it as a labelled variant.
"""

FIDELITY = """\
- **FedQueue follows the authors' code (issue 15).** The authors are APPFL's team, and APPFL
  holds their FedQueue. Rules and constants now come from it (facts re-implemented, no code
  copied); the paper's method section was not readable, so the code is the reference.
  - From S = APPFL `src/appfl/algorithm/scheduler/queue_scheduler.py` (`QueueScheduler`):
    the queue predictor, an EWMA of the raw queue delay with weight 0.5 on the newest
    (`alpha_queue`/`beta_queue`), no spread term; the job budget
    J = max(0.5, T_sync - qhat - theta) and E = max(floor(J / c), warm_up) local steps with no
    upper clip; the learning rate lr E_min / E (no clip), E_min over the facilities that have
    reported; admission iff queue delay <= qhat(at dispatch) + 0.2 T_sync
    (`alpha_admission`); aggregation when all N facilities are in the buffers, else by a
    timer (1 + 0.15) T_sync after the last aggregation (`admission_tolerance`); late updates
    merged at the first aggregation after their origin round (staleness >= 1), all of them
    if nothing was admitted, never dropped; a facility gets a new job only once its update
    is aggregated.
  - From A = APPFL `src/appfl/algorithm/aggregator/fedqueue_aggregator.py`
    (`FedQueueAggregator`): weights p ∝ phi(tau) E / sum E, normalised (no sample-size
    factor), and the new model is the weighted average of the local models.
  - From Q = APPFL `examples/QFL/configs/queue_case2.yaml` and `utils/delays.py` (the
    authors' controlled-queue simulation, the only official constants at a simulation time
    scale): T_sync 10, theta 2, q_init 0, warm-up 10 steps, and the harmonic staleness
    function 1 / (1 + tau). S's own defaults (T_sync 3600 s, theta 60 s, q_init 2 s,
    warm-up 20) are for hour-long deployment rounds. Q's seconds are our minutes (our unit
    transfer): Q's delays (0.5 to 6) match our medians (1 to 6), so nothing is rescaled.
  - Still ours (INFERRED): the first jobs run warm_up steps at the base lr (S takes them from the
    client configuration); c is known, so S's EWMA of measured seconds per step is c itself;
    when the timer fires on empty buffers S never re-arms it (later rounds then wait for all
    N), and we re-arm it at the next arrival, as at the start; the base lr stays the
    spec's 0.05 for local SGD on digits (S's lr_base 0.01 and Q's Adam 0.001 belong to other
    models and optimisers). A's `staleness_fn` library default is `constant`; Q's harmonic
    is used, as the abstract's aggregation is staleness-aware.
  - Consequence for claim 3: the official code has no tau_max (Q sets `max_staleness:
    100000`, unused), so FedQueue's staleness bound is measured, not built in. The
    threshold stays the spec's.
- **The earlier reading, kept as `fedqueue-inferred` (reported, not claimed).** The spec's
  reconstruction from the abstract, every constant INFERRED: an EWMA (0.7/0.3) of log-delays
  and squared errors, the 80%-quantile d̂ = exp(l̂ + 0.84 ŝ), the deadline (75th percentile of
  d̂ + 20 c), the work budget K = clip(floor((D - d̂)/c), 5, 40), tau_max = 2 with drops, and
  the weights n (1 + tau)^(-1/2) with FedNova-style normalisation by K. Three more choices
  of ours, also INFERRED: the forecast error is taken before the EWMA update; before a
  facility's first return d̂ is its median m_i; a round aggregates early once every job
  submitted in that round has returned.
- **Baselines.** FedAvg-sync, FedAsync and FedBuff stay the spec's (K = 20, sample-size
  weights, FedAsync a0 = 0.6 with (1 + tau)^(-1/2), FedBuff M = 4). The paper's baseline
  configuration was not found. APPFL's library defaults differ, unverified against the
  paper: FedAsync alpha 0.9 with constant phi; FedBuff sums alpha phi (x_i - current model)/N;
  Q's FedAvg uses equal weights and fixed per-client steps.
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
- **Profiles.** Default: 4 cells x 5 methods (the four of the spec and the variant
  `fedqueue-inferred`) x 5 seeds (the spec's 4 seeds are a minimum), T_max = 250 minutes,
  target 0.90. The official FedQueue runs unscaled at every scale (its budgets of up to a few
  hundred local steps per job fit the default budget).
  The full profile adds the ablations (no prediction: K = 20 for all and qhat = the last
  delay; no staleness weights: phi = 1, A's default; no cutoff: no admission test and no
  timer), more spike probabilities and Dirichlet alphas, N = 16 and 32 facilities (which
  repeat the spec's 8-facility profile: our choice), a small CNN on the 8x8 digits (INFERRED
  architecture: conv 3x3 with 8 filters, ReLU, dense) and the make_classification task (50
  classes, 200 features, standardised; target accuracy 0.5 is our choice, since the spec
  gives none), with 10 seeds.
- **Censoring.** A run that never reaches the target accuracy within T_max has TTT = T_max
  (the spec's rule) and is passed to the checks as censored: its true TTT is at least T_max.
  A verdict those unknown TTTs could overturn is inconclusive; one they can only strengthen
  (a censored baseline in claim 1) stands. The claim notes say which runs are censored.
- **Outcome at default.** The measured numbers are in the claims' notes, computed at report
  time: mean TTT and censored runs per method in the headline cell, FedQueue's relative TTT
  reduction against each baseline (and against FedAvg-sync in the other cells), the mean
  number of global updates each method applies within T_max, and the same for the variant
  `fedqueue-inferred`. The official rules point to the mechanisms: a round lasts about
  T_sync (or 1.15 T_sync), a late facility idles until its update is merged, and the lr
  scaling gives every job about lr E_min of progress, with E_min at the warm-up floor
  whenever the slowest facility's predicted delay nears T_sync - theta. A facility
  whose job outlasts several timer rounds is merged with staleness above 2. FedBuff is
  reported, not claimed; the spec's own sanity run also found FedBuff faster, and FedQueue
  was not retuned against it.
"""
METHODS = ("fedavg-sync", "fedasync", "fedbuff", "fedqueue", "fedqueue-inferred",
           "fedqueue-nopred", "fedqueue-nostale", "fedqueue-nocutoff")
SETTINGS = None
PROPOSED = "fedqueue"
BACKEND = "numpy"
