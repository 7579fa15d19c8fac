"""cyber-reward-sparsity: sparse vs dense rewards for autonomous cyber defence (metadata only)."""

TITLE = "Beyond Rewards in RL for Cyber Defence (sparse vs dense rewards)"
TIER = "B"
ABSTRACT = "004_523bb06ad815be1c.txt, abstract 12"

SUMMARY = """\
Cyber-defence agents are usually trained with dense, hand-engineered rewards that mix penalties
and bonuses for many states and actions. The paper asks whether such shaping pushes agents
toward worse and riskier policies. It compares sparse rewards (for example +1 only when the whole
network is uncompromised) with dense ones, across two cyber gyms, several network sizes, and
PPO and DQN. Different rewards cannot be compared by their own returns, so the paper scores
every policy with a reward-independent ground-truth evaluation of the defended network. Its
finding: sparse rewards that match the defender's goal and are reached often give more reliable
training, better defence and lower-risk policies, and they use costly defensive actions
sparingly without any explicit action penalty.

We test this on MiniTitan, a small numpy re-creation of Yawning Titan's network game. Red spreads
compromise through a Watts-Strogatz graph, and blue restores nodes or patches vulnerabilities.
We train PPO and DQN with four reward functions: sparse positive (SP), sparse positive/negative
(SPN), dense scaffolded (DS) and Yawning Titan's dense standard reward (DYT). We score them by
the ground-truth share of node-steps left uncompromised, its lower 10% tail (CVaR10), the
spread across seeds and the rate of costly actions.
"""

FIDELITY = """\
- **Environment substituted.** Yawning Titan and miniCAGE/CybORG cannot be installed offline and
  are too slow for the budget. MiniTitan is our re-creation of YT's core loop (spec). It uses a
  connected Watts-Strogatz graph (k = 4, p = 0.3, seed 100+N), entry nodes 0 and 1, and
  v0 ~ U(0.3, 0.7) (seed 200+N). Blue has do_nothing, restore and reduce_vulnerability. Red makes
  one frontier attack with probability skill·v, and each compromised node spreads with
  probability 0.05. Episodes last T = 50 steps and are lost at 80% compromise. It has no scans,
  isolation, deceptive nodes or high-value win condition at default. miniCAGE is absent.
  Spread comes from the nodes compromised at the start of red's turn (our reading).
- **Rewards.** SP, SPN and DS are ported from the definitions in the YT fork. DYT is YT's
  `standard_rewards` restricted to our three actions, term by term as in the spec, and uses
  the compromise count after red's move.
- **Greedy heuristic.** "Entry-adjacent" is INFERRED: the entry nodes and their neighbours.
  The heuristic patches the most vulnerable of these that is still above 0.1, and otherwise
  does nothing. Degree ties go to the lowest index.
- **Learners.** These are our own CleanRL-style `icml26.rl.ppo` / `icml26.rl.dqn` with the
  spec's hyperparameters. PPO uses separate 64-64 tanh actor and critic and orthogonal
  initialisation, with no reward normalisation and no value clipping. Its gradient-norm clip
  of 0.5 applies to the actor and critic parameters together, as in CleanRL. With
  unnormalised dense rewards, the large critic gradient therefore also shrinks the actor's
  step. This is part of the reward-scale effect the spec wants measured, not a bug we correct.
  The horizon end is treated as terminal, as in CleanRL; t/T is in the observation. The agents
  of one setting train in lock-step with batched matmuls. Each agent has its own parameters,
  streams, minibatches and per-agent gradient clipping, and a test checks that the results do
  not depend on the batching. PPO runs 39 iterations of 1024 steps (39,936 env steps). DQN runs
  24,000 steps.
- **Evaluation.** Each run gets 100 greedy episodes at the end and 20 greedy episodes at every
  5k steps. Their random numbers come from (setting, seed) streams that are disjoint from
  training and shared by all policies (paired comparisons). Reference policies are evaluated on
  the same episodes.
- **Full scale.** It adds N = 25 and 50, red skill 0.6, partial observability (a scan action
  reveals the compromise flags; blue otherwise sees its last scan, updated by its own
  restores), DQN at every N, 10 seeds and 500k steps. The real YT package is not used. A scan
  costs 0 under DYT and is not a costly action (INFERRED: the spec's DYT port has no scan
  term). The greedy heuristic is a scripted oracle that sees the true state even under partial
  observability.
- **Reading the default run.** At N = 12, 40k PPO steps are few for a 25-action policy:
  compare SP's GT with the random policy's in claim 1's note before reading the N = 12 parts
  of claims 1, 2 and 4 as a comparison of trained defenders. At N = 6, PPO with DS sees large
  unnormalised returns, and the joint gradient-norm clip then also holds the actor back
  (claim 2's note gives the GT of SP and DS; the DQN table row shows DS under a learner
  without that coupling). Under SP, a restore of a safe node is free and changes nothing, so
  the reward does not separate it from do_nothing (claim 5's note gives the restore, reduce
  and wasted-restore rates). A degenerate policy that is the same in every seed has a small
  IQR (claim 3's note gives the IQRs per N). All numbers are computed from the run.
- **Claims.** They use PPO at N = 6 and 12 and DQN at N = 6, with skill 0.9 and full
  observability. A statement that one reward beats another is tested on per-seed paired
  differences with a 95% t-interval. The IQR claim (3) is a statistic pooled over seeds: its
  95% interval is a bootstrap that resamples seeds. With 5 seeds, 3.4% of resamples draw one
  seed 4 or 5 times, which gives every method an IQR of 0, so the upper bound of
  IQR(SP) - IQR(DYT) could never fall below 0 and the claim could not pass. Default therefore
  runs 6 seeds (0.4% such resamples; computed by `claims.iqr_collapse_share`), full 10.
"""

METHODS = ("SP", "SPN", "DS", "DYT", "random", "do-nothing", "greedy")
SETTINGS = None
PROPOSED = ("SP", "SPN")
BACKEND = "torch"
