"""sim2real-safe-metarl: latent-context meta-RL with uncertainty-driven risk adaptation for
safe Sim2Real transfer (metadata only)."""

TITLE = (
    "Latent-context meta-RL with uncertainty-driven risk adaptation for safe Sim2Real transfer"
)
TIER = "B"
ABSTRACT = "003_a30f62c7b2d8f5c0.txt, abstract 19"

SUMMARY = """\
Controllers for safety-critical systems are trained with RL in simulators. On the real system
they then lose performance or violate constraints, because of the Sim2Real gap. Zero-shot
remedies such as domain randomisation or robust safe RL either give up performance or stay
unsafe under dynamics the simulator never modelled. The paper treats the simulator as a
family of constrained MDPs indexed by a physical context. Following PEARL, it infers a
probabilistic latent context from experience and conditions the policy and the critics on
it. The reward and cost critics are distributional, so the deployed policy can be evaluated
at any risk level. The risk level is set online from how accurately the context has been
estimated: very risk-averse right after deployment, then relaxing as the estimate becomes
reliable. The claimed outcome is safety early in deployment and efficiency after fast
adaptation.

We reproduce the mechanism on a stop-line braking task. The context is road friction. A
closed-form product-of-Gaussians posterior stands in for the PEARL encoder, and an
option-level distributional critic over braking margins (return quantiles and crash
probability per context bin) stands in for the deep critics. The deployed margin maximises
the expected return minus 10 x the CVaR of the crash cost at a risk level alpha. Alpha is
derived from the posterior sd and from the residuals of the context model. We deploy on two
"real" variants: REAL-HARD, at the edge of the simulated friction range and with an
actuation delay the simulator never produces, and REAL-BENIGN.
"""

