"""Robust learning via nested distributionally robust optimization (nested DRO). Metadata only."""

TITLE = "Robust learning via nested distributionally robust optimization (nested DRO)"
TIER = "A"
ABSTRACT = "004_523bb06ad815be1c.txt, abstract 16"

SUMMARY = """\
Distributionally robust optimization (DRO) usually guards against one kind of uncertainty.
Optimal-transport (Wasserstein) balls handle geometric shifts of the inputs; φ-divergence balls
handle statistical contamination such as outliers. Put both in one ball and "far away in input
space" gets confused with "badly fit", so informative high-leverage samples are discarded
together with the outliers. Nested DRO separates the two: an outer, *optimistic* φ-divergence
step cleans the empirical distribution by reweighting it, and an inner, *pessimistic* OT step
robustifies the model against input perturbations of the cleaned distribution. The paper shows
that the induced weights depend only on (robust) losses, not on geometry, derives a tractable
dual that is equivalent to variance-regularised risk minimisation, and finds that nested DRO
beats geometry-coupled DRO baselines, most of all under heavy-tailed contamination.

Here the nested objective is instantiated for linear regression with squared loss. The inner
OT step (penalty form, quadratic cost on x) has the closed form r² γ/(γ − ‖θ‖²). The outer
optimistic χ² step is solved exactly: weights ∝ (τ − ℓ̃_i)_+, with τ found by bisection, and
its value is mean − sqrt(2η Var) when no weight is zero. θ is trained by Adam on the Danskin
gradient. The test bed is synthetic data with heavy-tailed gross outliers, a few clean
high-leverage points and a covariate-shifted test set, plus the diabetes data set with injected
target contamination. The comparison is against ERM, WDRO, χ²-DRO, a geometry-coupled
outlier-robust WDRO proxy, the no-OT ablation, and (for context) Huber regression.
"""

FIDELITY = """\
- **Source**: only the abstract was available; no code. The instantiation (squared loss,
  quadratic transport cost on x only, χ² divergence, penalty form of the OT step) is the
  spec's. The paper's general strong dual is not implemented. We optimise the nested objective
  directly, with the closed-form inner step and the exact optimistic χ² reweighting. The dual
  is equivalent to this.
- **OT step in penalty form** with a fixed γ = 50, not a constrained radius. ‖θ‖² ≤ 0.95γ is
  kept by radial projection after each Adam step (lr 0.02, β = (0.9, 0.999), 1500 steps;
  200 at smoke).
- **Initialisation**: IRLS least absolute deviations (30 iterations, weights 1/max(|r|, 1e-6),
  started at OLS), identical for every Adam-based method.
- **OR-WDRO is a proxy**, not Nietert et al.'s algorithm. It drops the 15% of samples with the
  largest standardised joint (x, y) distance (median/MAD per coordinate), then runs WDRO on
  the rest.
- **χ²-DRO** uses the plain squared loss (γ = ∞, "divergence only") with the pessimistic
  weights ∝ (ℓ_i − τ)_+ over the same ball (η = 0.5).
- **Huber**: sklearn HuberRegressor(epsilon = 1.35, default alpha). INFERRED:
  fit_intercept=False, so it has the same model class as every other method (no intercept;
  synthetic data have none, and diabetes is standardised), and max_iter = 500 to avoid
  non-convergence warnings. It is reported for context only.
- **Data**: the synthetic design follows the spec. INFERRED for the full profile's other
  (n, d): 4% of the points are leverage points, and the last 40% of the directions have
  std 0.1 in the bulk. Diabetes is standardised on all 442 points before the 70/30 split. No
  intercept is fitted.
- **Full profile**: runs one-factor-at-a-time sweeps (ε up to 0.3, d = 20, n = 3000, ν ∈
  {1, 5}, η ∈ {0.1, 0.25, 1}, γ ∈ {10, 200}, 20 seeds) around the default design, not the
  full product. The full profile also has the logistic-regression variant with label
  contamination (logistic.py). It is INFERRED throughout: labels y = sign(θ*ᵀx + 0.3 t_ν);
  a fraction ε of bulk labels is flipped; softplus loss. The inner OT sup has no closed form
  and is solved by 1-D bisection on the margin shift. The initialisation and ERM are logistic
  Newton. The geometric trim uses x only (the MAD of ±1 labels is 0). There is no Huber
  there. It enters no claim.
- **No selection grid**: no hyper-parameter is chosen from a grid, by validation or by any
  other rule. η (χ² radius), γ (OT penalty), the trim fraction and Huber's ε are the spec's
  fixed values, the same for every method that has them. The full profile's η and γ settings
  are side studies (separate data conditions) and select nothing. So the project's grid-edge
  rule has no grid to extend here (checked for issue 23). The report's table "Hyper-parameters
  per method" lists the values each method ran with, read from the config at report time.
- **Spec premises checked in the run** (table "Spec premises checked in this run", and the
  notes of the claims that rest on them). P1: η = 0.5 "can drop up to ~50% of the mass" (the
  fraction each optimistic run gives zero weight, against 2η/(1 + 2η)); C4's note. P2: "clean
  leverage points are needed to recover directions 4-5" (at synthetic ε = 0, the error on
  those directions of WDRO after the geometric trim against WDRO on all points, per seed);
  C2's note. P3: the spec's run length of 1500 Adam steps, a premise by implication only: the
  objective of every Adam-based run changes by at most 1% over the last third of the steps
  (the 1% is INFERRED); C1's note. A premise that fails is said so in the note; the verdict
  is computed as before.
- **Not claimed**: nested DRO vs the no-OT ablation under perturbed test inputs, and Huber.
  Both are shown in a table.
- **Statistics**: the "≤ c × baseline" claims are checked on per-seed paired differences
  MSE_nested − c·MSE_baseline, with a 95% t-interval over the seeds (5 at default, 20 at
  full). The level claims (retention, fraction kept, outlier weight) use the t-interval of
  the per-seed values. A diverged run (NaN) is named in the claim's note and cannot help a
  claim pass.
- **Outcome**: the verdicts, measured values and intervals are in claims.json; each claim's
  note gives the numbers behind it, computed from the metrics when the report is made (ratios
  of mean test MSEs, the fraction of training points the optimistic step gives zero weight).
  What to expect from the design, not a measurement: with η = 0.5 the optimistic χ² step
  spends its whole budget even on clean data, so at ε = 0 nested DRO pays for the mass it
  drops, and on diabetes (heteroscedastic, no gross outliers at ε = 0) it also down-weights
  clean but badly fit samples. The per-seed MSE of ERM and of the trim proxy at ε > 0 depends
  strongly on the outlier draws, which widens the paired intervals.
- **Figures**: the Adam objective is recorded in curves.csv (metric "objective", every 50
  steps) but not plotted, to keep the report job within the smoke budget.
"""

METHODS = ("nested-dro", "erm", "wdro", "chi2-dro", "or-wdro-proxy", "optimistic-chi2", "huber")
SETTINGS = None  # any name: a setting gives dataset (synthetic | diabetes), eps and overrides
PROPOSED = "nested-dro"
BACKEND = "numpy"
