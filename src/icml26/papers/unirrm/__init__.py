"""unirrm: unified reasoning reward model with adaptive rubrics (metadata only)."""

TITLE = "Unified reasoning reward model with adaptive rubrics (UniRRM, MixReward)"
TIER = "C"
ABSTRACT = "000_0e29b462e842f6da.txt, abstract 14"

SUMMARY = """\
Reward models for open-ended RL are either expensive LLM judges or opaque scalar scorers.
Recent generative reward models reason before judging, but they use fixed criteria, one
evaluation format and mostly English. The paper releases MixReward (six domains, 103
languages, pairwise and listwise preference data) and trains UniRRM (8B and 14B, on Qwen3; SFT
then GRPO). UniRRM judges in three stages. It analyses the task, then generates task-generic
and instruction-specific rubric criteria (each scored 1-5). Finally it evaluates every
candidate against them and names the best. One model judges pairwise, listwise and (never seen
in training) pointwise, and stays consistent across languages.

Here no language model is used. A synthetic judging world stands in for MixReward: instructions
are a domain, a topic and 0-2 requested constraints; responses are 4 generic-criterion levels
and 8 constraint states as tokens. Their true quality depends on the instruction, in four
synthetic languages, one of them low-resource. A mini-UniRRM has the same three stages as
explicit outputs: an instruction encoding, a rubric (domain weights of the generic criteria and
the requested constraints) and per-criterion 1-5 scores averaged over the active criteria. As in
the official code, it is trained by SFT on noisy teacher traces and then GRPO on its verdict.
It is compared with a Bradley-Terry scalar reward model and with a static-criteria ablation
trained the same way.
"""

