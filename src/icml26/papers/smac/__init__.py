"""Score-matched critics for drop-free offline-to-online RL (SMAC). Metadata only."""

TITLE = "Score-matched critics for drop-free offline-to-online RL (SMAC)"
TIER = "B"
ABSTRACT = "004_523bb06ad815be1c.txt, abstract 8"

SUMMARY = """\
Offline RL yields good actor-critics, but fine-tuning them online with value-based methods
(SAC, TD3) usually starts with a drop in performance. The paper argues that, in parameter
space, the offline optimum of prior methods (CQL, Cal-QL, IQL) and the online optimum are
separated by a low-reward valley that gradient-based fine-tuning must cross. SMAC (Score
Matched Actor-Critic) changes only the offline phase: the critic is regularised so that its
action-gradient equals the policy's score times the entropy temperature,
grad_a Q(s, a) = alpha grad_a log pi(a|s), the first-order optimality condition of
maximum-entropy RL. Its offline solutions are then connected to better online solutions by
monotonically improving paths, and it hands over smoothly to plain SAC.

Here: a 2-D point-navigation task (PointNav-2D) with a synthetic "medium" dataset, tiny
networks, offline training of SMAC, an SAC+BC ablation (lambda_sm = 0), CQL, Cal-QL and IQL,
followed by identical plain-SAC fine-tuning and a linear interpolation probe between the
offline and fine-tuned actors. The full profile adds a 3-room maze variant and the TD3
transfer (SMAC vs TD3+BC, both fine-tuned with TD3).
"""

