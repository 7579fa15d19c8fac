"""Continued-fraction components for generative transformers (CoFrGeNets). Metadata only."""

TITLE = "Continued-fraction components for generative transformers (CoFrGeNets)"
TIER = "B"
ABSTRACT = "003_a30f62c7b2d8f5c0.txt, abstract 5"

SUMMARY = """\
CoFrGeNet builds language-model components from continued fractions,
f(a_1..a_D) = 1/(a_1 + 1/(a_2 + ... + 1/a_D)), whose coefficients are learned linear functions
of the input. This extends the earlier CoFrNet architecture to generation. The paper proposes
drop-in replacements for multi-head attention and for the feed-forward network (FFN, here
"Cffn") of a transformer block, both with far fewer parameters. It also derives custom
gradients from *continuants*. The suffix continuants K_{k:D} need only multiply-adds, and
f = K_{2:D}/K_{1:D} needs a single division. The backward pass
df/da_k = (-1)^k (K_{k+1:D}/K_{1:D})^2 reuses that division, where differentiating the nested
divisions needs D. The paper pretrains GPT2-xl and Llama-3.2B variants. On downstream
benchmarks they are competitive with the originals while using 1/2 to 2/3 of the parameters.

Here the Cffn and its continuant gradient are implemented exactly. Four tiny character-level
GPTs (2 blocks, d_model 48) are trained on the Python documentation text that ships with
CPython (`pydoc_data.topics`):
- Transformer-full: 4x GELU FFN.
- CoFrGeNet-F: every FFN replaced by a Cffn with L = 3 ladders of depth D = 5, giving about
  0.6 of the parameters.
- Transformer-matched: an FFN of hidden size 64, so the total parameter count equals
  CoFrGeNet-F's.
- Cffn-no-ladder: an ablation with the continued fractions removed.

Validation bits per character is compared across the four models. A separate gradient job
checks the custom backward on 10^4 random coefficient vectors against float64 analytic
gradients, float64 autograd of the nested form and finite differences. It also uses a stress
set where the nested form divides by an exact zero inside while f stays finite.
"""

