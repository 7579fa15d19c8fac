"""Telescope Perplexity: zero-shot LLM-text detection from token-repetition probability.
Metadata only."""

TITLE = ("Telescope: Improving Zero Shot Detection of LLM Generated Content By Measuring Token "
         "Repetition Probability")
TIER = "B"
ABSTRACT = "000_0e29b462e842f6da.txt, abstract 6"

SUMMARY = """\
LLMs are trained to imitate human text, so telling their output from human writing is hard.
The paper argues that pre-training leaves a mark anyway. Very early in training, LLMs learn a
strong aversion to repeating the token they have just produced. This "vestigial heuristic" is
switched on in the text they generate.

**Telescope Perplexity** measures this aversion with one forward pass of a reference model S.
At each position i, the model has read s_1..s_i and predicts s_{i+1}. The *telescope
probability* is the mass it puts on the token it has just read, tau_i = p_S(s_i | s_1..s_i).
The text-level statistic is log TPPL(x) = -(1/n) sum_i log tau_i, the mean cross-entropy of
the current token; higher means machine (the authors' code). It comes from the same pass (one
more gather) as the ordinary log-perplexity log PPL(x). The paper reports strong zero-shot
detection, state-of-the-art or competitive across datasets, reference models and perturbations.
It also reports lower cost than two-model detectors such as Binoculars.

Here the LLMs are tiny word-level transformers, trained in the pipeline on the Python
reference manual (`pydoc_data.topics`). The vocabulary is 2,000 words plus <unk>. Each seed
has a generator G (the "LLM"), a separate scorer S with checkpoints, and a small performer P
for Binoculars. Machine text is an 8-token human prompt continued by G for 40 tokens, sampled
as the authors sampled theirs (T = 1.0, no nucleus). Human text is the true 40-token
continuation. Every detector scores only these 40 tokens:
- Telescope (log TPPL, the authors' statistic) and the variant Telescope-ratio (log PPL /
  log TPPL, the spec's guess);
- log-likelihood, log-rank and entropy;
- analytic Fast-DetectGPT, Binoculars and DetectLLM's log-rank ratio (LRR).

There are two settings, white-box (S = G) and black-box (a separately trained S), plus a
white-box variant with the spec's sampling (T = 0.9, nucleus 0.95). We report AUROC and TPR
at 5% FPR, the forward passes and the measured CPU time of each detector, and the
repetition-aversion index A = mean tau / mean unigram frequency at each checkpoint of S. Next
to it runs the authors' own emergence measurement: the log TPPL, under the final S, of text
sampled from checkpoints of G.
"""

