"""rollout-scheduling: contextual-bandit rollout scheduling for RLVR (CBS) (metadata only)."""

TITLE = "Contextual rollout bandits for reinforcement learning with verifiable rewards (CBS)"
TIER = "C"
ABSTRACT = "003_a30f62c7b2d8f5c0.txt, abstract 13"

SUMMARY = """\
RL with verifiable rewards (RLVR, e.g. GRPO) uses every rollout of a group once, all with the
same weight, and then throws it away. This wastes samples and lets noisy rollouts steer the
updates. The paper treats rollout scheduling as a contextual bandit. Each rollout is an arm,
and its reward is the performance gain it induces between two optimisation steps. A neural
scheduler picks high-value rollouts inside the current group (noise-aware selection) and from a
buffer of past rollouts (adaptive reuse). The paper proves sublinear regret and shows that a
larger buffer raises the attainable performance. It reports consistent gains on six math
benchmarks for several RLVR optimisers.

Here no language model is trained. A tiny policy (two operand embeddings, a tanh MLP, one
softmax over the answers) learns a + b (a, b in 0..15) by RL, after a short supervised warm
start on a quarter of the training prompts. The operands are thermometer-coded and the warm
start stops half-way (our deviation, see the fidelity notes), so the policy starts partly
capable, with a spread of pass rates over the RL prompts, as an LLM would. The verifier is
noisy: a wrong answer is accepted with probability q = 0.15 at every check. Every method
generates the same 128 fresh rollouts a step (16 prompts x 8), computes GRPO group advantages
and takes one PPO-clip Adam step on the rollouts it selects. GRPO uses all 128, GRPO-random-k
64 at random, Dynamic-filter drops the groups with equal rewards, and Replay-heuristic adds the
32 most recent positive-advantage buffer rollouts. CBS scores every fresh and buffer rollout
with a bootstrap ensemble (UCB) and uses the 64 best, at most 32 from the buffer. Each selected
arm's reward is its first-order gain, eta <g_x, g_probe>, on the last layer, where g_probe is
the policy gradient of a probe batch of other training prompts. CBS runs with buffer capacity
0, 128 and 512.
"""