FIDELITY = """\
- **Substitute task.** D4RL MuJoCo/Kitchen are replaced by PointNav-2D
  (icml26.rl.envs.PointMass2D: box actions, gain 0.1, dynamics noise 0.01, reward
  -||s' - g|| + 1 inside radius 0.1, horizon 30, no termination, gamma = 0.9) and a
  synthetic MEDIUM dataset of 500 episodes of the biased behaviour policy (rotation 50 deg,
  noise 0.3). Its NS falls short of the spec's expected ~0.5 (the dataset follows the spec's
  recipe and was not tuned; side experiment, not in the pipeline:
  `.venv/bin/python -c "import numpy as np; from icml26.papers.smac import data as D;
  g = np.random.default_rng(0); o = D.mean_return(D.optimal_policy, 100, g);
  r = D.mean_return(D.random_policy(g), 100, g);
  print((D.mean_return(D.behaviour_policy(50, 0.3, g), 500, g) - r) / (o - r))"`).
  Each transition stores its MC return-to-go (Cal-QL).
  NS = (R - R_rand) / (R_opt - R_rand), with R_opt from a scripted full-speed straight line
  and R_rand from uniform actions (100 episodes each, in prepare). Time-limit ends are not
  terminal: every target bootstraps.
- **INFERRED: the SMAC loss.** Only the abstract was readable. Critic: soft TD +
  lambda_sm sum_k mean ||grad_a Q_k(s, a) - alpha grad_a log pi(a|s)||^2 at dataset actions
  (lambda_sm = 1; double backward through the input gradient). Actor: SAC objective / mean|Q|
  minus beta_bc = 0.5 times the dataset log-likelihood (the **INFERRED** BC anchor). The score
  of the tanh-Gaussian at a dataset action is evaluated at clip(a, -0.999, 0.999) in closed
  form (tested against autograd).
- **INFERRED: pre-tanh residual (``sm_space: pre_tanh``, our choice, made before any run).**
  Some of the dataset's behaviour actions sit at the box bound (clipped Gaussian noise; side
  experiment: `.venv/bin/python -c "import numpy as np; from icml26.papers.smac import data
  as D; a = D.make_dataset('medium', 0.9, np.random.default_rng(1))['act'];
  print((abs(a) >= 0.999).mean())"`); there the score carries 1/(1 - a^2) = 1/(1 - 0.999^2),
  about 500, and the literal action-space residual dominates the loss. We measure the same
  condition in u = atanh(a) coordinates, i.e. the residual times the
  Jacobian (1 - a^2); the optimum is unchanged. ``sm_space: action`` gives the literal form and
  ``sm_actions: policy`` the spec's alternative reading (matching at on-policy actions).
- **Baselines** as in the spec: CQL (alpha_cql = 2, logsumexp over 10 uniform + 10 policy
  actions, no importance weights), Cal-QL (policy values lower-bounded by G_mu), IQL
  (expectile 0.7, AWR beta 3, weights clipped at 100, handed to SAC online), SAC+BC = SMAC with
  lambda_sm = 0. All on the same SAC backbone: actor 2-64-64-(mu, log_std) with log_std in
  [-5, 2] and tanh squashing, twin critics 4-64-64-1, Polyak tau = 0.005, Adam 3e-4 (the paper
  reportedly uses Muon), fixed alpha = 0.05.
- **Online phase** identical for all methods: plain SAC, no regulariser, 1 gradient step per
  environment step, replay buffer seeded with 1000 transitions of the offline policy (no
  offline data), fresh Adam states, 10 deterministic evaluation episodes (identical start
  states and noise across methods) at 12 evenly spaced online points plus step 0.
- **Batch cut for the CPU budget (default).** Default runs the spec's **1200 offline + 1200
  online steps** (12 online evaluations every 100 steps; initial-drop window = first half,
  steps <= 600; offline evaluations every 300 steps) on **5 seeds** (spec: 3), all five
  methods, the dataset, the metrics and all claims, but at **batch 64 instead of 256**: CQL's
  and Cal-QL's 20 sampled actions per state make the critic pass 20 times the batch, and at
  batch 256 the grid would exceed the 180 CPU-s budget (docs/performance.md). The earlier
  120 CPU-s budget had also halved the steps (600 + 600, 3 seeds); restoring the steps is what
  the budget allows. Effect of the batch cut, side experiment on seed 0 at the spec's batch
  256 (not in the pipeline): `.venv/bin/python -c "from icml26 import pipeline;
  cfg = pipeline.resolve('smac', 'default', seeds=[0]); cfg['params']['batch'] = 256;
  pipeline.run_inprocess(cfg, '/tmp/smac-b256')"` (claims in /tmp/smac-b256/smac/claims.json):
  as at batch 64, no method dipped after the hand-over and no interpolation path had a valley.
  Smoke: SMAC and CQL, 100 + 100 steps, 1 seed. The runs of the job are
  vectorised (stacked weights; each run still has its own initialisation and random streams,
  tested equal to training it alone), all in one train job.
- **Full profile** (config ``full``): 20k offline + 20k online steps, batch 256, hidden
  256-256, 10 seeds, evaluations every 1000 online / 2000 offline steps (drop window: first
  10k online steps), on four settings: MEDIUM and MEDIUM-REPLAY in the open field, and the
  same two recipes in the 3-room maze (``maze-medium``, ``maze-medium-replay``); seven
  methods: the five above (offline, then SAC online) and the TD3-transfer pair ``smac-td3``
  and ``td3bc`` (below). 7 x 4 x 10 = 280 runs; the config keeps one train job (results do
  not depend on sharding; ``--config shard_by=[setting]`` splits it into four). Claims still
  use the open-field MEDIUM runs of the five SAC-transfer methods; the maze and TD3 runs add
  panels to the figures and rows (TD3: SMAC's regret reduction vs TD3+BC) to the table.
- **INFERRED: the 3-room maze** (the spec names it, nothing more). PointNav-2D with two
  PointMass2D wall rectangles, W1 = [-0.4, -0.2] x [-1, -0.3] and W2 = [0.2, 0.4] x [0.3, 1],
  splitting the square into three rooms joined by a door above W1 and one below W2. Both walls
  cut the straight line from the start corner to the goal, so a route change is needed.
  Walls block: a step ending inside a wall leaves the state unchanged (walls are 0.2 thick, a
  step moves <= 0.1 + noise per coordinate, so nothing tunnels). Dynamics, reward
  (-||s' - g||, +1 at the goal), starts, horizon 30 and gamma are those of the open field. Its
  datasets use the spec's behaviour-policy recipes with the goal direction replaced by the
  direction to the route's next waypoint ((-0.45, -0.15) in room 1 below W1's top, then
  (0.5, 0.2) under W2, then the goal); R_opt is that route at full speed (the maze's "scripted
  straight line"), R_rand uniform actions (100 episodes each, own keys ``R_opt/maze3``,
  ``R_rand/maze3``). A development check outside the pipeline found that the route reaches
  the goal without touching a wall and that the open-field straight line mostly does not;
  tests/papers/test_smac.py (`test_maze_walls_block_the_straight_path`) checks the walls.
- **TD3 transfer** (full only; td3.py). TD3 as in Fujimoto et al. 2018: deterministic actor
  pi(s) = tanh(mu(s)) (the mean head of the same actor network, so a SMAC actor hands over as
  the mean action every method is evaluated with), twin critics with target
  r + gamma min_k Qtarg_k(s', a') and target policy smoothing
  a' = clip(pi_targ(s') + clip(0.2 eps, -0.5, 0.5), -1, 1), actor loss -mean Q_1(s, pi(s)),
  actor and both targets (Polyak 0.005) updated every 2 critic steps, exploration
  clip(pi(s) + N(0, 0.1^2), -1, 1) (also for the 1000 initial buffer transitions). TD3+BC as
  in Fujimoto & Gu 2021: the same TD3 offline with actor loss
  -lambda mean Q_1(s, pi(s)) + mean (pi(s) - a)^2, lambda = 2.5 / mean|Q_1| (detached); its
  state normalisation is left out (states already lie in [-1, 1]^2). ``smac-td3`` is trained
  offline exactly like ``smac`` (own seeds) and ``td3bc`` with TD3+BC; both are then
  fine-tuned with plain TD3 (fresh Adam states; critic targets carried over; target actor:
  TD3+BC's own, SMAC's a copy of its actor). Adam 3e-4, gamma 0.9, batch as above. The full
  profile has not been run here (CPU only); its code path is tested with a few steps.
- Calibration gap = mean over the dataset of min_k Q(s, a) - G_mu(s) at the end of the
  offline phase. Claims use the MEDIUM dataset only.
- **What the default run shows.** The claims' notes carry the measured numbers, computed at
  report time. Claim 2's note also checks the spec's premise for the dip (CQL's pessimistic
  Q-level has to be unlearned online) from the offline calibration gap Q - G_mu of each
  method: when CQL's critic still ends above the data's returns, the premise did not hold at
  this size, the valley between offline and online optima has little room to form, and
  claims 2, 3 and 5 are read in that light. The spec itself warns that claims 2 and 5 may fail
  in a toy task.
- **Fragility.** These short deep-RL runs are chaotic at float level: replacing
  torch.optim.Adam by the project's mathematically identical Adam (icml26.rl.optim; same
  numbers to 1e-6 on a test problem) changed individual runs visibly (in an earlier 600-step
  development run, CQL, Cal-QL and IQL then dipped after the hand-over). Each configuration is
  still deterministic: same config and seed give the same bytes.
"""

METHODS = ("smac", "sac-bc", "cql", "calql", "iql", "smac-td3", "td3bc")
SETTINGS = ("medium", "medium-replay", "maze-medium", "maze-medium-replay")
PROPOSED = "smac"
BACKEND = "torch"