FIDELITY = """\
- **Scale (main gap).** The paper pretrains 1.5B-3.2B parameter models on web corpora and
  scores them on downstream benchmarks. Here we train 35k-63k parameter character models on
  16 x 32 characters per step. Validation bpc is the only quality measure. Hardware
  efficiency and shorter pretraining are not tested. The training CPU time per step is reported
  and never claimed. On CPU the Python-level custom Function makes CoFrGeNet-F about 1.5-2x
  slower per step than the MLP models: ~9 elementwise passes over a (D, tokens, L p) tensor,
  against one small matmul.
- **Scaled down to fit the budget (default).** We train for **400 steps instead of the spec's
  500**; the cosine schedule spans the 400 steps. Default runs 5 seeds (the spec's 3 is a
  minimum; full runs 10). The four models x 5 seeds at the spec's 500 steps would cost about
  (500/400) x the measured default train time, beyond the 180 CPU-s budget once job start-ups
  are added (CoFrGeNet-F costs ~22 ms/step against ~12-15 ms for the MLP models).
  The curve points use a 4096-character validation subset. The full profile keeps the spec's
  values. At this scale every model is far from converged (the claims' notes give the final
  bpc of the run), so claims 1-3 compare early-training quality.
- **INFERRED: Cffn parameterisation.** We follow a public reading of the paper (gated input,
  ladders, combination weights). Its parameter count matches the paper's savings:
  x_hat = sigmoid(G x) * x, a_{j,k} = w_{j,k} * x_hat + b_{j,k}, and
  y = U x + sum_j v_j f(a_{j,1..D}). There are 2p^2 + 2p + (2LD + L)p parameters per block
  (checked by a sanity claim).
- **INFERRED: initialisation.** w ~ N(0, 0.1^2), b = 1 and v = 0.1. U and G get the model's
  GPT-2 Linear init; U uses the residual-projection std, like the MLP's output projection.
- **INFERRED: pole handling.** K_{1:D} is replaced by sign(K) max(|K|, 0.05), with
  sign(0) := 1, in both passes. Where the clamp is active, the backward applies the continuant
  formula with the clamped denominator, a bounded surrogate and not the derivative of the
  clamped function. The tests check this explicitly.
- **Gradient job.** It runs as method `cf-gradient` in setting `gradient`, once per seed on
  fresh random vectors (one per train job, never a separate torch process). Claims 4-5 use the
  worst case (max errors, exactness bounds) or the fraction of vectors pooled over all
  gradient jobs, with a 95% bootstrap interval over the jobs. The spec's "one,
  seedless" job is the one-seed special case. Relative error is elementwise
  |g - g_ref|/|g_ref|. Where g_ref = 0 exactly (the stress set has df/da_{D-2} = 0), the error
  counts as 0 only if g = 0 exactly. Finite differences (central, h = 1e-6, float64, 100
  vectors) are reported and not claimed.
- **Corpus.** The text is `pydoc_data.topics`, values concatenated by sorted key. The shared
  `to_ascii` maps every character outside printable ASCII + newline to '?', which includes
  tabs and other control characters; the spec says non-ASCII only. The whole text (~465k
  characters) is capped at 500k and split contiguously 90/10. The Python version and the
  SHA-256 of the text are in data.npz (`provenance_*`). Smoke uses the first 50k characters,
  50 steps, one seed and 2000 gradient vectors per set.
- **Validation.** The final bpc is taken over the whole validation split: stride-32 windows of
  33 tokens, every position predicted once (`icml26.lm.train.eval_windows`). The curves every
  50 steps use only the first 4096 validation characters (2048 at smoke). Evaluating the whole
  split at every curve point would cost ~15 CPU-s at default, more than the budget allows.
  The final point of each curve is on that subset too; the table and the claims use the
  whole-split bpc.
- **Weight decay** (0.01) applies to the Linear and Embedding weight matrices only. The ladder
  tensors w, b (D, L, p) and v (L, p) are per-channel vectors stored stacked, and are not
  decayed.
- **Pairing.** For a given seed, all four models see the same minibatch sequence (derived from
  paper, setting, seed). Each model's initialisation comes from its own run stream.
- **Full profile (not run here).** Topics + `inspect.getsource` of a fixed sorted list of 91
  stdlib modules, capped at 5M characters. d_model 256, 6 blocks, context 256, 20k steps,
  5 seeds. The L/D sweep uses methods `cofrgenet-f-L<L>-D<D>`. The exploratory CAttn-lite
  (`cofrgenet-fa`) is INFERRED, our own design: softmax(QK^T) mixing of the inputs per head,
  no W_V or W_O, then an elementwise ladder (no U, G). It enters no claim. In full,
  Transformer-matched has FFN hidden 272, equal to the Cffn's parameters at d 256 (our
  computation). The heads (4), batch (16) and learning-rate schedule are kept from the base
  model; the spec does not give them for full.
- **Not reproduced here.** The paper's attention replacements CAttnU/CAttnM, downstream
  benchmarks and GPU efficiency.
"""

METHODS = (
    "transformer-full", "cofrgenet-f", "transformer-matched", "cffn-no-ladder", "cf-gradient",
    "cofrgenet-f-L1-D3", "cofrgenet-f-L1-D5", "cofrgenet-f-L1-D8", "cofrgenet-f-L3-D3",
    "cofrgenet-f-L3-D5", "cofrgenet-f-L3-D8", "cofrgenet-f-L6-D3", "cofrgenet-f-L6-D5",
    "cofrgenet-f-L6-D8", "cofrgenet-fa",
)
SETTINGS = None  # a setting has kind: lm (train the models) or kind: gradient (gradient job)
PROPOSED = ("cofrgenet-f", "cofrgenet-f-L1-D3", "cofrgenet-f-L1-D5", "cofrgenet-f-L1-D8",
            "cofrgenet-f-L3-D3", "cofrgenet-f-L3-D5", "cofrgenet-f-L3-D8", "cofrgenet-f-L6-D3",
            "cofrgenet-f-L6-D5", "cofrgenet-f-L6-D8", "cofrgenet-fa")
BACKEND = "torch"