FIDELITY = """\
- **Substitutes (from the spec).** The spec's substitutes are a longitudinal stop-line
  braking task instead of the paper's cyber-physical benchmarks, a closed-form Gaussian
  (product-of-Gaussians) context posterior instead of a neural PEARL encoder, and an
  option-level distributional critic instead of deep distributional actor-critic training.
  The critic holds 32 return quantiles (QR-DQN midpoints) and the crash probability per
  (context bin, braking-margin option), each estimated from Monte Carlo simulator rollouts.
  The decision is a braking margin chosen once per episode; a fixed low-level controller
  does the rest. This is smoke and default; the full profile runs the spec's step-level
  version instead (last item).
- **INFERRED (spec).** The whole CMDP family (dynamics, noise, rewards, the 8 m stop zone,
  the 30 s timeout), the map from estimation accuracy to risk
  u = sd·max(1, RMSE/0.5) + 0.15·max(0, RMSE/0.5 − 1), alpha = clip(1 − u/0.15, 0.05, 1),
  the residual term and lambda = 10 are the spec's inferred design. The spec leaves a few
  details open, and we chose them (INFERRED, ours). The braking command is latched once the
  braking point is reached. Actuation noise applies only while braking. A timeout is scored
  like a stop; it never happens here. Before the first residual exists, RMSE/0.5 is taken
  as 1, so u = sd = 0.15 and alpha = 0.05 at deployment. The delay applies the previous
  step's *command*, so only the first braking step can be delayed. The decision ties go to
  the smallest margin.
- **Observation noise (INFERRED reading, fixed before any run).** The spec writes
  y = achieved deceleration + N(0, 0.5²), and the achieved deceleration already carries
  N(0, 0.3²) noise. Its posterior factor (sd 0.5/7) and its accuracy signal (RMSE/0.5, "1 when
  the model is right") both assume a total noise of 0.5 around min(6, 7mu). With the literal
  reading, the residual RMSE would sit at about 0.58 even on a correctly modelled road, and
  alpha could never exceed about 0.83; the spec's own sanity value for REAL-BENIGN (0.93)
  also rules that reading out. We therefore add sensor noise of sd 0.4
  (`obs_sd`; sqrt(0.3² + 0.4²) = 0.5), which keeps "achieved deceleration + noise" and makes
  the model calibrated on simulated roads. `obs_sd: 0.5` restores the literal reading.
  Every run also measures the literal reading: PROPOSED is deployed a second time on the
  same roads and noise draws with sensor noise of s.d. 0.5 (`literal_obs_sd`), and claim 4's
  note gives its pooled alphas, their intervals and the verdict claim 4 would get under that
  reading, computed from the run (the literal deployment enters no verdict and no figure).
  By the formula above, with RMSE/0.5 ≈ 1.17 on a correctly modelled road, alpha is at most
  about 0.83 under the literal reading, below claim 4's 0.85.
- **Saturated observations.** As specified, each y is a factor with mean y/7, even when
  7mu > 6 (the commanded deceleration caps y at ~6). On REAL-BENIGN (mu = 0.95), mu_hat
  therefore settles near 6/7 ≈ 0.857 instead of 0.95. The bins 0.8 and 0.9 share the weight
  there, and both are safe at small margins.
- **Pairing.** Per (environment, critic seed), all methods see the same start states and the
  same per-step noise for each deployment seed and episode. The critic of a seed is shared by
  all methods and environments.
- **Statistics.** The spec defines every metric as pooled over all deployment runs (5 critic
  seeds × 10 deployment seeds at default), with single quoted numbers. Every claim is checked
  on that pooled statistic with `check_pooled`: a 95% bootstrap interval that resamples the
  critic seeds (each bringing all its deployment runs, since they share the critic and the
  roads); "A ≤ c × B" is checked as A − c·B ≤ 0 on the same resampled seeds. The claim
  notes give each method's pooled values, computed from the run.
- **Negatives the spec anticipates.** Adaptive risk need not be better than fixed aversion
  here: after identification, CTX-AVERSE (alpha = 0.05) can be as fast as PROPOSED and as
  safe early, and ROB buys early safety on REAL-HARD with time on REAL-BENIGN. The table
  and the claim notes show every method's measured values. Risk adaptation protects only
  against risks that the critic represents. The paper's safety upper bound is not reproduced.
- **Scale.** Smoke: 2 bins, 4 margins, 50 rollouts per cell, 5 episodes, 1 critic seed,
  2 deployment seeds. The windows of episodes 6–20 are then empty, so claims 2–4 are
  inconclusive at smoke. Default: 5 bins × 16 margins × 200 rollouts, 5 critic seeds ×
  10 deployment seeds × 20 episodes. Both are option level with the closed-form posterior.
- **Full profile: the spec's step-level version.** Full (`level: step`) runs different
  code paths from smoke and default, all chosen by the config; smoke and default are the
  option-level method above, unchanged. What full runs, per critic seed (10 seeds):
  - *Step-level control.* The margin is re-chosen every 0.5 s (`decision_every: 5` steps
    of 0.1 s), starting at t = 0, from the current gap and speed, by the same rule
    argmax_m R − 10·min(1, P/alpha) with the method's bin weights and risk level. The
    command stays latched (INFERRED, ours, as at option level), so a re-choice matters only
    while cruising; the reported margin is the one in force when braking began. The
    posterior and alpha are updated between episodes. Observations arrive only while
    braking, when the margin no longer matters, so updating within the episode would give
    the same choices.
  - *Tabular quantile critic over (gap, speed, context bin).* Cells: gap 10–90 m in 5 m
    cells, speed 12–16 m/s in 1 m/s cells. The critic has 9 bins (0.6, 0.65, …, 1.0) and the
    16 margins. For each (cell, bin, margin) we run 200 simulator rollouts. Each starts at a
    uniform point of the cell, with mu ~ U(bin ± 0.025) and delay p ~ U(0, 0.2) (the
    friction and delay nuisances). The critic stores 32 quantiles of the return-to-go, the
    crash probability and the mean. The rollouts *hold* the margin chosen in the cell
    (INFERRED, ours: the spec names the table, not its estimator). The table is therefore
    the value of the fixed-margin continuation, and re-choosing every 0.5 s is a
    policy-improvement (rollout) step on it, not a Bellman fixed point.
  - *Learned PEARL-style encoder* (`encoder.py`). A 1→32→32→2 tanh MLP maps each
    observation to a Gaussian factor on a 1-D latent in friction units. Its outputs are a
    correction to the closed-form mean y/7 and a log precision, and it starts at the closed
    form. The posterior is the prior N(0.8, 0.15²) times the product of factors, so an
    empty context gives the prior (INFERRED, ours: PEARL keeps the prior in the KL only).
    It persists across episodes. Training minimises
    E_q[(z − mu)²/(2·0.05²)] + 1·KL(q‖prior) with reparameterised samples: 2000 Adam steps,
    batch 64, lr 3e-3, on 2000 simulator tasks (mu ~ U(0.55, 1.05), p ~ U(0, 0.2),
    3 episodes at random margins each), each with a random-size context of 0–60
    observations. PEARL's data term is the critic's Bellman loss. Ours is the likelihood of
    the task's friction (INFERRED, ours), because the critic is indexed by friction bins.
    The residuals, u and alpha are computed from this posterior exactly as in the closed
    form. Torch is imported only by this training step, which runs in the train job;
    deployment evaluates the MLP in numpy.
  - *Size.* 10 critic seeds × 50 deployment seeds × 100 episodes; late window 4–100,
    adapted window 6–100.
  All other parts of the method, the baselines, the claims and their thresholds are as at
  default. Full has not been run here; it is estimated at about 3 CPU-min per train job. It
  is exercised by a shortened in-process test (3 bins, 4 margins, 3×2 cells, 10 rollouts per
  cell, a 30-step encoder, 2 deployments × 6 episodes). The claims' sanity numbers in the
  spec come from the option-level default, so full's verdicts may differ.
"""

METHODS = ("PROPOSED", "DR", "ROB", "CTX-NEUTRAL", "CTX-NEUTRAL-MIX", "CTX-AVERSE")
SETTINGS = None  # any "real" system: a setting names its friction mu and delay p
PROPOSED = "PROPOSED"
BACKEND = "torch"   # smoke/default are numpy only; full trains its encoder with torch