FIDELITY = """\
Official code read: Laip11/UniRRM at commit c181601 (files named below). Facts were carried
over; no code was copied.

- **Aggregation follows the official code, not the spec's formula.** The official UniRRM's
  score for a response is the plain average of its 1-5 rubric scores
  (`evaluation/src/templates/unirrm.py`: "final_score: the average score across all rubrics").
  It has no learned or per-domain weights, and adaptivity comes from which rubrics are
  generated. The spec's F = alpha sum pi_gen s + beta sum pi_c tanh(s), with learnable
  alpha and beta, is therefore replaced by the mean over the active criteria on the 1-5 scale.
  Generic scores are 3 + 2 s clipped to [1, 5], and constraint scores are 1 + 4 sigmoid(s).
  Each generic criterion counts G pi_gen,g times and each constraint pi_c times (a soft
  version of "which rubrics are generated"; INFERRED). The data card gives the ceiling of this
  aggregation with the true rubric and scores (the mean-aggregation oracle). It is below 1
  because the mean weighs a met constraint against the generic levels differently from the
  world's Q.
- **Training follows the official two stages.** The generative judges get no Bradley-Terry
  loss. SFT on the teacher traces (rubric loss + per-criterion loss, weights 0.5 : 0.5) uses a
  warm-up + cosine learning rate with 10% warm-up (`LLaMA-Factory/examples/train_full/
  UniRRM-8B-SFT.yaml`). GRPO on the verdict follows (`verl/reward_part/reward_server.py`,
  `verl/train_scripts/train_unirrm-8b.sh`). Its settings: groups of 5 verdicts sampled from
  softmax(F / 0.6); reward 0.8 (+-1 correct) + 0.15 format + 0.05 rubric quality / 5;
  group-normalised advantages; low-variance KL (k3) to the SFT judge with weight 0.001; no
  entropy bonus. A structured judge always emits a well-formed output, so the format reward is
  constant. The official LLM rubric judge is replaced by 1 + 4 F1 of the predicted constraint
  set against the teacher's. Both terms are the same for every verdict of a group, so they
  cancel in the group-normalised advantage (as they would for an LLM only when the rubric is
  fixed). INFERRED: the split of the spec's 15 epochs into 9 SFT + 6 GRPO (the official 3 : 2
  epochs); the GRPO learning rate as 0.1 x the SFT one (the official 1e-6 / 1e-5), constant;
  one on-policy update per batch (no PPO clipping needed); each candidate set's verdict
  sampled directly from softmax(F / T) rather than token by token.
- **Static-RM** is the same judge with one learned global weight vector over the 4 generic
  criteria: no instruction-specific criteria, and nothing depends on u. It takes the same two
  stages; its SFT fits the global vector to the teacher's generic weights.
- **Scalar-RM** scores each response on its own, as the official ScalarRMEngine does
  (`evaluation/src/inference.py`). It has the same encoder and candidate reading but no
  attention across candidates, with score MLP([u, h, u*h]). It is trained with the
  Bradley-Terry pair loss + the best-of-4 softmax cross-entropy (1 : 1) over all 15 epochs,
  with the same schedule shape. Every method takes the same steps on the same items: each step
  is a pairwise and a listwise minibatch, 64 items together.
- **Evaluation as in the official code.** Answer positions are shuffled (`evaluation/src/
  data_loader.py`). A pointwise tie goes to the first-listed response
  (`result_calculator.py`, strict maximum). Greedy decisions (argmax F). A judge never fails to
  parse, and a non-finite score makes the run a failed run. Cross-language consistency is the
  spec's metric; the official code has none.
- **Checkpoint rule (ours, fixed before the runs, every method alike).** After each epoch, a
  run's validation pairs (training distribution, 300 per language) are judged against the
  annotator's noisy labels. The run keeps the weights of its best epoch. This was added when
  development runs showed validation accuracy falling during GRPO (noisy labels, repeated
  epochs) and during the scalar RM's last epochs. The report gives the selected epochs, the
  validation accuracy after SFT and at the selected epoch.
- **Synthetic world (the spec's design).** 6 domains, 20 topic tokens per domain, 4 generic
  criteria, 8 constraint types, and Q as written in the data card. It uses 4 languages with
  disjoint token ids and their own instruction word order (the spec's "~90 tokens per
  language" does not match 20 topics per domain; ours has 176 concept tokens per language).
  L3 is low-resource with 5% of the items. Training mixes 0 and 1 constraints (35% each) with
  pairs from a fixed half of the 28 pairs; test has 0, 1 and unseen-pair items in thirds. Test
  and validation items with tied Q (for the pair, or for the best of 4) are drawn again, and
  the data card counts them. INFERRED: the teacher noise (a corrupted generic weight is redrawn
  from Beta(2, 6), the Dirichlet marginal; indicators and states are flipped; levels redrawn)
  and how candidates are sampled. Candidate 0 is uniform; the others change 2-5 of its
  attributes; 4-sets with a later pair outside 2-5 are redrawn.
- **Which conclusions follow from how the data were built.** The rubric targets are the
  world's own variables, so they are exactly what decides Q and are shared by all languages.
  The generative judges therefore get dense supervision whose structure matches the world, and
  the scalar RM gets none. Any advantage on unseen constraint pairs and on the low-resource
  language is partly built in, as is consistency across languages. The spec states this
  ("the advantage partly comes from extra supervision"); Static-RM controls for the
  supervision but not for the rubric's access to the requested set. On no-constraint items the
  world's Q still depends on the domain weights, which the adaptive rubric predicts and a
  static rubric cannot: the control part of claim 2 is not neutral by construction.
- **Scaled down / not tested.** There is no language, reasoning text or LLM, and no MixReward,
  RewardBench, M-RewardBench, MM-Eval or JudgeBench. Model sizes, RL use as a reward and the
  safety rubric are not covered. Default: 5 seeds (the spec's 3 is a minimum) with the spec's
  default data. Full: 20000 + 5000 items per language, 12 languages (3 low-resource), a 2-layer
  transformer instruction encoder, 10 seeds, and the ablation without rubric supervision.
"""

METHODS = ("unirrm", "static-rm", "scalar-rm", "unirrm-norubric")
SETTINGS = ("mixreward",)
PROPOSED = "unirrm"
BACKEND = "torch"
