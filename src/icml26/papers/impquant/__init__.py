"""impquant: token-importance-reweighted PTQ calibration for vision-language models
(metadata only)."""

TITLE = "Token-importance-reweighted PTQ calibration for vision-language models (ImpQuant)"
TIER = "B"
ABSTRACT = "004_523bb06ad815be1c.txt, abstract 7"

SUMMARY = """\
Large vision-language models (LVLMs) are costly to run, and post-training quantisation (PTQ) to
low bit widths is the usual remedy. Existing PTQ pipelines copy text-only LLM practice and treat
every token of the multimodal sequence alike, although visual tokens are many and redundant and
only a few text and visual tokens decide the answer. ImpQuant reweights the layer-wise
calibration objective by token importance: text tokens by the attention they receive
(aggregated over heads and layers), visual tokens by a contextual-redundancy score, so that
redundant background patches count less. It adds outlier-aware activation quantisation. The
paper reports better low-bit accuracy and less quantisation-induced object hallucination than
state-of-the-art PTQ baselines across LVLM backbones and benchmarks.

Here a tiny LVLM (a 1-block vision tower on 4x4-pixel patches of 32x32 synthetic scenes, a
connector and a 2-block bidirectional LM with separate q, k, v, o projections) is trained in
FP32 per seed on templated VQA (EXIST with adversarial POPE-style absent probes, COLOUR, COUNT,
WHERE), then its 12 LM Linear layers are quantised sequentially with RTN, GPTQ, modality-level
weighted GPTQ (MBQ-style), GPTQ with ImpQuant's outlier-aware activations only (IMPQ-NOIMP),
and ImpQuant (importance-weighted GPTQ + outlier-aware activations), at W3A16 and W4A6. GPTQ
and RTN are the shared ``icml26.lm.quant`` implementations.
"""

FIDELITY = """\
No official code or preprint exists (abstract only); the weighting formulas and the outlier
rule are the spec's inferences, which follow the abstract literally.

- **Substituted.** LLaVA / Qwen-VL-class LVLMs and real benchmarks (MME, POPE, ...) are
  replaced by a tiny VLM trained in the pipeline on synthetic scenes; the POPE-style probe only
  mirrors the protocol (absent objects share the asked colour or the asked shape with a present
  object). Outlier channels are induced: in every LM block both LayerNorm gains of 2 fixed
  channels start at 8.0 (trainable), mimicking massive-activation channels of LLMs; how large
  the activation-quantisation effect is depends on this choice.
- **INFERRED (spec).** The text-token attention aggregation (mean over both LM blocks, the 4
  heads and the other text queries, ANS included, normalised to mean 1 per sample); the
  contextual redundancy (mean cosine similarity to the 8 most similar other visual tokens of
  the same sample, taken on the LM input, i.e. the input of the first LM block: the spec's
  "input to LM block 1" read with blocks numbered from 1; INFERRED), v = max(1 - r, 0.05),
  normalised to mean 1; whole-sequence renormalisation and clipping to [0.05, 20]; the outlier
  rule (top 3% input channels by calibration absmax, at least 2, in FP with their weight
  columns; the rest static per-tensor symmetric int6 clipped at the 99.9th percentile);
  MODALITY-W's lambdas from the mean squared loss gradient of each modality's LM-input tokens,
  normalised so the per-token mean is 1; IMPQ-VISONLY / IMPQ-TEXTONLY (full only) keep one part
  of the weights and set the other to 1. Objects never straddle the image midlines (so WHERE
  is unambiguous) and pixels enter the patch embedding centred, (x - 0.5) * 2 (our choices).
- **Weight quantisation** is the spec's: symmetric per-output-channel, scale = absmax /
  (2^(b-1) - 1); GPTQ with H = X^T diag(w) X / sum(w) + 1% mean-diagonal damping and the
  inverse-Hessian Cholesky error feedback, layers quantised sequentially in forward order on
  inputs captured from the already-quantised model. RTN and GPTQ at A6 use naive per-tensor
  absmax static activation quantisation; the vision tower and connector stay FP.
- **IMPQ-NOIMP at A16** is GPTQ exactly (the outlier-aware part acts on activations only), so
  it runs at the activation-quantised setting only.
- **FP training (our choices, fixed from pilot runs of the FP model on separate data, never
  on a PTQ metric).** AdamW lr 2e-3 (spec 3e-4), betas (0.9, 0.999), weight decay 0.01, linear
  warm-up then cosine to 10%, gradient clip 1.0, and torch's default Linear initialisation
  (with the GPT-2 0.02 initialisation of ``icml26.lm.model`` the attention stayed uniform and
  the model did not leave its plateau in the pilot runs). The learned vision and text position
  embeddings start with sd ``pos_std`` = 0.02 (issue 21 tested 1.0, nn.Embedding's default
  scale, on the suspicion that 0.02 is too small next to the patch embedding's output for the
  model to tell where a patch is; in pilots on streams no claim reads, at the default step
  cap, 1.0 did not lower the FP model's validation loss, so the rule in the config kept 0.02).
- **Premise (claim C1) and early stop.** The spec's PTQ comparisons presuppose a competent FP
  model (target test accuracy >= 0.90). Every ``val_every`` steps the FP model is scored on its
  seed's own validation stream (``n_val`` samples, read by no claim); training stops at the
  first check whose validation accuracy reaches ``stop_acc`` = 0.90 (the spec's target), else
  at the step cap (the schedule's length, ``n_train / batch * epochs``). The steps trained,
  the last validation accuracy and loss are stored per seed and C1's note reports them; when
  C1 fails, the PTQ claims are made on a weaker model than the spec's. Training the seeds'
  models stacked (one batched model over seeds) was considered to buy more steps, but on one
  CPU thread a step of five stacked models cost no less than five single steps (the step is
  dominated by the matrix products, not by per-call overhead), so seeds train one after the
  other.
- **Scaled down (budget).** The spec estimates 9 CPU-s per seed for its FP training (1000
  steps of batch 64); here that recipe costs several times more per seed (3 transformer blocks
  over 64-71 tokens per sample), more than the whole default budget allows for 5 seeds. Default
  therefore caps training at 300 steps of batch 32 (2400 samples x 4 epochs) per seed, 5 seeds
  (spec: 3), with the spec's calibration size (32) and test size (2000, 500 per type). Whether
  the FP model reaches the target within this cap is what C1 reports (computed per run). A
  side experiment outside the pipeline (labelled as such; same recipe otherwise)
  trained the spec's recipe (8000 samples, 8 epochs of batch 64) on seed 0; its command and
  outcome are in the closing note of issue 21 (it stayed below 0.90). Full uses the spec's
  recipe with d = 128 and 4 LM blocks, 20k samples and 10 seeds, calibration sizes 16 / 32 /
  128 at W3A16, and W2A16 (group 32), W4A6, W4A4; it keeps 64 visual tokens (the spec's 256
  visual tokens of the full profile are not implemented).
- **Contextual redundancy (claim C5).** The redundancy definition (cosine on the LM input,
  INFERRED) is the spec's. Larger position embeddings would make the LM-input states of
  background tokens of one image less alike and weaken the background / object contrast of the
  visual weights; C5's note gives the mean redundancy of background and object tokens computed
  from each run.
"""

METHODS = ("rtn", "gptq", "modality-w", "impq-noimp", "impquant", "impq-visonly",
           "impq-textonly")
SETTINGS = None
PROPOSED = "impquant"
BACKEND = "torch"
