"""MuLoCo: Muon as the inner optimizer of DiLoCo. Metadata only."""

TITLE = "MuLoCo: Muon is a practical inner optimizer for DiLoCo"
TIER = "B"
ABSTRACT = "004_523bb06ad815be1c.txt, abstract 17"

SUMMARY = """\
DiLoCo trains K replicas of a model, each with its own inner optimizer for H local steps on its
own data, then averages their parameter changes into a *pseudogradient* Δ and applies it with an
outer optimizer (Nesterov SGD, lr 0.7, momentum 0.9). It communicates once every H steps, but it
degrades as K grows. The paper argues that the inner optimizer shapes the quality of Δ. It
replaces AdamW with Muon (momentum followed by a Newton-Schulz orthogonalisation of each hidden
matrix's update; AdamW for embeddings, head and LayerNorm). The resulting MuLoCo is reported to
give pseudogradients that stay more directionally correct as K grows. After tuning at five model
scales (150M-3.1B), MuLoCo beats DiLoCo in absolute loss for every K >= 1, and relative to the
respective data-parallel (DP) baselines for K > 2. At K = 1 it can even beat DP training.

Here the four methods (DP-AdamW, DP-Muon, DiLoCo, MuLoCo) are simulated exactly on one CPU. The
model is a 2-layer character-level GPT (d = 48, ~63k parameters) trained on the docstrings of 27
standard-library modules. The global batch is fixed at 16 sequences per inner step, split over
K in {1, 4, 8} workers, each sampling from its own contiguous shard of the text. H = 8. The inner
learning rates are chosen once, on DP at K = 1, and frozen. Directional correctness compares Δ
with a reference update: one replica from θ, with worker 1's optimizer state, trained on the
concatenation of all workers' batches.
"""
FIDELITY = """\
- **Model and data.** The paper's 150M-15B LLMs are replaced by the shared 2-layer GPT of
  `icml26.lm` (d = 48, 4 heads, MLP 4d, pre-LN, tied embeddings, learned positions, GPT-2 init,
  ~63k parameters). It is trained character-level on `inspect.getdoc` text of the spec's 27
  stdlib modules and their public members (printable ASCII, 95 symbols, ~272k characters; first
  90% train, last 10% validation). Python version and SHA-256 of the text are stored in data.npz.
  Validation loss is the mean cross-entropy over 64 fixed, evenly spaced validation windows.
- **Default scale.** Default runs the spec's **240 inner steps** (H = 8, 30 rounds; the
  cosine measured on rounds 0, 5, ..., 25) and the spec's **120-step lr selection**, on **5
  seeds** (spec: 3), all in one train job. The earlier 120 CPU-s budget had cut these to 128
  steps (16 rounds) and 64 selection steps on 3 seeds. One cut remains for the 180 CPU-s
  budget: the context is **24** characters per sequence instead of 48 (the 16-sequence
  global batch and its split over K are kept): the spec's context at 240 steps and 5 seeds
  would cost several times the budget (a one-seed timing run). Of the two cuts the old budget
  forced, the steps were restored first, because the run length decides whether a run has
  left the loss plateau (below). The effect of the context cut on the claims was not measured
  at default (full keeps the spec's scale). The validation curve is evaluated every
  2 rounds instead of every round; the final loss is always evaluated. Smoke uses a global
  batch of 8 (plumbing only).
- **Implementation.** The K workers (and the seeds / methods of one train job) are simulated
  exactly in one process. Their parameters are stacked and one `torch.func.vmap` of
  `functional_call(GPT)` runs them together. The attention is the shared module with its
  softmax written out, because SDPA has no vmap rule on CPU. AdamW and Muon are the shared
  update rules applied to stacked replicas. Tests check each against `icml26.lm.optim`. DiLoCo
  at K = 1 with outer lr 1 and momentum 0 equals plain training with the shared optimizers.
  Floating-point results can differ in the last bits if runs are grouped into different jobs
  (batched matmul sizes), never beyond float tolerance.
- **Inner-lr selection** is done by the pipeline, in prepare, as the spec describes: DP at
  K = 1 over AdamW {1e-3, 3e-3, 1e-2} and Muon {0.01, 0.02, 0.05}, keeping the lowest final
  validation loss after ``lrsel_steps``. The chosen lrs are frozen for every method and K
  (table in the report, with every lr tried). The selection run has its own initial model and
  batches (seed streams "lrsel"), which no run of the grid uses, so no claim reads it and it
  does not change with the seeds or seed_offset. A choice on a grid edge extends the grid by
  one step of the grid's own ratio, at most twice, for both optimizers alike (PAPER-CHECKLIST).
  INFERRED: AdamW is selected first. Muon's AdamW share (embeddings/head/LayerNorm) uses the
  chosen AdamW lr.
- **INFERRED hyperparameters** (not in the spec):
  - Muon's decoupled weight decay is 0.1, like AdamW's. AdamW decays matrices and embeddings
    only (nanoGPT rule), in both optimizers.
  - Each worker clips its gradient to norm 1.0.
  - DP baselines draw their 16 sequences from the whole training text (the K = 1 stream), so
    DP and K = 1 DiLoCo/MuLoCo see the same batches.
  - The outer optimizer keeps the spec's lr 0.7 / momentum 0.9 at every K (no per-K tuning, as
    the spec asks).
- **INFERRED metric.** The spec marks directional correctness as inferred. On every 5th round,
  a reference replica starts from θ with a copy of worker 1's inner state. It runs the same H
  steps on the concatenation of the K workers' batches (the DP-equivalent update), and
  Δ_ref = θ - θ_ref. We report cos(Δ, Δ_ref) over all parameters (flattened, tied matrix once)
  and ‖Δ‖/‖Δ_ref‖. At K = 1 the reference run is the worker's own run, so the cosine is exactly
  1. The pipeline records 1 without recomputing it; a test recomputes it.
- **What the default run shows.** The measured numbers are in the claims and their notes,
  computed at report time (mean cosines per method and K for claim 1; the per-seed DP final
  losses for claim 3; the K = 1 losses for claim 4). Two readings help with them:
  - *The outer step.* With H = 8, the spec's fixed outer Nesterov step (lr 0.7, momentum 0.9)
    multiplies a steady inner displacement by up to 0.7 / (1 - 0.9) = 7, which costs
    DiLoCo/MuLoCo against DP, most visibly at K = 1 (claim 4). Char-level training first sits
    on a plateau of the unigram loss and then leaves it; an over-long outer step can hold a
    run on it. The outer lr was not retuned, because the spec forbids per-K retuning; its
    sweep belongs to the full profile. The paper tunes the outer optimizer and uses far
    longer rounds.
  - *Directional correctness.* With the spec's INFERRED reference, the pseudogradient cosine
    of claim 1 depends on that reference. The implementation passes the following tests:
    identical worker batches give cos = 1 for both optimizers; K = 1 reproduces the worker;
    each optimizer step equals the shared reference. The reference takes worker 1's inner
    state. Muon's momentum is an undamped sum, M <- 0.95 M + G, worth ~20 gradients, so it
    carries that worker's own small-batch history into Δ_ref more strongly than AdamW's
    normalised EMA does; at 2 sequences per worker (K = 8), orthogonalisation also gives every
    noisy singular direction unit weight. Either can lower Muon's cosine. The paper measures
    at scale, with a reference the abstract does not define.
- **Not measured.** Wall-clock time per job is not recorded, to keep results deterministic.
- **CPU only.** The code runs on CPU (the config's `device` is not used).
- **Not implemented (full profile only, spec "optional").** The following are not run:
  - 4-bit quantised pseudogradients and streaming (partial-sync) DiLoCo;
  - the per-(method, K) lr sweeps, including outer lr {0.5, 0.7, 0.9};
  - the critical-batch-size sweep.

  The full profile runs the larger model (d = 128, 4 layers, context 256, batch 64, 5k steps),
  K in {1, 2, 4, 8, 16}, H in {10, 30, 100} and 10 seeds, with the selection procedure above.
"""

METHODS = ("dp-adamw", "dp-muon", "diloco", "muloco")
SETTINGS = None  # any name: a setting gives K (and optionally H, outer_lr)
PROPOSED = "muloco"
BACKEND = "torch"
