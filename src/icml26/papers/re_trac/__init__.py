"""Cross-trajectory state compression for search agents (Re-TRAC). Metadata only."""

TITLE = "Cross-trajectory state compression for search agents (Re-TRAC)"
TIER = "C"
ABSTRACT = "003_a30f62c7b2d8f5c0.txt, abstract 7"

SUMMARY = """\
Deep-research agents built on ReAct run one long trajectory of thoughts and tool calls; with
long contexts they lose track of earlier evidence, repeat searches and get stuck. Re-TRAC
(REcursive TRAjectory Compression) runs several shorter trajectories; after each it writes a
structured state (current answer, evidence, open uncertainties, failed directions) and starts
the next trajectory from that state instead of the raw history. With frontier LLMs it beats
ReAct by 15-20% on BrowseComp, and tool calls and tokens per round fall across rounds. Here the
LLM is replaced by a stochastic heuristic search policy over a synthetic "find the entity that
satisfies every clue" world; the methods differ only in what the policy's context holds.
"""

FIDELITY = """\
- **Everything LLM-specific is replaced** (INFERRED design of the spec; the paper gives no such
  environment): the policy is a fixed stochastic heuristic (softmax of hand-set action scores,
  tau = 0.7, the "LLM sampling noise"), the summary is a deterministic, lossless compressor,
  the web is a synthetic attribute table (icml26.agents.worlds.browse: 300 entities x 6
  attributes x 10 values, 4-clue questions with a unique answer, search pages of 5 ids at 12
  tokens, open at 16 tokens), and limited long-context use is a hard window of the last
  W = 12 observations (ours; the official code keeps the whole cycle history and ends a cycle at
  a 122,880-token cap). The run checks the *mechanism* (a cross-trajectory structured state
  against a linear history) under this proxy, not the 15-20% on BrowseComp. Re-TRAC-aware SFT
  of small models and real token counts are not reproduced.
- **Official code** (microsoft/InfoAgent, retrac/, read not copied) is an inference-only
  LangGraph agent without a ReAct baseline, grader or SFT code. What we followed from it: all
  rounds always run; the next round sees only the latest (cumulative) state plus its own
  context; the state has a **current answer** section and the final answer is the **last
  state's current answer** (the compressor keeps the best-supported answer and replaces it only
  on strictly better evidence); "verified" facts = opened entities, "partial" facts = ids seen
  in search results for a clue.
- **Equal-budget variant (ours)**: the official agent has no per-round budget split (a cycle
  ends when the model stops calling tools or hits the context cap; 8 cycles by default). The
  main Re-TRAC runs the spec's stricter split: R = 4 rounds of b = B / R tool calls, the same
  total B as ReAct. An **official-like variant** (re-trac-official, B = 80 only) has no split:
  a cycle ends when the policy answers or when its context holds W observations (the cap
  proxy); up to 8 cycles, all run, sharing the total of B tool calls. It is reported, not
  claimed on.
- **Plan section (ours)**: the official state has no plan; the spec's plan (open the
  uncertainties, then the next page of the least-searched clue, INFERRED "optionally") adds
  +1.0 to its first 3 actions. The ablation re-trac-noplan (plan bonus 0, B = 80 only) lets
  the uncertainties alone drive the next round. The official "distrust the summary" prompt has
  no counterpart: an exact compressor writes nothing false.
- **State tokens** (INFERRED): 2 tokens per listed id / pair: evidence ids per clue, opened
  entities, uncertainties, failed opened entities, fetched (clue, page) pairs, plan actions and
  the current answer; counted once in the round that reads the state.
- **Accounting** through icml26.agents: every call is charged to a Budget before it runs and
  its observation tokens are added after; redundancy = Trajectory.n_redundant over the
  question's tool calls of all rounds (a repeated search page or open). As in the spec,
  answer() costs no tool call (the browse world charges it zero calls).
  1 call = 1 page or 1 entity (the official tools may bundle several queries per call).
- **ReAct**: the same loop with one round and no compression (the official graph with one
  cycle); when its budget runs out it answers the opened entity in context with the most
  satisfied clues (ties random; with nothing opened in context, the entity seen for the most
  clues: ours). Restarts: R rounds with a fresh context, majority vote (ties: latest; ours).
  ReAct-fullcontext (W = infinity) is the memory upper bound.
- **Scale**: default runs the spec's grid (4 methods x B in {40, 80, 120} x 5 seeds x 200
  questions) plus the two B = 80 extras; smoke 1 seed x 40 questions; full 10 seeds x 2000
  questions with W in {6, 12, 24} and C in {3, 4} at B = 80. No parameter is selected: tau,
  W, the scores and the state schema are fixed by the spec or by us before the runs.
"""

METHODS = ("react", "re-trac", "restarts", "react-full", "re-trac-official", "re-trac-noplan")
SETTINGS = None
PROPOSED = "re-trac"
BACKEND = "numpy"
