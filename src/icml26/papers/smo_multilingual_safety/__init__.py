"""smo-multilingual-safety: spatial-margin-gap optimisation for cross-lingual safety (metadata)."""

TITLE = "Spatial-margin-gap optimisation for cross-lingual safety (SMO)"
TIER = "B"
ABSTRACT = "003_a30f62c7b2d8f5c0.txt, abstract 10"

SUMMARY = """\
Safety-aligned LLMs refuse harmful requests in English far more reliably than in low-resource
languages. The paper traces this to geometry. In a low-resource language, the hidden
representations of harmful prompts sit much closer to the harmless ones than in English. This
cross-lingual "spatial margin gap" correlates strongly with the attack success rate (ASR).
SMO (Multilingual Spatial Margin Gap-based Optimization) fine-tunes the model so that each
target-language example's margin matches that of its English counterpart. The gap serves as an
example-wise supervision signal, and English behaviour is kept fixed. On LLaMA-3.1-8B-Instruct
and Qwen2.5-7B-Instruct, SMO drives low-resource ASR to near zero without hurting general
multilingual ability.

Here no LLM is used. A tiny encoder with a topic head and a refusal head is trained inside the
pipeline on a synthetic concept language. Six cipher-like languages (separate vocabularies,
three with reversed word order) have resource levels from 4000 to 60 sentences. Per seed, the
aligned model M0 comes from multilingual pre-training (topic classification plus InfoNCE on
parallel pairs) and English-only safety alignment. Four cross-lingual safety stages start from
M0 with the same data and steps: SMO, multilingual safety SFT with and without English replay,
and full representation alignment (RepAlign). We check whether M0's margin gap explains its
ASR, whether SMO removes low-resource ASR while keeping English intact, and whether it closes
the gap.
"""

FIDELITY = """\
No official code was found (the spec searched the stores); the method follows the spec's reading
of the abstract.

- **Substituted.** An 8B instruct LLM, real multilingual harmful-prompt benchmarks and jailbreak
  generation are replaced by a bag-of-embeddings classifier (token embedding 1200 x 48, mean
  pooling, MLP 48 -> 96 -> 48 = h(x); topic head; refusal head sigmoid(w.h + b)) over a
  synthetic concept language. There are 200 concepts: 15 harm objects, 10 harmful actions and
  175 neutral concepts in 10 topics. A prompt has 8 concepts and is harmful iff it holds an
  object and an action. The six languages come from `icml26.lm.multilingual` (language l writes
  concept c as 200 l + perm_l(c), separate vocabularies; languages 3-5 reverse the word order,
  which mean pooling cannot see). A "refusal" is the head's decision, not generated text, so
  the experiment cannot check generation quality or real-world ASR numbers.
- **INFERRED (as the spec marks them).** The spatial margin m_l(x) = (u.h(x) - mean_l) / std_l
  along M0's English safety direction u (class means of an English reference set), with
  per-language statistics from 128 harmless reference prompts, recomputed every 10 steps and
  detached. Also inferred: the SMO loss mean w(x) (m_l(x_l) - m*_EN(x_EN))^2 with
  w = 1 + softplus(gap_M0(x)) on harmful and harmless pairs, the frozen-M0 English targets,
  L_keep (weight 1), topic replay 0.5, and the frozen refusal head.
- **INFERRED here (details the spec leaves open).**
  - Topic sentences are 5 concepts of the sentence's topic plus 3 uniform background concepts
    (so harm concepts occur in pre-training text).
  - InfoNCE is symmetric on cosine similarities; each pre-training step takes one topic batch
    and one pair batch (pairs cycle), with weight 1.
  - 30% of the (object, action) pairs are held out for the evaluation prompts.
  - Harmless sets are half hard, half easy everywhere.
  - Stage-2 alignment uses a fresh Adam at 3e-3.
  - ML-SFT and ML-SFT+EN use the same topic-replay weight 0.5 as SMO.
  - L_keep is taken on the English versions of the batch's pairs.
  - RepAlign also freezes the refusal head (both are representation losses).
  - The default-comply gate runs in train, on the harmless reference sets (validation data),
    because the shifted M0 is what every method starts from. The sanity claim then reads M0's
    held-out over-refusal.
- **Stage 2 (English alignment), two departures to meet the spec's premise.** The spec calls
  the result "the aligned model M0 (well separated in English, weakly in L4/L5)".
  - After the spec's 4 epochs, M0 was not yet separated in English. By a rule fixed in config
    on validation data, alignment continues until the balanced refusal accuracy on the English
    reference sets reaches 0.95, capped at 40 epochs. The epochs used per seed are in the
    sanity claim's note.
  - The literal replay (topic loss only) lets the English-only updates erase the
    cross-lingual alignment of every language alike: all target languages end up equally
    unsafe, with no resource gradient. The main setting `synthetic` therefore also replays the
    pre-training InfoNCE loss on the parallel pairs (weight 1; INFERRED reading of "replay on
    the pre-training mix").
  - The setting `topic-replay-only` builds M0 with the literal replay. It runs M0 only, on the
    same seeds and data. Table 2 and claim 1's note compare ASR and a cross-lingual retrieval
    diagnostic (share of a language's sentences whose nearest English sentence is their
    translation) between the two. No claim reads it.
- **Default-comply gate.** It is implemented as specified (shift the bias to 2% English
  over-refusal if any language over-refuses above 20%). The spec does not say what follows a
  failed re-check, so M0 is kept as it is and the sanity claim reports the failure.
- **Pipeline shape.** The spec's separate per-seed `pretrain` job is folded into the single
  train job: M0 is built once per seed there and every method starts from it (its streams
  depend on the seed only, so any sharding rebuilds the same M0).
- **Scale.** Smoke runs 3 languages (English, L2 and L5 of the default), corpus sizes / 4,
  1 seed, 20 stage-3 steps, and M0 and SMO only. Default runs the spec's sizes with 5 seeds.
  Full runs 10 languages (topic sizes log-spaced 8000..30, pairs half of that), embedding 128
  and a 2-layer bidirectional transformer encoder (icml26.lm blocks), with 10 seeds. At full
  the low-resource set is the three smallest languages.
"""

METHODS = ("m0", "ml-sft", "ml-sft-en", "repalign", "smo")
SETTINGS = ("synthetic", "topic-replay-only")
PROPOSED = "smo"
BACKEND = "torch"
