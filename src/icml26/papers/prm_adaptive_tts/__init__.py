"""Verifier-guided adaptive test-time compute (prm-adaptive-tts). Metadata only."""

TITLE = "Verifier-guided adaptive test-time compute"
TIER = "C"
ABSTRACT = "003_a30f62c7b2d8f5c0.txt, abstract 14"

SUMMARY = """\
Standard test-time scaling spends the same compute on every problem, samples with one fixed
strategy and uses a verifier only to rerank finished answers. The paper runs an agent that, per
problem, performs several inference iterations, each with its own compute strategy, tools and
exploration setting; a process reward model (PRM) is its single control signal: step scores
prune and expand partial trajectories inside an iteration, and trajectory rewards pick the final
answer across iterations. It reports large gains over direct test-time scaling on MATH-500 and
several-fold gains on AIME24 / AMO-Bench, with compute, measured in theoretical FLOPs and a
compute-intensity metric, concentrated on useful paths. Here the LLM is a tiny step generator
and the PRM a tiny learned scorer, both trained in the pipeline on modular-arithmetic chains
(difficulty = chain length K); an explicit escalation controller (greedy, then PRM beam search,
then wider beams with a calculator tool) plays the agent, and it is compared with
self-consistency, Best-of-N with PRM reranking and uniform PRM beam search at matched FLOPs.
"""

FIDELITY = """\
- **Source**: abstract and spec only; no official code exists. Every method, baseline, metric,
  figure and claim follows the spec; the LLM, PRM, tools and benchmarks are stand-ins.
- **Task** (spec): chains of K operations (add / mul by c in 1..9) mod 23, K in {2, ..., 12},
  100 test problems per K and seed; easy = K <= 4 ("MATH-500-like"), hard = K >= 10
  ("AIME-like"). The world (problems, exact step checker, calculator, verifier, scripted oracle
  solving 100%) is the shared `icml26.agents.worlds.chains`.
- **Generator** (spec): one-hot (x, op, c) -> 64 ReLU -> 23 logits (3.7k parameters), Adam 3e-3,
  400 steps of batch 128, on the correct transitions of a random 75% of the 414 triples.
  **PRM** (spec): one-hot (x, op, c, proposed x') -> 64 -> 1, BCE on 20k generator samples at
  T = 1.2 from a separate random 70% of the triples, labelled by the exact checker. INFERRED:
  the PRM's schedule (Adam 3e-3, 2000 steps of batch 256). Both in numpy, stacked over seeds.
  The spec's premises about them (generator right on seen triples, mostly wrong but diffuse on
  unseen ones; PRM imperfect on unseen triples) are measured per seed (premise table).
- **Adaptive agent** (spec's fixed schedule): iteration 1 greedy; 2 PRM beam search w = 4,
  4 samples per beam at T = 1.0, top w by the sum of log step scores; 3 w = 8, T = 1.3, the
  calculator replaces a beam's step when its best expansion scores < 0.5; 4 as 3 with 0.8.
  Stop when the best trajectory reward R (min step score) >= theta; final answer = highest R.
  INFERRED: identical partial chains in a beam are merged (LLM samples practically never
  coincide); a calculator step gets step score 1 (the tool is exact) and no PRM call; the
  iteration's trajectory is its best beam by the ranking score; ties in R keep the earlier
  iteration. The iteration outcomes of a problem are drawn once and replayed for every theta
  (common random numbers; only the iterations a theta runs are charged). The plan step of the
  paper is not modelled (spec).
- **Baselines** (spec): SC@N (majority vote, ties to the answer sampled first), BoN@N (max
  min-step PRM score), Beam@w in {2, 4, 8} at T = 1.0 without tools; ablations without the tool
  and without early stopping. SC@N and BoN@N read the first N chains of one pool of samples
  (nested). **N grid extended**: the spec's {1, ..., 32} plus 64 and 128 (fixed in the config
  before any run, the same for SC and BoN) so that matched-compute interpolation rarely leaves
  BoN's range.
- **FLOPs** (spec): generator call 2 P_gen, PRM call 2 P_prm, calculator 50 generator-step
  equivalents; every generated step (all samples, beams, iterations), PRM call and tool call is
  charged per problem through `icml26.agents.Budget` at the chain world's prices, identically
  for every method. INFERRED: compute intensity CI = total FLOPs / (K x 2 P_gen), the cost of
  writing the final trajectory's own K steps once (the paper's exact formula is unknown).
- **Matched compute** (spec): a method's accuracy linearly interpolated in log(mean FLOPs)
  between its two budget points around the target FLOPs, per seed and subset. Outside a
  curve's range the nearest end point is used and the value is censored (conservative
  direction; see each claim's note).
- **Learned controller** (full profile, and smoke to exercise it): REINFORCE-trained linear
  policy choosing {stop, iteration-2, -3 or -4 settings} after each iteration, reward = correct
  - lambda FLOPs / F_ref (INFERRED design: features, action set, F_ref = mean FLOPs of all four
  iterations on its own training problems). Claims read the fixed schedule at every scale.
- **Curve's low end**: the adaptive curves start at theta = 0 (stop after the greedy
  iteration), the degenerate member of the theta family, so that claim 4's "reaches BoN@16's
  accuracy" is read on the agent's own curve rather than censored at theta = 0.6.
- **Scaled down**: no LLM, no MATH-500 / AIME24 / AMO-Bench; full is m = 47, K up to 20,
  3000 problems, 10 seeds, N up to 256 (easy K <= 4 and hard K >= 10 as in the spec).
"""

METHODS = ("sc", "bon", "beam", "adaptive", "adaptive-notool", "adaptive-nostop",
           "adaptive-learned")
SETTINGS = ("chains",)
PROPOSED = "adaptive"
BACKEND = "numpy"