FIDELITY = """\
- **Official code (ChrisNassif/Telescope), followed at every scale.** Read for issue 15;
  facts and numbers only, no code copied.
  - *Statistic.* Telescope = log TPPL = mean_i -log p_S(s_i | s_<=i), not exponentiated and
    not divided by anything (`llm_text_detectors/llm_text_detectors.py`,
    `_compute_telescope_perplexity`; the README's "Telescope (ours)" is this value). Higher ->
    machine: the authors' scoring script negates only perplexity and the Binoculars score,
    with label 1 = machine (`scripts/compute_roc_and_f1score_from_metrics.py`). This replaces
    the spec's INFERRED ratio log PPL / log TPPL (lower -> machine), which appears nowhere in
    the authors' code; it stays as the labelled variant **Telescope-ratio** (cost 0: the same
    pass). The old "Telescope-raw" is now Telescope.
  - *Machine-text sampling.* T = 1.0 and no nucleus, the only sampling the authors set for
    text they generated (`ghostbusters_dataset_creation/generate_and_convert_model_dataset.py`:
    `TEMPERATURE = 1.0`, no top_p). The spec's T = 0.9, nucleus 0.95 is kept as the labelled
    variant setting **white-box-spec-sampling** (the same random stream, so the two machine
    texts differ only by the sampler; it reproduces the machine text of every verdict before
    issue 15).
  - *Baselines.* DetectLLM's log-rank ratio **LRR** = |sum log p / (sum log rank + 1e-6)|,
    higher -> machine, is added: it is one of the four baselines of the paper's table
    (`_compute_log_rank_ratio`; `METRIC_CODENAMES_TO_TEST` of the scoring script). The
    authors' helper drops the text's last token (targets ids[1:-1]); we score all 40
    continuation tokens, as every other detector does. LRR is reported in claim 2's note only
    (the spec's claim 2 names LogLik and Entropy).
  - *Binoculars' models.* In the authors' roles S is the **performer** (perplexity, and the
    log-probabilities of the cross-entropy) and P the **observer** (the weights p_P)
    (`compute_binoculars_score`, `_compute_cross_perplexity`; README: "Performer Model:
    computes both perplexity and cross-perplexity"). The authors pair two models of the same
    size (`scripts/generate_experiment_results.py`, `MODEL_PERFORMER_OBSERVER_PAIRS_TO_TEST`:
    an instruct model and its base), so P now has S's architecture (default: 2 layers,
    d = 48, was 1 layer; full: 4 layers, d = 256, was 2). P still trains for half of S's
    steps at default (120 vs 240; the budget); at full both train 800.
  - *TPR at 5% FPR.* The authors' rule (`tpr_at_fixed_fpr` in the scoring script): threshold
    = the linearly interpolated 95th percentile of the human scores, a machine score >= it is
    detected. No claim reads it.
  - *Emergence (claim 4).* The authors' evidence that the signature "emerges early" is a
    different measurement from the spec's index A
    (`ablations/training/train_pythia_checkpoints.py`, `ablations/training/train.py`):
    checkpoints of the *generating* model (Pythia-160m, every 1000 of 143k steps) sample
    continuations of fixed prompts (T = 0.7, top-p 0.9, 200 new tokens), and a fixed, fully
    trained reference (SmolLM-360M) scores their Telescope perplexity; they plot the mean
    +- 2 s.e. per step, with no threshold. We run it next to claim 4, reported without a
    threshold (C4's note, Fig. 1 right): checkpoints of G continue the prompts of the first
    human passages for 40 tokens (the window; not 200) with T = 0.7, nucleus 0.9, and the
    final S scores their log TPPL (full: the spec's six checkpoint fractions 5/10/20/40/70/100%
    of G's steps and all prompts; default: see below).
    Claim 4 itself keeps the spec's statistic and threshold (A of S <= 0.5), which the
    authors' code does not contain.
  - *Not changed, on purpose.* (a) Positions: we score the 40 continuation tokens, the last
    one included; the authors score the whole text except its last position (an artefact of
    their shift), but our paired prompts make the prompt positions identical for human and
    machine text. (b) Length: 40 scored tokens (the authors' texts have >= 100 words). (c)
    Fast-DetectGPT: the authors run it on the observer (base) model for both sampling and
    scoring; our P is not a base version of S, so it stays on S. (d) White-box: the authors
    evaluate only a reference model different from (and weaker than) the generator; claims 1
    and 2 read white-box as the spec defines them, and black-box is reported. (e) The
    official code's extra observer pass inside `compute_telescope_perplexity` is an API quirk;
    the method needs one pass, which is what claim 3 counts.
- **Substitution (spec).** The LLMs and the human/LLM data sets are replaced by tiny word-level
  transformers and by `pydoc_data.topics`. The exact text is recorded in data.npz: Python
  version and SHA-256 of the ASCII-mapped topics. DetectGPT is omitted (no mask-filling model
  offline); analytic Fast-DetectGPT stands in for it.
- **Orientations.** Every orientation is fixed a priori in `detectors.DETECTORS`, never
  flipped on data: the authors' for Telescope, LogLik (= -log PPL), Binoculars, Fast-DetectGPT
  and LRR; the spec's for Log-rank, Entropy and Telescope-ratio (INFERRED).
- **INFERRED (ours): training details.** The spec gives "AdamW lr 3e-3 (cosine decay)". We
  add:
  - betas (0.9, 0.95);
  - weight decay 0.1 on matrices;
  - a linear warm-up over 5% of the steps, then cosine decay to 10% of the lr;
  - gradient clipping at 1.0;
  - dropout 0.1 for S and P too (the spec gives it for G).

  The vocabulary is fitted on each seed's training topics only. Human passages are
  non-overlapping 48-token windows of the concatenated held-out topics, so a window may span
  a topic boundary. Each seed uses a seeded random subset of 200 of them, or all when fewer
  exist. Topic sizes are heavy-tailed, so some seeds' 15% topic split leaves fewer than 200
  windows (`n_human` in the metrics). u(s_i) is the token's relative frequency in the training ids,
  <unk> included.
  A and the repetition rates use the 40 scored tokens; the first of them is compared with the
  prompt's last token.
- **Binoculars** follows the spec's (and the authors') formula: log PPL_S(x) /
  mean_i(-sum_v p_P(v|.) log p_S(v|.)), S the performer and P the observer (the earlier text
  here named them the other way round; the formula was right). The cross-entropy is averaged
  over the 40 predicting positions (the authors average over every position, unshifted).
  **Fast-DetectGPT** uses the scorer as both sampling and scoring model (analytic mean and
  variance). **Log-rank** and **LRR**: rank = 1 + the number of tokens with strictly higher
  probability (as the authors').
- **Scaled down at default.** The spec's 1000 + 800 + 800 steps at batch 32 x 64 cost about
  300 CPU-s per seed on this machine (the 2,001-word head dominates; a step costs about as
  much per token at batch 8 as at 32), against 180 CPU-s for the whole paper at 5 seeds. The
  default therefore trains with batch 8 x 64 for:
  - G: 300 steps;
  - S: 240 steps (checkpoints at the spec's 5/10/20/40/70/100% of them);
  - P: 120 steps (S's architecture).

  That is about 16x fewer training tokens than the spec (the earlier default, 200 / 160 / 80
  steps at 3 seeds, had about 25x fewer; the new budget bought 1.5x the steps and 5 seeds).
  The five seeds train in one job (one start-up). The validation loss of every model is in
  the curves (`val_loss_G/S/P`); claim 4's note compares S's with the unigram cross-entropy
  on the same tokens, computed in the run, so how far the models got past unigram statistics
  is stated from the data of each run. Also scaled down at default, for the budget:
  - the authors' emergence measurement runs at 3 of G's checkpoints (5%, 20%, 100%) with the
    first 25 human prompts per seed (smoke: 20% and 100%, 20 prompts; full: all six and all
    prompts); each checkpoint costs about 0.3 CPU-s per seed (sampling dominates);
  - the variant setting white-box-spec-sampling runs only the detectors claims 1 and 2 read
    (Telescope, Telescope-ratio, LogLik, Entropy; full: all).

  Nothing else is scaled down at default: all settings, all detectors, up to 200 + 200 texts
  per seed.

  The full profile keeps the spec's steps and batch (1000 / 800 / 800 at 32 x 64) and uses the
  spec's full-scale items:
  - 4-layer d = 256 G, S and P (P as S: the authors' same-size pairs);
  - a second human domain, held-out stdlib docstring paragraphs, with the docstrings added to
    the training corpus;
  - all available passages;
  - the two perturbation attacks on the machine text (INFERRED: 10% of the continuation
    tokens replaced by draws from the training unigram distribution; clauses cut after
    , . ; : and permuted);
  - 10 seeds.

  Full is CPU only: the shared training loop is CPU-bound.
- **The spec's training budget (side experiment, outside the pipeline).**
  `python -m icml26.papers.telescope_perplexity.side_budget --seeds 0` runs the default grid
  with the spec's steps and batch (about 300 CPU-s per seed) and prints every claim's verdict
  and note. An earlier run of it on seed 0 (before the checkpoint losses were recorded, and
  before issue 15: the spec's sampling T = 0.9 / nucleus 0.95 and a 1-layer P) gave
  validation losses of G 3.79, S 4.02, P 4.01 nats; the aversion was learned (A = 0.23 for G
  and 0.32 for S on human text), yet the headline did not appear:
  - white-box AUROC: the ratio (now Telescope-ratio) 0.61, log TPPL (now Telescope) 0.29,
    LogLik 0.72, Entropy 0.39, Fast-DetectGPT 0.88, Binoculars 0.81;
  - S's A by checkpoint was 0.68, 0.74, 0.95, 0.47, 0.37, 0.32 (5 ... 100%), so at the
    spec's budget it drops below 0.5 only between the 20% and 40% checkpoints;
  - machine text from G repeated the previous token more often than human text and had the
    *lower* log TPPL.

  The default's not-reproduced verdicts are therefore not only an artefact of the smaller
  budget.
- **Why the Telescope verdicts fail here.** The notes of C1, C2 and S1 give, from each run,
  the AUROC of every detector under both samplings, the log TPPL and log PPL of human and
  machine text, and the repetition rates.
  - With the authors' sampling (T = 1.0, no nucleus), the toy G's samples look to G and to S
    much like the human continuations: Telescope and the likelihood-based detectors alike sit
    near chance. Claim 1 fails; claim 2's paired differences straddle its margin, so it is
    not decided either way; S1 does not establish the expected direction.
  - With the spec's sampling (the variant setting, and every verdict before issue 15), G's
    samples repeat the previous token far more often than the human continuations, its
    scorers give the just-read token *more* mass on machine text, and log TPPL is lower on
    machine text, the reverse of the paper's direction: Telescope falls far below 0.5 while
    LogLik separates the texts well.
  - Under neither sampling does the toy generator show the "vestigial" repeat aversion in
    what it writes. This is what the spec calls the main risk at this scale. The repeats are
    not an artefact of the corpus' grid tables or of <unk>: S1's note gives the share of the
    repeats that are '| |' or '<unk> <unk>' (small in the machine text), S2's the same for
    the corpus (where the tables dominate; the spec's cleaning rule, lines with a run of >= 3
    identical characters from *=-~^#+|, keeps grid-table rows whose pipes are separated by
    spaces).
  - The authors' own emergence measurement (C4's note) asks the same question of G's
    checkpoints under the final S: the samples' log TPPL against the human text's.
- **Cost (claim 3).** Each detector runs end to end under `time.process_time`: its own forward
  pass of every model it needs, plus its statistic. This runs on the first 50 human and 50
  machine texts of each run, twice, keeping the minimum (smoke: 20 + 20, once). The scores used for
  AUROC come from one shared pass per model and text set. The code checks that the timed run
  reproduces them. The spec asks for wall time per 100 texts; we record single-thread CPU
  time instead (the project's cost measure), reported per 100 texts. It is a timing claim,
  noisy on a shared machine, and its verdict can change between runs (the claim is marked
  as a timing claim; its note lists the per-seed ratios of each run).
  Binoculars pays for P's pass and for a cross-entropy over the whole vocabulary at every
  position. Telescope pays for one pass and one gather. Forward passes per text are counted,
  not declared.
- **Aversion index at early checkpoints (claim 4).** A near-uniform (untrained) model has
  A ~ (1/V) / mean u << 1, because A compares the model with the corpus' unigram
  frequencies. "A <= 0.5" at an early checkpoint can therefore hold trivially before the model
  has learned any statistics. A unigram-level model has A ~ 1; only a model that has learned
  bigram-level repeat aversion has A < 1 for the spec's reason. Claim 4 therefore also checks
  the spec's premise at every checkpoint it reads: S's validation loss there must lie below
  the cross-entropy of the training unigram distribution on the same validation tokens (both
  computed in the run; 95% interval of the per-seed difference below 0). Where it does not,
  the claim is not reproduced and its note says that the premise failed.
- **Outputs.** Per-text oriented scores of every run are stored in the train state
  (`<run>/human`, `<run>/machine` in `train/<seed>.npz`), not as CSV. Model checkpoints live
  in memory inside the train job that scores them and are not written to disk.
- **Smoke**: 1 seed; G / S / P 12 / 20 / 6 steps at batch 8 x 64; 40 + 40 texts.
- **Statistics.** C1 and C2 are means over seeds (t-intervals); C3's counts of forward passes
  and models are fixed by construction (a plain comparison); its time ratio is per seed; C4 is
  "every seed" per checkpoint plus the premise above; the corpus ratio of S2 is pooled over
  seeds with a bootstrap over seeds.
"""

METHODS = ("Telescope", "Telescope-ratio", "LogLik", "LogRank", "Entropy", "Fast-DetectGPT",
           "Binoculars", "LRR")
SETTINGS = None  # any name: a setting gives scorer (generator | reference), domain, sampling,
#                  attack
PROPOSED = ("Telescope", "Telescope-ratio")
BACKEND = "torch"
