"""ALSO: adversarial online strategy optimisation for social agents (MiniSotopia stand-in).
Metadata only."""

TITLE = "ALSO: Adversarial Online Strategy Optimization for Social Agents"
TIER = "C"
ABSTRACT = "004_523bb06ad815be1c.txt, abstract 18"

SUMMARY = """\
LLM social agents usually run with a fixed persona, and the usual ways to improve them
(offline RL, planners, prompt optimisers) assume a stationary environment. In multi-turn
social simulation the opponent and the context keep changing, so ALSO treats each turn's
choice of "persona + strategy instruction" as an arm of an adversarial bandit and trains a
small neural surrogate that predicts each arm's turn reward from the interaction context;
arms are drawn from a softmax of decayed sums of the surrogate's predictions. On Sotopia the
paper reports gains over static personas and prompt optimisers (Sotopia-Hard overall
3.02 -> 3.53). Here the dialogue is replaced by MiniSotopia, a synthetic simulator with six
scenario types, a hidden opponent stance that drifts, an opponent that counters the agent's
recently used strategies, and noisy per-turn rewards in [0, 1] standing in for the LLM
evaluator; only the decision-making claim is tested (ALSO against static personas,
offline-optimised static strategies, UCB1, EXP3, LinUCB and a NeuralUCB-style baseline).
"""

FIDELITY = """\
- **No LLMs, no Sotopia** (spec, tier C): MiniSotopia encodes the spec's assumptions about
  non-stationarity (its construction, constants and dynamics are the spec's own), so every
  verdict is about this simulator, not about the paper's Sotopia numbers. The reference code's
  LLM reflection step (rewriting strategies) is omitted.
- **ALSO follows the official code (Babylonehy/ALSO) where it differs from the spec**:
  - *No pooling across episodes.* The reference builds a new bandit per scenario
    (run_bandit_simulation_context.py: a new BanditSimulationRunner per scenario), so ALSO's
    surrogate, score traces and records start afresh every episode; it is refit from scratch
    after every turn (update_interval 1) on the episode's records. The spec's pooled design
    and the reasoning behind its claim 2 ("pools across episodes, which a fresh per-episode
    EXP3 cannot do") are not official. The spec's pooled design is run as a reported,
    unclaimed variant (`also-pooled`, below).
  - *Selection*: p_t = softmax(eta * sum_tau 0.9^(t - tau) f_tau) over the raw predictions
    (mode "nn"), eta = 0.5 (the main experiment configs and BanditConfig's default), score
    decay 0.9 (BanditConfig default), no z-score and no gamma mixing (the reference's select
    does not mix). The spec's eta = 10, gamma = 0.05 and z-scoring were INFERRED and are not
    used for ALSO.
  - *Surrogate*: input concat[arm embedding, context] (the reference's [bio embedding ;
    dialogue-context embedding]); no b (x) c term (the spec's own). Network Linear-GELU-
    Linear-GELU-Linear, Xavier-uniform init, no LayerNorm (reference default), Adam lr 1e-2
    with coupled weight decay min(0.01, 0.01 / n), cosine schedule to 1% and gradient-norm
    clipping at 1, as the reference; numpy, tested against torch.
  - *ALSO-iw* is the reference's "mean-zscore" mode (0.5 z(nn trace) + 0.5 z(importance-
    weighted observed trace), r / max(p, 0.01), z with torch.std's ddof = 1).
  - *NeuralUCB* uses the reference's gradient-diagonal bonus sqrt(sum lambda nu g^2 / U),
    lambda 0.1, nu 0.5, U started at lambda and grown by the chosen arm's g^2 (not the spec's
    count bonus), on the ALSO surrogate without history features (same training as ALSO, so
    both get the same effort; the reference trains its NeuralUCB with SGD), per episode.
- **Scaled down**: hidden width 32 (reference 100, spec 64) and 60 full-batch Adam steps per
  refit (the spec's 60; the reference runs 100 epochs of minibatches of 8 with early
  stopping): at most 19 records per fit, so full batches are 1-3 reference minibatches. The
  network runs in float32. Full scale: width 100, 100 steps, 300 episodes, 20 seeds.
- **INFERRED (spec)**: K = 8 arms (2 personas x 4 instructions; the reference has 13, 24 or 48
  strategies on one bio), arm embeddings (one-hot persona + one-hot instruction + 2 random
  dims; stand-ins for text embeddings), the context (one-hot scenario, noisy stance signal,
  t / T, last reward; stand-in for the dialogue embedding), the history features
  h_k = (u_k, rbar_k, u_k rbar_k) (EWMA 0.6 of own use, decayed-0.7 mean reward, 0.5 if
  unused), all MiniSotopia constants. Ours: u_t <- 0.6 u_t + 0.4 one-hot(k_t) (the EWMA's
  form), last reward 0 at the first turn, an untrained (freshly initialised) network's
  predictions at the first turn of an episode (as the reference). The history features are
  kept as part of the context stand-in (the reference's dialogue embedding carries the
  agent's own recent play); the no-history ablation zeroes them.
- **Baselines**: best static picks, per scenario type, the arm with the highest mean reward on
  20 separate uniform-play validation episodes *per scenario type* (INFERRED reading of "20
  validation episodes"; their own world stream, same dynamics as the setting). UCB1 per
  scenario type and LinUCB (disjoint, alpha 1, x = [c_t, 1]) keep their statistics across
  episodes; EXP3 (eta = sqrt(2 ln K / (20 K)), gamma 0.1), the surrogate methods, random and
  static persona are per episode.
- **also-pooled** (reported, not claimed; added after the first default run showed ALSO near
  random play, to test the spec's reasoning inside the run): the spec's own design in its
  linear form, one ridge surrogate (lambda 1) pooled over all episodes of the run on
  [b ; c ; b (x) c] (143 dims), refit every 10 turns, p = 0.95 softmax(10 z(f)) + 0.05 / K.
- **Common random numbers**: every method of a seed meets the same environment, scenarios,
  stance paths and noise; claims use per-seed paired differences (check_mean). The primary
  score is 10 x the mean turn reward over episodes 21-60 (after the warm-up of the pooled
  methods); per-episode methods have no warm-up, so for them every episode is alike.
- No setting is selected from a grid: every constant is the reference code's or the spec's.
"""

METHODS = ("also", "static", "random", "best-static", "ucb1", "exp3", "linucb", "neural-ucb",
           "also-nohist", "also-iw", "also-lin", "also-pooled")
SETTINGS = ("adversarial", "stationary")
PROPOSED = "also"
BACKEND = "numpy"