FIDELITY = """\
No official code was found (spec); every detail of the scheduler is INFERRED from the abstract,
as the spec writes it.

- **Substituted.** LLM reasoning, the six math benchmarks and multi-GPU RLVR are replaced by a
  one-step arithmetic policy (default; the full profile uses two-token answers, tens digit
  then units digit, with operands 0..31) and a stochastic noisy verifier with a known truth.
  Accuracy is clean greedy accuracy (argmax token by token) on the 192 training and 64
  held-out prompts. The regret bounds are not checked.
- **INFERRED (spec).** The whole CBS scheduler: arms (fresh rollouts plus a FIFO buffer of
  past rollouts with A != 0, capacity C), the 8 context features, the value model (an ensemble
  of 3 MLPs 8 -> 32 -> 1 trained online, 20 Adam steps per RL step, on bootstrap resamples of
  the last 4096 observed pairs), the score mean + beta std with beta = 1 / sqrt(1 + step/20),
  the top-64 selection with at most 32 from the buffer, and the arm reward
  gain = eta <g_x, g_probe> restricted to the last layer (closed form
  A rho (onehot - pi) h, zero where the PPO clip binds). The probe batch is 16 other training
  prompts x 8 rollouts, scored by the same noisy verifier.
- **INFERRED (ours, where the spec is silent).** The value model's bootstrap is a minibatch of
  256 pairs drawn with replacement per member and Adam step (lr 3e-3); targets are divided by
  their s.d. over the window; log-probability features are clamped at -20 and divided by 10.
  A buffer rollout stays in the buffer after it is used (FIFO eviction only); its stored
  advantage and behaviour log-prob are reused with the PPO ratio. Replay-heuristic keeps its
  own FIFO buffer of capacity 512. Dynamic-filter does not resample, so that every method
  generates the same number of fresh rollouts. Group advantages use the population s.d.
  Policy initialisation follows torch's defaults (embeddings N(0, 1), linear layers
  U(+-1/sqrt(fan_in))); the thermometer projections are N(0, 1/(n-1)), so that an embedding
  entry has variance 1 as with a table.
- **Extra sampling of CBS, stated plainly.** To compute its arm rewards, CBS draws a probe
  batch of 128 rollouts every step, as the spec prescribes. These rollouts are never used in an
  update, and they are not counted in "fresh rollouts" (the claims' budget). The metric
  `probe_rollouts` reports them. For simplicity the probe batch is drawn for every method,
  and the baselines ignore it. So with the probe counted, CBS samples twice the baselines'
  rollouts. This matters for claims 1 and 4, and the claims' notes say so.
- **Deviation: the warm start (the spec's premise failed).** The paper's setting is an LLM
  that is already partly capable on the RL prompts, with pass rates spread over them, so that
  choosing which rollouts to train on matters. The spec's policy (free embedding tables per
  operand value, 150 SFT steps on 48 prompts) memorises its 48 prompts and transfers to none
  of the others: RL then starts with reward on the SFT prompts only, and the selection rules
  have almost nothing to differ on. Before any RL result was seen we fixed a premise and a
  rule (config): the share of RL training prompts whose exact pass rate pi(a+b | a, b) lies in
  [0.1, 0.9] must be at least 0.25 and held-out greedy accuracy above 0, means over validation
  seeds 900..904 (SFT policy only; no claim reads them). Candidates in order, the first that
  holds adopted: (A) the spec; (B) thermometer-coded operands: E_a[a] = c(a) T_a, with c(a)
  the fixed +-1 thermometer code of a and T_a learned (separately for a and b, still R^32), so
  a + b is linear in the code and what SFT learns transfers in part to unseen pairs; (C) B
  with SFT stopped at the first step where the mean pass rate on the SFT prompts reaches 0.5
  (cap: the spec's 150 steps). A and B failed (SFT memorised its prompts), C held and is used
  (`operand_code: thermometer`, `sft_stop_pass: 0.5`). The premise is measured again in every
  run (Table 2, S1's note), on the spec's seeds and not only the validation seeds. The side
  experiment on the validation seeds is outside the pipeline; it is reproduced by
  `scripts/side/rollout_scheduling_warm_start.py table`, `... thermometer` and
  `... thermometer 0.5` (seeds 900..904). The 7 methods, the RL loop, the CBS mechanism and
  every claim threshold are the spec's.
- **Premises checked in the run.** The spec states that the SFT warm start gives roughly
  25-35% greedy accuracy overall, and that false-positive rollouts have a negative expected
  gain. Both are checked as sanity claims (S1, S3), and their notes give the measured values.
  The spec settings (lr 1e-3, 200 steps) are run as written: when RL barely moves the policy
  from its SFT start (C1's note gives GRPO's own rise), the comparisons between selection
  rules have little room to show, and claim 4's target (0.8 x GRPO's final accuracy) may
  already be met at step 0 (its note names those seeds). The arm reward is a first-order
  inner product with the policy gradient of a probe batch of 128 noisy rollouts on other
  prompts; C5's note gives its mean / s.d. over the selected arms, the signal the value model
  has to learn from.
- **Common random numbers.** All methods of a seed share the prompt split, the initial policy
  and its SFT warm start, the prompts of every step and the sampling and verifier uniforms. A
  method differs from the others only through its selection rule and the policy that results.
- **Scale.** The default runs the spec's settings (200 steps, 7 methods, 5 seeds, q = 0.15).
  The full profile uses 1000 steps, q in {0, 0.15, 0.3} and 10 seeds with two-token answers.
  Claim 2 is not defined at q = 0, where there are no false positives.
"""

METHODS = ("grpo", "grpo-random-k", "dynamic-filter", "replay-heuristic", "cbs-intra",
           "cbs-c128", "cbs-c512")
SETTINGS = None
PROPOSED = "cbs-c512"
BACKEND = "torch"
