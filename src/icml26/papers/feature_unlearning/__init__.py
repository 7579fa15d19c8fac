"""Fast-slow dynamics of feature learning and unlearning in two-layer networks. Metadata only."""

TITLE = "Fast-slow dynamics of feature learning and unlearning in two-layer networks"
TIER = "B"
ABSTRACT = "003_a30f62c7b2d8f5c0.txt, abstract 9"

SUMMARY = """\
Two-layer networks trained for long times can lose a feature they learned early ("feature
unlearning"). The paper takes the infinite-width, large-batch limit of SGD on a two-layer
network and describes it by ODEs for macroscopic quantities on two time scales: the alignment
m of the first-layer weights with the target direction is fast, the second-layer weight a is
slow. On the critical manifold of the fast subsystem (dL/dm = 0, m = m*(a)) the slow flow of a
decides whether the alignment is kept or lost: a strong primary nonlinear (second Hermite) term
in the target induces unlearning, a larger initial second-layer scale a0 mitigates it, and the
loss of alignment is a population effect (the population loss keeps decreasing while it
happens), not finite-sample overfitting. Here the spec's reconstructed 2-D model (spherical
ReLU first layer, equal second-layer weights, target He_1 - beta He_2 / sqrt(2), learning-rate
ratio eps) is integrated over a grid of (beta, a0) cells, its critical manifold and slow
equilibrium a_eq are computed, and finite networks (d = 32, N = 128, fresh batches of 1024)
trained online by spherical SGD are compared with the ODE.
"""

FIDELITY = """\
- **Source**: abstract only; no official code was found (spec). The model is the spec's
  reconstruction, not the paper's exact model: spherical first layer at a common overlap m,
  all second-layer weights equal to a, target He_1(z) - beta He_2(z)/sqrt(2) with the sign
  opposite to ReLU's second Hermite coefficient, explicit rate ratio eps = 0.05. The Tensor
  Program derivation and the paper's analytic scaling laws are not reproduced.
- **ODE**: expectations by probabilists' Gauss-Hermite quadrature with the spec's 81 nodes and
  the spec's closed form of the inner ReLU expectation. Integration by scipy's solve_ivp (RK45,
  rtol 1e-9, atol 1e-11, through icml26.dynamics) reported on the grid t = k * 0.05 up to
  T = 60, instead of the spec's explicit Euler with dt = 0.005 (the spec allows other
  integrators; the adaptive one is more accurate). The quadrature is tested against the exact
  ReLU population loss (arc-cosine kernel); the report's cell table gives the largest
  difference of the loss along each trajectory (it grows as m -> 1, where the kink of ReLU is
  poorly resolved by 81 nodes).
- **Critical manifold**: m*(a) by bisection of dL/dm on (0, 1) on the spec's a-grid
  0.05..3 (step 0.01); m* = 1 where dL/dm has no interior root (beta = 0, a <= 1). a_eq by
  bisection of the reduced slow flow on [1e-3, 100] (not only on the grid).
- **ODE seeds**: the ODE is deterministic. Each ODE cell is solved once per job and the same
  arrays are stored for every seed of the grid (copies); claims on the ODE read one value with
  check_value. Seeds matter only for the networks.
- **Networks**: the spec's recipe (d = 32, N = 128, B = 1024 fresh samples per step, eta_a =
  0.05, eta_w = eta_a / eps, 1000 steps = ODE time 50, w_j uniform on the sphere) in float32,
  5 seeds per cell at default (the spec's 3 is a minimum), 10 at full. m_net is recorded every
  10 steps. The evaluation loss on the fixed 20k-sample batch is computed every 50 steps, at the
  last record and at the record where m_net peaks (not at every record: the budget);
  m_final is the mean of the last 5 records, m_net(50) the last record.
- **Claim readings**: "non-decreasing" / "non-increasing" of an integrated trajectory allow the
  integrator's rounding (claim 1: no fall of m larger than 1e-9 between records after t = 1;
  claim 6: the spec's tolerance 1e-9 on L); claims 2 and 3 compare the deterministic D values
  of neighbouring cells exactly. Claim 6's network part reads every network run (all cells,
  all seeds, check_every); claim 7's "means over seeds" are pooled statistics with a bootstrap
  interval over seeds.
- **Full profile** (cluster): d = 128, N in {128, 512, 2048} (claims read the widest; the
  others in the width table), B = 8192, beta up to 2, a0 in {0.03, 0.1, 0.3, 1, 2, 3} (2.0
  kept so the spec's cells are present), eps in {0.01, 0.02, 0.05, 0.1, 0.2} at beta in
  {0.5, 1.0}, a0 = 0.1, tanh cells (INFERRED: tanh replaces ReLU in the student of the ODE and
  the network; its second Hermite coefficient is zero, so the He_2 term cannot be fitted at
  all), 10 seeds, and log-log fits of D against beta and against eps (icml26.scaling).
  Default fits D against beta only (one eps). Cells with D = 0 are left out of a log-log fit.
- **Multistable networks** (seen in the runs, reported in claim 7's note): at beta = 0.5,
  a0 = 0.1 a finite network either stays near the ODE's symmetric ansatz (every unit at the
  same overlap and second-layer weight; m_net(T) and the loss close to the ODE's) or leaves it
  (units spread, lower loss, lower m_net and a_net); which one depends on the seed. The ODE
  describes only the first. The note lists, per seed, m_net(T), the loss gap to the ODE and the
  spread of the a_j over units.
- No choice is made from a grid here: every value is the spec's, so there is no selection to
  report.
"""

METHODS = ("ode", "network")
SETTINGS = None
PROPOSED = "ode"
BACKEND = "numpy"
